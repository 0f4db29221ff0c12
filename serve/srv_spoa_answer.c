/*
 * srv_spoa_answer.c: from a NOTIFY frame to its ACK (see srv_spoa.h).
 *
 * The arguments are read by name, whatever the message is called, so
 * that the SPOE file's `spoe-message` decides only which ones are sent:
 *   method, path, query  strings (HAProxy's `method`, `path`, `query`);
 *                        a NULL query (no '?') is an empty one
 *   headers              req.hdrs_bin (binary), or req.hdrs (the text
 *                        block)
 *   src                  the client address (IPv4 or IPv6), or a string:
 *                        the peer the library derives req.client_ip from,
 *                        trusting the headers only when it is a
 *                        --trust-proxy address
 * Others are ignored; a later argument of the same name wins. Without a
 * method or a path nothing is classified: the ACK sets no variable (a
 * warning says so once). Otherwise it sets txn.<prefix>.verdict
 * ("accept" or "reject") and txn.<prefix>.reason.
 */
#include "spop.h"
#include "srv_conn.h"
#include "srv_rdns.h"
#include "srv_spoa.h"
#include "srv_trust.h"

#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct notify {
    const uint8_t *method, *path, *query, *hdrs, *src;
    size_t method_len, path_len, query_len, hdrs_len, src_len;
    int have_method, have_path, hdrs_text;
    unsigned src_type;
    char src_text[INET6_ADDRSTRLEN];
    size_t src_text_len;
} notify;

static int name_is(const spop_arg *a, const char *lit)
{
    return strlen(lit) == a->name_len && memcmp(a->name, lit, a->name_len) == 0;
}

static int is_bytes(const spop_value *v)
{
    return v->type == SPOP_T_STR || v->type == SPOP_T_BIN;
}

/* Reads the arguments; returns 0, or SPOP_ST_INVALID. */
static unsigned read_args(const spop_frame *f, notify *n)
{
    spop_args it;
    spop_arg a;
    int rc;
    memset(n, 0, sizeof *n);
    spop_args_init(&it, f->payload, f->payload_len);
    while ((rc = spop_args_next(&it, &a)) == 1) {
        const spop_value *v = &a.value;
        if (name_is(&a, "method")) {
            n->have_method = is_bytes(v);
            n->method = v->ptr, n->method_len = v->len;
        } else if (name_is(&a, "path")) {
            n->have_path = is_bytes(v);
            n->path = v->ptr, n->path_len = v->len;
        } else if (name_is(&a, "query")) {
            n->query = is_bytes(v) ? v->ptr : NULL;
            n->query_len = is_bytes(v) ? v->len : 0;
        } else if (name_is(&a, "headers")) {
            n->hdrs = is_bytes(v) ? v->ptr : NULL;
            n->hdrs_len = is_bytes(v) ? v->len : 0;
            n->hdrs_text = v->type == SPOP_T_STR;
        } else if (name_is(&a, "src")) {
            n->src_type = v->type;
            n->src = v->ptr, n->src_len = v->len;
        }
    }
    if (rc < 0)
        return SPOP_ST_INVALID;
    if (n->src_type == SPOP_T_IPV4 || n->src_type == SPOP_T_IPV6) {
        inet_ntop(n->src_type == SPOP_T_IPV4 ? AF_INET : AF_INET6, n->src, n->src_text,
                  sizeof n->src_text);
        n->src_text_len = strlen(n->src_text);
    } else if (n->src_type == SPOP_T_STR && n->src_len < sizeof n->src_text) {
        memcpy(n->src_text, n->src, n->src_len);
        n->src_text_len = n->src_len;
    }
    return 0;
}

static int next_header(const notify *n, spop_hdrs *it, const uint8_t **name, size_t *nl,
                       const uint8_t **value, size_t *vl)
{
    return n->hdrs_text ? spop_hdrs_text_next(it, name, nl, value, vl)
                        : spop_hdrs_bin_next(it, name, nl, value, vl);
}

/* The outcome of one NOTIFY. */
typedef struct outcome {
    int verdict; /* -1: not classified; 0 reject; 1 accept */
    const char *reason;
    size_t reason_len;
} outcome;

/* Classifies; returns 0, or SPOP_ST_INVALID for a malformed header
 * block. */
