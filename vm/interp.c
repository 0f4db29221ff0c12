/*
 * interp.c: the bytecode interpreter.
 *
 * It trusts the program completely: the loader and the verifier have
 * already checked every operand, register type and jump (verify.c), so
 * the loop below does no bounds checks. Dispatch is computed goto where
 * the compiler supports it (one indirect branch per opcode, which branch
 * predictors handle well) and a switch otherwise; meson's `dispatch`
 * option forces either, and the test suite runs both.
 */
#include <string.h>

#include "capture.h"
#include "ctx.h"
#include "httpfields.h"
#include "ipaddr.h"

#if !defined(VM_DISPATCH_SWITCH) && defined(__GNUC__)
#define VM_DISPATCH_GOTO 1
/* Labels as values are a GNU extension that -Wpedantic reports; it is
 * the point of this dispatch mode, and the switch build keeps the code
 * honest ISO C. */
#pragma GCC diagnostic ignored "-Wpedantic"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-label-as-value"
#endif
#endif

static int is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* First occurrence of needle in hay at or after `from`, or -1. */
static long find(const char *hay, size_t hn, const char *nd, size_t nn, size_t from)
{
    if (nn == 0) return from <= hn ? (long)from : -1;
    if (hn < nn) return -1;
    for (size_t i = from; i + nn <= hn;) {
        const char *c = memchr(hay + i, nd[0], hn - nn + 1 - i);
        if (!c) return -1;
        i = (size_t)(c - hay);
        if (memcmp(c, nd, nn) == 0) return (long)i;
        i++;
    }
    return -1;
}

/* Whole word: the needle occurs with no word character [A-Za-z0-9_]
 * right before or right after it (the same rule the pattern compiler
 * expresses with \b and \B). An empty needle is never a word. */
static int find_word(const char *hay, size_t hn, const char *nd, size_t nn)
{
    if (nn == 0) return 0;
    for (long at = find(hay, hn, nd, nn, 0); at >= 0;
         at = find(hay, hn, nd, nn, (size_t)at + 1)) {
        size_t s = (size_t)at, e = s + nn;
        if ((s == 0 || !is_word((unsigned char)hay[s - 1])) &&
            (e == hn || !is_word((unsigned char)hay[e])))
            return 1;
    }
    return 0;
}

typedef struct scan_state {
    uint64_t *bits;
    uint32_t base;
    const uint32_t *test_of; /* Hyperscan id -> test */
    uint32_t npatterns;
    int stop_at_first; /* the subject answers a single test */
} scan_state;

static int on_match(unsigned int id, unsigned long long from,
                    unsigned long long to, unsigned int flags, void *ud)
{
    scan_state *s = ud;
    (void)from; (void)to; (void)flags;
    /* The database came from a file: never trust an id to be in range. */
    if (id >= s->npatterns) return 0;
    uint32_t b = s->base + s->test_of[id];
    s->bits[b / 64] |= UINT64_C(1) << (b % 64);
    return s->stop_at_first; /* non-zero stops the scan */
}

static clf_status scan(clf_ctx *ctx, const vm_subject *S, const char *p, size_t n)
{
    scan_state st = {ctx->bits, S->bit_base, S->test_of, S->npatterns, S->ntests == 1};
    for (uint32_t t = 0; t < S->ntests; t++) {
        uint32_t b = S->bit_base + t;
        ctx->bits[b / 64] &= ~(UINT64_C(1) << (b % 64));
    }
    if (n > UINT32_MAX) { /* hs_scan takes an unsigned int length */
        vm_errf(ctx->errmsg, sizeof ctx->errmsg, "a value of %zu bytes is too long to scan", n);
        return CLF_E_LIMIT;
    }
    hs_error_t rc = hs_scan(S->db, p ? p : "", (unsigned int)n, 0, ctx->scratch,
                            on_match, &st);
    if (rc == HS_SUCCESS || rc == HS_SCAN_TERMINATED) return CLF_OK;
    vm_errf(ctx->errmsg, sizeof ctx->errmsg, "hs_scan failed with Hyperscan error %d", rc);
    return CLF_E_BACKEND;
}

/* The value of header slot h: the first value, or all values joined with
 * ", " in the workspace (built on first use, then cached in the slot). */
