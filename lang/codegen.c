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
 * Registers: a register has one type for the whole function, as the
 * verifier requires; temporaries are reused by type once their statement
 * is done. A fn's parameters are its registers 0..n-1 (Request
 * parameters take none: there is one request).
 *
 * Functions: `main` is function 0; every fn and filter it calls (and, for
 * classifyc --test, every filter a test names) gets the next index when
 * first called, and is generated from a work queue; then every other
 * filter of the main file (an entry, VM_FUNC_ENTRY, when it decides on
 * every path) and what it calls. Nothing else is emitted.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "compile.h"
#include "ipaddr.h"
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

/* A call whose callee's body is generated in place of OP_CALL/OP_CALLF
 * (gen_inline): where its `return` puts the value and what its `return`s
 * and `pass`es jump to (the end of the inlined body). */
typedef struct cg_inline {
    int result;       /* fn: the register of the value; filter: -1 */
    struct jlist *exits;
} cg_inline;

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
    /* IP sets and captures. */
    vm_iprange *ranges;
    uint32_t nranges, capranges;
    vm_ipset *ipsets;
    uint32_t nipsets, capipsets;
    const ast **ipset_node;
    uint32_t capipnode;
    vm_capt *capts;
    uint32_t ncapts, capcapts;
    /* Functions still to generate, in index order. */
    sym **queue;
    uint32_t nqueue, capqueue;
    uint32_t func_base; /* 1 when a stub entry is function 0, else 0 */
    const sym *cur_fn; /* the one being generated */
    /* The call being inlined (gen_inline), innermost, or NULL. */
    struct cg_inline *inl;
    uint32_t inline_depth;
    uint32_t label; /* the last position a jump was patched to go to */
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
    uint32_t *freeregs[VM_T_MAX + 1];
    uint32_t nfree[VM_T_MAX + 1], capfree[VM_T_MAX + 1];
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
                      "'%s' needs more than %u registers (classifyc --max-registers)",
                      g->cur_fn ? g->cur_fn->name : "?", max);
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
    if (l->n) g->label = g->ninsns;
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

/* Adds the patterns of `method(lit)` to test `test` of `subject`. */
static void add_test_patterns(cg *g, uint32_t subject, uint32_t test, int method, const ast *lit)
{
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
}

/* A new test on `subject`, remembered under (method, key) so that the
 * same test in another place reuses it; 0 and an error past the limit. */
static int new_test(cg *g, uint32_t subject, int method, const ast *key, uint32_t *test)
{
    for (uint32_t i = 0; i < g->ntests; i++)
        if (g->tests[i].subject == subject && g->tests[i].method == method &&
            g->tests[i].lit == key) {
            *test = g->tests[i].test;
            return 0;
        }
    *test = 0;
    if (g->subjects[subject].ntests == 65535) {
        if (!g->failed)
            src_error(g->c->src, key->file, key->off,
                      "more than 65535 pattern tests on one request field");
        return 0;
    }
    *test = g->subjects[subject].ntests++;
    if (GROW(g, g->tests, g->captests, g->ntests + 1)) return 0;
    g->tests[g->ntests++] = (test_key){subject, method, key, *test};
    return 1;
}

/* Returns the test id answering `method(lit)` on `subject`, adding the
 * test and its patterns on first use. */
static uint32_t test_for(cg *g, uint32_t subject, int method, const ast *lit)
{
    uint32_t test;
    if (new_test(g, subject, method, lit, &test)) add_test_patterns(g, subject, test, method, lit);
    return test;
}

/* The function index of `f`, queueing it for generation on first use. */
static uint32_t func_index(cg *g, sym *f)
{
    if (f->func >= 0) return (uint32_t)f->func;
    if (GROW(g, g->queue, g->capqueue, g->nqueue + 1)) return 0;
    f->func = (int)(g->func_base + g->nqueue);
    g->queue[g->nqueue++] = f;
    return (uint32_t)f->func;
}

static vm_type vm_type_of(ty t)
{
    switch (t) {
    case T_BOOL: return VM_T_BOOL;
    case T_INT: return VM_T_INT;
    case T_IP: return VM_T_IP;
    default: return VM_T_STR;
    }
}

