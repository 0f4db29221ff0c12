/*
 * srv_redis.c: the Redis connection for shared state (srv_redis.h).
 *
 * States: WAIT (the back-off timer runs), RESOLVING (uv_getaddrinfo on
 * libuv's thread pool, so a slow DNS holds no loop), CONNECTING,
 * HANDSHAKE (AUTH, SELECT, PING in flight), UP, CLOSED. One timer serves
 * all of them: the back-off in WAIT, else the deadline of the connection
 * attempt or of the oldest command in flight.
 */
#include "srv_redis.h"
#include "srv_log.h"
#include "srv_metrics.h"
#include "srv_redis_proto.h"

#include <hiredis/read.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

const char *const srv_redis_fail_names[SRV_REDIS_F_KINDS] = {"connect", "closed", "timeout",
                                                             "protocol", "reply"};

enum rstate { R_WAIT, R_RESOLVING, R_CONNECTING, R_HANDSHAKE, R_UP, R_CLOSED };

typedef struct rconn {
    union {
        uv_tcp_t tcp;
        uv_pipe_t pipe;
        uv_stream_t stream;
        uv_handle_t handle;
    } h;
    uv_connect_t creq;
    srv_redis_reader rd;
    struct srv_redis *r;
    int dead;
    char rbuf[65536];
} rconn;

typedef struct pend {
    srv_redis_reply_fn cb;
    void *ud;
    uint64_t sent; /* uv_now */
} pend;

typedef struct wreq {
    uv_write_t req;
    rconn *c;
    char *buf;
} wreq;

struct srv_redis {
    uv_loop_t *loop;
    srv_redis_url url;
    char name[SRV_REDIS_HOST_MAX + SRV_REDIS_PATH_MAX + 32];
    uint64_t timeout_ms;
    srv_redis_stats *st;
    srv_redis_state_fn on_state;
    srv_redis_push_fn push;
    void *ud;
    enum rstate state;
    uv_timer_t timer;
    uint64_t deadline; /* CONNECTING, HANDSHAKE: of the attempt */
    uv_getaddrinfo_t gai;
    int gai_busy;
    rconn *conn;
    pend *pend; /* ring */
    size_t phead, pcount, pcap;
    char *out; /* formatted commands not yet written */
    size_t outlen, outcap;
    uint64_t backoff_ms;
    uint64_t up_at; /* uv_now when the handshake was done */
    unsigned attempts; /* failed since the last time up */
    int outage_logged;
    int refs; /* the timer, a connection closing, a lookup: r is freed at 0 */
    uint64_t seed;
};

static void arm(srv_redis *r);
static void start_attempt(srv_redis *r);

static uint64_t unix_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static void unref(srv_redis *r)
{
    if (--r->refs == 0) {
        free(r->pend);
        free(r->out);
        free(r);
    }
}

/* ------------------------------------------------------------------------ */
/* Dropping a connection. */

static void conn_closed(uv_handle_t *h)
{
    rconn *c = h->data;
    srv_redis *r = c->r;
    srv_redis_reader_free(&c->rd);
    free(c);
    unref(r);
}

static void close_conn(srv_redis *r)
{
    rconn *c = r->conn;
    if (c == NULL)
        return;
    r->conn = NULL;
    c->dead = 1;
    uv_close(&c->h.handle, conn_closed);
}

/* Every command in flight gets a NULL reply; callbacks may send nothing
 * (the state is no longer UP when this runs). */
static void fail_pending(srv_redis *r)
{
    while (r->pcount > 0) {
        pend p = r->pend[r->phead];
        r->phead = (r->phead + 1) % r->pcap;
        r->pcount--;
        if (p.cb != NULL)
            p.cb(p.ud, NULL);
    }
    r->phead = 0;
    r->outlen = 0;
}

/* Up to 25% off, so that a fleet that lost Redis together does not come
 * back in step. */
static uint64_t jitter(srv_redis *r, uint64_t ms)
{
    r->seed = r->seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return ms - (ms / 4) * ((r->seed >> 33) % 1000) / 1000;
}