static clf_status header_value(clf_ctx *ctx, uint32_t h, vm_value *out)
{
    vm_hslot *s = &ctx->slots[h];
    if (s->count > 1 && !s->joined) {
        size_t need = 0;
        for (uint32_t i = 0; i < ctx->nentries; i++)
            if (ctx->entries[i].slot == h) need += ctx->entries[i].n + 2;
        need -= 2;
        if (need > ctx->ws_cap - ctx->ws_used) {
            vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                    "joining header '%s' needs %zu bytes; the string workspace has %zu left "
                    "(CLF_LIMIT_WORKSPACE_BYTES)",
                    ctx->prog->consts[ctx->prog->hdrs[h]].str, need, ctx->ws_cap - ctx->ws_used);
            return CLF_E_LIMIT;
        }
        char *d = ctx->ws + ctx->ws_used, *q = d;
        for (uint32_t i = 0; i < ctx->nentries; i++) {
            if (ctx->entries[i].slot != h) continue;
            if (q != d) { *q++ = ','; *q++ = ' '; }
            if (ctx->entries[i].n) memcpy(q, ctx->entries[i].p, ctx->entries[i].n);
            q += ctx->entries[i].n;
        }
        ctx->ws_used += need;
        s->jp = d;
        s->jn = need;
        s->joined = 1;
    }
    if (s->count > 1) {
        out->s.p = s->jp;
        out->s.n = s->jn;
    } else {
        out->s.p = s->p ? s->p : "";
        out->s.n = s->n;
    }
    return CLF_OK;
}

static int bit_set(const clf_ctx *ctx, uint32_t b)
{
    return (int)(ctx->bits[b / 64] >> (b % 64) & 1);
}

/* Reserves n bytes of the string workspace, or reports the limit. */
static char *ws_take(clf_ctx *ctx, size_t n, const char *what)
{
    if (n > ctx->ws_cap - ctx->ws_used) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "%s needs %zu bytes; the string workspace has %zu left "
                "(CLF_LIMIT_WORKSPACE_BYTES)", what, n, ctx->ws_cap - ctx->ws_used);
        return NULL;
    }
    char *d = ctx->ws + ctx->ws_used;
    ctx->ws_used += n;
    return d;
}

/* A header slot's value, or NULL when the request did not carry it. */
static clf_status header_or_null(clf_ctx *ctx, uint32_t h, const char **p, size_t *n)
{
    *p = NULL;
    *n = 0;
    if (!ctx->slots[h].count) return CLF_OK;
    vm_value v;
    clf_status st = header_value(ctx, h, &v);
    if (st) return st;
    *p = v.s.p;
    *n = v.s.n;
    return CLF_OK;
}

/* req.client_ip: derived once per request (vm_client_ip states the rule). */
static clf_status client_ip(clf_ctx *ctx, uint32_t xff, uint32_t xrip, vm_value *out)
{
    if (!ctx->client_state) {
        const char *fp, *rp;
        size_t fn, rn;
        clf_status st;
        if ((st = header_or_null(ctx, xff, &fp, &fn)) || (st = header_or_null(ctx, xrip, &rp, &rn)))
            return st;
        const clf_program *prog = ctx->prog;
        ctx->client_state = vm_client_ip(ctx->peer, ctx->peer_valid, prog->trusted,
                                         prog->ntrusted, fp, fn, rp, rn, ctx->client)
                                ? 1 : 2;
    }
    out->s.p = (const char *)ctx->client;
    out->s.n = ctx->client_state == 1 ? 16 : 0;
    return CLF_OK;
}

/* The first cookie named name in the Cookie header's lines (each line
 * is searched on its own: joining them with ", " would not be cookie
 * syntax; RFC 9113 section 8.2.3 splits cookies over lines too). */
static void cookie(clf_ctx *ctx, uint32_t h, const vm_value *name, vm_value *out)
{
    out->s.p = "";
    out->s.n = 0;
    for (uint32_t i = 0; i < ctx->nentries; i++) {
        if (ctx->entries[i].slot != h) continue;
        if (vm_http_cookie(ctx->entries[i].p, ctx->entries[i].n, name->s.p, name->s.n,
                           &out->s.p, &out->s.n))
            return;
    }
}

