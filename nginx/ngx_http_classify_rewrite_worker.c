
/*
 * ngx_http_classify_rewrite_worker.c: what each worker makes for the body
 * rewriter, and when it frees it.
 *
 *   - one rewrite scratch per rules file with a set in use (Hyperscan
 *     scratch and the engine's working memory, about 2.3 MB; a worker is
 *     one thread, so one serves every set of the file), in init_process;
 *   - one skip cache per set and configured capacity, in init_process;
 *   - rewriters on demand: a response takes one from its set's free list,
 *     or makes one when the list is empty, and gives it back when its body
 *     ends (or its request does); so a worker holds as many as it ever
 *     had responses in flight at once, and a response never allocates a
 *     rewriter when one is free.
 *
 * All of it lives until the cycle's pool is destroyed: at worker exit,
 * and for the workers of an old configuration after a reload, when they
 * exit (ngx_http_classify_rules_cleanup calls
 * ngx_http_classify_rewrite_free_worker before the program is freed). A
 * worker that cannot make its scratch logs an alert and answers 500 to
 * the responses it would rewrite; one that cannot make a cache rewrites
 * without it.
 */


#include "ngx_http_classify_module.h"


/* In init_process, for each rules file (ngx_http_classify_init_process). */

void
ngx_http_classify_rewrite_init_worker(ngx_cycle_t *cycle,
    ngx_http_classify_rules_t *rules)
{
    char                          err[CLF_ERRMSG_SIZE];
    ngx_http_classify_rwcache_t  *rc;

    if (rules->rwsets == NULL) {
        return;
    }

    if (clf_rewrite_scratch_new(rules->program, &rules->rwscratch, err,
                                sizeof(err))
        != CLF_OK)
    {
        ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                      "classify_rewrite: no rewrite scratch for \"%V\" in "
                      "this worker: %s", &rules->path, err);
        rules->rwscratch = NULL;
    }

    for (rc = rules->rwcaches; rc; rc = rc->next) {
        if (clf_rewrite_cache_new(rules->program,
                                  (const char *) rc->set->name.data,
                                  rc->set->name.len, rc->capacity, &rc->cache,
                                  err, sizeof(err))
            != CLF_OK)
        {
            ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                          "classify_rewrite \"%V\": no skip cache in this "
                          "worker: %s", &rc->set->name, err);
            rc->cache = NULL;
        }
    }
}


/*
 * A rewriter of `set` writing to sink(ud, ...): a free one, reset, or a
 * new one. NULL after logging an error.
 */

ngx_http_classify_rwslot_t *
ngx_http_classify_rewriter_take(ngx_http_classify_rwset_t *set,
    clf_sink_fn sink, void *ud, ngx_log_t *log)
{
    char                         err[CLF_ERRMSG_SIZE];
    ngx_http_classify_rwslot_t  *slot;

    slot = set->free;

    if (slot) {
        set->free = slot->next_free;
        slot->next_free = NULL;

        /* never fails for a rewriter */
        (void) clf_rewriter_reset(slot->rw, sink, ud);

        return slot;
    }

    slot = ngx_alloc(sizeof(ngx_http_classify_rwslot_t), log);
    if (slot == NULL) {
        return NULL;
    }

    if (clf_rewriter_new(set->rules->program, (const char *) set->name.data,
                         set->name.len, sink, ud, &slot->rw, err, sizeof(err))
        != CLF_OK)
    {
        ngx_log_error(NGX_LOG_ERR, log, 0,
                      "classify_rewrite \"%V\": no rewriter: %s",
                      &set->name, err);
        ngx_free(slot);
        return NULL;
    }

    slot->next_free = NULL;
    slot->next = set->all;
    set->all = slot;
    set->nall++;

    ngx_log_debug2(NGX_LOG_DEBUG_HTTP, log, 0,
                   "classify_rewrite \"%V\": %ui rewriters", &set->name,
                   set->nall);

    return slot;
}


void
ngx_http_classify_rewriter_give_back(ngx_http_classify_rwset_t *set,
    ngx_http_classify_rwslot_t *slot)
{
    slot->next_free = set->free;
    set->free = slot;
}


void
ngx_http_classify_rewrite_free_worker(ngx_http_classify_rules_t *rules)
{
    ngx_http_classify_rwset_t    *set;
    ngx_http_classify_rwslot_t   *slot, *next;
    ngx_http_classify_rwcache_t  *rc;

    for (set = rules->rwsets; set; set = set->next) {
        for (slot = set->all; slot; slot = next) {
            next = slot->next;
            clf_rewriter_free(slot->rw);
            ngx_free(slot);
        }

        set->all = NULL;
        set->free = NULL;
        set->nall = 0;
    }

    for (rc = rules->rwcaches; rc; rc = rc->next) {
        clf_rewrite_cache_free(rc->cache);
        rc->cache = NULL;
    }

    clf_rewrite_scratch_free(rules->rwscratch);
    rules->rwscratch = NULL;
}
