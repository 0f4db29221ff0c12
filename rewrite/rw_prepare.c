/*
 * rw_prepare.c: from rule bytes to what the engine runs, shared by
 * rw_build (a description) and rw_set_load (a stored set), so that a
 * loaded set is checked exactly as a built one.
 *
 * Per rule: flags against kind and mode, the dialect checks of
 * rw_syntax.c, widths (hs_expression_info), the group count and codes of
 * PCRE2, the template. Per set: the Hyperscan databases (literals through
 * hs_compile_lit_multi, regexes through hs_compile_multi, start of match
 * only for rules whose matches do not all have one width), or the
 * combined PCRE2 pattern of replace_filter mode.
 */
#include <stdio.h>
#include <string.h>

#include "rw_set.h"

void rw_diag_add(rw_dctx *c, rw_diag_code code, int64_t offset, const char *fmt, ...)
{
    c->errors++;
    rw_diags *d = c->d;
    if (!d) return;
    if (d->n >= RW_MAX_DIAGS) {
        d->dropped++;
        return;
    }
    if (d->n == d->cap) {
        uint32_t nc = d->cap ? d->cap * 2 : 8;
        if (nc > RW_MAX_DIAGS) nc = RW_MAX_DIAGS;
        rw_diag *v = vm_calloc(&d->al, nc, sizeof *v);
        if (!v) {
            c->nomem = 1;
            d->dropped++;
            return;
        }
        if (d->n) memcpy(v, d->v, d->n * sizeof *v);
        vm_free(&d->al, d->v);
        d->v = v;
        d->cap = nc;
    }
    rw_diag *g = &d->v[d->n++];
    g->rule = c->rule;
    g->where = c->where;
    g->offset = offset;
    g->code = code;
    g->pos = c->pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->message, sizeof g->message, fmt, ap);
    va_end(ap);
}

/* PCRE2 memory from the host allocator. */
static void *p2_malloc(PCRE2_SIZE n, void *ud) { return vm_malloc(ud, n); }
static void p2_free(void *p, void *ud) { vm_free(ud, p); }

pcre2_code *rw_pcre2_compile(const uint8_t *p, size_t n, uint32_t options,
                             const vm_allocator *al, int *errcode, size_t *erroff)
{
    *errcode = 0;
    *erroff = 0;
    pcre2_general_context *g =
        pcre2_general_context_create(p2_malloc, p2_free, (void *)(uintptr_t)al);
    pcre2_compile_context *cc = g ? pcre2_compile_context_create(g) : NULL;
    if (!cc) {
        pcre2_general_context_free(g);
        *errcode = PCRE2_ERROR_NOMEMORY;
        return NULL;
    }
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    PCRE2_SIZE off = 0;
    pcre2_code *code = pcre2_compile(n ? (PCRE2_SPTR)p : (PCRE2_SPTR) "", n, options, errcode,
                                     &off, cc);
    *erroff = off;
    pcre2_compile_context_free(cc);
    pcre2_general_context_free(g);
    return code;
}

void rw_pcre2_message(int code, char *buf, size_t n)
{
    if (pcre2_get_error_message(code, (PCRE2_UCHAR *)buf, n) < 0) snprintf(buf, n, "PCRE2 error %d", code);
}

static unsigned hs_flags_of(uint32_t f)
{
    unsigned h = 0;
    if (f & RW_CASELESS) h |= HS_FLAG_CASELESS;
    if (f & RW_DOTALL) h |= HS_FLAG_DOTALL;
    if (f & RW_MULTILINE) h |= HS_FLAG_MULTILINE;
    return h;
}

static uint32_t pcre2_flags_of(uint32_t f)
{
    uint32_t o = PCRE2_NEVER_BACKSLASH_C;
    if (f & RW_CASELESS) o |= PCRE2_CASELESS;
    if (f & RW_DOTALL) o |= PCRE2_DOTALL;
    if (f & RW_MULTILINE) o |= PCRE2_MULTILINE;
    return o;
}

