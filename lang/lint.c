/*
 * lint.c: warnings about rules that are legal but silently miss
 * (docs/language.md, "Lints"). Runs on the checked AST of the main file
 * only (a package's lints are its authors' business: tests/lint runs
 * them on every stdlib package), after check.c and before codegen.
 *
 *   dead-element  a set element that can never be what decides, since
 *                 another element of the same test matches wherever it
 *                 does ("Bot" before "GoodBot" under contains)
 *   shadowed      an `if` whose block never runs: its condition implies
 *                 the condition of an earlier `if` of the same block that
 *                 always decides, or of an `if` it is the `else` of
 *   case          a case-sensitive User-Agent pattern that differs only in
 *                 case from a pattern of another set of the program, or
 *                 (with a User-Agent corpus) that matches no User-Agent as
 *                 written but some ignoring case: the LightPanda class
 *   short-token   (with a corpus) `contains` of a short (4 bytes at most)
 *                 or generic word-character token that also matches
 *                 inside longer words of real User-Agents
 *   data-age      (with --max-data-age N) a module, imported or not, whose
 *                 `// data-date:` header line is more than N days old
 *
 * Each is silenced by a comment `clf:allow(NAME)` on the warned line or
 * the line above it. The implication test is conservative: it only
 * claims "implies" for structurally equal expressions of immutable
 * values, boolean structure around them, and string tests whose patterns
 * subsume each other; anything else is "don't know", never a warning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chars.h"
#include "compile.h"
#include "lint.h"

/* Sets larger than this are only checked for duplicates: the subsumption
 * check is quadratic. */
#define LINT_MAX_PAIRWISE 1024u

typedef struct lint {
    compilation *c;
    const lint_corpus *corpus;
    uint32_t file; /* the main file */
    long budget;   /* nodes implies() may still compare (implies_bounded) */
    /* (node, lint) pairs already warned about: a const set tested in
     * several places warns once. */
    struct warned {
        struct warned *next;
        const ast *node;
        int kind;
    } *warned;
} lint;

enum { L_DEAD, L_SHADOWED, L_CASE, L_SHORT };
static const char *const lint_names[] = {"dead-element", "shadowed", "case", "short-token"};

/* ---- suppression and reporting ------------------------------------------ */

static int allowed(lint *L, uint32_t file, uint32_t off, int kind)
{
    src_file *f = &L->c->src->files[file];
    uint32_t line, col;
    src_linecol(f, off, &line, &col);
    char tag[40];
    snprintf(tag, sizeof tag, "clf:allow(%s)", lint_names[kind]);
    size_t tl = strlen(tag);
    /* the warned line and the one above it */
    uint32_t start = off - (col - 1), from = start;
    if (line > 1) {
        from = start - 1;
        while (from > 0 && f->text[from - 1] != '\n') from--;
    }
    uint32_t end = off;
    while (end < f->len && f->text[end] != '\n') end++;
    for (uint32_t i = from; i + tl <= end; i++)
        if (memcmp(f->text + i, tag, tl) == 0) return 1;
    return 0;
}

static int once(lint *L, const ast *node, int kind)
{
    for (struct warned *w = L->warned; w; w = w->next)
        if (w->node == node && w->kind == kind) return 0;
    struct warned *w = arena_alloc(L->c->ar, sizeof *w);
    if (!w) return 0;
    *w = (struct warned){L->warned, node, kind};
    L->warned = w;
    return 1;
}

/* A pattern quoted for a message: printable ASCII, the rest as \xNN, at
 * most about 60 bytes. */
static const char *quote(char *buf, size_t cap, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 8 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (k > 60) {
            memcpy(buf + k, "...", 3);
            k += 3;
            break;
        }
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') buf[k++] = (char)ch;
        else k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", ch);
    }
    buf[k] = '\0';
    return buf;
}

static uint32_t line_of(lint *L, const ast *n)
{
    uint32_t line, col;
    src_linecol(&L->c->src->files[n->file], n->off, &line, &col);
    return line;
}

