/*
 * interp_ops.h: the interpreter's helpers (string search, Hyperscan
 * scans, header values, client IP, cookies, integer semantics), static so
 * that each copy of the dispatch loop (interp_body.h) inlines its own.
 *
 * Include after defining VM_TRACE (0 or 1): with 1, the scan also records
 * in ctx->first_match which pattern of each test matched first, for
 * clf_eval_explain; with 0 there is no trace of that in the code.
 */
#ifndef VM_INTERP_OPS_H
#define VM_INTERP_OPS_H

#ifndef VM_TRACE
#error "define VM_TRACE (0 or 1) before including interp_ops.h"
#endif

#include <string.h>

#include "bitset.h"
#include "capture.h"
#include "chars.h"
#include "ctx.h"
#include "httpfields.h"
#include "ipaddr.h"
#include "stateops.h"

/* First occurrence of needle in hay at or after `from`, or -1. */
static long find(const char *hay, size_t hn, const char *nd, size_t nn, size_t from)
{
    if (nn == 0) return from <= hn ? (long)from : -1;
    if (hn < nn) return -1;
    for (size_t i = from; i + nn <= hn;) {
        const char *c = memchr(hay + i, nd[0], hn - nn + 1 - i);
        if (!c) return -1;
        i = (size_t)(c - hay);
        if (memcmp(c, nd, nn) == 0) return (long)i;
        i++;
    }
    return -1;
}

/* Whole word: the needle occurs with no word character (vm_is_word)
 * right before or right after it (the same rule the pattern compiler
 * expresses with \b and \B). An empty needle is never a word. */
static int find_word(const char *hay, size_t hn, const char *nd, size_t nn)
{
    if (nn == 0) return 0;
    for (long at = find(hay, hn, nd, nn, 0); at >= 0;
         at = find(hay, hn, nd, nn, (size_t)at + 1)) {
        size_t s = (size_t)at, e = s + nn;
        if ((s == 0 || !vm_is_word((unsigned char)hay[s - 1])) &&
            (e == hn || !vm_is_word((unsigned char)hay[e])))
            return 1;
    }
    return 0;
}

typedef struct scan_state {
    uint64_t *bits;
    uint32_t base;
    const uint32_t *test_of; /* Hyperscan id -> test */
    uint32_t npatterns;
    int stop_at_first; /* the subject answers a single test */
#if VM_TRACE
    uint32_t *first; /* ctx->first_match: which pattern matched first */
#endif
} scan_state;

static int on_match(unsigned int id, unsigned long long from,
                    unsigned long long to, unsigned int flags, void *ud)
{
    scan_state *s = ud;
    (void)from; (void)to; (void)flags;
    /* The database came from a file: never trust an id to be in range. */
    if (id >= s->npatterns) return 0;
    uint32_t b = s->base + s->test_of[id];
    vm_bit_set(s->bits, b);
#if VM_TRACE
    if (!s->first[b]) s->first[b] = id + 1;
#endif
    return s->stop_at_first; /* non-zero stops the scan */
}

static clf_status scan(clf_ctx *ctx, const vm_subject *S, const char *p, size_t n)
{
    scan_state st = {ctx->bits, S->bit_base, S->test_of, S->npatterns, S->ntests == 1
#if VM_TRACE
                     , ctx->first_match
#endif
    };
    /* The subject's test bits start clear: a word at a time, since the
     * User-Agent of stdlib/default.clf has about 90 tests. */
    vm_bit_clear_range(ctx->bits, S->bit_base, S->bit_base + S->ntests);
#if VM_TRACE
    memset(ctx->first_match + S->bit_base, 0, S->ntests * sizeof *ctx->first_match);
#endif
    if (n > UINT32_MAX) { /* hs_scan takes an unsigned int length */
        vm_errf(ctx->errmsg, sizeof ctx->errmsg, "a value of %zu bytes is too long to scan", n);
        return CLF_E_LIMIT;
    }
    hs_error_t rc = hs_scan(S->db, p ? p : "", (unsigned int)n, 0, ctx->scratch,
                            on_match, &st);
    if (rc == HS_SUCCESS || rc == HS_SCAN_TERMINATED) return CLF_OK;
    vm_errf(ctx->errmsg, sizeof ctx->errmsg, "hs_scan failed with Hyperscan error %d", rc);
    return CLF_E_BACKEND;
}

/* The value of header slot h: the first value, or all values joined with
 * ", " in the workspace (built on first use, then cached in the slot). */
static clf_status header_value(clf_ctx *ctx, uint32_t h, vm_value *out)
{
    vm_hslot *s = &ctx->slots[h];
    if (s->count > 1 && !s->joined) {
        size_t need = 0;
        for (uint32_t i = 0; i < ctx->nentries; i++)
            if (ctx->entries[i].slot == h) need += ctx->entries[i].n + 2;
        need -= 2;
        if (need > ctx->ws_cap - ctx->ws_used) {
            vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                    "joining header '%s' needs %zu bytes; the string workspace has %zu left "
                    "(CLF_LIMIT_WORKSPACE_BYTES)",
                    ctx->prog->consts[ctx->prog->hdrs[h]].str, need, ctx->ws_cap - ctx->ws_used);
            return CLF_E_LIMIT;
        }
        char *d = ctx->ws + ctx->ws_used, *q = d;
        int first = 1; /* not q != d: an empty first value writes nothing */
        for (uint32_t i = 0; i < ctx->nentries; i++) {
            if (ctx->entries[i].slot != h) continue;
            if (!first) { *q++ = ','; *q++ = ' '; }
            first = 0;
            if (ctx->entries[i].n) memcpy(q, ctx->entries[i].p, ctx->entries[i].n);
            q += ctx->entries[i].n;
        }
        ctx->ws_used += need;
        s->jp = d;
        s->jn = need;
        s->joined = 1;
    }
    if (s->count > 1) {
        out->s.p = s->jp;
        out->s.n = s->jn;
    } else {
        out->s.p = s->p ? s->p : "";
        out->s.n = s->n;
    }
    return CLF_OK;
}

