/*
 * lower_rewrite.c: the main file's rewrite sets (cg.h, cg_rewrites),
 * built by the rewrite engine (rewrite/rw_build.h) into the program image;
 * the serializer stores them (lang/write.c, section VM_SEC_REWRITE).
 *
 * Each rule becomes an rw_rule_desc: a string pattern a literal (`"..."i`
 * caseless), a regex pattern a regex with its flags i, s and m, `once`
 * RW_ONCE, and the rule's source position. rw_build checks every rule and
 * reports each problem with the place inside the pattern or template;
 * here each becomes an error at that byte of the source (through the
 * string literal's escapes), with a note at the rule when the literal is
 * a constant declared elsewhere.
 */
#include <string.h>

#include "cg.h"
#include "rw_build.h"

/* The source offset of byte `k` of the decoded string literal at `lit`
 * (its token starts with the quote): escapes are \xHH (4 bytes of
 * source for one) and \n \t \r \" \\ (2). */
static uint32_t string_source_offset(const src_file *f, const ast *lit, int64_t k)
{
    uint32_t o = lit->off + 1, end = lit->off + lit->len;
    for (int64_t i = 0; i < k && o < end; i++) {
        if (f->text[o] == '\\') o += f->text[o + 1] == 'x' ? 4 : 2;
        else o++;
    }
    return o < end ? o : lit->off;
}

/* Where a diagnostic about literal `lit` at byte `k` (or -1) points. */
static uint32_t literal_offset(cg *g, const ast *lit, int64_t k)
{
    if (k < 0) return lit->off;
    if (lit->kind == AST_REGEX) return lit->off + 1 + (uint32_t)k;
    return string_source_offset(&g->c->src->files[lit->file], lit, k);
}

static void report(cg *g, const ast *set, ast *const *rules, const rw_diag *d)
{
    if (d->rule < 0) {
        src_error(g->c->src, set->file, set->off, "rewrite set '%s': %s", set->str, d->message);
        return;
    }
    const ast *r = rules[d->rule];
    const ast *at = r->a;
    if (d->where == RW_AT_TEMPLATE) at = r->b;
    const ast *lit = chk_literal((ast *)at);
    if (!lit) lit = at;
    uint32_t off = d->where == RW_AT_PATTERN || d->where == RW_AT_TEMPLATE
                       ? literal_offset(g, lit, d->offset)
                       : lit->off;
    diag *e = src_error(g->c->src, lit->file, off, "%s", d->message);
    if (lit->file != r->file || lit->off < r->a->off || lit->off > r->b->off + r->b->len)
        src_note(g->c->src, e, r->file, r->a->off, "in this rule of rewrite set '%s'", set->str);
}

/* Builds one set; 0, or -1 (reported). */
static int build_set(cg *g, ast *set)
{
    int mode;
    uint32_t max_match;
    if (chk_rewrite_options(set, &mode, &max_match)) return -1; /* the checker reported it */
    uint32_t n = 0;
    for (ast *r = set->b; r; r = r->next) n++;
    rw_rule_desc *rules = arena_alloc(g->c->ar, (n ? n : 1) * sizeof *rules);
    ast **nodes = arena_alloc(g->c->ar, (n ? n : 1) * sizeof *nodes);
    if (!rules || !nodes) {
        g->failed = 1;
        return -1;
    }
    n = 0;
    for (ast *r = set->b; r; r = r->next) {
        const ast *p = chk_literal(r->a), *t = chk_literal(r->b);
        rw_rule_desc *d = &rules[n];
        memset(d, 0, sizeof *d);
        d->kind = p->kind == AST_REGEX ? RW_REGEX : RW_LITERAL;
        d->flags = (p->flags & AST_F_CASELESS ? RW_CASELESS : 0) |
                   (p->flags & AST_F_DOTALL ? RW_DOTALL : 0) |
                   (p->flags & AST_F_MULTILINE ? RW_MULTILINE : 0) |
                   (r->flags & AST_F_ONCE ? RW_ONCE : 0);
        d->pattern = p->str;
        d->pattern_len = p->slen;
        d->replacement = t->str;
        d->replacement_len = t->slen;
        uint32_t line, col;
        src_linecol(&g->c->src->files[r->file], r->a->off, &line, &col);
        /* As every vm_pos: the file is the constant naming its path, so
         * that a disassembly of the loaded file can show the source. */
        const char *path = g->c->src->files[r->file].path;
        d->pos = (rw_srcpos){cg_kstr(g, path, (uint32_t)strlen(path)), line, col};
        nodes[n++] = r;
    }
    rw_set_desc desc;
    rw_set_desc_init(&desc);
    desc.mode = (rw_mode)mode;
    if (max_match != UINT32_MAX) desc.max_match = max_match;
    desc.rules = rules;
    desc.nrules = n;
    rw_set *built = NULL;
    rw_diags dg = {0};
    rw_status st = rw_build(&desc, NULL, &built, &dg);
    if (st == RW_E_RULES) {
        for (uint32_t i = 0; i < dg.n; i++) report(g, set, nodes, &dg.v[i]);
        if (dg.dropped)
            src_error(g->c->src, set->file, set->off, "rewrite set '%s': %u more problems",
                      set->str, dg.dropped);
    } else if (st == RW_E_NOMEM) {
        g->failed = 1;
    } else if (st != RW_OK) {
        src_error(g->c->src, set->file, set->off, "rewrite set '%s': %s", set->str,
                  rw_status_name(st));
    }
    rw_diags_free(&dg);
    if (st != RW_OK) return -1;
    if (GROW(g, g->P.rewrites, g->P.caprewrites, g->P.nrewrites + 1)) {
        rw_set_free(built);
        return -1;
    }
    g->P.rewrites[g->P.nrewrites++] = (vm_rewrite){cg_kstr(g, set->str, set->slen), built};
    return 0;
}

void cg_rewrites(cg *g)
{
    for (ast *it = g->c->main->items; it; it = it->next)
        if (it->kind == AST_REWRITE) build_set(g, it);
}
