/*
 * test_run.h: runs the `test` blocks of a .clf file (classifyc --test)
 * through the hosts' loader and the interpreter, each expectation on the
 * filter it names.
 */
#ifndef LANG_TEST_RUN_H
#define LANG_TEST_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "compile.h"

/* Runs every test of `tests` against the program in bin/len (compiled
 * from `src` with those tests) and prints one line per test and a final
 * "N passed, N failed" to `out`. Returns 0 when all pass, 1 when one
 * fails, 2 when the program cannot be loaded or run. */
int cc_run_tests(const src_set *src, const cg_tests *tests, const uint8_t *bin, size_t len,
           FILE *out);

#endif
