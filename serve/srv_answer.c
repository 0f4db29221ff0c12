/*
 * srv_answer.c: from a parsed request head to an answer (see
 * srv_answer.h).
 *
 * pass-through: the request is the client's own; accept = 421 with an
 *   empty body (Caddy reuses the upstream connection only then), reject =
 *   --reject-status with the reject body.
 * forward-auth: the request is the proxy's question; the client's method
 *   and URI come from the two headers that the listener's proxy sets
 *   itself (srv_auth_proxy: X-Original-Method / X-Original-URI behind
 *   nginx, X-Forwarded-Method / X-Forwarded-Uri behind Caddy, Traefik and
 *   HAProxy), exactly one of each; any other forwarding header is ignored,
 *   since the proxy passes the client's own headers on and a client could
 *   otherwise choose what is classified. Its other headers are the
 *   client's, which the proxy copies. accept = --auth-accept-status,
 *   reject = --auth-reject-status.
 * Both: every header goes to the rules as received, and the peer address
 *   is given to the library, which derives req.client_ip from it and the
 *   trusted proxies.
 */
#include "http_token.h"
#include "srv_answer.h"
#include "srv_rdns.h"
#include "srv_trust.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why a forward-auth request has no client method or URI to classify. */
enum view_bad { VIEW_OK, VIEW_MISSING, VIEW_REPEATED, VIEW_BAD_METHOD, VIEW_BAD_KINDS };

typedef struct view {
    const char *base;
    const char *method, *target;
    size_t method_len, target_len;
    int expect; /* Expect: with a body to come */
    int bad;    /* view_bad; not VIEW_OK: answer 400 */
    const char *bad_hdr; /* the header it is about */
} view;

static const char *span_ptr(const view *v, cm_span s)
{
    return v->base + s.off;
}

#define IS(p, n, lit) cm_http_name_is((p), (n), (lit), sizeof(lit) - 1)

static unsigned char ascii_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* ASCII case-insensitive equality of a span with a header name. */
static int hdr_is(const char *p, size_t n, const char *name)
{
    if (strlen(name) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ascii_lower((unsigned char)p[i]) != ascii_lower((unsigned char)name[i]))
            return 0;
    return 1;
}

static int is_token(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!http_is_tchar((unsigned char)p[i]))
            return 0;
    return n > 0;
}

/* Method and target the rules should see, by protocol (see the top of
 * this file). When a forward-auth request lacks them, v->bad says why and
 * the request's own method and target stand in (for the access log). */
static void build_view(const srv_conn *c, view *v)
{
    const cm_http_head *r = &c->req;
    const srv_auth_proxy *ap = c->l->proto == SRV_FORWARD_AUTH ? c->l->auth : NULL;
    cm_span m = r->method, t = r->url;
    unsigned nm = 0, nt = 0;
    v->base = c->in;
    v->expect = 0;
    v->bad = VIEW_OK;
    v->bad_hdr = NULL;
    for (unsigned i = 0; i < r->n; i++) {
        const char *name = span_ptr(v, r->h[i].name);
        size_t nl = r->h[i].name.len;
        if (nl == 6 && IS(name, nl, "expect")) {
            v->expect = 1;
        } else if (ap != NULL && hdr_is(name, nl, ap->method_hdr)) {
            m = r->h[i].value;
            nm++;
        } else if (ap != NULL && hdr_is(name, nl, ap->uri_hdr)) {
            t = r->h[i].value;
            nt++;
        }
    }
    if (ap != NULL) {
        /* More than one: the proxy appended to the client's instead of
         * replacing it, and either could be the client's. */
        if (nm != 1 || m.len == 0 || nt != 1 || t.len == 0) {
            int method_bad = nm != 1 || m.len == 0;
            unsigned n = method_bad ? nm : nt;
            v->bad = n > 1 ? VIEW_REPEATED : VIEW_MISSING;
            v->bad_hdr = method_bad ? ap->method_hdr : ap->uri_hdr;
        } else if (!is_token(span_ptr(v, m), m.len)) {
            v->bad = VIEW_BAD_METHOD;
            v->bad_hdr = ap->method_hdr;
        }
        if (v->bad != VIEW_OK) {
            m = r->method;
            t = r->url;
        }
    }
    v->method = span_ptr(v, m);
    v->method_len = m.len;
    v->target = span_ptr(v, t);
    v->target_len = t.len;
}

