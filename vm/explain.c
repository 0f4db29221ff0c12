/*
 * explain.c: the formatter behind clf_eval_explain. vm_run_traced calls
 * hook() before every instruction and after each one that finishes in
 * place; hook() keeps the operands an instruction reads (its destination
 * may be one of them) and, once the result is known, describes the
 * instructions that decide something: request reads, comparisons,
 * arithmetic, string and IP operations, pattern tests with the pattern
 * that matched, calls and returns, branches, and the verdict. Moves,
 * constants and unconditional jumps say nothing a reader needs.
 *
 * Positions come from the program's position table (vm_pos). Text goes
 * into a buffer on the stack: explaining allocates nothing.
 */
#include <string.h>

#include "explain.h"

#include "explain_text.h"

typedef struct explainer {
    const clf_program *prog;
    clf_explain_fn fn;
    void *ud;
    vm_value b, c; /* registers B and C as the instruction found them */
    const vm_insn *folded; /* a NOT already told as part of a != */
    int scans;             /* this SCANF scans its subject (the first test on it) */
    vm_text t;
    char buf[VM_EXPLAIN_TEXT_BYTES];
} explainer;

static const char *const field_names[VM_FIELD_COUNT] = {"method", "path", "query"};

static int reads_register(vm_operand k)
{
    return k == VM_OPND_RB || k == VM_OPND_RI || k == VM_OPND_RS || k == VM_OPND_RP;
}

/* A value of register type `type`. */
static void value(vm_text *t, uint8_t type, const vm_value *v)
{
    switch (type) {
    case VM_T_BOOL: vm_text_str(t, v->i ? "true" : "false"); break;
    case VM_T_INT: vm_text_i64(t, v->i); break;
    case VM_T_IP:
        if (v->s.n == 16) {
            char ip[VM_IP_TEXT_MAX];
            vm_text_put(t, ip, vm_ip_format((const uint8_t *)v->s.p, ip, sizeof ip));
        } else {
            vm_text_str(t, "(invalid address)");
        }
        break;
    default: vm_text_quote(t, v->s.p, v->s.n); break;
    }
}

static void reg(vm_text *t, const vm_func *f, uint32_t r, const vm_value *v)
{
    value(t, f->regtypes[r], v);
}

static void result(vm_text *t, const vm_func *f, uint32_t a, const vm_value *R)
{
    vm_text_str(t, " -> ");
    reg(t, f, a, &R[a]);
}

static void header_name(vm_text *t, const clf_program *p, uint32_t slot)
{
    const vm_const *k = &p->consts[p->hdrs[slot]];
    vm_text_quote(t, k->str, k->len);
}

/* The subject a pattern test reads: "path", "header user-agent". */
static void subject_name(vm_text *t, const clf_program *p, const vm_subject *S)
{
    if (S->kind == VM_SUBJ_HEADER) {
        const vm_const *k = &p->consts[p->hdrs[S->hdr]];
        vm_text_str(t, "header ");
        vm_text_name(t, k->str, k->len);
    } else {
        vm_text_str(t, field_names[S->kind]);
    }
}

/* The value a request subject was scanned with (interp_ops.h,
 * header_value: a repeated header's values are joined by then). */
static void subject_value(vm_text *t, const clf_ctx *ctx, const vm_subject *S)
{
    if (S->kind != VM_SUBJ_HEADER) {
        value(t, VM_T_STR, &ctx->field[S->kind]);
        return;
    }
    const vm_hslot *h = &ctx->slots[S->hdr];
    if (h->count > 1) vm_text_quote(t, h->jp, h->jn);
    else vm_text_quote(t, h->p ? h->p : "", h->n);
}

static void pattern(vm_text *t, const clf_program *p, const vm_pattern *q)
{
    const vm_const *k = &p->consts[q->expr];
    /* Only a regex may match the empty string (lang/codegen.c). */
    if (q->flags & HS_FLAG_ALLOWEMPTY) vm_text_regex(t, k->str, k->len, q->flags);
    else vm_text_literal(t, k->str, k->len);
}

/* "contains_word([166 strings]i)" or "matches(/re/i)", then, when the
 * test is true and has several patterns, which one matched first. The
 * patterns are looked up by walking the table: explaining may be slow,
 * classifying may not. */
