/*
 * http_request.c: parse one raw HTTP/1.x request file with llhttp.
 *
 * Outline: find where the header section ends in the input (the first
 * blank line, or the end of the file), copy that section into a private
 * buffer while turning bare LF into CRLF (llhttp 8.1 rejects bare LF) and
 * adding the missing line ending and blank line if the file stopped short,
 * then run the request-head parser classify-serve uses too
 * (common/http_head.c, over llhttp) over the copy once. llhttp is paused
 * as soon as the headers are complete, so a body is never parsed (it is
 * not even copied). Error positions in the copy are mapped back to the
 * input so messages name the line and byte the user sees in the file.
 */
#include "http_head.h"
#include "http_request.h"

#include <llhttp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char empty_str[] = "";

static http_slice empty_slice(void)
{
    http_slice s = {empty_str, 0};
    return s;
}

/* ------------------------------------------------------------------------ */
/* Where the header section ends, and what the copy must add. */

typedef struct head_layout {
    size_t head_len; /* input bytes copied: request line, headers and the
                        blank line when the input has one */
    size_t blank_at; /* where that blank line starts (else head_len) */
    int add_eol;     /* the last line has no line ending: add CRLF */
    int add_blank;   /* the blank line is missing: add CRLF */
    int empty;       /* nothing but blank lines (or nothing at all) */
} head_layout;

/* Blank lines before the request line are skipped (llhttp does the same,
 * as RFC 9112 section 2.2 suggests), so the header section ends at the
 * first blank line after a non-blank one. A line's content excludes its
 * "\n" and one "\r" right before it. */
static head_layout find_head(const char *data, size_t len)
{
    head_layout lay = {len, len, 0, 1, 1};
    size_t i = 0;

    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        if (nl == NULL) { /* an unterminated, non-empty last line */
            lay.add_eol = 1;
            lay.empty = 0;
            return lay;
        }
        size_t end = (size_t)(nl - data);
        size_t content = end - i;
        if (content > 0 && data[end - 1] == '\r')
            content--;
        if (content == 0 && !lay.empty) {
            lay.blank_at = i;
            lay.head_len = end + 1;
            lay.add_blank = 0;
            return lay;
        }
        if (content != 0)
            lay.empty = 0;
        i = end + 1;
    }
    return lay;
}

static int is_bare_lf(const char *data, size_t i)
{
    return data[i] == '\n' && (i == 0 || data[i - 1] != '\r');
}

/* Copies the header section into a new buffer, CRLF-terminating bare LFs
 * and appending what `lay` says is missing. Returns NULL on overflow or
 * allocation failure. */
static char *copy_head(const char *data, const head_layout *lay,
                       size_t *out_len)
{
    size_t bare = 0;
    for (size_t i = 0; i < lay->head_len; i++)
        bare += (size_t)is_bare_lf(data, i);
    if (lay->head_len > (SIZE_MAX - 5) - bare)
        return NULL;
    size_t cap = lay->head_len + bare + 4 + 1;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;

    size_t n = 0;
    for (size_t i = 0; i < lay->head_len; i++) {
        if (is_bare_lf(data, i))
            buf[n++] = '\r';
        buf[n++] = data[i];
    }
    if (lay->add_eol) {
        buf[n++] = '\r';
        buf[n++] = '\n';
    }
    if (lay->add_blank) {
        buf[n++] = '\r';
        buf[n++] = '\n';
    }
    buf[n] = '\0'; /* not needed by llhttp; handy in a debugger */
    *out_len = n;
    return buf;
}

/* Maps an offset in the copy back to the input: each inserted CR maps to
 * the LF after it, and the appended bytes map to the end of the section
 * (which is then the end of the file). Errors llhttp finds only once the
 * headers are complete point past the blank line; they are reported at
 * its start, the last line that belongs to the header section. */
static size_t input_offset(const char *data, const head_layout *lay,
                           size_t pos)
{
    size_t k = 0, i = 0;
    for (; i < lay->head_len; i++) {
        k += is_bare_lf(data, i) ? 2 : 1;
        if (k > pos)
            break;
    }
    return i > lay->blank_at ? lay->blank_at : i;
}

/* ------------------------------------------------------------------------ */
/* Error messages. */

/* llhttp's reasons are capitalized ("Invalid header token"); messages here
 * are lower case like the rest of classify-run's, but names such as
 * "Content-Length" keep their case: only a first word that is otherwise all
 * lower-case letters is lowered. */
static void lower_first_word(char *s)
{
    size_t i = 1;
    if (s[0] < 'A' || s[0] > 'Z')
        return;
    while (s[i] >= 'a' && s[i] <= 'z')
        i++;
    if (s[i] == ' ' || s[i] == '\0')
        s[0] = (char)(s[0] - 'A' + 'a');
}

