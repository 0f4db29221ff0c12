/*
 * test_httpfields.c: vm/httpfields.c, cookie and query-parameter lookup
 * and percent-decoding.
 *
 * Inputs are copied into heap blocks of exactly their length, so an ASan
 * build catches a read past the end (the functions take no NUL).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "httpfields.h"

static char *exact(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    cr_assert(p);
    memcpy(p, s, n);
    return p;
}

/* The value of cookie `name` in `hdr`, or "<none>". */
static const char *cookie(const char *hdr, const char *name)
{
    static char out[4][256];
    static int k;
    char *o = out[k++ % 4];
    size_t n = strlen(hdr);
    char *h = exact(hdr, n);
    static const char sentinel[1];
    const char *v = sentinel;
    size_t vn = 12345;
    if (!vm_http_cookie(h, n, name, strlen(name), &v, &vn)) {
        cr_assert(v == sentinel && vn == 12345, "outputs touched on a miss");
        free(h);
        return "<none>";
    }
    cr_assert(v >= h && vn <= n && (size_t)(v - h) <= n - vn, "value is not a slice of hdr");
    cr_assert(vn < sizeof out[0]);
    memcpy(o, v, vn);
    o[vn] = '\0';
    free(h);
    return o;
}

#define COOKIE(hdr, name, want) cr_expect_str_eq(cookie(hdr, name), want, "cookie %s in \"%s\"", name, hdr)

Test(httpfields, cookie_basic)
{
    COOKIE("a=1; b=2", "a", "1");
    COOKIE("a=1; b=2", "b", "2");
    COOKIE("a=1; b=2", "c", "<none>");
    COOKIE("a=1", "a", "1");
    COOKIE("session=abc123def", "session", "abc123def");
    COOKIE("", "a", "<none>");
    COOKIE(";;;", "a", "<none>");
}

Test(httpfields, cookie_first_match_wins)
{
    COOKIE("a=1; a=2", "a", "1");
    COOKIE("b=0; a=first; c=3; a=second", "a", "first");
}

Test(httpfields, cookie_spaces)
{
    COOKIE("  a = 1 ;  b\t=\t2  ", "a", "1");
    COOKIE("  a = 1 ;  b\t=\t2  ", "b", "2");
    COOKIE("a=1;b=2", "b", "2");
    COOKIE("a=1;   b=2;", "b", "2");
    /* Inner spaces are part of the value. */
    COOKIE("a= x y ", "a", "x y");
    /* and of the name, which then is not "a". */
    COOKIE("a b=1; a=2", "a", "2");
    COOKIE("a b=1", "a b", "1");
}

Test(httpfields, cookie_without_equals_is_skipped)
{
    COOKIE("flag; a=1", "flag", "<none>");
    COOKIE("flag; a=1", "a", "1");
    COOKIE("a; a=2", "a", "2");
    COOKIE("a", "a", "<none>");
}

Test(httpfields, cookie_name_suffix_and_prefix)
{
    COOKIE("xa=1; a=2", "a", "2");
    COOKIE("xa=1; a=2", "xa", "1");
    COOKIE("ab=1", "a", "<none>");
    COOKIE("ab=1; a=2", "a", "2");
    COOKIE("a=1", "ab", "<none>");
    COOKIE("a=1", "", "<none>");
}

Test(httpfields, cookie_values_as_sent)
{
    COOKIE("a=; b=2", "a", "");
    COOKIE("b=2; a=", "a", "");
    COOKIE("a=  ; b=2", "a", "");
    COOKIE("a=b=c", "a", "b=c");
    COOKIE("a=\"x y\"", "a", "\"x y\"");
    COOKIE("a=%20+x", "a", "%20+x");
    /* ',' does not separate cookies (RFC 6265 4.2.1 uses "; "). */
    COOKIE("a=1, b=2", "a", "1, b=2");
    COOKIE("a=1, b=2", "b", "<none>");
}

Test(httpfields, cookie_names_are_case_sensitive)
{
    COOKIE("A=1", "a", "<none>");
    COOKIE("A=1; a=2", "a", "2");
    COOKIE("A=1; a=2", "A", "1");
}

Test(httpfields, cookie_empty_name)
{
    COOKIE("=v; a=1", "", "v");
    COOKIE(" = v ; a=1", "", "v");
    COOKIE("a=1", "", "<none>");
}

