/*
 * interp_body.h: the interpreter's dispatch loop, a template compiled
 * twice so that tracing costs nothing when off: interp.c includes it with
 * VM_TRACE 0 (vm_run, no tracing code at all) and interp_trace.c with
 * VM_TRACE 1 (vm_run_traced, which calls a hook around each instruction
 * for clf_eval_explain). Include interp_ops.h first.
 *
 * It trusts the program completely: the loader and the verifier have
 * already checked every operand, register type and jump (verify.c), so
 * the loop below does no bounds checks. Dispatch is computed goto where
 * the compiler supports it (one indirect branch per opcode, which branch
 * predictors handle well) and a switch otherwise; meson's `dispatch`
 * option forces either, and the test suite runs both.
 */
#ifndef VM_INTERP_OPS_H
#error "include interp_ops.h before interp_body.h"
#endif

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

#if VM_TRACE
clf_status vm_run_traced(clf_ctx *ctx, uint32_t func, clf_verdict *out, vm_outcome *outcome,
                         vm_trace_fn hook, void *hook_ud)
#else
clf_status vm_run(clf_ctx *ctx, uint32_t func, clf_verdict *out, vm_outcome *outcome)
#endif
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
    memset(ctx->done, 0, VM_BITSET_WORDS(prog->nsubjects) * 8);
    ctx->ws_used = 0;
    for (uint32_t h = 0; h < prog->nhdrs; h++) ctx->slots[h].joined = 0;

#define A (ip->a)
#define B (ip->b)
#define C (ip->c)
#define BX VM_BX(*ip)

/* The trace hook: before every instruction, and after each one that
 * finishes in place (NEXT). Only the traced copy has any of it. */
#if VM_TRACE
#define TRACE(when) hook(hook_ud, when, ctx, f, (uint32_t)(ip - f->code), R, depth)
#define TRACE_BEFORE() TRACE(VM_TRACE_BEFORE)
#define TRACE_AFTER() TRACE(VM_TRACE_AFTER)
#endif

#ifdef VM_DISPATCH_GOTO
    static const void *const labels[VM_OP_COUNT] = {
#define OP(name, a, b, c, flags, synopsis, explain) &&L_##name,
#include "opcodes.def"
#undef OP
    };
#if VM_TRACE
#define DISPATCH() do { TRACE_BEFORE(); goto *labels[ip->op]; } while (0)
#define NEXT() do { TRACE_AFTER(); ip++; DISPATCH(); } while (0)
#else
#define DISPATCH() goto *labels[ip->op]
#define NEXT() do { ip++; DISPATCH(); } while (0)
#endif
#define DISPATCH_NOW() DISPATCH()
#define CASE(name) L_##name:
#define JUMP(off) do { ip += 1 + (off); DISPATCH(); } while (0)
    DISPATCH();
