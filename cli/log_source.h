/*
 * log_source.h: the requests of an access log, one record at a time, for
 * classify-run --log (replay.c) and --diff (diff.c): reading (log_read.c),
 * parsing (log_parse.c), counting and naming malformed lines, and the
 * progress line on standard error. --diff can also read request files
 * (--request FILE...), one request each (log_files.c): then a "line" is a
 * file, numbered from 1 in the order given.
 */
#ifndef CLI_LOG_SOURCE_H
#define CLI_LOG_SOURCE_H

#include "http_request.h"
#include "log_read.h"
#include "log_record.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Problem lines named one by one on standard error (and by number in the
 * summary); the rest are only counted. */
#define LOG_LISTED 10

typedef struct log_source {
    const char *path;      /* as given */
    const char *name;      /* for messages: "(standard input)" for "-" */
    log_reader *reader;
    log_parser *parser;
    log_record rec;        /* the current line's request */
    const char *const *files; /* request files instead of a log (log_files.c) */
    size_t nfiles;
    http_request req;      /* the current file's, which rec points into */
    char *again;           /* the line log_source_again parsed */
    char *copy;            /* keep_copy: the current line as read (LOG_MAX_LINE + 1) */
    size_t copy_len;
    uint64_t lines, empty, requests; /* requests: parsed and not unclassified */
    uint64_t bad;          /* malformed or not classified */
    uint64_t bad_at[LOG_LISTED];
    /* progress */
    int tty, shown;
    double start, next_check_lines, last_shown;
} log_source;

/* Opens the log with `format` (NULL: auto, log_record.h). With keep_copy
 * each line is also kept as read, in s->copy, for the caller to quote.
 * Returns 0, or -1 after printing the error. */
int log_source_open(log_source *s, const char *path, const char *format, int keep_copy,
                    const char *prog);

/* The same for request files (--diff OLD NEW --request FILE...): with
 * keep_copy, s->copy holds the file's name, not its bytes. */
int log_source_open_files(log_source *s, const char *const *files, size_t n, int keep_copy,
                          const char *prog);

/* Parses line `lineno` again into s->rec: `copy` (copy_len bytes) is what
 * s->copy held for it. For the example a caller explains at the end.
 * Returns 0, or -1 when it no longer parses (or cannot be read). */
int log_source_again(log_source *s, uint64_t lineno, const char *copy, size_t copy_len);

/* The next request in s->rec, its line number in *lineno. Returns 1, 0 at
 * the end, -1 after printing a read error (what was read stands).
 * Empty lines are skipped; malformed ones are reported and skipped. */
int log_source_next(log_source *s, uint64_t *lineno, const char *prog);

/* Counts line `lineno` as one that could not be classified, and names it
 * (with `why`) while fewer than LOG_LISTED were. */
void log_source_bad(log_source *s, uint64_t lineno, const char *kind, const char *why,
                    const char *prog);

/* Line `lineno` parsed, and could not be classified (why): no longer
 * counted in s->requests, and counted and named as log_source_bad does. */
void log_source_unclassified(log_source *s, uint64_t lineno, const char *why, const char *prog);

/* "N malformed or unclassified lines (lines 3, 9, ...)" when there were
 * any; nothing otherwise. */
void log_source_print_bad(const log_source *s, FILE *out);

/* The name of item `lineno` for messages: "LOG:N", or the request file. */
void log_source_where(const log_source *s, uint64_t lineno, char *buf, size_t len);

/* log_files.c, for log_source.c: the next request file, and one again. */
int log_files_next(log_source *s, uint64_t *lineno, const char *prog);
int log_files_again(log_source *s, uint64_t lineno);

/* Clears the progress line, then frees. */
void log_source_close(log_source *s);

#endif
