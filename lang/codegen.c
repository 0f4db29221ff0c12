/*
 * codegen.c: lowers checked filters to register bytecode (vm/opcodes.def)
 * and string sets and regexes to Hyperscan patterns, then builds the
 * databases and serializes the program (vm/write.c).
 *
 * Pattern lowering. Every pattern test on a value read from the request
 * (req.path, req.header("user-agent"), or a local bound to one) joins the
 * subject of that request field: one Hyperscan database per field, with
 * one match id per test, scanned at most once per request on first use.
 * A test is then a bit lookup (OP_SCANF). A test on a computed value
 * (say ua.lower()) gets a database of its own, scanned when reached
 * (OP_SCAND). A string-set element becomes a literal expression (each
 * byte outside [A-Za-z0-9] escaped as \xHH) wrapped for the method:
 *
 *   contains        LIT
 *   starts_with     ^LIT
 *   ends_with       LIT\z
 *   equals, in      ^LIT\z
 *   contains_word   B LIT B, where B is \b next to a word character
 *                   and \B next to a non-word one: both mean "no word
 *                   character [A-Za-z0-9_] on this side"
 *
 * Registers are never reused: a register has one type for the whole
 * function, as the verifier requires, and filters are small.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "program.h"
#include "strmap.h"

typedef struct jlist {
    uint32_t *at;
    uint32_t n, cap;
} jlist;

typedef struct test_key {
    uint32_t subject;
    int method;
    const ast *lit; /* the set, regex or string literal */
    uint32_t test;
} test_key;

typedef struct cg {
    compilation *c;
    int failed; /* out of memory */
    /* The program being built. */
    vm_const *consts;
    uint32_t nconsts, capconsts;
    strmap kstr;  /* string constant -> index */
    vm_func *funcs;
    uint32_t nfuncs;
    uint32_t *hdrs;
    uint32_t nhdrs, caphdrs;
    vm_subject *subjects;
    uint32_t nsubjects, capsubjects;
    vm_pattern *patterns;
    uint32_t npatterns, cappatterns, cappnode;
    const ast **pattern_node; /* the literal each pattern came from */
    test_key *tests;
    uint32_t ntests, captests;
    /* The function being built. */
    vm_insn *code;
    vm_pos *pos;
    uint32_t ninsns, capinsns, cappos;
    uint8_t *regtypes;
    uint32_t nregs, capregs;
    /* Temporaries: registers allocated for the statement being generated,
     * returned to a per-type free list when it is done. A register keeps
     * one type for the whole function (the verifier checks that), so reuse
     * is by type. */
    uint32_t *temps;
    uint32_t ntemps, captemps;
    uint32_t *freeregs[4];
    uint32_t nfree[4], capfree[4];
    const ast *at; /* node whose position new instructions get */
    int regs_reported, patterns_reported;
    uint32_t pos_file, pos_file_k; /* file of the last position, its constant */
} cg;

static int grow(cg *g, void **p, uint32_t *cap, uint32_t need, size_t each)
{
    if (need <= *cap) return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * each);
    if (!q) {
        g->failed = 1;
        return -1;
    }
    *p = q;
    *cap = c;
    return 0;
}
#define GROW(g, arr, cap, need) grow((g), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* ---- constants ---- */

static uint32_t k_str(cg *g, const char *s, uint32_t len)
{
    uint32_t k = strmap_get(&g->kstr, s, len);
    if (k != STRMAP_NONE) return k;
    if (GROW(g, g->consts, g->capconsts, g->nconsts + 1)) return 0;
    char *d = arena_strndup(g->c->ar, s, len);
    if (!d || strmap_put(&g->kstr, d, len, g->nconsts)) {
        g->failed = 1;
        return 0;
    }
    g->consts[g->nconsts] = (vm_const){VM_K_STR, len, d, 0};
    return g->nconsts++;
}

static uint32_t k_int(cg *g, int64_t v)
{
    for (uint32_t i = 0; i < g->nconsts; i++)
        if (g->consts[i].kind == VM_K_INT && g->consts[i].i == v) return i;
    if (GROW(g, g->consts, g->capconsts, g->nconsts + 1)) return 0;
    g->consts[g->nconsts] = (vm_const){VM_K_INT, 0, NULL, v};
    return g->nconsts++;
}

/* ---- instructions ---- */

