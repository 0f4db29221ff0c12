/*
 * srv_spoa.c: SPOA connections (see srv_spoa.h).
 *
 * Input is appended to the connection's buffer; each whole frame in it is
 * handled in turn (spop_frame_split: a frame is never longer than the
 * buffer, or the connection ends with status 3), and the bytes used are
 * moved out at the end of a batch. Answers go into the output buffer and
 * are written once per batch with uv_try_write; a short write falls back
 * to uv_write, and input is neither read nor handled meanwhile, so ACKs
 * leave in the order their NOTIFY frames came and the buffer stays put.
 *
 * What we say in the AGENT-HELLO: version 2.0, the smaller of HAProxy's
 * max-frame-size and ours, and the capabilities pipelining and async
 * (each ACK goes back on the connection its NOTIFY came on, which async
 * allows). Not fragmentation: HAProxy then never fragments a NOTIFY
 * (a payload that does not fit fails its event with SPOE error 3), and a
 * fragment that comes anyway is refused with status 10.
 */
#include "srv_spoa.h"
#include "srv_conn.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define LINGER_MS 2000

enum spoa_state { SPOA_HELLO, SPOA_READY, SPOA_LINGER, SPOA_CLOSING };

static void process(srv_spoa *c);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
static void on_timer(uv_timer_t *t);

static const srv_config *cfg_of(const srv_spoa *c)
{
    return c->w->srv->cfg;
}

/* ------------------------------------------------------------------------ */
/* Closing. */

static void on_closed(uv_handle_t *h)
{
    srv_spoa *c = h->data;
    if (--c->open_handles > 0)
        return;
    srv_worker *w = c->w;
    if (c->prev)
        c->prev->next = c->next;
    else
        w->spoas = c->next;
    if (c->next)
        c->next->prev = c->prev;
    atomic_fetch_sub(&w->srv->g.conns_open, 1);
    free(c->in);
    free(c);
    srv_worker_conn_closed(w);
}

static void conn_close(srv_spoa *c)
{
    if (c->state == SPOA_CLOSING)
        return;
    c->state = SPOA_CLOSING;
    uv_close(&c->h.handle, on_closed);
    uv_close((uv_handle_t *)&c->timer, on_closed);
}

/* ------------------------------------------------------------------------ */
/* Timeouts: HELLO must come within --request-timeout, a quiet connection
 * is closed after --keepalive-timeout (HAProxy's `timeout idle` should be
 * shorter: then it closes first), LINGER lasts LINGER_MS. As in
 * srv_conn.c, a frame only records the time; the timer re-arms itself
 * for what is left when it fires early. */

static uint64_t deadline(const srv_spoa *c)
{
    const srv_config *cfg = cfg_of(c);
    switch (c->state) {
    case SPOA_HELLO: return c->since + cfg->request_timeout_ms;
    case SPOA_READY: return c->since + cfg->keepalive_timeout_ms;
    default: return c->since + LINGER_MS;
    }
}

static void arm(srv_spoa *c)
{
    uint64_t now = uv_now(&c->w->loop), due = deadline(c);
    uv_timer_start(&c->timer, on_timer, due > now ? due - now : 0, 0);
}

static void enter(srv_spoa *c, int state)
{
    int rearm = state != c->state && state != SPOA_READY;
    c->state = state;
    c->since = uv_now(&c->w->loop);
    if (rearm) /* a shorter deadline than the one armed */
        arm(c);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    (void)req;
    (void)status; /* the linger timer or EOF closes */
}

static void start_linger(srv_spoa *c)
{
    if (c->state == SPOA_CLOSING || c->state == SPOA_LINGER)
        return;
    enter(c, SPOA_LINGER);
    c->in_len = 0;
    if (uv_shutdown(&c->sreq, &c->h.stream, on_shutdown) != 0) {
        conn_close(c);
        return;
    }
    /* reading was stopped while a write was pending: drain until EOF */
    (void)uv_read_start(&c->h.stream, on_alloc, on_read);
}

/* ------------------------------------------------------------------------ */
/* Writing. */

static void after_written(srv_spoa *c)
{
    c->out_len = 0;
    if (c->linger_after)
        start_linger(c);
}

