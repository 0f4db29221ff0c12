
/*
 * ngx_http_classify_rewrite_filter.c: the body rewriter's header and body
 * filters (docs/nginx.md, "Rewriting response bodies").
 *
 * Where they run. The header filter is ngx_http_classify_rewrite_module's,
 * which nginx appends to its module list, so it runs first, before the
 * not_modified filter: the ETag it gives a rewritten response (weak, and
 * tagged with the rules) is the one If-None-Match is compared with. The
 * body filter is ngx_http_classify_rewrite_body_module's, which
 * nginx/config places just before the copy filter in the list, so it runs
 * after it, on buffers in memory (r->filter_need_in_memory), and before
 * gzip, SSI and charset, as sub_filter does.
 *
 * Which responses. Main requests only, status 200, a Content-Type of
 * classify_rewrite_types, not empty, no Content-Encoding but identity
 * (a compressed body passes untouched: the rules would never match it).
 * When the skip cache knows this version of the resource (Host, request
 * URI and ETag or Last-Modified) as one no rule fires on, the response
 * passes untouched too, headers included: it is the original. Otherwise
 * Content-Length and Accept-Ranges are removed (the length changes;
 * ranges of the original are not ranges of the result), Last-Modified is
 * removed and the ETag made weak and tagged with the rules, so that a copy
 * made with other rules never revalidates. A HEAD request gets the
 * headers a GET would.
 *
 * The body. Each input buffer is fed whole to the response's rewriter
 * (the one carrying last_buf with clf_rewriter_feed_final, as
 * replace-filter decides that buffer whole), and what the rewriter writes
 * goes into this filter's own buffers: full ones, and the last one at a
 * flush or the end, are passed downstream at once; those sent come back
 * for reuse. An input buffer is marked consumed once what was passed
 * downstream by the end of its feed is sent (why: above
 * ngx_http_classify_rewrite_keep). When classify_rewrite_buffers output
 * buffers are all still downstream (a slow client), the next input is
 * held, unread, in ctx->in, so that the upstream or the copy filter stop
 * too: memory stays bounded whatever the body's size. At the end the
 * rewriter goes back to its free list.
 *
 * Errors. A rewriter that fails mid-body (a Hyperscan error, a PCRE2
 * workspace limit, no memory for an output buffer) is logged with its
 * message and the response cut short: the headers are gone, so the
 * filter returns NGX_ERROR and nginx closes the connection, as other
 * filters do. Before the headers (no rewriter or scratch: out of memory)
 * the response becomes a 500.
 */


#include "ngx_http_classify_module.h"


/* in c->buffered, beside nginx's write (0x10) and gzip (0x20) bits */
#define NGX_HTTP_CLASSIFY_RW_BUFFERED  0x40


static ngx_int_t ngx_http_classify_rewrite_header_filter(
    ngx_http_request_t *r);
static ngx_int_t ngx_http_classify_rewrite_body_filter(ngx_http_request_t *r,
    ngx_chain_t *in);
static ngx_uint_t ngx_http_classify_rewrite_eligible(ngx_http_request_t *r,
    ngx_http_classify_rewrite_loc_conf_t *rlcf);
static ngx_int_t ngx_http_classify_rewrite_cache_key(ngx_http_request_t *r,
    ngx_str_t *key);
static ngx_int_t ngx_http_classify_rewrite_etag(ngx_http_request_t *r,
    ngx_http_classify_rwset_t *set);
static ngx_int_t ngx_http_classify_rewrite_feed(ngx_http_request_t *r,
    ngx_http_classify_rewrite_ctx_t *ctx, ngx_buf_t *b, ngx_uint_t *flush);
static ngx_int_t ngx_http_classify_rewrite_keep(
    ngx_http_classify_rewrite_ctx_t *ctx, ngx_buf_t *b);
static void ngx_http_classify_rewrite_release(
    ngx_http_classify_rewrite_ctx_t *ctx);
