/*
 * rw_build.c: rw_build() and the rw_set accessors (rw_build.h).
 */
#include <string.h>

#include "rw_set.h"

const char *rw_status_name(rw_status st)
{
    switch (st) {
    case RW_OK: return "RW_OK";
    case RW_E_NOMEM: return "RW_E_NOMEM";
    case RW_E_INVALID: return "RW_E_INVALID";
    case RW_E_FORMAT: return "RW_E_FORMAT";
    case RW_E_VERSION: return "RW_E_VERSION";
    case RW_E_BACKEND: return "RW_E_BACKEND";
    case RW_E_LIMIT: return "RW_E_LIMIT";
    case RW_E_STATE: return "RW_E_STATE";
    case RW_E_RULES: return "RW_E_RULES";
    case RW_E_SINK: return "RW_E_SINK";
    }
    return "RW_E_UNKNOWN";
}

const char *rw_diag_code_name(rw_diag_code c)
{
    switch (c) {
    case RW_D_SET: return "E_SET";
    case RW_D_FLAGS: return "E_FLAGS";
    case RW_D_EMPTY_PATTERN: return "E_EMPTY_PATTERN";
    case RW_D_EMPTY_MATCH: return "E_EMPTY_MATCH";
    case RW_D_LAZY: return "E_LAZY_QUANTIFIER";
    case RW_D_UNSUPPORTED: return "E_UNSUPPORTED";
    case RW_D_SYNTAX: return "E_SYNTAX";
    case RW_D_TOO_LONG: return "E_TOO_LONG";
    case RW_D_TOO_LARGE: return "E_TOO_LARGE";
    case RW_D_NOT_LITERAL: return "E_NOT_LITERAL";
    case RW_D_NO_SUCH_GROUP: return "E_NO_SUCH_GROUP";
    case RW_D_TEMPLATE: return "E_BAD_REPLACEMENT";
    case RW_D_BACKEND: return "E_BACKEND";
    }
    return "E_UNKNOWN";
}

void rw_set_desc_init(rw_set_desc *d)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->mode = RW_MODE_SRW;
    d->max_match = RW_MAX_MATCH_DEFAULT;
}

void rw_diags_free(rw_diags *d)
{
    if (!d) return;
    vm_allocator al = d->al;
    vm_free(&al, d->v);
    memset(d, 0, sizeof *d);
    d->al = al;
}

void rw_set_free(rw_set *s)
{
    if (!s) return;
    vm_allocator al = s->al;
    for (uint32_t i = 0; s->rules && i < s->nrules; i++) {
        pcre2_code_free(s->rules[i].dfa);
        pcre2_code_free(s->rules[i].cap);
    }
    pcre2_code_free(s->rf_code);
    pcre2_code_free(s->rf_code_ac);
    vm_free(&al, s->rf_pattern);
    if (s->litdb_in_place) vm_free(&al, s->litdb);
    else hs_free_database(s->litdb);
    if (s->redb_in_place) vm_free(&al, s->redb);
    else hs_free_database(s->redb);
    vm_free(&al, s->rules);
    vm_free(&al, s->vfirst);
    vm_free(&al, s->strings);
    vm_free(&al, s->ops);
    vm_free(&al, s);
}

rw_mode rw_set_mode(const rw_set *s) { return s ? s->mode : RW_MODE_SRW; }
uint32_t rw_set_max_match(const rw_set *s) { return s ? s->L : 0; }
uint32_t rw_set_nrules(const rw_set *s) { return s ? s->nrules : 0; }
uint64_t rw_set_holdback(const rw_set *s) { return s ? s->holdback : 0; }

rw_srcpos rw_set_rule_pos(const rw_set *s, uint32_t i)
{
    rw_srcpos z = {0, 0, 0};
    return s && i < s->nrules ? s->rules[i].pos : z;
}

int rw_set_rule_info(const rw_set *s, uint32_t i, rw_rule_info *out)
{
    if (!s || !out || i >= s->nrules) return -1;
    const rw_rule *r = &s->rules[i];
    *out = (rw_rule_info){r->kind, r->flags, r->pat, r->tpl, r->pat_len, r->tpl_len,
                          r->min_width, r->max_width, r->uses_groups, r->pos};
    return 0;
}

const char *rw_mode_name(rw_mode m)
{
    switch (m) {
    case RW_MODE_SRW: return "leftmost_longest";
    case RW_MODE_REPLACE_FILTER: return "replace_filter";
    case RW_MODE_SUB_FILTER: return "sub_filter";
    }
    return "?";
}