/* The bytes a match of code can start with (rw_rule.first). */
static void first_bytes(pcre2_code *code, uint8_t out[32])
{
    const uint8_t *bm = NULL;
    uint32_t type = 0, unit = 0;
    memset(out, 0xff, 32);
    if (pcre2_pattern_info(code, PCRE2_INFO_FIRSTBITMAP, &bm) == 0 && bm) {
        memcpy(out, bm, 32);
        return;
    }
    if (pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODETYPE, &type) == 0 && type == 1 &&
        pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODEUNIT, &unit) == 0 && unit < 256) {
        memset(out, 0, 32);
        out[unit >> 3] |= (uint8_t)(1u << (unit & 7));
        /* PCRE2 may record {a, A} as "a, caseless" even without
         * PCRE2_CASELESS (a+|A+): take both cases, always */
        if ((unit | 0x20) >= 'a' && (unit | 0x20) <= 'z') {
            unsigned o = unit ^ 0x20;
            out[o >> 3] |= (uint8_t)(1u << (o & 7));
        }
    }
}

/* Whether p (n bytes) may have a top-level alternation, as far as a
 * simple scan can tell: a `|` outside classes and groups. A class is taken
 * to end at its first `]` (but one right after `[` or `[^`), which is
 * never later than where it really ends (`[[:alpha:]]` ends later): a
 * `(` or `|` it hides is never one that counts. Quoting (`\Q...\E`),
 * comments and inline options, which the scan does not follow, answer
 * yes. */
static int may_alternate(const uint8_t *p, size_t n)
{
    int in_class = 0;
    long depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\') {
            if (i + 1 < n && p[i + 1] == 'Q') return 1;
            i++;
        } else if (in_class) {
            in_class = p[i] != ']';
        } else if (p[i] == '[') {
            in_class = 1;
            if (i + 1 < n && p[i + 1] == '^') i++;
            if (i + 1 < n && p[i + 1] == ']') i++; /* a `]` first in a class is a byte */
        } else if (p[i] == '(') {
            if (i + 1 < n && p[i + 1] == '?' && !(i + 2 < n && p[i + 2] == ':')) return 1;
            depth++;
        } else if (p[i] == ')') {
            if (--depth < 0) return 1; /* unbalanced: not ours to judge */
        } else if (p[i] == '|' && depth == 0) {
            return 1;
        }
    }
    return 0;
}

/* The literal bytes every match of regex p (n bytes) begins with, at
 * most RW_PREFIX_MAX, into out; returns how many. Conservative: it stops
 * at the first thing that is not a plain byte or an escaped punctuation
 * character (a class, a group, `.`, an anchor, `\d`, `\x41`...), drops a
 * byte a quantifier follows, and gives nothing when the pattern may hold
 * an alternation (may_alternate). A shorter prefix only prunes less. */
