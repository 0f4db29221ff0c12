/*
 * interp.c: the bytecode interpreter, vm_run: the dispatch loop of
 * interp_body.h compiled without tracing. interp_trace.c compiles the
 * same loop with tracing, for clf_eval_explain, so that clf_eval pays
 * nothing for it.
 */
#define VM_TRACE 0
#include "interp_ops.h"
#include "interp_body.h"
