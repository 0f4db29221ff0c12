/*
 * classify-serve: a decision service for reverse proxies.
 *
 *   classify-serve RULES.bin --listen ADDR [--listen-auth PROXY=ADDR]
 *                  [--listen-admin ADDR] [OPTION]...
 *
 * The main thread parses the options, loads the rules, opens the
 * listeners and starts the workers (srv_worker.c), then only handles
 * signals and rules-file changes: SIGHUP or a changed file reloads
 * (srv_rules.c), SIGTERM/SIGINT stops gracefully. See
 * docs/classify-serve.md.
 */
#include "readfile.h"
#include "srv_config.h"
#include "srv_listen.h"
#include "srv_rdns.h"
#include "srv_log.h"
#include "srv_rules.h"
#include "srv_server.h"
#include "srv_worker.h"

#include <classify.h>
#include <uv.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "classify-serve"

/* Exit statuses (also in docs/classify-serve.md). */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

/* Largest --reject-file: it is sent from memory. */
#define MAX_REJECT_FILE ((size_t)1 << 20)

typedef struct mainloop {
    uv_loop_t *loop;
    srv_server *srv;
    uv_signal_t sighup, sigterm, sigint;
    uv_timer_t watch;
    uv_async_t collect; /* a worker queued rules to free */
    int watching;
    struct stat seen; /* the rules file version last loaded or refused */
    int missing;      /* the file could not be stat()ed: said once */
    int reads_rdns;   /* the serving rules read req.rdns (log_rdns said so) */
} mainloop;

/* ------------------------------------------------------------------------ */
/* Start-up helpers. */

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int load_reject_body(srv_server *srv, const srv_config *cfg)
{
    srv_body *b = &srv->reject;
    if (cfg->reject_file == NULL) {
        b->len = strlen(cfg->reject_body);
        b->ptr = malloc(b->len + 1);
        if (b->ptr == NULL)
            return -1;
        memcpy(b->ptr, cfg->reject_body, b->len + 1);
        b->content_type = cfg->reject_content_type ? cfg->reject_content_type
                                                    : "text/plain; charset=utf-8";
        return 0;
    }
    int e;
    cm_read_status rs = cm_read_file(cfg->reject_file, MAX_REJECT_FILE, 0, &b->ptr, &b->len, &e,
                                     NULL);
    if (rs == CM_READ_OPEN) {
        srv_log_error("%s: cannot open: %s", cfg->reject_file, strerror(e));
        return -1;
    }
    if (rs != CM_READ_OK) {
        srv_log_error("%s: cannot read, or larger than %zu bytes", cfg->reject_file,
                      MAX_REJECT_FILE);
        return -1;
    }
    if (cfg->reject_content_type != NULL)
        b->content_type = cfg->reject_content_type;
    else if (has_suffix(cfg->reject_file, ".html") || has_suffix(cfg->reject_file, ".htm"))
        b->content_type = "text/html; charset=utf-8";
    else
        b->content_type = "text/plain; charset=utf-8";
    return 0;
}

/* Each connection is a descriptor: lift the soft limit to the hard one
 * (the usual 1024 is below the default --max-connections). */
static void raise_fd_limit(const srv_config *cfg)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)cfg->max_connections + 64)
        srv_log_warn("the open-file limit (%llu) is below --max-connections (%u) + 64: "
                     "raise it (ulimit -n, LimitNOFILE=)",
                     (unsigned long long)rl.rlim_cur, cfg->max_connections);
}

static unsigned default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* ------------------------------------------------------------------------ */
/* Reload. */

static void wake_all(srv_server *srv)
{
    for (unsigned i = 0; i < srv->nworkers; i++)
        srv_worker_wake(&srv->workers[i]);
}

static void log_rdns(const srv_config *cfg, const srv_rules *r);

