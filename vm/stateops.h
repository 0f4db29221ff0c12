/*
 * stateops.h: the state opcodes' work (stateops.c), shared by the plain
 * and the traced dispatch loops.
 */
#ifndef VM_STATEOPS_H
#define VM_STATEOPS_H

#include <stdint.h>

#include "ctx.h"
#include "opcodes.h"
#include "program.h"

/* ctx->state_status after a state call: explain's %stwhy. */
enum { VM_STATE_OK = 0, VM_STATE_NO_STORE = 1, VM_STATE_FULL = 2, VM_STATE_BUSY = 3,
       VM_STATE_NO_KEY = 4 };

/* Runs state opcode `op` (OP_STCOUNT ... OP_STMARKED) of slot S on key
 * register k: the count, score (floor) or 0/1, or the defined result 0
 * when there is no answer. Never fails; allocates nothing. */
VM_INTERNAL int64_t vm_state_call(clf_ctx *ctx, vm_opcode op, const vm_slot *S,
                                  const vm_value *k);

#endif