Test(httpfields, cookie_length_bounds)
{
    const char *v;
    size_t vn;
    cr_expect_not(vm_http_cookie("a=1; b=2", 3, "b", 1, &v, &vn));
    cr_assert(vm_http_cookie("a=1; b=2", 7, "b", 1, &v, &vn));
    cr_expect_eq(vn, 0);
    cr_assert(vm_http_cookie("a=123", 4, "a", 1, &v, &vn));
    cr_expect_eq(vn, 2);
    cr_expect_eq(strncmp(v, "12", 2), 0);
    /* The name's length counts, not a NUL. */
    cr_assert(vm_http_cookie("ab=1; a=2", 9, "abc", 1, &v, &vn));
    cr_expect_eq(*v, '2');
    cr_expect_not(vm_http_cookie(NULL, 0, "a", 1, &v, &vn));
}

/* The value of query parameter `name`, "<absent>", or "<too small>";
 * decodes into a buffer of cap bytes followed by guard bytes. */
static const char *qparam_cap(const char *q, const char *name, size_t cap)
{
    static char out[4][256];
    static int k;
    char *o = out[k++ % 4];
    size_t n = strlen(q);
    char *qq = exact(q, n);
    char buf[256 + 16];
    cr_assert(cap <= 256);
    memset(buf, '#', sizeof buf);
    long r = vm_http_query_param(qq, n, name, strlen(name), buf, cap);
    free(qq);
    for (size_t i = cap; i < sizeof buf; i++) cr_assert_eq(buf[i], '#', "wrote past cap");
    if (r == -1) return "<absent>";
    if (r == -2) return "<too small>";
    cr_assert(r >= 0 && (size_t)r <= cap, "bad return %ld", r);
    memcpy(o, buf, (size_t)r);
    o[r] = '\0';
    return o;
}

#define QP(q, name, want) cr_expect_str_eq(qparam_cap(q, name, 256), want, "param %s in \"%s\"", name, q)

Test(httpfields, query_basic)
{
    QP("a=1&b=%20x", "a", "1");
    QP("a=1&b=%20x", "b", " x");
    QP("a=1&b=2", "c", "<absent>");
    QP("", "a", "<absent>");
    QP("a=1", "a", "1");
    QP("id=42&sort=desc", "sort", "desc");
}

Test(httpfields, query_plus_and_escapes)
{
    QP("q=a+b", "q", "a b");
    QP("q=a%2Bb", "q", "a+b");
    QP("q=a%2bb", "q", "a+b");
    QP("q=%2B%2b+", "q", "++ ");
    QP("q=caf%C3%A9", "q", "caf\xc3\xa9");
    QP("q=%41%4a%4A", "q", "AJJ");
}

Test(httpfields, query_invalid_escapes_kept)
{
    QP("q=%zz", "q", "%zz");
    QP("q=%", "q", "%");
    QP("q=%2", "q", "%2");
    QP("q=100%", "q", "100%");
    QP("q=%%41", "q", "%A");
    QP("q=%g1", "q", "%g1");
    QP("q=%1g", "q", "%1g");
    QP("q=%+1", "q", "% 1");
    /* An escape is not cut by the end of the value. */
    QP("q=%4&r=1", "q", "%4");
}

Test(httpfields, query_duplicates_and_shapes)
{
    QP("a=1&a=2", "a", "1");
    QP("b=0&a=first&a=second", "a", "first");
    QP("flag&a=1", "flag", "");
    QP("flag", "flag", "");
    QP("flag=", "flag", "");
    QP("a=b=c", "a", "b=c");
    QP("&&a=1&&", "a", "1");
    QP("a=1&&b=2&", "b", "2");
    /* ';' is not a separator. */
    QP("a=1;b=2", "a", "1;b=2");
    QP("a=1;b=2", "b", "<absent>");
    /* The '?' is the caller's to strip. */
    QP("?a=1", "a", "<absent>");
    QP("?a=1", "?a", "1");
}

Test(httpfields, query_names)
{
    QP("A=1", "a", "<absent>");
    QP("ab=1&a=2", "a", "2");
    QP("ab=1&a=2", "ab", "1");
    QP("abc=1", "ab", "<absent>");
    QP("a=1", "ab", "<absent>");
    QP("xa=1&a=2", "a", "2");
    /* Empty names: "=x" is the pair ("", "x"). */
    QP("=x&a=1", "", "x");
    QP("a=1&=", "", "");
    QP("a=1", "", "<absent>");
    QP("&", "", "<absent>");
}

Test(httpfields, query_names_are_decoded)
{
    QP("my+name=1", "my name", "1");
    QP("my%20name=2", "my name", "2");
    QP("%61=3", "a", "3");
    QP("a%3Db=4", "a=b", "4");
    QP("a%3db=4", "a", "<absent>");
    QP("a+=5", "a ", "5");
    QP("%2B=6", "+", "6");
    QP("+=7", "+", "<absent>");
    QP("%zz=8", "%zz", "8");
    QP("a%26b=9", "a&b", "9");
    QP("a%00b=10", "a", "<absent>");
}