static void ngx_http_classify_rewrite_queue(
    ngx_http_classify_rewrite_ctx_t *ctx, ngx_chain_t *cl);
static ngx_int_t ngx_http_classify_rewrite_get_buf(
    ngx_http_classify_rewrite_ctx_t *ctx);
static ngx_uint_t ngx_http_classify_rewrite_room(
    ngx_http_classify_rewrite_ctx_t *ctx);
static ngx_int_t ngx_http_classify_rewrite_mark(
    ngx_http_classify_rewrite_ctx_t *ctx, ngx_uint_t last, ngx_uint_t flush,
    ngx_uint_t held);
static void ngx_http_classify_rewrite_done(
    ngx_http_classify_rewrite_ctx_t *ctx,
    ngx_http_classify_rw_outcome_e outcome);
static void ngx_http_classify_rewrite_cleanup(void *data);


static ngx_http_output_header_filter_pt  ngx_http_next_header_filter;
static ngx_http_output_body_filter_pt    ngx_http_next_body_filter;


ngx_int_t
ngx_http_classify_rewrite_header_init(ngx_conf_t *cf)
{
    ngx_http_next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = ngx_http_classify_rewrite_header_filter;

    return NGX_OK;
}


ngx_int_t
ngx_http_classify_rewrite_body_init(ngx_conf_t *cf)
{
    ngx_http_next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = ngx_http_classify_rewrite_body_filter;

    return NGX_OK;
}


static ngx_int_t
ngx_http_classify_rewrite_header_filter(ngx_http_request_t *r)
{
    ngx_int_t                              rc;
    ngx_str_t                              key;
    clf_rewrite_stats                      stats;
    ngx_pool_cleanup_t                    *cln;
    ngx_http_classify_rwset_t             *set;
    ngx_http_classify_rewrite_ctx_t       *ctx;
    ngx_http_classify_rewrite_loc_conf_t  *rlcf;

    rlcf = ngx_http_get_module_loc_conf(r, ngx_http_classify_rewrite_module);

    if (rlcf->set == NULL
        || r != r->main
        || ngx_http_get_module_ctx(r, ngx_http_classify_rewrite_module))
    {
        /* off, a subrequest, or the error page of a failure below */
        return ngx_http_next_header_filter(r);
    }

    /* the cleanup entry gives the rewriter back if the request ends first */

    cln = ngx_pool_cleanup_add(r->pool,
                               sizeof(ngx_http_classify_rewrite_ctx_t));
    if (cln == NULL) {
        return NGX_ERROR;
    }

    ctx = cln->data;
    ngx_memzero(ctx, sizeof(ngx_http_classify_rewrite_ctx_t));

    ctx->request = r;
    ctx->set = rlcf->set;
    ctx->bufs = rlcf->bufs;
    ctx->last_out = &ctx->out;
    ctx->last_fed = &ctx->fed;
    ctx->outcome = NGX_HTTP_CLASSIFY_RW_PASSED;

    cln->handler = ngx_http_classify_rewrite_cleanup;

    ngx_http_set_ctx(r, ctx, ngx_http_classify_rewrite_module);

    if (!ngx_http_classify_rewrite_eligible(r, rlcf)) {
        return ngx_http_next_header_filter(r);
    }

    set = rlcf->set;

    if (set->rules->rwscratch == NULL) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "classify_rewrite \"%V\": this worker has no rewrite "
                      "scratch for \"%V\"", &set->name, &set->rules->path);
        goto failed;
    }

    ctx->slot = ngx_http_classify_rewriter_take(set,
                                                ngx_http_classify_rewrite_sink,
                                                ctx, r->connection->log);
    if (ctx->slot == NULL) {
        goto failed;
    }

    if (rlcf->rwcache && rlcf->rwcache->cache) {
        rc = ngx_http_classify_rewrite_cache_key(r, &key);

        if (rc == NGX_ERROR) {
            goto failed;
        }

        if (rc == NGX_OK
            && clf_rewriter_use_cache(ctx->slot->rw, rlcf->rwcache->cache,
                                      key.data, key.len)
               == CLF_OK
            && clf_rewriter_stats(ctx->slot->rw, &stats) == CLF_OK
            && stats.skipped)
        {
            /* no rule fires on this version: the original goes out */
            ngx_http_classify_rewrite_done(ctx, NGX_HTTP_CLASSIFY_RW_SKIPPED);
            return ngx_http_next_header_filter(r);
        }
    }

    ngx_http_clear_content_length(r);
    ngx_http_clear_accept_ranges(r);
    ngx_http_clear_last_modified(r);

    if (ngx_http_classify_rewrite_etag(r, set) != NGX_OK) {
        goto failed;
    }

    r->filter_need_in_memory = 1;
    ctx->outcome = NGX_HTTP_CLASSIFY_RW_REWRITING;

    rc = ngx_http_next_header_filter(r);

    if (r->header_only || rc == NGX_ERROR) {
        /* HEAD, or the not_modified filter made it a 304: no body */
        ngx_http_classify_rewrite_done(ctx, NGX_HTTP_CLASSIFY_RW_PASSED);
    }

    return rc;

