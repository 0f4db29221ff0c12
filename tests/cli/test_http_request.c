/*
 * Unit tests for cli/http_request.c: what each request file parses to, and
 * the exact message for each kind of malformed one.
 */
#include "http_request.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* String literals may hold NUL bytes: take their size, not strlen. */
#define PARSE_OK(req, lit) parse_ok((req), (lit), sizeof(lit) - 1)
#define PARSE_ERR(lit, msg) parse_err((lit), sizeof(lit) - 1, (msg))

static void parse_ok(http_request *req, const char *data, size_t len)
{
    char err[256] = "unset";
    http_parse_status rc = http_request_parse(req, data, len, err, sizeof err);
    cr_assert_eq(rc, HTTP_PARSE_OK, "parse failed: %s", err);
}

static void parse_err(const char *data, size_t len, const char *msg)
{
    http_request req;
    char err[256] = "unset";
    http_parse_status rc = http_request_parse(&req, data, len, err, sizeof err);
    cr_assert_eq(rc, HTTP_PARSE_MALFORMED, "expected an error, got %d", rc);
    cr_assert_str_eq(err, msg);
    cr_assert_eq(req.header_count, 0);
    cr_assert_null(req.buf);
    http_request_free(&req);
}

static void assert_slice(http_slice s, const char *want)
{
    cr_assert_not_null(s.ptr);
    cr_assert(s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0,
              "got \"%.*s\" (%zu bytes), want \"%s\"", (int)s.len, s.ptr,
              s.len, want);
}

static void assert_header(const http_request *req, size_t i, const char *name,
                          const char *value)
{
    cr_assert_lt(i, req->header_count);
    assert_slice(req->headers[i].name, name);
    assert_slice(req->headers[i].value, value);
}

static void assert_line(const http_request *req, const char *method,
                        const char *path, const char *query)
{
    assert_slice(req->method, method);
    assert_slice(req->path, path);
    assert_slice(req->query, query);
}

/* ------------------------------------------------------------------------ */
/* Good requests. */

Test(good, crlf)
{
    http_request req;
    PARSE_OK(&req, "GET /index.html?a=1&b=2 HTTP/1.1\r\n"
                   "Host: example.com\r\n"
                   "User-Agent: curl/8.0\r\n"
                   "\r\n");
    assert_line(&req, "GET", "/index.html", "a=1&b=2");
    assert_slice(req.target, "/index.html?a=1&b=2");
    cr_assert_eq(req.version_major, 1);
    cr_assert_eq(req.version_minor, 1);
    cr_assert_eq(req.header_count, 2);
    assert_header(&req, 0, "Host", "example.com");
    assert_header(&req, 1, "User-Agent", "curl/8.0");
    http_request_free(&req);
}

Test(good, bare_lf)
{
    http_request req;
    PARSE_OK(&req, "POST /login HTTP/1.0\n"
                   "Host: example.com\n"
                   "Content-Type: text/plain\n"
                   "\n");
    assert_line(&req, "POST", "/login", "");
    cr_assert_eq(req.version_major, 1);
    cr_assert_eq(req.version_minor, 0);
    cr_assert_eq(req.header_count, 2);
    assert_header(&req, 0, "Host", "example.com");
    assert_header(&req, 1, "Content-Type", "text/plain");
    http_request_free(&req);
}

Test(good, mixed_line_endings)
{
    http_request req;
    PARSE_OK(&req, "GET / HTTP/1.1\r\nA: 1\nB: 2\r\nC: 3\n\r\n");
    cr_assert_eq(req.header_count, 3);
    assert_header(&req, 0, "A", "1");
    assert_header(&req, 1, "B", "2");
    assert_header(&req, 2, "C", "3");
    http_request_free(&req);
}

Test(good, leading_blank_lines_skipped)
{
    http_request req;
    PARSE_OK(&req, "\n\r\nGET /x HTTP/1.1\nA: 1\n\n");
    assert_line(&req, "GET", "/x", "");
    cr_assert_eq(req.header_count, 1);
    http_request_free(&req);
}

Test(good, absolute_form)
{
    http_request req;
    PARSE_OK(&req, "GET http://example.com:8080/a/b?x=1&y HTTP/1.1\n\n");
    assert_slice(req.target, "http://example.com:8080/a/b?x=1&y");
    assert_line(&req, "GET", "/a/b", "x=1&y");
    http_request_free(&req);
}