static uint32_t literal_prefix(const uint8_t *p, size_t n, uint8_t out[RW_PREFIX_MAX])
{
    if (may_alternate(p, n)) return 0;
    uint32_t k = 0;
    size_t i = 0;
    while (i < n && k < RW_PREFIX_MAX) {
        uint8_t c = p[i];
        size_t next = i + 1;
        if (c == '\\') {
            if (next >= n) break;
            c = p[next++];
            int alnum = (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
            if (alnum || c >= 0x80 || c < 0x20) break; /* \d, \b, \x.., \Q: not a plain byte */
        } else if (strchr(".[()^$|*+?{}", c)) {
            break;
        }
        if (next < n && strchr("*+?{", p[next])) break; /* the byte is optional or repeated */
        out[k++] = c;
        i = next;
    }
    return k;
}

/* The offset Hyperscan's messages give ("... at index 12."), or -1. */
static int64_t hs_index(const char *msg)
{
    const char *at = msg ? strstr(msg, "index ") : NULL;
    long v;
    if (at && sscanf(at + 6, "%ld", &v) == 1 && v >= 0) return v;
    return -1;
}

/* NUL-terminated copy for the Hyperscan calls, which take C strings. */
static char *cstr(const vm_allocator *al, const uint8_t *p, size_t n)
{
    char *s = vm_malloc(al, n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static int prepare_srw_regex(rw_set *s, rw_rule *r, int have_widths, rw_dctx *c)
{
    const vm_allocator *al = &s->al;
    c->where = RW_AT_PATTERN;
    const void *nul = memchr(r->pat, 0, r->pat_len);
    if (nul) {
        rw_diag_add(c, RW_D_SYNTAX, (const uint8_t *)nul - r->pat,
                    "a NUL byte in a regex (write \\x00)");
        return 1;
    }
    if (rw_syntax_check(r->pat, r->pat_len, c)) return 1;
    if (!have_widths) {
        char *e = cstr(al, r->pat, r->pat_len);
        if (!e) return -1;
        hs_expr_info_t *info = NULL;
        hs_compile_error_t *ce = NULL;
        hs_error_t rc = hs_expression_info(e, hs_flags_of(r->flags), &info, &ce);
        vm_free(al, e);
        if (rc != HS_SUCCESS) {
            rw_diag_add(c, RW_D_SYNTAX, hs_index(ce ? ce->message : NULL), "Hyperscan: %s",
                        ce && ce->message ? ce->message : "cannot parse the pattern");
            hs_free_compile_error(ce);
            return 1;
        }
        r->min_width = info->min_width;
        r->max_width = info->max_width;
        free(info); /* Hyperscan's misc allocator: malloc by default */
    }
    if (r->min_width == 0) {
        rw_diag_add(c, RW_D_EMPTY_MATCH, -1,
                    "the pattern can match the empty string; every match must be at least one byte");
        return 1;
    }
    if (r->min_width > s->L) {
        rw_diag_add(c, RW_D_TOO_LONG, -1,
                    "every match is at least %u bytes, longer than max_match (%u)", r->min_width,
                    s->L);
        return 1;
    }
    int ec;
    size_t eo;
    pcre2_code *code = rw_pcre2_compile(r->pat, r->pat_len,
                                        pcre2_flags_of(r->flags) | PCRE2_NO_AUTO_POSSESS, al, &ec,
                                        &eo);
    if (!code) {
        if (ec == PCRE2_ERROR_NOMEMORY || ec == PCRE2_ERROR_HEAP_FAILED) return -1;
        char m[120];
        rw_pcre2_message(ec, m, sizeof m);
        rw_diag_add(c, RW_D_SYNTAX, (int64_t)eo, "PCRE2: %s", m);
        return 1;
    }
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &r->ngroups);
    r->fixed = r->min_width == r->max_width && r->max_width != RW_UNBOUNDED;
    r->width = r->max_width < s->L ? r->max_width : s->L;
    first_bytes(code, r->first);
    if (!r->fixed) r->dfa = code;
    else pcre2_code_free(code);
    r->prefix_len = literal_prefix(r->pat, r->pat_len, r->prefix);
    return 0;
}

/* "(?:P)(?C1)": the capture code, whose callout pins the end. */
static int compile_capture(rw_set *s, rw_rule *r, rw_dctx *c)
{
    vm_buf b = {0};
    vm_buf_put(&b, "(?:", 3);
    vm_buf_put(&b, r->pat, r->pat_len);
    vm_buf_put(&b, ")(?C1)", 6);
    if (b.failed) {
        free(b.data);
        return -1;
    }
    int ec;
    size_t eo;
    /* No auto-possessification: it would turn a final \n+ into \n++,
     * which cannot give back the bytes past the pinned end. */
    /* Anchored at compile time: PCRE2 runs its JIT code only without
     * match-time PCRE2_ANCHORED, and the interpreter would allocate its
     * frame vector on first use. */
    r->cap = rw_pcre2_compile(b.data, b.len,
                              pcre2_flags_of(r->flags) | PCRE2_NO_AUTO_POSSESS | PCRE2_ANCHORED,
                              &s->al, &ec, &eo);
    free(b.data);
    if (!r->cap) {
        if (ec == PCRE2_ERROR_NOMEMORY || ec == PCRE2_ERROR_HEAP_FAILED) return -1;
        char m[120];
        rw_pcre2_message(ec, m, sizeof m);
        c->where = RW_AT_PATTERN;
        rw_diag_add(c, RW_D_BACKEND, -1, "PCRE2 (capture code): %s", m);
        return 1;
    }
    pcre2_jit_compile(r->cap, PCRE2_JIT_COMPLETE); /* the interpreter when it fails */
    return 0;
}

static int prepare_rf(rw_set *s, rw_rule *r, rw_dctx *c)
{
    c->where = RW_AT_PATTERN;
    vm_buf b = {0};
    uint32_t ng = 0;
    uint32_t e = rw_sregex_translate(r->pat, r->pat_len, r->kind == RW_LITERAL,
                                     (r->flags & RW_CASELESS) != 0, &b, &ng, c);
    if (b.failed) {
        free(b.data);
        return -1;
    }
    if (e) {
        free(b.data);
        return 1;
    }
    int ec;
    size_t eo;
    pcre2_code *code = rw_pcre2_compile(b.data, b.len,
                                        PCRE2_DOTALL | PCRE2_MULTILINE | PCRE2_ALT_CIRCUMFLEX,
                                        &s->al, &ec, &eo);
    free(b.data);
    if (!code) {
        if (ec == PCRE2_ERROR_NOMEMORY || ec == PCRE2_ERROR_HEAP_FAILED) return -1;
        char m[120];
        rw_pcre2_message(ec, m, sizeof m);
        rw_diag_add(c, RW_D_UNSUPPORTED, -1, "the pattern cannot be translated for PCRE2: %s", m);
        return 1;
    }
    uint32_t minlen = 0, cnt = 0;
    pcre2_pattern_info(code, PCRE2_INFO_MINLENGTH, &minlen);
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &cnt);
    pcre2_code_free(code);
    r->ngroups = cnt;
    if (minlen == 0) {
        rw_diag_add(c, RW_D_EMPTY_MATCH, -1,
                    "the pattern can match the empty string: replace-filter would insert the "
                    "replacement between bytes, which this engine does not do");
        return 1;
    }
    r->min_width = minlen;
    r->max_width = RW_UNBOUNDED;
    r->width = 0;
    return 0;
}

int rw_rule_prepare(rw_set *s, uint32_t i, int have_widths, uint32_t *opcap, rw_dctx *c)
{
    rw_rule *r = &s->rules[i];
    uint32_t before = c->errors;
    c->rule = (int32_t)i;
    c->pos = r->pos;
    c->where = RW_AT_FLAGS;
    int pattern_ok = 1;
    if (r->kind != RW_LITERAL && r->kind != RW_REGEX) {
        rw_diag_add(c, RW_D_FLAGS, -1, "unknown rule kind %u", (unsigned)r->kind);
        return (int)(c->errors - before);
    }
    if (r->flags & ~RW_FLAGS_ALL)
        rw_diag_add(c, RW_D_FLAGS, -1, "unknown flag bits 0x%x", r->flags & ~RW_FLAGS_ALL);
    if (s->mode != RW_MODE_REPLACE_FILTER && r->kind == RW_LITERAL &&
        (r->flags & (RW_DOTALL | RW_MULTILINE)))
        rw_diag_add(c, RW_D_FLAGS, -1, "flag %c applies to regex rules only",
                    r->flags & RW_DOTALL ? 's' : 'm');
    if (s->mode == RW_MODE_SUB_FILTER && r->kind != RW_LITERAL) {
        c->where = RW_AT_PATTERN;
        rw_diag_add(c, RW_D_NOT_LITERAL, -1,
                    "sub_filter mode takes literal strings only (nginx sub_filter has no regexes)");
        pattern_ok = 0;
    }
    c->where = RW_AT_PATTERN;
    if (r->pat_len == 0) {
        rw_diag_add(c, RW_D_EMPTY_PATTERN, -1, "the pattern is empty");
        pattern_ok = 0;
    }
    if (pattern_ok && c->errors == before) {
        int rc = 0;
        if (s->mode == RW_MODE_REPLACE_FILTER) {
            rc = prepare_rf(s, r, c);
        } else if (r->kind == RW_LITERAL) {
            r->min_width = r->max_width = r->pat_len;
            r->fixed = 1;
            r->width = r->pat_len;
            r->ngroups = 0;
            /* the first byte, both ASCII cases when caseless (as every
             * literal of sub_filter mode is: compile_one) */
            memset(r->first, 0, sizeof r->first);
            unsigned b0 = r->pat[0], other = b0 ^ 0x20;
            r->first[b0 >> 3] |= (uint8_t)(1u << (b0 & 7));
            if (((r->flags & RW_CASELESS) || s->mode == RW_MODE_SUB_FILTER) &&
                (b0 | 0x20) >= 'a' && (b0 | 0x20) <= 'z')
                r->first[other >> 3] |= (uint8_t)(1u << (other & 7));
            if (r->pat_len > s->L)
                rw_diag_add(c, RW_D_TOO_LONG, -1,
                            "the literal is %u bytes, longer than max_match (%u)", r->pat_len,
                            s->L);
        } else {
            rc = prepare_srw_regex(s, r, have_widths, c);
        }
        if (rc < 0) return -1;
        if (rc > 0) pattern_ok = 0;
    } else {
        pattern_ok = 0;
    }
    /* The template, even when the pattern failed (its own errors are
     * worth reporting too); without a pattern, groups are not checked. */
    c->where = RW_AT_TEMPLATE;
    uint32_t ng = r->ngroups;
    if (!pattern_ok) r->ngroups = 65535;
    rw_template_parse(s->mode, r, &s->ops, &s->nops, opcap, &s->al, c);
    if (!pattern_ok) r->ngroups = ng;
    if (c->nomem) return -1;
    if (c->errors == before && s->mode == RW_MODE_SRW && r->kind == RW_REGEX && r->uses_groups) {
        int rc = compile_capture(s, r, c);
        if (rc < 0) return -1;
    }
    return (int)(c->errors - before);
}

/* ---- Hyperscan databases ----------------------------------------------- */

/* Generic x86-64 tuning with no optional CPU features, so that a stored
 * database loads on any machine Hyperscan supports (Hyperscan's
 * "Serialization" docs; vm/patterns.c does the same). */
static const hs_platform_info_t generic_platform = {HS_TUNE_FAMILY_GENERIC, 0, 0, 0};

static void report_hs(rw_dctx *c, const rw_set *s, uint32_t rule, const char *msg)
{
    c->rule = (int32_t)rule;
    c->pos = s->rules[rule].pos;
    c->where = RW_AT_PATTERN;
    if (msg && strstr(msg, "too large"))
        rw_diag_add(c, RW_D_TOO_LARGE, hs_index(msg),
                    "Hyperscan: %s (tracking where matches start needs more state than Hyperscan "
                    "allows; bound or shorten the repeats)",
                    msg);
    else
        rw_diag_add(c, RW_D_BACKEND, hs_index(msg), "Hyperscan: %s", msg ? msg : "compile failed");
}

/* Compiles one database, literal or regex, from the rules with kind k.
 * A pattern Hyperscan refuses is reported and left out, and the rest
 * compiled again, so that every bad rule is named. */
static int compile_one(rw_set *s, rw_kind k, hs_database_t **out, rw_dctx *c)
{
    const vm_allocator *al = &s->al;
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nrules; i++) n += s->rules[i].kind == k;
    *out = NULL;
    if (n == 0) return 0;
    const char **exprs = vm_calloc(al, n, sizeof *exprs);
    unsigned *flags = vm_calloc(al, n, sizeof *flags);
    unsigned *ids = vm_calloc(al, n, sizeof *ids);
    size_t *lens = vm_calloc(al, n, sizeof *lens);
    char **owned = vm_calloc(al, n, sizeof *owned);
    int errors = 0, rc = 0;
    if (!exprs || !flags || !ids || !lens || !owned) {
        rc = -1;
        goto done;
    }
    int som = 0;
    uint32_t m = 0;
    for (uint32_t i = 0; i < s->nrules; i++) {
        const rw_rule *r = &s->rules[i];
        if (r->kind != k) continue;
        if (k == RW_REGEX) {
            owned[m] = cstr(al, r->pat, r->pat_len);
            if (!owned[m]) {
                rc = -1;
                goto done;
            }
            exprs[m] = owned[m];
            flags[m] = hs_flags_of(r->flags);
            if (!r->fixed) {
                flags[m] |= HS_FLAG_SOM_LEFTMOST;
                som = 1;
            }
        } else {
            exprs[m] = (const char *)r->pat;
            /* nginx's sub_filter always ignores ASCII case */
            flags[m] = (r->flags & RW_CASELESS) || s->mode == RW_MODE_SUB_FILTER
                           ? HS_FLAG_CASELESS
                           : 0;
        }
        lens[m] = r->pat_len;
        ids[m] = i;
        m++;
    }
    unsigned mode = HS_MODE_STREAM;
    if (som) mode |= s->L < 65535 ? HS_MODE_SOM_HORIZON_SMALL : HS_MODE_SOM_HORIZON_MEDIUM;
    while (m > 0) {
        hs_compile_error_t *ce = NULL;
        hs_error_t hr = k == RW_REGEX
                            ? hs_compile_multi(exprs, flags, ids, m, mode, &generic_platform, out, &ce)
                            : hs_compile_lit_multi(exprs, flags, ids, lens, m, mode,
                                                   &generic_platform, out, &ce);
        if (hr == HS_SUCCESS) {
            hs_free_compile_error(ce);
            break;
        }
        *out = NULL;
        if (hr == HS_NOMEM) {
            hs_free_compile_error(ce);
            rc = -1;
            goto done;
        }
        if (!ce || ce->expression < 0 || (uint32_t)ce->expression >= m) {
            c->rule = -1;
            c->where = RW_AT_SET;
            memset(&c->pos, 0, sizeof c->pos);
            rw_diag_add(c, RW_D_BACKEND, -1, "Hyperscan: %s",
                        ce && ce->message ? ce->message : "compile failed");
            hs_free_compile_error(ce);
            errors++;
            break;
        }
        uint32_t x = (uint32_t)ce->expression;
        report_hs(c, s, ids[x], ce->message);
        hs_free_compile_error(ce);
        errors++;
        /* leave it out and try the rest */
        vm_free(al, owned[x]);
        for (uint32_t j = x; j + 1 < m; j++) {
            exprs[j] = exprs[j + 1];
            flags[j] = flags[j + 1];
            ids[j] = ids[j + 1];
            lens[j] = lens[j + 1];
            owned[j] = owned[j + 1];
        }
        m--;
        owned[m] = NULL;
    }
    if (errors && *out) {
        hs_free_database(*out);
        *out = NULL;
    }
    rc = errors;
done:
    for (uint32_t j = 0; owned && j < n; j++) vm_free(al, owned[j]);
    vm_free(al, owned);
    vm_free(al, exprs);
    vm_free(al, flags);
    vm_free(al, ids);
    vm_free(al, lens);
    return rc;
}

