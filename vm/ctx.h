/*
 * ctx.h: the per-thread classification context. Everything a
 * classification touches is allocated here once, by clf_ctx_new(), so that
 * classifying allocates nothing.
 */
#ifndef VM_CTX_H
#define VM_CTX_H

#include "hdrindex.h"
#include "hline.h"
#include "program.h"

typedef union vm_value {
    int64_t i; /* int, and bool as 0/1 */
    struct {
        const char *p;
        size_t n;
    } s;
} vm_value;

/* A header the program inspects: the first value, how many times the
 * request carried it, and (once built) all values joined with ", ". */
typedef struct vm_hslot {
    const char *p;
    size_t n;
    uint32_t count;
    uint32_t joined; /* 1 when jp/jn hold the joined value */
    const char *jp;
    size_t jn;
} vm_hslot;

/* Every value of an inspected header, in arrival order. */
typedef struct vm_hentry {
    uint32_t slot;
    const char *p;
    size_t n;
} vm_hentry;

/* A call in progress: where the caller resumes. */
typedef struct vm_frame {
    const vm_func *f;      /* the caller */
    const vm_insn *ret;    /* its next instruction */
    vm_value *regs;        /* its registers */
    uint32_t dst;          /* CALL: the caller's register for the result */
} vm_frame;

typedef struct vm_capture_scratch vm_capture_scratch;

struct clf_ctx {
    const clf_program *prog;
    vm_value *regs;        /* the register stack: prog->stack_regs */
    vm_frame *frames;      /* prog->max_depth */
    vm_capture_scratch *capture; /* PCRE2 match state, when prog->ncapts */
    hs_scratch_t *scratch; /* fits every database of prog */
    uint64_t *bits;        /* scan results, prog->nbits bits */
    uint64_t *done;        /* subjects scanned this request, nsubjects bits */
    vm_value field[VM_FIELD_COUNT];
    vm_hslot *slots;       /* prog->nhdrs */
    vm_hentry *entries;    /* prog->opts.headers */
    uint32_t nentries;
    uint64_t nheaders;     /* headers added, inspected or not */
    uint64_t header_bytes; /* their names' and values' bytes */
    char *ws;              /* string workspace */
    size_t ws_used, ws_cap;
    uint8_t peer[16];      /* clf_ctx_set_peer */
    int peer_valid;
    uint8_t client[16];    /* req.client_ip, derived on first use */
    int client_state;      /* 0 not derived yet, 1 valid, 2 invalid */
    int rdns_checked;      /* clf_ctx_set_rdns was called: req.rdns_checked */
    int ipinfo_valid;      /* ipinfo holds the databases' answer for ipinfo_addr */
    uint8_t ipinfo_addr[16];
    vm_ipinfo ipinfo;
    char rdns[256];        /* req.rdns (field VM_FIELD_RDNS points here) */
    /* Signatures (vm/sigctx.c), when prog->uses_sig: every header line
     * (prog->opts.headers of them), the verification's state, and what
     * the host said of the request's time and scheme. */
    vm_hline *lines;
    uint32_t nlines;
    struct vm_sig *sig;
    int sig_done;          /* verified this request: sig holds the outcome */
    int time_set;          /* clf_ctx_set_time was called; else the clock */
    int64_t time;
    int64_t time_ms;       /* clf_ctx_set_time_ms (or time * 1000), when time_set */
    /* State (vm/store.h): the store the rules' count(), score() and
     * mark() use (borrowed, clf_ctx_set_store; NULL: none, kept across
     * requests), and the status of the last state call, for explain. */
    clf_store *store;
    int state_status;
    const char *scheme;    /* clf_ctx_set_scheme, borrowed; "" unknown */
    size_t scheme_len;
    char errmsg[160];      /* clf_ctx_errmsg() */
    /* Per scan bit: 1 + the Hyperscan id of the test's first match, or 0;
     * written and read by traced runs only (clf_eval_explain). Last, so
     * that the fields vm_run uses keep their offsets. */
    uint32_t *first_match;
};

/* ---- ctx.c: what the public calls of classify.h do, once they have
 * checked their arguments (NULL pointers are never passed here). ---- */

/* clf_ctx_new. */
VM_INTERNAL clf_status vm_ctx_new(const clf_program *prog, clf_ctx **out, char *err,
                                  size_t errlen);
/* clf_ctx_free (ctx not NULL). */
VM_INTERNAL void vm_ctx_free(clf_ctx *ctx);
/* clf_ctx_set_peer: addr (len bytes; "" for none). */
VM_INTERNAL clf_status vm_ctx_set_peer(clf_ctx *ctx, const char *addr, size_t len);
/* clf_ctx_set_rdns: name (len bytes), NULL for none. */
VM_INTERNAL clf_status vm_ctx_set_rdns(clf_ctx *ctx, const char *name, size_t len);
/* ---- sigctx.c: signatures (RFC 9421) of the request ---- */

