/*
 * translate.c: the checked AST to register bytecode (cg.h): expressions,
 * conditions as jumps, statements, calls and inlining. Registers: a
 * register has one type for the whole function, as the verifier
 * requires; temporaries are reused by type once their statement is done.
 * A fn's parameters are its registers 0..n-1 (Request parameters take
 * none: there is one request).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

static int gen_expr(cg *g, ast *e);
static void gen_jump(cg *g, ast *e, int when, jlist *l);
static int gen_merged_or(cg *g, ast *e);
static int gen_block(cg *g, ast *block);

static int load_bool(cg *g, int v)
{
    int r = cg_new_reg(g, VM_T_BOOL);
    cg_emit_bx(g, OP_LOADB, (uint32_t)r, (uint32_t)v);
    return r;
}

static int gen_literal(cg *g, ast *lit)
{
    int r;
    switch (lit->kind) {
    case AST_INT:
        r = cg_new_reg(g, VM_T_INT);
        if (lit->ival >= INT32_MIN && lit->ival <= INT32_MAX)
            cg_emit_bx(g, OP_LOADI, (uint32_t)r, (uint32_t)(int32_t)lit->ival);
        else
            cg_emit_bx(g, OP_LOADKI, (uint32_t)r, cg_kint(g, lit->ival));
        return r;
    case AST_BOOL: return load_bool(g, (int)lit->ival);
    case AST_IP:
        r = cg_new_reg(g, VM_T_IP);
        cg_emit_bx(g, OP_LOADIP, (uint32_t)r, cg_kstr(g, lit->str, 16));
        return r;
    default: /* AST_STR */
        r = cg_new_reg(g, VM_T_STR);
        cg_emit_bx(g, OP_LOADK, (uint32_t)r, cg_kstr(g, lit->str, lit->slen));
        return r;
    }
}

/* The opcode of a string method on two runtime strings. */
static const vm_opcode string_ops[] = {
    [M_CONTAINS] = OP_SCONT, [M_STARTS_WITH] = OP_SSTART, [M_ENDS_WITH] = OP_SEND,
    [M_EQUALS] = OP_SEQ, [M_CONTAINS_WORD] = OP_SWORD};

/* str.method(arg) where arg is a set, regex or string. */
static int gen_string_test(cg *g, ast *call, ast *recv, int method, ast *arg)
{
    ast *lit = chk_literal(arg);
    int r;
    if (lit && lit->kind == AST_SET && !lit->a) {
        /* An empty set holds nothing, so no test on it can succeed. */
        gen_expr(g, recv);
        return load_bool(g, 0);
    }
    int constant = lit && (lit->kind == AST_SET || lit->kind == AST_REGEX || lit->kind == AST_STR);
    if (constant && lit->kind == AST_STR && lit->slen == 0 && method != M_EQUALS) {
        /* Every string contains, starts and ends with "", and no word is
         * empty. (Hyperscan would refuse the empty pattern anyway.) */
        gen_expr(g, recv);
        return load_bool(g, method != M_CONTAINS_WORD);
    }
    if (!constant || (lit->kind == AST_STR &&
                      (method == M_EQUALS || recv->origin == ORIGIN_NONE))) {
        /* A runtime argument, or one string compared with a value that is
         * not scanned anyway: a direct comparison is cheaper than a scan. */
        int a = gen_expr(g, recv), b = gen_expr(g, arg);
        r = cg_new_reg(g, VM_T_BOOL);
        g->at = call;
        cg_emit(g, string_ops[method], (uint32_t)r, (uint32_t)a, (uint32_t)b);
        return r;
    }
    if (recv->origin != ORIGIN_NONE) {
        uint32_t s = cg_subject(g, recv->origin, recv->oname);
        uint32_t t = cg_test_for(g, s, method, lit);
        r = cg_new_reg(g, VM_T_BOOL);
        g->at = call;
        cg_emit(g, OP_SCANF, (uint32_t)r, s, t);
        return r;
    }
    int v = gen_expr(g, recv);
    uint32_t s = cg_subject(g, ORIGIN_NONE, NULL);
    cg_test_for(g, s, method, lit);
    r = cg_new_reg(g, VM_T_BOOL);
    g->at = call;
    cg_emit(g, OP_SCAND, (uint32_t)r, s, (uint32_t)v);
    return r;
}