int rw_compile_databases(rw_set *s, rw_dctx *c)
{
    int a = compile_one(s, RW_LITERAL, &s->litdb, c);
    if (a < 0) return -1;
    int b = compile_one(s, RW_REGEX, &s->redb, c);
    if (b < 0) return -1;
    return a + b;
}

/* ---- replace_filter: the combined pattern ------------------------------ */

int rw_compile_rf(rw_set *s, rw_dctx *c)
{
    vm_buf b = {0};
    uint32_t group = 1;
    rw_dctx quiet = {0}; /* each rule was checked alone already */
    for (uint32_t i = 0; i < s->nrules; i++) {
        rw_rule *r = &s->rules[i];
        if (i) vm_buf_put(&b, "|", 1);
        vm_buf_put(&b, "(", 1);
        uint32_t ng = 0;
        rw_sregex_translate(r->pat, r->pat_len, r->kind == RW_LITERAL,
                            (r->flags & RW_CASELESS) != 0, &b, &ng, &quiet);
        vm_buf_put(&b, ")", 1);
        r->rf_group = group;
        group += 1 + ng;
    }
    s->rf_ngroups = group - 1;
    if (b.failed) {
        free(b.data);
        return -1;
    }
    if (s->nrules == 0) {
        free(b.data);
        return 0;
    }
    int ec;
    size_t eo;
    /* Without auto-possessification: it rewrites a+ as a++ where the
     * next item cannot match an `a`, which changes nothing for complete
     * matches but is not worth trusting for partial ones (the decisions
     * at a chunk end). */
    s->rf_code = rw_pcre2_compile(b.data, b.len,
                                  PCRE2_DOTALL | PCRE2_MULTILINE | PCRE2_ALT_CIRCUMFLEX |
                                      PCRE2_NO_AUTO_POSSESS,
                                  &s->al, &ec, &eo);
    if (s->rf_code)
        pcre2_jit_compile(s->rf_code,
                          PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD | PCRE2_JIT_PARTIAL_SOFT);
    s->rf_code_ac = s->rf_code ? rw_pcre2_compile(b.data, b.len,
                                                  PCRE2_DOTALL | PCRE2_MULTILINE |
                                                      PCRE2_ALT_CIRCUMFLEX |
                                                      PCRE2_NO_AUTO_POSSESS | PCRE2_AUTO_CALLOUT,
                                                  &s->al, &ec, &eo)
                               : NULL;
    if (s->rf_code_ac) {
        pcre2_jit_compile(s->rf_code_ac, PCRE2_JIT_COMPLETE);
        s->rf_pattern = vm_malloc(&s->al, b.len);
        if (s->rf_pattern) {
            memcpy(s->rf_pattern, b.data, b.len);
            s->rf_pattern_len = b.len;
        }
    }
    free(b.data);
    /* Both compiled and the copy failed: ec then says "no error" (100). */
    if (s->rf_code && s->rf_code_ac && !s->rf_pattern) return -1;
    if (!s->rf_code || !s->rf_code_ac) {
        if (ec == PCRE2_ERROR_NOMEMORY || ec == PCRE2_ERROR_HEAP_FAILED) return -1;
        char m[120];
        rw_pcre2_message(ec, m, sizeof m);
        c->rule = -1;
        c->where = RW_AT_SET;
        memset(&c->pos, 0, sizeof c->pos);
        rw_diag_add(c, RW_D_BACKEND, -1, "PCRE2 (all rules as one pattern): %s", m);
        return 1;
    }
    return 0;
}

