/*
 * srv_request.c: llhttp callbacks that record the request head (see
 * srv_request.h), and request-target splitting.
 */
#include "http_token.h"
#include "srv_request.h"

#include <stdlib.h>
#include <string.h>

static srv_req *req_of(llhttp_t *p)
{
    return (srv_req *)p->data;
}

static uint32_t off_of(const srv_req *r, const char *at)
{
    return (uint32_t)(at - *r->base);
}

static int refuse(llhttp_t *p, unsigned status, const char *what)
{
    srv_req *r = req_of(p);
    r->err_status = status;
    r->err_what = what;
    llhttp_set_error_reason(p, what);
    return HPE_USER;
}

/* Pieces of one element arrive in order from one buffer (the
 * connection's, appended to between reads): extend over them. */
static void extend(const srv_req *r, srv_span *s, const char *at, size_t n)
{
    uint32_t o = off_of(r, at);
    if (s->len == 0)
        s->off = o;
    s->len = o + (uint32_t)n - s->off;
}

static int on_message_begin(llhttp_t *p)
{
    srv_req *r = req_of(p);
    r->method.len = r->url.len = 0;
    r->n = 0;
    r->field_open = 0;
    r->te_seen = 0;
    r->err_status = 0;
    r->err_what = NULL;
    return 0;
}

static int on_method(llhttp_t *p, const char *at, size_t n)
{
    extend(req_of(p), &req_of(p)->method, at, n);
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t n)
{
    extend(req_of(p), &req_of(p)->url, at, n);
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n)
{
    srv_req *r = req_of(p);
    if (!r->field_open) {
        if (r->n == r->max)
            return refuse(p, 431, "too many header fields");
        srv_hdr *h = &r->h[r->n++];
        h->name.off = off_of(r, at);
        h->name.len = 0;
        h->value.off = h->value.len = 0;
        r->field_open = 1;
        r->value_end = 0;
    }
    extend(r, &r->h[r->n - 1].name, at, n);
    return 0;
}

static int on_header_field_complete(llhttp_t *p)
{
    srv_req *r = req_of(p);
    if (!r->field_open || r->h[r->n - 1].name.len == 0)
        return refuse(p, 400, "empty header name");
    r->field_open = 0;
    srv_span nm = r->h[r->n - 1].name;
    const char *s = *r->base + nm.off;
    for (uint32_t i = 0; i < nm.len; i++)
        if (!http_is_tchar((unsigned char)s[i]))
            return refuse(p, 400, "invalid character in header name");
    if (srv_name_is(s, nm.len, "transfer-encoding", 17))
        r->te_seen = 1;
    return 0;
}

/* A fold (a line break inside the value) shows as a gap holding a line
 * feed between two pieces of one value. */
static int on_header_value(llhttp_t *p, const char *at, size_t n)
{
    srv_req *r = req_of(p);
    if (r->n == 0)
        return refuse(p, 400, "header value without a name");
    if (n == 0)
        return 0;
    srv_span *v = &r->h[r->n - 1].value;
    uint32_t o = off_of(r, at);
    if (v->len > 0 && o > r->value_end &&
        memchr(*r->base + r->value_end, '\n', o - r->value_end) != NULL)
        return refuse(p, 400, "obsolete line folding");
    extend(r, v, at, n);
    r->value_end = o + (uint32_t)n;
    return 0;
}

static int on_header_value_complete(llhttp_t *p)
{
    srv_req *r = req_of(p);
    srv_span *v = &r->h[r->n - 1].value;
    const char *s = *r->base;
    while (v->len > 0 && (s[v->off] == ' ' || s[v->off] == '\t'))
        v->off++, v->len--;
    while (v->len > 0 && (s[v->off + v->len - 1] == ' ' || s[v->off + v->len - 1] == '\t'))
        v->len--;
    /* however llhttp delivered a fold, no line break may stay in a value */
    if (memchr(s + v->off, '\n', v->len) != NULL || memchr(s + v->off, '\r', v->len) != NULL)
        return refuse(p, 400, "obsolete line folding");
    return 0;
}

static int on_headers_complete(llhttp_t *p)
{
    if (p->http_major != 1 || p->http_minor > 1)
        return refuse(p, 400, "unsupported HTTP version");
    /* RFC 9112, 6.3: when the last transfer coding of a request is not
     * chunked, its length cannot be known: 400, then close. llhttp checks
     * that only after this callback returns, and here we pause to answer
     * the head, so its check came too late (a 421 was sent, then the
     * connection closed without a word). Its flags tell: F_TRANSFER_ENCODING
     * for any Transfer-Encoding line, F_CHUNKED while chunked is the last
     * coding seen. */
    srv_req *r = req_of(p);
    int te = r->te_seen || (p->flags & F_TRANSFER_ENCODING); /* llhttp 8.1 skips an empty value */
    if (te && !(p->flags & F_CHUNKED))
        return refuse(p, 400, "Transfer-Encoding whose last coding is not chunked");
    /* RFC 9112, 6.1: in HTTP/1.0 a Transfer-Encoding means faulty framing. */
    if (te && p->http_minor == 0)
        return refuse(p, 400, "Transfer-Encoding in an HTTP/1.0 request");
    req_of(p)->event = SRV_EV_HEADERS;
    return HPE_PAUSED;
}