static void drop(srv_redis *r, enum srv_redis_fail kind, const char *why)
{
    if (r->state == R_CLOSED || r->state == R_WAIT)
        return;
    int was_up = r->state == R_UP;
    srv_count(&r->st->failures[kind], 1);
    r->state = R_WAIT;
    close_conn(r);
    if (was_up) {
        atomic_store(&r->st->up, 0);
        atomic_store(&r->st->down_since_ms, unix_ms());
        srv_log_warn("state-redis %s: lost (%s: %s): serving with this instance's counts "
                     "only; reconnecting", r->name, srv_redis_fail_names[kind], why);
        r->outage_logged = 1;
    } else if (!r->outage_logged) {
        srv_log_warn("state-redis %s: unreachable (%s: %s): serving with this instance's "
                     "counts only; retrying every %g s at most", r->name,
                     srv_redis_fail_names[kind], why, SRV_REDIS_BACKOFF_MAX_MS / 1000.0);
        r->outage_logged = 1;
    }
    r->attempts++;
    /* Only a connection that lasted starts the back-off afresh: a peer
     * that passes the handshake and then misbehaves is retried ever more
     * slowly, like one that refuses. */
    if (was_up && uv_now(r->loop) - r->up_at >= SRV_REDIS_HEALTHY_MS)
        r->backoff_ms = SRV_REDIS_BACKOFF_MIN_MS;
    fail_pending(r);
    if (was_up && r->on_state != NULL)
        r->on_state(r->ud, 0);
    if (r->state != R_WAIT) /* the callback closed it */
        return;
    uint64_t wait = jitter(r, r->backoff_ms);
    r->backoff_ms = r->backoff_ms * 2 > SRV_REDIS_BACKOFF_MAX_MS ? SRV_REDIS_BACKOFF_MAX_MS
                                                                  : r->backoff_ms * 2;
    r->deadline = uv_now(r->loop) + wait;
    arm(r);
}

/* ------------------------------------------------------------------------ */
/* The timer. */

static void on_timer(uv_timer_t *t)
{
    srv_redis *r = t->data;
    uint64_t now = uv_now(r->loop);
    switch (r->state) {
    case R_WAIT:
        start_attempt(r);
        return;
    case R_RESOLVING:
    case R_CONNECTING:
        if (now >= r->deadline) {
            char why[64];
            snprintf(why, sizeof why, "no connection within %g s", r->timeout_ms / 1000.0);
            if (r->state == R_RESOLVING) {
                /* the lookup cannot be taken back: its answer is ignored */
                r->state = R_CONNECTING;
            }
            drop(r, SRV_REDIS_F_TIMEOUT, why);
            return;
        }
        break;
    case R_HANDSHAKE:
    case R_UP:
        if (r->pcount > 0 && now >= r->pend[r->phead].sent + r->timeout_ms) {
            char why[64];
            snprintf(why, sizeof why, "no reply within %g s", r->timeout_ms / 1000.0);
            drop(r, SRV_REDIS_F_TIMEOUT, why);
            return;
        }
        break;
    case R_CLOSED:
        return;
    }
    arm(r);
}

/* Sets the timer to the next thing it waits for. */
static void arm(srv_redis *r)
{
    uint64_t now = uv_now(r->loop), at;
    switch (r->state) {
    case R_WAIT:
    case R_RESOLVING:
    case R_CONNECTING:
        at = r->deadline;
        break;
    case R_HANDSHAKE:
    case R_UP:
        if (r->pcount == 0) {
            uv_timer_stop(&r->timer);
            return;
        }
        at = r->pend[r->phead].sent + r->timeout_ms;
        break;
    default:
        return;
    }
    uv_timer_start(&r->timer, on_timer, at > now ? at - now : 0, 0);
}

/* ------------------------------------------------------------------------ */
/* Writing. */

static void on_written(uv_write_t *req, int status)
{
    wreq *w = (wreq *)req;
    rconn *c = w->c;
    free(w->buf);
    free(w);
    if (status < 0 && !c->dead)
        drop(c->r, SRV_REDIS_F_CLOSED, uv_strerror(status));
}

void srv_redis_flush(srv_redis *r)
{
    if (r->conn == NULL || r->outlen == 0 || (r->state != R_UP && r->state != R_HANDSHAKE))
        return;
    wreq *w = malloc(sizeof *w);
    if (w == NULL) {
        drop(r, SRV_REDIS_F_CLOSED, "out of memory");
        return;
    }
    w->c = r->conn;
    w->buf = r->out;
    uv_buf_t b = uv_buf_init(r->out, (unsigned)r->outlen);
    r->out = NULL;
    r->outlen = r->outcap = 0;
    int rc = uv_write(&w->req, &r->conn->h.stream, &b, 1, on_written);
    if (rc != 0) {
        free(w->buf);
        free(w);
        drop(r, SRV_REDIS_F_CLOSED, uv_strerror(rc));
    }
}