Test(httpfields, query_buffer_too_small)
{
    cr_expect_str_eq(qparam_cap("a=hello", "a", 4), "<too small>");
    cr_expect_str_eq(qparam_cap("a=hello", "a", 5), "hello");
    cr_expect_str_eq(qparam_cap("a=hello", "a", 0), "<too small>");
    cr_expect_str_eq(qparam_cap("a=&b=2", "a", 0), "");
    cr_expect_str_eq(qparam_cap("a", "a", 0), "");
    /* The decoded length counts, not the encoded one. */
    cr_expect_str_eq(qparam_cap("a=%41%42", "a", 2), "AB");
    cr_expect_str_eq(qparam_cap("a=%41%42", "a", 1), "<too small>");
    cr_expect_str_eq(qparam_cap("a=x+y", "a", 3), "x y");
    /* A small buffer does not change which parameter is found. */
    cr_expect_str_eq(qparam_cap("a=toolong&a=ok", "a", 2), "<too small>");
    cr_expect_str_eq(qparam_cap("b=1", "a", 0), "<absent>");
}

Test(httpfields, query_nul_bytes_and_lengths)
{
    char buf[8];
    /* %00 is a byte like any other. */
    cr_assert_eq(vm_http_query_param("a=x%00y", 7, "a", 1, buf, sizeof buf), 3);
    cr_expect_eq(memcmp(buf, "x\0y", 3), 0);
    /* The length ends the query, not a NUL. */
    cr_assert_eq(vm_http_query_param("a=12&b=3", 3, "a", 1, buf, sizeof buf), 1);
    cr_expect_eq(buf[0], '1');
    cr_expect_eq(vm_http_query_param("a=12&b=3", 5, "b", 1, buf, sizeof buf), -1);
    cr_expect_eq(vm_http_query_param("a=%41", 4, "a", 1, buf, sizeof buf), 2);
    cr_expect_eq(memcmp(buf, "%4", 2), 0);
    cr_expect_eq(vm_http_query_param(NULL, 0, "a", 1, buf, sizeof buf), -1);
    cr_expect_eq(vm_http_query_param("ab=1", 4, "abc", 2, buf, sizeof buf), 1);
}

static const char *decode(const char *s, int plus)
{
    static char out[4][256];
    static int k;
    char *o = out[k++ % 4];
    size_t n = strlen(s);
    char *src = exact(s, n);
    memset(o, '#', sizeof out[0]);
    size_t m = vm_http_pct_decode(src, n, o, plus);
    cr_assert(m <= n);
    cr_assert_eq(o[m], '#', "wrote past the decoded length");
    o[m] = '\0';
    free(src);
    return o;
}

Test(httpfields, pct_decode)
{
    cr_expect_str_eq(decode("a%20b", 0), "a b");
    cr_expect_str_eq(decode("a+b", 0), "a+b");
    cr_expect_str_eq(decode("a+b", 1), "a b");
    cr_expect_str_eq(decode("%2B", 1), "+");
    cr_expect_str_eq(decode("%41%4a%4A", 0), "AJJ");
    cr_expect_str_eq(decode("", 0), "");
    cr_expect_str_eq(decode("%", 0), "%");
    cr_expect_str_eq(decode("%4", 0), "%4");
    cr_expect_str_eq(decode("%zz%41", 0), "%zzA");
    cr_expect_str_eq(decode("%%41", 0), "%A");
    cr_expect_str_eq(decode("%252F", 0), "%2F"); /* one level only */
    cr_expect_str_eq(decode("/a%2Fb/", 0), "/a/b/");
    cr_expect_str_eq(decode("%e2%82%ac", 0), "\xe2\x82\xac");
    char o[4];
    cr_assert_eq(vm_http_pct_decode("%00%ff", 6, o, 0), 2);
    cr_expect_eq(o[0], '\0');
    cr_expect_eq((unsigned char)o[1], 0xff);
}

Test(httpfields, pct_decode_in_place)
{
    char s[] = "a%20b+c%zz%41%";
    size_t m = vm_http_pct_decode(s, strlen(s), s, 1);
    cr_assert_eq(m, 10);
    cr_expect_eq(memcmp(s, "a b c%zzA%", 10), 0);
    char t[] = "plain";
    cr_assert_eq(vm_http_pct_decode(t, 5, t, 0), 5);
    cr_expect_eq(memcmp(t, "plain", 5), 0);
}