/* ---- patterns --------------------------------------------------------- */

/* One string test: a method and its patterns (a STR or a SET's elements). */
typedef struct ptest {
    int method;       /* M_CONTAINS .. M_CONTAINS_WORD */
    const ast *recv;  /* the tested value */
    const ast *lit;   /* the STR or SET literal */
    int caseless;
} ptest;

static int is_string_test(int m)
{
    return m == M_CONTAINS || m == M_STARTS_WITH || m == M_ENDS_WITH || m == M_EQUALS ||
           m == M_CONTAINS_WORD;
}

/* The string test `e` makes, if it is one with literal patterns. */
static int as_ptest(ast *e, ptest *t)
{
    if (e->kind == AST_CALL && is_string_test(e->method) && e->a && e->b && !e->b->next) {
        const ast *lit = chk_literal(e->b);
        if (!lit || (lit->kind != AST_STR && lit->kind != AST_SET)) return 0;
        *t = (ptest){e->method, e->a, lit, lit->kind == AST_SET && (lit->flags & AST_F_CASELESS)};
        return 1;
    }
    if (e->kind == AST_IN && e->a && e->a->type == T_STR) {
        const ast *lit = chk_literal(e->b);
        if (!lit || lit->kind != AST_SET) return 0;
        *t = (ptest){M_EQUALS, e->a, lit, (lit->flags & AST_F_CASELESS) != 0};
        return 1;
    }
    return 0;
}

/* The i-th pattern node of a test's literal (a STR is its own only one). */
static const ast *first_pattern(const ast *lit) { return lit->kind == AST_STR ? lit : lit->a; }
static const ast *next_pattern(const ast *lit, const ast *p)
{
    return lit->kind == AST_STR ? NULL : p->next;
}

static int bytes_eq(const char *a, const char *b, size_t n, int caseless)
{
    if (!caseless) return memcmp(a, b, n) == 0;
    for (size_t i = 0; i < n; i++)
        if (vm_ascii_lower((unsigned char)a[i]) != vm_ascii_lower((unsigned char)b[i])) return 0;
    return 1;
}

static int find(const char *h, size_t hn, const char *n, size_t nn, int caseless)
{
    if (nn > hn) return -1;
    for (size_t i = 0; i + nn <= hn; i++)
        if (bytes_eq(h + i, n, nn, caseless)) return (int)i;
    return -1;
}

/* Whether every value that passes test (m2, p2) passes (m1, p1) too. With
 * caseless1 the first test ignores case; a caseless second test is only
 * covered by a caseless first. */
static int covers(int m1, const ast *p1, int caseless1, int m2, const ast *p2, int caseless2)
{
    if (caseless2 && !caseless1) return 0;
    const char *a = p1->str, *b = p2->str;
    size_t an = p1->slen, bn = p2->slen;
    switch (m1) {
    case M_CONTAINS:
        return m2 != M_CONTAINS_WORD ? find(b, bn, a, an, caseless1) >= 0
                                     : find(b, bn, a, an, caseless1) >= 0 && an > 0;
    case M_STARTS_WITH:
        return (m2 == M_STARTS_WITH || m2 == M_EQUALS) && an <= bn &&
               bytes_eq(a, b, an, caseless1);
    case M_ENDS_WITH:
        return (m2 == M_ENDS_WITH || m2 == M_EQUALS) && an <= bn &&
               bytes_eq(a, b + bn - an, an, caseless1);
    case M_EQUALS:
        return m2 == M_EQUALS && an == bn && bytes_eq(a, b, an, caseless1);
    case M_CONTAINS_WORD:
        return (m2 == M_CONTAINS_WORD || m2 == M_EQUALS) && an == bn &&
               bytes_eq(a, b, an, caseless1);
    }
    return 0;
}

/* ---- structural equality and implication ------------------------------ */

static int same_expr(const ast *x, const ast *y, long *budget);