/* The DFA workspace (ints) a code of n pattern bytes needs: three ints
 * per state in each of two state lists, a state per item at most. */
static size_t dfa_ws_for(size_t n) { return 6 * (n + 16) + 1000; }

/* The per-byte lists of variable-width rules (rw_set.vfirst), each
 * widest first so that a search for a wider live rule can stop early. */
static rw_status index_var_rules(rw_set *s)
{
    memset(s->vfirst_at, 0, sizeof s->vfirst_at);
    size_t total = 0;
    for (uint32_t i = 0; i < s->nrules; i++) {
        const rw_rule *r = &s->rules[i];
        if (r->var_index == UINT32_MAX) continue;
        for (unsigned b = 0; b < 256; b++) s->vfirst_at[b + 1] += r->first[b >> 3] >> (b & 7) & 1;
    }
    for (unsigned b = 0; b < 256; b++) s->vfirst_at[b + 1] += s->vfirst_at[b];
    total = s->vfirst_at[256];
    vm_free(&s->al, s->vfirst);
    s->vfirst = vm_malloc(&s->al, (total ? total : 1) * sizeof *s->vfirst);
    if (!s->vfirst) return RW_E_NOMEM;
    uint32_t fill[256];
    memcpy(fill, s->vfirst_at, sizeof fill);
    for (uint32_t i = 0; i < s->nrules; i++) {
        const rw_rule *r = &s->rules[i];
        if (r->var_index == UINT32_MAX) continue;
        for (unsigned b = 0; b < 256; b++) {
            if (!(r->first[b >> 3] >> (b & 7) & 1)) continue;
            /* insertion into b's list, by width (rules come in order, so
             * equal widths keep it) */
            uint32_t k = fill[b]++;
            while (k > s->vfirst_at[b] && s->rules[s->vfirst[k - 1]].width < r->width) {
                s->vfirst[k] = s->vfirst[k - 1];
                k--;
            }
            s->vfirst[k] = i;
        }
    }
    return RW_OK;
}