static void on_write(uv_write_t *req, int status)
{
    srv_spoa *c = req->data;
    c->writing = 0;
    if (c->state == SPOA_CLOSING)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    after_written(c);
    if (c->state != SPOA_HELLO && c->state != SPOA_READY)
        return;
    uv_read_start(&c->h.stream, on_alloc, on_read);
    process(c); /* frames read before this write went out */
}

/* Sends what out holds. */
static void flush(srv_spoa *c)
{
    if (c->writing || c->state == SPOA_CLOSING)
        return;
    if (c->out_len == 0) {
        after_written(c);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)c->out, (unsigned)c->out_len);
    int n = uv_try_write(&c->h.stream, &b, 1);
    if (n >= 0 && (size_t)n == c->out_len) {
        after_written(c);
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    c->wbuf = uv_buf_init((char *)c->out + done, (unsigned)(c->out_len - done));
    c->wreq.data = c;
    c->writing = 1;
    uv_read_stop(&c->h.stream);
    if (uv_write(&c->wreq, &c->h.stream, &c->wbuf, 1, on_write) != 0) {
        c->writing = 0;
        conn_close(c);
    }
}

/* Queues an AGENT-DISCONNECT; the connection ends once it is written. */
static void disconnect(srv_spoa *c, unsigned status)
{
    size_t n = spop_put_disconnect(c->out + c->out_len, sizeof c->out - c->out_len, status,
                                   spop_status_text(status));
    srv_count(&c->w->metrics.spoa_disconnects[status < SRV_SPOA_STATUSES ? status
                                                                        : SRV_SPOA_STATUSES],
              1);
    c->out_len += n;
    c->linger_after = 1;
    if (n == 0) /* no room: the batch's ACKs go, then the connection */
        srv_log_warn("%s (spoa): no room for a DISCONNECT frame", c->l->name);
}

/* ------------------------------------------------------------------------ */
/* Frames. */

static unsigned on_hello(srv_spoa *c, const spop_frame *f)
{
    spop_hello h;
    unsigned st = spop_hello_parse(f->payload, f->payload_len, &h);
    if (st != 0)
        return st;
    if (h.max_frame < c->max_frame)
        c->max_frame = (uint32_t)h.max_frame;
    size_t n = spop_put_agent_hello(c->out + c->out_len, sizeof c->out - c->out_len, c->max_frame,
                                    "pipelining,async");
    if (n == 0)
        return SPOP_ST_RESOURCE;
    c->out_len += n;
    if (h.healthcheck)
        c->linger_after = 1; /* SPOE.txt 3.2.5: the agent may close at once */
    else
        enter(c, SPOA_READY);
    return 0;
}

/* Handles one frame; returns 0, or the status to disconnect with. */
static unsigned on_frame(srv_spoa *c, const uint8_t *frame, size_t len)
{
    spop_frame f;
    unsigned st = spop_frame_parse(frame, len, &f);
    if (st != 0)
        return st;
    if (f.type == SPOP_HAPROXY_DISCONNECT) { /* answered, then closed */
        size_t n = spop_put_disconnect(c->out + c->out_len, sizeof c->out - c->out_len,
                                       SPOP_ST_NORMAL, spop_status_text(SPOP_ST_NORMAL));
        c->out_len += n;
        c->linger_after = 1;
        return 0;
    }
    /* We announced no fragmentation: a first fragment without FIN, or a
     * later one (UNSET), is refused. */
    if (f.type == SPOP_UNSET || ((f.type == SPOP_HAPROXY_HELLO || f.type == SPOP_NOTIFY) &&
                                 !(f.flags & SPOP_FL_FIN)))
        return SPOP_ST_NO_FRAGMENTATION;
    if (c->state == SPOA_HELLO)
        return f.type == SPOP_HAPROXY_HELLO ? on_hello(c, &f) : SPOP_ST_INVALID;
    switch (f.type) {
    case SPOP_NOTIFY: {
        size_t n = srv_spoa_answer(c, &f, c->out + c->out_len, sizeof c->out - c->out_len, &st);
        c->out_len += n;
        return st;
    }
    case SPOP_HAPROXY_HELLO:
    case SPOP_AGENT_HELLO:
    case SPOP_AGENT_DISCONNECT:
    case SPOP_ACK:
        return SPOP_ST_INVALID; /* out of place, or our own kind */
    default:
        return 0; /* SPOE.txt 3.2.2: unknown frames may be skipped */
    }
}