/* Reserves n bytes of the string workspace, or reports the limit. */
static char *ws_take(clf_ctx *ctx, size_t n, const char *what)
{
    if (n > ctx->ws_cap - ctx->ws_used) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "%s needs %zu bytes; the string workspace has %zu left "
                "(CLF_LIMIT_WORKSPACE_BYTES)", what, n, ctx->ws_cap - ctx->ws_used);
        return NULL;
    }
    char *d = ctx->ws + ctx->ws_used;
    ctx->ws_used += n;
    return d;
}

/* A header slot's value, or NULL when the request did not carry it. */
static clf_status header_or_null(clf_ctx *ctx, uint32_t h, const char **p, size_t *n)
{
    *p = NULL;
    *n = 0;
    if (h == UINT32_MAX || !ctx->slots[h].count) return CLF_OK; /* no such slot: absent */
    vm_value v;
    clf_status st = header_value(ctx, h, &v);
    if (st) return st;
    *p = v.s.p;
    *n = v.s.n;
    return CLF_OK;
}

/* What the IP databases say about an address: looked up once per address
 * and request (rules usually ask about req.client_ip, often twice). */
static const vm_ipinfo *ipinfo(clf_ctx *ctx, const vm_value *ip)
{
    static const vm_ipinfo unknown = {0, "", 0, "", 0};
    if (ip->s.n != 16) return &unknown;
    if (!ctx->ipinfo_valid || memcmp(ctx->ipinfo_addr, ip->s.p, 16) != 0) {
        const clf_program *p = ctx->prog;
        vm_ipdb_lookup(p->opts.ipdbs, p->opts.nipdbs, (const uint8_t *)ip->s.p, &ctx->ipinfo);
        memcpy(ctx->ipinfo_addr, ip->s.p, 16);
        ctx->ipinfo_valid = 1;
    }
    return &ctx->ipinfo;
}

/* req.client_ip: derived once per request (vm_client_ip states the rule). */
static clf_status client_ip(clf_ctx *ctx, uint32_t xff, uint32_t xrip, vm_value *out)
{
    if (!ctx->client_state) {
        const char *fp, *rp;
        size_t fn, rn;
        clf_status st;
        if ((st = header_or_null(ctx, xff, &fp, &fn)) || (st = header_or_null(ctx, xrip, &rp, &rn)))
            return st;
        const clf_program *prog = ctx->prog;
        ctx->client_state = vm_client_ip(ctx->peer, ctx->peer_valid, prog->trusted,
                                         prog->ntrusted, fp, fn, rp, rn, ctx->client)
                                ? 1 : 2;
    }
    out->s.p = (const char *)ctx->client;
    out->s.n = ctx->client_state == 1 ? 16 : 0;
    return CLF_OK;
}

/* The first cookie named name in the Cookie header's lines (each line
 * is searched on its own: joining them with ", " would not be cookie
 * syntax; RFC 9113 section 8.2.3 splits cookies over lines too). */
static void cookie(clf_ctx *ctx, uint32_t h, const vm_value *name, vm_value *out)
{
    out->s.p = "";
    out->s.n = 0;
    for (uint32_t i = 0; i < ctx->nentries; i++) {
        if (ctx->entries[i].slot != h) continue;
        if (vm_http_cookie(ctx->entries[i].p, ctx->entries[i].n, name->s.p, name->s.n,
                           &out->s.p, &out->s.n))
            return;
    }
}

/* Integer semantics that cannot trap: wrapping arithmetic through
 * unsigned, and division by zero (or INT64_MIN / -1) defined. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t safe_div(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    if (b == -1) return wrap_sub(0, a);
    return a / b;
}
static int64_t safe_mod(int64_t a, int64_t b)
{
    if (b == 0 || b == -1) return 0;
    return a % b;
}

/* str.to_int(): optional ASCII whitespace, an optional sign, then the
 * decimal digits that follow, saturating at the int range; 0 when there
 * is no digit. Other bytes end the number. */
static int64_t to_int(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
    int neg = 0;
    if (i < n && (p[i] == '-' || p[i] == '+')) neg = p[i++] == '-';
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        v = v > (lim - d) / 10 ? lim : v * 10 + d;
    }
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

static int is_trim(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* An IPv4 address in its mapped form ::ffff:a.b.c.d (vm/ipaddr.h). */
static int is_v4_mapped(const uint8_t *s)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(s, pre, 12) == 0;
}

static size_t clamp_len(int64_t k, size_t n)
{
    if (k <= 0) return 0;
    return (uint64_t)k >= n ? n : (size_t)k;
}

#endif
