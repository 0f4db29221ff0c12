/*
 * rw_ref.c: the brute-force reference (rw_ref.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rw_ref.h"
#include "rw_set.h" /* rw_sregex_translate, the RW_* flags */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
    int bad;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->bad || n == 0) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->n + n) c *= 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) {
            b->bad = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

typedef struct rx {
    pcre2_code *code;       /* "(?:P)(?C1)" */
    pcre2_match_data *md;
    pcre2_match_context *mc;
} rx;

/* The callout: mode 0 records every end and fails (so that every path
 * is tried); mode 1 accepts only the end `pin`. */
typedef struct co {
    int mode;
    size_t pin;
    uint8_t *ends; /* one byte per offset */
} co;

static int callout(pcre2_callout_block *cb, void *ud)
{
    co *c = ud;
    if (c->mode == 0) {
        c->ends[cb->current_position] = 1;
        return 1;
    }
    return cb->current_position == c->pin ? 0 : 1;
}

static int rx_new(rx *x, const uint8_t *p, size_t n, uint32_t opts)
{
    memset(x, 0, sizeof *x);
    uint8_t *q = malloc(n + 16);
    if (!q) return -1;
    memcpy(q, "(?:", 3);
    memcpy(q + 3, p, n);
    memcpy(q + 3 + n, ")(?C1)", 6);
    int ec;
    PCRE2_SIZE eo;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
    x->code = pcre2_compile(q, n + 9, opts | PCRE2_NO_AUTO_POSSESS, &ec, &eo, cc);
    pcre2_compile_context_free(cc);
    free(q);
    if (!x->code) return -1;
    x->md = pcre2_match_data_create_from_pattern(x->code, NULL);
    x->mc = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(x->mc, 20000000);
    return x->md && x->mc ? 0 : -1;
}

static void rx_free(rx *x)
{
    pcre2_code_free(x->code);
    pcre2_match_data_free(x->md);
    pcre2_match_context_free(x->mc);
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int lit_at(const ref_rule *r, const uint8_t *in, size_t len, size_t s, int caseless)
{
    if (r->plen > len - s) return 0;
    for (size_t k = 0; k < r->plen; k++) {
        int a = in[s + k], b = r->pat[k];
        if (caseless ? lower(a) != lower(b) : a != b) return 0;
    }
    return 1;
}

/* Expands rule r's template; groups from ov (pairs), group g at pair g. */
static void expand(int mode, const ref_rule *r, const uint8_t *in, size_t ms, size_t me,
                   const PCRE2_SIZE *ov, uint32_t pairs, buf *o)
{
    const uint8_t *t = r->tpl;
    size_t n = r->tlen, i = 0;
    int rf = mode == RW_MODE_REPLACE_FILTER;
    while (i < n) {
        if (t[i] != '$' || i + 1 >= n) {
            put(o, t + i, 1);
            i++;
            continue;
        }
        uint8_t d = t[i + 1];
        long g = -1;
        if (d == '$') {
            put(o, "$", 1);
            i += 2;
            continue;
        } else if (rf && d == '&') {
            g = 0;
            i += 2;
        } else if (d == '{') {
            size_t j = i + 2;
            if (rf && j < n && t[j] == '&') {
                g = 0;
                j++;
            } else {
                g = 0;
                while (j < n && t[j] >= '0' && t[j] <= '9') {
                    if (g < 100000) g = g * 10 + (t[j] - '0');
                    j++;
                }
            }
            i = j + 1; /* past } */
        } else if (d >= '0' && d <= '9') {
            size_t j = i + 1;
            g = 0;
            if (rf && d != '0') {
                while (j < n && t[j] >= '0' && t[j] <= '9') {
                    if (g < 100000) g = g * 10 + (t[j] - '0');
                    j++;
                }
            } else {
                g = d - '0';
                j++;
            }
            i = j;
        } else {
            put(o, t + i, 1); /* the engine refuses these templates */
            i++;
            continue;
        }
        if (g == 0) {
            put(o, in + ms, me - ms);
        } else if (ov && (uint32_t)g < pairs && ov[2 * g] != PCRE2_UNSET) {
            put(o, in + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
        }
    }
}

static uint32_t opts_of(uint32_t f)
{
    uint32_t o = 0;
    if (f & RW_CASELESS) o |= PCRE2_CASELESS;
    if (f & RW_DOTALL) o |= PCRE2_DOTALL;
    if (f & RW_MULTILINE) o |= PCRE2_MULTILINE;
    return o;
}

int ref_rewrite(int mode, uint32_t L, const ref_rule *rules, size_t nrules, const uint8_t *in,
                size_t len, uint8_t **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    int rc = -1;
    rx *x = calloc(nrules ? nrules : 1, sizeof *x);
    uint8_t *fired = calloc(nrules ? nrules : 1, 1);
    uint8_t *ends = calloc(len + 1, 1);
    buf o = {0};
    if (!x || !fired || !ends) goto done;
    for (size_t i = 0; i < nrules; i++) {
        const ref_rule *r = &rules[i];
        if (mode == RW_MODE_REPLACE_FILTER) {
            vm_buf b = {0};
            uint32_t ng;
            rw_dctx dc = {0};
            rw_sregex_translate(r->pat, r->plen, !r->regex, (r->flags & RW_CASELESS) != 0, &b,
                                &ng, &dc);
            int bad = dc.errors || b.failed ||
                      rx_new(&x[i], b.data, b.len,
                             PCRE2_DOTALL | PCRE2_MULTILINE | PCRE2_ALT_CIRCUMFLEX);
            free(b.data);
            if (bad) goto done;
        } else if (r->regex && rx_new(&x[i], r->pat, r->plen, opts_of(r->flags))) {
            goto done;
        }
    }
    size_t pos = 0, s = 0;
    co c = {0, 0, ends};
    while (s < len) {
        long best = -1;
        size_t best_e = 0;
        const PCRE2_SIZE *best_ov = NULL;
        uint32_t best_pairs = 0;
        for (size_t i = 0; i < nrules; i++) {
            const ref_rule *r = &rules[i];
            int once_fired = (r->flags & RW_ONCE) && fired[i];
            if (once_fired && mode != RW_MODE_REPLACE_FILTER) continue;
            size_t e = 0;
            if (mode == RW_MODE_SUB_FILTER || (mode == RW_MODE_SRW && !r->regex)) {
                int cl = mode == RW_MODE_SUB_FILTER || (r->flags & RW_CASELESS);
                if (r->plen <= L && lit_at(r, in, len, s, cl)) e = s + r->plen;
            } else if (mode == RW_MODE_SRW) {
                memset(ends, 0, len + 1);
                c.mode = 0;
                pcre2_set_callout(x[i].mc, callout, &c);
                int m = pcre2_match(x[i].code, in, len, s, PCRE2_ANCHORED, x[i].md, x[i].mc);
                if (m != PCRE2_ERROR_NOMATCH) goto done; /* a limit */
                for (size_t k = len; k > s; k--)
                    if (ends[k] && k - s <= L) {
                        e = k;
                        break;
                    }
            } else { /* replace_filter: Perl's match of this rule at s */
                c.mode = 2; /* no callout in the translated pattern's own text */
                pcre2_set_callout(x[i].mc, NULL, NULL);
                int m = pcre2_match(x[i].code, in, len, s, PCRE2_ANCHORED, x[i].md, x[i].mc);
                if (m > 0) {
                    /* "(?:P)(?C1)" without a callout function: C1 passes */
                    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x[i].md);
                    e = ov[1];
                } else if (m != PCRE2_ERROR_NOMATCH) {
                    goto done;
                }
            }
            if (e == 0) continue;
            if (mode == RW_MODE_SRW) {
                if (e > best_e) {
                    best = (long)i;
                    best_e = e;
                }
            } else {
                best = (long)i;
                best_e = e;
                break; /* the first rule in order */
            }
        }
        if (best < 0) {
            s++;
            continue;
        }
        const ref_rule *r = &rules[best];
        put(&o, in + pos, s - pos);
        if (mode == RW_MODE_REPLACE_FILTER && (r->flags & RW_ONCE) && fired[best]) {
            put(&o, in + s, best_e - s); /* a fired once rule consumes verbatim */
        } else {
            if (r->regex || mode == RW_MODE_REPLACE_FILTER) {
                /* the groups Perl picks for exactly [s, best_e) */
                c.mode = 1;
                c.pin = best_e;
                pcre2_set_callout(x[best].mc, callout, &c);
                int m = pcre2_match(x[best].code, in, len, s, PCRE2_ANCHORED, x[best].md,
                                    x[best].mc);
                if (m > 0) {
                    best_ov = pcre2_get_ovector_pointer(x[best].md);
                    best_pairs = pcre2_get_ovector_count(x[best].md);
                }
            }
            expand(mode, r, in, s, best_e, best_ov, best_pairs, &o);
            fired[best] = 1;
        }
        pos = s = best_e;
    }
    put(&o, in + pos, len - pos);
    if (o.bad) goto done;
    *out = o.p ? o.p : malloc(1);
    *outlen = o.n;
    o.p = NULL;
    rc = 0;
done:
    for (size_t i = 0; x && i < nrules; i++) rx_free(&x[i]);
    free(x);
    free(fired);
    free(ends);
    free(o.p);
    return rc;
}
