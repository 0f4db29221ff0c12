/*
 * fuzz_common.h: what the three fuzz targets share (fuzz/README.md).
 *
 * Each target defines LLVMFuzzerInitialize and LLVMFuzzerTestOneInput.
 * Under -Dfuzz=true libFuzzer calls them; replay.c calls them for every
 * file of a directory, so that a reproducer runs in any build as a plain
 * regression test.
 *
 * The targets check more than "does not crash": a broken promise of the
 * API (a compiled program that does not load, an error status the header
 * does not list, a slice outside the request) ends in FUZZ_FAIL, which
 * prints the reason and aborts, so libFuzzer saves the input.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <classify.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz: <message>" to stderr and aborts. */
void fuzz_fail(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;
#define FUZZ_FAIL(...) fuzz_fail(__VA_ARGS__)

/* Non-zero when $FUZZ_VERBOSE is set to a non-empty value: the targets
 * then say on stderr what happened to each input (diagnostics, load
 * errors, verdicts), for triage of a reproducer. */
int fuzz_verbose(void);

/* Classifies the fixed requests (fuzz_common.c) with a new context for
 * `prog`, then frees the context. Fails (FUZZ_FAIL) when the context
 * cannot be made for another reason than memory, or when clf_eval returns
 * anything but CLF_OK or CLF_E_LIMIT (CLF_E_STATE for a file of rewrite
 * sets only), or a verdict out of range. */
void fuzz_classify_fixed(const clf_program *prog, int as_compiled);

/* Rewrites a fixed body with every rewrite set of `prog` in one chunk and
 * in chunks of 1, 7 and 64 bytes (fuzz_classify_fixed calls it). Fails
 * when a rewriter cannot be made or fed (but for memory and PCRE2's
 * documented workspace limit), when its counts or hold-back are off, or,
 * for a program `as_compiled` (classifyc's own output, not a mutated
 * file), when the chunkings give different outputs (but where
 * replace_filter semantics gave up at its buffer cap, which depends on the
 * chunks). A mutated file whose checksum was recomputed may store
 * Hyperscan databases or widths that disagree with its patterns; the
 * loader cannot tell without compiling them again, and docs/format.md
 * ("What the loader checks") leaves the output of such a file unspecified,
 * as long as nothing is read out of bounds and the counts hold. */
void fuzz_rewrite_fixed(const clf_program *prog, int as_compiled);

/* Classifies the request set up in `ctx` again, with clf_eval_explain,
 * and fails unless it returns `st` and, when that is CLF_OK, the verdict
 * *v that clf_eval gave; every step must be one line of printable ASCII
 * of the length it claims. `what` names the request in the message. */
void fuzz_check_explain(clf_ctx *ctx, clf_status st, const clf_verdict *v, const char *what);

/* Runs clf_program_disassemble into a sink that only counts bytes. */
void fuzz_disassemble(const clf_program *prog);

/* Reads every byte of p[0..n) (in instrumented code, so AddressSanitizer
 * checks the bounds before Hyperscan, which is not instrumented, reads
 * them); fails when p is NULL. `what` names the slice in the message. */
unsigned fuzz_touch(const char *p, size_t n, const char *what);

/* Reads a whole file (malloc'd, caller frees); NULL on error with errno. */
uint8_t *fuzz_read_file(const char *path, size_t *len);

#endif