failed:

    ngx_http_classify_rewrite_done(ctx, NGX_HTTP_CLASSIFY_RW_FAILED);

    return ngx_http_filter_finalize_request(r,
                                            &ngx_http_classify_rewrite_module,
                                            NGX_HTTP_INTERNAL_SERVER_ERROR);
}


static ngx_uint_t
ngx_http_classify_rewrite_eligible(ngx_http_request_t *r,
    ngx_http_classify_rewrite_loc_conf_t *rlcf)
{
    ngx_table_elt_t  *ce;

    if (r->headers_out.status != NGX_HTTP_OK
        || r->headers_out.content_length_n == 0
        || ngx_http_test_content_type(r, &rlcf->types) == NULL)
    {
        return 0;
    }

    ce = r->headers_out.content_encoding;

    if (ce && ce->value.len
        && !(ce->value.len == sizeof("identity") - 1
             && ngx_strncasecmp(ce->value.data, (u_char *) "identity",
                                sizeof("identity") - 1) == 0))
    {
        ngx_log_debug1(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "classify_rewrite: passed, Content-Encoding \"%V\"",
                       &ce->value);
        return 0;
    }

    return 1;
}


/*
 * The skip cache's key: Host, the request URI as sent (with its query)
 * and the validator, the ETag or else Last-Modified. NGX_DECLINED when
 * the response has neither: without a validator nothing says that the
 * next body under this URI is the same.
 */