static int same_list(const ast *x, const ast *y, long *budget)
{
    for (; x && y; x = x->next, y = y->next)
        if (!same_expr(x, y, budget)) return 0;
    return !x && !y;
}

/* Equal expressions of values that cannot change between two tests: a
 * `let mut` local may be assigned in between, so it is never equal. */
static int same_expr(const ast *x, const ast *y, long *budget)
{
    if (--*budget < 0) return 0; /* out of time: "don't know" */
    /* chains of || and && lean left: walk their spines, don't recurse */
    while (x && y && x->kind == y->kind && (x->kind == AST_OR || x->kind == AST_AND)) {
        if (!same_expr(x->b, y->b, budget)) return 0;
        x = x->a;
        y = y->a;
    }
    x = chk_literal((ast *)x);
    y = chk_literal((ast *)y);
    if (!x || !y) return 0;
    if (x == y) return 1;
    if (x->kind != y->kind) return 0;
    switch (x->kind) {
    case AST_NAME: {
        const sym *s = x->sym;
        return s && s == y->sym && !(s->kind == SYM_LOCAL && s->mut);
    }
    case AST_MEMBER:
        return x->field == y->field && x->slen == y->slen && strcmp(x->str, y->str) == 0 &&
               same_expr(x->a, y->a, budget);
    case AST_CALL:
        /* A state call is never "the same" as another: each counts,
         * adds or reads what the one before it wrote. */
        if (x->method != y->method || x->method == M_FUNC || x->method == M_NONE ||
            (x->method >= M_ST_COUNT && x->method <= M_ST_MARKED))
            return 0;
        return ((!x->a && !y->a) || (x->a && y->a && same_expr(x->a, y->a, budget))) &&
               same_list(x->b, y->b, budget);
    case AST_STR: case AST_REGEX:
        return x->slen == y->slen && memcmp(x->str, y->str, x->slen) == 0 &&
               x->flags == y->flags;
    case AST_INT: case AST_BOOL:
        return x->ival == y->ival;
    case AST_SET:
        return x->flags == y->flags && same_list(x->a, y->a, budget);
    case AST_NOT: case AST_NEG:
        return same_expr(x->a, y->a, budget);
    case AST_OR: case AST_AND: case AST_EQ: case AST_NE: case AST_LT: case AST_LE:
    case AST_GT: case AST_GE: case AST_IN: case AST_ADD: case AST_SUB: case AST_MUL:
    case AST_DIV: case AST_MOD:
        return same_expr(x->a, y->a, budget) && same_expr(x->b, y->b, budget);
    default:
        return 0;
    }
}

/* Whether c2 true implies c1 true (1), or "don't know" (0). *budget
 * bounds the work (nodes compared): long chains of || and && would
 * otherwise branch at every level. */
static int implies(ast *c2, ast *c1, int depth, long *budget)
{
    if (depth > 64 || *budget < 0) return 0;
    if (same_expr(c2, c1, budget)) return 1;
    int d = depth + 1;
    if (c2->kind == AST_AND && (implies(c2->a, c1, d, budget) || implies(c2->b, c1, d, budget)))
        return 1;
    if (c2->kind == AST_OR && implies(c2->a, c1, d, budget) && implies(c2->b, c1, d, budget))
        return 1;
    if (c1->kind == AST_OR && (implies(c2, c1->a, d, budget) || implies(c2, c1->b, d, budget)))
        return 1;
    if (c1->kind == AST_AND && implies(c2, c1->a, d, budget) && implies(c2, c1->b, d, budget))
        return 1;
    ptest t1, t2;
    if (!as_ptest(c1, &t1) || !as_ptest(c2, &t2) || !same_expr(t1.recv, t2.recv, budget)) return 0;
    /* every pattern of c2 covered by some pattern of c1 */
    for (const ast *p2 = first_pattern(t2.lit); p2; p2 = next_pattern(t2.lit, p2)) {
        int ok = 0;
        for (const ast *p1 = first_pattern(t1.lit); p1 && !ok; p1 = next_pattern(t1.lit, p1))
            ok = covers(t1.method, p1, t1.caseless, t2.method, p2, t2.caseless);
        if (!ok) return 0;
    }
    return first_pattern(t2.lit) != NULL;
}