static void set_diag(rw_dctx *c, const char *msg, long v)
{
    c->rule = -1;
    c->where = RW_AT_SET;
    memset(&c->pos, 0, sizeof c->pos);
    rw_diag_add(c, RW_D_SET, -1, msg, v);
}

rw_status rw_build(const rw_set_desc *d, const vm_allocator *al, rw_set **out, rw_diags *diags)
{
    if (out) *out = NULL;
    if (diags) {
        memset(diags, 0, sizeof *diags);
        if (al) diags->al = *al;
    }
    if (!d || !out || (d->nrules && !d->rules)) return RW_E_INVALID;
    for (uint32_t i = 0; i < d->nrules; i++) {
        const rw_rule_desc *r = &d->rules[i];
        if ((!r->pattern && r->pattern_len) || (!r->replacement && r->replacement_len))
            return RW_E_INVALID;
    }
    rw_dctx c = {.d = diags, .rule = -1};
    if (d->mode != RW_MODE_SRW && d->mode != RW_MODE_REPLACE_FILTER &&
        d->mode != RW_MODE_SUB_FILTER)
        set_diag(&c, "unknown mode %ld", (long)d->mode);
    uint32_t minL = d->mode == RW_MODE_REPLACE_FILTER ? 0 : 1;
    if (d->max_match < minL || d->max_match > RW_MAX_MATCH_LIMIT)
        set_diag(&c, d->mode == RW_MODE_REPLACE_FILTER
                         ? "max_match must be at most 1048576 bytes (got %ld)"
                         : "max_match must be 1 to 1048576 bytes (got %ld)",
                 (long)d->max_match);
    if (d->nrules > RW_MAX_RULES) set_diag(&c, "more than %ld rules", (long)RW_MAX_RULES);
    size_t total = 0;
    for (uint32_t i = 0; i < d->nrules && c.errors == 0; i++) {
        const rw_rule_desc *r = &d->rules[i];
        c.rule = (int32_t)i;
        c.pos = r->pos;
        if (r->pattern_len > RW_MAX_PATTERN) {
            c.where = RW_AT_PATTERN;
            rw_diag_add(&c, RW_D_SET, -1, "the pattern is longer than %u bytes", RW_MAX_PATTERN);
        }
        if (r->replacement_len > RW_MAX_TEMPLATE) {
            c.where = RW_AT_TEMPLATE;
            rw_diag_add(&c, RW_D_SET, -1, "the replacement is longer than %u bytes",
                        RW_MAX_TEMPLATE);
        }
        total += r->pattern_len + r->replacement_len;
    }
    if (c.errors) return c.nomem ? RW_E_NOMEM : RW_E_RULES;

    rw_set *s = vm_calloc(al, 1, sizeof *s);
    if (!s) return RW_E_NOMEM;
    if (al) s->al = *al;
    s->mode = d->mode;
    s->L = d->max_match;
    s->nrules = d->nrules;
    s->rules = vm_calloc(al, d->nrules ? d->nrules : 1, sizeof *s->rules);
    s->strings = vm_malloc(al, total ? total : 1);
    rw_status st = RW_E_NOMEM;
    if (!s->rules || !s->strings) goto fail;
    s->strings_len = total;
    size_t off = 0;
    for (uint32_t i = 0; i < d->nrules; i++) {
        const rw_rule_desc *rd = &d->rules[i];
        rw_rule *r = &s->rules[i];
        r->kind = rd->kind;
        r->flags = rd->flags;
        r->pos = rd->pos;
        r->pat = s->strings + off;
        r->pat_len = (uint32_t)rd->pattern_len;
        if (rd->pattern_len) memcpy(s->strings + off, rd->pattern, rd->pattern_len);
        off += rd->pattern_len;
        r->tpl = s->strings + off;
        r->tpl_len = (uint32_t)rd->replacement_len;
        if (rd->replacement_len) memcpy(s->strings + off, rd->replacement, rd->replacement_len);
        off += rd->replacement_len;
    }
    uint32_t opcap = 0;
    for (uint32_t i = 0; i < s->nrules; i++)
        if (rw_rule_prepare(s, i, 0, &opcap, &c) < 0) goto fail;
    if (c.nomem) goto fail;
    if (c.errors == 0) {
        int rc = s->mode == RW_MODE_REPLACE_FILTER ? rw_compile_rf(s, &c)
                                                   : rw_compile_databases(s, &c);
        if (rc < 0) goto fail;
    }
    if (c.nomem) goto fail;
    if (c.errors) {
        st = RW_E_RULES;
        goto fail;
    }
    if ((st = rw_set_finish(s)) != RW_OK) goto fail;
    *out = s;
    return RW_OK;
fail:
    rw_set_free(s);
    return st;
}
