/*
 * check_rewrite.c: rewrite sets, `rewrite NAME(OPTIONS) { PATTERN =>
 * TEMPLATE [once] ... }` (docs/language.md, "Rewrite sets"): unique names,
 * known options of the right types, and rules whose pattern is a string
 * (`"..."` or `"..."i`) or a regex, and whose template is a string, each
 * written in place or as a constant. The patterns and templates
 * themselves (dialect, empty matches, groups) are checked when the set is
 * built (lang/lower_rewrite.c, rewrite/rw_build.c), which reports every
 * problem of every rule at its place in the source.
 *
 * Rewrite sets have a namespace of their own (a host names one with
 * clf_rewriter_new, never in an expression), and are compiled only from
 * the file given to classifyc: an imported package's sets would otherwise
 * land in every program that imports it. Patterns and templates may come
 * from packages as constants.
 */
#include <string.h>

#include "check.h"
#include "format.h"
#include "rw_build.h"

/* The rw_mode a `semantics` string names (rw_mode_name), or -1. */
static int mode_of(const ast *v)
{
    for (int m = RW_MODE_SRW; v && v->kind == AST_STR && m <= RW_MODE_SUB_FILTER; m++) {
        const char *name = rw_mode_name((rw_mode)m);
        if (v->slen == strlen(name) && memcmp(v->str, name, v->slen) == 0) return m;
    }
    return -1;
}

int chk_rewrite_options(const ast *set, int *mode, uint32_t *max_match)
{
    *mode = 0;
    *max_match = UINT32_MAX; /* not given: the engine's default */
    for (const ast *o = set->a; o; o = o->next) {
        const ast *v = chk_literal(o->a);
        if (!v) return -1;
        if (strcmp(o->str, "semantics") == 0) {
            if ((*mode = mode_of(v)) < 0) return -1;
        } else if (strcmp(o->str, "max_match") == 0) {
            if (v->kind != AST_INT || v->ival < 0 || v->ival >= UINT32_MAX) return -1;
            *max_match = (uint32_t)v->ival;
        } else {
            return -1;
        }
    }
    return 0;
}

static void check_options(checker *ck, ast *set)
{
    int seen_mode = 0, seen_max = 0;
    for (ast *o = set->a; o; o = o->next) {
        int is_mode = strcmp(o->str, "semantics") == 0, is_max = strcmp(o->str, "max_match") == 0;
        if (!is_mode && !is_max) {
            ERR(ck, o, "unknown option '%s' of a rewrite set (options: semantics, max_match)",
                o->str);
            continue;
        }
        if ((is_mode && seen_mode++) || (is_max && seen_max++)) {
            ERR(ck, o, "option '%s' is given twice", o->str);
            continue;
        }
        ty t = chk_expr(ck, o->a);
        if (t == T_ERROR) continue;
        ast *v = chk_literal(o->a);
        if (is_mode) {
            if (mode_of(v) < 0)
                ERR(ck, o->a, "semantics must be \"leftmost_longest\" (the default), "
                              "\"replace_filter\" or \"sub_filter\"");
        } else if (!v || v->kind != AST_INT) {
            ERR(ck, o->a, "max_match must be an integer literal or constant (bytes)");
        } else if (v->ival < 0 || v->ival >= UINT32_MAX) {
            /* the engine reports the exact range, which depends on the mode */
            ERR(ck, o->a, "max_match %lld is out of range", (long long)v->ival);
        }
    }
}

static void check_rule(checker *ck, ast *r)
{
    ty pt = chk_expr(ck, r->a), tt = chk_expr(ck, r->b);
    ast *p = chk_literal(r->a), *t = chk_literal(r->b);
    if (pt != T_ERROR && (!p || (p->kind != AST_STR && p->kind != AST_REGEX)))
        ERR(ck, r->a, "a rewrite pattern must be a string or a regex, written here or as a "
                      "constant (not %s)", chk_type_names[pt]);
    if (tt != T_ERROR && (!t || t->kind != AST_STR))
        ERR(ck, r->b, "a rewrite template must be a string, written here or as a constant "
                      "(not %s)", chk_type_names[tt]);
}

void chk_rewrites(checker *ck, module *m)
{
    ck->m = m;
    strmap names = {0};
    ast **decl = NULL;
    uint32_t n = 0, cap = 0;
    for (ast *it = m->items; it; it = it->next) {
        if (it->kind != AST_REWRITE) continue;
        if (m != ck->c->main) {
            ERR(ck, it, "rewrite set '%s' is in an imported file: rewrite sets are compiled "
                        "from the file given to classifyc only (share patterns and templates "
                        "as pub constants instead)", it->str);
            continue;
        }
        uint32_t prev = strmap_get(&names, it->str, it->slen);
        if (prev != STRMAP_NONE) {
            diag *d = ERR(ck, it, "rewrite set '%s' is already defined", it->str);
            src_note(ck->c->src, d, decl[prev]->file, decl[prev]->off, "'%s' was defined here",
                     it->str);
        } else if (n == cap) {
            cap = cap ? cap * 2 : 8;
            ast **v = arena_alloc(ck->c->ar, cap * sizeof *v);
            if (v) {
                if (n) memcpy(v, decl, n * sizeof *v);
                decl = v;
            }
        }
        if (prev == STRMAP_NONE && decl && n < cap && strmap_put(&names, it->str, it->slen, n) == 0)
            decl[n++] = it;
        if (n == VM_MAX_REWRITE_SETS + 1)
            ERR(ck, it, "more than %u rewrite sets in one file", VM_MAX_REWRITE_SETS);
        check_options(ck, it);
        if (!it->b) ERR(ck, it, "rewrite set '%s' has no rules", it->str);
        for (ast *r = it->b; r; r = r->next) check_rule(ck, r);
    }
    strmap_free(&names);
}

int chk_has_rewrites(const module *m)
{
    for (const ast *it = m->items; it; it = it->next)
        if (it->kind == AST_REWRITE) return 1;
    return 0;
}