/* The IP set of an IPSET literal: its ranges sorted and merged. */
static uint32_t ipset_for(cg *g, const ast *lit)
{
    for (uint32_t i = 0; i < g->nipsets; i++)
        if (g->ipset_node[i] == lit) return i;
    uint32_t first = g->nranges, n = 0;
    for (const ast *el = lit->a; el; el = el->next) {
        if (GROW(g, g->ranges, g->capranges, g->nranges + 1)) return 0;
        memcpy(g->ranges[g->nranges].lo, el->str, 16);
        memcpy(g->ranges[g->nranges].hi, el->str + 16, 16);
        g->nranges++;
        n++;
    }
    n = (uint32_t)vm_iprange_normalize(g->ranges + first, n);
    g->nranges = first + n;
    if (GROW(g, g->ipsets, g->capipsets, g->nipsets + 1)) return 0;
    if (GROW(g, g->ipset_node, g->capipnode, g->nipsets + 1)) return 0;
    g->ipsets[g->nipsets] = (vm_ipset){first, n};
    g->ipset_node[g->nipsets] = lit;
    return g->nipsets++;
}

static uint32_t hs_flags_of(const ast *re)
{
    return (re->flags & AST_F_CASELESS ? HS_FLAG_CASELESS : 0) |
           (re->flags & AST_F_DOTALL ? HS_FLAG_DOTALL : 0) |
           (re->flags & AST_F_MULTILINE ? HS_FLAG_MULTILINE : 0);
}

/* Whether a regex repeats, without bound, a group that itself repeats or
 * alternates: (a+)+, (?:x|y)*, (?:[^;]+; ?)+. On a long value such a
 * regex can exhaust the capture budget (vm/capture.h), and the capture
 * is then "": a client could pad its header to get there. A heuristic on
 * the text: it skips escapes and character classes and reports the
 * offset of the repeated group's ')' in *at. */
static int repeats_a_repeating_group(const char *re, uint32_t n, uint32_t *at)
{
    enum { MAXD = 64 };
    int inner[MAXD] = {0}; /* per open group: it repeats or alternates */
    int depth = 0;
    for (uint32_t i = 0; i < n; i++) {
        char c = re[i];
        if (c == '\\') {
            i++;
            continue;
        }
        if (c == '[') { /* a class: to its closing ']' */
            i++;
            if (i < n && re[i] == '^') i++;
            if (i < n && re[i] == ']') i++;
            while (i < n && re[i] != ']') i += re[i] == '\\' ? 2 : 1;
            continue;
        }
        if (c == '(') {
            if (depth < MAXD) inner[depth] = 0;
            depth++;
        } else if (c == ')' && depth > 0) {
            depth--;
            int busy = depth < MAXD && inner[depth];
            char q = i + 1 < n ? re[i + 1] : 0;
            int unbounded = q == '*' || q == '+';
            if (q == '{') { /* {n,} is unbounded; {n} and {n,m} are not */
                uint32_t k = i + 2;
                while (k < n && re[k] >= '0' && re[k] <= '9') k++;
                unbounded = k + 1 < n && re[k] == ',' && re[k + 1] == '}';
            }
            if (busy && unbounded) {
                *at = i;
                return 1;
            }
            /* A repeated group makes its enclosing group repeat, too. */
            if (depth > 0 && depth - 1 < MAXD && (busy || q == '*' || q == '+' || q == '{' || q == '?'))
                inner[depth - 1] = 1;
        } else if ((c == '*' || c == '+' || c == '{' || c == '|') && depth > 0 && depth - 1 < MAXD) {
            inner[depth - 1] = 1;
        }
    }
    return 0;
}

/* A capture of `re`'s group `grp` proven by test t of subject s. The
 * regex is compiled with PCRE2 here too, so that a regex PCRE2 refuses,
 * or a group it does not have, is a compile error, and named groups
 * become numbers. Returns the capture index, or -1 (reported). */
