/*
 * ctx.c: building a context (everything a classification touches,
 * allocated once) and the peer of a request; starting a request and
 * taking its headers, which every request does, are inline in ctx.h.
 */
#include <string.h>

#include "bitset.h"
#include "capture.h"
#include "ctx.h"

clf_status vm_ctx_new(const clf_program *prog, clf_ctx **out, char *err, size_t errlen)
{
    const vm_allocator *al = &prog->opts.alloc;
    clf_ctx *c = vm_calloc(al, 1, sizeof *c);
    if (!c) goto nomem_freed;
    c->prog = prog;
    c->regs = vm_calloc(al, prog->stack_regs, sizeof *c->regs);
    c->frames = vm_calloc(al, prog->max_depth, sizeof *c->frames);
    if (prog->ncapts && vm_capture_scratch_new(prog->maxgroups, al, &c->capture) != CLF_OK)
        goto nomem;
    c->bits = vm_calloc(al, VM_BITSET_WORDS(prog->nbits) + 1, 8);
    c->done = vm_calloc(al, VM_BITSET_WORDS(prog->nsubjects) + 1, 8);
    /* 4 bytes per pattern test, so that explaining needs no allocation. */
    c->first_match = vm_calloc(al, (size_t)prog->nbits + 1, sizeof *c->first_match);
    c->slots = vm_calloc(al, prog->nhdrs, sizeof *c->slots);
    c->entries = vm_calloc(al, (size_t)prog->opts.headers, sizeof *c->entries);
    c->ws_cap = (size_t)prog->opts.workspace_bytes;
    c->ws = vm_malloc(al, c->ws_cap);
    if (!c->regs || !c->frames || !c->bits || !c->done || !c->first_match || !c->slots ||
        !c->entries || !c->ws)
        goto nomem;
    /* One scratch grown to fit every database (Hyperscan's "Scratch
     * Space" docs: hs_alloc_scratch may be called again to enlarge it). */
    for (uint32_t i = 0; i < prog->nsubjects; i++) {
        hs_error_t rc = hs_alloc_scratch(prog->subjects[i].db, &c->scratch);
        if (rc != HS_SUCCESS) {
            vm_ctx_free(c);
            if (rc == HS_NOMEM) goto nomem_freed;
            vm_errf(err, errlen, "cannot allocate Hyperscan scratch (error %d)", rc);
            return CLF_E_BACKEND;
        }
    }
    vm_ctx_reset(c);
    *out = c;
    return CLF_OK;
nomem:
    vm_ctx_free(c);
nomem_freed:
    vm_errf(err, errlen, "out of memory");
    return CLF_E_NOMEM;
}

void vm_ctx_free(clf_ctx *ctx)
{
    if (!ctx) return;
    const vm_allocator *al = &ctx->prog->opts.alloc;
    hs_free_scratch(ctx->scratch);
    vm_capture_scratch_free(ctx->capture);
    vm_free(al, ctx->frames);
    vm_free(al, ctx->regs);
    vm_free(al, ctx->bits);
    vm_free(al, ctx->done);
    vm_free(al, ctx->first_match);
    vm_free(al, ctx->slots);
    vm_free(al, ctx->entries);
    vm_free(al, ctx->ws);
    vm_free(al, ctx);
}

clf_status vm_ctx_set_peer(clf_ctx *ctx, const char *addr, size_t len)
{
    ctx->client_state = 0;
    ctx->peer_valid = vm_ip_parse(addr, len, ctx->peer);
    return ctx->peer_valid ? CLF_OK : CLF_E_INVALID;
}

/* A host name as a resolver returns it: printable ASCII, lower-cased
 * here (DNS names compare case-insensitively, RFC 4343, and the rules
 * compare bytes), without the root's trailing dot; at most 253 bytes
 * (RFC 1035 section 2.3.4, as text). */
clf_status vm_ctx_set_rdns(clf_ctx *ctx, const char *name, size_t len)
{
    if (len && name[len - 1] == '.') len--;
    if (len > 253) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg, "the name is %zu bytes, longer than a DNS name",
                len);
        return CLF_E_INVALID;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= 0x20 || c >= 0x7f) {
            vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                    "byte %zu of the name is 0x%02x: not a host name", i, c);
            return CLF_E_INVALID;
        }
        ctx->rdns[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    ctx->rdns[len] = 0;
    ctx->field[VM_FIELD_RDNS].s.p = ctx->rdns;
    ctx->field[VM_FIELD_RDNS].s.n = len;
    ctx->rdns_checked = 1;
    ctx->errmsg[0] = 0;
    return CLF_OK;
}