static ngx_int_t
ngx_http_classify_rewrite_cache_key(ngx_http_request_t *r, ngx_str_t *key)
{
    u_char           *p;
    size_t            len;
    ngx_table_elt_t  *etag;

    etag = r->headers_out.etag;

    if (etag == NULL && r->headers_out.last_modified_time == -1) {
        return NGX_DECLINED;
    }

    len = r->headers_in.server.len + 1 + r->unparsed_uri.len + 2
          + (etag ? etag->value.len : NGX_TIME_T_LEN);

    p = ngx_pnalloc(r->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    key->data = p;

    /* no Host (HTTP/1.0): no data either, which memcpy must not get */

    if (r->headers_in.server.len) {
        p = ngx_cpymem(p, r->headers_in.server.data,
                       r->headers_in.server.len);
    }

    *p++ = '\n';
    p = ngx_cpymem(p, r->unparsed_uri.data, r->unparsed_uri.len);
    *p++ = '\n';

    if (etag) {
        *p++ = 'E';
        p = ngx_cpymem(p, etag->value.data, etag->value.len);

    } else {
        p = ngx_sprintf(p, "L%T", r->headers_out.last_modified_time);
    }

    key->len = p - key->data;

    return NGX_OK;
}


/* W/"..." with the set's tag before the closing quote. */

static ngx_int_t
ngx_http_classify_rewrite_etag(ngx_http_request_t *r,
    ngx_http_classify_rwset_t *set)
{
    u_char           *p;
    size_t            tag;
    ngx_table_elt_t  *etag;

    ngx_http_weak_etag(r);

    etag = r->headers_out.etag;

    if (etag == NULL) {
        return NGX_OK;
    }

    if (etag->value.len < 4 || etag->value.data[etag->value.len - 1] != '"') {
        /* not an entity-tag (RFC 9110, 8.8.3): drop it */
        ngx_http_clear_etag(r);
        return NGX_OK;
    }

    tag = ngx_strlen(set->etag_tag);

    p = ngx_pnalloc(r->pool, etag->value.len + tag);
    if (p == NULL) {
        return NGX_ERROR;
    }

    etag->value.data = ngx_cpymem(p, etag->value.data, etag->value.len - 1);
    etag->value.data = ngx_cpymem(etag->value.data, set->etag_tag, tag);
    *etag->value.data++ = '"';

    etag->value.len = etag->value.data - p;
    etag->value.data = p;

    return NGX_OK;
}


static ngx_int_t
ngx_http_classify_rewrite_body_filter(ngx_http_request_t *r, ngx_chain_t *in)
{
    ngx_int_t                         rc;
    ngx_uint_t                        flush, last, pushed;
    ngx_chain_t                      *cl;
    ngx_http_classify_rewrite_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r, ngx_http_classify_rewrite_module);

    if (ctx == NULL || r != r->main) {
        return ngx_http_next_body_filter(r, in);
    }

    switch (ctx->outcome) {

    case NGX_HTTP_CLASSIFY_RW_REWRITING:
        break;

    case NGX_HTTP_CLASSIFY_RW_FAILED:
        /* the 500 page of a failure before the headers goes out */
        return r->filter_finalize ? ngx_http_next_body_filter(r, in)
                                  : NGX_ERROR;

    default:
        /* passed, skipped, or done: what is still downstream goes on */
        return ngx_http_next_body_filter(r, in);
    }

    if (in && ngx_chain_add_copy(r->pool, &ctx->in, in) != NGX_OK) {
        goto failed;
    }

    flush = 0;
    pushed = 0;

    for ( ;; ) {

        while (ctx->in && ngx_http_classify_rewrite_room(ctx)) {
            cl = ctx->in;
            ctx->in = cl->next;

            rc = ngx_http_classify_rewrite_feed(r, ctx, cl->buf, &flush);

            ngx_free_chain(r->pool, cl);

            if (rc != NGX_OK) {
                goto failed;
            }

            if (ctx->outcome != NGX_HTTP_CLASSIFY_RW_REWRITING) {
                break;
            }
        }

        last = (ctx->outcome == NGX_HTTP_CLASSIFY_RW_REWRITTEN);

        /* out of buffers: the current one goes too, to come back */

        if (ngx_http_classify_rewrite_mark(ctx, last, flush,
                                           ctx->in != NULL)
            != NGX_OK)
        {
            goto failed;
        }

        if (ctx->out == NULL) {

            /*
             * Nothing new to send. A call with no input is nginx asking
             * to push what is downstream (ngx_http_writer, and
             * proxy_buffering off on each write event), as held input
             * and busy buffers need too: kept here, the call would leave
             * what the write filter holds waiting for the upstream's next
             * bytes, and a paused upstream would stall the response. Not
             * twice with nothing busy: an empty push is an alert in the
             * write filter.
             */

            if (ctx->in == NULL && ctx->busy == NULL && (in || pushed)) {
                ngx_http_classify_rewrite_release(ctx);
                r->connection->buffered &= ~NGX_HTTP_CLASSIFY_RW_BUFFERED;
                return NGX_OK;
            }

            rc = ngx_http_next_body_filter(r, NULL);

        } else {
            rc = ngx_http_next_body_filter(r, ctx->out);
            ctx->unflushed = !(last || flush);
        }

        ngx_chain_update_chains(r->pool, &ctx->free, &ctx->busy, &ctx->out,
                                (ngx_buf_tag_t)
                                    &ngx_http_classify_rewrite_body_module);
        ctx->last_out = &ctx->out;
        flush = 0;
        pushed = 1;

        ngx_http_classify_rewrite_release(ctx);

        if (rc == NGX_ERROR) {
            /* the client is gone: not the rewriter's failure */
            r->connection->buffered &= ~NGX_HTTP_CLASSIFY_RW_BUFFERED;
            return NGX_ERROR;
        }

        if (last || ctx->in == NULL) {
            r->connection->buffered &= ~NGX_HTTP_CLASSIFY_RW_BUFFERED;
            return rc;
        }

        if (!ngx_http_classify_rewrite_room(ctx)) {
            ngx_log_debug2(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                           "classify_rewrite \"%V\": input held, "
                           "%ui buffers downstream", &ctx->set->name,
                           ctx->nbufs);

            r->connection->buffered |= NGX_HTTP_CLASSIFY_RW_BUFFERED;
            return NGX_AGAIN;
        }
    }

failed:

    ngx_http_classify_rewrite_done(ctx, NGX_HTTP_CLASSIFY_RW_FAILED);
    r->connection->buffered &= ~NGX_HTTP_CLASSIFY_RW_BUFFERED;

    return NGX_ERROR;
}