static vm_pos position(cg *g, const ast *n)
{
    src_file *f = &g->c->src->files[n->file];
    uint32_t line, col;
    src_linecol(f, n->off, &line, &col);
    if (n->file != g->pos_file) { /* the file name's constant, cached */
        g->pos_file = n->file;
        g->pos_file_k = k_str(g, f->path, (uint32_t)strlen(f->path));
    }
    return (vm_pos){g->pos_file_k, line, col};
}

static uint32_t emit(cg *g, vm_opcode op, uint32_t a, uint32_t b, uint32_t c)
{
    if (GROW(g, g->code, g->capinsns, g->ninsns + 1)) return 0;
    if (GROW(g, g->pos, g->cappos, g->ninsns + 1)) return 0;
    g->code[g->ninsns] = (vm_insn){(uint8_t)op, 0, (uint16_t)a, (uint16_t)b, (uint16_t)c};
    g->pos[g->ninsns] = position(g, g->at);
    return g->ninsns++;
}

static uint32_t emit_bx(cg *g, vm_opcode op, uint32_t a, uint32_t bx)
{
    return emit(g, op, a, bx & 0xffff, bx >> 16);
}

static int new_reg_raw(cg *g, vm_type t);

static int new_reg(cg *g, vm_type t)
{
    int r;
    if (g->nfree[t]) r = (int)g->freeregs[t][--g->nfree[t]];
    else r = new_reg_raw(g, t);
    if (GROW(g, g->temps, g->captemps, g->ntemps + 1)) return r;
    g->temps[g->ntemps++] = (uint32_t)r;
    return r;
}

/* Returns the temporaries allocated since `mark` to the free lists,
 * except `keep` (a value that outlives the statement, or -1). */
static void release_temps(cg *g, uint32_t mark, int keep)
{
    for (uint32_t i = mark; i < g->ntemps; i++) {
        uint32_t r = g->temps[i];
        if ((int)r == keep) continue;
        uint8_t t = g->regtypes[r];
        if (GROW(g, g->freeregs[t], g->capfree[t], g->nfree[t] + 1)) continue;
        g->freeregs[t][g->nfree[t]++] = r;
    }
    g->ntemps = mark;
}

static int new_reg_raw(cg *g, vm_type t)
{
    unsigned max = g->c->opts->max_registers ? g->c->opts->max_registers : 65535;
    if (g->nregs >= max) {
        if (!g->regs_reported) {
            src_error(g->c->src, g->at->file, g->at->off,
                      "the filter needs more than %u registers (classifyc --max-registers)", max);
            g->regs_reported = 1;
        }
        return 0;
    }
    if (GROW(g, g->regtypes, g->capregs, g->nregs + 1)) return 0;
    g->regtypes[g->nregs] = (uint8_t)t;
    return (int)g->nregs++;
}

static void jl_add(cg *g, jlist *l, uint32_t at)
{
    if (GROW(g, l->at, l->cap, l->n + 1)) return;
    l->at[l->n++] = at;
}

/* Points every jump in `l` at the next instruction to be emitted. */
static void jl_patch_here(cg *g, jlist *l)
{
    for (uint32_t i = 0; i < l->n; i++) {
        vm_insn *in = &g->code[l->at[i]];
        uint32_t off = g->ninsns - l->at[i] - 1;
        in->b = (uint16_t)(off & 0xffff);
        in->c = (uint16_t)(off >> 16);
    }
    free(l->at);
    *l = (jlist){0};
}

/* ---- subjects, tests and patterns ---- */

static uint32_t header_slot(cg *g, const char *lname)
{
    uint32_t k = k_str(g, lname, (uint32_t)strlen(lname));
    for (uint32_t i = 0; i < g->nhdrs; i++)
        if (g->hdrs[i] == k) return i;
    if (GROW(g, g->hdrs, g->caphdrs, g->nhdrs + 1)) return 0;
    g->hdrs[g->nhdrs] = k;
    return g->nhdrs++;
}

/* The subject for a value of the given origin; dynamic values (origin
 * NONE) always get a new one. */