static int on_message_complete(llhttp_t *p)
{
    req_of(p)->event = SRV_EV_MESSAGE;
    return HPE_PAUSED;
}

void srv_req_settings(llhttp_settings_t *s)
{
    llhttp_settings_init(s);
    s->on_message_begin = on_message_begin;
    s->on_method = on_method;
    s->on_url = on_url;
    s->on_header_field = on_header_field;
    s->on_header_field_complete = on_header_field_complete;
    s->on_header_value = on_header_value;
    s->on_header_value_complete = on_header_value_complete;
    s->on_headers_complete = on_headers_complete;
    s->on_message_complete = on_message_complete;
}

srv_feed srv_req_feed(llhttp_t *p, const char *buf, size_t len, size_t *used)
{
    srv_req *r = req_of(p);
    llhttp_errno_t rc = llhttp_execute(p, buf, len);
    *used = len;
    if (rc == HPE_OK)
        return SRV_FEED_MORE;
    if (rc == HPE_PAUSED_UPGRADE)
        return SRV_FEED_UPGRADE;
    if (rc != HPE_PAUSED) {
        if (r->err_status == 0)
            r->err_status = 400; /* llhttp's own errors */
        return SRV_FEED_ERROR;
    }
    /* Only our callbacks pause, each after naming its event. */
    *used = (size_t)(llhttp_get_error_pos(p) - buf);
    llhttp_resume(p);
    int ev = r->event;
    r->event = SRV_EV_NONE;
    return ev == SRV_EV_HEADERS ? SRV_FEED_HEAD : SRV_FEED_END;
}

int srv_req_init(srv_req *r, char *const *base, unsigned max)
{
    memset(r, 0, sizeof *r);
    r->base = base;
    r->max = max;
    r->h = malloc(max * sizeof *r->h);
    return r->h == NULL ? -1 : 0;
}

void srv_req_free(srv_req *r)
{
    free(r->h);
    r->h = NULL;
}

void srv_req_shift(srv_req *r, uint32_t shift)
{
    /* Spans that are empty may hold stale offsets: clamp, never wrap. */
#define SHIFT(s) ((s).off = (s).off >= shift ? (s).off - shift : 0)
    SHIFT(r->method);
    SHIFT(r->url);
    for (unsigned i = 0; i < r->n; i++) {
        SHIFT(r->h[i].name);
        SHIFT(r->h[i].value);
    }
    r->value_end = r->value_end >= shift ? r->value_end - shift : 0;
#undef SHIFT
}

int srv_name_is(const char *p, size_t n, const char *lower, size_t lower_len)
{
    if (n != lower_len)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + 32);
        if (c != (unsigned char)lower[i])
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Targets. */

static size_t scheme_prefix(const char *t, size_t len)
{
    size_t i = 0;
    if (len == 0 || !((t[0] | 0x20) >= 'a' && (t[0] | 0x20) <= 'z'))
        return 0;
    while (i < len) {
        char c = t[i];
        if (!(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '-' || c == '.'))
            break;
        i++;
    }
    return len - i >= 3 && memcmp(t + i, "://", 3) == 0 ? i + 3 : 0;
}

static int is_authority_form(const char *t, size_t len)
{
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '/' || t[i] == '?' || t[i] == '#' || t[i] == '@')
            return 0;
        if (t[i] == ':')
            colon = t + i;
    }
    if (colon == NULL || colon == t || colon + 1 == t + len)
        return 0;
    for (const char *d = colon + 1; d < t + len; d++)
        if (*d < '0' || *d > '9')
            return 0;
    return 1;
}

int srv_split_target(const char *t, size_t len, const char **path, size_t *plen,
                     const char **query, size_t *qlen)
{
    *query = "";
    *qlen = 0;
    if (len == 0)
        return -1;
    size_t skip = t[0] == '/' ? 0 : scheme_prefix(t, len);
    if (t[0] != '/' && skip == 0) {
        if (!(len == 1 && t[0] == '*') && !is_authority_form(t, len))
            return -1;
        *path = t;
        *plen = len;
        return 0;
    }
    if (skip > 0) { /* absolute-form: drop scheme and authority */
        size_t i = skip;
        while (i < len && t[i] != '/' && t[i] != '?')
            i++;
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
