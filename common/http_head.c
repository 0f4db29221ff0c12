/*
 * http_head.c: llhttp callbacks that record a request head and make the
 * checks of http_head.h; the feed loop; request targets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_head.h"
#include "http_token.h"

/* What paused the parser. */
enum { EV_NONE, EV_HEAD, EV_END };

static cm_http_head *head_of(llhttp_t *p)
{
    return (cm_http_head *)p->data;
}

static uint32_t off_of(const cm_http_head *h, const char *at)
{
    return (uint32_t)(at - *h->base);
}

/* Refuses the head: `status` 400 or 431, `what` (static or h->err_buf),
 * at offset `at` (or CM_HTTP_NO_POS). */
static int refuse(llhttp_t *p, unsigned status, uint32_t at, const char *what)
{
    cm_http_head *h = head_of(p);
    h->err_status = status;
    h->err_what = what;
    h->err_at = at;
    llhttp_set_error_reason(p, what);
    return HPE_USER;
}

/* Pieces of one element arrive in order from one buffer (appended to
 * between calls): extend over them. */
static void extend(const cm_http_head *h, cm_span *s, const char *at, size_t n)
{
    uint32_t o = off_of(h, at);
    if (s->len == 0) s->off = o;
    s->len = o + (uint32_t)n - s->off;
}

static int on_message_begin(llhttp_t *p)
{
    cm_http_head *h = head_of(p);
    h->method.len = h->url.len = h->version.len = 0;
    h->n = 0;
    h->field_open = 0;
    h->te_seen = 0;
    h->err_status = 0;
    h->err_what = NULL;
    h->err_at = CM_HTTP_NO_POS;
    return 0;
}

static int on_method(llhttp_t *p, const char *at, size_t n)
{
    extend(head_of(p), &head_of(p)->method, at, n);
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
    extend(head_of(p), &head_of(p)->url, at, n);
    return 0;
}

static int on_version(llhttp_t *p, const char *at, size_t n)
{
    extend(head_of(p), &head_of(p)->version, at, n);
    return 0;
}

/* A new header line: past `max` lines, 431; without a limit the array
 * grows. */
static int push_field(llhttp_t *p, const char *at)
{
    cm_http_head *h = head_of(p);
    if (h->n == h->cap) {
        if (h->max) return refuse(p, 431, off_of(h, at), "too many header fields");
        unsigned cap = h->cap ? h->cap * 2 : 16;
        cm_http_field *f = cap > h->cap ? realloc(h->h, cap * sizeof *f) : NULL;
        if (!f) {
            h->nomem = 1;
            return refuse(p, 400, off_of(h, at), "out of memory");
        }
        h->h = f;
        h->cap = cap;
    }
    cm_http_field *f = &h->h[h->n++];
    f->name.off = off_of(h, at);
    f->name.len = 0;
    f->value.off = f->value.len = 0;
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
    cm_http_head *h = head_of(p);
    if (!h->field_open) {
        int rc = push_field(p, at);
        if (rc) return rc;
        h->field_open = 1;
    }
    extend(h, &h->h[h->n - 1].name, at, n);
    return 0;
}

/* llhttp 8.1 lets "Name : value" and ": value" through; RFC 9112 section
 * 5.1 says a server must reject the first, and the second has no name. */
static int on_header_field_complete(llhttp_t *p)
{
    cm_http_head *h = head_of(p);
    if (!h->field_open) /* no name span at all: llhttp's position */
        return refuse(p, 400, CM_HTTP_NO_POS, "empty header name");
    h->field_open = 0;
    cm_span nm = h->h[h->n - 1].name;
    if (nm.len == 0) return refuse(p, 400, nm.off, "empty header name");
    const char *s = *h->base + nm.off;
    for (uint32_t i = 0; i < nm.len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t')
            return refuse(p, 400, nm.off + i, "whitespace between header name and colon");
        if (!http_is_tchar(c))
            return refuse(p, 400, nm.off + i, "invalid character in header name");
    }
    if (cm_http_name_is(s, nm.len, "transfer-encoding", 17)) h->te_seen = 1;
    h->value_end = nm.off + nm.len;
    return 0;
}

