/*
 * stateops.c: what the state opcodes do (vm/opcodes.def, "State"), for
 * both copies of the dispatch loop: the key from the slot and the key
 * register, the request's time, the store's answer, or the defined
 * result when there is none (docs/state.md).
 */
#include "stateops.h"

#include <math.h>
#include <time.h>

#include "store.h"

static int64_t now_ms(const clf_ctx *ctx)
{
    if (ctx->time_set) return ctx->time_ms;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t vm_state_call(clf_ctx *ctx, vm_opcode op, const vm_slot *S, const vm_value *k)
{
    const vm_const *name = &ctx->prog->consts[S->name];
    char key[CLF_STATE_KEY_MAX];
    size_t n = vm_state_key(key, (int)S->kind, S->param, name->str, name->len, (int)S->keytype,
                            k->s.p, k->s.n, k->i);
    if (!ctx->store) {
        ctx->state_status = VM_STATE_NO_STORE;
        return 0;
    }
    if (!n) {
        ctx->state_status = VM_STATE_NO_KEY;
        return 0;
    }
    int64_t t = now_ms(ctx), out = 0;
    clf_status st;
    switch (op) {
    case OP_STCOUNT:
    case OP_STCOUNTED:
        st = vm_store_count(ctx->store, key, n, S->param, op == OP_STCOUNT, t, &out);
        break;
    case OP_STSCADD:
    case OP_STSCORE: {
        double v = 0;
        st = vm_store_score(ctx->store, key, n, S->param, op == OP_STSCADD ? S->amount : 0, t, &v);
        /* rounded to the nearest: 5 added twice a millisecond apart is
         * 9.99999 by then, which the rules should read as 10 */
        out = !(v > 0) ? 0 : v >= 9.2e18 ? INT64_MAX : (int64_t)floor(v + 0.5);
        break;
    }
    default: {
        int set = 0;
        st = vm_store_mark(ctx->store, key, n, S->param, op == OP_STMARK, t, &set);
        out = set;
    }
    }
    if (st != CLF_OK) {
        ctx->state_status = st == CLF_E_LIMIT ? VM_STATE_FULL : VM_STATE_BUSY;
        return 0;
    }
    if (out < 0) out = 0; /* a host's store: its answer bounded as documented */
    if (op == OP_STMARK || op == OP_STMARKED) out = out != 0;
    ctx->state_status = VM_STATE_OK;
    return out;
}
