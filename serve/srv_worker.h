/*
 * srv_worker.h: a worker thread: one libuv loop, its own view of every
 * listener, its own classification context (from the current rules
 * bundle) and its own counters. Workers share nothing on the request
 * path but the rules generation number.
 */
#ifndef CLI_SRV_WORKER_H
#define CLI_SRV_WORKER_H

#include "srv_log.h"
#include "srv_metrics.h"
#include "srv_server.h"

#include <classify.h>
#include <uv.h>

#include <pthread.h>
#include <stdint.h>
#include <time.h>

struct srv_conn;
struct srv_rdns;
struct srv_spoa;

/* A TCP or Unix-socket stream, by the listener's kind. */
typedef union srv_stream {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
    uv_handle_t handle;
    uv_stream_t stream;
} srv_stream;

typedef struct srv_lhandle {
    srv_stream h;
    const srv_listener *l;
    struct srv_worker *w;
} srv_lhandle;

typedef struct srv_worker {
    unsigned id;
    srv_server *srv;
    pthread_t thread;
    int started;
    uv_loop_t loop;
    uv_async_t wake; /* new rules, or stop */
    uv_timer_t stop_timer;
    srv_lhandle *lh;
    size_t nlh;
    srv_rules *rules; /* the bundle this worker classifies with */
    uint64_t gen;
    srv_metrics metrics;
    struct srv_rdns *rdns; /* NULL: --rdns off */
    struct srv_conn *conns; /* every open HTTP connection, for shutdown */
    struct srv_spoa *spoas; /* every open SPOA connection */
    int stopping;
    char date[64];
    size_t date_len;
    time_t date_at;
    srv_jline log;
} srv_worker;

/* Prepares `w` (loop, listener handles, counters); the main thread calls
 * it before srv_worker_start. Returns 0 or -1 after logging why. */
int srv_worker_init(srv_worker *w, srv_server *srv, unsigned id);
int srv_worker_start(srv_worker *w);
/* Asks the worker to look at the rules generation and at srv->stopping
 * (thread-safe). */
void srv_worker_wake(srv_worker *w);
void srv_worker_join(srv_worker *w);
void srv_worker_destroy(srv_worker *w);

/* The context to classify with, switching to newer rules first when
 * there are any. Worker thread only. */
clf_ctx *srv_worker_ctx(srv_worker *w);

/* The cached "Date: ...\r\n" line, refreshed once a second. */
const char *srv_worker_date(srv_worker *w, size_t *len);

/* Connection bookkeeping (srv_conn.c, srv_spoa.c). */
void srv_worker_conn_closed(srv_worker *w);

#endif /* CLI_SRV_WORKER_H */