static void test_text(explainer *x, const clf_ctx *ctx, uint32_t s, uint32_t test, int64_t yes,
                      int have_subject)
{
    const clf_program *p = x->prog;
    vm_text *t = &x->t;
    const vm_subject *S = &p->subjects[s];
    uint32_t b = S->bit_base + test, first = ctx->first_match[b];
    const vm_pattern *one = NULL, *hit = NULL;
    const char *how = NULL;
    uint32_t count = 0, id = 0;
    int mixed = 0; /* a merged test (lang/codegen.c): methods or cases differ */
    for (uint32_t i = 0; i < p->npatterns; i++) {
        const vm_pattern *q = &p->patterns[i];
        if (q->subject != s) continue;
        if (first && id == first - 1) hit = q;
        id++; /* a pattern's Hyperscan id is its index in its subject */
        if (q->test != test) continue;
        const vm_const *k = &p->consts[q->expr];
        const char *m = q->flags & HS_FLAG_ALLOWEMPTY ? "matches"
                                                      : vm_literal_method(k->str, k->len);
        if (!one) {
            one = q;
            how = m;
        } else if (strcmp(m, how) != 0 ||
                   (!(q->flags & HS_FLAG_ALLOWEMPTY) &&
                    ((q->flags ^ one->flags) & HS_FLAG_CASELESS))) {
            mixed = 1;
        }
        count++;
    }
    if (!one) return; /* the loader refuses subjects without patterns */
    if (mixed) {
        /* `a.contains_word(S) || a.matches(/r/) || ...`: one test. */
        vm_text_str(t, "any of [");
        vm_text_i64(t, count);
        vm_text_str(t, " patterns]");
    } else {
        vm_text_str(t, how);
        vm_text_put(t, "(", 1);
        if (count == 1) {
            pattern(t, p, one);
        } else {
            vm_text_put(t, "[", 1);
            vm_text_i64(t, count);
            vm_text_str(t, one->flags & HS_FLAG_ALLOWEMPTY ? " regexes]"
                           : one->flags & HS_FLAG_CASELESS ? " strings]i" : " strings]");
        }
        vm_text_put(t, ")", 1);
    }
    vm_text_str(t, " on ");
    if (have_subject) {
        subject_name(t, p, S);
        /* The value, once: when this test is the one that scanned it. */
        if (x->scans) {
            vm_text_put(t, " ", 1);
            subject_value(t, ctx, S);
        }
    } else {
        value(t, VM_T_STR, &x->c);
    }
    vm_text_str(t, yes ? " -> true" : " -> false");
    if (yes && count > 1 && hit && hit->test == test) {
        vm_text_str(t, ": matched ");
        pattern(t, p, hit);
    }
}

static void binop(explainer *x, const vm_func *f, const vm_insn *in, const char *op,
                  const vm_value *R)
{
    reg(&x->t, f, in->b, &x->b);
    vm_text_str(&x->t, op);
    reg(&x->t, f, in->c, &x->c);
    result(&x->t, f, in->a, R);
}

/* "METHOD(ARG) on VALUE -> RESULT" for a string method with an argument
 * in register C (or none when arg is 0). */
static void method(explainer *x, const vm_func *f, const vm_insn *in, const char *name, int arg,
                   const vm_value *R)
{
    vm_text_str(&x->t, name);
    vm_text_put(&x->t, "(", 1);
    if (arg) reg(&x->t, f, in->c, &x->c);
    vm_text_str(&x->t, ") on ");
    reg(&x->t, f, in->b, &x->b);
    result(&x->t, f, in->a, R);
}

/* After an instruction that produced a value: describes it, or returns 0
 * for one not worth a step. */
