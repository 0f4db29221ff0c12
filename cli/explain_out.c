/*
 * explain_out.c: classify-run --explain (explain_out.h).
 *
 * The library hands each step to a callback while it classifies, before
 * the verdict is known, and the step's text lives only during that call;
 * classify-run prints the verdict first, so the steps are copied here.
 */
#include "explain_out.h"

#include "out_escape.h"
#include "readfile.h"

#include <stdlib.h>
#include <string.h>

/* Source files larger than classifyc accepts by default are not shown;
 * nor are sources past the first MAX_SOURCES (a ruleset has a few). */
#define MAX_SOURCE_BYTES ((size_t)16 << 20)
#define MAX_SOURCES 64
/* Deeper calls are not indented further, so lines stay readable. */
#define MAX_INDENT_DEPTH 20

struct explain_source {
    char *path;
    char *text; /* NULL when the file could not be read */
    size_t len;
};

void explain_log_init(explain_log *log)
{
    memset(log, 0, sizeof *log);
}

void explain_log_clear(explain_log *log)
{
    log->nsteps = 0;
    log->ntext = 0;
    log->nomem = 0;
}

void explain_log_free(explain_log *log)
{
    for (size_t i = 0; i < log->nsources; i++) {
        free(log->sources[i].path);
        free(log->sources[i].text);
    }
    free(log->sources);
    free(log->steps);
    free(log->text);
    explain_log_init(log);
}

/* Makes room for `more` more elements of `size` bytes in p, which holds
 * `used` of *cap; stores the (maybe moved) array in *out. */
static int grow(void *p, size_t *cap, size_t used, size_t more, size_t size, void **out)
{
    *out = p;
    if (more <= *cap - used)
        return 0;
    size_t ncap = *cap ? *cap : 64;
    while (ncap - used < more) {
        if (ncap > ((size_t)-1 / 2) / size)
            return -1;
        ncap *= 2;
    }
    void *np = realloc(p, ncap * size);
    if (np == NULL)
        return -1;
    *out = np;
    *cap = ncap;
    return 0;
}

void explain_log_step(void *ud, const clf_explain_step *step)
{
    explain_log *log = ud;
    void *steps, *text;
    if (log->nomem)
        return;
    if (grow(log->steps, &log->capsteps, log->nsteps, 1, sizeof *log->steps, &steps) != 0) {
        log->nomem = 1;
        return;
    }
    log->steps = steps;
    if (grow(log->text, &log->captext, log->ntext, step->text_len, 1, &text) != 0) {
        log->nomem = 1;
        return;
    }
    log->text = text;
    explain_step *s = &log->steps[log->nsteps++];
    s->file = step->file;
    s->line = step->line;
    s->col = step->col;
    s->depth = step->depth;
    s->text = log->ntext;
    s->len = step->text_len;
    if (step->text_len > 0)
        memcpy(log->text + log->ntext, step->text, step->text_len);
    log->ntext += step->text_len;
}

/* Reads a regular file whole (a FIFO would block), or returns NULL: a
 * source that cannot be shown is left out, not an error. */
static char *read_source(const char *path, size_t *len)
{
    char *text;
    int e;
    return cm_read_file(path, MAX_SOURCE_BYTES, CM_READ_REGULAR, &text, len, &e, NULL) == CM_READ_OK
               ? text : NULL;
}

/* The source file `path`, read on first use; NULL when it cannot be. */
static const explain_source *source(explain_log *log, const char *path)
{
    for (size_t i = 0; i < log->nsources; i++)
        if (strcmp(log->sources[i].path, path) == 0)
            return log->sources[i].text ? &log->sources[i] : NULL;
    if (log->nsources == MAX_SOURCES)
        return NULL;
    if (log->sources == NULL) {
        log->sources = calloc(MAX_SOURCES, sizeof *log->sources);
        if (log->sources == NULL)
            return NULL;
    }
    explain_source *s = &log->sources[log->nsources];
    s->path = malloc(strlen(path) + 1);
    if (s->path == NULL)
        return NULL;
    strcpy(s->path, path);
    s->text = read_source(path, &s->len);
    log->nsources++;
    return s->text ? s : NULL;
}

/* Line `line` (from 1) of `src`, without leading and trailing blanks. */
static const char *source_line(const explain_source *src, unsigned line, size_t *len)
{
    size_t s = 0;
    for (unsigned l = 1; l < line; l++) {
        const char *nl = memchr(src->text + s, '\n', src->len - s);
        if (nl == NULL)
            return NULL;
        s = (size_t)(nl - src->text) + 1;
    }
    size_t e = s;
    while (e < src->len && src->text[e] != '\n')
        e++;
    while (s < e && (src->text[s] == ' ' || src->text[s] == '\t'))
        s++;
    while (e > s && (src->text[e - 1] == ' ' || src->text[e - 1] == '\t' ||
                     src->text[e - 1] == '\r'))
        e--;
    *len = e - s;
    return src->text + s;
}

void explain_log_print_text(explain_log *log, FILE *out)
{
    const char *last_file = NULL;
    unsigned last_line = 0;
    for (size_t i = 0; i < log->nsteps; i++) {
        const explain_step *s = &log->steps[i];
        int indent = 2 + 2 * (int)(s->depth < MAX_INDENT_DEPTH ? s->depth : MAX_INDENT_DEPTH);
        fprintf(out, "%*s", indent, "");
        if (s->file != NULL) {
            put_text(out, s->file, strlen(s->file));
            fprintf(out, ":%u: ", s->line);
        } else {
            fputs("-: ", out);
        }
        put_text(out, log->text + s->text, s->len);
        putc('\n', out);

        /* The source line, once for each run of steps on it. */
        if (s->file == NULL || s->line == 0 ||
            (last_file != NULL && s->line == last_line && strcmp(s->file, last_file) == 0))
            continue;
        last_file = s->file;
        last_line = s->line;
        const explain_source *src = source(log, s->file);
        size_t n;
        const char *line = src ? source_line(src, s->line, &n) : NULL;
        if (line == NULL)
            continue;
        fprintf(out, "%*s%5u | ", indent, "", s->line);
        put_text(out, line, n);
        putc('\n', out);
    }
}

void explain_log_print_json(const explain_log *log, FILE *out)
{
    fputs(", \"explain\": [", out);
    for (size_t i = 0; i < log->nsteps; i++) {
        const explain_step *s = &log->steps[i];
        fputs(i ? ", {\"file\": " : "{\"file\": ", out);
        if (s->file != NULL)
            put_json_cstr(out, s->file);
        else
            fputs("null", out);
        fprintf(out, ", \"line\": %u, \"col\": %u, \"depth\": %u, \"text\": ", s->line, s->col,
                s->depth);
        put_json_string(out, log->text + s->text, s->len);
        putc('}', out);
    }
    putc(']', out);
}
