/*
 * harness.h: helpers shared by the unit tests: compile .clf source text
 * in-process, load it, and classify requests described inline.
 */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"

/* When non-zero, h_compile compiles as classifyc --no-inline (every call
 * stays an OP_CALL/OP_CALLF: tests of calls themselves set it). */
extern int h_no_inline;

/* Compiles `source` (written to a temporary .clf file); returns the rules
 * file bytes (malloc'd) or NULL, with the diagnostics text in *diags
 * (malloc'd, may be NULL). */
uint8_t *h_compile(const char *source, size_t *len, char **diags);

/* Compiles and loads (with `opts`, or the defaults when NULL); aborts the
 * test on failure. */
clf_program *h_program(const char *source);
clf_program *h_program_opts(const char *source, const clf_options *opts);
/* Compiles and loads with the trusted proxies `trusted` (the text that
 * clf_options_set_trusted_proxies takes; "" trusts none). */
clf_program *h_program_trusted(const char *source, const char *trusted);

/* A request: "METHOD PATH?QUERY" then header lines "Name: value",
 * separated by '\n'. */
typedef struct h_result {
    clf_status status;
    clf_verdict_kind verdict;
    char reason[128]; /* "" when none */
} h_result;

h_result h_classify(clf_ctx *ctx, const char *request);
/* Like h_classify, with the peer address set to `peer` (NULL: unknown). */
h_result h_classify_peer(clf_ctx *ctx, const char *request, const char *peer);
/* Compiles, loads, classifies one request, frees everything. */
h_result h_run(const char *source, const char *request);
/* Classifies `request` with a new context of `p`, asserting CLF_OK:
 * "accept:REASON" or "reject:REASON" (REASON "" when none), in a static
 * buffer valid until the next call. */
const char *h_verdict_text(const clf_program *p, const char *request);
/* The disassembly of a program, malloc'd. */
char *h_disasm(const clf_program *prog);

#endif
