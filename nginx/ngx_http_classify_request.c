
/*
 * ngx_http_classify_request.c: classifying a request and enforcing the
 * verdict.
 *
 * What the rules see. req.method is the request method; req.path and
 * req.query are r->uri and r->args as nginx parsed them, saved in the
 * post-read phase before any rewrite: the path percent-decoded, with "."
 * and ".." segments resolved and (merge_slashes on, the default) slashes
 * merged, which is the path nginx matches locations against and serves
 * files from. The raw $request_uri would let "/x/../wp-admin/" or
 * "/%77p-admin/" past a rule on "/wp-admin". Headers are nginx's list of
 * request header lines, handed over without copying (libclassify borrows
 * them until clf_eval returns). The peer is the connection's address,
 * which is the client's when the realip module rewrote it in the
 * post-read phase; req.client_ip then follows classify_trusted_proxies.
 *
 * When. A request is classified once: by the rewrite-phase handler of the
 * first location with "classify on", or earlier by $classify_verdict or
 * $classify_reason when a server-level "if" reads them. The handler runs
 * first in the rewrite phase (handlers run in reverse order of
 * registration and a dynamic module registers last), so "return",
 * "rewrite" and "if" in that location cannot bypass it, and access checks
 * and auth_request subrequests never run for a rejected request.
 * Subrequests are never classified; they see the main request's verdict.
 */


#include "ngx_http_classify_module.h"


static ngx_http_classify_ctx_t *ngx_http_classify_get_ctx(
    ngx_http_request_t *r);
static void ngx_http_classify_ctx_cleanup(void *data);
static void ngx_http_classify(ngx_http_request_t *r,
    ngx_http_classify_ctx_t *ctx, ngx_http_classify_loc_conf_t *clcf);
static ngx_http_classify_ctx_t *ngx_http_classify_result(
    ngx_http_request_t *r);
static ngx_int_t ngx_http_classify_verdict_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_classify_reason_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);


static ngx_str_t  ngx_http_classify_error_reason =
    ngx_string("classify-error");
static ngx_str_t  ngx_http_classify_limit_reason =
    ngx_string("classify-header-limit");


static ngx_http_variable_t  ngx_http_classify_vars[] = {

    { ngx_string("classify_verdict"), NULL,
      ngx_http_classify_verdict_variable, 0, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("classify_reason"), NULL,
      ngx_http_classify_reason_variable, 0, NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


/*
 * Post-read phase, main requests of servers with rules: the context, with
 * the URI as parsed (see the top of this file).
 */

ngx_int_t
ngx_http_classify_post_read_handler(ngx_http_request_t *r)
{
    ngx_pool_cleanup_t            *cln;
    ngx_http_classify_ctx_t       *ctx;
    ngx_http_classify_srv_conf_t  *cscf;

    cscf = ngx_http_get_module_srv_conf(r, ngx_http_classify_module);

    if (cscf->rules == NULL
        || ngx_http_get_module_ctx(r, ngx_http_classify_module) != NULL)
    {
        return NGX_DECLINED;
    }

    /* the cleanup entry is how the context is found again after an
       internal redirect (ngx_http_classify_get_ctx) */

    cln = ngx_pool_cleanup_add(r->pool, sizeof(ngx_http_classify_ctx_t));
    if (cln == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx = cln->data;
    ngx_memzero(ctx, sizeof(ngx_http_classify_ctx_t));

    ctx->uri = r->uri;
    ctx->args = r->args;

    cln->handler = ngx_http_classify_ctx_cleanup;

    ngx_http_set_ctx(r, ctx, ngx_http_classify_module);

    return NGX_DECLINED;
}


static void
ngx_http_classify_ctx_cleanup(void *data)
{
    /* nothing to free: the entry only marks the context */
}


/* As the realip module finds its context after an internal redirect. */

static ngx_http_classify_ctx_t *
ngx_http_classify_get_ctx(ngx_http_request_t *r)
{
    ngx_pool_cleanup_t       *cln;
    ngx_http_classify_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_classify_module);

    if (ctx == NULL && (r->internal || r->filter_finalize)) {

        for (cln = r->pool->cleanup; cln; cln = cln->next) {
            if (cln->handler == ngx_http_classify_ctx_cleanup) {
                ctx = cln->data;
                ngx_http_set_ctx(r, ctx, ngx_http_classify_module);
                break;
            }
        }
    }

    return ctx;
}


/*
 * Rewrite phase: classify (unless a variable already did) and enforce the
 * verdict, once per main request.
 */

ngx_int_t
ngx_http_classify_rewrite_handler(ngx_http_request_t *r)
{
    ngx_http_classify_ctx_t       *ctx;
    ngx_http_classify_loc_conf_t  *clcf;

    if (r != r->main) {
        return NGX_DECLINED;
    }

    clcf = ngx_http_get_module_loc_conf(r, ngx_http_classify_module);

    if (!clcf->enable) {
        return NGX_DECLINED;
    }

    ctx = ngx_http_classify_get_ctx(r);

    if (ctx == NULL || ctx->enforced) {
        return NGX_DECLINED;
    }

    if (!ctx->classified) {
        ngx_http_classify(r, ctx, clcf);
    }

    ctx->enforced = 1;

    if (ctx->verdict == CLF_ACCEPT) {
        return NGX_DECLINED;
    }

    ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                   "classify: reject \"%V\"", &ctx->reason);

    if (clcf->reject_location.len == 0) {
        return clcf->reject_status;
    }

    /*
     * As error_page does with a named location: the named location runs
     * the request to its end, holding a reference that finalizing with
     * NGX_DONE gives back. Its own rewrite phase finds ctx->enforced.
     */

    (void) ngx_http_named_location(r, &clcf->reject_location);

    ngx_http_finalize_request(r, NGX_DONE);

    return NGX_DONE;
}


/*
 * Hands the request to libclassify and records the verdict in ctx. Never
 * fails: a request the library cannot judge is accepted with the reason
 * "classify-error" (as classify-serve's --on-error default), or, when it
 * has more headers than the library takes, rejected with
 * "classify-header-limit" (judging it without some of them could let it
 * through); both are logged.
 */

static void
ngx_http_classify(ngx_http_request_t *r, ngx_http_classify_ctx_t *ctx,
    ngx_http_classify_loc_conf_t *clcf)
{
    clf_ctx                       *c;
    clf_status                     rc;
    ngx_uint_t                     i;
    clf_verdict                    v;
    ngx_list_part_t               *part;
    ngx_table_elt_t               *h;
    ngx_http_classify_srv_conf_t  *cscf;

    cscf = ngx_http_get_module_srv_conf(r, ngx_http_classify_module);

    ctx->classified = 1;

    c = cscf->rules->ctx;

    if (c == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "classify: this worker has no context for \"%V\"",
                      &cscf->rules->path);
        goto error;
    }

    clf_ctx_reset(c);

    (void) clf_ctx_set_method(c, (const char *) r->method_name.data,
                              r->method_name.len);
    (void) clf_ctx_set_path(c, (const char *) ctx->uri.data, ctx->uri.len);
    (void) clf_ctx_set_query(c, (const char *) ctx->args.data, ctx->args.len);

    part = &r->headers_in.headers.part;
    h = part->elts;

    for (i = 0; /* void */ ; i++) {

        if (i >= part->nelts) {
            if (part->next == NULL) {
                break;
            }

            part = part->next;
            h = part->elts;
            i = 0;
        }

        rc = clf_ctx_add_header(c, (const char *) h[i].key.data, h[i].key.len,
                                (const char *) h[i].value.data,
                                h[i].value.len);

        if (rc == CLF_E_LIMIT) {
            ngx_log_error(NGX_LOG_INFO, r->connection->log, 0,
                          "classify: rejected: %s", clf_ctx_errmsg(c));
            ctx->verdict = CLF_REJECT;
            ctx->reason = ngx_http_classify_limit_reason;
            return;
        }
    }

    (void) clf_ctx_set_peer(c, (const char *) r->connection->addr_text.data,
                            r->connection->addr_text.len);

    rc = clf_eval_filter(c, clcf->filter, &v);

    if (rc != CLF_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "classify: cannot classify: %s: %s", clf_strerror(rc),
                      clf_ctx_errmsg(c));
        goto error;
    }

    ctx->verdict = v.verdict;

    if (v.reason) {
        ctx->reason.data = (u_char *) v.reason;
        ctx->reason.len = v.reason_len;
    }

    return;