static int describe_value(explainer *x, const clf_ctx *ctx, const vm_func *f, const vm_insn *in,
                          const vm_value *R)
{
    const clf_program *p = x->prog;
    vm_text *t = &x->t;
    switch ((vm_opcode)in->op) {
    case OP_FIELD:
        vm_text_str(t, "req.");
        vm_text_str(t, field_names[in->b]);
        vm_text_str(t, " = ");
        reg(t, f, in->a, &R[in->a]);
        return 1;
    case OP_HEADER:
        vm_text_str(t, "header ");
        header_name(t, p, in->b);
        vm_text_str(t, " = ");
        reg(t, f, in->a, &R[in->a]);
        if (!ctx->slots[in->b].count) vm_text_str(t, " (absent)");
        return 1;
    case OP_HASHDR:
        vm_text_str(t, "has header ");
        header_name(t, p, in->b);
        result(t, f, in->a, R);
        return 1;
    case OP_IADD: binop(x, f, in, " + ", R); return 1;
    case OP_ISUB: binop(x, f, in, " - ", R); return 1;
    case OP_IMUL: binop(x, f, in, " * ", R); return 1;
    case OP_IDIV: binop(x, f, in, " / ", R); return 1;
    case OP_IMOD: binop(x, f, in, " % ", R); return 1;
    case OP_BEQ: case OP_IEQ: case OP_SEQ: case OP_PEQ:
        /* `a != b` compiles to == then NOT of the result (the verifier
         * keeps a comparison from being the last instruction): say it as
         * written, in one step. */
        if (in[1].op == OP_NOT && in[1].b == in->a) {
            reg(t, f, in->b, &x->b);
            vm_text_str(t, " != ");
            reg(t, f, in->c, &x->c);
            vm_text_str(t, R[in->a].i ? " -> false" : " -> true");
            x->folded = in + 1;
            return 1;
        }
        binop(x, f, in, " == ", R);
        return 1;
    case OP_ILT: binop(x, f, in, " < ", R); return 1;
    case OP_ILE: binop(x, f, in, " <= ", R); return 1;
    case OP_INEG:
        vm_text_str(t, "-(");
        reg(t, f, in->b, &x->b);
        vm_text_put(t, ")", 1);
        result(t, f, in->a, R);
        return 1;
    case OP_NOT:
        if (x->folded == in) {
            x->folded = NULL;
            return 0;
        }
        vm_text_str(t, "not ");
        reg(t, f, in->b, &x->b);
        result(t, f, in->a, R);
        return 1;
    case OP_SLEN: method(x, f, in, "len", 0, R); return 1;
    case OP_SLOWER: method(x, f, in, "lower", 0, R); return 1;
    case OP_STRIM: method(x, f, in, "trim", 0, R); return 1;
    case OP_TOINT: method(x, f, in, "to_int", 0, R); return 1;
    case OP_TOIP: method(x, f, in, "to_ip", 0, R); return 1;
    case OP_IPVALID: method(x, f, in, "valid", 0, R); return 1;
    case OP_SCONT: method(x, f, in, "contains", 1, R); return 1;
    case OP_SSTART: method(x, f, in, "starts_with", 1, R); return 1;
    case OP_SEND: method(x, f, in, "ends_with", 1, R); return 1;
    case OP_SWORD: method(x, f, in, "contains_word", 1, R); return 1;
    case OP_SINDEX: method(x, f, in, "index_of", 1, R); return 1;
    case OP_SDROP: case OP_STAKE: /* substr(start, len) is a drop, then a take */
        reg(t, f, in->b, &x->b);
        vm_text_str(t, in->op == OP_SDROP ? "[" : "[:");
        reg(t, f, in->c, &x->c);
        vm_text_str(t, in->op == OP_SDROP ? ":]" : "]");
        result(t, f, in->a, R);
        return 1;
    case OP_CAPTURE: {
        const vm_capt *cp = &p->capts[in->b];
        const vm_const *k = &p->consts[cp->expr];
        vm_text_str(t, "capture(");
        vm_text_regex(t, k->str, k->len, cp->flags);
        vm_text_str(t, ", ");
        vm_text_i64(t, cp->group);
        vm_text_str(t, ") on ");
        reg(t, f, in->c, &x->c);
        result(t, f, in->a, R);
        return 1;
    }
    case OP_IPIN:
        reg(t, f, in->b, &x->b);
        vm_text_str(t, " in [");
        vm_text_i64(t, p->ipsets[in->c].count);
        vm_text_str(t, p->ipsets[in->c].count == 1 ? " range]" : " ranges]");
        result(t, f, in->a, R);
        return 1;
    case OP_CLIENTIP:
        vm_text_str(t, "req.client_ip = ");
        reg(t, f, in->a, &R[in->a]);
        return 1;
    case OP_COOKIE:
        vm_text_str(t, "req.cookie(");
        reg(t, f, in->c, &x->c);
        vm_text_str(t, ") = ");
        reg(t, f, in->a, &R[in->a]);
        return 1;
    case OP_QPARAM:
        vm_text_str(t, "req.query_param(");
        reg(t, f, in->b, &x->b);
        vm_text_str(t, ") = ");
        reg(t, f, in->a, &R[in->a]);
        return 1;
    case OP_SCANF: test_text(x, ctx, in->b, in->c, R[in->a].i, 1); return 1;
    case OP_SCAND: test_text(x, ctx, in->b, 0, R[in->a].i, 0); return 1;
    default: return 0;
    }
}