rw_status rw_set_finish(rw_set *s)
{
    s->W = 0;
    memset(s->wfixed, 0, sizeof s->wfixed);
    memset(s->wvar, 0, sizeof s->wvar);
    s->nvar = s->nonce = s->maxgroups = 0;
    s->dfa_ws_ints = 0;
    for (uint32_t i = 0; i < s->nrules; i++) {
        rw_rule *r = &s->rules[i];
        r->var_index = UINT32_MAX;
        if (r->flags & RW_ONCE) s->nonce++;
        if (s->mode == RW_MODE_REPLACE_FILTER) {
            if (r->uses_groups || r->uses_match) s->rf_capturing = 1;
            continue;
        }
        if (r->width > s->W) s->W = r->width;
        uint32_t *wt = r->fixed ? s->wfixed : s->wvar;
        for (unsigned b = 0; b < 256; b++)
            if ((r->first[b >> 3] >> (b & 7) & 1) && r->width > wt[b]) wt[b] = r->width;
        if (!r->fixed && r->kind == RW_REGEX) {
            r->var_index = s->nvar++;
            size_t ws = dfa_ws_for(r->pat_len);
            if (ws > s->dfa_ws_ints) s->dfa_ws_ints = ws;
        }
        if (r->cap && r->ngroups > s->maxgroups) s->maxgroups = r->ngroups;
    }
    if (s->mode == RW_MODE_REPLACE_FILTER) {
        if (s->nrules > 1 && s->nonce > 0) s->rf_capturing = 1;
        s->maxgroups = s->rf_ngroups;
        s->W = rw_rf_hard_bound(s->L);
        s->holdback = (uint64_t)s->W + 2;
    } else {
        s->holdback = (uint64_t)s->W + 2;
    }
    return index_var_rules(s);
}