/* Emits `op A, B, C` into a new register of type t; B and C are
 * registers generated from the given nodes (c may be NULL). */
static int gen_unop(cg *g, ast *at, vm_opcode op, vm_type t, ast *b)
{
    int rb = gen_expr(g, b);
    int r = cg_new_reg(g, t);
    g->at = at;
    cg_emit(g, op, (uint32_t)r, (uint32_t)rb, 0);
    return r;
}

static int gen_binop(cg *g, ast *at, vm_opcode op, vm_type t, ast *b, ast *c)
{
    int rb = gen_expr(g, b), rc = gen_expr(g, c);
    int r = cg_new_reg(g, t);
    g->at = at;
    cg_emit(g, op, (uint32_t)r, (uint32_t)rb, (uint32_t)rc);
    return r;
}

/* s.capture(re, group): a Hyperscan test proves the match, then PCRE2
 * extracts the group (OP_CAPTURE checks the test's bit). */
static int gen_capture(cg *g, ast *e)
{
    ast *recv = e->a, *re = chk_literal(e->b), *grp = chk_literal(e->b->next);
    uint32_t s, t;
    int v, proof = cg_new_reg(g, VM_T_BOOL);
    if (recv->origin != ORIGIN_NONE) {
        s = cg_subject(g, recv->origin, recv->oname);
        t = cg_test_for(g, s, M_MATCHES, re);
        g->at = e;
        cg_emit(g, OP_SCANF, (uint32_t)proof, s, t);
        v = gen_expr(g, recv);
    } else {
        v = gen_expr(g, recv);
        s = cg_subject(g, ORIGIN_NONE, NULL);
        t = cg_test_for(g, s, M_MATCHES, re);
        g->at = e;
        cg_emit(g, OP_SCAND, (uint32_t)proof, s, (uint32_t)v);
    }
    long k = cg_capture(g, s, t, re, grp);
    int r = cg_new_reg(g, VM_T_STR);
    g->at = e;
    cg_emit(g, OP_CAPTURE, (uint32_t)r, k < 0 ? 0 : (uint32_t)k, (uint32_t)v);
    return r;
}

/* Statements in a block, nested ones included. */
static uint32_t block_size(const ast *block)
{
    uint32_t n = 0;
    for (const ast *st = block->a; st; st = st->next) {
        n++;
        if (st->kind == AST_IF) {
            n += block_size(st->b);
            if (st->c) n += st->c->kind == AST_IF ? 1 + block_size(st->c->b) : block_size(st->c);
        }
    }
    return n;
}

/* Inlining: a call to a small fn or filter is its body, generated in the
 * caller, instead of OP_CALL/OP_CALLF and OP_RET/OP_PASS: a call and a
 * return are two indirect jumps to places that change from call to call,
 * which the processor mispredicts (the interpreter's costliest
 * instructions in a profile of stdlib/default.clf), and the argument
 * moves go too. Parameters are bound to the argument registers (they
 * cannot be assigned, and the caller does not run meanwhile); locals get
 * registers of the caller. The callee is still generated on its own when
 * a call site is not inlined or a test names it. */
enum { INLINE_MAX_STATEMENTS = 16, INLINE_MAX_DEPTH = 8 };

static int inlinable(const cg *g, const sym *f)
{
    return !g->c->opts->no_inline && g->F->inline_depth < INLINE_MAX_DEPTH &&
           block_size(f->decl->b) <= INLINE_MAX_STATEMENTS;
}

/* Generates the body of `f` for the call `site` (argument list `args`):
 * returns the register of a fn's value, -1 for a filter. */