static void reload(mainloop *m, const char *why)
{
    srv_server *srv = m->srv;
    const srv_config *cfg = srv->cfg;
    char err[CLF_ERRMSG_SIZE + 64];

    if (atomic_load(&srv->stopping))
        return;
    clf_store *store = atomic_load(&srv->g.store);
    srv_rules *r = srv_rules_load(cfg->rules_path, cfg->trusted_proxies, cfg->ipdb_paths,
                                  cfg->keys_path, srv->nworkers, &m->seen, &store,
                                  cfg->state_bytes, err, sizeof err);
    atomic_store(&srv->g.store, store); /* made by this load, or kept */
    if (r == NULL) {
        atomic_fetch_add(&srv->g.reloads_failed, 1);
        srv_log_error("reload (%s) refused: %s: %s; still serving rules generation %llu",
                      why, cfg->rules_path, err,
                      (unsigned long long)atomic_load(&srv->rules.generation));
        return;
    }
    srv_rules_publish(&srv->rules, r);
    atomic_fetch_add(&srv->g.reloads_ok, 1);
    atomic_store(&srv->g.rules_generation, r->generation);
    atomic_store(&srv->g.rules_loaded_at, (uint64_t)time(NULL));
    wake_all(srv);
    srv_log_info("reloaded %s (%s): %zu bytes, rules generation %llu", cfg->rules_path,
                 why, r->file_bytes, (unsigned long long)r->generation);
    if (r->reads_rdns && !m->reads_rdns)
        log_rdns(cfg, r);
    m->reads_rdns = r->reads_rdns;
}

/* Polls the file's stat against the version last tried (not against
 * the first poll, so a change between start-up and that poll is seen).
 * A stat is cheap; inotify would miss a file replaced by rename unless the
 * directory were watched. */
static void on_watch(uv_timer_t *h)
{
    mainloop *m = h->data;
    const char *path = m->srv->cfg->rules_path;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (!m->missing)
            srv_log_warn("%s: %s; still serving the rules loaded", path, strerror(errno));
        m->missing = 1;
        return;
    }
    m->missing = 0;
    if (!srv_rules_same_file(&st, &m->seen))
        reload(m, "file changed");
}

static void on_collect(uv_async_t *a)
{
    mainloop *m = a->data;
    srv_rules_collect(&m->srv->rules);
}

static void notify_collect(void *ud)
{
    uv_async_send((uv_async_t *)ud);
}

/* ------------------------------------------------------------------------ */
/* Signals. */

static void stop(mainloop *m, const char *why)
{
    srv_log_info("%s: stopping: finishing the requests in flight (up to %g s)", why,
                 (double)m->srv->cfg->shutdown_timeout_ms / 1000);
    atomic_store(&m->srv->stopping, 1);
    wake_all(m->srv);
    /* Closing the handles restores the default actions: a second SIGTERM
     * or SIGINT ends the process at once. */
    uv_close((uv_handle_t *)&m->sighup, NULL);
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    uv_close((uv_handle_t *)&m->sigint, NULL);
    if (m->watching)
        uv_close((uv_handle_t *)&m->watch, NULL);
    uv_unref((uv_handle_t *)&m->collect); /* still freeing rules meanwhile */
    srv_state_stop_sync(&m->srv->state);
}

static void on_signal(uv_signal_t *h, int signum)
{
    mainloop *m = h->data;
    if (signum == SIGHUP) {
        if (m->srv->cfg->access_log != NULL)
            srv_access_log_open(m->srv->cfg->access_log);
        reload(m, "SIGHUP");
    } else {
        stop(m, signum == SIGTERM ? "SIGTERM" : "SIGINT");
    }
}