error:

    ctx->verdict = CLF_ACCEPT;
    ctx->reason = ngx_http_classify_error_reason;
}


/*
 * The main request's context once it is classified, classifying it first
 * when the configuration in effect has "classify on" (a variable read in
 * a server-level "if" runs before any location's rewrite phase).
 */

static ngx_http_classify_ctx_t *
ngx_http_classify_result(ngx_http_request_t *r)
{
    ngx_http_classify_ctx_t       *ctx;
    ngx_http_classify_loc_conf_t  *clcf;

    ctx = ngx_http_classify_get_ctx(r->main);

    if (ctx == NULL) {
        return NULL;
    }

    if (!ctx->classified && r == r->main) {
        clcf = ngx_http_get_module_loc_conf(r, ngx_http_classify_module);

        if (clcf->enable) {
            ngx_http_classify(r, ctx, clcf);
        }
    }

    return ctx->classified ? ctx : NULL;
}


static ngx_int_t
ngx_http_classify_verdict_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_classify_ctx_t  *ctx;

    ctx = ngx_http_classify_result(r);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    if (ctx->verdict == CLF_ACCEPT) {
        v->len = sizeof("accept") - 1;
        v->data = (u_char *) "accept";

    } else {
        v->len = sizeof("reject") - 1;
        v->data = (u_char *) "reject";
    }

    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


static ngx_int_t
ngx_http_classify_reason_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_classify_ctx_t  *ctx;

    ctx = ngx_http_classify_result(r);

    if (ctx == NULL || ctx->reason.len == 0) {
        v->not_found = 1;
        return NGX_OK;
    }

    v->len = ctx->reason.len;
    v->data = ctx->reason.data;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


ngx_int_t
ngx_http_classify_add_variables(ngx_conf_t *cf)
{
    return ngx_http_classify_register_variables(cf, ngx_http_classify_vars);
}


/* Registers each variable of `vars` (ending with ngx_http_null_variable). */

ngx_int_t
ngx_http_classify_register_variables(ngx_conf_t *cf, ngx_http_variable_t *vars)
{
    ngx_http_variable_t  *var, *v;

    for (v = vars; v->name.len; v++) {
        var = ngx_http_add_variable(cf, &v->name, v->flags);
        if (var == NULL) {
            return NGX_ERROR;
        }

        var->get_handler = v->get_handler;
        var->data = v->data;
    }

    return NGX_OK;
}
