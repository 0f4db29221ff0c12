
/*
 * ngx_http_classify_module.h: the types the module's files share.
 *
 *   ngx_http_classify_module.c   directives, configuration, registering the
 *                                phase handlers
 *   ngx_http_classify_rules.c    rules files: loading, per-worker contexts
 *   ngx_http_classify_state.c    the rules' state in a shared-memory zone
 *   ngx_http_classify_request.c  classifying a request, enforcing the
 *                                verdict, $classify_verdict/$classify_reason
 *   ngx_http_classify_rewrite_module.c
 *                                the body rewriter's directives,
 *                                configuration and variables
 *   ngx_http_classify_rewrite_worker.c
 *                                each worker's rewriters, scratch and
 *                                skip caches
 *   ngx_http_classify_rewrite_filter.c
 *                                the header and body filters
 *
 * The shared object holds three nginx modules: ngx_http_classify_module
 * (classification), ngx_http_classify_rewrite_module (the rewriter's
 * directives and its header filter) and
 * ngx_http_classify_rewrite_body_module (its body filter, alone so that
 * nginx puts it just below the copy filter, where bodies are in memory:
 * nginx/config, docs/nginx.md "Where the filter runs").
 *
 * Lifetimes. A rules file is loaded and verified by the master while it
 * reads the configuration (so "nginx -t" and "nginx -s reload" check it),
 * into a program that lives in the cycle's pool; workers inherit it with
 * fork() and each makes its own classification context, rewrite scratch
 * and skip caches in init_process, and its rewriters on demand. A reload
 * builds a new cycle with new programs; the old workers keep the old
 * cycle, its programs and their rewriters, until they exit, so a response
 * in flight is finished with the rules it started with. Everything a
 * worker made is freed with the cycle's pool (ngx_http_classify_rules_cleanup).
 * Per request, the module allocates from the request pool only: one
 * ngx_http_classify_ctx_t, and for a response it rewrites one
 * ngx_http_classify_rewrite_ctx_t and its output buffers.
 */

#ifndef _NGX_HTTP_CLASSIFY_MODULE_H_INCLUDED_
#define _NGX_HTTP_CLASSIFY_MODULE_H_INCLUDED_


#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>

#include <classify.h>


/* Where a directive was written, for errors found after parsing. */
typedef struct {
    ngx_str_t                     file;
    ngx_uint_t                    line;
} ngx_http_classify_pos_t;


/*
 * One loaded rules file. Servers that name the same file with the same
 * trusted proxies share it; the trusted proxies are part of the program
 * (clf_options_set_trusted_proxies), so other proxies mean another load.
 */
typedef struct ngx_http_classify_rwset_s    ngx_http_classify_rwset_t;
typedef struct ngx_http_classify_rwcache_s  ngx_http_classify_rwcache_t;

typedef struct {
    ngx_str_t                     path;      /* absolute, NUL-terminated */
    ngx_str_t                     trusted;   /* "a,b,c" or "" */
    uint32_t                      crc32;     /* of the file's bytes */
    clf_program                  *program;
    clf_ctx                      *ctx;       /* this worker's (init_process);
                                                NULL in the master */
    ngx_http_classify_rwset_t    *rwsets;    /* the sets some location
                                                rewrites with */
    ngx_http_classify_rwcache_t  *rwcaches;  /* their skip caches */
    clf_rewrite_scratch          *rwscratch; /* this worker's, when rwsets */
} ngx_http_classify_rules_t;


typedef struct {
    ngx_array_t                   rules;     /* ngx_http_classify_rules_t * */
    ngx_array_t                   named;     /* ngx_http_classify_named_t */
    ngx_shm_zone_t               *state_zone; /* classify_state_zone */
    clf_store                    *store;     /* this worker's handle on it
                                                (init_process) */
} ngx_http_classify_main_conf_t;


/* A classify_reject_location to look up once every location is known. */
typedef struct {
    ngx_http_core_srv_conf_t     *server;
    ngx_str_t                     name;
    ngx_http_classify_pos_t       pos;
} ngx_http_classify_named_t;


