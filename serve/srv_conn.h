/*
 * srv_conn.h: one client connection: reading, llhttp, keep-alive,
 * pipelining, timeouts, writing, and a lingering close after errors (so
 * the client reads our 400/431 instead of a reset).
 *
 * Per-request work allocates nothing: the input buffer grows (to at most
 * --max-header-bytes) and the header array is sized once per connection.
 */
#ifndef CLI_SRV_CONN_H
#define CLI_SRV_CONN_H

#include "http_head.h"
#include "srv_response.h"
#include "srv_worker.h"

#include <llhttp.h>
#include <uv.h>

#include <stdint.h>

enum srv_conn_state {
    SRV_IDLE,    /* between requests (keep-alive timer) */
    SRV_HEAD,    /* reading a request head (request timer) */
    SRV_BODY,    /* answered; skipping the body (request timer) */
    SRV_LINGER,  /* answered with Connection: close; draining input */
    SRV_CLOSING
};

typedef struct srv_conn {
    srv_stream h;
    uv_timer_t timer;
    uv_write_t wreq;
    uv_shutdown_t sreq;
    srv_worker *w;
    const srv_listener *l;
    llhttp_t parser;
    cm_http_head req;
    char *in;
    size_t in_cap, in_len, in_parsed, msg_start;
    int state;
    int writing;     /* a uv_write is pending: do not parse further */
    int close_after; /* the last answer said Connection: close */
    int open_handles;
    uint64_t t0_ns; /* the request's first byte */
    uint64_t since; /* loop time (ms) the state began, for its timeout */
    unsigned long served; /* requests answered */
    char peer[64];
    size_t peer_len;
    char head[SRV_HEAD_MAX];
    char *owned_body; /* an admin answer's body, freed after writing */
    struct srv_conn *prev, *next;
} srv_conn;

/* A new connection on listener `lh` (its handle is ready to accept). */
void srv_conn_accept(srv_lhandle *lh);
/* Out of memory for a new connection on `lh`: accepts and closes it. */
void srv_conn_drop(srv_lhandle *lh);
/* What every connection does first: initialises its stream handle `h`
 * (a TCP or pipe handle, by the listener's kind) and its `timer`, both
 * with data `owner`, counts it open (the caller's close callback counts it
 * closed), accepts it, and checks --max-connections and shutdown.
 * Returns 0 to serve it, -1 when the caller must close both handles. */
int srv_conn_admit(srv_lhandle *lh, uv_handle_t *h, uv_timer_t *timer, void *owner);

/* Shutdown: close idle connections now, the others after their answer. */
void srv_conn_stop_all(srv_worker *w);
/* The grace period is over: close everything. */
void srv_conn_close_all(srv_worker *w);

/* Monotonic nanoseconds. */
uint64_t srv_now_ns(void);

#endif /* CLI_SRV_CONN_H */