Test(good, absolute_form_empty_path_is_slash)
{
    http_request req;
    PARSE_OK(&req, "GET http://example.com HTTP/1.1\n\n");
    assert_line(&req, "GET", "/", "");
    http_request_free(&req);

    PARSE_OK(&req, "GET https://example.com?q=1 HTTP/1.1\n\n");
    assert_line(&req, "GET", "/", "q=1");
    http_request_free(&req);
}

Test(good, authority_form)
{
    http_request req;
    PARSE_OK(&req, "CONNECT example.com:443 HTTP/1.1\nHost: example.com\n\n");
    assert_line(&req, "CONNECT", "example.com:443", "");
    http_request_free(&req);
}

Test(good, asterisk_form)
{
    http_request req;
    PARSE_OK(&req, "OPTIONS * HTTP/1.1\n\n");
    assert_line(&req, "OPTIONS", "*", "");
    http_request_free(&req);
}

Test(good, query_split_at_first_question_mark)
{
    http_request req;
    PARSE_OK(&req, "GET /a?b?c=d HTTP/1.1\n\n");
    assert_line(&req, "GET", "/a", "b?c=d");
    http_request_free(&req);

    PARSE_OK(&req, "GET /a? HTTP/1.1\n\n");
    assert_line(&req, "GET", "/a", "");
    http_request_free(&req);

    PARSE_OK(&req, "GET /?debug=1 HTTP/1.1\n\n");
    assert_line(&req, "GET", "/", "debug=1");
    http_request_free(&req);
}

Test(good, no_decoding)
{
    http_request req;
    PARSE_OK(&req, "GET /a%20b+c/%2e%2e?x=%41+b HTTP/1.1\n\n");
    assert_line(&req, "GET", "/a%20b+c/%2e%2e", "x=%41+b");
    http_request_free(&req);
}

Test(good, repeated_headers_kept_in_order)
{
    http_request req;
    PARSE_OK(&req, "GET / HTTP/1.1\n"
                   "Accept: text/html\n"
                   "X-Forwarded-For: 10.0.0.1\n"
                   "accept: */*\n"
                   "Accept: image/png\n"
                   "\n");
    cr_assert_eq(req.header_count, 4);
    assert_header(&req, 0, "Accept", "text/html");
    assert_header(&req, 1, "X-Forwarded-For", "10.0.0.1");
    assert_header(&req, 2, "accept", "*/*");
    assert_header(&req, 3, "Accept", "image/png");
    http_request_free(&req);
}

Test(good, value_whitespace_trimmed)
{
    http_request req;
    PARSE_OK(&req, "GET / HTTP/1.1\n"
                   "A:   spaced  out \t\n"
                   "B:\n"
                   "C: \t \n"
                   "D:x\n"
                   "\n");
    cr_assert_eq(req.header_count, 4);
    assert_header(&req, 0, "A", "spaced  out");
    assert_header(&req, 1, "B", "");
    assert_header(&req, 2, "C", "");
    assert_header(&req, 3, "D", "x");
    http_request_free(&req);
}

Test(good, missing_final_blank_line)
{
    http_request req;
    PARSE_OK(&req, "GET /a HTTP/1.1\nHost: h\nUser-Agent: x\n");
    assert_line(&req, "GET", "/a", "");
    cr_assert_eq(req.header_count, 2);
    assert_header(&req, 1, "User-Agent", "x");
    http_request_free(&req);
}

Test(good, missing_final_line_ending)
{
    http_request req;
    PARSE_OK(&req, "GET /a HTTP/1.1\r\nHost: h\r\nUser-Agent: x");
    cr_assert_eq(req.header_count, 2);
    assert_header(&req, 1, "User-Agent", "x");
    http_request_free(&req);

    PARSE_OK(&req, "GET /only-the-request-line HTTP/1.1");
    assert_line(&req, "GET", "/only-the-request-line", "");
    cr_assert_eq(req.header_count, 0);
    http_request_free(&req);
}

Test(good, body_ignored)
{
    http_request req;
    PARSE_OK(&req, "POST /upload HTTP/1.1\n"
                   "Content-Length: 100\n"
                   "\n"
                   "short body\0with a NUL\n"
                   "Not-A-Header: x\n");
    assert_line(&req, "POST", "/upload", "");
    cr_assert_eq(req.header_count, 1);
    assert_header(&req, 0, "Content-Length", "100");
    http_request_free(&req);
}

Test(good, chunked_body_not_parsed)
{
    http_request req;
    PARSE_OK(&req, "POST / HTTP/1.1\r\n"
                   "Transfer-Encoding: chunked\r\n"
                   "\r\n"
                   "this is not a chunk size\r\n");
    cr_assert_eq(req.header_count, 1);
    assert_header(&req, 0, "Transfer-Encoding", "chunked");
    http_request_free(&req);
}