/* Before an instruction that leaves the function, branches or decides:
 * describes it, or returns 0 for one that does none of these. */
static int describe_control(explainer *x, const vm_func *f, uint32_t pc, const vm_insn *in,
                            const vm_value *R)
{
    const clf_program *p = x->prog;
    vm_text *t = &x->t;
    switch ((vm_opcode)in->op) {
    case OP_CALL: {
        const vm_func *g = &p->funcs[in->b];
        vm_text_str(t, "call ");
        vm_text_name(t, p->consts[g->name].str, p->consts[g->name].len);
        vm_text_put(t, "(", 1);
        for (uint32_t i = 0; i < g->nparams; i++) {
            if (i) vm_text_str(t, ", ");
            value(t, g->regtypes[i], &R[in->c + i]);
        }
        vm_text_put(t, ")", 1);
        return 1;
    }
    case OP_CALLF: {
        const vm_const *k = &p->consts[p->funcs[in->b].name];
        vm_text_str(t, "call filter ");
        vm_text_name(t, k->str, k->len);
        return 1;
    }
    case OP_RET:
        vm_text_str(t, "return ");
        reg(t, f, in->a, &R[in->a]);
        return 1;
    case OP_PASS: vm_text_str(t, "pass"); return 1;
    case OP_JMPF: case OP_JMPT: {
        int cond = R[in->a].i != 0, jumps = cond == (in->op == OP_JMPT);
        vm_text_str(t, cond ? "condition true: " : "condition false: ");
        if (!jumps) {
            vm_text_str(t, "go on");
            return 1;
        }
        uint32_t to = pc + 1 + VM_BX(*in); /* the verifier keeps it inside f */
        vm_text_str(t, "jump to line ");
        vm_text_i64(t, f->pos[to].line);
        return 1;
    }
    case OP_ACCEPT: case OP_REJECT: {
        uint32_t k = VM_BX(*in);
        vm_text_str(t, in->op == OP_ACCEPT ? "accept" : "reject");
        if (k != VM_NO_REASON) {
            vm_text_put(t, " ", 1);
            vm_text_quote(t, p->consts[k].str, p->consts[k].len);
        }
        return 1;
    }
    default: return 0;
    }
}

static int is_control(vm_opcode op)
{
    return op == OP_CALL || op == OP_CALLF || op == OP_RET || op == OP_PASS || op == OP_JMP ||
           op == OP_JMPF || op == OP_JMPT || op == OP_ACCEPT || op == OP_REJECT;
}

static void emit(explainer *x, const vm_func *f, uint32_t pc, uint32_t depth)
{
    const vm_pos *ps = &f->pos[pc];
    clf_explain_step st;
    st.file = ps->file != VM_NO_REASON ? x->prog->consts[ps->file].str : NULL;
    st.line = ps->line;
    st.col = ps->col;
    st.text_len = vm_text_done(&x->t);
    st.text = x->t.p;
    st.depth = depth;
    x->fn(x->ud, &st);
}

static void hook(void *ud, vm_trace_when when, const clf_ctx *ctx, const vm_func *f, uint32_t pc,
                 const vm_value *R, uint32_t depth)
{
    explainer *x = ud;
    const vm_insn *in = &f->code[pc];
    const vm_opinfo *oi = &vm_opinfo_table[in->op];
    int said;
    vm_text_init(&x->t, x->buf, sizeof x->buf);
    if (is_control((vm_opcode)in->op)) {
        /* Told before it runs: afterwards the frame, or the run, is gone. */
        said = when == VM_TRACE_BEFORE && describe_control(x, f, pc, in, R);
    } else if (when == VM_TRACE_BEFORE) {
        if (reads_register((vm_operand)oi->opnd[1])) x->b = R[in->b];
        if (reads_register((vm_operand)oi->opnd[2])) x->c = R[in->c];
        if (in->op == OP_SCANF) x->scans = !(ctx->done[in->b / 64] >> (in->b % 64) & 1);
        said = 0;
    } else {
        said = describe_value(x, ctx, f, in, R);
    }
    if (said) emit(x, f, pc, depth);
}

clf_status vm_explain(clf_ctx *ctx, uint32_t func, clf_verdict *out, vm_outcome *outcome,
                      clf_explain_fn fn, void *ud)
{
    explainer x;
    x.prog = ctx->prog;
    x.fn = fn;
    x.ud = ud;
    x.b.i = x.c.i = 0;
    x.folded = NULL;
    x.scans = 0;
    return vm_run_traced(ctx, func, out, outcome, hook, &x);
}
