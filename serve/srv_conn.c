/*
 * srv_conn.c: connections (see srv_conn.h).
 *
 * Input is appended to one buffer per connection and fed to llhttp, which
 * pauses at the end of each request head (we answer right away) and at
 * the end of each message (the next one may already be buffered:
 * pipelining). A body is skipped by llhttp, never stored. Consumed bytes
 * are dropped by moving what is left to the front of the buffer; spans
 * are offsets, so the request head survives that and a realloc.
 *
 * Answers are written with uv_try_write (one writev, no callback, the
 * common case on a local socket); only a short write falls back to
 * uv_write, and input is not parsed meanwhile, so answers keep their
 * order and the head buffer is never overwritten while queued.
 */
#include "srv_conn.h"
#include "srv_answer.h"
#include "srv_trust.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* After an error answer (or Connection: close), input is drained for at
 * most this long after our FIN, so the client reads the answer instead
 * of a reset caused by unread bytes. */
#define LINGER_MS 2000
#define INITIAL_IN 4096

static llhttp_settings_t settings;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;

static void init_settings(void)
{
    cm_http_settings(&settings);
}

uint64_t srv_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const srv_config *cfg_of(const srv_conn *c)
{
    return c->w->srv->cfg;
}

static void process(srv_conn *c);

/* ------------------------------------------------------------------------ */
/* Closing. */

static void on_closed(uv_handle_t *h)
{
    srv_conn *c = h->data;
    if (--c->open_handles > 0)
        return;
    srv_worker *w = c->w;
    if (c->prev)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    atomic_fetch_sub(&w->srv->g.conns_open, 1);
    cm_http_head_free(&c->req);
    free(c->in);
    free(c->owned_body);
    free(c);
    srv_worker_conn_closed(w);
}

static void conn_close(srv_conn *c)
{
    if (c->state == SRV_CLOSING)
        return;
    c->state = SRV_CLOSING;
    uv_close(&c->h.handle, on_closed);
    uv_close((uv_handle_t *)&c->timer, on_closed);
}

/* ------------------------------------------------------------------------ */
/* Timeouts. A state change only records when it happened (loop time, no
 * syscall); the timer is never restarted per request, which would cost
 * two heap operations each. It is armed at most the shorter of
 * --request-timeout and --keepalive-timeout ahead, and when it fires it
 * either acts or re-arms for what is left, so a state entered after it
 * was armed still ends on time. */

static void on_timer(uv_timer_t *t);

/* When the current state's time is up (loop milliseconds). */
static uint64_t deadline(const srv_conn *c)
{
    const srv_config *cfg = c->w->srv->cfg;
    switch (c->state) {
    case SRV_HEAD:
    case SRV_BODY:
        return c->since + cfg->request_timeout_ms;
    case SRV_IDLE: /* before a first request, a client gets the short wait */
        return c->since + (c->served ? cfg->keepalive_timeout_ms : cfg->request_timeout_ms);
    default:
        return c->since + LINGER_MS;
    }
}

static void arm(srv_conn *c)
{
    const srv_config *cfg = c->w->srv->cfg;
    uint64_t now = uv_now(&c->w->loop), due = deadline(c);
    /* never later than the shortest deadline a state change can set */
    uint64_t cap = now + (cfg->request_timeout_ms < cfg->keepalive_timeout_ms
                              ? cfg->request_timeout_ms : cfg->keepalive_timeout_ms);
    if (due > cap)
        due = cap;
    uv_timer_start(&c->timer, on_timer, due > now ? due - now : 0, 0);
}

static void enter(srv_conn *c, int state)
{
    c->state = state;
    c->since = uv_now(&c->w->loop);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)req;
    (void)status; /* the linger timer or EOF closes */
}

static void start_linger(srv_conn *c)
{
    if (c->state == SRV_CLOSING)
        return;
    enter(c, SRV_LINGER);
    c->in_len = c->in_parsed = c->msg_start = 0;
    if (uv_shutdown(&c->sreq, &c->h.stream, on_shutdown) != 0) {
        conn_close(c);
        return;
    }
    arm(c);
}

/* ------------------------------------------------------------------------ */
/* Writing. */