Test(good, body_looking_like_a_request)
{
    http_request req;
    PARSE_OK(&req, "GET /first HTTP/1.1\n\nGET /second HTTP/1.1\n\n");
    assert_line(&req, "GET", "/first", "");
    cr_assert_eq(req.header_count, 0);
    http_request_free(&req);
}

Test(good, obs_text_and_invalid_utf8_in_value)
{
    http_request req;
    PARSE_OK(&req, "GET / HTTP/1.1\nUser-Agent: caf\xc3\xa9 \xff\xfe\x80\n\n");
    assert_header(&req, 0, "User-Agent", "caf\xc3\xa9 \xff\xfe\x80");
    http_request_free(&req);
}

Test(good, slices_outlive_the_input)
{
    static const char text[] = "GET /p?q HTTP/1.1\nUser-Agent: UA\n\n";
    char *copy = malloc(sizeof text);
    cr_assert_not_null(copy);
    memcpy(copy, text, sizeof text);

    http_request req;
    parse_ok(&req, copy, sizeof text - 1);
    memset(copy, 'x', sizeof text);
    free(copy);
    assert_line(&req, "GET", "/p", "q");
    assert_header(&req, 0, "User-Agent", "UA");
    http_request_free(&req);
}

Test(good, free_twice_is_safe)
{
    http_request req;
    PARSE_OK(&req, "GET / HTTP/1.1\nA: b\n");
    http_request_free(&req);
    http_request_free(&req);
    cr_assert_eq(req.header_count, 0);
    cr_assert_null(req.headers);
    http_request_free(NULL);
}

Test(big, header_value_of_64_kib)
{
    const size_t vlen = 64 * 1024;
    const char head[] = "GET / HTTP/1.1\nX-Big: ";
    size_t len = sizeof head - 1 + vlen + 2;
    char *data = malloc(len);
    cr_assert_not_null(data);
    memcpy(data, head, sizeof head - 1);
    memset(data + sizeof head - 1, 'v', vlen);
    memcpy(data + sizeof head - 1 + vlen, "\n\n", 2);

    http_request req;
    parse_ok(&req, data, len);
    cr_assert_eq(req.header_count, 1);
    cr_assert_eq(req.headers[0].value.len, vlen);
    cr_assert_eq(req.headers[0].value.ptr[0], 'v');
    cr_assert_eq(req.headers[0].value.ptr[vlen - 1], 'v');
    http_request_free(&req);
    free(data);
}

Test(big, a_thousand_headers)
{
    const size_t count = 1000;
    size_t cap = 64 + count * 32, len = 0;
    char *data = malloc(cap);
    cr_assert_not_null(data);
    len += (size_t)snprintf(data, cap, "GET / HTTP/1.1\r\n");
    for (size_t i = 0; i < count; i++)
        len += (size_t)snprintf(data + len, cap - len, "X-H%zu: v%zu\r\n", i, i);
    len += (size_t)snprintf(data + len, cap - len, "\r\n");

    http_request req;
    parse_ok(&req, data, len);
    cr_assert_eq(req.header_count, count);
    assert_header(&req, 0, "X-H0", "v0");
    assert_header(&req, 500, "X-H500", "v500");
    assert_header(&req, 999, "X-H999", "v999");
    http_request_free(&req);
    free(data);
}

/* ------------------------------------------------------------------------ */
/* Bad requests: the exact message, naming the problem and where it is. */

Test(bad, empty)
{
    PARSE_ERR("", "empty request");
    PARSE_ERR("\n\r\n\n", "empty request");
}

Test(bad, garbage_request_line)
{
    PARSE_ERR("hello world\n",
              "invalid method encountered at line 1, column 1 (byte offset 0)");
    PARSE_ERR("GET\n", "expected space after method at line 1, column 4 "
                       "(byte offset 3)");
    PARSE_ERR("FOO / HTTP/1.1\n", "invalid method encountered at line 1, "
                                  "column 2 (byte offset 1)");
}

Test(bad, missing_or_wrong_version)
{
    PARSE_ERR("GET /\n\n", "missing HTTP version in the request line at "
                           "line 1, column 6 (byte offset 5)");
    PARSE_ERR("GET / HTTP/2.0\n\n",
              "unsupported HTTP version 2.0 (expected 1.0 or 1.1) at line 1, "
              "column 12 (byte offset 11)");
    PARSE_ERR("GET / HTTP/1.2\n",
              "invalid HTTP version at line 1, column 15 (byte offset 14)");
    PARSE_ERR("GET / HTTP/1.1 \n", "expected CRLF after version at line 1, "
                                   "column 15 (byte offset 14)");
}

