/*
 * explain.h: clf_eval_explain's engine: runs a filter with vm_run_traced
 * and turns the trace into one text step per decision (explain.c).
 */
#ifndef VM_EXPLAIN_H
#define VM_EXPLAIN_H

#include "ctx.h"

/* Longest step text, NUL included; a longer one ends in "...". */
#define VM_EXPLAIN_TEXT_BYTES 1024

/* Runs function `func` of the context's program as vm_run does (same
 * results), calling fn(ud, step) for each step. Allocates nothing. */
VM_INTERNAL clf_status vm_explain(clf_ctx *ctx, uint32_t func, clf_verdict *out,
                                  vm_outcome *outcome, clf_explain_fn fn, void *ud);

#endif
