
/*
 * ngx_http_classify_rules.c: rules files. The master reads and verifies
 * each file while it reads the configuration (clf_program_load: header,
 * checksum, sections, bytecode verifier, Hyperscan databases), so a bad
 * file fails "nginx -t" and "nginx -s reload" with the loader's message
 * and the running workers never see it. Workers make their contexts in
 * init_process.
 */


#include "ngx_http_classify_module.h"


static ngx_int_t ngx_http_classify_read_file(ngx_conf_t *cf, ngx_str_t *path,
    ngx_http_classify_pos_t *pos, u_char **data, size_t *len);
static void ngx_http_classify_rules_cleanup(void *data);


/*
 * Like ngx_conf_log_error(), for a position recorded while parsing: errors
 * found while merging would otherwise name the end of the http block.
 */

void
ngx_http_classify_pos_error(ngx_conf_t *cf, ngx_http_classify_pos_t *pos,
    ngx_err_t err, const char *fmt, ...)
{
    u_char   errstr[NGX_MAX_CONF_ERRSTR], *p, *last;
    va_list  args;

    last = errstr + NGX_MAX_CONF_ERRSTR;

    va_start(args, fmt);
    p = ngx_vslprintf(errstr, last, fmt, args);
    va_end(args);

    if (err) {
        p = ngx_log_errno(p, last, err);
    }

    ngx_log_error(NGX_LOG_EMERG, cf->log, 0, "%*s in %V:%ui",
                  p - errstr, errstr, &pos->file, pos->line);
}


/*
 * Checks one classify_trusted_proxies value with the library's own parser,
 * so that a bad one is reported at its line.
 */

char *
ngx_http_classify_check_trusted(ngx_conf_t *cf, ngx_str_t *value)
{
    char          err[CLF_ERRMSG_SIZE];
    clf_status    rc;
    clf_options  *opts;

    if (clf_options_new(&opts) != CLF_OK) {
        return NGX_CONF_ERROR;
    }

    rc = clf_options_set_trusted_proxies(opts, (const char *) value->data,
                                         value->len, err, sizeof(err));
    clf_options_free(opts);

    if (rc != CLF_OK) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "classify_trusted_proxies: %s",
                           err);
        return NGX_CONF_ERROR;
    }

    return NGX_CONF_OK;
}


/*
 * The loaded rules file for (path, trusted): one already loaded in this
 * configuration, or a new one. NULL after logging an error.
 */

ngx_http_classify_rules_t *
ngx_http_classify_rules_get(ngx_conf_t *cf, ngx_str_t *path,
    ngx_str_t *trusted, ngx_http_classify_pos_t *pos)
{
    char                            err[CLF_ERRMSG_SIZE];
    size_t                          len;
    u_char                         *data;
    clf_status                      rc;
    ngx_uint_t                      i;
    clf_options                    *opts;
    ngx_pool_cleanup_t             *cln;
    ngx_http_classify_rules_t      *rules, **rulesp;
    ngx_http_classify_main_conf_t  *cmcf;

    cmcf = ngx_http_conf_get_module_main_conf(cf, ngx_http_classify_module);

    rulesp = cmcf->rules.elts;

    for (i = 0; i < cmcf->rules.nelts; i++) {
        if (rulesp[i]->path.len == path->len
            && ngx_strncmp(rulesp[i]->path.data, path->data, path->len) == 0
            && rulesp[i]->trusted.len == trusted->len
            && ngx_strncmp(rulesp[i]->trusted.data, trusted->data,
                           trusted->len) == 0)
        {
            return rulesp[i];
        }
    }

    rules = ngx_pcalloc(cf->pool, sizeof(ngx_http_classify_rules_t));
    if (rules == NULL) {
        return NULL;
    }

    rules->path = *path;
    rules->trusted = *trusted;

    if (ngx_http_classify_read_file(cf, path, pos, &data, &len) != NGX_OK) {
        return NULL;
    }

    rc = clf_options_new(&opts);

    if (rc == CLF_OK && trusted->len) {
        rc = clf_options_set_trusted_proxies(opts, (const char *) trusted->data,
                                             trusted->len, NULL, 0);
    }

    /* names this version of the file in the ETags of rewritten responses */
    rules->crc32 = ngx_crc32_long(data, len);

    if (rc != CLF_OK) {
        /* the values were checked when they were read: out of memory */
        ngx_snprintf((u_char *) err, sizeof(err), "%s%Z", clf_strerror(rc));

    } else {
        rc = clf_program_load(data, len, opts, &rules->program, err,
                              sizeof(err));
    }

    clf_options_free(opts);
    ngx_free(data);

    if (rc != CLF_OK) {
        ngx_http_classify_pos_error(cf, pos, 0, "classify_rules \"%V\": %s",
                                    path, err);
        return NULL;
    }

    cln = ngx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        clf_program_free(rules->program);
        return NULL;
    }

    cln->handler = ngx_http_classify_rules_cleanup;
    cln->data = rules;

    rulesp = ngx_array_push(&cmcf->rules);
    if (rulesp == NULL) {
        return NULL;
    }

    *rulesp = rules;

    return rules;
}


