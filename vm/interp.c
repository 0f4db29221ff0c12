/*
 * interp.c: the bytecode interpreter, vm_run: the dispatch loop of
 * interp_body.h compiled without tracing. interp_trace.c compiles the
 * same loop with tracing, for clf_eval_explain, so that clf_eval pays
 * nothing for it.
 */
#define VM_TRACE 0
#include "interp_ops.h"
#include "interp_body.h"

/* clf_ctx_client_ip: the address req.client_ip has, by the same derivation
 * and cache (interp_ops.h, client_ip). The program has slots for the
 * forwarding headers when its rules read req.client_ip or its reverse DNS
 * (lang/translate.c); without them only the peer counts, as it would for
 * those rules. */
clf_status vm_ctx_client_ip(clf_ctx *ctx, uint8_t out[16], int *valid)
{
    const clf_program *p = ctx->prog;
    uint32_t xff = UINT32_MAX, xrip = UINT32_MAX;
    if (p->nhdrs) {
        xff = vm_hdr_slot(p, "x-forwarded-for", 15);
        xrip = vm_hdr_slot(p, "x-real-ip", 9);
    }
    vm_value v;
    clf_status st = client_ip(ctx, xff, xrip, &v);
    if (st) return st;
    *valid = v.s.n == 16;
    memcpy(out, ctx->client, 16);
    return CLF_OK;
}
