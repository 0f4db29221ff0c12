/*
 * check_tests.c: checks `test` blocks: directives, expectations, and the
 * filters they name (run later by classifyc --test, lang/test_run.c).
 */
#include <string.h>
#include <strings.h>

#include "check.h"
#include "ipaddr.h"

static int valid_header_name(const char *s, uint32_t n)
{
    if (n == 0) return 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c > 0x20 && c < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", c))) return 0;
    }
    return 1;
}

/* A string of decimal digits whose value lies in [lo, hi]. */
static int decimal(const ast *s, int64_t lo, int64_t hi)
{
    int64_t v = 0;
    if (s->slen == 0 || s->slen > 13) return 0;
    for (uint32_t i = 0; i < s->slen; i++) {
        if (s->str[i] < '0' || s->str[i] > '9') return 0;
        v = v * 10 + (s->str[i] - '0');
    }
    return v >= lo && v <= hi;
}

int chk_parse_rate(const char *s, uint32_t n, double *out)
{
    /* digits, an optional fraction, an optional '%': "0.1%", "95", "100%" */
    double v = 0, scale = 0;
    uint32_t i = 0, digits = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && digits < 12; i++, digits++) v = v * 10 + (s[i] - '0');
    if (i < n && s[i] == '.') {
        scale = 1;
        for (i++; i < n && s[i] >= '0' && s[i] <= '9' && digits < 12; i++, digits++) {
            scale /= 10;
            v += scale * (s[i] - '0');
        }
    }
    if (i < n && s[i] == '%') i++;
    if (!digits || i != n || v > 100) return -1;
    *out = v;
    return 0;
}