/* implies() with a budget of nodes per question and one for the whole
 * file, so that no program makes the lint pass slow: past it, "don't
 * know". */
#define LINT_IMPLY_BUDGET 20000L
#define LINT_TOTAL_BUDGET 20000000L
static int implies_bounded(lint *L, ast *c2, ast *c1)
{
    if (L->budget <= 0) return 0;
    long budget = LINT_IMPLY_BUDGET < L->budget ? LINT_IMPLY_BUDGET : L->budget;
    long before = budget;
    int r = implies(c2, c1, 0, &budget);
    L->budget -= before - (budget > 0 ? budget : 0);
    return r;
}

/* Whether every path through a block ends in accept, reject or return. */
static int decides(const ast *blk);

static int if_decides(const ast *s)
{
    if (!s->c || !decides(s->b)) return 0;
    return s->c->kind == AST_IF ? if_decides(s->c) : decides(s->c);
}

static int decides(const ast *blk)
{
    for (const ast *s = blk ? blk->a : NULL; s; s = s->next) {
        if (s->kind == AST_ACCEPT || s->kind == AST_REJECT || s->kind == AST_RETURN) return 1;
        if (s->kind == AST_IF && if_decides(s)) return 1;
    }
    return 0;
}

/* ---- the lints --------------------------------------------------------- */

static void warn_dead(lint *L, const ast *p, const ast *q, int dup)
{
    if (allowed(L, p->file, p->off, L_DEAD) || !once(L, p, L_DEAD)) return;
    char a[96], b[96];
    quote(a, sizeof a, p->str, p->slen);
    quote(b, sizeof b, q->str, q->slen);
    if (dup)
        src_warning(L->c->src, p->file, p->off,
                    "\"%s\" is in this set twice (line %u): the second can never decide", a,
                    line_of(L, q));
    else
        src_warning(L->c->src, p->file, p->off,
                    "\"%s\" can never decide: \"%s\" (line %u) of the same set matches wherever "
                    "it does",
                    a, b, line_of(L, q));
}

/* qsort orders of pattern nodes: by bytes (or ASCII-lowered bytes), then
 * length, then the first written first. Two functions, not a flag, so
 * that no global state decides. */
static int cmp_pattern_by(const ast *p, const ast *q, int caseless)
{
    size_t n = p->slen < q->slen ? p->slen : q->slen;
    for (size_t i = 0; i < n; i++) {
        int a = (unsigned char)p->str[i], b = (unsigned char)q->str[i];
        if (caseless) a = vm_ascii_lower((unsigned char)a), b = vm_ascii_lower((unsigned char)b);
        if (a != b) return a - b;
    }
    if (p->slen != q->slen) return p->slen < q->slen ? -1 : 1;
    return p->off < q->off ? -1 : p->off > q->off;
}

static int cmp_pattern(const void *x, const void *y)
{
    return cmp_pattern_by(*(const ast *const *)x, *(const ast *const *)y, 0);
}

static int cmp_pattern_caseless(const void *x, const void *y)
{
    return cmp_pattern_by(*(const ast *const *)x, *(const ast *const *)y, 1);
}

/* A large set: duplicates only, by sorting (the pairwise check of
 * lint_dead_elements is quadratic). */
