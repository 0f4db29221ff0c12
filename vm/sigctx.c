/*
 * sigctx.c: the request's HTTP Message Signatures (RFC 9421, as Web Bot
 * Auth profiles them) for the rules' req.signature_* fields. The
 * verification itself is sig/'s (sg_verify.h); this is what joins it to
 * a context: when it runs (lazily: the first signature field a request
 * reads, so that rules that never get there pay nothing, and at most
 * once per request), what it reads (the context's request and every
 * header line, vm_ctx_add_header), and where its working memory comes
 * from (a scratch made with the context and what is left of the string
 * workspace, so that verifying allocates nothing).
 */
#include <sodium.h>
#include <time.h>

#include "ctx.h"
#include "sg_verify.h"

struct vm_sig {
    sg_scratch *sc;
    sg_result res;
};

/* Signatures examined per request, at most (docs/limits.md): each costs
 * an Ed25519 verification when it gets that far. */
#define VM_SIG_MAX 8

struct vm_sig *vm_sig_new(const clf_program *prog)
{
    const vm_allocator *al = &prog->opts.alloc;
    /* libsodium picks its implementations once (idempotent, thread-safe). */
    if (sodium_init() < 0) return NULL;
    struct vm_sig *s = vm_calloc(al, 1, sizeof *s);
    if (!s) return NULL;
    s->sc = sg_scratch_new(al);
    if (!s->sc) {
        vm_free(al, s);
        return NULL;
    }
    return s;
}

void vm_sig_free(const clf_program *prog, struct vm_sig *sig)
{
    if (!sig) return;
    sg_scratch_free(sig->sc, &prog->opts.alloc);
    vm_free(&prog->opts.alloc, sig);
}

static void verify(clf_ctx *ctx)
{
    const clf_program *p = ctx->prog;
    sg_req rq;
    rq.method = (sg_str){ctx->field[VM_FIELD_METHOD].s.p, ctx->field[VM_FIELD_METHOD].s.n};
    rq.path = (sg_str){ctx->field[VM_FIELD_PATH].s.p, ctx->field[VM_FIELD_PATH].s.n};
    rq.query = (sg_str){ctx->field[VM_FIELD_QUERY].s.p, ctx->field[VM_FIELD_QUERY].s.n};
    rq.scheme = (sg_str){ctx->scheme, ctx->scheme_len};
    rq.fields = ctx->lines;
    rq.nfields = ctx->nlines;
    sg_policy pol;
    pol.now = ctx->time_set ? ctx->time : (int64_t)time(NULL);
    pol.skew = p->opts.sig_skew;
    pol.max_sigs = VM_SIG_MAX;
    pol.web_bot_auth = 1;
    /* What is left of the workspace, given back on return. */
    sg_buf ws = {ctx->ws, ctx->ws_cap, ctx->ws_used};
    sg_verify(&rq, p->keys, &pol, ctx->sig->sc, &ws, &ctx->sig->res);
    ctx->sig_done = 1;
}

void vm_sig_field(clf_ctx *ctx, int op, vm_value *out)
{
    if (!ctx->sig_done) verify(ctx);
    const sg_result *r = &ctx->sig->res;
    sg_str s = {"", 0};
    if (op == OP_SIGSTATUS) {
        static const sg_str names[] = {{"absent", 6}, {"valid", 5}, {"invalid", 7}};
        s = names[r->status];
    } else if (r->status == SG_VALID) {
        s = op == OP_SIGAGENT ? r->agent : r->keyid;
    }
    out->s.p = s.p;
    out->s.n = s.n;
}

const char *vm_sig_reason(const clf_ctx *ctx, size_t *n)
{
    if (!ctx->sig || !ctx->sig_done) {
        *n = 0;
        return "";
    }
    *n = ctx->sig->res.reason_len;
    return ctx->sig->res.reason;
}

uint64_t vm_sig_count(const clf_ctx *ctx)
{
    return ctx->sig ? ctx->sig->sc->verifications : 0;
}
