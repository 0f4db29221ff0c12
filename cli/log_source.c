/*
 * log_source.c: an access log's requests, one at a time (log_source.h).
 */
#include "log_source.h"

#include "log_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The clock is read once per this many lines: cheap at a million a
 * second, and still about every millisecond. */
#define CHECK_EVERY 1024
#define BAR_WIDTH 30

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int log_source_open(log_source *s, const char *path, const char *format, int keep_copy,
                    const char *prog)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->name = strcmp(path, "-") == 0 ? "(standard input)" : path;
    char err[256];
    if (log_parser_new(format, &s->parser, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog, err);
        return -1;
    }
    if (keep_copy && (s->copy = malloc(LOG_MAX_LINE + 1)) == NULL) {
        fprintf(stderr, "%s: %s: error: out of memory\n", prog, s->name);
        log_source_close(s);
        return -1;
    }
    if (log_reader_open(path, &s->reader) != 0) {
        fprintf(stderr, "%s: %s: error: cannot open: %s\n", prog, s->name, strerror(errno));
        log_source_close(s);
        return -1;
    }
    s->tty = isatty(2);
    s->start = s->last_shown = now();
    s->next_check_lines = CHECK_EVERY;
    return 0;
}

/* About once a second: lines and lines per second; on a terminal one
 * line redrawn with '\r', with a bar when the size is known. */
static void progress(log_source *s)
{
    double t = now();
    if (t - s->last_shown < 1.0)
        return;
    s->last_shown = t;
    char n[32];
    log_stats_commas(s->lines, n);
    double rate = (double)s->lines / (t - s->start);
    uint64_t size = log_reader_size(s->reader);
    if (!s->tty) {
        fprintf(stderr, "classify-run: %s: %s lines, %.0f lines/s\n", s->name, n, rate);
        return;
    }
    fprintf(stderr, "\r%s: %s lines, %.0f lines/s", s->name, n, rate);
    if (size > 0) {
        double f = (double)log_reader_offset(s->reader) / (double)size;
        int fill = (int)(f * BAR_WIDTH + 0.5);
        fill = fill < 0 ? 0 : fill > BAR_WIDTH ? BAR_WIDTH : fill;
        fprintf(stderr, " [%.*s%*s] %3.0f%%", fill, "##############################",
                BAR_WIDTH - fill, "", f * 100);
    }
    fputs("\033[K", stderr);
    s->shown = 1;
}

/* Before another message: the progress line goes, so as not to be mixed
 * into it. */
static void clear_progress(log_source *s)
{
    if (s->tty && s->shown) {
        fputs("\r\033[K", stderr);
        s->shown = 0;
    }
}

void log_source_where(const log_source *s, uint64_t lineno, char *buf, size_t len)
{
    if (s->files != NULL && lineno >= 1 && lineno <= s->nfiles)
        snprintf(buf, len, "%s", strcmp(s->files[lineno - 1], "-") == 0 ? "(standard input)"
                                                                         : s->files[lineno - 1]);
    else
        snprintf(buf, len, "%s:%llu", s->name, (unsigned long long)lineno);
}

void log_source_bad(log_source *s, uint64_t lineno, const char *kind, const char *why,
                    const char *prog)
{
    if (s->bad < LOG_LISTED) {
        char where[512];
        log_source_where(s, lineno, where, sizeof where);
        s->bad_at[s->bad] = lineno;
        clear_progress(s);
        fprintf(stderr, "%s: %s: %s: %s\n", prog, where, kind, why);
    }
    s->bad++;
}

int log_source_open_files(log_source *s, const char *const *files, size_t n, int keep_copy,
                          const char *prog)
{
    memset(s, 0, sizeof *s);
    s->path = s->name = "request files";
    s->files = files;
    s->nfiles = n;
    if (keep_copy && (s->copy = malloc(LOG_MAX_LINE + 1)) == NULL) {
        fprintf(stderr, "%s: error: out of memory\n", prog);
        return -1;
    }
    s->tty = isatty(2);
    s->start = s->last_shown = now();
    s->next_check_lines = CHECK_EVERY;
    return 0;
}

int log_source_again(log_source *s, uint64_t lineno, const char *copy, size_t copy_len)
{
    if (s->files != NULL)
        return log_files_again(s, lineno);
    char *line = malloc(copy_len + 1);
    if (line == NULL)
        return -1;
    memcpy(line, copy, copy_len);
    line[copy_len] = '\0';
    char err[256];
    int rc = log_parser_parse(s->parser, line, copy_len, &s->rec, err, sizeof err);
    /* The record points into line, which must outlive its use: kept in
     * s->copy's place until the next call or close. */
    free(s->again);
    s->again = line;
    return rc;
}

void log_source_unclassified(log_source *s, uint64_t lineno, const char *why, const char *prog)
{
    s->requests--; /* counted when it parsed */
    log_source_bad(s, lineno, "error", why, prog);
}

int log_source_next(log_source *s, uint64_t *lineno, const char *prog)
{
    if (s->files != NULL)
        return log_files_next(s, lineno, prog);
    for (;;) {
        char *line;
        size_t len;
        if (s->lines >= s->next_check_lines) {
            s->next_check_lines += CHECK_EVERY;
            progress(s);
        }
        log_read_status st = log_reader_next(s->reader, &line, &len, lineno);
        if (st == LOG_EOF)
            return 0;
        if (st == LOG_ERROR) {
            clear_progress(s);
            fprintf(stderr, "%s: %s: error: cannot read after line %llu: %s\n", prog, s->name,
                    (unsigned long long)s->lines, log_reader_error(s->reader));
            return -1;
        }
        s->lines++;
        if (st == LOG_TOO_LONG) {
            char why[64];
            snprintf(why, sizeof why, "longer than %zu bytes", LOG_MAX_LINE);
            log_source_bad(s, *lineno, "malformed", why, prog);
            continue;
        }
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i == len) {
            s->empty++;
            continue;
        }
        if (s->copy != NULL) {
            memcpy(s->copy, line, len + 1);
            s->copy_len = len;
        }
        char err[256];
        if (log_parser_parse(s->parser, line, len, &s->rec, err, sizeof err) != 0) {
            log_source_bad(s, *lineno, "malformed", err, prog);
            continue;
        }
        s->requests++;
        return 1;
    }
}

void log_source_print_bad(const log_source *s, FILE *out)
{
    if (s->bad == 0)
        return;
    const char *what = s->files ? "file" : "line";
    fprintf(out, "%llu %s%s malformed or not classified (%s%s", (unsigned long long)s->bad, what,
            s->bad == 1 ? "" : "s", what, s->bad == 1 ? "" : "s");
    for (uint64_t i = 0; i < s->bad && i < LOG_LISTED; i++) {
        char where[512];
        log_source_where(s, s->bad_at[i], where, sizeof where);
        fprintf(out, "%s %s", i ? "," : "", s->files ? where : strrchr(where, ':') + 1);
    }
    fputs(s->bad > LOG_LISTED ? ", ...)\n" : ")\n", out);
}

void log_source_close(log_source *s)
{
    clear_progress(s);
    log_reader_close(s->reader);
    log_parser_free(s->parser);
    free(s->copy);
    free(s->again);
    http_request_free(&s->req);
    s->again = NULL;
    s->reader = NULL;
    s->parser = NULL;
    s->copy = NULL;
}
