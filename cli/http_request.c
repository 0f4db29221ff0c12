/*
 * http_request.c: parse one raw HTTP/1.x request file with llhttp.
 *
 * Outline: find where the header section ends in the input (the first
 * blank line, or the end of the file), copy that section into a private
 * buffer while turning bare LF into CRLF (llhttp 8.1 rejects bare LF) and
 * adding the missing line ending and blank line if the file stopped short,
 * then run llhttp over the copy once. llhttp is paused as soon as the
 * headers are complete, so a body is never parsed (it is not even copied).
 * Error positions in the copy are mapped back to the input so messages
 * name the line and byte the user sees in the file.
 */
#include "http_token.h"
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

/* ------------------------------------------------------------------------ */
/* llhttp callbacks. */

typedef struct parse_state {
    http_request *req;
    http_slice version;
    const char *last_end; /* end of the current header's latest span */
    int field_open;       /* a header name is being read */
    int headers_done;
    int nomem;
    const char *err_at; /* our own error, when a callback found one */
    const char *err_what;
} parse_state;

static parse_state *state_of(llhttp_t *p)
{
    return (parse_state *)p->data;
}

static int fail(llhttp_t *p, const char *at, const char *what)
{
    parse_state *st = state_of(p);
    st->err_at = at;
    st->err_what = what;
    llhttp_set_error_reason(p, what);
    return HPE_USER;
}

/* The whole copy is given to llhttp in one call, so the pieces of one
 * element arrive in order from one buffer: extend over them. */
static void extend(http_slice *s, const char *at, size_t n)
{
    if (s->len == 0)
        s->ptr = at;
    s->len = (size_t)(at + n - s->ptr);
}

static int on_method(llhttp_t *p, const char *at, size_t n)
{
    extend(&state_of(p)->req->method, at, n);
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
    extend(&state_of(p)->req->target, at, n);
    return 0;
}

static int on_version(llhttp_t *p, const char *at, size_t n)
{
    extend(&state_of(p)->version, at, n);
    return 0;
}

static int push_header(http_request *req, const char *at, size_t n)
{
    if (req->header_count == req->header_cap) {
        size_t cap = req->header_cap ? req->header_cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof *req->headers)
            return -1;
        http_header *h = realloc(req->headers, cap * sizeof *h);
        if (h == NULL)
            return -1;
        req->headers = h;
        req->header_cap = cap;
    }
    http_header *h = &req->headers[req->header_count++];
    h->name.ptr = at;
    h->name.len = n;
    h->value = empty_slice();
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
    parse_state *st = state_of(p);
    http_request *req = st->req;

    if (st->field_open) {
        extend(&req->headers[req->header_count - 1].name, at, n);
        return 0;
    }
    if (push_header(req, at, n) != 0) {
        st->nomem = 1;
        return fail(p, at, "out of memory");
    }
    st->field_open = 1;
    return 0;
}

/* llhttp 8.1 lets "Name : value" and ": value" through; RFC 9112 section
 * 5.1 says a server must reject the first, and the second has no name. */
static int on_header_field_complete(llhttp_t *p)
{
    parse_state *st = state_of(p);
    http_request *req = st->req;

    if (!st->field_open) /* no name span at all: llhttp's position */
        return fail(p, NULL, "empty header name");
    st->field_open = 0;

    http_slice name = req->headers[req->header_count - 1].name;
    if (name.len == 0)
        return fail(p, name.ptr, "empty header name");
    for (size_t i = 0; i < name.len; i++) {
        unsigned char c = (unsigned char)name.ptr[i];
        if (c == ' ' || c == '\t')
            return fail(p, name.ptr + i,
                        "whitespace between header name and colon");
        if (!http_is_tchar(c))
            return fail(p, name.ptr + i, "invalid character in header name");
    }
    st->last_end = name.ptr + name.len;
    return 0;
}

/* Obsolete line folding (RFC 9112 section 5.2): llhttp 8.1 accepts it and
 * hands over the continuation as another piece. Joining the lines would
 * need a rewritten value, and servers today reject folding, so it is an
 * error here. A fold shows as a line break followed by more bytes between
 * the end of the header's previous piece (or name) and the end of this
 * one. An empty value is a 0-byte piece right after its line break (llhttp
 * has looked at the next line for a fold first), which is not a fold. */
static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
    parse_state *st = state_of(p);
    http_request *req = st->req;

    if (req->header_count == 0) /* cannot happen: llhttp reads a name first */
        return fail(p, at, "header value without a name");
    if (st->last_end != NULL && st->last_end < at + n) {
        const char *nl =
            memchr(st->last_end, '\n', (size_t)(at + n - st->last_end));
        if (nl != NULL && nl + 1 < at + n)
            return fail(p, nl + 1,
                        "obsolete line folding (a header value continued "
                        "on the next line)");
    }
    if (n > 0) {
        extend(&req->headers[req->header_count - 1].value, at, n);
        st->last_end = at + n;
    }
    return 0;
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* RFC 9110 section 5.5: leading and trailing whitespace is not part of a
 * field value. llhttp drops the leading part only. */
