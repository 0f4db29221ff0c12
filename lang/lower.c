/*
 * lower.c: pattern lowering (cg.h). Every pattern test on a value read
 * from the request (req.path, req.header("user-agent"), or a local bound
 * to one) joins the subject of that request field: one Hyperscan
 * database per field, with one match id per pattern, scanned at most
 * once per request on first use; a test is then a bit lookup (OP_SCANF).
 * A test on a computed value (say ua.lower()) gets a database of its own,
 * scanned when reached (OP_SCAND). Each string-set element, string or
 * regex is recorded as a pattern with its method (vm/program.h,
 * vm_pattern_kind); vm/patterns.c turns patterns into Hyperscan
 * expressions.
 *
 * Two optimisations decide here which tests there are (translate.c
 * emits them): test merging, for a run of field scans joined by || on
 * one field, and chain guards, for a run of ifs on one field.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

/* The subject for a value of the given origin; dynamic values (origin
 * NONE) always get a new one. */
uint32_t cg_subject(cg *g, int origin, const char *oname)
{
    uint32_t kind = 0, hdr = 0;
    switch (origin) {
    case ORIGIN_METHOD: kind = VM_SUBJ_METHOD; break;
    case ORIGIN_PATH: kind = VM_SUBJ_PATH; break;
    case ORIGIN_QUERY: kind = VM_SUBJ_QUERY; break;
    case ORIGIN_HEADER: kind = VM_SUBJ_HEADER; hdr = cg_header_slot(g, oname); break;
    default: kind = VM_SUBJ_DYNAMIC; break;
    }
    if (kind != VM_SUBJ_DYNAMIC)
        for (uint32_t i = 0; i < g->P.nsubjects; i++)
            if (g->P.subjects[i].kind == kind && g->P.subjects[i].hdr == hdr) return i;
    if (g->P.nsubjects == 65535) {
        src_error(g->c->src, g->at->file, g->at->off, "more than 65535 pattern subjects");
        return 0;
    }
    if (GROW(g, g->P.subjects, g->P.capsubjects, g->P.nsubjects + 1)) return 0;
    g->P.subjects[g->P.nsubjects] = (vm_subject){kind, hdr, 0, 0, 0, NULL, NULL, 0};
    return g->P.nsubjects++;
}

uint32_t cg_hs_flags(const ast *re)
{
    return (re->flags & AST_F_CASELESS ? HS_FLAG_CASELESS : 0) |
           (re->flags & AST_F_DOTALL ? HS_FLAG_DOTALL : 0) |
           (re->flags & AST_F_MULTILINE ? HS_FLAG_MULTILINE : 0);
}

static void add_pattern(cg *g, uint32_t subject, uint32_t test, vm_pattern_kind kind,
                        uint32_t flags, const char *value, uint32_t len, const ast *lit)
{
    unsigned max = g->c->opts->max_patterns ? g->c->opts->max_patterns : UINT_MAX;
    if (g->P.npatterns >= max) {
        if (!g->P.patterns_reported)
            src_error(g->c->src, lit->file, lit->off,
                      "the program needs more than %u patterns (classifyc --max-patterns)", max);
        g->P.patterns_reported = 1;
        return;
    }
    if (GROW(g, g->P.patterns, g->P.cappatterns, g->P.npatterns + 1)) return;
    if (GROW(g, g->P.pattern_node, g->P.cappnode, g->P.npatterns + 1)) return;
    g->P.pattern_node[g->P.npatterns] = lit;
    g->P.patterns[g->P.npatterns++] = (vm_pattern){subject, test, kind, flags, cg_kstr(g, value, len)};
}

/* The pattern kind of a string method on a literal. */
static vm_pattern_kind literal_kind(int method)
{
    switch (method) {
    case M_STARTS_WITH: return VM_PAT_STARTS_WITH;
    case M_ENDS_WITH: return VM_PAT_ENDS_WITH;
    case M_EQUALS: return VM_PAT_EQUALS;
    case M_CONTAINS_WORD: return VM_PAT_CONTAINS_WORD;
    default: return VM_PAT_CONTAINS;
    }
}

/* Adds the patterns of `method(lit)` to test `test` of `subject`: the
 * method and the literal as written (vm/patterns.c lowers them to
 * Hyperscan). */
