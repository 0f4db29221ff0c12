
/*
 * ngx_http_classify_rewrite_module.c: the body rewriter's directives
 * (classify_rewrite, classify_rewrite_types, classify_rewrite_cache,
 * classify_rewrite_buffers), its configuration, its variables
 * ($classify_rewrite, $classify_rewrite_replacements) and the two filter
 * modules (docs/nginx.md). The filters are in
 * ngx_http_classify_rewrite_filter.c, each worker's rewriters in
 * ngx_http_classify_rewrite_worker.c.
 *
 * A location's set is looked up while the configuration is merged: this
 * module comes after ngx_http_classify_module in the shared object's
 * module list, so by then every server's rules file is loaded. The master
 * makes one rewriter (and one skip cache) of each set named and frees it,
 * so that "nginx -t" fails on a name the rules file lacks, with the
 * library's message listing its sets.
 */


#include "ngx_http_classify_module.h"


#define NGX_HTTP_CLASSIFY_RW_CACHE_DEFAULT   1024


static ngx_int_t ngx_http_classify_rewrite_add_variables(ngx_conf_t *cf);
static ngx_int_t ngx_http_classify_rewrite_init(ngx_conf_t *cf);
static ngx_int_t ngx_http_classify_rewrite_body_postconf(ngx_conf_t *cf);
static void *ngx_http_classify_rewrite_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_classify_rewrite_merge_loc_conf(ngx_conf_t *cf,
    void *parent, void *child);