static uint32_t subject_for(cg *g, int origin, const char *oname)
{
    uint32_t kind = 0, hdr = 0;
    switch (origin) {
    case ORIGIN_METHOD: kind = VM_SUBJ_METHOD; break;
    case ORIGIN_PATH: kind = VM_SUBJ_PATH; break;
    case ORIGIN_QUERY: kind = VM_SUBJ_QUERY; break;
    case ORIGIN_HEADER: kind = VM_SUBJ_HEADER; hdr = header_slot(g, oname); break;
    default: kind = VM_SUBJ_DYNAMIC; break;
    }
    if (kind != VM_SUBJ_DYNAMIC)
        for (uint32_t i = 0; i < g->nsubjects; i++)
            if (g->subjects[i].kind == kind && g->subjects[i].hdr == hdr) return i;
    if (g->nsubjects == 65535) {
        src_error(g->c->src, g->at->file, g->at->off, "more than 65535 pattern subjects");
        return 0;
    }
    if (GROW(g, g->subjects, g->capsubjects, g->nsubjects + 1)) return 0;
    g->subjects[g->nsubjects] = (vm_subject){kind, hdr, 0, 0, 0, NULL, NULL, 0};
    return g->nsubjects++;
}

static void add_pattern(cg *g, uint32_t subject, uint32_t test, const char *expr,
                        uint32_t flags, const ast *lit)
{
    unsigned max = g->c->opts->max_patterns ? g->c->opts->max_patterns : UINT_MAX;
    if (g->npatterns >= max) {
        if (!g->patterns_reported)
            src_error(g->c->src, lit->file, lit->off,
                      "the program needs more than %u patterns (classifyc --max-patterns)", max);
        g->patterns_reported = 1;
        return;
    }
    if (GROW(g, g->patterns, g->cappatterns, g->npatterns + 1)) return;
    if (GROW(g, g->pattern_node, g->cappnode, g->npatterns + 1)) return;
    g->pattern_node[g->npatterns] = lit;
    g->patterns[g->npatterns++] =
        (vm_pattern){subject, test, flags, k_str(g, expr, (uint32_t)strlen(expr))};
}

static int is_word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Builds the Hyperscan expression for one literal under `method`. */
static char *literal_expr(cg *g, int method, const char *s, uint32_t n)
{
    char *d = arena_alloc(g->c->ar, (size_t)n * 4 + 16);
    if (!d) {
        g->failed = 1;
        return NULL;
    }
    char *o = d;
    if (method == M_STARTS_WITH || method == M_EQUALS) *o++ = '^';
    if (method == M_CONTAINS_WORD) o += sprintf(o, is_word_byte((unsigned char)s[0]) ? "\\b" : "\\B");
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            *o++ = (char)c;
        else
            o += sprintf(o, "\\x%02x", c);
    }
    if (method == M_CONTAINS_WORD)
        o += sprintf(o, is_word_byte((unsigned char)s[n - 1]) ? "\\b" : "\\B");
    if (method == M_ENDS_WITH || method == M_EQUALS) o += sprintf(o, "\\z");
    *o = 0;
    return d;
}

/* Returns the test id answering `method(lit)` on `subject`, adding the
 * test and its patterns on first use. */
static uint32_t test_for(cg *g, uint32_t subject, int method, const ast *lit)
{
    for (uint32_t i = 0; i < g->ntests; i++)
        if (g->tests[i].subject == subject && g->tests[i].method == method &&
            g->tests[i].lit == lit)
            return g->tests[i].test;
    if (g->subjects[subject].ntests == 65535) {
        if (!g->failed)
            src_error(g->c->src, lit->file, lit->off,
                      "more than 65535 pattern tests on one request field");
        return 0;
    }
    uint32_t test = g->subjects[subject].ntests++;
    if (GROW(g, g->tests, g->captests, g->ntests + 1)) return 0;
    g->tests[g->ntests++] = (test_key){subject, method, lit, test};
    const uint32_t single = HS_FLAG_SINGLEMATCH;
    if (lit->kind == AST_REGEX) {
        uint32_t f = single | HS_FLAG_ALLOWEMPTY;
        if (lit->flags & AST_F_CASELESS) f |= HS_FLAG_CASELESS;
        if (lit->flags & AST_F_DOTALL) f |= HS_FLAG_DOTALL;
        if (lit->flags & AST_F_MULTILINE) f |= HS_FLAG_MULTILINE;
        add_pattern(g, subject, test, lit->str, f, lit);
    } else if (lit->kind == AST_SET) {
        uint32_t f = single | (lit->flags & AST_F_CASELESS ? HS_FLAG_CASELESS : 0);
        for (const ast *el = lit->a; el; el = el->next) {
            char *e = literal_expr(g, method, el->str, el->slen);
            if (e) add_pattern(g, subject, test, e, f, el);
        }
    } else { /* a single string */
        char *e = literal_expr(g, method, lit->str, lit->slen);
        if (e) add_pattern(g, subject, test, e, single, lit);
    }
    return test;
}