static void lint_duplicates(lint *L, const ptest *t, uint32_t n)
{
    const ast **v = malloc(n * sizeof *v);
    if (!v) return;
    uint32_t k = 0;
    for (const ast *p = t->lit->a; p; p = p->next) v[k++] = p;
    qsort(v, n, sizeof *v, t->caseless ? cmp_pattern_caseless : cmp_pattern);
    for (uint32_t i = 1; i < n; i++)
        if (v[i]->slen == v[i - 1]->slen &&
            bytes_eq(v[i]->str, v[i - 1]->str, v[i]->slen, t->caseless)) {
            uint32_t j = i - 1;
            while (j > 0 && v[j - 1]->slen == v[i]->slen &&
                   bytes_eq(v[j - 1]->str, v[i]->str, v[i]->slen, t->caseless))
                j--;
            warn_dead(L, v[i], v[j], 1);
        }
    free(v);
}

static void lint_dead_elements(lint *L, const ptest *t)
{
    const ast *set = t->lit;
    if (set->kind != AST_SET || set->file != L->file) return;
    uint32_t n = 0;
    for (const ast *p = set->a; p; p = p->next) n++;
    if (n > LINT_MAX_PAIRWISE) {
        lint_duplicates(L, t, n);
        return;
    }
    for (const ast *p = set->a; p; p = p->next) {
        for (const ast *q = set->a; q; q = q->next) {
            if (q == p) continue;
            int dup = p->slen == q->slen && bytes_eq(p->str, q->str, p->slen, t->caseless);
            /* of two equal elements the later one is dead */
            if (dup && q->off > p->off) continue;
            if (!dup && !covers(t->method, q, t->caseless, t->method, p, t->caseless)) continue;
            warn_dead(L, p, q, dup);
            break;
        }
    }
}

static int is_user_agent(const ast *recv)
{
    return recv->origin == ORIGIN_HEADER && recv->oname && strcmp(recv->oname, "user-agent") == 0;
}

/* Whether value v (n bytes) passes test method m with pattern p. */
static int passes(int m, const char *v, size_t n, const char *p, size_t pn, int caseless)
{
    switch (m) {
    case M_CONTAINS: return find(v, n, p, pn, caseless) >= 0;
    case M_STARTS_WITH: return pn <= n && bytes_eq(v, p, pn, caseless);
    case M_ENDS_WITH: return pn <= n && bytes_eq(v + n - pn, p, pn, caseless);
    case M_EQUALS: return pn == n && bytes_eq(v, p, n, caseless);
    case M_CONTAINS_WORD:
        for (size_t i = 0; i + pn <= n; i++)
            if (bytes_eq(v + i, p, pn, caseless) && pn > 0 &&
                (i == 0 || !vm_is_word((unsigned char)v[i - 1])) &&
                (i + pn == n || !vm_is_word((unsigned char)v[i + pn])))
                return 1;
        return 0;
    }
    return 0;
}

/* Every case-sensitive literal pattern of the program's string tests and
 * sets, for the cross-set case check: one list, built once. */
typedef struct pat_ref {
    struct pat_ref *next;
    const ast *pat, *set;
} pat_ref;