void chk_test(checker *ck, ast *t)
{
    static const struct { const char *name; int nargs; } dirs[] = {
        {"method", 1}, {"target", 1}, {"header", 2}, {"peer", 1}, {"trust", 1}, {"rdns", 1},
        {"uas", 1}, {"clock", 1}, {"state", 2}, {"expect-state", 2}, {"repeat", 1}};
    int nexpect = 0, nrate = 0, has_uas = 0;
    for (ast *d = t->b; d; d = d->next)
        if (d->kind == AST_TDIR && strcmp(d->str, "uas") == 0) has_uas = 1;
    for (ast *d = t->b; d; d = d->next) {
        if (d->kind == AST_EXPECT) {
            nexpect++;
            if (d->flags & (AST_F_RATE_LE | AST_F_RATE_GE)) {
                double r;
                nrate++;
                if (chk_parse_rate(d->b->str, d->b->slen, &r) != 0)
                    ERR(ck, d->b, "not a rate: write a percentage from 0 to 100, such as "
                                  "\"0.1%%\" or \"95%%\"");
                if (!has_uas)
                    ERR(ck, d, "expect-rate needs the User-Agents to count over: add "
                               "`uas \"FILE\"` (one per line) to this test");
            }
            sym *f = NULL;
            if (!d->c) {
                f = chk_lookup_global(ck->m, "main");
                if (!f || f->kind != SYM_FILTER) {
                    ERR(ck, d, "this file has no filter 'main': name the filter, as in "
                               "`expect my_filter reject`");
                    continue;
                }
            } else if (d->c->kind == AST_NAME) {
                f = chk_lookup_global(ck->m, d->c->str);
                if (f && f->kind != SYM_FILTER) {
                    f->used = 1;
                    ERR(ck, d->c, "'%s' is %s, not a filter", d->c->str,
                        f->kind == SYM_FN ? "a function" : f->kind == SYM_CONST ? "a constant"
                                                                               : "a module");
                    continue;
                }
                if (!f) {
                    ERR(ck, d->c, "'%s' is not a filter of this file", d->c->str);
                    continue;
                }
            } else {
                ast call = *d->c; /* resolve mod.f like a call */
                call.kind = AST_CALL;
                call.b = NULL;
                int is_call;
                f = chk_resolve_callee(ck, &call, &is_call, "filter");
                if (!is_call) ERR(ck, d->c->a, "'%s' is not an imported module", d->c->a->str);
                if (!f) continue;
                if (f->kind != SYM_FILTER) {
                    ERR(ck, d->c, "'%s' is a function, not a filter", chk_called_name(ck, &call));
                    continue;
                }
            }
            if (d->a && d->a->slen == 0)
                ERR(ck, d->a, "empty reason: write `%s %s` to accept any reason",
                    d->flags & (AST_F_RATE_LE | AST_F_RATE_GE) ? "expect-rate" : "expect",
                    d->ival == AST_V_ACCEPT ? "accept" : "reject");
            f->used = 1;
            d->sym = f;
            continue;
        }
        size_t i;
        for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
            if (strcmp(d->str, dirs[i].name) == 0) break;
        if (i == sizeof dirs / sizeof dirs[0]) {
            ERR(ck, d, "unknown test directive '%s' (method, target, header, peer, trust, "
                       "rdns, uas, clock, state, repeat, expect, expect-rate, expect-state)",
                d->str);
            continue;
        }
        if ((d->b != NULL) != (dirs[i].nargs == 2)) {
            ERR(ck, d, "'%s' takes %s", d->str,
                dirs[i].nargs == 2 ? "a name and a value: header \"Name\" \"value\""
                                   : "one string");
            continue;
        }
        if (strcmp(d->str, "header") == 0 && !valid_header_name(d->a->str, d->a->slen))
            ERR(ck, d->a, "not a valid header name (RFC 9110 token)");
        if (strcmp(d->str, "target") == 0 && (d->a->slen == 0 || d->a->str[0] != '/'))
            ERR(ck, d->a, "the target must start with '/' (origin form, RFC 9112 section 3.2.1)");
        if (strcmp(d->str, "method") == 0 && !valid_header_name(d->a->str, d->a->slen))
            ERR(ck, d->a, "not a valid method (RFC 9110 token)");
        if (strcmp(d->str, "trust") == 0) {
            vm_iprange r;
            if (!vm_iprange_parse(d->a->str, d->a->slen, &r))
                ERR(ck, d->a, "not an IP address or prefix");
        }
        if (strcmp(d->str, "rdns") == 0) { /* what clf_ctx_set_rdns takes */
            size_t n = d->a->slen - (d->a->slen && d->a->str[d->a->slen - 1] == '.');
            int ok = n <= 253;
            for (size_t k = 0; k < n && ok; k++)
                ok = (unsigned char)d->a->str[k] > 0x20 && (unsigned char)d->a->str[k] < 0x7f;
            if (!ok) ERR(ck, d->a, "not a host name (printable ASCII, at most 253 bytes)");
        }
        if (strcmp(d->str, "clock") == 0 && !decimal(d->a, 0, INT64_C(1) << 40))
            ERR(ck, d->a, "the clock is whole seconds since 1970 (at most 2^40)");
        if (strcmp(d->str, "repeat") == 0 && !decimal(d->a, 1, 1000000))
            ERR(ck, d->a, "repeat takes how many times to send the request: 1 to 1000000");
        if (strcmp(d->str, "state") == 0 || strcmp(d->str, "expect-state") == 0) {
            const char *sp = memchr(d->a->str, ' ', d->a->slen);
            if (!sp || sp == d->a->str || sp + 1 == d->a->str + d->a->slen)
                ERR(ck, d->a, "write the state's name and key, as in \"pages 203.0.113.0\"");
            if (!decimal(d->b, 0, UINT32_MAX))
                ERR(ck, d->b, "the value is a whole number (a count, a score, seconds ago, or "
                              "0/1 for a mark)");
        }
        if (strcmp(d->str, "uas") == 0 && d->a->slen == 0)
            ERR(ck, d->a, "the User-Agent file's name is empty");
        if (strcmp(d->str, "header") == 0 && has_uas && d->a->slen == 10 &&
            strncasecmp(d->a->str, "user-agent", 10) == 0)
            ERR(ck, d, "this test takes its User-Agents from its `uas` file: drop this header");
        if (strcmp(d->str, "header") != 0 && strcmp(d->str, "trust") != 0 &&
            strcmp(d->str, "state") != 0 && strcmp(d->str, "expect-state") != 0) {
            /* method, target and peer say one thing about the request */
            const ast *prev = NULL;
            for (const ast *o = t->b; o != d; o = o->next)
                if (o->kind == AST_TDIR && strcmp(o->str, d->str) == 0) prev = o;
            if (prev) {
                diag *dg = ERR(ck, d, "'%s' is given twice in this test", d->str);
                src_note(ck->c->src, dg, prev->file, prev->off, "first given here");
            }
        }
    }
    if (!nexpect) ERR(ck, t, "this test expects nothing: add `expect accept`, `expect reject "
                             "\"reason\"` or `expect FILTER pass`");
}