static long capture_for(cg *g, uint32_t s, uint32_t t, const ast *re, const ast *grp)
{
    vm_capture *pc;
    char msg[256];
    /* Only to check the regex and count its groups: no JIT needed. */
    clf_status st = vm_capture_new(re->str, re->slen, hs_flags_of(re) | VM_CAPTURE_NO_JIT, NULL,
                                   &pc, msg, sizeof msg);
    if (st) {
        if (st == CLF_E_NOMEM) g->failed = 1;
        else {
            /* The message ends in "at offset N" (capture.h): the caret
             * goes there, as for Hyperscan's errors. */
            uint32_t off = re->off;
            const char *at = strstr(msg, " at offset ");
            if (at) {
                unsigned long n = strtoul(at + 11, NULL, 10);
                if (n <= re->slen) off += 1 + (uint32_t)n;
            }
            src_error(g->c->src, re->file, off, "PCRE2 cannot compile this regex for capture: %s",
                      msg);
        }
        return -1;
    }
    long group;
    if (grp->kind == AST_INT) {
        group = (long)grp->ival;
        if ((uint32_t)group > vm_capture_ngroups(pc)) {
            src_error(g->c->src, grp->file, grp->off, "the regex has %u capture group%s, not %ld",
                      vm_capture_ngroups(pc), vm_capture_ngroups(pc) == 1 ? "" : "s", group);
            group = -1;
        }
    } else {
        group = vm_capture_group_number(pc, grp->str, grp->slen);
        if (group < 0)
            src_error(g->c->src, grp->file, grp->off, "the regex has no group named \"%.*s\"",
                      (int)grp->slen, grp->str);
    }
    vm_capture_free(pc);
    if (group < 0) return -1;
    uint32_t rep;
    if (repeats_a_repeating_group(re->str, re->slen, &rep))
        src_warning(g->c->src, re->file, re->off + 1 + rep,
                    "this capture regex repeats a group that itself repeats: on a long value "
                    "it can run out of its budget and capture \"\" (docs/language.md, Captures)");
    uint32_t expr = k_str(g, re->str, re->slen);
    for (uint32_t i = 0; i < g->ncapts; i++)
        if (g->capts[i].subject == s && g->capts[i].test == t && g->capts[i].expr == expr &&
            g->capts[i].group == (uint32_t)group)
            return i;
    if (GROW(g, g->capts, g->capcapts, g->ncapts + 1)) return -1;
    g->capts[g->ncapts] = (vm_capt){s, t, hs_flags_of(re), expr, (uint32_t)group, NULL};
    return g->ncapts++;
}

/* ---- expressions ---- */

static int gen_expr(cg *g, ast *e);
static void gen_jump(cg *g, ast *e, int when, jlist *l);
static ast *cond_field(ast *e);
static int gen_merged_or(cg *g, ast *e);

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
    case AST_IP:
        r = new_reg(g, VM_T_IP);
        emit_bx(g, OP_LOADIP, (uint32_t)r, k_str(g, lit->str, 16));
        return r;
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

/* Emits `op A, B, C` into a new register of type t; B and C are
 * registers generated from the given nodes (c may be NULL). */
static int gen_unop(cg *g, ast *at, vm_opcode op, vm_type t, ast *b)
{
    int rb = gen_expr(g, b);
    int r = new_reg(g, t);
    g->at = at;
    emit(g, op, (uint32_t)r, (uint32_t)rb, 0);
    return r;
}

static int gen_binop(cg *g, ast *at, vm_opcode op, vm_type t, ast *b, ast *c)
{
    int rb = gen_expr(g, b), rc = gen_expr(g, c);
    int r = new_reg(g, t);
    g->at = at;
    emit(g, op, (uint32_t)r, (uint32_t)rb, (uint32_t)rc);
    return r;
}

/* s.capture(re, group): a Hyperscan test proves the match, then PCRE2
 * extracts the group (OP_CAPTURE checks the test's bit). */
static int gen_capture(cg *g, ast *e)
{
    ast *recv = e->a, *re = chk_literal(e->b), *grp = chk_literal(e->b->next);
    uint32_t s, t;
    int v, proof = new_reg(g, VM_T_BOOL);
    if (recv->origin != ORIGIN_NONE) {
        s = subject_for(g, recv->origin, recv->oname);
        t = test_for(g, s, M_MATCHES, re);
        g->at = e;
        emit(g, OP_SCANF, (uint32_t)proof, s, t);
        v = gen_expr(g, recv);
    } else {
        v = gen_expr(g, recv);
        s = subject_for(g, ORIGIN_NONE, NULL);
        t = test_for(g, s, M_MATCHES, re);
        g->at = e;
        emit(g, OP_SCAND, (uint32_t)proof, s, (uint32_t)v);
    }
    long k = capture_for(g, s, t, re, grp);
    int r = new_reg(g, VM_T_STR);
    g->at = e;
    emit(g, OP_CAPTURE, (uint32_t)r, k < 0 ? 0 : (uint32_t)k, (uint32_t)v);
    return r;
}

/* A call of fn `e->sym`: the arguments go to a fresh window of
 * consecutive registers, which the callee sees as its 0..n-1. */