/* Integer semantics that cannot trap: wrapping arithmetic through
 * unsigned, and division by zero (or INT64_MIN / -1) defined. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t safe_div(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    if (b == -1) return wrap_sub(0, a);
    return a / b;
}
static int64_t safe_mod(int64_t a, int64_t b)
{
    if (b == 0 || b == -1) return 0;
    return a % b;
}

/* str.to_int(): optional ASCII whitespace, an optional sign, then the
 * decimal digits that follow, saturating at the int range; 0 when there
 * is no digit. Other bytes end the number. */
static int64_t to_int(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
    int neg = 0;
    if (i < n && (p[i] == '-' || p[i] == '+')) neg = p[i++] == '-';
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        v = v > (lim - d) / 10 ? lim : v * 10 + d;
    }
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

static int is_trim(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static size_t clamp_len(int64_t k, size_t n)
{
    if (k <= 0) return 0;
    return (uint64_t)k >= n ? n : (size_t)k;
}

clf_status vm_run(clf_ctx *ctx, uint32_t func, clf_verdict *out, vm_outcome *outcome)
{
    const clf_program *prog = ctx->prog;
    const vm_func *f = &prog->funcs[func];
    const vm_insn *ip = f->code;
    vm_value *R = ctx->regs;
    const vm_const *K = prog->consts;
    uint32_t depth = 0; /* frames in use */
    clf_status st;
    *outcome = VM_DECIDED;

    /* Each run starts from a clean slate: no subject scanned, an empty
     * workspace (so joined header values are rebuilt). */
    memset(ctx->done, 0, ((prog->nsubjects + 63) / 64) * 8);
    ctx->ws_used = 0;
    for (uint32_t h = 0; h < prog->nhdrs; h++) ctx->slots[h].joined = 0;

#define A (ip->a)
#define B (ip->b)
#define C (ip->c)
#define BX VM_BX(*ip)

#ifdef VM_DISPATCH_GOTO
    static const void *const labels[VM_OP_COUNT] = {
#define OP(name, a, b, c, doc) &&L_##name,
#include "opcodes.def"
#undef OP
    };
#define DISPATCH() goto *labels[ip->op]
#define DISPATCH_NOW() DISPATCH()
#define CASE(name) L_##name:
#define NEXT() do { ip++; DISPATCH(); } while (0)
#define JUMP(off) do { ip += 1 + (off); DISPATCH(); } while (0)
    DISPATCH();
#else
/* No do-while wrappers here: `continue` must reach the for loop. */
#define CASE(name) case OP_##name:
#define NEXT() { ip++; continue; }
#define JUMP(off) { ip += 1 + (off); continue; }
#define DISPATCH_NOW() continue
    for (;;) switch ((vm_opcode)ip->op) {
    default: return CLF_E_STATE; /* unreachable: the verifier checked every opcode */
#endif

    CASE(LOADK)  R[A].s.p = K[BX].str; R[A].s.n = K[BX].len; NEXT();
    CASE(LOADKI) R[A].i = K[BX].i; NEXT();
    CASE(LOADI)  R[A].i = VM_SBX(*ip); NEXT();
    CASE(LOADB)  R[A].i = VM_SBX(*ip) != 0; NEXT();
    CASE(MOVS)   R[A] = R[B]; NEXT();
    CASE(MOVI)   R[A] = R[B]; NEXT();
    CASE(MOVB)   R[A] = R[B]; NEXT();
    CASE(MOVP)   R[A] = R[B]; NEXT();
    CASE(LOADIP) R[A].s.p = K[BX].str; R[A].s.n = 16; NEXT();

    CASE(FIELD)  R[A] = ctx->field[B]; NEXT();
    CASE(HEADER)
        if ((st = header_value(ctx, B, &R[A]))) return st;
        NEXT();
    CASE(HASHDR) R[A].i = ctx->slots[B].count > 0; NEXT();

    CASE(IADD) R[A].i = wrap_add(R[B].i, R[C].i); NEXT();
    CASE(ISUB) R[A].i = wrap_sub(R[B].i, R[C].i); NEXT();
    CASE(IMUL) R[A].i = wrap_mul(R[B].i, R[C].i); NEXT();
    CASE(IDIV) R[A].i = safe_div(R[B].i, R[C].i); NEXT();
    CASE(IMOD) R[A].i = safe_mod(R[B].i, R[C].i); NEXT();
    CASE(INEG) R[A].i = wrap_sub(0, R[B].i); NEXT();

    CASE(NOT) R[A].i = !R[B].i; NEXT();
    CASE(BEQ) R[A].i = R[B].i == R[C].i; NEXT();
    CASE(IEQ) R[A].i = R[B].i == R[C].i; NEXT();
    CASE(ILT) R[A].i = R[B].i < R[C].i; NEXT();
    CASE(ILE) R[A].i = R[B].i <= R[C].i; NEXT();
    CASE(SEQ)
        R[A].i = R[B].s.n == R[C].s.n &&
                 (R[B].s.n == 0 || memcmp(R[B].s.p, R[C].s.p, R[B].s.n) == 0);
        NEXT();

    CASE(PEQ)
        R[A].i = R[B].s.n == R[C].s.n && (R[B].s.n == 0 || memcmp(R[B].s.p, R[C].s.p, 16) == 0);
        NEXT();

    CASE(SLEN) R[A].i = (int64_t)R[B].s.n; NEXT();
    CASE(SLOWER) {
        size_t n = R[B].s.n;
        if (n > ctx->ws_cap - ctx->ws_used) {
            vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                    "lower() needs %zu bytes; the string workspace has %zu left "
                    "(CLF_LIMIT_WORKSPACE_BYTES)", n, ctx->ws_cap - ctx->ws_used);
            return CLF_E_LIMIT;
        }
        char *d = ctx->ws + ctx->ws_used;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)R[B].s.p[i];
            d[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        ctx->ws_used += n;
        R[A].s.p = d;
        R[A].s.n = n;
        NEXT();
    }
    CASE(SCONT) R[A].i = find(R[B].s.p, R[B].s.n, R[C].s.p, R[C].s.n, 0) >= 0; NEXT();
    CASE(SSTART)
        R[A].i = R[C].s.n <= R[B].s.n &&
                 (R[C].s.n == 0 || memcmp(R[B].s.p, R[C].s.p, R[C].s.n) == 0);
        NEXT();
    CASE(SEND)
        R[A].i = R[C].s.n <= R[B].s.n &&
                 (R[C].s.n == 0 ||
                  memcmp(R[B].s.p + R[B].s.n - R[C].s.n, R[C].s.p, R[C].s.n) == 0);
        NEXT();
    CASE(SWORD) R[A].i = find_word(R[B].s.p, R[B].s.n, R[C].s.p, R[C].s.n); NEXT();
    CASE(SINDEX) R[A].i = find(R[B].s.p, R[B].s.n, R[C].s.p, R[C].s.n, 0); NEXT();
    CASE(STRIM) {
        const char *p = R[B].s.p;
        size_t n = R[B].s.n;
        while (n && is_trim(*p)) { p++; n--; }
        while (n && is_trim(p[n - 1])) n--;
        R[A].s.p = p;
        R[A].s.n = n;
        NEXT();
    }
    CASE(SDROP) {
        size_t k = clamp_len(R[C].i, R[B].s.n);
        R[A].s.p = R[B].s.p + k;
        R[A].s.n = R[B].s.n - k;
        NEXT();
    }
    CASE(STAKE) R[A].s.p = R[B].s.p; R[A].s.n = clamp_len(R[C].i, R[B].s.n); NEXT();
    CASE(TOINT) R[A].i = to_int(R[B].s.p, R[B].s.n); NEXT();
    CASE(TOIP) {
        char *d = ws_take(ctx, 16, "to_ip()");
        if (!d) return CLF_E_LIMIT;
        R[A].s.p = d;
        R[A].s.n = vm_ip_parse(R[B].s.p, R[B].s.n, (uint8_t *)d) ? 16 : 0;
        NEXT();
    }
    CASE(CAPTURE) {
        const vm_capt *Cp = &prog->capts[B];
        vm_value v = R[C];
        R[A].s.p = "";
        R[A].s.n = 0;
        /* PCRE2 runs only where Hyperscan proved a match, so that matching
         * stays linear; its own limits bound the rest (vm/capture.h). */
        if (bit_set(ctx, prog->subjects[Cp->subject].bit_base + Cp->test))
            vm_capture_match(Cp->re, ctx->capture, v.s.p, v.s.n, Cp->group, &R[A].s.p, &R[A].s.n);
        NEXT();
    }

    CASE(IPVALID) R[A].i = R[B].s.n == 16; NEXT();
    CASE(IPIN) {
        const vm_ipset *S = &prog->ipsets[C];
        R[A].i = R[B].s.n == 16 &&
                 vm_iprange_contains(prog->ranges + S->first, S->count, (const uint8_t *)R[B].s.p);
        NEXT();
    }
    CASE(CLIENTIP)
        if ((st = client_ip(ctx, B, C, &R[A]))) return st;
        NEXT();
    CASE(COOKIE) cookie(ctx, B, &R[C], &R[A]); NEXT();
    CASE(QPARAM) {
        /* Decoding never lengthens, so the query's length bounds it. */
        const vm_value *q = &ctx->field[VM_FIELD_QUERY];
        size_t room = ctx->ws_cap - ctx->ws_used;
        char *d = ctx->ws + ctx->ws_used;
        long got = vm_http_query_param(q->s.p, q->s.n, R[B].s.p, R[B].s.n, d, room);
        if (got == -2) {
            vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                    "query_param() needs more than the %zu bytes left in the string workspace "
                    "(CLF_LIMIT_WORKSPACE_BYTES)", room);
            return CLF_E_LIMIT;
        }
        if (got < 0) got = 0;
        ctx->ws_used += (size_t)got;
        R[A].s.p = d;
        R[A].s.n = (size_t)got;
        NEXT();
    }

    CASE(SCANF) {
        const vm_subject *S = &prog->subjects[B];
        if (!(ctx->done[B / 64] >> (B % 64) & 1)) {
            vm_value v;
            if (S->kind == VM_SUBJ_HEADER) {
                if ((st = header_value(ctx, S->hdr, &v))) return st;
            } else {
                v = ctx->field[S->kind];
            }
            if ((st = scan(ctx, S, v.s.p, v.s.n))) return st;
            ctx->done[B / 64] |= UINT64_C(1) << (B % 64);
        }
        R[A].i = bit_set(ctx, S->bit_base + C);
        NEXT();
    }
    CASE(SCAND) {
        const vm_subject *S = &prog->subjects[B];
        if ((st = scan(ctx, S, R[C].s.p, R[C].s.n))) return st;
        R[A].i = bit_set(ctx, S->bit_base);
        NEXT();
    }

    CASE(CALL) {
        const vm_func *g = &prog->funcs[B];
        vm_frame *fr = &ctx->frames[depth++];
        fr->f = f;
        fr->ret = ip + 1;
        fr->regs = R;
        fr->dst = A;
        vm_value *nr = R + f->nregs; /* the callee's frame sits above ours */
        for (uint32_t i = 0; i < g->nparams; i++) nr[i] = R[C + i];
        f = g;
        R = nr;
        ip = g->code;
        DISPATCH_NOW();
    }
    CASE(CALLF) {
        const vm_func *g = &prog->funcs[B];
        vm_frame *fr = &ctx->frames[depth++];
        fr->f = f;
        fr->ret = ip + 1;
        fr->regs = R;
        fr->dst = 0;
        R += f->nregs;
        f = g;
        ip = g->code;
        DISPATCH_NOW();
    }
    CASE(RET) {
        vm_value v = R[A];
        vm_frame *fr = &ctx->frames[--depth];
        f = fr->f;
        R = fr->regs;
        ip = fr->ret;
        R[fr->dst] = v;
        DISPATCH_NOW();
    }
    CASE(PASS) {
        if (depth == 0) { /* the filter we were asked to run passed */
            *outcome = VM_PASSED;
            out->verdict = CLF_ACCEPT;
            out->reason = NULL;
            out->reason_len = 0;
            return CLF_OK;
        }
        vm_frame *fr = &ctx->frames[--depth];
        f = fr->f;
        R = fr->regs;
        ip = fr->ret;
        DISPATCH_NOW();
    }

    CASE(JMP) JUMP(BX);
    CASE(JMPF) if (!R[A].i) JUMP(BX); NEXT();
    CASE(JMPT) if (R[A].i) JUMP(BX); NEXT();
    CASE(ACCEPT)
        out->verdict = CLF_ACCEPT;
        goto finish;
    CASE(REJECT)
        out->verdict = CLF_REJECT;
        goto finish;

#ifndef VM_DISPATCH_GOTO
    }
#endif
finish:
    if (BX == VM_NO_REASON) {
        out->reason = NULL;
        out->reason_len = 0;
    } else {
        out->reason = K[BX].str;
        out->reason_len = K[BX].len;
    }
    return CLF_OK;
#undef A
#undef B
#undef C
#undef BX
}