static void lint_case(lint *L, const ptest *t, const pat_ref *all)
{
    if (t->caseless || !is_user_agent(t->recv)) return;
    for (const ast *p = first_pattern(t->lit); p; p = next_pattern(t->lit, p)) {
        if (p->file != L->file || p->slen == 0) continue;
        int letters = 0;
        for (uint32_t i = 0; i < p->slen; i++) letters += vm_is_alpha((unsigned char)p->str[i]);
        if (!letters) continue;
        char a[96], b[96];
        if (L->corpus && L->corpus->n) {
            size_t exact = 0, folded = 0, example = 0;
            for (size_t k = 0; k < L->corpus->n && !exact; k++) {
                const lint_ua *u = &L->corpus->uas[k];
                if (passes(t->method, u->s, u->n, p->str, p->slen, 0)) exact++;
                else if (passes(t->method, u->s, u->n, p->str, p->slen, 1) && !folded++)
                    example = k;
            }
            if (!exact && folded) {
                if (allowed(L, p->file, p->off, L_CASE) || !once(L, p, L_CASE)) continue;
                const lint_ua *u = &L->corpus->uas[example];
                src_warning(L->c->src, p->file, p->off,
                            "\"%s\" matches no User-Agent of the corpus as written, but %zu "
                            "ignoring case, such as \"%s\": write it as clients spell it, or "
                            "make the set caseless with ]i",
                            quote(a, sizeof a, p->str, p->slen), folded,
                            quote(b, sizeof b, u->s, u->n));
                continue;
            }
            if (exact) continue; /* the corpus shows this spelling is real */
        }
        for (const pat_ref *r = all; r; r = r->next) {
            const ast *q = r->pat;
            if (r->set == t->lit || q->slen != p->slen || memcmp(q->str, p->str, p->slen) == 0 ||
                !bytes_eq(q->str, p->str, p->slen, 1))
                continue;
            /* of two spellings in the main file, the later one is warned */
            if (q->file == p->file && q->off > p->off) continue;
            if (allowed(L, p->file, p->off, L_CASE) || !once(L, p, L_CASE)) break;
            const src_file *f = &L->c->src->files[q->file];
            src_warning(L->c->src, p->file, p->off,
                        "\"%s\" differs only in case from \"%s\" (%s:%u): one of them is likely "
                        "misspelt, or the test should be caseless (]i)",
                        quote(a, sizeof a, p->str, p->slen), quote(b, sizeof b, q->str, q->slen),
                        f->path, line_of(L, q));
            break;
        }
    }
}

/* Tokens too generic to look for without word bounds, beside every one of
 * at most 4 bytes. */
static const char *const generic_words[] = {
    "Agent", "Bot", "Check", "Client", "Code", "Crawl", "Fetch", "Get", "Http", "Java",
    "Link", "Monitor", "Preview", "Python", "Scan", "Search", "Spider", "Test", "Tool", NULL};

static void lint_short_tokens(lint *L, const ptest *t)
{
    if (t->method != M_CONTAINS || !L->corpus || !L->corpus->n || !is_user_agent(t->recv)) return;
    for (const ast *p = first_pattern(t->lit); p; p = next_pattern(t->lit, p)) {
        if (p->file != L->file || p->slen == 0) continue;
        /* a token with punctuation ("Edg/") is specific however short */
        int wordy = 1;
        for (uint32_t i = 0; i < p->slen; i++) wordy &= vm_is_word((unsigned char)p->str[i]) != 0;
        if (!wordy) continue;
        int generic = p->slen <= 4;
        for (int i = 0; !generic && generic_words[i]; i++)
            generic = strlen(generic_words[i]) == p->slen &&
                      bytes_eq(generic_words[i], p->str, p->slen, 1);
        if (!generic) continue;
        size_t inside = 0, example = 0;
        for (size_t k = 0; k < L->corpus->n; k++) {
            const lint_ua *u = &L->corpus->uas[k];
            if (passes(M_CONTAINS, u->s, u->n, p->str, p->slen, t->caseless) &&
                !passes(M_CONTAINS_WORD, u->s, u->n, p->str, p->slen, t->caseless) && !inside++)
                example = k;
        }
        if (!inside || allowed(L, p->file, p->off, L_SHORT) || !once(L, p, L_SHORT)) continue;
        char a[96], b[96];
        const lint_ua *u = &L->corpus->uas[example];
        src_warning(L->c->src, p->file, p->off,
                    "contains(\"%s\") also matches inside longer words in %zu of the %zu "
                    "User-Agents of the corpus, such as \"%s\": use contains_word, or a longer "
                    "token",
                    quote(a, sizeof a, p->str, p->slen), inside, L->corpus->n,
                    quote(b, sizeof b, u->s, u->n));
    }
}

/* ---- walking ----------------------------------------------------------- */

typedef struct walk {
    lint *L;
    pat_ref *pats;
} walk;

typedef void ptest_fn(walk *w, const ptest *t);