static int gen_inline(cg *g, sym *f, ast *site, ast *args)
{
    ast *p = f->decl->a;
    for (ast *a = args; a && p; a = a->next, p = p->next)
        if (p->type != T_REQUEST && p->sym) ((sym *)p->sym)->reg = gen_expr(g, a);
    jlist exits = {0};
    cg_inline in = {f->decl->kind == AST_FN ? cg_new_reg(g, cg_vm_type(f->type)) : -1, &exits};
    cg_inline *outer = g->F->inl;
    g->F->inl = &in;
    g->F->inline_depth++;
    gen_block(g, f->decl->b);
    g->F->inline_depth--;
    g->F->inl = outer;
    g->at = site;
    /* A last `return` or `pass` would jump to the next instruction:
     * drop it, unless a jump already goes to the end. */
    if (exits.n && exits.at[exits.n - 1] == g->F->ninsns - 1 && g->F->label != g->F->ninsns) {
        g->F->ninsns--;
        exits.n--;
    }
    cg_jl_patch_here(g, &exits);
    return in.result;
}

/* A call of fn `e->sym`: inlined, or the arguments go to a fresh window
 * of consecutive registers, which the callee sees as its 0..n-1. */
static int gen_fn_call(cg *g, ast *e)
{
    sym *f = e->sym;
    if (inlinable(g, f)) return gen_inline(g, f, e, e->b);
    uint32_t idx = cg_func_index(g, f);
    /* The checker allows at most CC_MAX_PARAMS parameters (check.c), and
     * the call's arguments match them one for one. */
    int vals[CC_MAX_PARAMS];
    int base = 0, n = 0;
    ast *p = f->decl->a;
    for (ast *a = e->b; a && p; a = a->next, p = p->next) {
        if (p->type == T_REQUEST) continue;
        vals[n++] = gen_expr(g, a);
    }
    for (int k = 0; k < n; k++) {
        int w = cg_new_reg_raw(g, (vm_type)g->F->regtypes[vals[k]]);
        if (k == 0) base = w;
        g->at = e;
        cg_emit_move(g, (uint32_t)w, (uint32_t)vals[k]);
    }
    int r = cg_new_reg(g, cg_vm_type(f->type));
    g->at = e;
    cg_emit(g, OP_CALL, (uint32_t)r, idx, (uint32_t)base);
    return r;
}

/* ip.net(n) / net(n4, n6): OP_IPNET with both lengths in one int, IPv4's
 * in the low byte (one argument: the same n, at most 32 for IPv4). */
static int gen_net(cg *g, ast *e)
{
    int64_t n4 = chk_literal(e->b)->ival, n6 = n4;
    if (e->b->next) n6 = chk_literal(e->b->next)->ival;
    else if (n4 > 32) n4 = 32;
    int a = gen_expr(g, e->a);
    int k = cg_new_reg(g, VM_T_INT);
    g->at = e;
    cg_emit_bx(g, OP_LOADI, (uint32_t)k, (uint32_t)(n4 | n6 << 8));
    int r = cg_new_reg(g, VM_T_IP);
    cg_emit(g, OP_IPNET, (uint32_t)r, (uint32_t)a, (uint32_t)k);
    return r;
}

/* The state slot of a checked state call: one per distinct (kind, key
 * type, name, period, amount). */
static uint32_t cg_slot(cg *g, const ast *e)
{
    int kind, keytype;
    const char *name;
    uint32_t param;
    int64_t amount;
    chk_state_slot(e, &kind, &keytype, &name, &param, &amount);
    uint32_t k = cg_kstr(g, name, (uint32_t)strlen(name));
    for (uint32_t i = 0; i < g->P.nslots; i++) {
        const vm_slot *S = &g->P.slots[i];
        if (S->kind == (uint32_t)kind && S->keytype == (uint32_t)keytype && S->name == k &&
            S->param == param && S->amount == amount)
            return i;
    }
    if (GROW(g, g->P.slots, g->P.capslots, g->P.nslots + 1)) return 0;
    g->P.slots[g->P.nslots] = (vm_slot){(uint32_t)kind, (uint32_t)keytype, k, param, amount};
    return g->P.nslots++;
}