static int on_header_value_complete(llhttp_t *p)
{
    parse_state *st = state_of(p);
    http_slice *v = &st->req->headers[st->req->header_count - 1].value;

    while (v->len > 0 && is_ows(v->ptr[0])) {
        v->ptr++;
        v->len--;
    }
    while (v->len > 0 && is_ows(v->ptr[v->len - 1]))
        v->len--;
    if (v->len == 0)
        *v = empty_slice();
    st->last_end = NULL;
    return 0;
}

/* The name of the first header called `lower` (ASCII case-insensitive),
 * for error positions; NULL when absent. */
static const char *find_header_name(const http_request *req, const char *lower, size_t n)
{
    for (size_t i = 0; i < req->header_count; i++) {
        http_slice nm = req->headers[i].name;
        if (nm.len != n)
            continue;
        size_t j = 0;
        while (j < n && (nm.ptr[j] | 0x20) == lower[j])
            j++;
        if (j == n)
            return nm.ptr;
    }
    return NULL;
}

/* Stop here: the body (if any) is none of our business. Pausing skips
 * llhttp's own checks after this callback, so the one of them that
 * concerns the header section is made here: RFC 9112 section 6.3, a
 * request whose Transfer-Encoding does not end in "chunked" has a body
 * of unknown length and must be refused (a server answers 400 and
 * closes). llhttp sets F_CHUNKED only when chunked is the last coding. */
static int on_headers_complete(llhttp_t *p)
{
    parse_state *st = state_of(p);
    if ((p->flags & F_TRANSFER_ENCODING) && !(p->flags & F_CHUNKED))
        return fail(p, find_header_name(st->req, "transfer-encoding", 17),
                    "Transfer-Encoding whose last coding is not chunked "
                    "(RFC 9112 section 6.3)");
    st->headers_done = 1;
    return HPE_PAUSED;
}

/* ------------------------------------------------------------------------ */
/* Request target -> path and query. */

/* scheme "://" with scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ):
 * returns the length of that prefix, or 0. */
static size_t scheme_prefix(http_slice t)
{
    size_t i = 0;
    if (t.len == 0 || !((t.ptr[0] | 0x20) >= 'a' && (t.ptr[0] | 0x20) <= 'z'))
        return 0;
    while (i < t.len) {
        char c = t.ptr[i];
        int lower = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
        if (!(lower || (c >= '0' && c <= '9') || c == '+' || c == '-' ||
              c == '.'))
            break;
        i++;
    }
    if (t.len - i >= 3 && memcmp(t.ptr + i, "://", 3) == 0)
        return i + 3;
    return 0;
}

static void split_query(http_request *req, http_slice rest)
{
    const char *q = memchr(rest.ptr, '?', rest.len);
    if (q == NULL) {
        req->path = rest;
        req->query = empty_slice();
        return;
    }
    req->path.ptr = rest.ptr;
    req->path.len = (size_t)(q - rest.ptr);
    req->query.ptr = q + 1;
    req->query.len = rest.len - req->path.len - 1;
}

/* authority-form (RFC 9112 section 3.2.3): host ":" port, nothing else. */
static int is_authority_form(http_slice t)
{
    const char *colon = NULL;
    for (size_t i = 0; i < t.len; i++) {
        char c = t.ptr[i];
        if (c == '/' || c == '?' || c == '#' || c == '@') return 0;
        if (c == ':') colon = t.ptr + i;
    }
    if (!colon || colon == t.ptr || colon + 1 == t.ptr + t.len) return 0;
    for (const char *d = colon + 1; d < t.ptr + t.len; d++)
        if (*d < '0' || *d > '9') return 0;
    return 1;
}

/* Splits the target into path and query. Returns 0, or -1 for a target
 * that is none of RFC 9112's four forms (section 3.2): llhttp lets
 * through things like "*?x" or "h:443?x", which would otherwise put a '?'
 * in req.path and hide a query from the rules. */