static void set_error(char *err, size_t errlen, const char *what,
                      const char *data, size_t len, size_t off)
{
    size_t line = 1, line_start = 0;
    char lowered[128];

    if (err == NULL || errlen == 0)
        return;
    for (size_t i = 0; i < off && i < len; i++) {
        if (data[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    }
    snprintf(lowered, sizeof lowered, "%s", what);
    lower_first_word(lowered);
    if (off >= len)
        snprintf(err, errlen, "%s at line %zu, column %zu (end of file)",
                 lowered, line, off - line_start + 1);
    else
        snprintf(err, errlen, "%s at line %zu, column %zu (byte offset %zu)",
                 lowered, line, off - line_start + 1, off);
}

static void set_plain_error(char *err, size_t errlen, const char *what)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", what);
}

static void request_init(http_request *req)
{
    memset(req, 0, sizeof *req);
    req->method = req->target = req->path = req->query = empty_slice();
}

void http_request_free(http_request *req)
{
    if (req == NULL)
        return;
    free(req->headers);
    free(req->buf);
    request_init(req);
}

/* A slice of the copy from a span of the parser. */
static http_slice slice_of(const char *buf, cm_span sp)
{
    if (sp.len == 0) return empty_slice();
    http_slice s = {buf + sp.off, sp.len};
    return s;
}

static int is_h2_preface(const char *buf, const cm_http_head *h)
{
    return h->method.len == 3 && memcmp(buf + h->method.off, "PRI", 3) == 0;
}

/* Explains a failed parse: returns the message and sets *pos to where in
 * the copy (buf, n bytes) it applies. */
static const char *explain(llhttp_t *p, cm_http_feed_result r, const cm_http_head *h,
                           const char *buf, size_t n, const char **pos)
{
    const char *what = llhttp_get_error_reason(p);

    *pos = llhttp_get_error_pos(p);
    if (llhttp_get_errno(p) == HPE_PAUSED_H2_UPGRADE || is_h2_preface(buf, h)) {
        /* llhttp pauses after "PRI * HTTP/2.0", or (when the file ends
         * there) waits for the rest of the preface */
        what = "HTTP/2 connection preface, not an HTTP/1.x request";
        *pos = buf + h->method.off;
    } else if (h->err_what != NULL) {
        what = h->err_what;
        if (h->err_at != CM_HTTP_NO_POS) *pos = buf + h->err_at;
    } else if (r == CM_HTTP_MORE || what == NULL) {
        /* The copy always ends in a blank line, so this should not
         * happen; say so rather than claim success. */
        what = "incomplete header section";
        *pos = buf + n;
    }
    if (*pos == NULL || *pos < buf || *pos > buf + n) *pos = buf + n;
    return what;
}

http_parse_status http_request_parse(http_request *req, const char *data,
                                     size_t len, char *err, size_t errlen)
{
    request_init(req);
    set_plain_error(err, errlen, "");
    if (data == NULL && len > 0) {
        set_plain_error(err, errlen, "no data");
        return HTTP_PARSE_MALFORMED;
    }

    head_layout lay = find_head(data, len);
    if (lay.empty) {
        set_plain_error(err, errlen, "empty request");
        return HTTP_PARSE_MALFORMED;
    }
    size_t n = 0;
    req->buf = copy_head(data, &lay, &n);
    if (req->buf == NULL || n > UINT32_MAX - 1) { /* spans are 32-bit offsets */
        http_request_free(req);
        set_plain_error(err, errlen, "out of memory");
        return HTTP_PARSE_NOMEM;
    }

    /* The head parser of classify-serve too (common/http_head.c), with no
     * limit on header lines: the library's is reported later, by name. */
    cm_http_head h;
    cm_http_head_init(&h, &req->buf, 0);
    llhttp_settings_t settings;
    llhttp_t parser;
    cm_http_settings(&settings);
    llhttp_init(&parser, HTTP_REQUEST, &settings);
    parser.data = &h;
    size_t used;
    cm_http_feed_result r = cm_http_feed(&parser, req->buf, n, &used);
    if (h.nomem) {
        cm_http_head_free(&h);
        http_request_free(req);
        set_plain_error(err, errlen, "out of memory");
        return HTTP_PARSE_NOMEM;
    }
    if (r != CM_HTTP_HEAD) {
        const char *pos;
        char what[128];
        snprintf(what, sizeof what, "%s", explain(&parser, r, &h, req->buf, n, &pos));
        size_t off = input_offset(data, &lay, (size_t)(pos - req->buf));
        set_error(err, errlen, what, data, len, off);
        cm_http_head_free(&h);
        http_request_free(req);
        return HTTP_PARSE_MALFORMED;
    }
    req->method = slice_of(req->buf, h.method);
    req->target = slice_of(req->buf, h.url);
    req->version_major = parser.http_major;
    req->version_minor = parser.http_minor;
    req->headers = malloc((h.n ? h.n : 1) * sizeof *req->headers);
    if (!req->headers) {
        cm_http_head_free(&h);
        http_request_free(req);
        set_plain_error(err, errlen, "out of memory");
        return HTTP_PARSE_NOMEM;
    }
    for (unsigned i = 0; i < h.n; i++) {
        req->headers[i].name = slice_of(req->buf, h.h[i].name);
        req->headers[i].value = slice_of(req->buf, h.h[i].value);
    }
    req->header_count = req->header_cap = h.n;
    cm_http_head_free(&h);
    if (cm_http_split_target(req->target.ptr, req->target.len, &req->path.ptr, &req->path.len,
                             &req->query.ptr, &req->query.len) != 0) {
        /* The target starts after the method and one space. */
        size_t off = input_offset(data, &lay, (size_t)(req->target.ptr - req->buf));
        set_error(err, errlen, "invalid request target (RFC 9112 section 3.2: '/path', "
                  "'http://host/path', 'host:port' or '*')", data, len, off);
        http_request_free(req);
        return HTTP_PARSE_MALFORMED;
    }
    return HTTP_PARSE_OK;
}
