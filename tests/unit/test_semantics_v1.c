/*
 * test_semantics_v1.c: what the language v1 constructs compute at run
 * time, checked on the values that matter: real .clf source compiled by
 * the compiler, loaded by the loader and run on real requests
 * (docs/language.md states the same rules).
 *
 * Operands come from the request (query parameters, headers) wherever the
 * point is the run-time operation, so that nothing can be decided at
 * compile time.
 */
#define _DEFAULT_SOURCE 1 /* mkstemps */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* Runs `stmts`, the body of `filter main(req: Request)`, on `request`. */
static h_result body(const char *stmts, const char *request)
{
    static char src[1 << 14];
    snprintf(src, sizeof src, "filter main(req: Request) {\n%s\n}\n", stmts);
    return h_run(src, request);
}

/* Whether the bool expression `cond` holds for `request`. */
static int holds(const char *cond, const char *request)
{
    char stmts[4096];
    snprintf(stmts, sizeof stmts, "if %s { accept \"true\" }\nreject \"false\"", cond);
    h_result r = body(stmts, request);
    cr_assert_eq(r.status, CLF_OK, "%s: status %d", cond, r.status);
    cr_assert(strcmp(r.reason, "true") == 0 || strcmp(r.reason, "false") == 0);
    return r.verdict == CLF_ACCEPT;
}

#define HOLDS(cond, req) cr_assert(holds(cond, req), "expected true: %s   [%s]", cond, req)
#define NOT_HOLDS(cond, req) cr_assert(!holds(cond, req), "expected false: %s   [%s]", cond, req)

/* `expr` == `want` (both .clf source) for `request`; the value must also
 * differ from `want` + 1, so that a comparison that always holds shows. */
static void is_int(const char *expr, const char *want, const char *request)
{
    char c[2048];
    snprintf(c, sizeof c, "(%s) == (%s) && (%s) != (%s) + 1", expr, want, expr, want);
    cr_assert(holds(c, request), "expected %s == %s   [%s]", expr, want, request);
}

static void is_str(const char *expr, const char *want_literal, const char *request)
{
    char c[2048];
    snprintf(c, sizeof c, "(%s) == %s", expr, want_literal);
    cr_assert(holds(c, request), "expected %s == %s   [%s]", expr, want_literal, request);
}

#define A "req.query_param(\"a\").to_int()"
#define B "req.query_param(\"b\").to_int()"
#define INT_MIN_SRC "(-9223372036854775807 - 1)"
#define INT_MAX_SRC "9223372036854775807"

/* ---- integer arithmetic ---- */

Test(semantics_v1, addition_and_subtraction_wrap_around)
{
    is_int(A " + " B, "5", "GET /?a=2&b=3");
    is_int(A " + " B, INT_MIN_SRC, "GET /?a=9223372036854775807&b=1");
    is_int(A " + " B, "-2", "GET /?a=9223372036854775807&b=9223372036854775807");
    is_int(A " - " B, INT_MAX_SRC, "GET /?a=-9223372036854775808&b=1");
    is_int(A " - " B, "-1", "GET /?a=2&b=3");
    is_int(A " * " B, INT_MIN_SRC, "GET /?a=4611686018427387904&b=2");
    is_int(A " * " B, "0", "GET /?a=-9223372036854775808&b=2");
    is_int(A " * " B, "-6", "GET /?a=-2&b=3");
    is_int("-" A, INT_MIN_SRC, "GET /?a=-9223372036854775808"); /* -INT64_MIN wraps */
    is_int("-" A, "-5", "GET /?a=5");
    is_int("- -" A, "5", "GET /?a=5");
    /* The same on literals, where the operands are in the source. */
    is_int(INT_MAX_SRC " + 1", INT_MIN_SRC, "GET /");
    is_int(INT_MIN_SRC " - 1", INT_MAX_SRC, "GET /");
}

Test(semantics_v1, division_and_remainder_never_trap)
{
    is_int(A " / " B, "0", "GET /?a=7&b=0");
    is_int(A " % " B, "0", "GET /?a=7&b=0");
    is_int(A " / " B, "0", "GET /?a=0&b=0");
    is_int(A " / " B, "0", "GET /?a=-9223372036854775808&b=0");
    is_int(A " % " B, "0", "GET /?a=-9223372036854775808&b=0");
    is_int(A " / " B, INT_MIN_SRC, "GET /?a=-9223372036854775808&b=-1");
    is_int(A " % " B, "0", "GET /?a=-9223372036854775808&b=-1");
    is_int(A " / " B, "-" INT_MAX_SRC, "GET /?a=9223372036854775807&b=-1");
    is_int(A " % " B, "0", "GET /?a=5&b=-1");
    /* Truncation toward zero; the remainder has the sign of the left side. */
    is_int(A " / " B, "-3", "GET /?a=-7&b=2");
    is_int(A " / " B, "-3", "GET /?a=7&b=-2");
    is_int(A " / " B, "3", "GET /?a=-7&b=-2");
    is_int(A " / " B, "3", "GET /?a=7&b=2");
    is_int(A " % " B, "-1", "GET /?a=-7&b=2");
    is_int(A " % " B, "1", "GET /?a=7&b=-2");
    is_int(A " % " B, "-1", "GET /?a=-7&b=-2");
    is_int(A " % " B, "1", "GET /?a=7&b=2");
    is_int(A " / " B, "0", "GET /?a=1&b=9223372036854775807");
    is_int(A " / " B, "-1", "GET /?a=-9223372036854775808&b=9223372036854775807");
    is_int(A " % " B, "-1", "GET /?a=-9223372036854775808&b=9223372036854775807");
    is_int("7 / 0 + 7 % 0", "0", "GET /");
}

