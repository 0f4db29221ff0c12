/*
 * rewrite_run.h: classify-run --rewrite, a body rewritten by one rewrite
 * set of a rules file, streamed from a file or standard input to standard
 * output or a file (docs/classify-run.md, "Rewriting a body").
 */
#ifndef CLI_REWRITE_RUN_H
#define CLI_REWRITE_RUN_H

#include <classify.h>

#include <stddef.h>

typedef struct rewrite_opts {
    const char *set;           /* --rewrite NAME */
    const char *input;         /* FILE, or NULL or "-": standard input */
    const char *output;        /* --output FILE, or NULL: standard output */
    const char *chunk_lengths; /* --chunk-lengths FILE, or NULL */
    size_t chunk_size;         /* --chunk-size N, or 0: the default */
    int stats;                 /* --stats: a summary on standard error */
} rewrite_opts;

/* The default chunk, and the largest one a chunk option may ask for (each
 * chunk is read into memory whole before it is fed). */
#define REWRITE_CHUNK_DEFAULT ((size_t)64 << 10)
#define REWRITE_CHUNK_MAX ((size_t)1 << 30)

/* Parses a chunk length ("0" allowed when zero_ok): decimal digits, at
 * most REWRITE_CHUNK_MAX. Returns 0 and stores it, or -1. */
int rewrite_parse_length(const char *s, size_t n, int zero_ok, size_t *out);

/* Rewrites the input with set o->set of `prog` (loaded from `rules`, a
 * name for messages). Prints errors as "classify-run: WHERE: error: ...".
 * Returns 0 (rewritten), 1 (the input could not be read or the rewrite
 * failed) or 2 (no such set, a bad chunk-lengths file, or the output
 * could not be written); on any failure, an --output file is left as it
 * was and standard output, when it is a regular file, is cut back to
 * where it was. */
int rewrite_run(const clf_program *prog, const char *rules, const rewrite_opts *o);

#endif