static int start_main_handles(mainloop *m)
{
    uv_signal_init(m->loop, &m->sighup);
    uv_signal_init(m->loop, &m->sigterm);
    uv_signal_init(m->loop, &m->sigint);
    m->sighup.data = m->sigterm.data = m->sigint.data = m;
    if (uv_signal_start(&m->sighup, on_signal, SIGHUP) != 0 ||
        uv_signal_start(&m->sigterm, on_signal, SIGTERM) != 0 ||
        uv_signal_start(&m->sigint, on_signal, SIGINT) != 0) {
        srv_log_error("cannot install signal handlers");
        return -1;
    }
    const srv_config *cfg = m->srv->cfg;
    if (cfg->watch_interval_ms > 0) {
        uv_timer_init(m->loop, &m->watch);
        m->watch.data = m;
        uv_timer_start(&m->watch, on_watch, cfg->watch_interval_ms, cfg->watch_interval_ms);
        m->watching = 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */

static void print_version(void)
{
    printf(PROG " %s\n", CLF_VERSION_STRING);
    printf("libclassify %s, rules format version %lu, %s %s, libuv %s\n", clf_version_string(),
           (unsigned long)clf_format_version(), clf_matcher_name(), clf_matcher_version(),
           uv_version_string());
}

/* Names the listener as it was given: "--listen-auth nginx=ADDR: ...". */
static void listener_error(const srv_listen_cfg *l, const char *err)
{
    srv_log_error("--%s %s%s%s: %s",
                  l->proto == SRV_PASS_THROUGH ? "listen"
                  : l->proto == SRV_FORWARD_AUTH ? "listen-auth"
                  : l->proto == SRV_SPOA         ? "listen-spoa"
                                                 : "listen-admin",
                  l->auth ? l->auth->name : "", l->auth ? "=" : "", l->addr, err);
}

/* Whether the rules will be given reverse DNS, and from where. */
static void log_rdns(const srv_config *cfg, const srv_rules *r)
{
    if (!r->reads_rdns)
        return;
    if (cfg->rdns_off)
        srv_log_warn("the rules read req.rdns, but --rdns is off: req.rdns_checked is always false");
    else
        srv_log_info("reverse DNS for the rules' req.rdns: resolver %s, cache of %zu answers",
                     cfg->resolver ? cfg->resolver : "from /etc/resolv.conf", cfg->rdns_cache);
}

/* --check: what open_listeners and the access log's opening check, short
 * of binding and of writing. */
static int check_start(const srv_config *cfg)
{
    for (size_t i = 0; i < cfg->listen_count; i++) {
        char err[256];
        if (srv_listen_check(cfg->listens[i].addr, err, sizeof err) != 0) {
            listener_error(&cfg->listens[i], err);
            return -1;
        }
    }
    return cfg->access_log != NULL ? srv_access_log_check(cfg->access_log) : 0;
}

static int open_listeners(srv_server *srv, const srv_config *cfg)
{
    srv->listeners = calloc(cfg->listen_count ? cfg->listen_count : 1, sizeof *srv->listeners);
    if (srv->listeners == NULL)
        return -1;
    for (size_t i = 0; i < cfg->listen_count; i++) {
        char err[256];
        if (srv_listen_open(&srv->listeners[i], cfg->listens[i].addr, cfg->listens[i].proto,
                            err, sizeof err) != 0) {
            listener_error(&cfg->listens[i], err);
            return -1;
        }
        srv->listeners[i].auth = cfg->listens[i].auth;
        srv->nlisteners++;
    }
    return 0;
}

/* Starts the workers with the stop signals blocked, so only the main
 * thread (libuv's signal handling) sees them. */
static int start_workers(srv_server *srv)
{
    sigset_t all, old;
    sigemptyset(&all);
    sigaddset(&all, SIGHUP);
    sigaddset(&all, SIGTERM);
    sigaddset(&all, SIGINT);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = 0;
    for (unsigned i = 0; i < srv->nworkers && rc == 0; i++)
        rc = srv_worker_start(&srv->workers[i]);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* After the workers are gone (they may wake m.collect until then). */
static void close_loop(uv_loop_t *loop)
{
    uv_walk(loop, close_any, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    uv_loop_close(loop);
}

static int run(srv_server *srv, srv_config *cfg)
{
    char err[CLF_ERRMSG_SIZE + 64];
    int status = EXIT_RUNTIME;
    mainloop m;
    memset(&m, 0, sizeof m);
    m.loop = uv_default_loop();
    m.srv = srv;

    srv->nworkers = cfg->threads ? cfg->threads : default_threads();
    if (load_reject_body(srv, cfg) != 0)
        return EXIT_USAGE;
    clf_store *store = NULL;
    srv_rules *first = srv_rules_load(cfg->rules_path, cfg->trusted_proxies, cfg->ipdb_paths,
                                      cfg->keys_path, srv->nworkers, &m.seen, &store,
                                      cfg->state_bytes, err, sizeof err);
    atomic_store(&srv->g.store, store);
    srv->g.state = &srv->state; /* its Redis figures for /metrics */
    if (first == NULL) {
        srv_log_error("%s: %s", cfg->rules_path, err);
        return EXIT_USAGE;
    }
    if (srv_rules_holder_init(&srv->rules, first) != 0)
        return EXIT_RUNTIME;
    atomic_store(&srv->g.rules_generation, 1);
    atomic_store(&srv->g.rules_loaded_at, (uint64_t)time(NULL));
    uv_async_init(m.loop, &m.collect, on_collect);
    m.collect.data = &m;
    srv->rules.notify = notify_collect;
    srv->rules.notify_ud = &m.collect;

    if (!cfg->rdns_off && srv_rdns_check(cfg, err, sizeof err) != 0) {
        srv_log_error("%s", err);
        status = EXIT_USAGE;
        goto out;
    }
    if (cfg->check_only) {
        status = EXIT_USAGE;
        if (check_start(cfg) == 0) {
            printf("%s: ok (%zu bytes)\n", cfg->rules_path, first->file_bytes);
            status = EXIT_OK;
        }
        goto out;
    }
    raise_fd_limit(cfg);
    if (open_listeners(srv, cfg) != 0) {
        status = EXIT_USAGE;
        goto out;
    }
    if (cfg->access_log != NULL && srv_access_log_open(cfg->access_log) != 0) {
        status = EXIT_USAGE;
        goto out;
    }
    if (!cfg->rdns_off && srv_rdns_cache_new(cfg->rdns_cache, &srv->g.rdns_cache) != 0)
        goto out;
    srv->workers = calloc(srv->nworkers, sizeof *srv->workers);
    if (srv->workers == NULL)
        goto out;
    for (unsigned i = 0; i < srv->nworkers; i++)
        if (srv_worker_init(&srv->workers[i], srv, i) != 0)
            goto out;
    if (srv_state_start_sync(&srv->state, cfg, &srv->g.store, m.loop) != 0)
        goto out;
    if (start_main_handles(&m) != 0 || start_workers(srv) != 0)
        goto out;
    for (size_t i = 0; i < srv->nlisteners; i++) {
        const srv_listener *l = &srv->listeners[i];
        if (l->auth != NULL)
            srv_log_info("listening on %s (%s behind %s: the method from %s, the URI from %s)",
                         l->name, srv_proto_name(l->proto), l->auth->name, l->auth->method_hdr,
                         l->auth->uri_hdr);
        else
            srv_log_info("listening on %s (%s)", l->name, srv_proto_name(l->proto));
    }
    srv_log_info("serving %s (%zu bytes) with %u worker threads", cfg->rules_path,
                 first->file_bytes, srv->nworkers);
    log_rdns(cfg, first);
    m.reads_rdns = first->reads_rdns;

    uv_run(m.loop, UV_RUN_DEFAULT);
    status = EXIT_OK;
out:
    if (!atomic_load(&srv->stopping)) { /* start-up failed half way */
        atomic_store(&srv->stopping, 1);
        for (unsigned i = 0; srv->workers && i < srv->nworkers; i++)
            if (srv->workers[i].started)
                srv_worker_wake(&srv->workers[i]);
    }
    for (unsigned i = 0; srv->workers && i < srv->nworkers; i++)
        srv_worker_join(&srv->workers[i]);
    for (unsigned i = 0; srv->workers && i < srv->nworkers; i++)
        srv_worker_destroy(&srv->workers[i]);
    free(srv->workers);
    for (size_t i = 0; i < srv->nlisteners; i++)
        srv_listen_close(&srv->listeners[i]);
    free(srv->listeners);
    srv_state_stop_sync(&srv->state); /* start-up failed half way: its handles are ours to close */
    close_loop(m.loop);
    if (srv->rules.current != NULL)
        srv_rules_holder_destroy(&srv->rules);
    srv_rdns_cache_free(srv->g.rdns_cache);
    srv->g.rdns_cache = NULL;
    clf_store_free(atomic_exchange(&srv->g.store, NULL)); /* after every context */
    if (status == EXIT_OK && !cfg->check_only)
        srv_log_info("stopped");
    return status;
}

int main(int argc, char **argv)
{
    srv_config cfg;
    srv_server srv;

    switch (srv_config_parse(&cfg, argc, argv)) {
    case SRV_ARGS_HELP:
        for (const char *const *part = srv_usage_text; *part != NULL; part++)
            fputs(*part, stdout);
        srv_config_free(&cfg);
        return EXIT_OK;
    case SRV_ARGS_VERSION:
        print_version();
        srv_config_free(&cfg);
        return EXIT_OK;
    case SRV_ARGS_BAD:
        srv_config_free(&cfg);
        return EXIT_USAGE;
    case SRV_ARGS_RUN:
        break;
    }
    signal(SIGPIPE, SIG_IGN); /* a peer that went away is an error return */
    if (srv_rdns_library_init() != 0) {
        srv_log_error("cannot initialise c-ares");
        srv_config_free(&cfg);
        return EXIT_RUNTIME;
    }
    memset(&srv, 0, sizeof srv);
    srv.cfg = &cfg;
    int status = run(&srv, &cfg);
    srv_access_log_close();
    srv_rdns_library_cleanup();
    free(srv.reject.ptr);
    srv_config_free(&cfg);
    return status;
}