static void process(srv_spoa *c)
{
    size_t pos = 0;
    while (!c->writing && !c->linger_after &&
           (c->state == SPOA_HELLO || c->state == SPOA_READY)) {
        size_t flen;
        int r = spop_frame_split(c->in + pos, c->in_len - pos, c->max_frame, &flen);
        if (r == 0)
            break;
        unsigned st = r < 0 ? SPOP_ST_TOO_BIG : on_frame(c, c->in + pos + 4, flen);
        if (st != 0) {
            disconnect(c, st);
            break;
        }
        pos += 4 + flen;
        c->since = uv_now(&c->w->loop);
        if (sizeof c->out - c->out_len < SRV_SPOA_ACK_MAX)
            flush(c); /* a full batch: out again before the next frame */
    }
    if (c->state == SPOA_CLOSING)
        return;
    if (pos > 0) {
        memmove(c->in, c->in + pos, c->in_len - pos);
        c->in_len -= pos;
    }
    flush(c);
}

/* ------------------------------------------------------------------------ */
/* Reading. */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    srv_spoa *c = h->data;
    (void)suggested;
    if (c->state == SPOA_LINGER)
        c->in_len = 0; /* drained input is thrown away */
    *buf = uv_buf_init((char *)c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    srv_spoa *c = s->data;
    (void)buf;
    if (n == 0 || c->state == SPOA_CLOSING)
        return;
    if (n < 0 || c->state == SPOA_LINGER) {
        if (n < 0) /* EOF, a reset, or (never: a frame fits) no room */
            conn_close(c);
        return;
    }
    c->in_len += (size_t)n;
    c->t0_ns = srv_now_ns();
    process(c);
}

static void on_timer(uv_timer_t *t)
{
    srv_spoa *c = t->data;
    if (uv_now(&c->w->loop) < deadline(c)) {
        arm(c);
        return;
    }
    if (c->state == SPOA_HELLO || c->state == SPOA_READY) {
        if (c->state == SPOA_HELLO)
            srv_count(&c->w->metrics.conns_timed_out, 1);
        if (!c->writing) { /* linger once it is written */
            disconnect(c, SPOP_ST_TIMEOUT);
            flush(c);
            return;
        }
    }
    conn_close(c);
}

/* ------------------------------------------------------------------------ */
/* Accepting and stopping. */

void srv_spoa_accept(srv_lhandle *lh)
{
    srv_worker *w = lh->w;
    srv_server *srv = w->srv;
    srv_spoa *c = calloc(1, sizeof *c);
    uint8_t *in = malloc(4 + (size_t)srv->cfg->max_header_bytes);
    if (c == NULL || in == NULL) {
        free(c);
        free(in);
        srv_conn_drop(lh);
        return;
    }
    c->w = w;
    c->l = lh->l;
    c->in = in;
    c->in_cap = 4 + (size_t)srv->cfg->max_header_bytes;
    c->max_frame = (uint32_t)srv->cfg->max_header_bytes;
    c->open_handles = 2;
    c->state = SPOA_HELLO;
    c->next = w->spoas;
    if (w->spoas)
        w->spoas->prev = c;
    w->spoas = c;
    if (srv_conn_admit(lh, &c->h.handle, &c->timer, c) != 0) {
        conn_close(c);
        return;
    }
    c->since = uv_now(&w->loop);
    arm(c);
    if (uv_read_start(&c->h.stream, on_alloc, on_read) != 0)
        conn_close(c);
}

void srv_spoa_stop_all(srv_worker *w)
{
    srv_spoa *next;
    for (srv_spoa *c = w->spoas; c != NULL; c = next) {
        next = c->next;
        if (c->state == SPOA_HELLO || c->state == SPOA_READY) {
            if (c->writing) {
                c->linger_after = 1; /* after what is being written */
                continue;
            }
            disconnect(c, SPOP_ST_NORMAL);
            flush(c);
        }
    }
}

void srv_spoa_close_all(srv_worker *w)
{
    srv_spoa *next;
    for (srv_spoa *c = w->spoas; c != NULL; c = next) {
        next = c->next;
        conn_close(c);
    }
}
