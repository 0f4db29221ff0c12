/*
 * explain.c: the formatter behind clf_eval_explain. vm_run_traced calls
 * hook() before every instruction and after each one that finishes in
 * place; hook() keeps the operands an instruction reads (its destination
 * may be one of them) and renders the instruction's explain template from
 * vm/opcodes.def: after it ran, or before, for an instruction that leaves
 * the straight line (VM_OPF_CONTROL: afterwards the frame, or the run, is
 * gone). An empty template (moves, constants, unconditional jumps) says
 * nothing a reader needs. This file knows the template directives, never
 * an opcode: a new opcode brings its template.
 *
 * Positions come from the program's position table (vm_pos). Text goes
 * into a buffer on the stack: explaining allocates nothing.
 */
#include <string.h>

#include "bitset.h"
#include "explain.h"

#include "explain_text.h"

typedef struct explainer {
    const clf_program *prog;
    clf_explain_fn fn;
    void *ud;
    vm_value b, c; /* registers B and C as the instruction found them */
    const vm_insn *folded; /* a NOT already told as part of a != */
    int scans;             /* this test scans its subject (the first test on it) */
    vm_text t;
    char buf[VM_EXPLAIN_TEXT_BYTES];
} explainer;

/* What one rendering sees. */
typedef struct site {
    const clf_ctx *ctx;
    const vm_func *f;
    uint32_t pc;
    const vm_insn *in;
    const vm_value *R;
} site;