static int gen_state(cg *g, ast *e)
{
    static const struct { int method; vm_opcode op; } ops[] = {
        {M_ST_COUNT, OP_STCOUNT}, {M_ST_COUNTED, OP_STCOUNTED}, {M_ST_SCADD, OP_STSCADD},
        {M_ST_SCORE, OP_STSCORE}, {M_ST_MARK, OP_STMARK},       {M_ST_MARKED, OP_STMARKED}};
    vm_opcode op = OP_STCOUNT;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].method == e->method) op = ops[i].op;
    int key = gen_expr(g, e->b->next);
    uint32_t slot = cg_slot(g, e);
    int r = cg_new_reg(g, op == OP_STMARK || op == OP_STMARKED ? VM_T_BOOL : VM_T_INT);
    g->at = e;
    cg_emit(g, op, (uint32_t)r, slot, (uint32_t)key);
    return r;
}

static int gen_call(cg *g, ast *e)
{
    int r;
    g->at = e;
    switch (e->method) {
    case M_FUNC: return gen_fn_call(g, e);
    case M_HEADER:
        r = cg_new_reg(g, VM_T_STR);
        cg_emit(g, OP_HEADER, (uint32_t)r, cg_header_slot(g, e->oname), 0);
        return r;
    case M_HAS_HEADER:
        r = cg_new_reg(g, VM_T_BOOL);
        cg_emit(g, OP_HASHDR, (uint32_t)r, cg_header_slot(g, e->oname), 0);
        return r;
    case M_COOKIE: {
        uint32_t slot = cg_header_slot(g, "cookie");
        int name = gen_expr(g, e->b);
        r = cg_new_reg(g, VM_T_STR);
        g->at = e;
        cg_emit(g, OP_COOKIE, (uint32_t)r, slot, (uint32_t)name);
        return r;
    }
    case M_QUERY_PARAM: return gen_unop(g, e, OP_QPARAM, VM_T_STR, e->b);
    case M_LEN: return gen_unop(g, e, OP_SLEN, VM_T_INT, e->a);
    case M_LOWER: return gen_unop(g, e, OP_SLOWER, VM_T_STR, e->a);
    case M_TRIM: return gen_unop(g, e, OP_STRIM, VM_T_STR, e->a);
    case M_TO_INT: return gen_unop(g, e, OP_TOINT, VM_T_INT, e->a);
    case M_TO_IP: return gen_unop(g, e, OP_TOIP, VM_T_IP, e->a);
    case M_VALID: return gen_unop(g, e, OP_IPVALID, VM_T_BOOL, e->a);
    case M_ASN: return gen_unop(g, e, OP_IPASN, VM_T_INT, e->a);
    case M_ASN_ORG: return gen_unop(g, e, OP_IPORG, VM_T_STR, e->a);
    case M_COUNTRY: return gen_unop(g, e, OP_IPCC, VM_T_STR, e->a);
    case M_INDEX_OF: return gen_binop(g, e, OP_SINDEX, VM_T_INT, e->a, e->b);
    case M_SUBSTR: {
        int dropped = gen_binop(g, e, OP_SDROP, VM_T_STR, e->a, e->b);
        int n = gen_expr(g, e->b->next);
        r = cg_new_reg(g, VM_T_STR);
        g->at = e;
        cg_emit(g, OP_STAKE, (uint32_t)r, (uint32_t)dropped, (uint32_t)n);
        return r;
    }
    case M_CAPTURE: return gen_capture(g, e);
    case M_NET: return gen_net(g, e);
    case M_ST_COUNT: case M_ST_COUNTED: case M_ST_SCADD: case M_ST_SCORE:
    case M_ST_MARK: case M_ST_MARKED:
        return gen_state(g, e);
    default:
        return gen_string_test(g, e, e->a, e->method, e->b);
    }
}

