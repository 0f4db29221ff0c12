/*
 * explain_out.h: classify-run --explain. Collects the steps that
 * clf_eval_explain reports for one request, so that they can be printed
 * after its verdict line (text) or inside its object (--json), with the
 * source lines they come from when those files can be read.
 */
#ifndef CLI_EXPLAIN_OUT_H
#define CLI_EXPLAIN_OUT_H

#include <classify.h>

#include <stddef.h>
#include <stdio.h>

typedef struct explain_step {
    const char *file; /* owned by the program */
    unsigned line, col, depth;
    size_t text, len; /* the step's text: log->text + text, len bytes */
} explain_step;

typedef struct explain_source explain_source; /* a source file, read once */

typedef struct explain_log {
    explain_step *steps;
    size_t nsteps, capsteps;
    char *text;
    size_t ntext, captext;
    int nomem; /* a step could not be kept */
    explain_source *sources;
    size_t nsources;
} explain_log;

void explain_log_init(explain_log *log);
void explain_log_free(explain_log *log);
/* Forgets the steps (before each request); keeps the source files read. */
void explain_log_clear(explain_log *log);
/* A clf_explain_fn: ud is the explain_log. */
void explain_log_step(void *ud, const clf_explain_step *step);

/* The steps as text, one per line, "  FILE:LINE: TEXT" (indented two more
 * spaces per call depth), each source line that FILE holds after the
 * first step on it, as "  LINE | SOURCE" (trimmed). */
void explain_log_print_text(explain_log *log, FILE *out);
/* The steps as the JSON member `, "explain": [{"file": ..., "line": ...,
 * "col": ..., "depth": ..., "text": ...}, ...]`. */
void explain_log_print_json(const explain_log *log, FILE *out);

#endif