typedef struct {
    ngx_str_t                     rules_path;   /* classify_rules */
    ngx_http_classify_pos_t       rules_pos;
    ngx_array_t                  *trusted;      /* ngx_str_t */
    ngx_http_classify_rules_t    *rules;        /* after merging */
} ngx_http_classify_srv_conf_t;


typedef struct {
    ngx_flag_t                    enable;
    ngx_str_t                     filter_name;  /* "" (unset): main */
    ngx_http_classify_pos_t       filter_pos;
    uint32_t                      filter;       /* after merging */
    ngx_int_t                     reject_status;
    ngx_str_t                     reject_location;
    ngx_http_classify_pos_t       reject_pos;
} ngx_http_classify_loc_conf_t;


/*
 * Per main request, from the request pool. It survives internal redirects
 * (which clear module contexts) through a pool cleanup entry, so that a
 * request is classified once and its verdict enforced once.
 */
typedef struct {
    ngx_str_t                     uri;        /* r->uri and r->args before */
    ngx_str_t                     args;       /* any rewrite (post-read) */
    ngx_str_t                     reason;     /* owned by the program */
    ngx_uint_t                    verdict;    /* CLF_ACCEPT, CLF_REJECT */
    unsigned                      classified:1;
    unsigned                      enforced:1;
} ngx_http_classify_ctx_t;


/*
 * The body rewriter. A rewrite set of one rules file, as locations name
 * it (classify_rewrite), with this worker's rewriters: one per response
 * in flight, kept on a free list for the next response once its body is
 * done (clf_rewriter_reset), made only when the list is empty.
 */

typedef struct ngx_http_classify_rwslot_s   ngx_http_classify_rwslot_t;

struct ngx_http_classify_rwslot_s {
    clf_rewriter                 *rw;
    ngx_http_classify_rwslot_t   *next_free;
    ngx_http_classify_rwslot_t   *next;       /* every slot of the set */
};

struct ngx_http_classify_rwset_s {
    ngx_str_t                     name;
    ngx_http_classify_rules_t    *rules;
    u_char                        etag_tag[12]; /* "-rw" and 8 hex digits:
                                                   rules file, set, library */
    ngx_http_classify_rwset_t    *next;       /* of the same rules file */

    /* this worker's */
    ngx_http_classify_rwslot_t   *free;
    ngx_http_classify_rwslot_t   *all;
    ngx_uint_t                    nall;
};

/* A skip cache of a set: one per worker for each capacity configured. */
struct ngx_http_classify_rwcache_s {
    ngx_http_classify_rwset_t    *set;
    uint32_t                      capacity;
    clf_rewrite_cache            *cache;      /* this worker's; NULL when it
                                                 could not be made */
    ngx_http_classify_rwcache_t  *next;       /* of the same rules file */
};


typedef struct {
    ngx_str_t                     name;       /* classify_rewrite; NULL data:
                                                 unset, "" : off */
    ngx_http_classify_pos_t       pos;
    ngx_hash_t                    types;
    ngx_array_t                  *types_keys;
    ngx_int_t                     cache;      /* capacity, 0: off */
    ngx_bufs_t                    bufs;
    ngx_http_classify_rwset_t    *set;        /* after merging; NULL: off */
    ngx_http_classify_rwcache_t  *rwcache;    /* after merging; NULL: none */
} ngx_http_classify_rewrite_loc_conf_t;


/* What happened to a response's body ($classify_rewrite). */
typedef enum {
    NGX_HTTP_CLASSIFY_RW_PASSED = 1,
    NGX_HTTP_CLASSIFY_RW_REWRITING,
    NGX_HTTP_CLASSIFY_RW_REWRITTEN,
    NGX_HTTP_CLASSIFY_RW_SKIPPED,
    NGX_HTTP_CLASSIFY_RW_FAILED
} ngx_http_classify_rw_outcome_e;


/*
 * An input buffer fed to the rewriter, not yet marked consumed: that
 * waits until the output passed downstream by the end of its feed has
 * been sent (ngx_http_classify_rewrite_filter.c says why).
 */
typedef struct ngx_http_classify_rw_fed_s  ngx_http_classify_rw_fed_t;