/* ---- expressions ---- */

static int gen_expr(cg *g, ast *e);
static void gen_jump(cg *g, ast *e, int when, jlist *l);

static int load_bool(cg *g, int v)
{
    int r = new_reg(g, VM_T_BOOL);
    emit_bx(g, OP_LOADB, (uint32_t)r, (uint32_t)v);
    return r;
}

static int gen_literal(cg *g, ast *lit)
{
    int r;
    switch (lit->kind) {
    case AST_INT:
        r = new_reg(g, VM_T_INT);
        if (lit->ival >= INT32_MIN && lit->ival <= INT32_MAX)
            emit_bx(g, OP_LOADI, (uint32_t)r, (uint32_t)(int32_t)lit->ival);
        else
            emit_bx(g, OP_LOADKI, (uint32_t)r, k_int(g, lit->ival));
        return r;
    case AST_BOOL: return load_bool(g, (int)lit->ival);
    default: /* AST_STR */
        r = new_reg(g, VM_T_STR);
        emit_bx(g, OP_LOADK, (uint32_t)r, k_str(g, lit->str, lit->slen));
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
        r = new_reg(g, VM_T_BOOL);
        g->at = call;
        emit(g, string_ops[method], (uint32_t)r, (uint32_t)a, (uint32_t)b);
        return r;
    }
    if (recv->origin != ORIGIN_NONE) {
        uint32_t s = subject_for(g, recv->origin, recv->oname);
        uint32_t t = test_for(g, s, method, lit);
        r = new_reg(g, VM_T_BOOL);
        g->at = call;
        emit(g, OP_SCANF, (uint32_t)r, s, t);
        return r;
    }
    int v = gen_expr(g, recv);
    uint32_t s = subject_for(g, ORIGIN_NONE, NULL);
    test_for(g, s, method, lit);
    r = new_reg(g, VM_T_BOOL);
    g->at = call;
    emit(g, OP_SCAND, (uint32_t)r, s, (uint32_t)v);
    return r;
}

static int gen_call(cg *g, ast *e)
{
    int r, a;
    g->at = e;
    switch (e->method) {
    case M_HEADER:
        r = new_reg(g, VM_T_STR);
        emit(g, OP_HEADER, (uint32_t)r, header_slot(g, e->oname), 0);
        return r;
    case M_HAS_HEADER:
        r = new_reg(g, VM_T_BOOL);
        emit(g, OP_HASHDR, (uint32_t)r, header_slot(g, e->oname), 0);
        return r;
    case M_LEN:
        a = gen_expr(g, e->a);
        r = new_reg(g, VM_T_INT);
        g->at = e;
        emit(g, OP_SLEN, (uint32_t)r, (uint32_t)a, 0);
        return r;
    case M_LOWER:
        a = gen_expr(g, e->a);
        r = new_reg(g, VM_T_STR);
        g->at = e;
        emit(g, OP_SLOWER, (uint32_t)r, (uint32_t)a, 0);
        return r;
    default:
        return gen_string_test(g, e, e->a, e->method, e->b);
    }
}

static int gen_compare(cg *g, ast *e)
{
    if (e->kind == AST_IN) return gen_string_test(g, e, e->a, M_EQUALS, e->b);
    ast *x = e->a, *y = e->b;
    if (e->kind == AST_GT || e->kind == AST_GE) { /* a > b  is  b < a */
        x = e->b;
        y = e->a;
    }
    int a = gen_expr(g, x), b = gen_expr(g, y);
    int r = new_reg(g, VM_T_BOOL);
    g->at = e;
    vm_opcode op;
    switch (e->kind) {
    case AST_LT: case AST_GT: op = OP_ILT; break;
    case AST_LE: case AST_GE: op = OP_ILE; break;
    default:
        op = e->a->type == T_STR ? OP_SEQ : e->a->type == T_INT ? OP_IEQ : OP_BEQ;
        break;
    }
    emit(g, op, (uint32_t)r, (uint32_t)a, (uint32_t)b);
    if (e->kind == AST_NE) emit(g, OP_NOT, (uint32_t)r, (uint32_t)r, 0);
    return r;
}