static unsigned classify(srv_spoa *c, const notify *n, outcome *o)
{
    srv_worker *w = c->w;
    clf_ctx *ctx = srv_worker_ctx(w);
    const uint8_t *name, *value;
    size_t nl, vl;
    int rc, over = 0;
    unsigned count = 0;
    spop_hdrs it = {n->hdrs, n->hdrs + n->hdrs_len};

    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, (const char *)n->method, n->method_len);
    clf_ctx_set_path(ctx, (const char *)n->path, n->path_len);
    clf_ctx_set_query(ctx, (const char *)n->query, n->query_len);
    while (n->hdrs != NULL && (rc = next_header(n, &it, &name, &nl, &value, &vl)) == 1) {
        /* Classifying without a header could give a verdict the full
         * request would not get: refuse it instead (the forward-auth
         * listener's 431), past --max-headers as there. */
        if (!over && (++count > w->srv->cfg->max_headers ||
                      clf_ctx_add_header(ctx, (const char *)name, nl, (const char *)value, vl) ==
                          CLF_E_LIMIT))
            over = 1;
    }
    if (n->hdrs != NULL && rc < 0)
        return SPOP_ST_INVALID;
    if (over) {
        srv_count(&w->metrics.errors[SRV_ERR_431], 1);
        o->verdict = 0;
        o->reason = "classify-serve-431";
        o->reason_len = 18;
        return 0;
    }
    if (n->src_text_len > 0)
        srv_trust_set_peer(ctx, n->src_text, n->src_text_len);
    if (w->rdns != NULL && w->rules->reads_rdns)
        srv_rdns_apply(w->rdns, ctx);
    clf_verdict vd;
    if (clf_eval(ctx, &vd) != CLF_OK) {
        srv_count(&w->metrics.errors[SRV_ERR_CLASSIFY], 1);
        o->verdict = w->srv->cfg->on_error == SRV_ON_ERROR_ACCEPT ? 1 : 0;
        o->reason = "classify-error";
        o->reason_len = 14;
    } else {
        o->verdict = vd.verdict == CLF_ACCEPT ? 1 : 0;
        o->reason = vd.reason != NULL ? vd.reason : "";
        o->reason_len = vd.reason != NULL ? vd.reason_len : 0;
    }
    srv_metrics_verdict(&w->metrics, o->verdict, o->reason, o->reason_len);
    return 0;
}

static void warn_unclassified(const srv_spoa *c)
{
    static atomic_int warned;
    if (atomic_exchange(&warned, 1))
        return;
    srv_log_warn("%s (spoa): a NOTIFY without a string argument named 'method' and one named "
                 "'path': nothing classified, no variable set (the SPOE message needs 'args "
                 "method=method path=path ...', docs/classify-serve.md); not logged again",
                 c->l->name);
}

/* ------------------------------------------------------------------------ */
/* Access log. */

static void log_line(srv_spoa *c, const notify *n, const outcome *o, uint64_t us)
{
    const uint8_t *name, *value;
    size_t nl, vl;
    char uri[SRV_JLINE_STR_MAX];
    srv_logreq r;
    spop_hdrs it = {n->hdrs, n->hdrs + n->hdrs_len};

    memset(&r, 0, sizeof r);
    while (n->hdrs != NULL && next_header(n, &it, &name, &nl, &value, &vl) == 1) {
        const char *nm = (const char *)name, *val = (const char *)value;
        if (r.ua == NULL && cm_http_name_is(nm, nl, "user-agent", 10))
            r.ua = val, r.ua_len = vl;
        else if (r.host == NULL && cm_http_name_is(nm, nl, "host", 4))
            r.host = val, r.host_len = vl;
        else if (r.xff == NULL && cm_http_name_is(nm, nl, "x-forwarded-for", 15))
            r.xff = val, r.xff_len = vl;
    }
    /* the URI as the HTTP listeners log it; a longer one is cut anyway */
    size_t ul = n->path_len < sizeof uri ? n->path_len : sizeof uri;
    if (n->path != NULL)
        memcpy(uri, n->path, ul);
    if (n->query != NULL && ul < sizeof uri) {
        uri[ul++] = '?';
        size_t ql = n->query_len < sizeof uri - ul ? n->query_len : sizeof uri - ul;
        memcpy(uri + ul, n->query, ql);
        ul += ql;
    }
    r.listener = "spoa";
    r.peer = n->src_text_len ? n->src_text : NULL, r.peer_len = n->src_text_len;
    r.method = (const char *)n->method, r.method_len = n->method_len;
    r.uri = n->path ? uri : NULL, r.uri_len = ul;
    r.status = -1;
    r.verdict = o->verdict;
    r.reason = o->reason, r.reason_len = o->reason_len;
    r.generation = c->w->gen;
    r.duration_us = us;
    srv_jline_request(&c->w->log, &r);
}

/* ------------------------------------------------------------------------ */

size_t srv_spoa_answer(srv_spoa *c, const spop_frame *f, uint8_t *out, size_t cap,
                       unsigned *status)
{
    notify n;
    outcome o = {-1, NULL, 0};
    *status = read_args(f, &n);
    if (*status != 0)
        return 0;
    if (n.have_method && n.have_path) {
        *status = classify(c, &n, &o);
        if (*status != 0)
            return 0;
    } else {
        srv_count(&c->w->metrics.errors[SRV_ERR_400], 1);
        warn_unclassified(c);
    }
    /* The ACK fits any max-frame-size (256 at least): the reason is cut
     * to leave room for the ids and the verdict. */
    size_t rl = o.reason_len;
    size_t room = c->max_frame - 64;
    if (rl > SRV_SPOA_REASON_MAX)
        rl = SRV_SPOA_REASON_MAX;
    if (rl > room)
        rl = room;
    spop_setvar vars[2] = {
        {SPOP_SCOPE_TXN, "verdict", 7, o.verdict ? "accept" : "reject", 6},
        {SPOP_SCOPE_TXN, "reason", 6, o.reason, rl},
    };
    size_t len = spop_put_ack(out, cap, f->stream_id, f->frame_id, vars, o.verdict >= 0 ? 2 : 0);
    uint64_t us = (srv_now_ns() - c->t0_ns) / 1000;
    if (o.verdict >= 0)
        srv_metrics_latency(&c->w->metrics, us);
    if (srv_access_log_enabled())
        log_line(c, &n, &o, us);
    if (len == 0)
        *status = SPOP_ST_RESOURCE;
    return len;
}