static int reads_register(vm_operand k)
{
    return (vm_operand_regtype(k) != 0 && !vm_operand_writes(k)) || k == VM_OPND_RKEY;
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
        vm_text_str(t, vm_field_names[S->kind]);
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

/* A pattern as the source wrote it: a string, or /regex/flags. */
static void pattern(vm_text *t, const clf_program *p, const vm_pattern *q)
{
    const vm_const *k = &p->consts[q->value];
    if (q->kind == VM_PAT_REGEX) vm_text_regex(t, k->str, k->len, q->flags);
    else vm_text_quote(t, k->str, k->len);
}

/* %test: "contains_word([166 strings]i) on header user-agent "..." ->
 * true: matched "GPTBot"", or "matches(/re/i) on "value" -> false".
 * Subject B; test C when C is a test operand, else test 0 of a value
 * scanned from register C. When the test is true and has several
 * patterns, says which matched first. The patterns are looked up by
 * walking the table: explaining may be slow, classifying may not. */
static void test_text(explainer *x, const site *at)
{
    const clf_program *p = x->prog;
    const clf_ctx *ctx = at->ctx;
    vm_text *t = &x->t;
    const vm_insn *in = at->in;
    int request = vm_opinfo_table[in->op].opnd[2] == VM_OPND_TEST;
    uint32_t s = in->b, test = request ? in->c : 0;
    int64_t yes = at->R[in->a].i;
    const vm_subject *S = &p->subjects[s];
    uint32_t b = S->bit_base + test, first = ctx->first_match[b];
    const vm_pattern *one = NULL, *hit = NULL;
    uint32_t count = 0, id = 0;
    int mixed = 0; /* a merged test (lang/lower.c): methods or cases differ */
    for (uint32_t i = 0; i < p->npatterns; i++) {
        const vm_pattern *q = &p->patterns[i];
        if (q->subject != s) continue;
        if (first && id == first - 1) hit = q;
        id++; /* a pattern's Hyperscan id is its index in its subject */
        if (q->test != test) continue;
        if (!one) one = q;
        else if (q->kind != one->kind ||
                 (q->kind != VM_PAT_REGEX && ((q->flags ^ one->flags) & HS_FLAG_CASELESS)))
            mixed = 1;
        count++;
    }
    if (!one) return; /* the loader refuses subjects without patterns */
    if (mixed) {
        /* `a.contains_word(S) || a.matches(/r/) || ...`: one test. */
        vm_text_str(t, "any of [");
        vm_text_i64(t, count);
        vm_text_str(t, " patterns]");
    } else {
        vm_text_str(t, vm_pattern_kind_names[one->kind]);
        vm_text_put(t, "(", 1);
        if (count == 1) {
            pattern(t, p, one);
        } else {
            vm_text_put(t, "[", 1);
            vm_text_i64(t, count);
            vm_text_str(t, one->kind == VM_PAT_REGEX ? " regexes]"
                           : one->flags & HS_FLAG_CASELESS ? " strings]i" : " strings]");
        }
        vm_text_put(t, ")", 1);
    }
    vm_text_str(t, " on ");
    if (request) {
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

/* %call: the callee B, with the argument values of a fn call. */
static void call_text(explainer *x, const site *at)
{
    const clf_program *p = x->prog;
    vm_text *t = &x->t;
    const vm_insn *in = at->in;
    const vm_func *g = &p->funcs[in->b];
    vm_text_name(t, p->consts[g->name].str, p->consts[g->name].len);
    if (vm_opinfo_table[in->op].opnd[2] != VM_OPND_ARGS) return;
    vm_text_put(t, "(", 1);
    for (uint32_t i = 0; i < g->nparams; i++) {
        if (i) vm_text_str(t, ", ");
        value(t, g->regtypes[i], &at->R[in->c + i]);
    }
    vm_text_put(t, ")", 1);
}

/* %branch: what register A does to the jump at this pc. */
static void branch_text(explainer *x, const site *at)
{
    vm_text *t = &x->t;
    const vm_insn *in = at->in;
    int cond = at->R[in->a].i != 0;
    int jumps = cond == !(vm_opinfo_table[in->op].flags & VM_OPF_IFFALSE);
    vm_text_str(t, cond ? "condition true: " : "condition false: ");
    if (!jumps) {
        vm_text_str(t, "go on");
        return;
    }
    uint32_t to = at->pc + 1 + VM_BX(*in); /* the verifier keeps it inside f */
    vm_text_str(t, "jump to line ");
    vm_text_i64(t, at->f->pos[to].line);
}

/* The directive at *tp (after the '%'), rendered; *tp moves past it.
 * Returns 0 for an unknown directive (a bug in opcodes.def, which the
 * explain unit tests would show as a missing step). */
static int directive(explainer *x, const site *at, const char **tp)
{
    static const struct {
        const char *name;
        int id;
    } names[] = {{"field", 1}, {"header", 2}, {"absent", 3}, {"ipset", 4}, {"capture", 5},
                 {"test", 6},  {"call", 7},   {"branch", 8}, {"reason", 9}, {"intset", 10},
                 {"sigwhy", 11}, {"slot", 12}, {"stwhy", 13}};
    const clf_program *p = x->prog;
    vm_text *t = &x->t;
    const vm_insn *in = at->in;
    const char *s = *tp;
    switch (*s) {
    case '%': vm_text_put(t, "%", 1); *tp = s + 1; return 1;
    case 'A': reg(t, at->f, in->a, &at->R[in->a]); *tp = s + 1; return 1;
    case 'B': reg(t, at->f, in->b, &x->b); *tp = s + 1; return 1;
    case 'C': reg(t, at->f, in->c, &x->c); *tp = s + 1; return 1;
    default: break;
    }
    size_t n = 0;
    while (s[n] >= 'a' && s[n] <= 'z') n++;
    int id = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !id; i++)
        if (strlen(names[i].name) == n && memcmp(names[i].name, s, n) == 0) id = names[i].id;
    *tp = s + n;
    switch (id) {
    case 1: vm_text_str(t, vm_field_names[in->b]); return 1;
    case 2: header_name(t, p, in->b); return 1;
    case 3:
        if (!at->ctx->slots[in->b].count) vm_text_str(t, " (absent)");
        return 1;
    case 4:
        vm_text_put(t, "[", 1);
        vm_text_i64(t, p->ipsets[in->c].count);
        vm_text_str(t, p->ipsets[in->c].count == 1 ? " range]" : " ranges]");
        return 1;
    case 10:
        vm_text_put(t, "[", 1);
        vm_text_i64(t, p->intsets[in->c].count);
        vm_text_str(t, p->intsets[in->c].count == 1 ? " integer]" : " integers]");
        return 1;
    case 5: {
        const vm_capt *cp = &p->capts[in->b];
        const vm_const *k = &p->consts[cp->expr];
        vm_text_regex(t, k->str, k->len, cp->flags);
        vm_text_str(t, ", ");
        vm_text_i64(t, cp->group);
        return 1;
    }
    case 6: test_text(x, at); return 1;
    case 7: call_text(x, at); return 1;
    case 8: branch_text(x, at); return 1;
    case 9: {
        uint32_t k = VM_BX(*in);
        if (k != VM_NO_REASON) {
            vm_text_put(t, " ", 1);
            vm_text_quote(t, p->consts[k].str, p->consts[k].len);
        }
        return 1;
    }
    case 11: {
        size_t n;
        const char *why = vm_sig_reason(at->ctx, &n);
        if (n) {
            vm_text_str(t, " (");
            vm_text_put(t, why, n);
            vm_text_put(t, ")", 1);
        }
        return 1;
    }
    case 12: {
        const vm_slot *S = &p->slots[in->b];
        vm_text_put(t, p->consts[S->name].str, p->consts[S->name].len);
        vm_text_put(t, "/", 1);
        vm_text_i64(t, S->param);
        vm_text_put(t, "s", 1);
        if (S->amount) {
            vm_text_str(t, " +");
            vm_text_i64(t, S->amount);
        }
        return 1;
    }
    case 13: {
        static const char *const why[] = {"", " (no store)", " (store full)", " (store busy)",
                                          " (no key: invalid address)"};
        int w = at->ctx->state_status;
        vm_text_str(t, why[w >= 0 && w <= 4 ? w : 3]);
        return 1;
    }
    default: return 0;
    }
}

static void render(explainer *x, const site *at, const char *tmpl)
{
    for (const char *s = tmpl; *s;) {
        const char *pct = strchr(s, '%');
        size_t lit = pct ? (size_t)(pct - s) : strlen(s);
        vm_text_put(&x->t, s, lit);
        s += lit;
        if (!*s) break;
        s++; /* the '%' */
        directive(x, at, &s);
    }
}

/* Describes the instruction at `at`: returns 1 with the text in x->t, or
 * 0 when it is not worth a step. */
static int describe(explainer *x, const site *at)
{
    const vm_insn *in = at->in;
    const vm_opinfo *oi = &vm_opinfo_table[in->op];
    if (x->folded == in) { /* the NOT of a != told with its comparison */
        x->folded = NULL;
        return 0;
    }
    if (!oi->explain[0]) return 0;
    if ((oi->flags & VM_OPF_CMP) && in[1].op == OP_NOT && in[1].b == in->a) {
        /* `a != b` compiles to == then NOT of the result (a comparison
         * is never a function's last instruction: the verifier wants an
         * END there): say it as written, in one step. */
        reg(&x->t, at->f, in->b, &x->b);
        vm_text_str(&x->t, " != ");
        reg(&x->t, at->f, in->c, &x->c);
        vm_text_str(&x->t, at->R[in->a].i ? " -> false" : " -> true");
        x->folded = in + 1;
        return 1;
    }
    render(x, at, oi->explain);
    return 1;
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
    site at = {ctx, f, pc, in, R};
    int said = 0;
    vm_text_init(&x->t, x->buf, sizeof x->buf);
    if (oi->flags & VM_OPF_CONTROL) {
        /* Told before it runs: afterwards the frame, or the run, is gone. */
        said = when == VM_TRACE_BEFORE && describe(x, &at);
    } else if (when == VM_TRACE_BEFORE) {
        if (reads_register((vm_operand)oi->opnd[1])) x->b = R[in->b];
        if (reads_register((vm_operand)oi->opnd[2])) x->c = R[in->c];
        /* A request test scans its subject unless it was scanned before. */
        if (oi->opnd[2] == VM_OPND_TEST) x->scans = !vm_bit_test(ctx->done, in->b);
    } else {
        said = describe(x, &at);
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