static void after_answer_written(srv_conn *c)
{
    free(c->owned_body);
    c->owned_body = NULL;
    if (c->close_after)
        start_linger(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void on_write(uv_write_t *req, int status)
{
    srv_conn *c = req->data;
    c->writing = 0;
    if (c->state == SRV_CLOSING)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    after_answer_written(c);
    if (c->state == SRV_LINGER || c->state == SRV_CLOSING)
        return;
    uv_read_start(&c->h.stream, on_alloc, on_read);
    process(c); /* pipelined input waiting behind this answer */
}

static void send_answer(srv_conn *c, const srv_answer *a)
{
    size_t date_len;
    const char *date = srv_worker_date(c->w, &date_len);
    size_t hl = srv_response_head(c->head, a, date, date_len);
    uv_buf_t bufs[2];
    unsigned nb = 1;
    bufs[0] = uv_buf_init(c->head, (unsigned)hl);
    if (!a->head_only && a->body_len > 0)
        bufs[nb++] = uv_buf_init((char *)a->body, (unsigned)a->body_len);
    size_t total = hl + (nb > 1 ? a->body_len : 0);

    c->close_after = a->close;
    int n = uv_try_write(&c->h.stream, bufs, nb);
    if (n >= 0 && (size_t)n == total) {
        after_answer_written(c);
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    unsigned first = 0;
    while (first < nb && done >= bufs[first].len)
        done -= bufs[first++].len;
    bufs[first].base += done;
    bufs[first].len -= done;
    c->wreq.data = c;
    c->writing = 1;
    uv_read_stop(&c->h.stream); /* answers in order; the head buffer stays put */
    if (uv_write(&c->wreq, &c->h.stream, bufs + first, nb - first, on_write) != 0) {
        c->writing = 0;
        conn_close(c);
    }
}

/* ------------------------------------------------------------------------ */
/* Answers. */

static void count_error(srv_conn *c, unsigned status)
{
    srv_metrics *m = &c->w->metrics;
    int kind = status == 431 ? SRV_ERR_431 : status == 408 ? SRV_ERR_408
             : status == 404 ? SRV_ERR_404 : SRV_ERR_400;
    srv_count(&m->errors[kind], 1);
}

/* 400, 408 or 431, then close. Once this request has been answered (a
 * bad chunked body, say), there is nothing left to say: close. */
static void answer_error(srv_conn *c, unsigned status)
{
    if (c->state == SRV_CLOSING || c->state == SRV_LINGER)
        return;
    count_error(c, status);
    if (c->state == SRV_BODY || c->writing) {
        conn_close(c);
        return;
    }
    srv_answer a;
    memset(&a, 0, sizeof a);
    a.status = status;
    a.verdict = -1;
    a.body = status == 431 ? "Request Header Fields Too Large\n"
           : status == 408 ? "Request Timeout\n" : "Bad Request\n";
    a.body_len = strlen(a.body);
    a.content_type = "text/plain; charset=utf-8";
    a.close = 1;
    c->state = SRV_BODY;
    send_answer(c, &a);
}

static void answer_request(srv_conn *c)
{
    srv_worker *w = c->w;
    srv_answer a;
    memset(&a, 0, sizeof a);
    a.verdict = -1;
    c->state = SRV_BODY; /* the request's clock keeps running for its body */
    c->served++;
    srv_answer_request(c, &a);
    /* An upgrade (or CONNECT) we decline leaves the stream in an unknown
     * state; a 100-continue request whose body we do not wait for may or
     * may not follow: close in both cases rather than guess. */
    if (!llhttp_should_keep_alive(&c->parser) || c->parser.upgrade || w->stopping)
        a.close = 1;
    if (a.status == 404)
        count_error(c, 404);
    send_answer(c, &a);
    uint64_t us = (srv_now_ns() - c->t0_ns) / 1000;
    if (a.verdict >= 0 || c->l->proto != SRV_ADMIN)
        srv_metrics_latency(&w->metrics, us);
    srv_answer_log(c, &a, us);
}

static void begin_request(srv_conn *c)
{
    enter(c, SRV_HEAD);
    c->msg_start = c->in_parsed;
    c->t0_ns = srv_now_ns();
}

static void message_done(srv_conn *c)
{
    if (c->close_after || c->state == SRV_LINGER || c->state == SRV_CLOSING)
        return; /* linger (or close) takes over */
    if (c->w->stopping && c->in_parsed == c->in_len) {
        conn_close(c);
        return;
    }
    if (c->in_parsed < c->in_len) {
        begin_request(c);
    } else {
        enter(c, SRV_IDLE);
    }
}

/* ------------------------------------------------------------------------ */
/* Reading and parsing. */

/* Drops consumed input: everything before the current request head, or
 * everything parsed when no head is being read. */
static void compact(srv_conn *c)
{
    size_t keep = c->state == SRV_HEAD ? c->msg_start : c->in_parsed;
    if (keep == 0)
        return;
    memmove(c->in, c->in + keep, c->in_len - keep);
    c->in_len -= keep;
    c->in_parsed -= keep;
    c->msg_start = c->msg_start >= keep ? c->msg_start - keep : 0;
    if (c->state == SRV_HEAD)
        cm_http_head_shift(&c->req, (uint32_t)keep);
}

static void process(srv_conn *c)
{
    /* After a head, llhttp has the end of a body-less message still to
     * report, without needing another byte: run it once more even when
     * the buffer is used up, or the connection would look busy (and time
     * out) until the next request arrived. */
    int kick = 0;
    while (!c->writing && (c->in_parsed < c->in_len || kick) &&
           (c->state == SRV_HEAD || c->state == SRV_BODY || c->state == SRV_IDLE)) {
        kick = 0;
        if (c->state == SRV_IDLE)
            begin_request(c);
        size_t used;
        cm_http_feed_result ev = cm_http_feed(&c->parser, c->in + c->in_parsed,
                                   c->in_len - c->in_parsed, &used);
        if (ev == CM_HTTP_ERROR) {
            answer_error(c, c->req.err_status);
            return;
        }
        c->in_parsed += used;
        if (ev == CM_HTTP_HEAD) {
            answer_request(c);
            kick = 1;
        } else if (ev == CM_HTTP_END) {
            message_done(c);
        } else {
            break; /* all parsed; or an upgrade, answered and closing already */
        }
    }
    if (c->state != SRV_HEAD && c->state != SRV_BODY && c->state != SRV_IDLE)
        return;
    compact(c);
    if (c->state == SRV_HEAD && c->in_len >= cfg_of(c)->max_header_bytes)
        answer_error(c, 431);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    srv_conn *c = h->data;
    size_t max = cfg_of(c)->max_header_bytes;
    (void)suggested;
    if (c->state == SRV_LINGER)
        c->in_len = 0; /* drained input is thrown away */
    if (c->in_len == c->in_cap && c->in_cap < max) {
        size_t ncap = c->in_cap ? c->in_cap * 2 : INITIAL_IN;
        if (ncap > max)
            ncap = max;
        char *n = realloc(c->in, ncap);
        if (n != NULL) {
            c->in = n;
            c->in_cap = ncap;
        }
    }
    /* a zero-length buffer makes libuv report UV_ENOBUFS: the head is
     * larger than --max-header-bytes */
    *buf = uv_buf_init(c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    srv_conn *c = s->data;
    (void)buf;
    if (n == 0 || c->state == SRV_CLOSING)
        return;
    if (c->state == SRV_LINGER) {
        if (n < 0)
            conn_close(c);
        return;
    }
    if (n == UV_ENOBUFS) { /* no room: a head too large, or no memory to grow */
        if (c->in_cap < cfg_of(c)->max_header_bytes)
            conn_close(c);
        else
            answer_error(c, 431);
        return;
    }
    if (n < 0) { /* EOF or a reset: nobody left to answer */
        conn_close(c);
        return;
    }
    c->in_len += (size_t)n;
    process(c);
}

static void on_timer(uv_timer_t *t)
{
    srv_conn *c = t->data;
    if (uv_now(&c->w->loop) < deadline(c)) {
        arm(c);
        return;
    }
    switch (c->state) {
    case SRV_HEAD:
        srv_count(&c->w->metrics.conns_timed_out, 1);
        answer_error(c, 408); /* slowloris: cut with an answer */
        break;
    case SRV_BODY:
        srv_count(&c->w->metrics.conns_timed_out, 1);
        conn_close(c);
        break;
    default:
        conn_close(c);
    }
}

/* ------------------------------------------------------------------------ */
/* Accepting. */

static void on_reject_closed(uv_handle_t *h)
{
    free(h);
}

static void peer_text(srv_conn *c)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    c->peer_len = 0;
    c->peer[0] = '\0';
    if (c->l->is_unix) {
        /* A Unix-socket peer is on this machine: 127.0.0.1, so that
         * --trust-proxy 127.0.0.1 trusts the proxy talking over it. */
        memcpy(c->peer, "127.0.0.1", 10);
    } else if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET)
            uv_ip4_name((struct sockaddr_in *)&ss, c->peer, sizeof c->peer);
        else if (ss.ss_family == AF_INET6)
            uv_ip6_name((struct sockaddr_in6 *)&ss, c->peer, sizeof c->peer);
    }
    c->peer_len = strlen(c->peer);
}

void srv_conn_drop(srv_lhandle *lh)
{
    /* Accepted into a bare handle and closed, or libuv would stop
     * watching this listener. */
    srv_worker *w = lh->w;
    uv_tcp_t *t = malloc(sizeof(uv_pipe_t) > sizeof(uv_tcp_t) ? sizeof(uv_pipe_t) : sizeof(uv_tcp_t));
    if (t == NULL)
        return;
    if (lh->l->is_unix)
        uv_pipe_init(&w->loop, (uv_pipe_t *)t, 0);
    else
        uv_tcp_init(&w->loop, t);
    uv_accept(&lh->h.stream, (uv_stream_t *)t);
    uv_close((uv_handle_t *)t, on_reject_closed);
    srv_log_error("out of memory: a connection was dropped");
}

int srv_conn_admit(srv_lhandle *lh, uv_handle_t *h, uv_timer_t *timer, void *owner)
{
    srv_worker *w = lh->w;
    srv_server *srv = w->srv;
    if (lh->l->is_unix)
        uv_pipe_init(&w->loop, (uv_pipe_t *)h, 0);
    else
        uv_tcp_init(&w->loop, (uv_tcp_t *)h);
    uv_timer_init(&w->loop, timer);
    h->data = owner;
    timer->data = owner;
    long open = atomic_fetch_add(&srv->g.conns_open, 1) + 1;
    if (uv_accept(&lh->h.stream, (uv_stream_t *)h) != 0)
        return -1;
    srv_count(&w->metrics.conns_accepted, 1);
    if (open > (long)srv->cfg->max_connections || w->stopping) {
        srv_count(&w->metrics.conns_refused, 1);
        return -1;
    }
    if (!lh->l->is_unix)
        uv_tcp_nodelay((uv_tcp_t *)h, 1);
    return 0;
}

void srv_conn_accept(srv_lhandle *lh)
{
    srv_worker *w = lh->w;
    srv_server *srv = w->srv;
    pthread_once(&settings_once, init_settings);

    srv_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        srv_conn_drop(lh);
        return;
    }
    c->w = w;
    c->l = lh->l;
    c->open_handles = 2;
    c->state = SRV_IDLE;
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    if (srv_conn_admit(lh, &c->h.handle, &c->timer, c) != 0) {
        conn_close(c);
        return;
    }
    if (cm_http_head_init(&c->req, &c->in, srv->cfg->max_headers) != 0) {
        conn_close(c);
        return;
    }
    llhttp_init(&c->parser, HTTP_REQUEST, &settings);
    c->parser.data = &c->req;
    peer_text(c);
    enter(c, SRV_IDLE);
    arm(c);
    if (uv_read_start(&c->h.stream, on_alloc, on_read) != 0)
        conn_close(c);
}

/* ------------------------------------------------------------------------ */
/* Shutdown. */

void srv_conn_stop_all(srv_worker *w)
{
    srv_conn *next;
    for (srv_conn *c = w->conns; c != NULL; c = next) {
        next = c->next;
        if (c->state == SRV_IDLE && c->in_parsed == c->in_len && !c->writing)
            conn_close(c);
    }
}

void srv_conn_close_all(srv_worker *w)
{
    srv_conn *next;
    for (srv_conn *c = w->conns; c != NULL; c = next) {
        next = c->next;
        conn_close(c);
    }
}