static char *ngx_http_classify_rewrite(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_classify_rewrite_cache(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static ngx_http_classify_rwset_t *ngx_http_classify_rewrite_set(
    ngx_conf_t *cf, ngx_http_classify_rewrite_loc_conf_t *conf,
    ngx_http_classify_rules_t *rules);
static ngx_http_classify_rwcache_t *ngx_http_classify_rewrite_cache_get(
    ngx_conf_t *cf, ngx_http_classify_rewrite_loc_conf_t *conf,
    ngx_http_classify_rwset_t *set);
static int ngx_http_classify_rewrite_null_sink(void *ud, const char *p,
    size_t n);
static ngx_int_t ngx_http_classify_rewrite_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data);
static ngx_int_t ngx_http_classify_rewrite_replacements_variable(
    ngx_http_request_t *r, ngx_http_variable_value_t *v, uintptr_t data);


static ngx_command_t  ngx_http_classify_rewrite_commands[] = {

    { ngx_string("classify_rewrite"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_classify_rewrite,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify_rewrite_types"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_1MORE,
      ngx_http_types_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_classify_rewrite_loc_conf_t, types_keys),
      &ngx_http_html_default_types[0] },

    { ngx_string("classify_rewrite_cache"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_classify_rewrite_cache,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify_rewrite_buffers"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE2,
      ngx_conf_set_bufs_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_classify_rewrite_loc_conf_t, bufs),
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_classify_rewrite_module_ctx = {
    ngx_http_classify_rewrite_add_variables, /* preconfiguration */
    ngx_http_classify_rewrite_init,        /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_classify_rewrite_create_loc_conf, /* create location conf */
    ngx_http_classify_rewrite_merge_loc_conf   /* merge location conf */
};


ngx_module_t  ngx_http_classify_rewrite_module = {
    NGX_MODULE_V1,
    &ngx_http_classify_rewrite_module_ctx, /* module context */
    ngx_http_classify_rewrite_commands,    /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process (rules.c) */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


/* The body filter's module: no directives, only its place in the list. */

static ngx_http_module_t  ngx_http_classify_rewrite_body_module_ctx = {
    NULL,                                  /* preconfiguration */
    ngx_http_classify_rewrite_body_postconf, /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    NULL,                                  /* create location configuration */
    NULL                                   /* merge location configuration */
};


ngx_module_t  ngx_http_classify_rewrite_body_module = {
    NGX_MODULE_V1,
    &ngx_http_classify_rewrite_body_module_ctx, /* module context */
    NULL,                                  /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_http_variable_t  ngx_http_classify_rewrite_vars[] = {

    { ngx_string("classify_rewrite"), NULL,
      ngx_http_classify_rewrite_variable, 0, NGX_HTTP_VAR_NOCACHEABLE, 0 },

    { ngx_string("classify_rewrite_replacements"), NULL,
      ngx_http_classify_rewrite_replacements_variable, 0,
      NGX_HTTP_VAR_NOCACHEABLE, 0 },

      ngx_http_null_variable
};


static ngx_str_t  ngx_http_classify_rw_outcomes[] = {
    ngx_null_string,
    ngx_string("passed"),
    ngx_string("rewriting"),
    ngx_string("rewritten"),
    ngx_string("skipped"),
    ngx_string("failed")
};


static ngx_int_t
ngx_http_classify_rewrite_init(ngx_conf_t *cf)
{
    return ngx_http_classify_rewrite_header_init(cf);
}


static ngx_int_t
ngx_http_classify_rewrite_body_postconf(ngx_conf_t *cf)
{
    return ngx_http_classify_rewrite_body_init(cf);
}


static void *
ngx_http_classify_rewrite_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_classify_rewrite_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_rewrite_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     conf->name = { 0, NULL };
     *     conf->types = { NULL };
     *     conf->types_keys = NULL;
     *     conf->bufs.num = 0;
     *     conf->set = NULL;
     *     conf->rwcache = NULL;
     */

    conf->cache = NGX_CONF_UNSET;

    return conf;
}


static char *
ngx_http_classify_rewrite_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child)
{
    ngx_http_classify_rewrite_loc_conf_t *prev = parent;
    ngx_http_classify_rewrite_loc_conf_t *conf = child;

    ngx_http_core_srv_conf_t      *core;
    ngx_http_classify_srv_conf_t  *cscf;

    if (conf->name.data == NULL) {
        conf->name = prev->name;
        conf->pos = prev->pos;
    }

    ngx_conf_merge_value(conf->cache, prev->cache,
                         NGX_HTTP_CLASSIFY_RW_CACHE_DEFAULT);
    ngx_conf_merge_bufs_value(conf->bufs, prev->bufs, 16, 8192);

    if (ngx_http_merge_types(cf, &conf->types_keys, &conf->types,
                             &prev->types_keys, &prev->types,
                             ngx_http_html_default_types)
        != NGX_OK)
    {
        return NGX_CONF_ERROR;
    }

    if (conf->name.len == 0) {
        return NGX_CONF_OK;
    }

    /* ngx_http_classify_module's servers are merged: rules are loaded */

    cscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_classify_module);

    if (cscf->rules == NULL) {
        core = ngx_http_conf_get_module_srv_conf(cf, ngx_http_core_module);
        ngx_http_classify_pos_error(cf, &conf->pos, 0,
                                    "classify_rewrite \"%V\" in a server "
                                    "without \"classify_rules\" (the server "
                                    "in %s:%ui)", &conf->name,
                                    core->file_name, core->line);
        return NGX_CONF_ERROR;
    }

    conf->set = ngx_http_classify_rewrite_set(cf, conf, cscf->rules);
    if (conf->set == NULL) {
        return NGX_CONF_ERROR;
    }

    if (conf->cache) {
        conf->rwcache = ngx_http_classify_rewrite_cache_get(cf, conf,
                                                            conf->set);
        if (conf->rwcache == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    return NGX_CONF_OK;
}


/*
 * The set of `rules` that conf names: one already in use, or a new one,
 * checked by making a rewriter of it. NULL after logging an error.
 */

static ngx_http_classify_rwset_t *
ngx_http_classify_rewrite_set(ngx_conf_t *cf,
    ngx_http_classify_rewrite_loc_conf_t *conf,
    ngx_http_classify_rules_t *rules)
{
    char                        err[CLF_ERRMSG_SIZE];
    uint32_t                    crc;
    const char                 *version;
    clf_rewriter               *rw;
    ngx_http_classify_rwset_t  *set;

    for (set = rules->rwsets; set; set = set->next) {
        if (set->name.len == conf->name.len
            && ngx_strncmp(set->name.data, conf->name.data, conf->name.len)
               == 0)
        {
            return set;
        }
    }

    if (clf_rewriter_new(rules->program, (const char *) conf->name.data,
                         conf->name.len, ngx_http_classify_rewrite_null_sink,
                         NULL, &rw, err, sizeof(err))
        != CLF_OK)
    {
        ngx_http_classify_pos_error(cf, &conf->pos, 0,
                                    "classify_rewrite \"%V\": %s (rules "
                                    "\"%V\")", &conf->name, err,
                                    &rules->path);
        return NULL;
    }

    clf_rewriter_free(rw);

    set = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_rwset_t));
    if (set == NULL) {
        return NULL;
    }

    set->name = conf->name;
    set->rules = rules;

    /*
     * What a rewritten body depends on besides the original: the rules
     * file, the set, the library. A rules change changes the ETag, so a
     * client's copy made with other rules never revalidates (304).
     */

    version = clf_version_string();

    ngx_crc32_init(crc);
    ngx_crc32_update(&crc, (u_char *) &rules->crc32, sizeof(uint32_t));
    ngx_crc32_update(&crc, conf->name.data, conf->name.len);
    ngx_crc32_update(&crc, (u_char *) version, ngx_strlen(version));
    ngx_crc32_final(crc);

    ngx_sprintf(set->etag_tag, "-rw%08xD", crc);

    set->next = rules->rwsets;
    rules->rwsets = set;

    return set;
}


/*
 * The skip cache of `set` with conf's capacity; the master makes one and
 * frees it, so that a capacity the library refuses (a table over 1 GiB)
 * fails the configuration.
 */

static ngx_http_classify_rwcache_t *
ngx_http_classify_rewrite_cache_get(ngx_conf_t *cf,
    ngx_http_classify_rewrite_loc_conf_t *conf,
    ngx_http_classify_rwset_t *set)
{
    char                          err[CLF_ERRMSG_SIZE];
    clf_rewrite_cache            *c;
    ngx_http_classify_rules_t    *rules;
    ngx_http_classify_rwcache_t  *rc;

    rules = set->rules;

    for (rc = rules->rwcaches; rc; rc = rc->next) {
        if (rc->set == set && rc->capacity == (uint32_t) conf->cache) {
            return rc;
        }
    }

    if (clf_rewrite_cache_new(rules->program, (const char *) set->name.data,
                              set->name.len, (uint32_t) conf->cache, &c, err,
                              sizeof(err))
        != CLF_OK)
    {
        ngx_http_classify_pos_error(cf, &conf->pos, 0,
                                    "classify_rewrite \"%V\" with "
                                    "classify_rewrite_cache %i: %s",
                                    &set->name, conf->cache, err);
        return NULL;
    }

    clf_rewrite_cache_free(c);

    rc = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_rwcache_t));
    if (rc == NULL) {
        return NULL;
    }

    rc->set = set;
    rc->capacity = (uint32_t) conf->cache;
    rc->next = rules->rwcaches;
    rules->rwcaches = rc;

    return rc;
}