/* Calls fn on every string test with literal patterns in e. */
static void each_test(walk *w, ast *e, int depth, ptest_fn *fn)
{
    if (!e || depth > CC_MAX_EXPR_DEPTH) return;
    /* operator chains are long lists to the left: iterate, don't recurse */
    while (e && (e->kind == AST_OR || e->kind == AST_AND)) {
        each_test(w, e->b, depth + 1, fn);
        e = e->a;
    }
    if (!e) return;
    ptest t;
    if (as_ptest(e, &t)) fn(w, &t);
    if (e->kind == AST_CALL) {
        each_test(w, e->a, depth + 1, fn);
        for (ast *a = e->b; a; a = a->next) each_test(w, a, depth + 1, fn);
    } else if (e->kind != AST_SET && e->kind != AST_IPSET && e->kind != AST_INTSET) {
        each_test(w, e->a, depth + 1, fn);
        each_test(w, e->b, depth + 1, fn);
    }
}

/* The pattern lints of one test. */
static void lint_test(walk *w, const ptest *t)
{
    lint_dead_elements(w->L, t);
    lint_case(w->L, t, w->pats);
    lint_short_tokens(w->L, t);
}

/* One test's case-sensitive User-Agent patterns, for the cross-set case
 * check. */
static void collect_test(walk *w, const ptest *t)
{
    if (t->caseless || !is_user_agent(t->recv)) return;
    for (const ast *p = first_pattern(t->lit); p; p = next_pattern(t->lit, p)) {
        pat_ref *r = arena_alloc(w->L->c->ar, sizeof *r);
        if (!r) return;
        *r = (pat_ref){w->pats, p, t->lit};
        w->pats = r;
    }
}

static void warn_shadowed(lint *L, ast *s, const ast *by, int is_else)
{
    if (s->file != L->file || allowed(L, s->file, s->off, L_SHADOWED) || !once(L, s, L_SHADOWED))
        return;
    if (is_else)
        src_warning(L->c->src, s->file, s->off,
                    "this `else if` can never run its block: its condition implies that of the "
                    "`if` at line %u, which is tested first",
                    line_of(L, by));
    else
        src_warning(L->c->src, s->file, s->off,
                    "this `if` can never run its block: its condition implies that of the `if` "
                    "at line %u, which decides every such request first",
                    line_of(L, by));
}

/* Calls fn on every string test of a block's statements, nested blocks
 * included; with `shadows`, also warns about each `if` whose condition
 * implies that of an earlier deciding `if` of the block (one without
 * else), or of an `if` of its own else-if chain. */