static void add_test_patterns(cg *g, uint32_t subject, uint32_t test, int method, const ast *lit)
{
    if (lit->kind == AST_REGEX) {
        add_pattern(g, subject, test, VM_PAT_REGEX, cg_hs_flags(lit), lit->str, lit->slen, lit);
    } else if (lit->kind == AST_SET) {
        uint32_t f = lit->flags & AST_F_CASELESS ? HS_FLAG_CASELESS : 0;
        for (const ast *el = lit->a; el; el = el->next)
            add_pattern(g, subject, test, literal_kind(method), f, el->str, el->slen, el);
    } else { /* a single string */
        add_pattern(g, subject, test, literal_kind(method), 0, lit->str, lit->slen, lit);
    }
}

/* A new test on `subject`, remembered under (method, key) so that the
 * same test in another place reuses it; 0 and an error past the limit. */
static int new_test(cg *g, uint32_t subject, int method, const ast *key, uint32_t *test)
{
    for (uint32_t i = 0; i < g->P.ntests; i++)
        if (g->P.tests[i].subject == subject && g->P.tests[i].method == method &&
            g->P.tests[i].lit == key) {
            *test = g->P.tests[i].test;
            return 0;
        }
    *test = 0;
    if (g->P.subjects[subject].ntests == 65535) {
        if (!g->failed)
            src_error(g->c->src, key->file, key->off,
                      "more than 65535 pattern tests on one request field");
        return 0;
    }
    *test = g->P.subjects[subject].ntests++;
    if (GROW(g, g->P.tests, g->P.captests, g->P.ntests + 1)) return 0;
    g->P.tests[g->P.ntests++] = (cg_test_key){subject, method, key, *test};
    return 1;
}

/* Returns the test id answering `method(lit)` on `subject`, adding the
 * test and its patterns on first use. */
uint32_t cg_test_for(cg *g, uint32_t subject, int method, const ast *lit)
{
    uint32_t test;
    if (new_test(g, subject, method, lit, &test)) add_test_patterns(g, subject, test, method, lit);
    return test;
}

/* The IP set of an IPSET literal: its ranges sorted and merged. */
uint32_t cg_ipset(cg *g, const ast *lit)
{
    for (uint32_t i = 0; i < g->P.nipsets; i++)
        if (g->P.ipset_node[i] == lit) return i;
    uint32_t first = g->P.nranges, n = 0;
    for (const ast *el = lit->a; el; el = el->next) {
        if (GROW(g, g->P.ranges, g->P.capranges, g->P.nranges + 1)) return 0;
        memcpy(g->P.ranges[g->P.nranges].lo, el->str, 16);
        memcpy(g->P.ranges[g->P.nranges].hi, el->str + 16, 16);
        g->P.nranges++;
        n++;
    }
    n = (uint32_t)vm_iprange_normalize(g->P.ranges + first, n);
    g->P.nranges = first + n;
    if (GROW(g, g->P.ipsets, g->P.capipsets, g->P.nipsets + 1)) return 0;
    if (GROW(g, g->P.ipset_node, g->P.capipnode, g->P.nipsets + 1)) return 0;
    g->P.ipsets[g->P.nipsets] = (vm_ipset){first, n};
    g->P.ipset_node[g->P.nipsets] = lit;
    return g->P.nipsets++;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The int set of an INTSET literal: its values sorted, duplicates
 * dropped (the loader refuses a set that is not strictly increasing). */
uint32_t cg_intset(cg *g, const ast *lit)
{
    for (uint32_t i = 0; i < g->P.nintsets; i++)
        if (g->P.intset_node[i] == lit) return i;
    uint32_t first = g->P.nints, n = 0;
    for (const ast *el = lit->a; el; el = el->next) {
        if (GROW(g, g->P.ints, g->P.capints, g->P.nints + 1)) return 0;
        g->P.ints[g->P.nints++] = el->ival;
        n++;
    }
    qsort(g->P.ints + first, n, sizeof *g->P.ints, cmp_i64);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || g->P.ints[first + i] != g->P.ints[first + k - 1])
            g->P.ints[first + k++] = g->P.ints[first + i];
    g->P.nints = first + k;
    if (GROW(g, g->P.intsets, g->P.capintsets, g->P.nintsets + 1)) return 0;
    if (GROW(g, g->P.intset_node, g->P.capintnode, g->P.nintsets + 1)) return 0;
    g->P.intsets[g->P.nintsets] = (vm_intset){first, k};
    g->P.intset_node[g->P.nintsets] = lit;
    return g->P.nintsets++;
}