static int gen_compare(cg *g, ast *e)
{
    if (e->kind == AST_IN && e->a->type == T_IP) {
        int a = gen_expr(g, e->a);
        int r = cg_new_reg(g, VM_T_BOOL);
        g->at = e;
        cg_emit(g, OP_IPIN, (uint32_t)r, (uint32_t)a, cg_ipset(g, chk_literal(e->b)));
        return r;
    }
    if (e->kind == AST_IN && e->a->type == T_INT) {
        int a = gen_expr(g, e->a);
        int r = cg_new_reg(g, VM_T_BOOL);
        g->at = e;
        cg_emit(g, OP_INTIN, (uint32_t)r, (uint32_t)a, cg_intset(g, chk_literal(e->b)));
        return r;
    }
    if (e->kind == AST_IN) return gen_string_test(g, e, e->a, M_EQUALS, e->b);
    ast *x = e->a, *y = e->b;
    if (e->kind == AST_GT || e->kind == AST_GE) { /* a > b  is  b < a */
        x = e->b;
        y = e->a;
    }
    int a = gen_expr(g, x), b = gen_expr(g, y);
    int r = cg_new_reg(g, VM_T_BOOL);
    g->at = e;
    vm_opcode op;
    switch (e->kind) {
    case AST_LT: case AST_GT: op = OP_ILT; break;
    case AST_LE: case AST_GE: op = OP_ILE; break;
    default:
        op = e->a->type == T_STR ? OP_SEQ : e->a->type == T_INT ? OP_IEQ
             : e->a->type == T_IP ? OP_PEQ : OP_BEQ;
        break;
    }
    cg_emit(g, op, (uint32_t)r, (uint32_t)a, (uint32_t)b);
    if (e->kind == AST_NE) cg_emit(g, OP_NOT, (uint32_t)r, (uint32_t)r, 0);
    return r;
}

/* `req.NAME` (compile.h, cc_request_fields). */
static int gen_request_field(cg *g, ast *e)
{
    /* The forwarding headers the client address is derived from: read by
     * req.client_ip, and kept for the host of a program that reads the
     * reverse DNS of that address (clf_ctx_client_ip tells it which). */
    uint32_t xff = 0, xrip = 0;
    if (e->field == RF_CLIENT_IP || e->field == RF_RDNS || e->field == RF_RDNS_CHECKED) {
        xff = cg_header_slot(g, "x-forwarded-for");
        xrip = cg_header_slot(g, "x-real-ip");
    }
    g->at = e;
    int r;
    switch (e->field) {
    case RF_CLIENT_IP:
        r = cg_new_reg(g, VM_T_IP);
        cg_emit(g, OP_CLIENTIP, (uint32_t)r, xff, xrip);
        return r;
    case RF_RDNS_CHECKED:
        r = cg_new_reg(g, VM_T_BOOL);
        cg_emit(g, OP_RDNSCHK, (uint32_t)r, 0, 0);
        return r;
    case RF_SIGNATURE_STATUS:
    case RF_SIGNATURE_AGENT:
    case RF_SIGNATURE_KEYID: { /* verified on the first read (vm/sigctx.c) */
        static const int ops[] = {[RF_SIGNATURE_STATUS] = OP_SIGSTATUS,
                                  [RF_SIGNATURE_AGENT] = OP_SIGAGENT,
                                  [RF_SIGNATURE_KEYID] = OP_SIGKEYID};
        r = cg_new_reg(g, VM_T_STR);
        cg_emit(g, ops[e->field], (uint32_t)r, 0, 0);
        return r;
    }
    default: { /* the str fields the context holds */
        static const uint32_t fields[] = {[RF_METHOD] = VM_FIELD_METHOD, [RF_PATH] = VM_FIELD_PATH,
                                          [RF_QUERY] = VM_FIELD_QUERY, [RF_RDNS] = VM_FIELD_RDNS};
        r = cg_new_reg(g, VM_T_STR);
        cg_emit(g, OP_FIELD, (uint32_t)r, fields[e->field], 0);
        return r;
    }
    }
}