/* Says once per kind (per process) why forward-auth requests get 400: a
 * proxy that does not set the headers is misconfigured, and every one of
 * its requests would fail the same way. */
static void warn_bad_view(const srv_conn *c, const view *v)
{
    static atomic_int warned[VIEW_BAD_KINDS];
    static const char *const pre[VIEW_BAD_KINDS] = {
        [VIEW_MISSING] = "no (or an empty) ",
        [VIEW_REPEATED] = "more than one ",
        [VIEW_BAD_METHOD] = "an ",
    };
    static const char *const post[VIEW_BAD_KINDS] = {
        [VIEW_MISSING] = " header",
        [VIEW_REPEATED] = " header",
        [VIEW_BAD_METHOD] = " header that is not a method",
    };
    if (atomic_exchange(&warned[v->bad], 1))
        return;
    srv_log_warn("%s (forward-auth behind %s): a request with %s%s%s, answered 400: the proxy "
                 "must set it, once (docs/classify-serve.md, \"Forward-auth\"); not logged again",
                 c->l->name, c->l->auth->name, pre[v->bad], v->bad_hdr, post[v->bad]);
}

/* Reject body for both protocols. */
static void set_reject_body(const srv_server *srv, srv_answer *a)
{
    a->body = srv->reject.ptr;
    a->body_len = srv->reject.len;
    a->content_type = srv->reject.content_type;
}

/* Classifies; on success fills a->verdict and reason and returns 0. A
 * request over the library's own limits returns 431; a failed
 * evaluation returns -1 (the caller applies --on-error). */
static int classify(srv_conn *c, const view *v, srv_answer *a)
{
    clf_ctx *ctx = srv_worker_ctx(c->w);
    const cm_http_head *r = &c->req;
    const char *path, *query;
    size_t plen, qlen;

    if (cm_http_split_target(v->target, v->target_len, &path, &plen, &query, &qlen) != 0)
        return 400;
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, v->method, v->method_len);
    clf_ctx_set_path(ctx, path, plen);
    clf_ctx_set_query(ctx, query, qlen);
    for (unsigned i = 0; i < r->n; i++) {
        int rc = clf_ctx_add_header(ctx, span_ptr(v, r->h[i].name), r->h[i].name.len,
                                    span_ptr(v, r->h[i].value), r->h[i].value.len);
        /* Classifying without a header could give a verdict the full
         * request would not get: refuse the request instead. */
        if (rc == CLF_E_LIMIT)
            return 431;
    }
    if (c->peer_len > 0)
        srv_trust_set_peer(ctx, c->peer, c->peer_len);
    /* after the peer and the forwarding headers: they say whose name */
    if (c->w->rdns != NULL && c->w->rules->reads_rdns)
        srv_rdns_apply(c->w->rdns, ctx);
    clf_verdict vd;
    if (clf_eval(ctx, &vd) != CLF_OK)
        return -1;
    a->verdict = vd.verdict == CLF_ACCEPT ? 1 : 0;
    a->reason = vd.reason;
    a->reason_len = vd.reason != NULL ? vd.reason_len : 0;
    return 0;
}

static void answer_admin(srv_conn *c, srv_answer *a)
{
    srv_server *srv = c->w->srv;
    const char *target = c->in + c->req.url.off;
    size_t tl = c->req.url.len;
    const char *path, *query;
    size_t plen, qlen;

    srv_count(&c->w->metrics.admin_requests, 1);
    a->content_type = "text/plain; charset=utf-8";
    if (cm_http_split_target(target, tl, &path, &plen, &query, &qlen) != 0)
        plen = 0;
    if (plen == 8 && memcmp(path, "/metrics", 8) == 0) {
        srv_metrics *ws[256];
        size_t n = srv->nworkers < 256 ? srv->nworkers : 256;
        for (size_t i = 0; i < n; i++)
            ws[i] = &srv->workers[i].metrics;
        char *text;
        size_t len;
        if (srv_metrics_render(ws, n, &srv->g, &text, &len) != 0) {
            a->status = 503;
            a->body = "out of memory\n";
            a->body_len = 14;
            return;
        }
        c->owned_body = text;
        a->status = 200;
        a->body = text;
        a->body_len = len;
        a->content_type = "text/plain; version=0.0.4; charset=utf-8";
    } else if (plen == 8 && memcmp(path, "/healthz", 8) == 0) {
        int stopping = atomic_load(&srv->stopping);
        a->status = stopping ? 503 : 200;
        a->body = stopping ? "stopping\n" : "ok\n";
        a->body_len = strlen(a->body);
    } else {
        a->status = 404;
        a->body = "Not Found\n";
        a->body_len = 10;
    }
}