/* When `e` is a scan of a request field by a literal (what
 * gen_string_test compiles to OP_SCANF), returns its receiver and sets
 * *method and *lit; otherwise NULL. */
ast *cg_field_scan(ast *e, int *method, ast **lit)
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

int cg_same_field(const ast *a, const ast *b)
{
    return a->origin == b->origin &&
           (a->origin != ORIGIN_HEADER || strcmp(a->oname, b->oname) == 0);
}

/* The operands of a chain of ||, left to right, into ops[] (up to max);
 * returns how many there are. */
uint32_t cg_or_operands(ast *e, ast **ops, uint32_t n, uint32_t max)
{
    if (e->kind == AST_OR) return cg_or_operands(e->b, ops, cg_or_operands(e->a, ops, n, max), max);
    if (n < max) ops[n] = e;
    return n + 1;
}

/* When condition `e` is true only if a field scan is, because it is one
 * or an || of several on the same request field, returns that field's
 * receiver (else NULL). */
ast *cg_cond_field(ast *e)
{
    int m;
    ast *k;
    if (e->kind != AST_OR) return cg_field_scan(e, &m, &k);
    ast *a = cg_cond_field(e->a), *b = a ? cg_cond_field(e->b) : NULL;
    return b && cg_same_field(a, b) ? a : NULL;
}

/* Adds the patterns of every field scan of cg_cond_field() condition `e` to
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
    cg_field_scan(e, &m, &k);
    add_test_patterns(g, s, t, m, k);
}

/* An `if` without else whose condition is cg_cond_field()'s: its receiver. */
static ast *guardable_if(ast *s)
{
    return s->kind == AST_IF && !s->c ? cg_cond_field(s->a) : NULL;
}

/* Chain guards (cg_guard_run): a run of at least GUARD_MIN statements
 * `if FIELD-SCAN { ... }` on one request field (ai_robots.check's 64
 * categories, one `if` each) does nothing at all when no condition holds,
 * which is the common case (a browser). One more test, whose patterns are
 * all of the run's, answers "does any hold?", and when it does not, one
 * jump skips the run: 2 instructions instead of 2 per `if`. The patterns
 * are Hyperscan's to deduplicate; they cost database bytes, not scan time
 * (docs/performance.md). */
enum { GUARD_MIN = 4 };

int cg_guard_run(cg *g, ast *first, ast **end, uint32_t *test, uint32_t *s)
{
    ast *recv = guardable_if(first), *e = first->next, *r2;
    uint32_t n = 1;
    while (recv && e && (r2 = guardable_if(e)) && cg_same_field(recv, r2)) {
        e = e->next;
        n++;
    }
    if (n < GUARD_MIN) return 0;
    *end = e;
    *s = cg_subject(g, recv->origin, recv->oname);
    if (new_test(g, *s, TEST_KEY_CHAIN_GUARD, first, test))
        for (ast *q = first; q != e; q = q->next) add_cond_patterns(g, *s, *test, q->a);
    return 1;
}

/* Test merging: in `a || b || ...`, a run of neighbouring operands that
 * scan the same request field by literals is one question to Hyperscan,
 * so it becomes one test whose patterns are all of theirs, answered by
 * one OP_SCANF: `ua.matches(/x/) || ua.matches(/y/) || ...` over the
 * 1,493 crawler-user-agents patterns costs one bit test instead of 1,493
 * (each with its branch). Sound because a field scan has no effect and
 * cannot fail once the field was scanned. Keyed by the first operand. */
uint32_t cg_merged_test(cg *g, ast *const *ops, uint32_t n, uint32_t *s)
{
    int m;
    ast *k, *recv = cg_field_scan(ops[0], &m, &k);
    uint32_t t;
    *s = cg_subject(g, recv->origin, recv->oname);
    if (new_test(g, *s, TEST_KEY_MERGED_OR, ops[0], &t))
        for (uint32_t q = 0; q < n; q++) {
            cg_field_scan(ops[q], &m, &k);
            add_test_patterns(g, *s, t, m, k);
        }
    return t;
}

/* The same for an || of scans of one field used as a value (not as a
 * condition): keyed by the || node itself. */
uint32_t cg_merged_cond_test(cg *g, ast *e, uint32_t *s)
{
    ast *recv = cg_cond_field(e);
    uint32_t t;
    *s = cg_subject(g, recv->origin, recv->oname);
    if (new_test(g, *s, TEST_KEY_MERGED_OR, e, &t)) add_cond_patterns(g, *s, t, e);
    return t;
}