static int gen_expr(cg *g, ast *e)
{
    g->at = e;
    switch (e->kind) {
    case AST_INT: case AST_BOOL: case AST_STR: case AST_IP: return gen_literal(g, e);
    case AST_NEG: return gen_unop(g, e, OP_INEG, VM_T_INT, e->a);
    case AST_ADD: return gen_binop(g, e, OP_IADD, VM_T_INT, e->a, e->b);
    case AST_SUB: return gen_binop(g, e, OP_ISUB, VM_T_INT, e->a, e->b);
    case AST_MUL: return gen_binop(g, e, OP_IMUL, VM_T_INT, e->a, e->b);
    case AST_DIV: return gen_binop(g, e, OP_IDIV, VM_T_INT, e->a, e->b);
    case AST_MOD: return gen_binop(g, e, OP_IMOD, VM_T_INT, e->a, e->b);
    case AST_NAME:
    case AST_MEMBER: {
        sym *s = e->sym;
        if (s && (s->kind == SYM_LOCAL || s->kind == SYM_PARAM)) return s->reg;
        if (s && s->kind == SYM_CONST) return gen_literal(g, s->decl->a);
        return gen_request_field(g, e);
    }
    case AST_CALL: return gen_call(g, e);
    case AST_NOT: {
        int a = gen_expr(g, e->a);
        int r = cg_new_reg(g, VM_T_BOOL);
        g->at = e;
        cg_emit(g, OP_NOT, (uint32_t)r, (uint32_t)a, 0);
        return r;
    }
    case AST_OR:
        if (cg_cond_field(e)) return gen_merged_or(g, e);
        /* fall through */
    case AST_AND: {
        /* r := (e); through jumps, so the right side is skipped when the
         * left decides. r is written before the jumps, so it is defined on
         * every path, as the verifier checks. */
        int r = load_bool(g, e->kind == AST_OR);
        jlist done = {0};
        gen_jump(g, e, e->kind == AST_OR, &done);
        g->at = e;
        cg_emit_bx(g, OP_LOADB, (uint32_t)r, e->kind != AST_OR);
        cg_jl_patch_here(g, &done);
        return r;
    }
    default: return gen_compare(g, e);
    }
}

/* Emits a chain of || (flattened once, so that a chain of n operands
 * costs O(n) time and memory, however deep it nests on the left: the
 * chain is never flattened again from one of its inner || nodes). A run
 * of neighbouring scans of one request field is one merged test
 * (lower.c, cg_merged_test); the other operands are emitted one by one,
 * as short-circuit jumps. */
static void gen_jump_or(cg *g, ast *e, int when, jlist *l)
{
    uint32_t n = cg_or_operands(e, NULL, 0, 0);
    ast **ops = arena_alloc(g->c->ar, n * sizeof *ops);
    if (!ops) {
        g->failed = 1;
        return;
    }
    cg_or_operands(e, ops, 0, n);
    int m, m2;
    ast *k, *k2, *recv, *recv2;
    /* Jump when true: each operand jumps on true. Jump when false: each
     * but the last skips past on true; the last jumps on false. A run of
     * scans of one field is one merged test (lower.c). */
    jlist skip = {0};
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        recv = cg_field_scan(ops[i], &m, &k);
        while (recv && j < n && (recv2 = cg_field_scan(ops[j], &m2, &k2)) && cg_same_field(recv, recv2))
            j++;
        int last = j == n;
        jlist *to = when || !last ? (when ? l : &skip) : l;
        int on = when || !last;
        if (j == i + 1) {
            gen_jump(g, ops[i], on, to);
        } else {
            uint32_t s, t = cg_merged_test(g, ops + i, j - i, &s);
            int r = cg_new_reg(g, VM_T_BOOL);
            g->at = ops[i];
            cg_emit(g, OP_SCANF, (uint32_t)r, s, t);
            cg_jl_add(g, to, cg_emit_bx(g, on ? OP_JMPT : OP_JMPF, (uint32_t)r, 0));
        }
        i = j;
    }
    cg_jl_patch_here(g, &skip);
}

/* Emits code that jumps to the list when `e` evaluates to `when`, and
 * falls through otherwise. && and || short-circuit here. */