Test(semantics_v1, precedence_and_associativity)
{
    is_int(A " + " B " * 2", "8", "GET /?a=2&b=3");
    is_int("(" A " + " B ") * 2", "10", "GET /?a=2&b=3");
    is_int(A " - " B " - 1", "-2", "GET /?a=2&b=3");      /* (a - b) - 1 */
    is_int(A " / " B " / 2", "2", "GET /?a=12&b=3");      /* (a / b) / 2, not a / (b / 2) */
    is_int(A " % " B " * 2", "4", "GET /?a=8&b=3");       /* (a % b) * 2 */
    is_int("-" A " + " B, "1", "GET /?a=2&b=3");          /* (-a) + b */
    HOLDS(A " + 1 > " B " && " B " - 1 < " A, "GET /?a=3&b=3");
}

/* ---- str.to_int() ---- */

static void to_int_is(const char *literal, const char *want)
{
    char e[256];
    snprintf(e, sizeof e, "%s.to_int()", literal);
    is_int(e, want, "GET /");
}

Test(semantics_v1, to_int)
{
    to_int_is("\"\"", "0");
    to_int_is("\"abc\"", "0");
    to_int_is("\"12abc\"", "12");
    to_int_is("\" 42\"", "42");
    to_int_is("\"\\t \\t42\"", "42");
    to_int_is("\"42 \"", "42");
    to_int_is("\"-7\"", "-7");
    to_int_is("\"+7\"", "7");
    to_int_is("\"007\"", "7");
    to_int_is("\"-0\"", "0");
    to_int_is("\"+\"", "0");
    to_int_is("\"-\"", "0");
    to_int_is("\"--7\"", "0");
    to_int_is("\"+-7\"", "0");
    to_int_is("\"- 7\"", "0");
    to_int_is("\"0x10\"", "0");
    to_int_is("\"1.9\"", "1");
    to_int_is("\"1e3\"", "1");
    to_int_is("\"\\n42\"", "0");   /* only spaces and tabs are skipped */
    to_int_is("\"\\x0042\"", "0"); /* nor NUL */
    to_int_is("\"9223372036854775807\"", INT_MAX_SRC);
    to_int_is("\"9223372036854775808\"", INT_MAX_SRC);
    to_int_is("\"99999999999999999999\"", INT_MAX_SRC);
    to_int_is("\"99999999999999999999999999999999999999999999\"", INT_MAX_SRC);
    to_int_is("\"-9223372036854775808\"", INT_MIN_SRC);
    to_int_is("\"-9223372036854775809\"", INT_MIN_SRC);
    to_int_is("\"-99999999999999999999\"", INT_MIN_SRC);
    to_int_is("\"00000000000000000000000000009\"", "9");
    /* On request values. */
    is_int("req.header(\"x-n\").to_int()", "-12", "GET /\nX-N: -12abc");
    is_int("req.header(\"x-n\").to_int()", "0", "GET /");
    is_int("req.query_param(\"n\").to_int()", "42", "GET /?n=%2042");
    is_int("req.query_param(\"n\").to_int()", "42", "GET /?n=+42"); /* '+' is a space */
    is_int("req.query_param(\"n\").to_int()", "42", "GET /?n=%2B42");
}

/* ---- index_of, trim, substr ---- */

Test(semantics_v1, index_of)
{
    is_int("req.header(\"x\").index_of(\"c\")", "2", "GET /\nX: abcabc");
    is_int("req.header(\"x\").index_of(\"bc\")", "1", "GET /\nX: abcabc");
    is_int("req.header(\"x\").index_of(\"abcabc\")", "0", "GET /\nX: abcabc");
    is_int("req.header(\"x\").index_of(\"abcabcd\")", "-1", "GET /\nX: abcabc");
    is_int("req.header(\"x\").index_of(\"z\")", "-1", "GET /\nX: abcabc");
    is_int("req.header(\"x\").index_of(\"C\")", "-1", "GET /\nX: abcabc"); /* case-sensitive */
    is_int("req.header(\"x\").index_of(\"\")", "0", "GET /\nX: abcabc");
    is_int("req.header(\"x\").index_of(\"\")", "0", "GET /");
    is_int("req.header(\"x\").index_of(\"a\")", "-1", "GET /");
    is_int("req.header(\"x\").index_of(\"aab\")", "2", "GET /\nX: aaaab");
    is_int("req.header(\"x\").index_of(\", \")", "1", "GET /\nX: a\nX: b"); /* joined */
    is_int("req.header(\"x\").index_of(req.header(\"y\"))", "2", "GET /\nX: abcabc\nY: cab");
    is_int("\"a\\x00b\".index_of(\"b\")", "2", "GET /");
}

Test(semantics_v1, trim)
{
    is_str("\"  \\t a b \\r\\n\".trim()", "\"a b\"", "GET /");
    is_str("\" \\t\\r\\n \".trim()", "\"\"", "GET /");
    is_str("\"\".trim()", "\"\"", "GET /");
    is_str("\"ab\".trim()", "\"ab\"", "GET /");
    is_str("\"\\x0bab\\x0c\".trim()", "\"\\x0bab\\x0c\"", "GET /"); /* VT and FF stay */
    is_str("\"\\x00a\\x00\".trim()", "\"\\x00a\\x00\"", "GET /");
    is_int("req.query_param(\"v\").trim().len()", "1", "GET /?v=+%09x%0D%0A+");
}

Test(semantics_v1, substr_clamps)
{
    const char *r = "GET /\nX: abcdef";
#define S "req.header(\"x\")"
    is_str(S ".substr(1, 3)", "\"bcd\"", r);
    is_str(S ".substr(0, 6)", "\"abcdef\"", r);
    is_str(S ".substr(0, 0)", "\"\"", r);
    is_str(S ".substr(-2, 3)", "\"abc\"", r);    /* negative start is 0 */
    is_str(S ".substr(4, 10)", "\"ef\"", r);     /* oversized count */
    is_str(S ".substr(6, 1)", "\"\"", r);        /* start at the end */
    is_str(S ".substr(10, 2)", "\"\"", r);       /* start past the end */
    is_str(S ".substr(2, -1)", "\"\"", r);       /* negative count */
    is_str(S ".substr(" INT_MIN_SRC ", " INT_MAX_SRC ")", "\"abcdef\"", r);
    is_str(S ".substr(" INT_MAX_SRC ", " INT_MAX_SRC ")", "\"\"", r);
    is_str(S ".substr(" INT_MIN_SRC ", " INT_MIN_SRC ")", "\"\"", r);
    is_str(S ".substr(1, " INT_MAX_SRC ")", "\"bcdef\"", r);
    is_str(S ".substr(" A ", " B ")", "\"cd\"", "GET /?a=2&b=2\nX: abcdef");
    is_str(S ".substr(" A ", " B ")", "\"\"", "GET /?a=2&b=2");
    is_str(S ".substr(1, 2).substr(1, 5)", "\"c\"", r);
#undef S
}