static int gen_expr(cg *g, ast *e)
{
    g->at = e;
    switch (e->kind) {
    case AST_INT: case AST_BOOL: case AST_STR: return gen_literal(g, e);
    case AST_NAME:
    case AST_MEMBER: {
        sym *s = e->sym;
        if (s && s->kind == SYM_LOCAL) return s->reg;
        if (s && s->kind == SYM_CONST) return gen_literal(g, s->decl->a);
        /* req.method, req.path, req.query */
        int r = new_reg(g, VM_T_STR);
        emit(g, OP_FIELD, (uint32_t)r, (uint32_t)(e->origin - ORIGIN_METHOD), 0);
        return r;
    }
    case AST_CALL: return gen_call(g, e);
    case AST_NOT: {
        int a = gen_expr(g, e->a);
        int r = new_reg(g, VM_T_BOOL);
        g->at = e;
        emit(g, OP_NOT, (uint32_t)r, (uint32_t)a, 0);
        return r;
    }
    case AST_AND:
    case AST_OR: {
        /* r := (e); through jumps, so the right side is skipped when the
         * left decides. r is written before the jumps, so it is defined on
         * every path, as the verifier checks. */
        int r = load_bool(g, e->kind == AST_OR);
        jlist done = {0};
        gen_jump(g, e, e->kind == AST_OR, &done);
        g->at = e;
        emit_bx(g, OP_LOADB, (uint32_t)r, e->kind != AST_OR);
        jl_patch_here(g, &done);
        return r;
    }
    default: return gen_compare(g, e);
    }
}

/* Emits code that jumps to the list when `e` evaluates to `when`, and
 * falls through otherwise. && and || short-circuit here. */
static void gen_jump(cg *g, ast *e, int when, jlist *l)
{
    switch (e->kind) {
    case AST_NOT: gen_jump(g, e->a, !when, l); return;
    case AST_BOOL:
        g->at = e;
        if ((e->ival != 0) == when) jl_add(g, l, emit_bx(g, OP_JMP, 0, 0));
        return;
    case AST_AND:
    case AST_OR: {
        /* For &&, the left side being false decides the whole (a jump
         * when `when` is false, a skip otherwise); || is the mirror. */
        int decisive = e->kind == AST_OR;
        if (when == decisive) {
            gen_jump(g, e->a, when, l);
            gen_jump(g, e->b, when, l);
        } else {
            jlist skip = {0};
            gen_jump(g, e->a, decisive, &skip);
            gen_jump(g, e->b, when, l);
            jl_patch_here(g, &skip);
        }
        return;
    }
    default: {
        int r = gen_expr(g, e);
        g->at = e;
        jl_add(g, l, emit_bx(g, when ? OP_JMPT : OP_JMPF, (uint32_t)r, 0));
        return;
    }
    }
}

/* ---- statements ---- */

static int gen_block(cg *g, ast *block);

/* Returns 1 when the statement always ends the filter. */
static int gen_stmt(cg *g, ast *s)
{
    switch (s->kind) {
    case AST_LET: {
        uint32_t mark = g->ntemps;
        int r = gen_expr(g, s->a);
        /* The local keeps its register (immutable, so a local bound to
         * another local may share it); the rest of the expression's
         * registers are free again. */
        release_temps(g, mark, r);
        ((sym *)s->sym)->reg = r;
        return 0;
    }
    case AST_ACCEPT:
    case AST_REJECT:
        g->at = s;
        emit_bx(g, s->kind == AST_ACCEPT ? OP_ACCEPT : OP_REJECT, 0,
                s->a ? k_str(g, s->a->str, s->a->slen) : VM_NO_REASON);
        return 1;
    case AST_IF: {
        jlist els = {0}, end = {0};
        uint32_t mark = g->ntemps;
        gen_jump(g, s->a, 0, &els);
        release_temps(g, mark, -1); /* the condition is decided: its registers are dead */
        int then_ends = gen_block(g, s->b);
        if (!s->c) {
            jl_patch_here(g, &els);
            return 0;
        }
        if (!then_ends) {
            g->at = s;
            jl_add(g, &end, emit_bx(g, OP_JMP, 0, 0));
        }
        jl_patch_here(g, &els);
        int else_ends = s->c->kind == AST_IF ? gen_stmt(g, s->c) : gen_block(g, s->c);
        jl_patch_here(g, &end);
        return then_ends && else_ends;
    }
    default: return 0;
    }
}

static int gen_block(cg *g, ast *block)
{
    int ends = 0;
    for (ast *s = block->a; s && !ends; s = s->next) ends = gen_stmt(g, s);
    return ends;
}