void srv_answer_request(srv_conn *c, srv_answer *a)
{
    const srv_server *srv = c->w->srv;
    const srv_config *cfg = srv->cfg;
    view v;

    a->head_only = c->parser.method == HTTP_HEAD;
    if (c->l->proto == SRV_ADMIN) {
        answer_admin(c, a);
        return;
    }
    build_view(c, &v);
    int rc = 400;
    if (v.bad == VIEW_OK)
        rc = classify(c, &v, a);
    else
        warn_bad_view(c, &v);
    if (rc == 400 || rc == 431) {
        a->status = (unsigned)rc;
        a->verdict = -1;
        a->body = rc == 431 ? "Request Header Fields Too Large\n" : "Bad Request\n";
        a->body_len = strlen(a->body);
        a->content_type = "text/plain; charset=utf-8";
        a->close = 1;
        srv_count(&c->w->metrics.errors[rc == 431 ? SRV_ERR_431 : SRV_ERR_400], 1);
        return;
    }
    if (rc != 0) {
        srv_count(&c->w->metrics.errors[SRV_ERR_CLASSIFY], 1);
        a->verdict = cfg->on_error == SRV_ON_ERROR_ACCEPT ? 1 : 0;
        a->reason = "classify-error";
        a->reason_len = 14;
    }
    srv_metrics_verdict(&c->w->metrics, a->verdict, a->reason, a->reason_len);
    if (v.expect && (c->parser.flags & F_CHUNKED || c->parser.content_length > 0))
        a->close = 1;
    if (c->l->proto == SRV_PASS_THROUGH) {
        if (a->verdict == 1) {
            a->status = 421; /* empty body: see docs/classify-serve.md */
        } else {
            a->status = cfg->reject_status;
            set_reject_body(srv, a);
        }
    } else {
        if (a->verdict == 1) {
            a->status = cfg->auth_accept_status;
        } else {
            a->status = cfg->auth_reject_status;
            set_reject_body(srv, a);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Access log. */

static const char *find_header(const srv_conn *c, const char *lower, size_t ll, size_t *len)
{
    const cm_http_head *r = &c->req;
    for (unsigned i = 0; i < r->n; i++) {
        if (cm_http_name_is(c->in + r->h[i].name.off, r->h[i].name.len, lower, ll)) {
            *len = r->h[i].value.len;
            return c->in + r->h[i].value.off;
        }
    }
    *len = 0;
    return NULL;
}

void srv_answer_log(srv_conn *c, const srv_answer *a, uint64_t duration_us)
{
    if (!srv_access_log_enabled())
        return;
    view v;
    srv_logreq r;
    build_view(c, &v);
    memset(&r, 0, sizeof r);
    r.listener = srv_proto_name(c->l->proto);
    r.peer = c->peer, r.peer_len = c->peer_len;
    r.xff = find_header(c, "x-forwarded-for", 15, &r.xff_len);
    r.method = v.method, r.method_len = v.method_len;
    r.uri = v.target, r.uri_len = v.target_len;
    r.host = find_header(c, "host", 4, &r.host_len);
    r.ua = find_header(c, "user-agent", 10, &r.ua_len);
    r.status = (int)a->status;
    r.verdict = a->verdict;
    r.reason = a->reason, r.reason_len = a->reason_len;
    r.generation = c->w->gen;
    r.duration_us = duration_us;
    srv_jline_request(&c->w->log, &r);
}