static int queue(srv_redis *r, int argc, const char **argv, const size_t *lens,
                 srv_redis_reply_fn cb, void *ud)
{
    if (r->pcount >= SRV_REDIS_MAX_PENDING)
        return -1;
    char *cmd;
    int n = redisFormatCommandArgv(&cmd, argc, argv, lens);
    if (n < 0)
        return -1;
    if (r->outlen + (size_t)n > r->outcap) {
        size_t cap = r->outcap ? r->outcap : 4096;
        while (cap < r->outlen + (size_t)n)
            cap *= 2;
        char *o = realloc(r->out, cap);
        if (o == NULL) {
            redisFreeCommand(cmd);
            return -1;
        }
        r->out = o;
        r->outcap = cap;
    }
    if (r->pcount == r->pcap) {
        size_t cap = r->pcap ? r->pcap * 2 : 64;
        pend *p = malloc(cap * sizeof *p);
        if (p == NULL) {
            redisFreeCommand(cmd);
            return -1;
        }
        for (size_t i = 0; i < r->pcount; i++)
            p[i] = r->pend[(r->phead + i) % r->pcap];
        free(r->pend);
        r->pend = p;
        r->pcap = cap;
        r->phead = 0;
    }
    memcpy(r->out + r->outlen, cmd, (size_t)n);
    r->outlen += (size_t)n;
    redisFreeCommand(cmd);
    r->pend[(r->phead + r->pcount) % r->pcap] = (pend){cb, ud, uv_now(r->loop)};
    if (r->pcount++ == 0 && r->state != R_CONNECTING)
        arm(r);
    srv_count(&r->st->commands, 1);
    return 0;
}

int srv_redis_send(srv_redis *r, int argc, const char **argv, const size_t *lens,
                   srv_redis_reply_fn cb, void *ud)
{
    if (r->state != R_UP)
        return -1;
    return queue(r, argc, argv, lens, cb, ud);
}

/* ------------------------------------------------------------------------ */
/* Reading. */

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
    rconn *c = h->data;
    (void)want;
    *buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void dispatch(rconn *c, redisReply *reply)
{
    srv_redis *r = c->r;
    if (r->pcount == 0) {
        if (r->push != NULL && r->state == R_UP) {
            srv_count(&r->st->replies, 1);
            r->push(r->ud, reply);
            freeReplyObject(reply);
            return;
        }
        freeReplyObject(reply);
        drop(r, SRV_REDIS_F_PROTOCOL, "a reply to no command");
        return;
    }
    pend p = r->pend[r->phead];
    r->phead = (r->phead + 1) % r->pcap;
    r->pcount--;
    srv_count(&r->st->replies, 1);
    if (p.cb != NULL)
        p.cb(p.ud, reply);
    freeReplyObject(reply);
    if (!c->dead)
        arm(r);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    rconn *c = s->data;
    srv_redis *r = c->r;
    if (c->dead || nread == 0)
        return;
    if (nread < 0) {
        drop(r, SRV_REDIS_F_CLOSED, nread == UV_EOF ? "closed by the peer" : uv_strerror((int)nread));
        return;
    }
    if (redisReaderFeed(c->rd.rd, buf->base, (size_t)nread) != REDIS_OK) {
        drop(r, SRV_REDIS_F_PROTOCOL, "out of memory");
        return;
    }
    while (!c->dead) {
        void *reply = NULL;
        if (redisReaderGetReply(c->rd.rd, &reply) != REDIS_OK) {
            char why[160];
            snprintf(why, sizeof why, "not the Redis protocol: %s", c->rd.rd->errstr);
            drop(r, SRV_REDIS_F_PROTOCOL, why);
            return;
        }
        if (reply == NULL)
            break;
        dispatch(c, reply);
    }
    if (!c->dead && c->rd.rd->len - c->rd.rd->pos > SRV_REDIS_MAX_BUFFERED)
        drop(r, SRV_REDIS_F_PROTOCOL, "a reply larger than 4 MiB");
}