static int gen_block(cg *g, ast *block);

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
    return !g->c->opts->no_inline && g->inline_depth < INLINE_MAX_DEPTH &&
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
    cg_inline in = {f->decl->kind == AST_FN ? new_reg(g, vm_type_of(f->type)) : -1, &exits};
    cg_inline *outer = g->inl;
    g->inl = &in;
    g->inline_depth++;
    gen_block(g, f->decl->b);
    g->inline_depth--;
    g->inl = outer;
    g->at = site;
    /* A last `return` or `pass` would jump to the next instruction:
     * drop it, unless a jump already goes to the end. */
    if (exits.n && exits.at[exits.n - 1] == g->ninsns - 1 && g->label != g->ninsns) {
        g->ninsns--;
        exits.n--;
    }
    jl_patch_here(g, &exits);
    return in.result;
}

static int gen_fn_call(cg *g, ast *e)
{
    sym *f = e->sym;
    if (inlinable(g, f)) return gen_inline(g, f, e, e->b);
    uint32_t idx = func_index(g, f);
    int nregp = 0;
    for (ast *p = f->decl->a; p; p = p->next)
        if (p->type != T_REQUEST) nregp++;
    int vals[256];
    int base = 0, i = 0;
    ast *p = f->decl->a;
    for (ast *a = e->b; a && p; a = a->next, p = p->next) {
        if (p->type == T_REQUEST) continue;
        if (i < 256) vals[i++] = gen_expr(g, a);
    }
    for (int k = 0; k < nregp && k < 256; k++) {
        int w = new_reg_raw(g, (vm_type)g->regtypes[vals[k]]);
        if (k == 0) base = w;
        g->at = e;
        static const vm_opcode movs[] = {[VM_T_BOOL] = OP_MOVB, [VM_T_INT] = OP_MOVI,
                                         [VM_T_STR] = OP_MOVS, [VM_T_IP] = OP_MOVP};
        emit(g, movs[g->regtypes[vals[k]]], (uint32_t)w, (uint32_t)vals[k], 0);
    }
    int r = new_reg(g, vm_type_of(f->type));
    g->at = e;
    emit(g, OP_CALL, (uint32_t)r, idx, (uint32_t)base);
    return r;
}

static int gen_call(cg *g, ast *e)
{
    int r;
    g->at = e;
    switch (e->method) {
    case M_FUNC: return gen_fn_call(g, e);
    case M_HEADER:
        r = new_reg(g, VM_T_STR);
        emit(g, OP_HEADER, (uint32_t)r, header_slot(g, e->oname), 0);
        return r;
    case M_HAS_HEADER:
        r = new_reg(g, VM_T_BOOL);
        emit(g, OP_HASHDR, (uint32_t)r, header_slot(g, e->oname), 0);
        return r;
    case M_COOKIE: {
        uint32_t slot = header_slot(g, "cookie");
        int name = gen_expr(g, e->b);
        r = new_reg(g, VM_T_STR);
        g->at = e;
        emit(g, OP_COOKIE, (uint32_t)r, slot, (uint32_t)name);
        return r;
    }
    case M_QUERY_PARAM: return gen_unop(g, e, OP_QPARAM, VM_T_STR, e->b);
    case M_LEN: return gen_unop(g, e, OP_SLEN, VM_T_INT, e->a);
    case M_LOWER: return gen_unop(g, e, OP_SLOWER, VM_T_STR, e->a);
    case M_TRIM: return gen_unop(g, e, OP_STRIM, VM_T_STR, e->a);
    case M_TO_INT: return gen_unop(g, e, OP_TOINT, VM_T_INT, e->a);
    case M_TO_IP: return gen_unop(g, e, OP_TOIP, VM_T_IP, e->a);
    case M_VALID: return gen_unop(g, e, OP_IPVALID, VM_T_BOOL, e->a);
    case M_INDEX_OF: return gen_binop(g, e, OP_SINDEX, VM_T_INT, e->a, e->b);
    case M_SUBSTR: {
        int dropped = gen_binop(g, e, OP_SDROP, VM_T_STR, e->a, e->b);
        int n = gen_expr(g, e->b->next);
        r = new_reg(g, VM_T_STR);
        g->at = e;
        emit(g, OP_STAKE, (uint32_t)r, (uint32_t)dropped, (uint32_t)n);
        return r;
    }
    case M_CAPTURE: return gen_capture(g, e);
    default:
        return gen_string_test(g, e, e->a, e->method, e->b);
    }
}