static ngx_int_t
ngx_http_classify_read_file(ngx_conf_t *cf, ngx_str_t *path,
    ngx_http_classify_pos_t *pos, u_char **data, size_t *len)
{
    off_t            size;
    u_char          *buf;
    size_t           got;
    ssize_t          n;
    ngx_fd_t         fd;
    ngx_file_info_t  fi;

    fd = ngx_open_file(path->data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);

    if (fd == NGX_INVALID_FILE) {
        ngx_http_classify_pos_error(cf, pos, ngx_errno,
                                    "classify_rules \"%V\": "
                                    ngx_open_file_n " failed", path);
        return NGX_ERROR;
    }

    buf = NULL;

    if (ngx_fd_info(fd, &fi) == NGX_FILE_ERROR) {
        ngx_http_classify_pos_error(cf, pos, ngx_errno,
                                    "classify_rules \"%V\": "
                                    ngx_fd_info_n " failed", path);
        goto failed;
    }

    size = ngx_file_size(&fi);

    /* one byte more, so that an empty file is not a zero-byte allocation */

    buf = ngx_alloc((size_t) size + 1, cf->log);
    if (buf == NULL) {
        goto failed;
    }

    for (got = 0; got < (size_t) size; got += n) {
        n = ngx_read_fd(fd, buf + got, (size_t) size - got);

        if (n == -1) {
            ngx_http_classify_pos_error(cf, pos, ngx_errno,
                                        "classify_rules \"%V\": "
                                        ngx_read_fd_n " failed", path);
            goto failed;
        }

        if (n == 0) {
            /* the file shrank while it was read: the loader will say so */
            break;
        }
    }

    ngx_close_file(fd);

    *data = buf;
    *len = got;

    return NGX_OK;

failed:

    ngx_free(buf);
    ngx_close_file(fd);

    return NGX_ERROR;
}


/*
 * With the cycle's pool: in the master, an old configuration's programs;
 * in a worker, at exit, also what the worker made. The rewriters, caches
 * and scratch go first: they use the program.
 */

static void
ngx_http_classify_rules_cleanup(void *data)
{
    ngx_http_classify_rules_t  *rules = data;

    ngx_http_classify_rewrite_free_worker(rules);
    clf_ctx_free(rules->ctx);
    clf_program_free(rules->program);
}


/*
 * One context per loaded rules file and worker, and what the body
 * rewriter needs (ngx_http_classify_rewrite_worker.c). A worker that cannot make
 * one (out of memory) keeps running: the requests it would classify are
 * accepted with the reason "classify-error", logged, as when evaluation
 * fails (ngx_http_classify_request.c).
 */

ngx_int_t
ngx_http_classify_init_process(ngx_cycle_t *cycle)
{
    char                            err[CLF_ERRMSG_SIZE];
    ngx_uint_t                      i;
    ngx_http_classify_rules_t     **rulesp;
    ngx_http_classify_main_conf_t  *cmcf;

    if (cycle->conf_ctx[ngx_http_module.index] == NULL) {
        return NGX_OK;
    }

    cmcf = ngx_http_cycle_get_module_main_conf(cycle, ngx_http_classify_module);
    if (cmcf == NULL) {
        return NGX_OK;
    }

    rulesp = cmcf->rules.elts;

    for (i = 0; i < cmcf->rules.nelts; i++) {
        if (clf_ctx_new(rulesp[i]->program, &rulesp[i]->ctx, err, sizeof(err))
            != CLF_OK)
        {
            ngx_log_error(NGX_LOG_ALERT, cycle->log, 0,
                          "classify: no context for \"%V\" in this worker: %s",
                          &rulesp[i]->path, err);
            rulesp[i]->ctx = NULL;
        }

        ngx_http_classify_rewrite_init_worker(cycle, rulesp[i]);
    }

    ngx_http_classify_state_init_worker(cycle, cmcf);

    return NGX_OK;
}