/* Obsolete line folding (RFC 9112 section 5.2): llhttp 8.1 accepts it and
 * hands over the continuation as another piece. A fold shows as a line
 * break followed by more bytes between the end of the header's previous
 * piece (or its name) and the end of this one. An empty value is a 0-byte
 * piece right after its line break (llhttp has looked at the next line
 * for a fold first), which is not a fold. */
static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
    cm_http_head *h = head_of(p);
    if (h->n == 0) /* cannot happen: llhttp reads a name first */
        return refuse(p, 400, off_of(h, at), "header value without a name");
    uint32_t o = off_of(h, at), end = o + (uint32_t)n;
    if (h->value_end < end) {
        const char *s = *h->base;
        const char *nl = memchr(s + h->value_end, '\n', end - h->value_end);
        if (nl && (uint32_t)(nl + 1 - s) < end)
            return refuse(p, 400, (uint32_t)(nl + 1 - s),
                          "obsolete line folding (a header value continued on the next line)");
    }
    if (n > 0) {
        extend(h, &h->h[h->n - 1].value, at, n);
        h->value_end = end;
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
    cm_http_head *h = head_of(p);
    cm_span *v = &h->h[h->n - 1].value;
    const char *s = *h->base;
    while (v->len > 0 && is_ows(s[v->off])) v->off++, v->len--;
    while (v->len > 0 && is_ows(s[v->off + v->len - 1])) v->len--;
    /* However llhttp delivered a fold, no line break may stay in a value. */
    for (uint32_t i = 0; i < v->len; i++)
        if (s[v->off + i] == '\n' || s[v->off + i] == '\r')
            return refuse(p, 400, v->off + i,
                          "obsolete line folding (a header value continued on the next line)");
    return 0;
}

/* The offset of the first Transfer-Encoding name, for messages. */
static uint32_t te_at(const cm_http_head *h)
{
    for (unsigned i = 0; i < h->n; i++)
        if (cm_http_name_is(*h->base + h->h[i].name.off, h->h[i].name.len, "transfer-encoding", 17))
            return h->h[i].name.off;
    return CM_HTTP_NO_POS;
}

/* Pausing here skips llhttp's own checks after this callback, so the ones
 * that concern the head are made here. */
static int on_headers_complete(llhttp_t *p)
{
    cm_http_head *h = head_of(p);
    /* HTTP/0.9 (a request line without a version) and HTTP/2+ are not
     * HTTP/1.x requests, although llhttp reads them. */
    if (p->http_major != 1 || p->http_minor > 1) {
        if (h->version.len == 0)
            return refuse(p, 400, h->url.off + h->url.len,
                          "missing HTTP version in the request line");
        snprintf(h->err_buf, sizeof h->err_buf,
                 "unsupported HTTP version %u.%u (expected 1.0 or 1.1)", p->http_major,
                 p->http_minor);
        return refuse(p, 400, h->version.off, h->err_buf);
    }
    /* RFC 9112 section 6.3: when the last transfer coding of a request is
     * not chunked, its length cannot be known: 400, then close. llhttp's
     * flags tell: F_TRANSFER_ENCODING for any Transfer-Encoding line with
     * a value, F_CHUNKED while chunked is the last coding seen; an empty
     * value (llhttp 8.1 sets no flag for it) counts too. */
    int te = h->te_seen || (p->flags & F_TRANSFER_ENCODING);
    if (te && !(p->flags & F_CHUNKED))
        return refuse(p, 400, te_at(h),
                      "Transfer-Encoding whose last coding is not chunked (RFC 9112 section 6.3)");
    /* Section 6.1: in HTTP/1.0 a Transfer-Encoding means faulty framing. */
    if (te && p->http_minor == 0)
        return refuse(p, 400, te_at(h),
                      "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1)");
    h->event = EV_HEAD;
    return HPE_PAUSED;
}

static int on_message_complete(llhttp_t *p)
{
    head_of(p)->event = EV_END;
    return HPE_PAUSED;
}

void cm_http_settings(llhttp_settings_t *s)
{
    llhttp_settings_init(s);
    s->on_message_begin = on_message_begin;
    s->on_method = on_method;
    s->on_url = on_url;
    s->on_version = on_version;
    s->on_header_field = on_header_field;
    s->on_header_field_complete = on_header_field_complete;
    s->on_header_value = on_header_value;
    s->on_header_value_complete = on_header_value_complete;
    s->on_headers_complete = on_headers_complete;
    s->on_message_complete = on_message_complete;
}