/* ---- capture ---- */

Test(semantics_v1, capture_on_a_header)
{
    const char *r = "GET /\nUser-Agent: Mozilla/5.0 Chrome/120.0.6099 Safari/537";
#define UA "req.header(\"user-agent\")"
    is_str(UA ".capture(/Chrome\\/(\\d+)\\.(\\d+)/, 1)", "\"120\"", r);
    is_str(UA ".capture(/Chrome\\/(\\d+)\\.(\\d+)/, 2)", "\"0\"", r);
    is_str(UA ".capture(/Chrome\\/(\\d+)\\.(\\d+)/, 0)", "\"Chrome/120.0\"", r);
    is_str(UA ".capture(/Chrome\\/(?<major>\\d+)/, \"major\")", "\"120\"", r);
    is_int(UA ".capture(/Chrome\\/(?<major>\\d+)/, \"major\").to_int() + 1", "121", r);
    is_str(UA ".capture(/Firefox\\/(\\d+)/, 1)", "\"\"", r);           /* no match */
    is_str(UA ".capture(/(Firefox)|(Chrome)/, 1)", "\"\"", r);         /* did not take part */
    is_str(UA ".capture(/(Firefox)|(Chrome)/, 2)", "\"Chrome\"", r);
    is_str(UA ".capture(/(x)?Safari/, 1)", "\"\"", r);                /* optional, unset */
    is_str(UA ".capture(/chrome\\/(\\d+)/, 1)", "\"\"", r);            /* case-sensitive */
    is_str(UA ".capture(/chrome\\/(\\d+)/i, 1)", "\"120\"", r);
    is_str(UA ".capture(/(\\d+)/, 1)", "\"5\"", r);                    /* leftmost */
    is_str(UA ".capture(/^(\\w+)/, 1)", "\"Mozilla\"", r);
    is_str(UA ".capture(/(\\w+)$/, 1)", "\"537\"", r);
    is_str(UA ".capture(/Chrome\\/(\\d+)/, 1)", "\"\"", "GET /");      /* absent header */
    /* A repeated header is captured in its joined value. */
    is_str("req.header(\"x\").capture(/a, (b)/, 1)", "\"b\"", "GET /\nX: a\nX: b");
    /* Two captures of one regex, and one on the path. */
    HOLDS(UA ".capture(/(\\w+)\\/(\\d+)/, 1) == \"Mozilla\" && "
          UA ".capture(/(\\w+)\\/(\\d+)/, 2) == \"5\"", r);
    is_str("req.path.capture(/^\\/u\\/([^\\/]+)/, 1)", "\"bob\"", "GET /u/bob/x");
    is_str("req.query.capture(/id=(\\d+)/, 1)", "\"77\"", "GET /p?x=1&id=77");
}

Test(semantics_v1, capture_on_a_computed_value)
{
    const char *r = "GET /\nUser-Agent: Mozilla/5.0 CHROME/99.1";
    is_str(UA ".lower().capture(/chrome\\/(\\d+)/, 1)", "\"99\"", r);
    is_str(UA ".lower().capture(/CHROME\\/(\\d+)/, 1)", "\"\"", r);
    is_str(UA ".lower().capture(/(?<v>\\d+)\\.(\\d+)$/, \"v\")", "\"99\"", r);
    is_str(UA ".lower().capture(/firefox\\/(\\d+)/, 1)", "\"\"", r);
    is_str(UA ".substr(8, 100).capture(/(\\w+)\\//i, 1)", "\"CHROME\"", r);
    is_str("\"k=v; w=x\".capture(/w=(\\w)/, 1)", "\"x\"", "GET /");
    /* Captured text fed to another capture. */
    is_str(UA ".capture(/(CHROME\\/\\d+)/, 1).capture(/(\\d+)/, 1)", "\"99\"", r);
    /* The same computed subject, on a value that differs per request. */
    is_str(UA ".lower().capture(/chrome\\/(\\d+)/, 1)", "\"\"", "GET /\nUser-Agent: x");
}
#undef UA

/* ---- cookies and query parameters ---- */

#define CK(name) "req.cookie(\"" name "\")"

Test(semantics_v1, cookie)
{
    is_str(CK("a"), "\"1\"", "GET /\nCookie: a=1; b=2; a=3");         /* first match */
    is_str(CK("b"), "\"2\"", "GET /\nCookie: a=1; b=2; a=3");
    is_str(CK("c"), "\"\"", "GET /\nCookie: a=1; b=2");               /* absent */
    is_str(CK("a"), "\"\"", "GET /");                                  /* no Cookie header */
    is_str(CK("A"), "\"\"", "GET /\nCookie: a=1");                     /* case-sensitive */
    is_str(CK("a"), "\"1\"", "GET /\nCookie: a = 1 ;b=2");             /* spaces dropped */
    is_str(CK("b"), "\"2\"", "GET /\nCookie: a = 1 ;b=2");
    is_str(CK("a"), "\"\\\"q\\\"\"", "GET /\nCookie: a=\"q\"");        /* quotes kept */
    is_str(CK("a"), "\"%41\"", "GET /\nCookie: a=%41");                /* not decoded */
    is_str(CK("a"), "\"5\"", "GET /\nCookie: a; a=5");                 /* no '=': skipped */
    is_str(CK("a"), "\"x=y\"", "GET /\nCookie: a=x=y");                /* first '=' splits */
    is_str(CK("a"), "\"\"", "GET /\nCookie: a=; a=2");                 /* empty value is found */
    HOLDS("req.cookie(\"a\") == \"\" && req.cookie(\"b\") == \"2\"", "GET /\nCookie: a=; b=2");
    /* Several Cookie lines: each on its own, the first match wins. */
    is_str(CK("b"), "\"2\"", "GET /\nCookie: x=1\nCookie: b=2");
    is_str(CK("x"), "\"1\"", "GET /\nCookie: x=1\nCookie: b=2");
    is_str(CK("a"), "\"first\"", "GET /\nCookie: a=first\ncookie: a=second");
    is_str(CK("a"), "\"second\"", "GET /\nCookie: z=1\nCOOKIE: a=second; a=third");
    /* ... while header() still joins them. */
    is_str("req.header(\"cookie\")", "\"x=1, b=2\"", "GET /\nCookie: x=1\nCookie: b=2");
    /* The name may be computed. */
    is_str("req.cookie(req.query_param(\"n\"))", "\"v\"", "GET /?n=sid\nCookie: id=no; sid=v");
    is_str("req.cookie(\"\")", "\"e\"", "GET /\nCookie: =e");
}