/* One input buffer through the rewriter; *flush set when it asks. */

static ngx_int_t
ngx_http_classify_rewrite_feed(ngx_http_request_t *r,
    ngx_http_classify_rewrite_ctx_t *ctx, ngx_buf_t *b, ngx_uint_t *flush)
{
    size_t              n;
    u_char             *p;
    clf_status          rc;
    clf_rewriter       *rw;
    clf_rewrite_stats   stats;

    rw = ctx->slot->rw;
    p = NULL;
    n = 0;

    if (ngx_buf_in_memory(b)) {
        p = b->pos;
        n = b->last - b->pos;

    } else if (ngx_buf_size(b) != 0) {
        /* the copy filter above reads files into memory for this filter */
        ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0,
                      "classify_rewrite \"%V\": a body buffer not in memory",
                      &ctx->set->name);
        return NGX_ERROR;
    }

    rc = CLF_OK;

    if (b->last_buf) {
        rc = clf_rewriter_feed_final(rw, ctx->set->rules->rwscratch,
                                     (const char *) p, n);

    } else if (n) {
        rc = clf_rewriter_feed(rw, ctx->set->rules->rwscratch,
                               (const char *) p, n);
    }

    if (b->flush) {
        *flush = 1;
    }

    if (rc != CLF_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "classify_rewrite \"%V\": %s: %s, the response is cut "
                      "short", &ctx->set->name, clf_strerror(rc),
                      ctx->nomem ? "no memory for an output buffer"
                                 : clf_rewriter_errmsg(rw));
        return NGX_ERROR;
    }

    /* the rewriter keeps what it holds back; the buffer goes back later */

    if (n && ngx_http_classify_rewrite_keep(ctx, b) != NGX_OK) {
        ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                      "classify_rewrite \"%V\": no memory, the response is "
                      "cut short", &ctx->set->name);
        return NGX_ERROR;
    }

    if (b->last_buf) {
        (void) clf_rewriter_stats(rw, &stats);
        ctx->replacements = stats.replacements;

        ngx_log_debug5(NGX_LOG_DEBUG_HTTP, r->connection->log, 0,
                       "classify_rewrite \"%V\": %uL bytes in, %uL out, "
                       "%uL replacements, %ui buffers",
                       &ctx->set->name, stats.bytes_in, stats.bytes_out,
                       stats.replacements, ctx->nbufs);

        ngx_http_classify_rewrite_done(ctx, NGX_HTTP_CLASSIFY_RW_REWRITTEN);
    }

    return NGX_OK;
}


/*
 * The rewriter's sink: appends to the current buffer, queueing it on
 * ctx->out when full. Returns non-zero (the body fails) only when no
 * buffer can be had.
 */