static void gen_jump(cg *g, ast *e, int when, jlist *l)
{
    switch (e->kind) {
    case AST_NOT: gen_jump(g, e->a, !when, l); return;
    case AST_BOOL:
        g->at = e;
        if ((e->ival != 0) == when) cg_jl_add(g, l, cg_emit_bx(g, OP_JMP, 0, 0));
        return;
    case AST_OR: gen_jump_or(g, e, when, l); return;
    case AST_AND:
        /* The left side being false decides the whole: a jump when `when`
         * is false, a skip past the right side otherwise. */
        if (!when) {
            gen_jump(g, e->a, 0, l);
            gen_jump(g, e->b, 0, l);
        } else {
            jlist skip = {0};
            gen_jump(g, e->a, 0, &skip);
            gen_jump(g, e->b, 1, l);
            cg_jl_patch_here(g, &skip);
        }
        return;
    default: {
        int r = gen_expr(g, e);
        g->at = e;
        cg_jl_add(g, l, cg_emit_bx(g, when ? OP_JMPT : OP_JMPF, (uint32_t)r, 0));
        return;
    }
    }
}

/* Returns 1 when the statement always ends the function. */
static int gen_stmt(cg *g, ast *s)
{
    switch (s->kind) {
    case AST_LET: {
        uint32_t mark = g->F->ntemps;
        sym *y = s->sym;
        int r = gen_expr(g, s->a);
        const sym *src = s->a->kind == AST_NAME ? s->a->sym : NULL;
        if ((s->flags & AST_F_MUT) || (src && src->kind == SYM_LOCAL && src->mut)) {
            /* A register another name may change, or that this name will
             * change, is not shared: copy. */
            int d = cg_new_reg_raw(g, (vm_type)g->F->regtypes[r]);
            g->at = s;
            cg_emit_move(g, (uint32_t)d, (uint32_t)r);
            r = d;
        }
        /* The local keeps its register (an immutable local bound to
         * another may share it); the rest of the expression's registers
         * are free again. */
        cg_release_temps(g, mark, r);
        y->reg = r;
        return 0;
    }
    case AST_ASSIGN: {
        uint32_t mark = g->F->ntemps;
        sym *y = s->sym;
        int r = gen_expr(g, s->a);
        g->at = s;
        if (s->ival) { /* += and -= */
            int t = cg_new_reg(g, VM_T_INT);
            cg_emit(g, s->ival == AST_ADD ? OP_IADD : OP_ISUB, (uint32_t)t, (uint32_t)y->reg,
                 (uint32_t)r);
            r = t;
        }
        cg_emit_move(g, (uint32_t)y->reg, (uint32_t)r);
        cg_release_temps(g, mark, -1);
        return 0;
    }
    case AST_ACCEPT:
    case AST_REJECT:
        g->at = s;
        cg_emit_bx(g, s->kind == AST_ACCEPT ? OP_ACCEPT : OP_REJECT, 0,
                s->a ? cg_kstr(g, s->a->str, s->a->slen) : VM_NO_REASON);
        return 1;
    case AST_PASS:
        g->at = s;
        if (g->F->inl) cg_jl_add(g, g->F->inl->exits, cg_emit_bx(g, OP_JMP, 0, 0));
        else cg_emit(g, OP_PASS, 0, 0, 0);
        return 1;
    case AST_RETURN: {
        uint32_t mark = g->F->ntemps;
        int r = gen_expr(g, s->a);
        g->at = s;
        if (g->F->inl) {
            cg_emit_move(g, (uint32_t)g->F->inl->result, (uint32_t)r);
            cg_jl_add(g, g->F->inl->exits, cg_emit_bx(g, OP_JMP, 0, 0));
        } else {
            cg_emit(g, OP_RET, (uint32_t)r, 0, 0);
        }
        cg_release_temps(g, mark, -1);
        return 1;
    }
    case AST_EXPRSTMT: {
        if (s->a->method >= M_ST_COUNT && s->a->method <= M_ST_MARKED) {
            uint32_t mark = g->F->ntemps;
            gen_expr(g, s->a);
            cg_release_temps(g, mark, -1);
            return 0;
        }
        sym *callee = s->a->sym;
        if (inlinable(g, callee)) {
            gen_inline(g, callee, s, s->a->b);
            return 0;
        }
        uint32_t f = cg_func_index(g, callee);
        g->at = s;
        cg_emit(g, OP_CALLF, 0, f, 0);
        return 0;
    }
    case AST_IF: {
        jlist els = {0}, end = {0};
        uint32_t mark = g->F->ntemps;
        gen_jump(g, s->a, 0, &els);
        cg_release_temps(g, mark, -1); /* the condition is decided: its registers are dead */
        int then_ends = gen_block(g, s->b);
        if (!s->c) {
            cg_jl_patch_here(g, &els);
            return 0;
        }
        if (!then_ends) {
            g->at = s;
            cg_jl_add(g, &end, cg_emit_bx(g, OP_JMP, 0, 0));
        }
        cg_jl_patch_here(g, &els);
        int else_ends = s->c->kind == AST_IF ? gen_stmt(g, s->c) : gen_block(g, s->c);
        cg_jl_patch_here(g, &end);
        return then_ends && else_ends;
    }
    default: return 0;
    }
}

