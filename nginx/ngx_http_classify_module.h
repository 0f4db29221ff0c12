
/*
 * ngx_http_classify_module.h: the types the module's files share.
 *
 *   ngx_http_classify_module.c   directives, configuration, registering the
 *                                phase handlers
 *   ngx_http_classify_rules.c    rules files: loading, per-worker contexts
 *   ngx_http_classify_request.c  classifying a request, enforcing the
 *                                verdict, $classify_verdict/$classify_reason
 *
 * Lifetimes. A rules file is loaded and verified by the master while it
 * reads the configuration (so "nginx -t" and "nginx -s reload" check it),
 * into a program that lives in the cycle's pool; workers inherit it with
 * fork() and each makes its own classification context in init_process.
 * A reload builds a new cycle with new programs; the old workers keep the
 * old cycle, and its programs, until they exit. Per request, the module
 * allocates one ngx_http_classify_ctx_t from the request pool; libclassify
 * allocates nothing.
 *
 * The body filter (the streaming rewrite engine) will add, per worker, its
 * rewriters beside the context in ngx_http_classify_rules_t, per request
 * its stream state in ngx_http_classify_ctx_t, and a header filter that
 * decides from the response's status, type and encoding whether the body
 * may change.
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
typedef struct {
    ngx_str_t                     path;      /* absolute, NUL-terminated */
    ngx_str_t                     trusted;   /* "a,b,c" or "" */
    clf_program                  *program;
    clf_ctx                      *ctx;       /* this worker's (init_process);
                                                NULL in the master */
} ngx_http_classify_rules_t;


typedef struct {
    ngx_array_t                   rules;     /* ngx_http_classify_rules_t * */
    ngx_array_t                   named;     /* ngx_http_classify_named_t */
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


extern ngx_module_t  ngx_http_classify_module;


/* ngx_http_classify_rules.c */

ngx_http_classify_rules_t *ngx_http_classify_rules_get(ngx_conf_t *cf,
    ngx_str_t *path, ngx_str_t *trusted, ngx_http_classify_pos_t *pos);
char *ngx_http_classify_check_trusted(ngx_conf_t *cf, ngx_str_t *value);
ngx_int_t ngx_http_classify_init_process(ngx_cycle_t *cycle);
void ngx_http_classify_pos_error(ngx_conf_t *cf,
    ngx_http_classify_pos_t *pos, ngx_err_t err, const char *fmt, ...);

/* ngx_http_classify_request.c */

ngx_int_t ngx_http_classify_post_read_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_classify_rewrite_handler(ngx_http_request_t *r);
ngx_int_t ngx_http_classify_add_variables(ngx_conf_t *cf);


#endif /* _NGX_HTTP_CLASSIFY_MODULE_H_INCLUDED_ */