/* ------------------------------------------------------------------------ */
/* Connecting and the handshake. */

static int status_is(const redisReply *rep, const char *want)
{
    return rep != NULL && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, want) == 0;
}

static void handshake_failed(srv_redis *r, const redisReply *rep, const char *cmd)
{
    char why[200];
    if (rep->type == REDIS_REPLY_ERROR)
        snprintf(why, sizeof why, "%s: %.150s", cmd, rep->str);
    else
        snprintf(why, sizeof why, "%s: an unexpected reply (type %d)", cmd, rep->type);
    drop(r, rep->type == REDIS_REPLY_ERROR ? SRV_REDIS_F_REPLY : SRV_REDIS_F_PROTOCOL, why);
}

static void on_hs_ok(void *ud, const redisReply *rep)
{
    srv_redis *r = ud;
    if (rep != NULL && r->state == R_HANDSHAKE && !status_is(rep, "OK"))
        handshake_failed(r, rep, "AUTH or SELECT");
}

static void on_pong(void *ud, const redisReply *rep)
{
    srv_redis *r = ud;
    if (rep == NULL || r->state != R_HANDSHAKE)
        return;
    if (!status_is(rep, "PONG")) {
        handshake_failed(r, rep, "PING");
        return;
    }
    uint64_t down = atomic_load(&r->st->down_since_ms);
    r->state = R_UP;
    r->up_at = uv_now(r->loop);
    atomic_store(&r->st->up, 1);
    atomic_store(&r->st->down_since_ms, 0);
    srv_count(&r->st->connects, 1);
    if (r->outage_logged)
        srv_log_info("state-redis %s: connected again after %.1f s and %u failed attempts; "
                     "catching up", r->name, down ? (double)(unix_ms() - down) / 1000 : 0.0,
                     r->attempts);
    else
        srv_log_info("state-redis %s: connected", r->name);
    r->outage_logged = 0;
    r->attempts = 0;
    if (r->on_state != NULL)
        r->on_state(r->ud, 1);
}

static void on_connect(uv_connect_t *req, int status)
{
    rconn *c = req->data;
    srv_redis *r = c->r;
    if (c->dead)
        return;
    if (status < 0) {
        drop(r, SRV_REDIS_F_CONNECT, uv_strerror(status));
        return;
    }
    int rc = uv_read_start(&c->h.stream, on_alloc, on_read);
    if (rc != 0) {
        drop(r, SRV_REDIS_F_CONNECT, uv_strerror(rc));
        return;
    }
    r->state = R_HANDSHAKE;
    int bad = 0;
    if (r->url.has_password) {
        const char *argv[3] = {"AUTH", r->url.user, r->url.password};
        size_t lens[3] = {4, strlen(r->url.user), strlen(r->url.password)};
        if (lens[1] == 0)
            bad |= queue(r, 2, (const char *[]){"AUTH", r->url.password},
                         (size_t[]){4, lens[2]}, on_hs_ok, r);
        else
            bad |= queue(r, 3, argv, lens, on_hs_ok, r);
    }
    if (r->url.db != 0) {
        char db[16];
        int n = snprintf(db, sizeof db, "%u", r->url.db);
        bad |= queue(r, 2, (const char *[]){"SELECT", db}, (size_t[]){6, (size_t)n}, on_hs_ok, r);
    }
    bad |= queue(r, 1, (const char *[]){"PING"}, (size_t[]){4}, on_pong, r);
    if (bad) {
        drop(r, SRV_REDIS_F_CONNECT, "out of memory");
        return;
    }
    srv_redis_flush(r);
    arm(r);
}

static rconn *new_conn(srv_redis *r)
{
    rconn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->r = r;
    if (srv_redis_reader_init(&c->rd) != 0) {
        free(c);
        return NULL;
    }
    c->h.handle.data = c;
    c->creq.data = c;
    return c;
}

