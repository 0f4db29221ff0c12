/*
 * ctx.c: building a context (everything a classification touches,
 * allocated once), starting a request, and handing the request over:
 * fields, the peer, headers into their slots under the per-request
 * limits (ctx.h says what each part holds).
 */
#include <string.h>

#include "bitset.h"
#include "capture.h"
#include "ctx.h"
#include "hdrindex.h"

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

void vm_ctx_reset(clf_ctx *ctx)
{
    for (int i = 0; i < VM_FIELD_COUNT; i++) {
        ctx->field[i].s.p = "";
        ctx->field[i].s.n = 0;
    }
    if (ctx->prog->nhdrs) memset(ctx->slots, 0, ctx->prog->nhdrs * sizeof *ctx->slots);
    ctx->nentries = 0;
    ctx->nheaders = 0;
    ctx->header_bytes = 0;
    ctx->ws_used = 0;
    ctx->peer_valid = 0;
    ctx->client_state = 0;
    ctx->errmsg[0] = 0;
}

clf_status vm_ctx_set_peer(clf_ctx *ctx, const char *addr, size_t len)
{
    ctx->client_state = 0;
    ctx->peer_valid = vm_ip_parse(addr, len, ctx->peer);
    return ctx->peer_valid ? CLF_OK : CLF_E_INVALID;
}

clf_status vm_ctx_add_header(clf_ctx *ctx, const char *name, size_t name_len, const char *value,
                             size_t value_len)
{
    const clf_program *p = ctx->prog;
    const clf_options *lim = &p->opts;
    if (ctx->nheaders >= lim->headers) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "the request has more than %llu headers (CLF_LIMIT_HEADERS)",
                (unsigned long long)lim->headers);
        return CLF_E_LIMIT;
    }
    if (value_len > lim->header_value_bytes) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "the value of header '%.*s' is %zu bytes, over the limit of %llu "
                "(CLF_LIMIT_HEADER_VALUE_BYTES)", (int)(name_len > 64 ? 64 : name_len),
                name, value_len, (unsigned long long)lim->header_value_bytes);
        return CLF_E_LIMIT;
    }
    /* header_bytes never passes the limit, so `left` cannot underflow;
     * comparing the two lengths one at a time cannot overflow. */
    uint64_t left = lim->header_bytes - ctx->header_bytes;
    if (name_len > left || value_len > left - name_len) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "the request's headers pass %llu bytes (CLF_LIMIT_HEADER_BYTES)",
                (unsigned long long)lim->header_bytes);
        return CLF_E_LIMIT;
    }
    ctx->errmsg[0] = 0;
    ctx->nheaders++;
    ctx->header_bytes += name_len + value_len;
    if (!p->nhdrs) return CLF_OK;
    uint32_t h = vm_hdr_slot(p, name, name_len);
    if (h == UINT32_MAX) return CLF_OK; /* a header the program does not inspect */
    vm_hslot *s = &ctx->slots[h];
    if (s->count++ == 0) {
        s->p = value;
        s->n = value_len;
    }
    vm_hentry *e = &ctx->entries[ctx->nentries++];
    e->slot = h;
    e->p = value;
    e->n = value_len;
    return CLF_OK;
}