cm_http_feed_result cm_http_feed(llhttp_t *p, const char *buf, size_t len, size_t *used)
{
    cm_http_head *h = head_of(p);
    llhttp_errno_t rc = llhttp_execute(p, buf, len);
    *used = len;
    if (rc == HPE_OK) return CM_HTTP_MORE;
    if (rc == HPE_PAUSED_UPGRADE) return CM_HTTP_UPGRADE;
    if (rc != HPE_PAUSED) {
        if (h->err_status == 0) h->err_status = 400; /* llhttp's own errors */
        return CM_HTTP_ERROR;
    }
    /* Only our callbacks pause, each after naming its event. */
    *used = (size_t)(llhttp_get_error_pos(p) - buf);
    llhttp_resume(p);
    int ev = h->event;
    h->event = EV_NONE;
    return ev == EV_HEAD ? CM_HTTP_HEAD : CM_HTTP_END;
}

int cm_http_head_init(cm_http_head *h, char *const *base, unsigned max)
{
    memset(h, 0, sizeof *h);
    h->base = base;
    h->max = h->cap = max;
    h->err_at = CM_HTTP_NO_POS;
    if (max == 0) return 0;
    h->h = malloc(max * sizeof *h->h);
    return h->h == NULL ? -1 : 0;
}

void cm_http_head_free(cm_http_head *h)
{
    free(h->h);
    h->h = NULL;
    h->n = h->cap = 0;
}

void cm_http_head_shift(cm_http_head *h, uint32_t shift)
{
    /* Spans that are empty may hold stale offsets: clamp, never wrap. */
#define SHIFT(s) ((s).off = (s).off >= shift ? (s).off - shift : 0)
    SHIFT(h->method);
    SHIFT(h->url);
    SHIFT(h->version);
    for (unsigned i = 0; i < h->n; i++) {
        SHIFT(h->h[i].name);
        SHIFT(h->h[i].value);
    }
    h->value_end = h->value_end >= shift ? h->value_end - shift : 0;
#undef SHIFT
}

int cm_http_name_is(const char *p, size_t n, const char *lower, size_t lower_len)
{
    if (n != lower_len) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
        if (c != (unsigned char)lower[i]) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Targets. */

/* scheme "://" with scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ):
 * the length of that prefix, or 0. */
static size_t scheme_prefix(const char *t, size_t len)
{
    size_t i = 0;
    if (len == 0 || !((t[0] | 0x20) >= 'a' && (t[0] | 0x20) <= 'z')) return 0;
    while (i < len) {
        char c = t[i];
        if (!(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
              c == '-' || c == '.'))
            break;
        i++;
    }
    return len - i >= 3 && memcmp(t + i, "://", 3) == 0 ? i + 3 : 0;
}

/* authority-form (RFC 9112 section 3.2.3): host ":" port, nothing else. */
static int is_authority_form(const char *t, size_t len)
{
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '/' || t[i] == '?' || t[i] == '#' || t[i] == '@') return 0;
        if (t[i] == ':') colon = t + i;
    }
    if (colon == NULL || colon == t || colon + 1 == t + len) return 0;
    for (const char *d = colon + 1; d < t + len; d++)
        if (*d < '0' || *d > '9') return 0;
    return 1;
}

int cm_http_split_target(const char *t, size_t len, const char **path, size_t *plen,
                         const char **query, size_t *qlen)
{
    *query = "";
    *qlen = 0;
    if (len == 0) return -1;
    size_t skip = t[0] == '/' ? 0 : scheme_prefix(t, len);
    if (t[0] != '/' && skip == 0) {
        /* asterisk-form is exactly "*"; authority-form is host:port */
        if (!(len == 1 && t[0] == '*') && !is_authority_form(t, len)) return -1;
        *path = t;
        *plen = len;
        return 0;
    }
    if (skip > 0) { /* absolute-form: drop scheme and authority */
        size_t i = skip;
        while (i < len && t[i] != '/' && t[i] != '?') i++;
        t += i;
        len -= i;
    }
    const char *q = memchr(t, '?', len);
    *path = t;
    *plen = q ? (size_t)(q - t) : len;
    if (q) {
        *query = q + 1;
        *qlen = len - *plen - 1;
    }
    if (*plen == 0) {
        *path = "/";
        *plen = 1;
    }
    return 0;
}