static void walk_block(walk *w, ast *blk, int depth, ptest_fn *fn, int shadows)
{
    if (!blk || depth > 200) return;
    ast *deciding[64];
    int nd = 0;
    for (ast *s = blk->a; s; s = s->next) {
        if (s->kind == AST_LET || s->kind == AST_ASSIGN || s->kind == AST_RETURN ||
            s->kind == AST_EXPRSTMT) {
            each_test(w, s->a, 0, fn);
            continue;
        }
        if (s->kind != AST_IF) continue;
        for (int i = 0; shadows && i < nd; i++)
            if (implies_bounded(w->L, s->a, deciding[i]->a)) {
                warn_shadowed(w->L, s, deciding[i]->a, 0);
                break;
            }
        ast *conds[64];
        int n = 0;
        for (ast *x = s; x && x->kind == AST_IF; x = x->c) {
            for (int i = 0; shadows && i < n; i++)
                if (implies_bounded(w->L, x->a, conds[i])) {
                    warn_shadowed(w->L, x, conds[i], 1);
                    break;
                }
            if (n < 64) conds[n++] = x->a;
            each_test(w, x->a, 0, fn);
            walk_block(w, x->b, depth + 1, fn, shadows);
            if (x->c && x->c->kind == AST_BLOCK) walk_block(w, x->c, depth + 1, fn, shadows);
        }
        if (shadows && !s->c && decides(s->b) && nd < 64) deciding[nd++] = s;
    }
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so that no time zone or libc enters the lint. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* data-age: each module of the compilation whose leading comment has a
 * line `// data-date: YYYY-MM-DD` (the generated packages: the date of
 * the upstream data they were made from). The warning stands at that
 * line; the import chain the driver adds names the user's import. */
static void lint_data_age(lint *L)
{
    const cc_options *o = L->c->opts;
    if (!o->max_data_age) return;
    int64_t today = o->now / 86400;
    static const char tag[] = "// data-date: ";
    for (module *m = L->c->modules; m; m = m->next) {
        const src_file *f = &L->c->src->files[m->file];
        uint32_t at = 0;
        for (int line = 0; line < 80 && at < f->len; line++) {
            const char *p = f->text + at, *nl = memchr(p, '\n', f->len - at);
            size_t n = nl ? (size_t)(nl - p) : f->len - at;
            if (n < 2 || p[0] != '/' || p[1] != '/') break; /* the leading comment ended */
            int y, mo, d;
            char c1, c2;
            if (n >= sizeof tag - 1 + 10 && memcmp(p, tag, sizeof tag - 1) == 0 &&
                sscanf(p + sizeof tag - 1, "%4d%c%2d%c%2d", &y, &c1, &mo, &c2, &d) == 5 &&
                c1 == '-' && c2 == '-' && mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
                int64_t age = today - days_from_civil(y, (unsigned)mo, (unsigned)d);
                uint32_t off = at + (uint32_t)sizeof tag - 1;
                if (age > (int64_t)o->max_data_age)
                    src_warning(L->c->src, m->file, off,
                                "this package's data is from %04d-%02d-%02d, %lld days ago (over "
                                "--max-data-age %u): regenerate it as its header says, or "
                                "import a fresher copy",
                                y, mo, d, (long long)age, o->max_data_age);
                break;
            }
            at += (uint32_t)n + 1;
        }
    }
}

void lint_program(compilation *c)
{
    const lint_corpus *corpus = c->opts->lint_corpus;
    lint L = {.c = c, .corpus = corpus, .file = c->main->file, .budget = LINT_TOTAL_BUDGET};
    lint_data_age(&L);
    walk w = {&L, NULL};
    /* the patterns of every module, for the cross-set case check */
    for (module *m = c->modules; m; m = m->next)
        for (ast *it = m->items; it; it = it->next)
            if (it->kind == AST_FILTER || it->kind == AST_FN) walk_block(&w, it->b, 0, collect_test, 0);
    for (ast *it = c->main->items; it; it = it->next)
        if (it->kind == AST_FILTER || it->kind == AST_FN) walk_block(&w, it->b, 0, lint_test, 1);
}

/* ---- the corpus ------------------------------------------------------- */

int lint_corpus_add(lint_corpus *c, const char *path, uint64_t max, char *err, size_t errlen)
{
    size_t len;
    char *text = mod_read_file(path, max, &len, err, errlen);
    if (!text) return -1;
    char **nt = realloc(c->texts, (c->ntexts + 1) * sizeof *nt);
    if (!nt) {
        free(text);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    c->texts = nt;
    c->texts[c->ntexts++] = text;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
        if (n && text[at + n - 1] == '\r') n--;
        if (n) {
            if (c->n == c->cap) {
                size_t ncap = c->cap ? c->cap * 2 : 1024;
                lint_ua *nu = realloc(c->uas, ncap * sizeof *nu);
                if (!nu) {
                    snprintf(err, errlen, "%s: out of memory", path);
                    return -1;
                }
                c->uas = nu;
                c->cap = ncap;
            }
            c->uas[c->n++] = (lint_ua){text + at, n};
        }
        at = end + 1;
    }
    return 0;
}

void lint_corpus_free(lint_corpus *c)
{
    for (size_t i = 0; i < c->ntexts; i++) free(c->texts[i]);
    free(c->texts);
    free(c->uas);
    memset(c, 0, sizeof *c);
}