/* The per-context verification state (a scratch and the outcome), made
 * by vm_ctx_new when prog->uses_sig. */
VM_INTERNAL struct vm_sig *vm_sig_new(const clf_program *prog);
VM_INTERNAL void vm_sig_free(const clf_program *prog, struct vm_sig *sig);
/* OP_SIGSTATUS, OP_SIGAGENT, OP_SIGKEYID (op): the request's signatures
 * verified on the first call of a request, then that outcome read. */
VM_INTERNAL void vm_sig_field(clf_ctx *ctx, int op, vm_value *out);
/* What the verification found, one line of printable ASCII (n 0 before
 * one ran this request). */
VM_INTERNAL const char *vm_sig_reason(const clf_ctx *ctx, size_t *n);
/* Ed25519 verifications the context has run (tests: lazy, once). */
VM_INTERNAL uint64_t vm_sig_count(const clf_ctx *ctx);

/* clf_ctx_client_ip (interp.c, beside the derivation it shares). */
VM_INTERNAL clf_status vm_ctx_client_ip(clf_ctx *ctx, uint8_t out[16], int *valid);

/* The hand-over of every request: inline, because the public calls are
 * thin wrappers and a call more per header showed in the constant
 * filter's figure (docs/performance.md). */

/* clf_ctx_reset. */
static inline void vm_ctx_reset(clf_ctx *ctx)
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
    ctx->rdns_checked = 0;
    ctx->ipinfo_valid = 0;
    ctx->nlines = 0;
    ctx->sig_done = 0;
    ctx->time_set = 0;
    ctx->scheme = "";
    ctx->scheme_len = 0;
    ctx->errmsg[0] = 0;
}

/* clf_ctx_add_header: name and value may be NULL when their length is 0. */
static inline clf_status vm_ctx_add_header(clf_ctx *ctx, const char *name, size_t name_len, const char *value,
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
                name ? name : "", value_len, (unsigned long long)lim->header_value_bytes);
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
    if (ctx->lines) { /* rules that read a signature: any header may be covered */
        vm_hline *l = &ctx->lines[ctx->nlines++]; /* nheaders bounds nlines */
        l->name = name ? name : "";
        l->name_len = name_len;
        l->value = value ? value : "";
        l->value_len = value_len;
    }
    if (!p->nhdrs) return CLF_OK;
    uint32_t h = vm_hdr_slot(p, name, name_len);
    if (h == UINT32_MAX) return CLF_OK; /* a header the program does not inspect */
    vm_hslot *s = &ctx->slots[h];
    if (s->count++ == 0) {
        s->p = value ? value : "";
        s->n = value_len;
    }
    vm_hentry *e = &ctx->entries[ctx->nentries++];
    e->slot = h;
    e->p = value ? value : "";
    e->n = value_len;
    return CLF_OK;
}

/* What a run ended in. */
typedef enum vm_outcome { VM_DECIDED = 0, VM_PASSED = 1 } vm_outcome;

/* Runs function `func` (a filter) of the context's program on the
 * request. Returns CLF_OK with *outcome VM_DECIDED and the verdict in
 * *out, or VM_PASSED when the filter ended without a verdict (never the
 * verified entry); or CLF_E_LIMIT / CLF_E_BACKEND. */
VM_INTERNAL clf_status vm_run(clf_ctx *ctx, uint32_t func, clf_verdict *out,
                              vm_outcome *outcome);

/* When vm_run_traced calls its hook: before an instruction runs (every
 * instruction), or after one that finished without leaving the function
 * or deciding (control moves on to the next instruction). */
typedef enum vm_trace_when { VM_TRACE_BEFORE = 0, VM_TRACE_AFTER = 1 } vm_trace_when;

/* The hook sees instruction `pc` of function `f`, the function's
 * registers R (its frame of the register stack) and the call depth (0 in
 * the filter vm_run_traced was asked to run). It must not change them. */
typedef void (*vm_trace_fn)(void *ud, vm_trace_when when, const clf_ctx *ctx,
                            const vm_func *f, uint32_t pc, const vm_value *R,
                            uint32_t depth);

/* vm_run with a hook (interp_trace.c: the same loop, compiled with
 * tracing): same results, and after each scan ctx->first_match says which
 * pattern of each test of the subject matched first. */
VM_INTERNAL clf_status vm_run_traced(clf_ctx *ctx, uint32_t func, clf_verdict *out,
                                     vm_outcome *outcome, vm_trace_fn hook, void *hook_ud);

#endif
