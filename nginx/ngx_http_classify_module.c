
/*
 * ngx_http_classify_module.c: classify HTTP requests with a compiled
 * libclassify rules file (docs/nginx.md). This file holds the directives
 * and the configuration; rules files are loaded in
 * ngx_http_classify_rules.c, requests judged in
 * ngx_http_classify_request.c.
 */


#include "ngx_http_classify_module.h"


static void *ngx_http_classify_create_main_conf(ngx_conf_t *cf);
static void *ngx_http_classify_create_srv_conf(ngx_conf_t *cf);
static char *ngx_http_classify_merge_srv_conf(ngx_conf_t *cf, void *parent,
    void *child);
static void *ngx_http_classify_create_loc_conf(ngx_conf_t *cf);
static char *ngx_http_classify_merge_loc_conf(ngx_conf_t *cf, void *parent,
    void *child);
static ngx_int_t ngx_http_classify_init(ngx_conf_t *cf);

static char *ngx_http_classify_rules(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_classify_trusted_proxies(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_classify_filter(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf);
static char *ngx_http_classify_reject_status(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);
static char *ngx_http_classify_reject_location(ngx_conf_t *cf,
    ngx_command_t *cmd, void *conf);

static void ngx_http_classify_set_pos(ngx_conf_t *cf,
    ngx_http_classify_pos_t *pos);
static ngx_int_t ngx_http_classify_join(ngx_conf_t *cf, ngx_array_t *list,
    ngx_str_t *out);
static ngx_int_t ngx_http_classify_find_named(ngx_http_classify_named_t *n);


static ngx_command_t  ngx_http_classify_commands[] = {

    { ngx_string("classify_rules"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_TAKE1,
      ngx_http_classify_rules,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify_trusted_proxies"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_CONF_1MORE,
      ngx_http_classify_trusted_proxies,
      NGX_HTTP_SRV_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify_state_zone"),
      NGX_HTTP_MAIN_CONF|NGX_CONF_TAKE2,
      ngx_http_classify_state_zone,
      NGX_HTTP_MAIN_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_FLAG,
      ngx_conf_set_flag_slot,
      NGX_HTTP_LOC_CONF_OFFSET,
      offsetof(ngx_http_classify_loc_conf_t, enable),
      NULL },

    { ngx_string("classify_filter"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_classify_filter,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify_reject_status"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_classify_reject_status,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

    { ngx_string("classify_reject_location"),
      NGX_HTTP_MAIN_CONF|NGX_HTTP_SRV_CONF|NGX_HTTP_LOC_CONF|NGX_CONF_TAKE1,
      ngx_http_classify_reject_location,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_classify_module_ctx = {
    ngx_http_classify_add_variables,       /* preconfiguration */
    ngx_http_classify_init,                /* postconfiguration */

    ngx_http_classify_create_main_conf,    /* create main configuration */
    NULL,                                  /* init main configuration */

    ngx_http_classify_create_srv_conf,     /* create server configuration */
    ngx_http_classify_merge_srv_conf,      /* merge server configuration */

    ngx_http_classify_create_loc_conf,     /* create location configuration */
    ngx_http_classify_merge_loc_conf       /* merge location configuration */
};


ngx_module_t  ngx_http_classify_module = {
    NGX_MODULE_V1,
    &ngx_http_classify_module_ctx,         /* module context */
    ngx_http_classify_commands,            /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    ngx_http_classify_init_process,        /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static void *
ngx_http_classify_create_main_conf(ngx_conf_t *cf)
{
    ngx_http_classify_main_conf_t  *cmcf;

    cmcf = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_main_conf_t));
    if (cmcf == NULL) {
        return NULL;
    }

    if (ngx_array_init(&cmcf->rules, cf->pool, 4,
                       sizeof(ngx_http_classify_rules_t *))
        != NGX_OK
        || ngx_array_init(&cmcf->named, cf->pool, 4,
                          sizeof(ngx_http_classify_named_t))
           != NGX_OK)
    {
        return NULL;
    }

    return cmcf;
}


static void *
ngx_http_classify_create_srv_conf(ngx_conf_t *cf)
{
    ngx_http_classify_srv_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_srv_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     conf->rules_path = { 0, NULL };
     *     conf->rules = NULL;
     */

    conf->trusted = NGX_CONF_UNSET_PTR;

    return conf;
}


/*
 * The rules are loaded here, not when classify_rules is read: the
 * program depends on the trusted proxies, which may come later or from
 * another level.
 */

static char *
ngx_http_classify_merge_srv_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_classify_srv_conf_t *prev = parent;
    ngx_http_classify_srv_conf_t *conf = child;

    ngx_str_t  trusted;

    if (conf->rules_path.data == NULL) {
        conf->rules_path = prev->rules_path;
        conf->rules_pos = prev->rules_pos;
    }

    ngx_conf_merge_ptr_value(conf->trusted, prev->trusted, NULL);

    if (conf->rules_path.data == NULL) {
        return NGX_CONF_OK;
    }

    if (ngx_http_classify_join(cf, conf->trusted, &trusted) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    conf->rules = ngx_http_classify_rules_get(cf, &conf->rules_path, &trusted,
                                              &conf->rules_pos);
    if (conf->rules == NULL) {
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


static void *
ngx_http_classify_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_classify_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    /*
     * set by ngx_pcalloc():
     *
     *     conf->filter_name = { 0, NULL };
     *     conf->filter = 0;
     *     conf->reject_location = { 0, NULL };
     */

    conf->enable = NGX_CONF_UNSET;
    conf->reject_status = NGX_CONF_UNSET;

    return conf;
}


static char *
ngx_http_classify_merge_loc_conf(ngx_conf_t *cf, void *parent, void *child)
{
    ngx_http_classify_loc_conf_t *prev = parent;
    ngx_http_classify_loc_conf_t *conf = child;

    char                            err[CLF_ERRMSG_SIZE];
    ngx_str_t                       name;
    ngx_http_core_srv_conf_t       *core;
    ngx_http_classify_named_t      *n;
    ngx_http_classify_srv_conf_t   *cscf;
    ngx_http_classify_main_conf_t  *cmcf;

    ngx_conf_merge_value(conf->enable, prev->enable, 0);

    if (conf->filter_name.data == NULL) {
        conf->filter_name = prev->filter_name;
        conf->filter_pos = prev->filter_pos;
    }

    /* classify_reject_status and classify_reject_location are one setting */

    if (conf->reject_status == NGX_CONF_UNSET
        && conf->reject_location.data == NULL)
    {
        conf->reject_status = prev->reject_status;
        conf->reject_location = prev->reject_location;
        conf->reject_pos = prev->reject_pos;
    }

    if (conf->reject_status == NGX_CONF_UNSET) {
        conf->reject_status = NGX_HTTP_FORBIDDEN;
    }

    if (!conf->enable) {
        return NGX_CONF_OK;
    }

    cscf = ngx_http_conf_get_module_srv_conf(cf, ngx_http_classify_module);
    core = ngx_http_conf_get_module_srv_conf(cf, ngx_http_core_module);

    if (cscf->rules == NULL) {
        ngx_log_error(NGX_LOG_EMERG, cf->log, 0,
                      "\"classify on\" in a server without \"classify_rules\""
                      " (the server in %s:%ui)", core->file_name, core->line);
        return NGX_CONF_ERROR;
    }

    name = conf->filter_name;

    if (name.data == NULL) {
        ngx_str_set(&name, "main");
    }

    if (clf_program_find_filter(cscf->rules->program, (const char *) name.data,
                                name.len, &conf->filter, err, sizeof(err))
        != CLF_OK)
    {
        if (conf->filter_name.data == NULL) {
            /* cannot happen: every rules file has main */
            ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "classify: \"%V\": %s",
                          &cscf->rules->path, err);
            return NGX_CONF_ERROR;
        }

        ngx_http_classify_pos_error(cf, &conf->filter_pos, 0,
                                    "classify_filter \"%V\": %s (rules \"%V\")",
                                    &name, err, &cscf->rules->path);
        return NGX_CONF_ERROR;
    }

    if (conf->reject_location.data) {
        cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_classify_module);

        n = cmcf->named.nelts
            ? (ngx_http_classify_named_t *) cmcf->named.elts
              + cmcf->named.nelts - 1
            : NULL;

        if (n == NULL || n->server != core
            || n->name.data != conf->reject_location.data)
        {
            n = ngx_array_push(&cmcf->named);
            if (n == NULL) {
                return NGX_CONF_ERROR;
            }

            n->server = core;
            n->name = conf->reject_location;
            n->pos = conf->reject_pos;
        }
    }

    return NGX_CONF_OK;
}


/*
 * After every location is known: check the named locations, and add the
 * phase handlers only when some server classifies.
 */

static ngx_int_t
ngx_http_classify_init(ngx_conf_t *cf)
{
    ngx_uint_t                      i;
    ngx_http_handler_pt            *h;
    ngx_http_classify_named_t      *n;
    ngx_http_core_main_conf_t      *cmcf;
    ngx_http_classify_main_conf_t  *ccmf;

    ccmf = ngx_http_conf_get_module_main_conf(cf, ngx_http_classify_module);

    n = ccmf->named.elts;

    for (i = 0; i < ccmf->named.nelts; i++) {
        if (ngx_http_classify_find_named(&n[i]) != NGX_OK) {
            ngx_http_classify_pos_error(cf, &n[i].pos, 0,
                                        "classify_reject_location \"%V\": no "
                                        "such named location in its server "
                                        "(%s:%ui)", &n[i].name,
                                        n[i].server->file_name,
                                        n[i].server->line);
            return NGX_ERROR;
        }
    }

    if (ccmf->rules.nelts == 0) {
        return NGX_OK;
    }

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module);

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_POST_READ_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_classify_post_read_handler;

    h = ngx_array_push(&cmcf->phases[NGX_HTTP_REWRITE_PHASE].handlers);
    if (h == NULL) {
        return NGX_ERROR;
    }

    *h = ngx_http_classify_rewrite_handler;

    return NGX_OK;
}


static ngx_int_t
ngx_http_classify_find_named(ngx_http_classify_named_t *n)
{
    ngx_http_core_loc_conf_t  **clcfp;

    if (n->server->named_locations == NULL) {
        return NGX_DECLINED;
    }

    for (clcfp = n->server->named_locations; *clcfp; clcfp++) {
        if (n->name.len == (*clcfp)->name.len
            && ngx_strncmp(n->name.data, (*clcfp)->name.data, n->name.len) == 0)
        {
            return NGX_OK;
        }
    }

    return NGX_DECLINED;
}


static void
ngx_http_classify_set_pos(ngx_conf_t *cf, ngx_http_classify_pos_t *pos)
{
    pos->file = cf->conf_file->file.name;
    pos->line = cf->conf_file->line;
}


/* The classify_trusted_proxies values as one list for libclassify. */

static ngx_int_t
ngx_http_classify_join(ngx_conf_t *cf, ngx_array_t *list, ngx_str_t *out)
{
    u_char      *p;
    size_t       len;
    ngx_str_t   *value;
    ngx_uint_t   i;

    ngx_str_set(out, "");

    if (list == NULL || list->nelts == 0) {
        return NGX_OK;
    }

    value = list->elts;
    len = 0;

    for (i = 0; i < list->nelts; i++) {
        len += value[i].len + 1;
    }

    p = ngx_pnalloc(cf->pool, len);
    if (p == NULL) {
        return NGX_ERROR;
    }

    out->data = p;

    for (i = 0; i < list->nelts; i++) {
        if (i) {
            *p++ = ',';
        }

        p = ngx_cpymem(p, value[i].data, value[i].len);
    }

    out->len = p - out->data;

    return NGX_OK;
}


static char *
ngx_http_classify_rules(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_classify_srv_conf_t *cscf = conf;

    ngx_str_t  *value;

    if (cscf->rules_path.data) {
        return "is duplicate";
    }

    value = cf->args->elts;

    cscf->rules_path = value[1];

    /* relative to the configuration's directory, like "include" */

    if (ngx_conf_full_name(cf->cycle, &cscf->rules_path, 1) != NGX_OK) {
        return NGX_CONF_ERROR;
    }

    ngx_http_classify_set_pos(cf, &cscf->rules_pos);

    return NGX_CONF_OK;
}


static char *
ngx_http_classify_trusted_proxies(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_classify_srv_conf_t *cscf = conf;

    ngx_str_t   *value, *s;
    ngx_uint_t   i;

    if (cscf->trusted == NGX_CONF_UNSET_PTR) {
        cscf->trusted = ngx_array_create(cf->pool, 4, sizeof(ngx_str_t));
        if (cscf->trusted == NULL) {
            return NGX_CONF_ERROR;
        }
    }

    value = cf->args->elts;

    for (i = 1; i < cf->args->nelts; i++) {
        if (ngx_http_classify_check_trusted(cf, &value[i]) != NGX_CONF_OK) {
            return NGX_CONF_ERROR;
        }

        s = ngx_array_push(cscf->trusted);
        if (s == NULL) {
            return NGX_CONF_ERROR;
        }

        *s = value[i];
    }

    return NGX_CONF_OK;
}


static char *
ngx_http_classify_filter(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_classify_loc_conf_t *clcf = conf;

    ngx_str_t  *value;

    if (clcf->filter_name.data) {
        return "is duplicate";
    }

    value = cf->args->elts;

    clcf->filter_name = value[1];
    ngx_http_classify_set_pos(cf, &clcf->filter_pos);

    return NGX_CONF_OK;
}


static char *
ngx_http_classify_reject_status(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_classify_loc_conf_t *clcf = conf;

    ngx_int_t   status;
    ngx_str_t  *value;

    if (clcf->reject_status != NGX_CONF_UNSET) {
        return "is duplicate";
    }

    if (clcf->reject_location.data) {
        return "conflicts with \"classify_reject_location\"";
    }

    value = cf->args->elts;

    status = ngx_atoi(value[1].data, value[1].len);

    if (status < 400 || status > 599) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_reject_status \"%V\": must be a status "
                           "between 400 and 599", &value[1]);
        return NGX_CONF_ERROR;
    }

    clcf->reject_status = status;
    ngx_http_classify_set_pos(cf, &clcf->reject_pos);

    return NGX_CONF_OK;
}


static char *
ngx_http_classify_reject_location(ngx_conf_t *cf, ngx_command_t *cmd,
    void *conf)
{
    ngx_http_classify_loc_conf_t *clcf = conf;

    ngx_str_t  *value;

    if (clcf->reject_location.data) {
        return "is duplicate";
    }

    if (clcf->reject_status != NGX_CONF_UNSET) {
        return "conflicts with \"classify_reject_status\"";
    }

    value = cf->args->elts;

    if (value[1].len < 2 || value[1].data[0] != '@') {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "classify_reject_location \"%V\": must name a "
                           "named location (\"@name\")", &value[1]);
        return NGX_CONF_ERROR;
    }

    clcf->reject_location = value[1];
    ngx_http_classify_set_pos(cf, &clcf->reject_pos);

    return NGX_CONF_OK;
}
