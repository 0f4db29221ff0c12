
/*
 * ngx_http_classify_state.c: the rules' state (count, score, mark:
 * docs/state.md) in an nginx shared-memory zone, so that every worker
 * counts into one store and the counts survive "nginx -s reload".
 *
 * The zone is nginx's own (ngx_shared_memory_add), so nginx maps it once
 * in the master before the workers fork, and hands it to the next cycle
 * on a reload when its name and size are unchanged. nginx 1.22 always
 * puts a slab pool at the start of a zone (there is no "noslab" flag yet),
 * so the store is one slab allocation of whole pages: the slab allocator
 * returns page-aligned memory for anything over half a page, which meets
 * the store's 64-byte rule, and the pool's own lock is taken only here,
 * once per new zone; the store then locks its buckets itself.
 *
 * A fresh zone: the master formats the store (clf_store_format, seed from
 * getrandom) and records where it is in a small header, the pool's
 * `data`. A reused zone: the old cycle's header is taken as it is, so the
 * entries stay. Each worker attaches (clf_store_attach: its own handle on
 * the shared region) in init_process and names the store on each of its
 * contexts; the handle is freed with the cycle's pool.
 */


#include "ngx_http_classify_module.h"


/* Where the store is in the zone: found again by the next cycle. */
typedef struct {
    void                         *mem;
    uint64_t                      bytes;
} ngx_http_classify_state_shm_t;


static ngx_int_t ngx_http_classify_state_init_zone(ngx_shm_zone_t *shm_zone,
    void *data);
static void ngx_http_classify_state_cleanup(void *data);


/*
 * The smallest zone: the store's minimum, and a few pages for the slab
 * pool (its header, its page table, the page of the store's header and
 * the alignment of the pages).
 */
#define NGX_HTTP_CLASSIFY_STATE_MIN_ZONE                                     \
    ((size_t) CLF_STORE_MIN_BYTES + 4 * ngx_pagesize)


char *
ngx_http_classify_state_zone(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_classify_main_conf_t *cmcf = conf;

    ssize_t              size;
    ngx_str_t           *value;
    ngx_pool_cleanup_t  *cln;

    if (cmcf->state_zone) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (value[1].len == 0) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_state_zone: the zone needs a name");
        return NGX_CONF_ERROR;
    }

    size = ngx_parse_size(&value[2]);

    if (size == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_state_zone \"%V\": invalid size \"%V\" "
                           "(bytes, or with k, m, g: \"64m\")",
                           &value[1], &value[2]);
        return NGX_CONF_ERROR;
    }

    if ((size_t) size < NGX_HTTP_CLASSIFY_STATE_MIN_ZONE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_state_zone \"%V\": size %V is too small: "
                           "at least %uzk (the store's %uLk and nginx's "
                           "slab pool)", &value[1], &value[2],
                           NGX_HTTP_CLASSIFY_STATE_MIN_ZONE / 1024,
                           (uint64_t) CLF_STORE_MIN_BYTES / 1024);
        return NGX_CONF_ERROR;
    }

    if ((uint64_t) size > (UINT64_C(1) << 40)) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_state_zone \"%V\": size %V is too large: "
                           "at most 1024g", &value[1], &value[2]);
        return NGX_CONF_ERROR;
    }

    cmcf->state_zone = ngx_shared_memory_add(cf, &value[1], size,
                                             &ngx_http_classify_module);
    if (cmcf->state_zone == NULL) {
        return NGX_CONF_ERROR;
    }

    if (cmcf->state_zone->data) {
        /* another directive of this configuration declared it */
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_state_zone \"%V\" is already declared",
                           &value[1]);
        return NGX_CONF_ERROR;
    }

    cmcf->state_zone->init = ngx_http_classify_state_init_zone;
    cmcf->state_zone->data = cmcf;

    /*
     * Added before any rules file's cleanup (those are added while
     * merging, after the http block is read), so that it runs after them:
     * the contexts borrow the store.
     */
    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        return NGX_CONF_ERROR;
    }

    cln->handler = ngx_http_classify_state_cleanup;
    cln->data = cmcf;

    return NGX_CONF_OK;
}


/*
 * In the master, for each cycle: `data` is the old cycle's header when
 * nginx reuses the zone (same name and size), NULL for a fresh one.
 */

static ngx_int_t
ngx_http_classify_state_init_zone(ngx_shm_zone_t *shm_zone, void *data)
{
    ngx_http_classify_state_shm_t *old = data;

    char                            err[CLF_ERRMSG_SIZE];
    size_t                          bytes;
    clf_status                      rc;
    ngx_slab_pool_t                *shpool;
    ngx_http_classify_state_shm_t  *h;

    shpool = (ngx_slab_pool_t *) shm_zone->shm.addr;

    if (old) {
        shm_zone->data = old;
        return NGX_OK;
    }

    h = ngx_slab_alloc(shpool, sizeof(ngx_http_classify_state_shm_t));
    if (h == NULL) {
        goto small;
    }

    /* every page left, in one allocation: page-aligned */
    bytes = shpool->pfree * ngx_pagesize;

    if (bytes < CLF_STORE_MIN_BYTES) {
        goto small;
    }

    h->mem = ngx_slab_alloc(shpool, bytes);
    if (h->mem == NULL) {
        goto small;
    }

    h->bytes = bytes;

    rc = clf_store_format(h->mem, h->bytes, NULL, err, sizeof(err));
    if (rc != CLF_OK) {
        ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                      "classify_state_zone \"%V\": %s",
                      &shm_zone->shm.name, err);
        return NGX_ERROR;
    }

    shpool->data = h;
    shm_zone->data = h;

    return NGX_OK;

small:

    ngx_log_error(NGX_LOG_EMERG, shm_zone->shm.log, 0,
                  "classify_state_zone \"%V\": zone of %uz bytes is too "
                  "small for a store of %uLk", &shm_zone->shm.name,
                  shm_zone->shm.size, (uint64_t) CLF_STORE_MIN_BYTES / 1024);
    return NGX_ERROR;
}


/*
 * In a worker: its handle on the zone's store, named on every context it
 * made. A worker that cannot attach (out of memory) runs without one: its
 * requests see the "absent" results of docs/state.md.
 */

void
ngx_http_classify_state_init_worker(ngx_cycle_t *cycle,
    ngx_http_classify_main_conf_t *cmcf)
{
    char                            err[CLF_ERRMSG_SIZE];
    ngx_uint_t                      i;
    ngx_http_classify_rules_t     **rulesp;
    ngx_http_classify_state_shm_t  *h;

    if (cmcf->state_zone == NULL) {
        return;
    }

    h = cmcf->state_zone->data;

    if (clf_store_attach(h->mem, h->bytes, &cmcf->store, err, sizeof(err))
        != CLF_OK)
    {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                      "classify_state_zone \"%V\": this worker cannot use "
                      "the store: %s", &cmcf->state_zone->shm.name, err);
        cmcf->store = NULL;
        return;
    }

    rulesp = cmcf->rules.elts;

    for (i = 0; i < cmcf->rules.nelts; i++) {
        if (rulesp[i]->ctx) {
            (void) clf_ctx_set_store(rulesp[i]->ctx, cmcf->store);
        }
    }
}


static void
ngx_http_classify_state_cleanup(void *data)
{
    ngx_http_classify_main_conf_t *cmcf = data;

    clf_store_free(cmcf->store);
    cmcf->store = NULL;
}