static int
ngx_http_classify_rewrite_null_sink(void *ud, const char *p, size_t n)
{
    return 0;
}


static char *
ngx_http_classify_rewrite(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_classify_rewrite_loc_conf_t *rlcf = conf;

    ngx_str_t  *value;

    if (rlcf->name.data) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (value[1].len == 0) {
        return "takes a rewrite set's name or \"off\"";
    }

    if (ngx_strcmp(value[1].data, "off") == 0) {
        ngx_str_set(&rlcf->name, "");

    } else {
        rlcf->name = value[1];
    }

    rlcf->pos.file = cf->conf_file->file.name;
    rlcf->pos.line = cf->conf_file->line;

    return NGX_CONF_OK;
}


static char *
ngx_http_classify_rewrite_cache(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_classify_rewrite_loc_conf_t *rlcf = conf;

    ngx_int_t   n;
    ngx_str_t  *value;

    if (rlcf->cache != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    value = cf->args->elts;

    if (ngx_strcmp(value[1].data, "off") == 0) {
        rlcf->cache = 0;
        return NGX_CONF_OK;
    }

    n = ngx_atoi(value[1].data, value[1].len);

    if (n <= 0 || n > (ngx_int_t) NGX_MAX_UINT32_VALUE) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_rewrite_cache \"%V\": must be \"off\" or "
                           "a number of keys from 1 to 4294967295",
                           &value[1]);
        return NGX_CONF_ERROR;
    }

    rlcf->cache = n;

    return NGX_CONF_OK;
}


static ngx_int_t
ngx_http_classify_rewrite_add_variables(ngx_conf_t *cf)
{
    return ngx_http_classify_register_variables(cf,
                                                ngx_http_classify_rewrite_vars);
}


/* The main request's: a subrequest's body is never rewritten. */

static ngx_http_classify_rewrite_ctx_t *
ngx_http_classify_rewrite_result(ngx_http_request_t *r)
{
    ngx_http_classify_rewrite_ctx_t  *ctx;

    ctx = ngx_http_get_module_ctx(r->main, ngx_http_classify_rewrite_module);

    if (ctx == NULL || ctx->outcome == 0) {
        return NULL;
    }

    return ctx;
}


static ngx_int_t
ngx_http_classify_rewrite_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    ngx_http_classify_rewrite_ctx_t  *ctx;

    ctx = ngx_http_classify_rewrite_result(r);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    v->len = ngx_http_classify_rw_outcomes[ctx->outcome].len;
    v->data = ngx_http_classify_rw_outcomes[ctx->outcome].data;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}


static ngx_int_t
ngx_http_classify_rewrite_replacements_variable(ngx_http_request_t *r,
    ngx_http_variable_value_t *v, uintptr_t data)
{
    u_char                           *p;
    ngx_http_classify_rewrite_ctx_t  *ctx;

    ctx = ngx_http_classify_rewrite_result(r);

    if (ctx == NULL) {
        v->not_found = 1;
        return NGX_OK;
    }

    p = ngx_pnalloc(r->pool, NGX_INT64_LEN);
    if (p == NULL) {
        return NGX_ERROR;
    }

    v->len = ngx_sprintf(p, "%uL", ctx->replacements) - p;
    v->data = p;
    v->valid = 1;
    v->no_cacheable = 1;
    v->not_found = 0;

    return NGX_OK;
}