int
ngx_http_classify_rewrite_sink(void *ud, const char *p, size_t n)
{
    size_t                            k;
    ngx_buf_t                        *b;
    ngx_http_classify_rewrite_ctx_t  *ctx = ud;

    while (n) {

        if (ctx->cur == NULL || ctx->cur->buf->last == ctx->cur->buf->end) {

            if (ctx->cur) {
                ngx_http_classify_rewrite_queue(ctx, ctx->cur);
                ctx->cur = NULL;
            }

            if (ngx_http_classify_rewrite_get_buf(ctx) != NGX_OK) {
                ctx->nomem = 1;
                return 1;
            }
        }

        b = ctx->cur->buf;

        k = ngx_min(n, (size_t) (b->end - b->last));
        b->last = ngx_cpymem(b->last, p, k);

        p += k;
        n -= k;
    }

    return 0;
}


/*
 * Input is marked consumed only once the output passed downstream by the
 * end of its feed has been sent. Until then the buffer stays busy for
 * whoever gave it: a proxied upstream on a write event calls the filters
 * again only when buffers of its own wait (proxy_busy_buffers_size), the
 * copy filter when it has no free one; consumed at once, the rewritten
 * bytes would wait in the write filter, with a slow client, until the
 * upstream sends more, however long that takes. sub_filter gets the same
 * from output buffers that point into its input. It also bounds the
 * input in flight by the output in flight, as for the unfiltered body.
 */

static ngx_int_t
ngx_http_classify_rewrite_keep(ngx_http_classify_rewrite_ctx_t *ctx,
    ngx_buf_t *b)
{
    ngx_http_classify_rw_fed_t  *f;

    f = ctx->fed_free;

    if (f) {
        ctx->fed_free = f->next;

    } else {
        f = ngx_palloc(ctx->request->pool, sizeof(ngx_http_classify_rw_fed_t));
        if (f == NULL) {
            return NGX_ERROR;
        }
    }

    f->buf = b;
    f->upto = ctx->queued;
    f->next = NULL;

    *ctx->last_fed = f;
    ctx->last_fed = &f->next;

    return NGX_OK;
}


/* Marks consumed the input whose output is sent; all of it at the end. */

static void
ngx_http_classify_rewrite_release(ngx_http_classify_rewrite_ctx_t *ctx)
{
    off_t                        sent;
    ngx_buf_t                   *b;
    ngx_chain_t                 *cl;
    ngx_http_classify_rw_fed_t  *f;

    sent = ctx->queued;

    if (ctx->outcome == NGX_HTTP_CLASSIFY_RW_REWRITING) {
        for (cl = ctx->out; cl; cl = cl->next) {
            sent -= ngx_buf_size(cl->buf);
        }

        /* partly sent buffers count what is left of them */

        for (cl = ctx->busy; cl; cl = cl->next) {
            sent -= ngx_buf_size(cl->buf);
        }
    }

    while (ctx->fed && ctx->fed->upto <= sent) {
        f = ctx->fed;
        b = f->buf;

        b->pos = b->last;

        if (b->in_file) {
            b->file_pos = b->file_last;
        }

        ctx->fed = f->next;
        f->next = ctx->fed_free;
        ctx->fed_free = f;
    }

    if (ctx->fed == NULL) {
        ctx->last_fed = &ctx->fed;
    }
}


/* A full buffer, or the last, goes to `out`, to be passed downstream. */

static void
ngx_http_classify_rewrite_queue(ngx_http_classify_rewrite_ctx_t *ctx,
    ngx_chain_t *cl)
{
    ctx->queued += cl->buf->last - cl->buf->pos;

    *ctx->last_out = cl;
    ctx->last_out = &cl->next;
}


/*
 * A buffer for the sink: one sent and given back, or a new one. The sink
 * must take what the rewriter writes, so past classify_rewrite_buffers
 * this makes more, and the body filter stops feeding until enough are
 * back (ngx_http_classify_rewrite_room).
 */

