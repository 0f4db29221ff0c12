/*
 * srv_worker.c: worker threads (see srv_worker.h).
 */
#include "srv_worker.h"
#include "srv_conn.h"
#include "srv_rdns.h"
#include "srv_spoa.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_connection(uv_stream_t *server, int status)
{
    srv_lhandle *lh = server->data;
    if (status < 0) {
        srv_log_warn("%s: accept: %s", lh->l->name, uv_strerror(status));
        return;
    }
    if (lh->l->proto == SRV_SPOA)
        srv_spoa_accept(lh);
    else
        srv_conn_accept(lh);
}

clf_ctx *srv_worker_ctx(srv_worker *w)
{
    srv_rules_holder *h = &w->srv->rules;
    if (atomic_load_explicit(&h->generation, memory_order_acquire) != w->gen) {
        srv_rules *n = srv_rules_acquire(h);
        srv_rules_release(h, w->rules, 1);
        w->rules = n;
        w->gen = n->generation;
    }
    return w->rules->ctx[w->id];
}

const char *srv_worker_date(srv_worker *w, size_t *len)
{
    time_t now = time(NULL);
    if (now != w->date_at) {
        w->date_len = srv_date_line(w->date, (long long)now);
        w->date_at = now;
    }
    *len = w->date_len;
    return w->date;
}

static void on_stop_timer(uv_timer_t *t)
{
    srv_worker *w = t->data;
    srv_log_warn("worker %u: shutdown timeout: closing the connections left", w->id);
    srv_conn_close_all(w);
    srv_spoa_close_all(w);
}

static void begin_stop(srv_worker *w)
{
    w->stopping = 1;
    for (size_t i = 0; i < w->nlh; i++)
        uv_close(&w->lh[i].h.handle, NULL);
    uv_close((uv_handle_t *)&w->wake, NULL);
    srv_rdns_stop(w->rdns); /* its handles would keep the loop running */
    srv_conn_stop_all(w);
    srv_spoa_stop_all(w);
    /* unref'd: the loop ends as soon as the last connection is gone */
    uv_timer_start(&w->stop_timer, on_stop_timer, w->srv->cfg->shutdown_timeout_ms, 0);
    uv_unref((uv_handle_t *)&w->stop_timer);
}

static void on_wake(uv_async_t *a)
{
    srv_worker *w = a->data;
    (void)srv_worker_ctx(w); /* let go of old rules even when idle */
    if (atomic_load(&w->srv->stopping) && !w->stopping)
        begin_stop(w);
}

void srv_worker_conn_closed(srv_worker *w)
{
    if (w->stopping && w->conns == NULL && w->spoas == NULL)
        uv_timer_stop(&w->stop_timer);
}

static int open_listener(srv_worker *w, srv_lhandle *lh, const srv_listener *l)
{
    int fd = fcntl(l->fd, F_DUPFD_CLOEXEC, 0);
    int rc;
    lh->l = l;
    lh->w = w;
    if (fd < 0) {
        srv_log_error("%s: dup: %s", l->name, strerror(errno));
        return -1;
    }
    if (l->is_unix) {
        uv_pipe_init(&w->loop, &lh->h.pipe, 0);
        rc = uv_pipe_open(&lh->h.pipe, fd);
    } else {
        uv_tcp_init(&w->loop, &lh->h.tcp);
        rc = uv_tcp_open(&lh->h.tcp, fd);
    }
    lh->h.handle.data = lh;
    if (rc == 0)
        rc = uv_listen(&lh->h.stream, 4096, on_connection);
    if (rc != 0) {
        srv_log_error("%s: %s", l->name, uv_strerror(rc));
        return -1;
    }
    return 0;
}

int srv_worker_init(srv_worker *w, srv_server *srv, unsigned id)
{
    memset(w, 0, sizeof *w);
    w->id = id;
    w->srv = srv;
    if (srv_metrics_init(&w->metrics) != 0 || uv_loop_init(&w->loop) != 0) {
        srv_log_error("worker %u: cannot initialise", id);
        w->srv = NULL; /* nothing for srv_worker_destroy to undo */
        return -1;
    }
    w->log.buf = malloc(SRV_JLINE_CAP);
    w->log.cap = SRV_JLINE_CAP;
    w->lh = calloc(srv->nlisteners, sizeof *w->lh);
    if (w->log.buf == NULL || w->lh == NULL) {
        srv_log_error("out of memory");
        return -1;
    }
    uv_async_init(&w->loop, &w->wake, on_wake);
    w->wake.data = w;
    uv_timer_init(&w->loop, &w->stop_timer);
    w->stop_timer.data = w;
    for (size_t i = 0; i < srv->nlisteners; i++) {
        if (open_listener(w, &w->lh[i], &srv->listeners[i]) != 0)
            return -1;
        w->nlh++;
    }
    char err[256];
    if (srv->g.rdns_cache != NULL &&
        srv_rdns_new(&w->loop, srv->g.rdns_cache, srv->cfg, &w->metrics, &w->rdns, err,
                     sizeof err) != 0) {
        srv_log_error("worker %u: %s", id, err);
        return -1;
    }
    w->rules = srv_rules_acquire(&srv->rules);
    w->gen = w->rules->generation;
    return 0;
}

static void *thread_main(void *arg)
{
    srv_worker *w = arg;
    uv_run(&w->loop, UV_RUN_DEFAULT);
    return NULL;
}

int srv_worker_start(srv_worker *w)
{
    if (pthread_create(&w->thread, NULL, thread_main, w) != 0) {
        srv_log_error("worker %u: cannot start a thread", w->id);
        return -1;
    }
    w->started = 1;
    return 0;
}

void srv_worker_wake(srv_worker *w)
{
    uv_async_send(&w->wake);
}

void srv_worker_join(srv_worker *w)
{
    if (w->started)
        pthread_join(w->thread, NULL);
    w->started = 0;
}

static void close_any(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* After the thread ended (or never started): close what is left, so the
 * loop can be closed and nothing leaks. */
void srv_worker_destroy(srv_worker *w)
{
    if (w->srv == NULL)
        return;
    if (w->conns != NULL)
        srv_conn_close_all(w);
    if (w->spoas != NULL)
        srv_spoa_close_all(w);
    srv_rdns_stop(w->rdns); /* a start that failed half way never stopped it */
    uv_walk(&w->loop, close_any, NULL);
    uv_run(&w->loop, UV_RUN_DEFAULT);
    uv_loop_close(&w->loop);
    srv_rdns_free(w->rdns);
    w->rdns = NULL;
    if (w->rules != NULL)
        srv_rules_release(&w->srv->rules, w->rules, 0);
    srv_metrics_destroy(&w->metrics);
    free(w->lh);
    free(w->log.buf);
    w->srv = NULL;
}