Test(bad, http2_preface)
{
    PARSE_ERR("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
              "HTTP/2 connection preface, not an HTTP/1.x request at line 1, "
              "column 1 (byte offset 0)");
}

Test(bad, nul_in_header_name)
{
    /* The offset is into the file as written: bare LF and CRLF differ. */
    PARSE_ERR("GET / HTTP/1.1\nHo\0st: a\n\n",
              "invalid header token at line 2, column 3 (byte offset 17)");
    PARSE_ERR("GET / HTTP/1.1\r\nHo\0st: a\r\n\r\n",
              "invalid header token at line 2, column 3 (byte offset 18)");
}

Test(bad, nul_in_header_value)
{
    PARSE_ERR("GET / HTTP/1.1\nA: b\0c\n",
              "invalid header value char at line 2, column 5 (byte offset 19)");
}

Test(bad, nul_in_path)
{
    PARSE_ERR("GET /a\0b HTTP/1.1\n",
              "invalid char in url path at line 1, column 7 (byte offset 6)");
}

Test(bad, space_before_colon)
{
    PARSE_ERR("GET / HTTP/1.1\nHost : a\n\n",
              "whitespace between header name and colon at line 2, column 5 "
              "(byte offset 19)");
}

Test(bad, empty_header_name)
{
    PARSE_ERR("GET / HTTP/1.1\nA: 1\n: a\n\n",
              "empty header name at line 3, column 1 (byte offset 20)");
}

Test(bad, header_without_colon)
{
    PARSE_ERR("GET / HTTP/1.1\nHost\n",
              "invalid header token at line 2, column 5 (byte offset 19)");
    /* at the very end of the file (no line ending) */
    PARSE_ERR("GET / HTTP/1.1\nHost",
              "invalid header token at line 2, column 5 (end of file)");
}

Test(bad, space_before_first_header)
{
    PARSE_ERR("GET / HTTP/1.1\n Host: a\n\n",
              "unexpected space after start line at line 2, column 2 "
              "(byte offset 16)");
}

Test(bad, obsolete_line_folding)
{
    PARSE_ERR("GET / HTTP/1.1\nX: a\n b\n\n",
              "obsolete line folding (a header value continued on the next "
              "line) at line 3, column 1 (byte offset 20)");
    PARSE_ERR("GET / HTTP/1.1\r\nX:\r\n\tb\r\n\r\n",
              "obsolete line folding (a header value continued on the next "
              "line) at line 3, column 1 (byte offset 20)");
    PARSE_ERR("GET / HTTP/1.1\nX:\n \nY: 1\n",
              "obsolete line folding (a header value continued on the next "
              "line) at line 3, column 1 (byte offset 18)");
}

Test(bad, bare_cr)
{
    PARSE_ERR("GET / HTTP/1.1\nA: b\rc\n",
              "missing expected LF after header value at line 2, column 6 "
              "(byte offset 20)");
}

Test(bad, content_length_with_transfer_encoding)
{
    /* found when the headers end: reported at the blank line */
    PARSE_ERR("GET / HTTP/1.1\nContent-Length: 1\nTransfer-Encoding: chunked\n"
              "\nbody",
              "Content-Length can't be present with Transfer-Encoding at "
              "line 4, column 1 (byte offset 60)");
}

/* Regression (issue 12, bug 2): llhttp is paused when the headers end,
 * before its own RFC 9112 section 6.3 check ran, so these were accepted. */
Test(bad, transfer_encoding_not_ending_in_chunked)
{
    PARSE_ERR("POST / HTTP/1.1\nHost: h\nTransfer-Encoding: gzip\n\n",
              "Transfer-Encoding whose last coding is not chunked (RFC 9112 "
              "section 6.3) at line 3, column 1 (byte offset 24)");
    PARSE_ERR("POST / HTTP/1.1\ntransfer-encoding: identity\n\nbody",
              "Transfer-Encoding whose last coding is not chunked (RFC 9112 "
              "section 6.3) at line 2, column 1 (byte offset 16)");
}

/* The parser classify-serve uses too (common/http_head.c): in HTTP/1.0 a
 * Transfer-Encoding is faulty framing (RFC 9112 section 6.1), and an
 * empty one (llhttp 8.1 sets no flag for it) has no chunked last coding. */