#define QP(name) "req.query_param(\"" name "\")"

Test(semantics_v1, query_param)
{
    is_str(QP("a"), "\"1 2\"", "GET /?a=1+2");
    is_str(QP("a"), "\" x\"", "GET /?a=%20x");
    is_str(QP("a"), "\"%zz\"", "GET /?a=%zz");                 /* invalid escape kept */
    is_str(QP("a"), "\"%4\"", "GET /?a=%4");
    is_str(QP("a"), "\"%\"", "GET /?a=%");
    is_str(QP("a"), "\"%g1x\"", "GET /?a=%g1x");
    is_str(QP("a"), "\"J\"", "GET /?a=%4a");                   /* either case of hex */
    is_str(QP("a"), "\"+\"", "GET /?a=%2B");
    is_str(QP("a"), "\"\"", "GET /?b=1");                      /* absent */
    is_str(QP("a"), "\"\"", "GET /");                          /* no query */
    is_str(QP("a"), "\"\"", "GET /?a=");                       /* empty value */
    is_str(QP("a"), "\"\"", "GET /?a");                        /* no '=' */
    is_str(QP("a"), "\"\"", "GET /?a&a=2");                    /* the first counts */
    is_str(QP("a"), "\"1\"", "GET /?a=1&a=2");
    is_str(QP("a"), "\"2\"", "GET /?x=1&&a=2&");
    is_str(QP("a"), "\"1;b=2\"", "GET /?a=1;b=2");             /* ';' is no separator */
    is_str(QP("a"), "\"x=y\"", "GET /?a=x=y");
    is_str(QP("a b"), "\"5\"", "GET /?a+b=5");                 /* names are decoded */
    is_str(QP("a"), "\"6\"", "GET /?%61=6");
    is_str(QP("A"), "\"\"", "GET /?a=6");                      /* and compared exactly */
    is_str(QP(""), "\"e\"", "GET /?=e");
    is_int(QP("a") ".len()", "3", "GET /?a=%00%FF%00");        /* bytes, not text */
    is_str(QP("a"), "\"\\x00\\xff\\x00\"", "GET /?a=%00%FF%00");
    is_str("req.query_param(req.query_param(\"k\"))", "\"v\"", "GET /?k=n&n=v");
    /* The path is not part of the query. */
    is_str(QP("a"), "\"\"", "GET /a=1");
}

/* ---- client IP ---- */

/* One program for the client-IP tests: reject with a reason naming the
 * address class it found. */
static const char *const IPSRC =
    "const NETS = [192.0.2.0/24, 2001:db8::/32]\n"
    "filter main(req: Request) {\n"
    "  let c = req.client_ip\n"
    "  if !c.valid() { if c in [::/0] || c in [0.0.0.0/0] { reject \"invalid-in-set\" }\n"
    "                  if c == \"junk\".to_ip() { reject \"invalid\" } reject \"invalid-ne\" }\n"
    "  if c == 192.0.2.10 { reject \"192.0.2.10\" }\n"
    "  if c == 198.51.100.7 { reject \"198.51.100.7\" }\n"
    "  if c == 198.51.100.9 { reject \"198.51.100.9\" }\n"
    "  if c == 203.0.113.7 { reject \"203.0.113.7\" }\n"
    "  if c == 10.0.0.1 { reject \"10.0.0.1\" }\n"
    "  if c == 10.0.0.2 { reject \"10.0.0.2\" }\n"
    "  if c == 2001:db8::1 { reject \"2001:db8::1\" }\n"
    "  if c == 1.1.1.1 { reject \"1.1.1.1\" }\n"
    "  if c == 2.2.2.2 { reject \"2.2.2.2\" }\n"
    "  if c == 3.3.3.3 { reject \"3.3.3.3\" }\n"
    "  if c in NETS { reject \"in-nets\" }\n"
    "  accept \"other\"\n"
    "}\n";

typedef struct ipcase {
    const char *peer, *request, *want;
} ipcase;