#else
/* No do-while wrappers here: `continue` must reach the for loop. */
#define CASE(name) case OP_##name:
#if VM_TRACE
#define NEXT() { TRACE_AFTER(); ip++; continue; }
#define OPCODE() (TRACE_BEFORE(), (vm_opcode)ip->op)
#else
#define NEXT() { ip++; continue; }
#define OPCODE() ((vm_opcode)ip->op)
#endif
#define JUMP(off) { ip += 1 + (off); continue; }
#define DISPATCH_NOW() continue
    for (;;) switch (OPCODE()) {
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
        if (vm_bit_test(ctx->bits, prog->subjects[Cp->subject].bit_base + Cp->test))
            vm_capture_match(Cp->re, ctx->capture, v.s.p, v.s.n, Cp->group, &R[A].s.p, &R[A].s.n);
        NEXT();
    }

    CASE(IPVALID) R[A].i = R[B].s.n == 16; NEXT();
    CASE(IPASN) R[A].i = ipinfo(ctx, &R[B])->asn; NEXT();
    CASE(IPORG) {
        const vm_ipinfo *in = ipinfo(ctx, &R[B]);
        R[A].s.p = in->org;
        R[A].s.n = in->org_len;
        NEXT();
    }
    CASE(IPCC) {
        const vm_ipinfo *in = ipinfo(ctx, &R[B]);
        R[A].s.p = in->country;
        R[A].s.n = in->country_len;
        NEXT();
    }
    CASE(IPNET) {
        if (R[B].s.n != 16) {
            R[A] = R[B];
            NEXT();
        }
        uint8_t *d = (uint8_t *)ws_take(ctx, 16, "net()");
        if (!d) return CLF_E_LIMIT;
        const uint8_t *s = (const uint8_t *)R[B].s.p;
        int v4 = is_v4_mapped(s);
        int64_t bits = v4 ? (R[C].i & 255) : ((R[C].i >> 8) & 255);
        if (bits > (v4 ? 32 : 128)) bits = v4 ? 32 : 128;
        if (v4) bits += 96; /* in the mapped space */
        for (int i = 0; i < 16; i++) {
            int64_t keep = bits - 8 * i;
            d[i] = keep >= 8 ? s[i] : keep <= 0 ? 0 : (uint8_t)(s[i] & (0xff << (8 - keep)));
        }
        R[A].s.p = (const char *)d;
        R[A].s.n = 16;
        NEXT();
    }
    CASE(STCOUNT) R[A].i = vm_state_call(ctx, OP_STCOUNT, &prog->slots[B], &R[C]); NEXT();
    CASE(STCOUNTED) R[A].i = vm_state_call(ctx, OP_STCOUNTED, &prog->slots[B], &R[C]); NEXT();
    CASE(STSCADD) R[A].i = vm_state_call(ctx, OP_STSCADD, &prog->slots[B], &R[C]); NEXT();
    CASE(STSCORE) R[A].i = vm_state_call(ctx, OP_STSCORE, &prog->slots[B], &R[C]); NEXT();
    CASE(STMARK) R[A].i = vm_state_call(ctx, OP_STMARK, &prog->slots[B], &R[C]); NEXT();
    CASE(STMARKED) R[A].i = vm_state_call(ctx, OP_STMARKED, &prog->slots[B], &R[C]); NEXT();
    CASE(IPIN) {
        const vm_ipset *S = &prog->ipsets[C];
        R[A].i = R[B].s.n == 16 &&
                 vm_iprange_contains(prog->ranges + S->first, S->count, (const uint8_t *)R[B].s.p);
        NEXT();
    }
    CASE(INTIN) {
        const vm_intset *S = &prog->intsets[C];
        const int64_t *v = prog->ints + S->first;
        uint32_t lo = 0, hi = S->count; /* binary search: the set is strictly increasing */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (v[mid] < R[B].i) lo = mid + 1;
            else hi = mid;
        }
        R[A].i = lo < S->count && v[lo] == R[B].i;
        NEXT();
    }
    CASE(CLIENTIP)
        if ((st = client_ip(ctx, B, C, &R[A]))) return st;
        NEXT();
    CASE(RDNSCHK) R[A].i = ctx->rdns_checked; NEXT();
    CASE(SIGSTATUS) vm_sig_field(ctx, OP_SIGSTATUS, &R[A]); NEXT();
    CASE(SIGAGENT) vm_sig_field(ctx, OP_SIGAGENT, &R[A]); NEXT();
    CASE(SIGKEYID) vm_sig_field(ctx, OP_SIGKEYID, &R[A]); NEXT();
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
        if (!vm_bit_test(ctx->done, B)) {
            vm_value v;
            if (S->kind == VM_SUBJ_HEADER) {
                if ((st = header_value(ctx, S->hdr, &v))) return st;
            } else {
                v = ctx->field[S->kind];
            }
            if ((st = scan(ctx, S, v.s.p, v.s.n))) return st;
            vm_bit_set(ctx->done, B);
        }
        R[A].i = vm_bit_test(ctx->bits, S->bit_base + C);
        NEXT();
    }
    CASE(SCAND) {
        const vm_subject *S = &prog->subjects[B];
        if ((st = scan(ctx, S, R[C].s.p, R[C].s.n))) return st;
        R[A].i = vm_bit_test(ctx->bits, S->bit_base);
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

/* The template's names end with it. */
#undef DISPATCH
#undef DISPATCH_NOW
#undef CASE
#undef NEXT
#undef JUMP
#undef OPCODE
#undef TRACE
#undef TRACE_BEFORE
#undef TRACE_AFTER