Test(bad, transfer_encoding_in_http10_or_empty)
{
    PARSE_ERR("POST / HTTP/1.0\nTransfer-Encoding: chunked\n\n",
              "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1) at line 2, "
              "column 1 (byte offset 16)");
    PARSE_ERR("POST / HTTP/1.1\nTransfer-Encoding:\n\n",
              "Transfer-Encoding whose last coding is not chunked (RFC 9112 section 6.3) at "
              "line 2, column 1 (byte offset 16)");
}

Test(good, transfer_encoding_ending_in_chunked)
{
    http_request req;
    PARSE_OK(&req, "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
    assert_header(&req, 0, "Transfer-Encoding", "gzip, chunked");
    http_request_free(&req);
}

Test(bad, invalid_content_length)
{
    PARSE_ERR("GET / HTTP/1.1\nContent-Length: abc\n",
              "invalid character in Content-Length at line 2, column 17 "
              "(byte offset 31)");
}

Test(bad, error_message_truncated_not_overflowed)
{
    http_request req;
    char err[12];
    memset(err, 'z', sizeof err);
    cr_assert_eq(http_request_parse(&req, "GET /\n", 6, err, 8),
                 HTTP_PARSE_MALFORMED);
    cr_assert_str_eq(err, "missing");
    cr_assert_eq(err[8], 'z');
    cr_assert_eq(http_request_parse(&req, "GET /\n", 6, NULL, 0),
                 HTTP_PARSE_MALFORMED);
    http_request_free(&req);
}

Test(bad, null_data)
{
    http_request req;
    char err[64];
    cr_assert_eq(http_request_parse(&req, NULL, 0, err, sizeof err),
                 HTTP_PARSE_MALFORMED);
    cr_assert_str_eq(err, "empty request");
    cr_assert_eq(http_request_parse(&req, NULL, 5, err, sizeof err),
                 HTTP_PARSE_MALFORMED);
    cr_assert_str_eq(err, "no data");
}

/* Every prefix of a valid request, and every single-byte corruption of it,
 * parses or fails cleanly (run under valgrind/ASan to catch the rest). */
Test(robust, prefixes_and_byte_flips)
{
    static const char text[] = "POST http://h:1/p?q HTTP/1.1\r\n"
                               "Host: h\r\nX: a b\r\nContent-Length: 3\r\n"
                               "\r\nabc";
    const size_t len = sizeof text - 1;
    static const char repl[] = {'\0', '\r', '\n', ' ', '\t', ':', '?', '/',
                                '\x80', '\xff', 'A'};
    char buf[sizeof text];
    char err[256];
    http_request req;

    for (size_t n = 0; n <= len; n++) {
        http_parse_status rc = http_request_parse(&req, text, n, err, sizeof err);
        cr_assert(rc == HTTP_PARSE_OK || rc == HTTP_PARSE_MALFORMED);
        cr_assert(rc == HTTP_PARSE_OK || err[0] != '\0');
        http_request_free(&req);
    }
    for (size_t i = 0; i < len; i++) {
        for (size_t r = 0; r < sizeof repl; r++) {
            memcpy(buf, text, len);
            buf[i] = repl[r];
            http_parse_status rc =
                http_request_parse(&req, buf, len, err, sizeof err);
            cr_assert(rc == HTTP_PARSE_OK || rc == HTTP_PARSE_MALFORMED);
            cr_assert(rc == HTTP_PARSE_OK || err[0] != '\0');
            http_request_free(&req);
        }
    }
}

/* Found by fuzz_request: llhttp accepts these targets, which put a '?' in
 * the path (tests/regress/fuzz_request_*_form_query.http). */
Test(http_request, bad_target_forms)
{
#define BAD_TARGET(col) "invalid request target (RFC 9112 section 3.2: '/path', " \
    "'http://host/path', 'host:port' or '*') at line 1, column " #col
    PARSE_ERR("OPTIONS *?x HTTP/1.1\r\n\r\n", BAD_TARGET(9) " (byte offset 8)");
    PARSE_ERR("CONNECT h:443?x HTTP/1.1\r\n\r\n", BAD_TARGET(9) " (byte offset 8)");
    PARSE_ERR("GET *abc HTTP/1.1\r\n\r\n", BAD_TARGET(5) " (byte offset 4)");
    PARSE_ERR("CONNECT a/b?c HTTP/1.1\r\n\r\n", BAD_TARGET(9) " (byte offset 8)");
    PARSE_ERR("CONNECT h HTTP/1.1\r\n\r\n", BAD_TARGET(9) " (byte offset 8)");
#undef BAD_TARGET
    http_request req;
    PARSE_OK(&req, "CONNECT example.org:443 HTTP/1.1\r\n\r\n");
    assert_line(&req, "CONNECT", "example.org:443", "");
    http_request_free(&req);
}