static int gen_compare(cg *g, ast *e)
{
    if (e->kind == AST_IN && e->a->type == T_IP) {
        int a = gen_expr(g, e->a);
        int r = new_reg(g, VM_T_BOOL);
        g->at = e;
        emit(g, OP_IPIN, (uint32_t)r, (uint32_t)a, ipset_for(g, chk_literal(e->b)));
        return r;
    }
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
        op = e->a->type == T_STR ? OP_SEQ : e->a->type == T_INT ? OP_IEQ
             : e->a->type == T_IP ? OP_PEQ : OP_BEQ;
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
        if (e->type == T_IP) { /* req.client_ip */
            uint32_t xff = header_slot(g, "x-forwarded-for"), xrip = header_slot(g, "x-real-ip");
            int r = new_reg(g, VM_T_IP);
            g->at = e;
            emit(g, OP_CLIENTIP, (uint32_t)r, xff, xrip);
            return r;
        }
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
    case AST_OR:
        if (cond_field(e)) return gen_merged_or(g, e);
        /* fall through */
    case AST_AND: {
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

/* When `e` is a scan of a request field by a literal (what
 * gen_string_test compiles to OP_SCANF), returns its receiver and sets
 * *method and *lit; otherwise NULL. */
static ast *field_scan(ast *e, int *method, ast **lit)
{
    ast *recv, *arg;
    int m;
    if (e->kind == AST_CALL && (e->method == M_CONTAINS || e->method == M_STARTS_WITH ||
                                e->method == M_ENDS_WITH || e->method == M_EQUALS ||
                                e->method == M_CONTAINS_WORD || e->method == M_MATCHES)) {
        m = e->method;
        recv = e->a;
        arg = e->b;
    } else if (e->kind == AST_IN && e->a->type == T_STR) {
        m = M_EQUALS;
        recv = e->a;
        arg = e->b;
    } else {
        return NULL;
    }
    ast *k = chk_literal(arg);
    if (recv->origin == ORIGIN_NONE || !k) return NULL;
    if (k->kind == AST_SET ? !k->a
        : k->kind == AST_STR ? k->slen == 0 || m == M_EQUALS
        : k->kind != AST_REGEX)
        return NULL;
    *method = m;
    *lit = k;
    return recv;
}

static int same_field(const ast *a, const ast *b)
{
    return a->origin == b->origin &&
           (a->origin != ORIGIN_HEADER || strcmp(a->oname, b->oname) == 0);
}

/* The operands of a chain of ||, left to right, into ops[] (up to max);
 * returns how many there are. */
static uint32_t or_operands(ast *e, ast **ops, uint32_t n, uint32_t max)
{
    if (e->kind == AST_OR) return or_operands(e->b, ops, or_operands(e->a, ops, n, max), max);
    if (n < max) ops[n] = e;
    return n + 1;
}

/* Test merging: in `a || b || ...`, a run of neighbouring operands that
 * scan the same request field by literals is one question to Hyperscan,
 * so it becomes one test whose patterns are all of theirs, answered by
 * one OP_SCANF: `ua.matches(/x/) || ua.matches(/y/) || ...` over the
 * 1,493 crawler-user-agents patterns costs one bit test instead of 1,493
 * (each with its branch). Sound because a field scan has no effect and
 * cannot fail once the field was scanned. Returns 0, having emitted
 * nothing, when no two neighbours merge. */
static int gen_jump_or(cg *g, ast *e, int when, jlist *l)
{
    uint32_t n = or_operands(e, NULL, 0, 0), runs = 0;
    ast **ops = arena_alloc(g->c->ar, n * sizeof *ops);
    if (!ops) {
        g->failed = 1;
        return 0;
    }
    or_operands(e, ops, 0, n);
    int m, m2;
    ast *k, *k2, *recv, *recv2;
    for (uint32_t i = 0; i + 1 < n; i++)
        if ((recv = field_scan(ops[i], &m, &k)) && (recv2 = field_scan(ops[i + 1], &m2, &k2)) &&
            same_field(recv, recv2))
            runs++;
    if (runs == 0) return 0;
    /* Jump when true: each operand jumps on true. Jump when false: each
     * but the last skips past on true; the last jumps on false. */
    jlist skip = {0};
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        recv = field_scan(ops[i], &m, &k);
        while (recv && j < n && (recv2 = field_scan(ops[j], &m2, &k2)) && same_field(recv, recv2))
            j++;
        int last = j == n;
        jlist *to = when || !last ? (when ? l : &skip) : l;
        int on = when || !last;
        if (j == i + 1) {
            gen_jump(g, ops[i], on, to);
        } else {
            uint32_t s = subject_for(g, recv->origin, recv->oname), t;
            /* Keyed by the first operand, -1 for "merged". */
            if (new_test(g, s, -1, ops[i], &t))
                for (uint32_t q = i; q < j; q++) {
                    field_scan(ops[q], &m2, &k2);
                    add_test_patterns(g, s, t, m2, k2);
                }
            int r = new_reg(g, VM_T_BOOL);
            g->at = ops[i];
            emit(g, OP_SCANF, (uint32_t)r, s, t);
            jl_add(g, to, emit_bx(g, on ? OP_JMPT : OP_JMPF, (uint32_t)r, 0));
        }
        i = j;
    }
    jl_patch_here(g, &skip);
    return 1;
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
    case AST_OR:
        if (gen_jump_or(g, e, when, l)) return;
        /* fall through */
    case AST_AND: {
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

static const vm_opcode mov_ops[VM_T_MAX + 1] = {
    [VM_T_BOOL] = OP_MOVB, [VM_T_INT] = OP_MOVI, [VM_T_STR] = OP_MOVS, [VM_T_IP] = OP_MOVP};

/* Returns 1 when the statement always ends the function. */
static int gen_stmt(cg *g, ast *s)
{
    switch (s->kind) {
    case AST_LET: {
        uint32_t mark = g->ntemps;
        sym *y = s->sym;
        int r = gen_expr(g, s->a);
        const sym *src = s->a->kind == AST_NAME ? s->a->sym : NULL;
        if ((s->flags & AST_F_MUT) || (src && src->kind == SYM_LOCAL && src->mut)) {
            /* A register another name may change, or that this name will
             * change, is not shared: copy. */
            int d = new_reg_raw(g, (vm_type)g->regtypes[r]);
            g->at = s;
            emit(g, mov_ops[g->regtypes[r]], (uint32_t)d, (uint32_t)r, 0);
            r = d;
        }
        /* The local keeps its register (an immutable local bound to
         * another may share it); the rest of the expression's registers
         * are free again. */
        release_temps(g, mark, r);
        y->reg = r;
        return 0;
    }
    case AST_ASSIGN: {
        uint32_t mark = g->ntemps;
        sym *y = s->sym;
        int r = gen_expr(g, s->a);
        g->at = s;
        if (s->ival) { /* += and -= */
            int t = new_reg(g, VM_T_INT);
            emit(g, s->ival == AST_ADD ? OP_IADD : OP_ISUB, (uint32_t)t, (uint32_t)y->reg,
                 (uint32_t)r);
            r = t;
        }
        emit(g, mov_ops[g->regtypes[y->reg]], (uint32_t)y->reg, (uint32_t)r, 0);
        release_temps(g, mark, -1);
        return 0;
    }
    case AST_ACCEPT:
    case AST_REJECT:
        g->at = s;
        emit_bx(g, s->kind == AST_ACCEPT ? OP_ACCEPT : OP_REJECT, 0,
                s->a ? k_str(g, s->a->str, s->a->slen) : VM_NO_REASON);
        return 1;
    case AST_PASS:
        g->at = s;
        if (g->inl) jl_add(g, g->inl->exits, emit_bx(g, OP_JMP, 0, 0));
        else emit(g, OP_PASS, 0, 0, 0);
        return 1;
    case AST_RETURN: {
        uint32_t mark = g->ntemps;
        int r = gen_expr(g, s->a);
        g->at = s;
        if (g->inl) {
            emit(g, mov_ops[g->regtypes[r]], (uint32_t)g->inl->result, (uint32_t)r, 0);
            jl_add(g, g->inl->exits, emit_bx(g, OP_JMP, 0, 0));
        } else {
            emit(g, OP_RET, (uint32_t)r, 0, 0);
        }
        release_temps(g, mark, -1);
        return 1;
    }
    case AST_EXPRSTMT: {
        sym *callee = s->a->sym;
        if (inlinable(g, callee)) {
            gen_inline(g, callee, s, s->a->b);
            return 0;
        }
        uint32_t f = func_index(g, callee);
        g->at = s;
        emit(g, OP_CALLF, 0, f, 0);
        return 0;
    }
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

/* When condition `e` is true only if a field scan is, because it is one
 * or an || of several on the same request field, returns that field's
 * receiver (else NULL). */
static ast *cond_field(ast *e)
{
    int m;
    ast *k;
    if (e->kind != AST_OR) return field_scan(e, &m, &k);
    ast *a = cond_field(e->a), *b = a ? cond_field(e->b) : NULL;
    return b && same_field(a, b) ? a : NULL;
}

/* Adds the patterns of every field scan of cond_field() condition `e` to
 * test `t` of subject `s`. */
static void add_cond_patterns(cg *g, uint32_t s, uint32_t t, ast *e)
{
    if (e->kind == AST_OR) {
        add_cond_patterns(g, s, t, e->a);
        add_cond_patterns(g, s, t, e->b);
        return;
    }
    int m;
    ast *k;
    field_scan(e, &m, &k);
    add_test_patterns(g, s, t, m, k);
}

/* An || of scans of one request field, as a value: one merged test (see
 * gen_jump_or), one OP_SCANF, no jumps. */
static int gen_merged_or(cg *g, ast *e)
{
    ast *recv = cond_field(e);
    uint32_t s = subject_for(g, recv->origin, recv->oname), t;
    if (new_test(g, s, -1, e, &t)) add_cond_patterns(g, s, t, e);
    int r = new_reg(g, VM_T_BOOL);
    g->at = e;
    emit(g, OP_SCANF, (uint32_t)r, s, t);
    return r;
}

/* An `if` without else whose condition is cond_field()'s: its receiver. */
static ast *guardable_if(ast *s)
{
    return s->kind == AST_IF && !s->c ? cond_field(s->a) : NULL;
}

/* Chain guards: a run of at least GUARD_MIN statements
 * `if FIELD-SCAN { ... }` on one request field (ai_robots.check's 64
 * categories, one `if` each) does nothing at all when no condition holds,
 * which is the common case (a browser). One more test, whose patterns are
 * all of the run's, answers "does any hold?", and when it does not, one
 * jump skips the run: 2 instructions instead of 2 per `if`. The patterns
 * are Hyperscan's to deduplicate; they cost database bytes, not scan time
 * (docs/performance.md). */
enum { GUARD_MIN = 4 };

static int gen_block(cg *g, ast *block)
{
    int ends = 0;
    for (ast *s = block->a; s && !ends;) {
        ast *recv = guardable_if(s), *end = s->next, *r2;
        uint32_t n = 1;
        while (recv && end && (r2 = guardable_if(end)) && same_field(recv, r2)) {
            end = end->next;
            n++;
        }
        if (n < GUARD_MIN) {
            ends = gen_stmt(g, s);
            s = s->next;
            continue;
        }
        uint32_t subj = subject_for(g, recv->origin, recv->oname), t;
        if (new_test(g, subj, -2, s, &t))
            for (ast *q = s; q != end; q = q->next) add_cond_patterns(g, subj, t, q->a);
        int r = new_reg(g, VM_T_BOOL);
        jlist skip = {0};
        g->at = s->a;
        emit(g, OP_SCANF, (uint32_t)r, subj, t);
        jl_add(g, &skip, emit_bx(g, OP_JMPF, (uint32_t)r, 0));
        for (; s != end; s = s->next) gen_stmt(g, s); /* an if without else never ends */
        jl_patch_here(g, &skip);
    }
    return ends;
}

/* Appends a finished function (which owns the code being built). */
static void add_function(cg *g, const vm_func *fn)
{
    vm_func *fs = realloc(g->funcs, (g->nfuncs + 1) * sizeof *fs);
    if (!fs) {
        g->failed = 1;
        free(fn->code);
        free(fn->pos);
        free(fn->regtypes);
        return;
    }
    g->funcs = fs;
    g->funcs[g->nfuncs++] = *fn;
}

/* Generates one fn or filter. */
static void gen_function(cg *g, sym *f)
{
    ast *d = f->decl;
    g->code = NULL;
    g->pos = NULL;
    g->ninsns = g->capinsns = g->cappos = 0;
    g->regtypes = NULL;
    g->nregs = g->capregs = 0;
    g->ntemps = 0;
    for (int t = 0; t <= VM_T_MAX; t++) g->nfree[t] = 0;
    g->at = d;
    g->cur_fn = f;
    uint32_t nparams = 0;
    for (ast *p = d->a; p; p = p->next) {
        sym *y = p->sym;
        if (!y || p->type == T_REQUEST) continue;
        y->reg = new_reg_raw(g, vm_type_of(p->type));
        nparams++;
    }
    if (!gen_block(g, d->b)) {
        /* Only a filter other than main gets here (the checker saw to
         * it): reaching its end means it passes. */
        g->at = d;
        emit(g, d->kind == AST_FN ? OP_RET : OP_PASS, 0, 0, 0);
    }
    vm_func fn = {k_str(g, d->str, d->slen),
                  d->kind == AST_FN ? VM_FUNC_FN : VM_FUNC_FILTER,
                  (uint8_t)nparams, /* at most 255: the checker saw to it */
                  d->kind == AST_FN ? (uint8_t)vm_type_of(f->type) : 0,
                  g->nregs, g->ninsns, g->code, g->regtypes, g->pos, 0};
    if (d->kind == AST_FILTER && f->mod == g->c->main)
        fn.flags = VM_FUNC_ROOT | (f->decides ? VM_FUNC_ENTRY : 0);
    add_function(g, &fn);
}

/* The stub entry of a test-only program of a file without `main`. */
static void gen_stub_entry(cg *g, ast *at)
{
    g->code = NULL;
    g->pos = NULL;
    g->ninsns = g->capinsns = g->cappos = 0;
    g->regtypes = NULL;
    g->nregs = g->capregs = 0;
    g->at = at;
    emit_bx(g, OP_ACCEPT, 0, VM_NO_REASON);
    vm_func fn = {k_str(g, "(tests)", 7), VM_FUNC_FILTER, 0, 0, 0, g->ninsns, g->code, NULL, g->pos,
                  VM_FUNC_ENTRY};
    add_function(g, &fn);
}

/* Collects the main file's tests, queueing the filters they name. */
static int collect_tests(cg *g, cg_tests *out)
{
    uint32_t n = 0;
    for (ast *it = g->c->main->items; it; it = it->next)
        if (it->kind == AST_TEST) n++;
    out->tests = n ? calloc(n, sizeof *out->tests) : NULL;
    if (n && !out->tests) return -1;
    for (ast *it = g->c->main->items; it; it = it->next) {
        if (it->kind != AST_TEST) continue;
        cg_test *t = &out->tests[out->ntests++];
        t->node = it;
        uint32_t ne = 0;
        for (ast *d = it->b; d; d = d->next)
            if (d->kind == AST_EXPECT) ne++;
        t->expects = ne ? calloc(ne, sizeof *t->expects) : NULL;
        if (ne && !t->expects) return -1;
        for (ast *d = it->b; d; d = d->next) {
            if (d->kind != AST_EXPECT) continue;
            sym *f = d->sym;
            cg_test_expect *x = &t->expects[t->nexpects++];
            x->verdict = (int)d->ival;
            x->reason = d->a ? d->a->str : NULL;
            x->reason_len = d->a ? d->a->slen : 0;
            x->func = func_index(g, f);
            x->filter = f->name;
            x->node = d;
        }
    }
    return 0;
}

void cg_tests_free(cg_tests *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->ntests; i++) free(t->tests[i].expects);
    free(t->tests);
    t->tests = NULL;
    t->ntests = 0;
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

int cg_program(compilation *c, cg_tests *tests, uint8_t **out, size_t *outlen)
{
    cg g = {.c = c, .pos_file = UINT32_MAX};
    int rc = -1;
    *out = NULL;
    /* `main` first, so it is function 0 (or a stub, for the tests of a
     * file without one); then what it calls, and what the tests name. */
    sym *main = chk_lookup_global(c->main, "main");
    if (main && main->kind == SYM_FILTER) func_index(&g, main);
    else {
        ast at = {.file = c->main->file};
        gen_stub_entry(&g, &at);
        g.func_base = 1;
    }
    if (tests && collect_tests(&g, tests)) g.failed = 1;
    uint32_t q = 0;
    for (; q < g.nqueue && !g.failed; q++) gen_function(&g, g.queue[q]);
    /* Then every other filter of the main file, in declaration order:
     * those that decide on every path are entries (clf_eval_filter). After
     * main's closure, so that main's function indices do not depend on
     * them. */
    for (uint32_t i = 0; i < c->main->nglobals; i++)
        if (c->main->global_vec[i]->kind == SYM_FILTER) func_index(&g, c->main->global_vec[i]);
    for (; q < g.nqueue && !g.failed; q++) gen_function(&g, g.queue[q]);

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
    p.ranges = g.ranges;
    p.nranges = g.nranges;
    p.ipsets = g.ipsets;
    p.nipsets = g.nipsets;
    p.capts = g.capts;
    p.ncapts = g.ncapts;
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
    free(g.ranges);
    free(g.ipsets);
    free(g.ipset_node);
    free(g.capts);
    free(g.queue);
    for (int t = 0; t <= VM_T_MAX; t++) free(g.freeregs[t]);
    strmap_free(&g.kstr);
    return rc;
}