static void run_ipcases(const char *trusted, const ipcase *cs, size_t n)
{
    clf_program *p = h_program_trusted(IPSRC, trusted);
    clf_ctx *ctx = NULL;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    for (size_t i = 0; i < n; i++) {
        h_result r = h_classify_peer(ctx, cs[i].request, cs[i].peer);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_str_eq(r.reason, cs[i].want, "trusted \"%s\", peer %s, request [%s]: got %s, want %s",
                         trusted, cs[i].peer ? cs[i].peer : "(none)", cs[i].request, r.reason,
                         cs[i].want);
    }
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(semantics_v1, client_ip_without_trusted_proxies)
{
    static const ipcase cs[] = {
        /* No peer: the invalid address, in no set, equal to another invalid one. */
        {NULL, "GET /", "invalid"},
        {NULL, "GET /\nX-Forwarded-For: 198.51.100.7", "invalid"},
        {NULL, "GET /\nX-Real-IP: 198.51.100.7", "invalid"},
        {"not an address", "GET /", "invalid"},
        {"192.0.2.10:80", "GET /", "invalid"},
        /* An untrusted peer: forwarding headers are ignored. */
        {"203.0.113.7", "GET /", "203.0.113.7"},
        {"203.0.113.7", "GET /\nX-Forwarded-For: 198.51.100.7", "203.0.113.7"},
        {"203.0.113.7", "GET /\nX-Real-IP: 198.51.100.9", "203.0.113.7"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 198.51.100.7", "10.0.0.1"},
        {"192.0.2.10", "GET /", "192.0.2.10"},
        {"192.0.2.11", "GET /", "in-nets"},
        {"[2001:db8::1]", "GET /", "2001:db8::1"},
        {"2001:db8:0:0:0:0:0:1", "GET /", "2001:db8::1"},
        {"2001:DB8::2", "GET /", "in-nets"},
        {"2001:db9::1", "GET /", "other"},
        /* An IPv4-mapped peer is the IPv4 address. */
        {"::ffff:192.0.2.10", "GET /", "192.0.2.10"},
        {"::ffff:192.0.2.99", "GET /", "in-nets"},
        {"::ffff:c000:20a", "GET /", "192.0.2.10"},
        {"::192.0.2.10", "GET /", "other"}, /* IPv4-compatible is not mapped */
    };
    run_ipcases("", cs, sizeof cs / sizeof cs[0]);
}

Test(semantics_v1, client_ip_behind_trusted_proxies)
{
    static const ipcase cs[] = {
        /* The peer is trusted: X-Forwarded-For, walked from the right. */
        {"10.0.0.1", "GET /", "10.0.0.1"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 198.51.100.7", "198.51.100.7"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 198.51.100.7, 10.0.0.5", "198.51.100.7"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 1.1.1.1, 2.2.2.2, 10.9.9.9", "2.2.2.2"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 1.1.1.1,2.2.2.2", "2.2.2.2"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 2.2.2.2 , , 10.0.0.9 ,", "2.2.2.2"},
        /* All trusted: the leftmost. */
        {"10.0.0.1", "GET /\nX-Forwarded-For: 10.0.0.2, 10.0.0.3", "10.0.0.2"},
        /* The first untrusted element does not parse: invalid. */
        {"10.0.0.1", "GET /\nX-Forwarded-For: 1.1.1.1, junk, 10.0.0.3", "invalid"},
        /* Ports are dropped. */
        {"10.0.0.1", "GET /\nX-Forwarded-For: 198.51.100.7:4711", "198.51.100.7"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: [2001:db8::1]:443, 10.0.0.2:80", "2001:db8::1"},
        /* Several lines are one list, in order. */
        {"10.0.0.1", "GET /\nX-Forwarded-For: 3.3.3.3\nX-Forwarded-For: 10.0.0.5", "3.3.3.3"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 1.1.1.1\nX-Forwarded-For: 2.2.2.2, 10.0.0.9",
         "2.2.2.2"},
        /* No X-Forwarded-For: X-Real-IP, else the peer. */
        {"10.0.0.1", "GET /\nX-Real-IP: 198.51.100.9", "198.51.100.9"},
        {"10.0.0.1", "GET /\nX-Real-IP: junk", "invalid"},
        {"10.0.0.1", "GET /\nX-Forwarded-For: 1.1.1.1\nX-Real-IP: 198.51.100.9", "1.1.1.1"},
        /* An untrusted peer still ignores both. */
        {"203.0.113.7", "GET /\nX-Forwarded-For: 1.1.1.1\nX-Real-IP: 198.51.100.9",
         "203.0.113.7"},
        /* A trusted IPv4 peer given IPv4-mapped; an IPv6 trusted proxy. */
        {"::ffff:10.0.0.1", "GET /\nX-Forwarded-For: 2.2.2.2", "2.2.2.2"},
        {"fd00::1", "GET /\nX-Forwarded-For: 2001:db8::1, fd00::2", "2001:db8::1"},
        {"fd00::1", "GET /\nX-Forwarded-For: ::ffff:192.0.2.10", "192.0.2.10"},
        /* No peer: invalid whatever the headers say. */
        {NULL, "GET /\nX-Forwarded-For: 1.1.1.1", "invalid"},
    };
    run_ipcases("10.0.0.0/8, fd00::/8", cs, sizeof cs / sizeof cs[0]);
}

Test(semantics_v1, ip_values)
{
    HOLDS("192.0.2.1 == \"192.0.2.1\".to_ip()", "GET /");
    HOLDS("2001:db8::1 == \"2001:DB8:0::1\".to_ip()", "GET /");
    HOLDS("2001:db8::1 == \"[2001:db8::1]\".to_ip()", "GET /");
    HOLDS("192.0.2.1 == \"::ffff:192.0.2.1\".to_ip()", "GET /");
    HOLDS("::ffff:192.0.2.1 == 192.0.2.1", "GET /");
    NOT_HOLDS("::1 == 127.0.0.1", "GET /");
    NOT_HOLDS("192.0.2.1 == 192.0.2.2", "GET /");
    NOT_HOLDS("\"192.0.2.1 \".to_ip().valid()", "GET /");
    NOT_HOLDS("\"192.0.2.256\".to_ip().valid()", "GET /");
    NOT_HOLDS("\"\".to_ip().valid()", "GET /");
    NOT_HOLDS("\"192.0.2.0/24\".to_ip().valid()", "GET /");
    NOT_HOLDS("\"fe80::1%eth0\".to_ip().valid()", "GET /");
    HOLDS("\"\".to_ip() == \"x\".to_ip()", "GET /"); /* invalid equals invalid */
    NOT_HOLDS("\"\".to_ip() == 0.0.0.0", "GET /");
    NOT_HOLDS("\"\".to_ip() == ::", "GET /");
    HOLDS("\"0.0.0.0\".to_ip() == 0.0.0.0 && 0.0.0.0.valid()", "GET /");
    HOLDS("req.header(\"x\").to_ip() in [192.0.2.0/24]", "GET /\nX: 192.0.2.200");
    NOT_HOLDS("req.header(\"x\").to_ip() in [192.0.2.0/24]", "GET /\nX: 192.0.3.0");
    HOLDS("req.header(\"x\").to_ip() in [192.0.2.0/24]", "GET /\nX: ::ffff:192.0.2.1");
    NOT_HOLDS("req.header(\"x\").to_ip() in [::/0]", "GET /\nX: nope");
    HOLDS("req.header(\"x\").to_ip() in [::/0]", "GET /\nX: 192.0.2.1"); /* mapped: in ::/0 */
    HOLDS("req.header(\"x\").to_ip() in [10.0.0.0/8, 10.0.0.0/16, 192.0.2.7, 192.0.2.8]",
          "GET /\nX: 192.0.2.8");
    NOT_HOLDS("req.header(\"x\").to_ip() in [10.0.0.0/8, 192.0.2.7, 192.0.2.9]",
              "GET /\nX: 192.0.2.8");
    HOLDS("req.header(\"x\").to_ip() in [0.0.0.0/0]", "GET /\nX: 255.255.255.255");
    NOT_HOLDS("req.header(\"x\").to_ip() in [0.0.0.0/0]", "GET /\nX: ::1");
}

/* ---- mutable locals ---- */

Test(semantics_v1, mutable_locals_in_branches)
{
    const char *src = "let a = req.query_param(\"a\") == \"1\"\n"
                      "let b = req.query_param(\"b\") == \"1\"\n"
                      "let mut s = 0\n"
                      "if a { s += 5 }\n"
                      "if b { s = s * 2 }\n"
                      "if s == 0 { reject \"0\" }\n"
                      "if s == 5 { reject \"5\" }\n"
                      "if s == 10 { reject \"10\" }\n"
                      "accept\n";
    static const struct { const char *req, *want; } cs[] = {
        {"GET /?a=0&b=0", "0"}, {"GET /?a=1&b=0", "5"}, {"GET /?a=0&b=1", "0"}, {"GET /?a=1&b=1", "10"}};
    for (size_t i = 0; i < 4; i++) {
        h_result r = body(src, cs[i].req);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_str_eq(r.reason, cs[i].want, "%s", cs[i].req);
    }
}

Test(semantics_v1, mutable_locals_assigned_on_every_path)
{
    const char *src = "let n = req.query_param(\"n\").to_int()\n"
                      "let mut s = \"none\"\n"
                      "let mut k = 100\n"
                      "if n == 1 { s = \"one\" k -= 1 } else if n == 2 { s = \"two\" k -= 2 }\n"
                      "else { s = \"many\" }\n"
                      "if n > 5 { k = k + n if n > 7 { k += 1000 } }\n"
                      "if s == \"one\" && k == 99 { reject \"one\" }\n"
                      "if s == \"two\" && k == 98 { reject \"two\" }\n"
                      "if s == \"many\" && k == 100 { reject \"few\" }\n"
                      "if s == \"many\" && k == 106 { reject \"six\" }\n"
                      "if s == \"many\" && k == 1108 { reject \"eight\" }\n"
                      "accept \"bad\"\n";
    static const struct { const char *req, *want; } cs[] = {
        {"GET /?n=1", "one"}, {"GET /?n=2", "two"}, {"GET /?n=3", "few"},
        {"GET /?n=6", "six"}, {"GET /?n=8", "eight"}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        h_result r = body(src, cs[i].req);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_str_eq(r.reason, cs[i].want, "%s", cs[i].req);
    }
}

Test(semantics_v1, immutable_copy_keeps_the_old_value)
{
    const char *src = "let mut m = req.query_param(\"a\").to_int()\n"
                      "let k = m\n"
                      "let mut s = req.query_param(\"s\")\n"
                      "let t = s\n"
                      "let mut q = m\n"
                      "m = 7\n"
                      "m += 1\n"
                      "s = \"changed\"\n"
                      "q -= 1\n"
                      "if k == 1 && m == 8 && q == 0 && t == \"orig\" && s == \"changed\" { accept \"ok\" }\n"
                      "reject \"bad\"\n";
    h_result r = body(src, "GET /?a=1&s=orig");
    cr_assert_eq(r.status, CLF_OK);
    cr_assert_str_eq(r.reason, "ok");
}

Test(semantics_v1, mutable_ip_and_bool)
{
    const char *src = "let mut ip = 192.0.2.1\n"
                      "let old = ip\n"
                      "let mut f = false\n"
                      "if req.path == \"/x\" { ip = req.header(\"x\").to_ip() f = true }\n"
                      "if f && ip == 198.51.100.7 && old == 192.0.2.1 { accept \"changed\" }\n"
                      "if !f && ip == 192.0.2.1 { accept \"same\" }\n"
                      "reject \"bad\"\n";
    h_result r = body(src, "GET /x\nX: 198.51.100.7");
    cr_assert_str_eq(r.reason, "changed");
    r = body(src, "GET /y\nX: 198.51.100.7");
    cr_assert_str_eq(r.reason, "same");
}

/* ---- functions and filter calls ---- */

/* A fn takes parameters of every type, Request included (which needs no
 * register), returns every type, and leaves its caller's locals alone. */
Test(semantics_v1, fn_results)
{
    const char *src =
        "fn pick(s: str, n: int, b: bool, a: ip, r: Request, t: str) -> str {\n"
        "    if !b { return \"off\" }\n"
        "    if !(a in [192.0.2.0/24]) { return \"far\" }\n"
        "    if r.path != \"/p\" { return r.path }\n"
        "    if t == \"tail\" { return s.substr(0, n) }\n"
        "    return t\n"
        "}\n"
        "fn neg(n: int) -> int { return -n }\n"
        "fn both(a: bool, b: bool) -> bool { return a && !b }\n"
        "fn addr(s: str) -> ip { return s.to_ip() }\n"
        "filter main(req: Request) {\n"
        "  let n = req.query_param(\"n\").to_int()\n"
        "  let on = req.query_param(\"on\") == \"1\"\n"
        "  let keep = req.header(\"x\")\n"
        "  let r = pick(req.header(\"x\"), n, on, addr(req.query_param(\"ip\")), req, "
        "req.query_param(\"t\"))\n"
        "  if neg(n) != -n || both(on, false) != on || !addr(\"::1\").valid() { reject \"fn-bad\" }\n"
        "  if keep != req.header(\"x\") || n != req.query_param(\"n\").to_int() { reject \"clobbered\" }\n"
        "  if r == \"off\" { reject \"off\" }\n"
        "  if r == \"far\" { reject \"far\" }\n"
        "  if r == \"/q\" { reject \"path\" }\n"
        "  if r == \"hel\" { reject \"hel\" }\n"
        "  if r == \"other\" { reject \"other\" }\n"
        "  accept\n"
        "}\n";
    static const struct { const char *req, *want; } cs[] = {
        {"GET /p?n=3&on=0&ip=192.0.2.1&t=tail\nX: hello", "off"},
        {"GET /p?n=3&on=1&ip=192.0.3.1&t=tail\nX: hello", "far"},
        {"GET /p?n=3&on=1&t=tail\nX: hello", "far"},
        {"GET /q?n=3&on=1&ip=192.0.2.1&t=tail\nX: hello", "path"},
        {"GET /p?n=3&on=1&ip=192.0.2.1&t=tail\nX: hello", "hel"},
        {"GET /p?n=3&on=1&ip=::ffff:192.0.2.1&t=other\nX: hello", "other"},
    };
    clf_program *p = h_program(src);
    clf_ctx *ctx = NULL;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        h_result r = h_classify(ctx, cs[i].req);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_str_eq(r.reason, cs[i].want, "[%s]", cs[i].req);
    }
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* A call must compute the same inlined (the default for small callees)
 * or kept as OP_CALL/OP_CALLF (classifyc --no-inline): each call test runs
 * both ways, and the inlined program must have no call left. */
static void assert_no_calls(const clf_program *p, int no_inline)
{
    char *dis = h_disasm(p);
    int calls = strstr(dis, " CALL ") != NULL || strstr(dis, " CALLF ") != NULL;
    cr_assert_eq(calls, no_inline, "inlining %s:\n%s", no_inline ? "off" : "on", dis);
    free(dis);
}

static void nested_calls(int no_inline)
{
    h_no_inline = no_inline;
    const char *src =
        "fn f3(x: int, s: str) -> int { let t = x * 3 return t + s.len() }\n"
        "fn f2(x: int, s: str) -> int { let a = x + 1 let b = f3(a, s) return b * 2 }\n"
        "fn f1(x: int, s: str) -> int { let k = s.lower() return f2(x, k) - f2(0, \"\") }\n"
        "fn id(x: int) -> int { return x }\n"
        "filter main(req: Request) {\n"
        "  let a = req.query_param(\"a\").to_int()\n"
        "  let s = req.query_param(\"s\")\n"
        "  let r = f1(a, s)\n"
        "  let q = id(id(id(a)))\n"
        "  let w = f3(f3(a, \"\"), s) + f3(id(a), s)\n"
        "  if r == 2 * (3 * (a + 1) + s.len()) - 6 && q == a && w == 9 * a + 3 * a + 2 * s.len() {\n"
        "    accept \"ok\"\n"
        "  }\n"
        "  reject \"bad\"\n"
        "}\n";
    clf_program *p = h_program(src);
    assert_no_calls(p, no_inline);
    clf_ctx *ctx = NULL;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    static const char *const reqs[] = {"GET /?a=4&s=abc", "GET /?a=-9&s=", "GET /?a=0&s=xyzzy"};
    for (size_t i = 0; i < 3; i++) {
        h_result r = h_classify(ctx, reqs[i]);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_str_eq(r.reason, "ok", "[%s]", reqs[i]);
    }
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(semantics_v1, nested_calls) { nested_calls(0); }
Test(semantics_v1, nested_calls_not_inlined) { nested_calls(1); }

static void filters_calling_filters(int no_inline)
{
    h_no_inline = no_inline;
    const char *src =
        "filter deepest(req: Request) {\n"
        "  if req.path == \"/d-reject\" { reject \"deepest\" }\n"
        "  if req.path == \"/d-accept\" { accept \"deepest-ok\" }\n"
        "  if req.path == \"/d-pass\" { pass }\n"
        "}\n"
        "filter middle(req: Request) {\n"
        "  let before = req.path.len()\n"
        "  deepest(req)\n"
        "  if req.path == \"/d-pass\" && before == 7 { reject \"middle-after-pass\" }\n"
        "  if req.path == \"/m-reject\" { reject \"middle\" }\n"
        "}\n"
        "filter main(req: Request) {\n"
        "  let keep = req.path\n"
        "  middle(req)\n"
        "  deepest(req)\n"
        "  if keep == req.path { reject \"main-end\" }\n"
        "  accept\n"
        "}\n";
    clf_program *p = h_program(src);
    assert_no_calls(p, no_inline);
    clf_ctx *ctx = NULL;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    static const struct { const char *req, *want; clf_verdict_kind v; } cs[] = {
        {"GET /d-reject", "deepest", CLF_REJECT},      /* a verdict 2 calls down ends the run */
        {"GET /d-accept", "deepest-ok", CLF_ACCEPT},   /* accept too */
        {"GET /d-pass", "middle-after-pass", CLF_REJECT}, /* pass returns to the caller */
        {"GET /m-reject", "middle", CLF_REJECT},
        {"GET /other", "main-end", CLF_REJECT},        /* ends fall through */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        h_result r = h_classify(ctx, cs[i].req);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_eq(r.verdict, cs[i].v, "[%s]", cs[i].req);
        cr_assert_str_eq(r.reason, cs[i].want, "[%s]", cs[i].req);
    }
    /* The same context again: the call frames were unwound every time. */
    for (int k = 0; k < 50; k++) {
        h_result r = h_classify(ctx, cs[k % 5].req);
        cr_assert_str_eq(r.reason, cs[k % 5].want);
    }
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(semantics_v1, filters_calling_filters) { filters_calling_filters(0); }
Test(semantics_v1, filters_calling_filters_not_inlined) { filters_calling_filters(1); }

Test(semantics_v1, filter_in_an_imported_module)
{
    char lib[] = "/tmp/clf-lib-XXXXXX.clf";
    int fd = mkstemps(lib, 4);
    cr_assert(fd >= 0);
    const char *libsrc =
        "fn lower_ua(req: Request) -> str { return req.header(\"user-agent\").lower() }\n"
        "pub fn score(ua: str) -> int { if ua.contains(\"bot\") { return 10 } return 0 }\n"
        "pub filter check(req: Request) {\n"
        "  if lower_ua(req).contains(\"evil\") { reject \"lib-evil\" }\n"
        "  if req.path == \"/skip\" { pass }\n"
        "  if req.path == \"/ok\" { accept \"lib-ok\" }\n"
        "}\n";
    cr_assert(write(fd, libsrc, strlen(libsrc)) == (ssize_t)strlen(libsrc));
    close(fd);
    char src[1024];
    snprintf(src, sizeof src,
             "import \"%s\" as lib\n"
             "filter main(req: Request) {\n"
             "  lib.check(req)\n"
             "  if lib.score(req.header(\"user-agent\")) > 5 { reject \"main-bot\" }\n"
             "  accept \"main\"\n"
             "}\n",
             strrchr(lib, '/') + 1);
    clf_program *p = h_program(src);
    unlink(lib);
    clf_ctx *ctx = NULL;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    static const struct { const char *req, *want; } cs[] = {
        {"GET /\nUser-Agent: EVIL thing", "lib-evil"},
        {"GET /ok\nUser-Agent: a bot", "lib-ok"},
        {"GET /skip\nUser-Agent: a bot", "main-bot"},
        {"GET /\nUser-Agent: firefox", "main"},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        h_result r = h_classify(ctx, cs[i].req);
        cr_assert_eq(r.status, CLF_OK);
        cr_assert_str_eq(r.reason, cs[i].want, "[%s]", cs[i].req);
    }
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* A chain of n fns under main, f0 .. f{n-1}: each adds one to the next. */
static char *chain(int n)
{
    size_t cap = 1 << 16, o = 0;
    char *src = malloc(cap);
    for (int i = 0; i < n; i++) {
        if (i < n - 1)
            o += (size_t)snprintf(src + o, cap - o,
                                  "fn f%d(x: int) -> int { let y = f%d(x) return y + 1 }\n", i, i + 1);
        else
            o += (size_t)snprintf(src + o, cap - o, "fn f%d(x: int) -> int { return x + 1 }\n", i);
    }
    snprintf(src + o, cap - o,
             "filter main(req: Request) { if f0(req.query_param(\"a\").to_int()) == %d "
             "{ accept \"ok\" } reject \"bad\" }\n", n + 2);
    return src;
}

/* Calls nest at most 200 deep (VM_MAX_CALL_DEPTH), main included. */
Test(semantics_v1, deepest_call_chain_runs)
{
    char *src = chain(199);
    h_result r = h_run(src, "GET /?a=2");
    cr_assert_eq(r.status, CLF_OK);
    cr_assert_str_eq(r.reason, "ok");
    free(src);
}

/* One more level is a compile error, not a file that fails to load. */
Test(semantics_v1, too_deep_call_chain_is_a_compile_error)
{
    char *src = chain(200);
    size_t len;
    char *d = NULL;
    uint8_t *bin = h_compile(src, &len, &d);
    cr_assert_null(bin);
    cr_assert(d && strstr(d, ":201:8: error: calls nest 201 deep from 'main', more than 200"), "%s",
              d ? d : "");
    free(d);
    free(src);
}

/* A mutable local reassigned after `let` from a request field is tested
 * on its current value, not on the field it started as. */
Test(semantics_v1, mutable_local_loses_its_origin)
{
    const char *src = "let mut ua = req.header(\"user-agent\")\n"
                      "if req.path == \"/swap\" { ua = req.query_param(\"v\") }\n"
                      "if ua.matches(/evil/) && ua.contains([\"evil\"]) && ua.contains_word(\"evil\")\n"
                      "   && ua.capture(/(e\\w+)/, 1) == \"evil\" { reject \"evil\" }\n"
                      "if ua.matches(/evil/) || ua.contains([\"evil\"]) { reject \"half\" }\n"
                      "accept \"clean\"\n";
    cr_assert_str_eq(body(src, "GET /swap?v=an+evil+one\nUser-Agent: firefox").reason, "evil");
    cr_assert_str_eq(body(src, "GET /swap?v=fine\nUser-Agent: evil").reason, "clean");
    cr_assert_str_eq(body(src, "GET /x?v=fine\nUser-Agent: evil").reason, "evil");
}

/* Regression: a repeated header whose first value is empty was joined
 * without its ", " separator, and the value read two stale bytes of the
 * string workspace (a previous request's data, or NULs) in its place.
 * Found through stdlib/default.clf: two empty User-Agent lines. */
Test(semantics_v1, joined_header_with_an_empty_first_value)
{
    const char *src = "filter main(req: Request) {\n"
                      "    let v = req.header(\"x-test\")\n"
                      "    if v == \", b\" { accept \"joined\" }\n"
                      "    if v == \", \" { accept \"two-empty\" }\n"
                      "    reject\n"
                      "}\n";
    h_result r = h_run(src, "GET /\nX-Test: \nX-Test: b");
    cr_assert_eq(r.status, CLF_OK);
    cr_assert_str_eq(r.reason, "joined");
    r = h_run(src, "GET /\nX-Test: \nX-Test: ");
    cr_assert_str_eq(r.reason, "two-empty");
}
