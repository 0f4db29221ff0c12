/*
 * interp_trace.c: vm_run_traced, the dispatch loop of interp_body.h
 * compiled with a trace hook around each instruction (clf_eval_explain).
 * It computes exactly what vm_run computes; the hook only observes.
 */
#define VM_TRACE 1
#include "interp_ops.h"
#include "interp_body.h"