static ngx_int_t
ngx_http_classify_rewrite_get_buf(ngx_http_classify_rewrite_ctx_t *ctx)
{
    ngx_buf_t           *b;
    ngx_chain_t         *cl;
    ngx_http_request_t  *r;

    if (ctx->free) {
        cl = ctx->free;
        ctx->free = cl->next;

        b = cl->buf;
        b->pos = b->start;
        b->last = b->start;
        b->flush = 0;
        b->last_buf = 0;

    } else {
        r = ctx->request;

        b = ngx_create_temp_buf(r->pool, ctx->bufs.size);
        if (b == NULL) {
            return NGX_ERROR;
        }

        cl = ngx_alloc_chain_link(r->pool);
        if (cl == NULL) {
            return NGX_ERROR;
        }

        /* recycled: the write filter sends it without waiting for more */

        b->tag = (ngx_buf_tag_t) &ngx_http_classify_rewrite_body_module;
        b->recycled = 1;
        cl->buf = b;
        ctx->nbufs++;
    }

    cl->next = NULL;
    ctx->cur = cl;

    return NGX_OK;
}


/*
 * Whether the next input buffer may be fed: a whole buffer is free or may
 * be made. (Room left in the current one does not count: a feed may write
 * more than that, and the limit would then never hold.)
 */

static ngx_uint_t
ngx_http_classify_rewrite_room(ngx_http_classify_rewrite_ctx_t *ctx)
{
    return ctx->free || ctx->nbufs < (ngx_uint_t) ctx->bufs.num;
}


/*
 * Before sending: the current buffer goes too when it is full, at a flush,
 * at the end and when input is held for want of buffers (it must come
 * back), and the last buffer sent carries last_buf or flush (a buffer of
 * no data when there is none to carry it and one is needed).
 */

static ngx_int_t
ngx_http_classify_rewrite_mark(ngx_http_classify_rewrite_ctx_t *ctx,
    ngx_uint_t last, ngx_uint_t flush, ngx_uint_t held)
{
    ngx_buf_t    *b;
    ngx_chain_t  *cl;

    cl = ctx->cur;

    if (cl && cl->buf->last != cl->buf->pos
        && (last || flush || held || cl->buf->last == cl->buf->end))
    {
        ngx_http_classify_rewrite_queue(ctx, cl);
        ctx->cur = NULL;
    }

    if (!last && !flush) {
        return NGX_OK;
    }

    if (ctx->out) {
        for (cl = ctx->out; cl->next; cl = cl->next) { /* void */ }

        cl->buf->last_buf = last;
        cl->buf->flush = !last;

        return NGX_OK;
    }

    if (!last && !ctx->unflushed) {
        /* everything sent was flushed: nothing to push */
        return NGX_OK;
    }

    b = ngx_calloc_buf(ctx->request->pool);
    if (b == NULL) {
        return NGX_ERROR;
    }

    cl = ngx_alloc_chain_link(ctx->request->pool);
    if (cl == NULL) {
        return NGX_ERROR;
    }

    b->last_buf = last;
    b->flush = !last;

    cl->buf = b;
    cl->next = NULL;
    *ctx->last_out = cl;
    ctx->last_out = &cl->next;

    return NGX_OK;
}


/* The body is over, one way or another: the rewriter goes back. */

static void
ngx_http_classify_rewrite_done(ngx_http_classify_rewrite_ctx_t *ctx,
    ngx_http_classify_rw_outcome_e outcome)
{
    ctx->outcome = outcome;

    /* no longer rewriting: every input buffer goes back */

    ngx_http_classify_rewrite_release(ctx);

    if (ctx->slot) {
        ngx_http_classify_rewriter_give_back(ctx->set, ctx->slot);
        ctx->slot = NULL;
    }
}


static void
ngx_http_classify_rewrite_cleanup(void *data)
{
    ngx_http_classify_rewrite_ctx_t  *ctx = data;

    if (ctx->slot) {
        ngx_http_classify_rewriter_give_back(ctx->set, ctx->slot);
        ctx->slot = NULL;
    }
}
