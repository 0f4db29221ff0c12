/*
 * source.h: source files and diagnostics.
 *
 * A compilation owns a list of source files (the main file and every
 * import) and a list of diagnostics. Positions are byte offsets into a
 * file; line and column are computed only when a diagnostic is printed.
 */
#ifndef LANG_SOURCE_H
#define LANG_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arena.h"

typedef struct src_file {
    char *path;  /* as given or as resolved on the search path */
    char *text;  /* NUL-terminated at text[len]; may contain NULs */
    size_t len;
    uint32_t *lines; /* offsets of line starts, built on first use */
    uint32_t nlines;
} src_file;

typedef struct diag {
    struct diag *next;
    uint32_t file; /* index in the compilation's files, or UINT32_MAX */
    uint32_t off;  /* byte offset of the problem */
    char *msg;
    int warning;   /* 1: a warning, which does not fail the compilation */
    struct diag *notes; /* "note:" lines that follow, e.g. an import chain */
} diag;

typedef struct src_set {
    src_file *files;
    uint32_t nfiles, capfiles;
    diag *first, *last;
    unsigned nerrors;
    unsigned nwarnings;
    arena *ar;
} src_set;

/* Adds a file (taking ownership of path and text, both malloc'd);
 * returns its index or UINT32_MAX when out of memory. */
uint32_t src_add(src_set *s, char *path, char *text, size_t len);
void src_free(src_set *s);

/* Diagnostics of each kind recorded and printed; the rest are counted. */
#define SRC_MAX_SHOWN 200

/* Records an error at file/offset (NULL past SRC_MAX_SHOWN errors). */
diag *src_error(src_set *s, uint32_t file, uint32_t off, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Records a warning: printed like an error, but compilation goes on. */
diag *src_warning(src_set *s, uint32_t file, uint32_t off, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Attaches a note to an error. */
void src_note(src_set *s, diag *d, uint32_t file, uint32_t off, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* 1-based line and column (in bytes) of offset `off` in file `f`: a
 * binary search in the file's line table, built on the first call. */
void src_linecol(src_file *f, uint32_t off, uint32_t *line, uint32_t *col);

/* Prints every diagnostic as
 *     file:line:col: error: message     (or warning:)
 *         the source line
 *         ^
 * to `out`. */
void src_print(const src_set *s, FILE *out);

#endif
