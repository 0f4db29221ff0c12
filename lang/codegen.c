/*
 * codegen.c: the code generator's driver (cg.h, compile.h: cg_program).
 * `main` is function 0; every fn and filter it calls (and, for classifyc
 * --test, every filter a test names) gets the next index when first
 * called, and is generated from a work queue; then every other filter of
 * the main file (an entry, VM_FUNC_ENTRY, when it decides on every path)
 * and what it calls. Nothing else is emitted. Then each subject's
 * Hyperscan database is built
 * (vm/patterns.c) and the program serialized (lang/write.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "rw_build.h"
#include "write.h"

/* The stub entry of a test-only program of a file without `main`. */
static void gen_stub_entry(cg *g, ast *at)
{
    cg_func F;
    cg_func_begin(g, &F, NULL, at);
    cg_emit_bx(g, OP_ACCEPT, 0, VM_NO_REASON);
    vm_func fn = {cg_kstr(g, "(tests)", 7), VM_FUNC_FILTER, 0, 0, 0, 0, NULL, NULL, NULL,
                  VM_FUNC_ENTRY};
    cg_func_end(g, &fn);
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
            x->func = cg_func_index(g, f);
            x->filter = f->name;
            x->node = d;
            x->rate = (int)(d->flags & (AST_F_RATE_LE | AST_F_RATE_GE));
            if (x->rate && chk_parse_rate(d->b->str, d->b->slen, &x->percent) != 0) return -1;
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
    const ast *lit = g->P.pattern_node[bad];
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
    for (uint32_t i = 0; i < p->nrewrites; i++) rw_set_free(p->rewrites[i].set);
}

int cg_program(compilation *c, cg_tests *tests, uint8_t **out, size_t *outlen)
{
    cg g = {.c = c, .P = {.pos_file = UINT32_MAX}};
    int rc = -1;
    *out = NULL;
    /* `main` first, so it is function 0 (or a stub, for the tests of a
     * file without one); then what it calls, and what the tests name. */
    sym *main = chk_lookup_global(c->main, "main");
    int has_main = main && main->kind == SYM_FILTER;
    if (has_main) cg_func_index(&g, main);
    else if (tests) {
        ast at = {.file = c->main->file};
        gen_stub_entry(&g, &at);
        g.P.func_base = 1;
    }
    if (tests && collect_tests(&g, tests)) g.failed = 1;
    uint32_t q = 0;
    for (; q < g.P.nqueue && !g.failed; q++) cg_translate_function(&g, g.P.queue[q]);
    /* Then every other filter of the main file, in declaration order:
     * those that decide on every path are entries (clf_eval_filter). After
     * main's closure, so that main's function indices do not depend on
     * them. */
    for (uint32_t i = 0; i < c->main->nglobals; i++)
        if (c->main->global_vec[i]->kind == SYM_FILTER) cg_func_index(&g, c->main->global_vec[i]);
    for (; q < g.P.nqueue && !g.failed; q++) cg_translate_function(&g, g.P.queue[q]);
    if (!g.failed) cg_rewrites(&g);

    clf_program p = {0};
    p.consts = g.P.consts;
    p.funcs = g.P.funcs;
    p.nfuncs = g.P.nfuncs;
    /* A file of rewrite sets alone has no entry (the checker saw to the
     * rest); the tests of one without main run on the stub. */
    p.entry = has_main || tests ? 0 : VM_NO_ENTRY;
    p.hdrs = g.P.hdrs;
    p.nhdrs = g.P.nhdrs;
    p.subjects = g.P.subjects;
    p.nsubjects = g.P.nsubjects;
    p.patterns = g.P.patterns;
    p.npatterns = g.P.npatterns;
    p.ranges = g.P.ranges;
    p.nranges = g.P.nranges;
    p.ipsets = g.P.ipsets;
    p.nipsets = g.P.nipsets;
    p.ints = g.P.ints;
    p.nints = g.P.nints;
    p.intsets = g.P.intsets;
    p.nintsets = g.P.nintsets;
    p.capts = g.P.capts;
    p.ncapts = g.P.ncapts;
    p.rewrites = g.P.rewrites;
    p.nrewrites = g.P.nrewrites;
    p.slots = g.P.slots;
    p.nslots = g.P.nslots;
    if (g.failed || c->ar->failed) {
        src_error(c->src, UINT32_MAX, 0, "out of memory");
        goto done;
    }
    if (c->src->nerrors) goto done;
    for (uint32_t s = 0; s < g.P.nsubjects; s++) {
        char err[512];
        long bad = -1;
        p.nconsts = g.P.nconsts;
        if (vm_subject_build(&p, s, &g.P.subjects[s].db, &bad, err, sizeof err) != CLF_OK)
            report_pattern_error(&g, bad, err);
    }
    if (c->src->nerrors) goto done;
    p.nconsts = g.P.nconsts;
    char err[256];
    clf_status st = cc_write(&p, out, outlen, err, sizeof err);
    if (st != CLF_OK) {
        src_error(c->src, UINT32_MAX, 0, "%s", err);
        goto done;
    }
    rc = 0;
done:
    p.nsubjects = g.P.nsubjects;
    free_program(&p);
    free(g.P.consts);
    free(g.P.funcs);
    free(g.P.hdrs);
    free(g.P.subjects);
    free(g.P.patterns);
    free(g.P.pattern_node);
    free(g.P.tests);
    free(g.P.ranges);
    free(g.P.ipsets);
    free(g.P.ipset_node);
    free(g.P.ints);
    free(g.P.intsets);
    free(g.P.intset_node);
    free(g.P.capts);
    free(g.P.rewrites);
    free(g.P.slots);
    free(g.P.queue);
    strmap_free(&g.P.kstr);
    return rc;
}