/* An || of scans of one request field, as a value: one merged test (see
 * gen_jump_or), one OP_SCANF, no jumps. */
static int gen_merged_or(cg *g, ast *e)
{
    uint32_t s, t = cg_merged_cond_test(g, e, &s);
    int r = cg_new_reg(g, VM_T_BOOL);
    g->at = e;
    cg_emit(g, OP_SCANF, (uint32_t)r, s, t);
    return r;
}

static int gen_block(cg *g, ast *block)
{
    int ends = 0;
    for (ast *s = block->a; s && !ends;) {
        /* A chain guard (lower.c): one test for a run of ifs on one
         * field, and one jump past the run when it fails. */
        uint32_t subj, t;
        ast *end;
        if (!cg_guard_run(g, s, &end, &t, &subj)) {
            ends = gen_stmt(g, s);
            s = s->next;
            continue;
        }
        int r = cg_new_reg(g, VM_T_BOOL);
        jlist skip = {0};
        g->at = s->a;
        cg_emit(g, OP_SCANF, (uint32_t)r, subj, t);
        cg_jl_add(g, &skip, cg_emit_bx(g, OP_JMPF, (uint32_t)r, 0));
        for (; s != end; s = s->next) gen_stmt(g, s); /* an if without else never ends */
        cg_jl_patch_here(g, &skip);
    }
    return ends;
}

void cg_translate_function(cg *g, sym *f)
{
    ast *d = f->decl;
    cg_func F;
    cg_func_begin(g, &F, f, d);
    uint32_t nparams = 0;
    for (ast *p = d->a; p; p = p->next) {
        sym *y = p->sym;
        if (!y || p->type == T_REQUEST) continue;
        y->reg = cg_new_reg_raw(g, cg_vm_type(p->type));
        nparams++;
    }
    if (!gen_block(g, d->b)) {
        /* Only a filter other than main gets here (the checker saw to
         * it): reaching its end means it passes. */
        g->at = d;
        cg_emit(g, d->kind == AST_FN ? OP_RET : OP_PASS, 0, 0, 0);
    }
    vm_func fn = {cg_kstr(g, d->str, d->slen), d->kind == AST_FN ? VM_FUNC_FN : VM_FUNC_FILTER,
                  (uint8_t)nparams, /* at most CC_MAX_PARAMS: the checker saw to it */
                  d->kind == AST_FN ? (uint8_t)cg_vm_type(f->type) : 0,
                  0, 0, NULL, NULL, NULL, 0};
    /* A filter of the compiled file is a root, and an entry a host may
     * run for a verdict when it decides on every path (check.c). */
    if (d->kind == AST_FILTER && f->mod == g->c->main)
        fn.flags = VM_FUNC_ROOT | (f->decides ? VM_FUNC_ENTRY : 0);
    cg_func_end(g, &fn);
}
