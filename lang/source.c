/* source.c: see source.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

uint32_t src_add(src_set *s, char *path, char *text, size_t len)
{
    if (s->nfiles == s->capfiles) {
        uint32_t cap = s->capfiles ? s->capfiles * 2 : 8;
        src_file *f = realloc(s->files, cap * sizeof *f);
        if (!f) return UINT32_MAX;
        s->files = f;
        s->capfiles = cap;
    }
    s->files[s->nfiles] = (src_file){path, text, len, NULL, 0};
    return s->nfiles++;
}

void src_free(src_set *s)
{
    for (uint32_t i = 0; i < s->nfiles; i++) {
        free(s->files[i].path);
        free(s->files[i].text);
        free(s->files[i].lines);
    }
    free(s->files);
    s->files = NULL;
    s->nfiles = s->capfiles = 0;
}

static diag *mkdiag(src_set *s, uint32_t file, uint32_t off, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    diag *d = arena_alloc(s->ar, sizeof *d);
    if (!d) return NULL;
    d->file = file;
    d->off = off;
    d->msg = arena_strndup(s->ar, buf, strlen(buf));
    return d;
}

static diag *link_diag(src_set *s, diag *d)
{
    if (!d) return NULL;
    if (s->last) s->last->next = d;
    else s->first = d;
    s->last = d;
    return d;
}

diag *src_warning(src_set *s, uint32_t file, uint32_t off, const char *fmt, ...)
{
    if (s->nwarnings++ >= SRC_MAX_SHOWN) return NULL;
    va_list ap;
    va_start(ap, fmt);
    diag *d = mkdiag(s, file, off, fmt, ap);
    va_end(ap);
    if (d) d->warning = 1;
    return link_diag(s, d);
}

diag *src_error(src_set *s, uint32_t file, uint32_t off, const char *fmt, ...)
{
    /* Past SRC_MAX_SHOWN errors only the count goes on: a generated file
     * with thousands of mistakes must not take minutes to report. */
    if (s->nerrors++ >= SRC_MAX_SHOWN) return NULL;
    va_list ap;
    va_start(ap, fmt);
    diag *d = mkdiag(s, file, off, fmt, ap);
    va_end(ap);
    return link_diag(s, d);
}

void src_note(src_set *s, diag *d, uint32_t file, uint32_t off, const char *fmt, ...)
{
    if (!d) return;
    va_list ap;
    va_start(ap, fmt);
    diag *n = mkdiag(s, file, off, fmt, ap);
    va_end(ap);
    if (!n) return;
    diag **tail = &d->notes;
    while (*tail) tail = &(*tail)->next;
    *tail = n;
}

void src_linecol(src_file *f, uint32_t off, uint32_t *line, uint32_t *col)
{
    if (off > f->len) off = (uint32_t)f->len;
    if (!f->lines) {
        uint32_t n = 1;
        for (size_t i = 0; i < f->len; i++) n += f->text[i] == '\n';
        f->lines = malloc(n * sizeof *f->lines);
        if (f->lines) {
            f->lines[0] = 0;
            f->nlines = 1;
            for (size_t i = 0; i < f->len; i++)
                if (f->text[i] == '\n') f->lines[f->nlines++] = (uint32_t)i + 1;
        }
    }
    if (!f->lines) { /* out of memory: count by hand */
        uint32_t l = 1, c = 1;
        for (uint32_t i = 0; i < off; i++) {
            if (f->text[i] == '\n') { l++; c = 1; } else { c++; }
        }
        *line = l;
        *col = c;
        return;
    }
    uint32_t lo = 0, hi = f->nlines; /* the last line start <= off */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (f->lines[mid] <= off) lo = mid;
        else hi = mid;
    }
    *line = lo + 1;
    *col = off - f->lines[lo] + 1;
}

/* Prints the source line holding `off`, then a caret under it. Bytes that
 * are not printable ASCII are shown as '?', and tabs are kept in the caret
 * line, so the caret lines up in a terminal. */
static void print_excerpt(const src_file *f, uint32_t off, FILE *out)
{
    if (off > f->len) off = (uint32_t)f->len;
    size_t start = off, end = off;
    while (start > 0 && f->text[start - 1] != '\n') start--;
    while (end < f->len && f->text[end] != '\n') end++;
    if (end - start > 200) { /* very long line: show a window */
        if (off - start > 100) start = off - 100;
        if (end - start > 200) end = start + 200;
    }
    fputs("    ", out);
    for (size_t i = start; i < end; i++) {
        unsigned char c = (unsigned char)f->text[i];
        fputc(c == '\t' || (c >= 0x20 && c < 0x7f) ? c : '?', out);
    }
    fputs("\n    ", out);
    for (size_t i = start; i < off; i++) fputc(f->text[i] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

static void print_one(const src_set *s, const diag *d, const char *kind, FILE *out)
{
    if (d->file < s->nfiles) {
        src_file *f = &s->files[d->file];
        uint32_t line, col;
        src_linecol(f, d->off, &line, &col);
        fprintf(out, "%s:%u:%u: %s: %s\n", f->path, line, col, kind, d->msg);
        print_excerpt(f, d->off, out);
    } else {
        fprintf(out, "%s: %s\n", kind, d->msg);
    }
}

void src_print(const src_set *s, FILE *out)
{
    for (const diag *d = s->first; d; d = d->next) {
        print_one(s, d, d->warning ? "warning" : "error", out);
        for (const diag *n = d->notes; n; n = n->next) print_one(s, n, "note", out);
    }
    if (s->nerrors > SRC_MAX_SHOWN)
        fprintf(out, "(%u more errors not shown)\n", s->nerrors - SRC_MAX_SHOWN);
    if (s->nwarnings > SRC_MAX_SHOWN)
        fprintf(out, "(%u more warnings not shown)\n", s->nwarnings - SRC_MAX_SHOWN);
}