static void gen_filter(cg *g, ast *f)
{
    g->code = NULL;
    g->pos = NULL;
    g->ninsns = g->capinsns = g->cappos = 0;
    g->regtypes = NULL;
    g->nregs = g->capregs = 0;
    g->ntemps = 0;
    for (int t = 0; t < 4; t++) g->nfree[t] = 0;
    g->at = f;
    gen_block(g, f->b);
    vm_func fn = {k_str(g, f->str, f->slen), g->nregs, g->ninsns, g->code, g->regtypes, g->pos};
    vm_func *fs = realloc(g->funcs, (g->nfuncs + 1) * sizeof *fs);
    if (!fs) {
        g->failed = 1;
        free(g->code);
        free(g->pos);
        free(g->regtypes);
        return;
    }
    g->funcs = fs;
    g->funcs[g->nfuncs++] = fn;
}

/* Reports a Hyperscan compile error at the literal it came from. The
 * message of a parse error often names an index into the expression
 * ("... at index 3"): the caret goes there. */
static void report_pattern_error(cg *g, long bad, const char *msg)
{
    if (bad < 0) {
        src_error(g->c->src, UINT32_MAX, 0, "Hyperscan: %s", msg);
        return;
    }
    const ast *lit = g->pattern_node[bad];
    uint32_t off = lit->off;
    const char *ix = strstr(msg, "index ");
    if (lit->kind == AST_REGEX && ix) {
        unsigned long n = strtoul(ix + 6, NULL, 10);
        if (n < lit->slen) off += 1 + (uint32_t)n;
    }
    /* The reason first: a long regex would otherwise push it out of the
     * message. The caret already shows where the regex is. */
    if (lit->kind == AST_REGEX)
        src_error(g->c->src, lit->file, off, "Hyperscan cannot compile this regex: %s (/%.60s%s/)",
                  msg, lit->str, lit->slen > 60 ? "..." : "");
    else
        src_error(g->c->src, lit->file, off, "string cannot be compiled by Hyperscan: %s", msg);
}

static void free_program(clf_program *p)
{
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        free(p->funcs[i].code);
        free(p->funcs[i].pos);
        free(p->funcs[i].regtypes);
    }
    for (uint32_t i = 0; i < p->nsubjects; i++) hs_free_database(p->subjects[i].db);
}

int cg_program(compilation *c, uint8_t **out, size_t *outlen)
{
    cg g = {.c = c, .pos_file = UINT32_MAX};
    int rc = -1;
    *out = NULL;
    /* `main` first, so it is function 0; then the main file's other
     * filters in source order. */
    sym *main = chk_lookup_global(c->main, "main");
    gen_filter(&g, main->decl);
    for (ast *it = c->main->items; it; it = it->next)
        if (it->kind == AST_FILTER && it != main->decl) gen_filter(&g, it);

    clf_program p = {0};
    p.consts = g.consts;
    p.funcs = g.funcs;
    p.nfuncs = g.nfuncs;
    p.entry = 0;
    p.hdrs = g.hdrs;
    p.nhdrs = g.nhdrs;
    p.subjects = g.subjects;
    p.nsubjects = g.nsubjects;
    p.patterns = g.patterns;
    p.npatterns = g.npatterns;
    if (g.failed || c->ar->failed) {
        src_error(c->src, UINT32_MAX, 0, "out of memory");
        goto done;
    }
    if (c->src->nerrors) goto done;
    for (uint32_t s = 0; s < g.nsubjects; s++) {
        char err[512];
        long bad = -1;
        p.nconsts = g.nconsts;
        if (vm_subject_build(&p, s, &g.subjects[s].db, &bad, err, sizeof err) != CLF_OK)
            report_pattern_error(&g, bad, err);
    }
    if (c->src->nerrors) goto done;
    p.nconsts = g.nconsts;
    char err[256];
    clf_status st = vm_write(&p, out, outlen, err, sizeof err);
    if (st != CLF_OK) {
        src_error(c->src, UINT32_MAX, 0, "%s", err);
        goto done;
    }
    rc = 0;
done:
    p.nsubjects = g.nsubjects;
    free_program(&p);
    free(g.consts);
    free(g.funcs);
    free(g.hdrs);
    free(g.subjects);
    free(g.patterns);
    free(g.pattern_node);
    free(g.tests);
    free(g.temps);
    for (int t = 0; t < 4; t++) free(g.freeregs[t]);
    strmap_free(&g.kstr);
    return rc;
}
