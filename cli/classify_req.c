/*
 * classify_req.c: one request through a context (classify_req.h).
 */
#include "classify_req.h"

#include "log_record.h"

#include <stdio.h>
#include <string.h>

int cli_classify(clf_ctx *ctx, uint32_t filter, const cli_request *req, explain_log *explain,
                 clf_verdict *v, char *err, size_t errlen)
{
    clf_ctx_reset(ctx);
    if (req->peer != NULL && clf_ctx_set_peer(ctx, req->peer, req->peer_len) != CLF_OK) {
        char q[128];
        log_quote(q, sizeof q, req->peer, req->peer_len);
        snprintf(err, errlen, "the client address '%s' is not an IPv4 or IPv6 address", q);
        return -1;
    }
    if (req->rdns != NULL) /* checked by the caller; "" is "resolved, no name" */
        clf_ctx_set_rdns(ctx, *req->rdns ? req->rdns : NULL, strlen(req->rdns));
    if (req->has_time) clf_ctx_set_time(ctx, req->time);
    if (req->scheme != NULL) clf_ctx_set_scheme(ctx, req->scheme, req->scheme_len);
    int rc = clf_ctx_set_method(ctx, req->method.ptr, req->method.len);
    if (rc == CLF_OK)
        rc = clf_ctx_set_path(ctx, req->path.ptr, req->path.len);
    if (rc == CLF_OK)
        rc = clf_ctx_set_query(ctx, req->query.ptr, req->query.len);
    for (size_t i = 0; rc == CLF_OK && i < req->nheaders; i++) {
        const http_header *h = &req->headers[i];
        rc = clf_ctx_add_header(ctx, h->name.ptr, h->name.len, h->value.ptr, h->value.len);
        if (rc == CLF_E_LIMIT) {
            snprintf(err, errlen, "header %zu (%.*s) refused: %s", i + 1,
                     (int)(h->name.len > 64 ? 64 : h->name.len), h->name.ptr,
                     clf_ctx_errmsg(ctx));
            return -1;
        }
    }
    if (rc == CLF_OK && explain != NULL) {
        explain_log_clear(explain);
        rc = clf_eval_filter_explain(ctx, filter, v, explain_log_step, explain);
        if (rc == CLF_OK && explain->nomem) {
            snprintf(err, errlen, "cannot explain: out of memory");
            return -1;
        }
    } else if (rc == CLF_OK) {
        rc = clf_eval_filter(ctx, filter, v);
    }
    if (rc != CLF_OK) {
        snprintf(err, errlen, "cannot classify: %s%s%s", clf_strerror(rc),
                 clf_ctx_errmsg(ctx)[0] ? ": " : "", clf_ctx_errmsg(ctx));
        return -1;
    }
    return 0;
}