static int split_target(http_request *req)
{
    http_slice t = req->target;
    size_t skip = t.len > 0 && t.ptr[0] == '/' ? 0 : scheme_prefix(t);

    if (t.len > 0 && t.ptr[0] != '/' && skip == 0) {
        /* asterisk-form is exactly "*"; authority-form is host:port */
        if (!(t.len == 1 && t.ptr[0] == '*') && !is_authority_form(t))
            return -1;
        req->path = t;
        req->query = empty_slice();
        return 0;
    }
    if (skip > 0) { /* absolute-form: drop scheme and authority */
        size_t i = skip;
        while (i < t.len && t.ptr[i] != '/' && t.ptr[i] != '?')
            i++;
        t.ptr += i;
        t.len -= i;
    }
    split_query(req, t);
    if (req->path.len == 0) {
        req->path.ptr = "/";
        req->path.len = 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */

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

static void init_settings(llhttp_settings_t *s)
{
    llhttp_settings_init(s);
    s->on_method = on_method;
    s->on_url = on_url;
    s->on_version = on_version;
    s->on_header_field = on_header_field;
    s->on_header_field_complete = on_header_field_complete;
    s->on_header_value = on_header_value;
    s->on_header_value_complete = on_header_value_complete;
    s->on_headers_complete = on_headers_complete;
}

static int is_h2_preface(const http_request *req)
{
    return req->method.len == 3 && memcmp(req->method.ptr, "PRI", 3) == 0;
}

/* Explains a failed llhttp_execute(): returns the message and sets *pos to
 * where in the copy it applies. */
static const char *explain(llhttp_t *p, llhttp_errno_t rc,
                           const parse_state *st, const char *buf,
                           size_t n, const char **pos)
{
    const char *what = llhttp_get_error_reason(p);

    *pos = llhttp_get_error_pos(p);
    if (st->err_what != NULL) {
        what = st->err_what;
        if (st->err_at != NULL)
            *pos = st->err_at;
    } else if (rc == HPE_PAUSED_H2_UPGRADE || is_h2_preface(st->req)) {
        /* llhttp pauses after "PRI * HTTP/2.0", or (when the file ends
         * there) waits for the rest of the preface */
        what = "HTTP/2 connection preface, not an HTTP/1.x request";
        *pos = st->req->method.ptr;
    } else if (rc == HPE_OK || what == NULL) {
        /* The copy always ends in a blank line, so this should not
         * happen; say so rather than claim success. */
        what = "incomplete header section";
        *pos = buf + n;
    }
    if (*pos == NULL || *pos < buf || *pos > buf + n)
        *pos = buf + n;
    return what;
}

/* HTTP/0.9 (a request line without a version) and HTTP/2+ are not
 * HTTP/1.x requests, although llhttp reads them. Returns 0 when fine. */
static int check_version(const http_request *req, const parse_state *st,
                         char *what, size_t whatlen, const char **pos)
{
    if (req->version_major == 1 && req->version_minor <= 1)
        return 0;
    if (st->version.len == 0) {
        snprintf(what, whatlen, "missing HTTP version in the request line");
        *pos = req->target.ptr + req->target.len;
    } else {
        snprintf(what, whatlen,
                 "unsupported HTTP version %u.%u (expected 1.0 or 1.1)",
                 req->version_major, req->version_minor);
        *pos = st->version.ptr;
    }
    return -1;
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
    if (req->buf == NULL) {
        set_plain_error(err, errlen, "out of memory");
        return HTTP_PARSE_NOMEM;
    }

    llhttp_settings_t settings;
    llhttp_t parser;
    parse_state st;
    memset(&st, 0, sizeof st);
    st.req = req;
    st.version = empty_slice();
    init_settings(&settings);
    llhttp_init(&parser, HTTP_REQUEST, &settings);
    parser.data = &st;

    llhttp_errno_t rc = llhttp_execute(&parser, req->buf, n);
    if (st.nomem) {
        http_request_free(req);
        set_plain_error(err, errlen, "out of memory");
        return HTTP_PARSE_NOMEM;
    }

    const char *pos = NULL;
    char what[96];
    int bad = 0;
    if (rc != HPE_PAUSED || !st.headers_done) {
        snprintf(what, sizeof what, "%s",
                 explain(&parser, rc, &st, req->buf, n, &pos));
        bad = 1;
    } else {
        req->version_major = parser.http_major;
        req->version_minor = parser.http_minor;
        bad = check_version(req, &st, what, sizeof what, &pos) != 0;
    }
    if (bad) {
        size_t off = input_offset(data, &lay, (size_t)(pos - req->buf));
        set_error(err, errlen, what, data, len, off);
        http_request_free(req);
        return HTTP_PARSE_MALFORMED;
    }
    if (split_target(req) != 0) {
        /* The target starts after the method and one space. */
        size_t off = input_offset(data, &lay, (size_t)(req->target.ptr - req->buf));
        set_error(err, errlen, "invalid request target (RFC 9112 section 3.2: '/path', "
                  "'http://host/path', 'host:port' or '*')", data, len, off);
        http_request_free(req);
        return HTTP_PARSE_MALFORMED;
    }
    return HTTP_PARSE_OK;
}