struct ngx_http_classify_rw_fed_s {
    ngx_buf_t                    *buf;
    off_t                         upto;       /* ctx->queued after its feed */
    ngx_http_classify_rw_fed_t   *next;
};


/*
 * Per response rewritten, from the request pool (main requests only).
 * The rewriter's sink fills `cur`; full buffers go to `out`, which is
 * passed downstream; buffers the next filters have sent come back to
 * `free` (ngx_chain_update_chains), so a body of any size needs at most
 * classify_rewrite_buffers of them, plus what one input buffer expands to.
 */
typedef struct {
    ngx_http_request_t           *request;
    ngx_http_classify_rwset_t    *set;
    ngx_http_classify_rwslot_t   *slot;       /* NULL once given back */
    ngx_bufs_t                    bufs;
    ngx_chain_t                  *in;         /* input not fed yet */
    ngx_http_classify_rw_fed_t   *fed;        /* fed, not yet consumed */
    ngx_http_classify_rw_fed_t  **last_fed;
    ngx_http_classify_rw_fed_t   *fed_free;
    off_t                         queued;     /* output bytes put in `out` */
    ngx_chain_t                  *cur;        /* the buffer being filled */
    ngx_chain_t                  *out;
    ngx_chain_t                 **last_out;
    ngx_chain_t                  *busy;
    ngx_chain_t                  *free;
    ngx_uint_t                    nbufs;      /* output buffers made */
    uint64_t                      replacements;
    ngx_http_classify_rw_outcome_e  outcome;
    unsigned                      nomem:1;    /* the sink had no buffer */
    unsigned                      unflushed:1;
} ngx_http_classify_rewrite_ctx_t;


extern ngx_module_t  ngx_http_classify_module;
extern ngx_module_t  ngx_http_classify_rewrite_module;
extern ngx_module_t  ngx_http_classify_rewrite_body_module;


/* ngx_http_classify_rules.c */

ngx_http_classify_rules_t *ngx_http_classify_rules_get(ngx_conf_t *cf,
    ngx_str_t *path, ngx_str_t *trusted, ngx_http_classify_pos_t *pos);
char *ngx_http_classify_check_trusted(ngx_conf_t *cf, ngx_str_t *value);
ngx_int_t ngx_http_classify_init_process(ngx_cycle_t *cycle);
void ngx_http_classify_pos_error(ngx_conf_t *cf,
    ngx_http_classify_pos_t *pos, ngx_err_t err, const char *fmt, ...);

/* ngx_http_classify_state.c */

char *ngx_http_classify_state_zone(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
void ngx_http_classify_state_init_worker(ngx_cycle_t *cycle,
    ngx_http_classify_main_conf_t *cmcf);

/* ngx_http_classify_request.c */

ngx_int_t ngx_http_classify_post_read_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_classify_rewrite_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_classify_add_variables(ngx_conf_t *cf);
ngx_int_t ngx_http_classify_register_variables(ngx_conf_t *cf,
    ngx_http_variable_t *vars);

/* ngx_http_classify_rewrite_worker.c */

void ngx_http_classify_rewrite_init_worker(ngx_cycle_t *cycle,
    ngx_http_classify_rules_t *rules);
ngx_http_classify_rwslot_t *ngx_http_classify_rewriter_take(
    ngx_http_classify_rwset_t *set, clf_sink_fn sink, void *ud,
    ngx_log_t *log);
void ngx_http_classify_rewriter_give_back(ngx_http_classify_rwset_t *set,
    ngx_http_classify_rwslot_t *slot);
void ngx_http_classify_rewrite_free_worker(ngx_http_classify_rules_t *rules);

/* ngx_http_classify_rewrite_filter.c */

ngx_int_t ngx_http_classify_rewrite_header_init(ngx_conf_t *cf);
ngx_int_t ngx_http_classify_rewrite_body_init(ngx_conf_t *cf);
int ngx_http_classify_rewrite_sink(void *ud, const char *p, size_t n);


#endif /* _NGX_HTTP_CLASSIFY_MODULE_H_INCLUDED_ */