static void connect_to(srv_redis *r, const struct sockaddr *sa)
{
    rconn *c = new_conn(r);
    if (c == NULL) {
        drop(r, SRV_REDIS_F_CONNECT, "out of memory");
        return;
    }
    r->state = R_CONNECTING;
    int rc;
    if (r->url.is_unix) {
        uv_pipe_init(r->loop, &c->h.pipe, 0);
        r->conn = c;
        r->refs++;
        uv_pipe_connect(&c->creq, &c->h.pipe, r->url.path, on_connect);
        return;
    }
    uv_tcp_init(r->loop, &c->h.tcp);
    r->conn = c;
    r->refs++;
    uv_tcp_nodelay(&c->h.tcp, 1);
    uv_tcp_keepalive(&c->h.tcp, 1, 60);
    rc = uv_tcp_connect(&c->creq, &c->h.tcp, sa, on_connect);
    if (rc != 0)
        drop(r, SRV_REDIS_F_CONNECT, uv_strerror(rc));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    srv_redis *r = req->data;
    r->gai_busy = 0;
    if (r->state == R_RESOLVING) {
        if (status < 0 || res == NULL) {
            char why[300];
            snprintf(why, sizeof why, "%s: %s", r->url.host,
                     status < 0 ? uv_strerror(status) : "no address");
            r->state = R_CONNECTING; /* for drop: an attempt failed */
            drop(r, SRV_REDIS_F_CONNECT, why);
        } else {
            connect_to(r, res->ai_addr);
        }
    }
    uv_freeaddrinfo(res);
    unref(r);
}

static void start_attempt(srv_redis *r)
{
    r->deadline = uv_now(r->loop) + r->timeout_ms;
    if (r->url.is_unix) {
        connect_to(r, NULL);
    } else {
        struct sockaddr_storage ss;
        if (uv_ip4_addr(r->url.host, (int)r->url.port, (struct sockaddr_in *)&ss) == 0 ||
            uv_ip6_addr(r->url.host, (int)r->url.port, (struct sockaddr_in6 *)&ss) == 0) {
            connect_to(r, (const struct sockaddr *)&ss);
        } else if (r->gai_busy) {
            /* the last lookup has not come back: wait for it */
            r->state = R_RESOLVING;
        } else {
            char port[8];
            snprintf(port, sizeof port, "%u", r->url.port);
            struct addrinfo hints;
            memset(&hints, 0, sizeof hints);
            hints.ai_socktype = SOCK_STREAM;
            r->gai.data = r;
            r->state = R_RESOLVING;
            int rc = uv_getaddrinfo(r->loop, &r->gai, on_resolved, r->url.host, port, &hints);
            if (rc != 0) {
                r->state = R_CONNECTING;
                drop(r, SRV_REDIS_F_CONNECT, uv_strerror(rc));
                return;
            }
            r->gai_busy = 1;
            r->refs++;
        }
    }
    if (r->state == R_RESOLVING || r->state == R_CONNECTING)
        arm(r);
}

/* ------------------------------------------------------------------------ */

srv_redis *srv_redis_new(uv_loop_t *loop, const srv_redis_url *url, uint64_t timeout_ms,
                         srv_redis_stats *st, srv_redis_state_fn on_state,
                         srv_redis_push_fn push, const char *role, void *ud)
{
    srv_redis *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->loop = loop;
    r->url = *url;
    srv_redis_url_name(url, r->name, sizeof r->name);
    if (role != NULL) {
        size_t n = strlen(r->name);
        snprintf(r->name + n, sizeof r->name - n, " (%s)", role);
    }
    r->timeout_ms = timeout_ms;
    r->st = st;
    r->on_state = on_state;
    r->push = push;
    r->ud = ud;
    r->backoff_ms = SRV_REDIS_BACKOFF_MIN_MS;
    r->seed = unix_ms() ^ (uint64_t)(uintptr_t)r;
    atomic_store(&st->down_since_ms, unix_ms());
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    r->refs = 1;
    r->state = R_WAIT;
    start_attempt(r);
    return r;
}

int srv_redis_up(const srv_redis *r)
{
    return r->state == R_UP;
}

size_t srv_redis_pending(const srv_redis *r)
{
    return r->pcount;
}

void srv_redis_fail(srv_redis *r, const char *why)
{
    drop(r, SRV_REDIS_F_REPLY, why);
}

static void timer_closed(uv_handle_t *h)
{
    unref(h->data);
}

void srv_redis_close(srv_redis *r)
{
    if (r->state == R_UP)
        atomic_store(&r->st->up, 0);
    r->state = R_CLOSED;
    close_conn(r);
    fail_pending(r);
    uv_close((uv_handle_t *)&r->timer, timer_closed);
}
