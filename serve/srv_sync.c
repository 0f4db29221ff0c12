/*
 * srv_sync.c: the store's changes to Redis and the fleet's totals back
 * (srv_sync.h). The Redis layout is docs/classify-serve.md's, "Shared
 * state through Redis"; each kind's commands are below.
 */
#include "srv_sync.h"
#include "srv_log.h"
#include "srv_metrics.h"
#include "srv_redis_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define PREFIX_MAX 64
#define RKEY_MAX (PREFIX_MAX + CLF_STATE_KEY_MAX + 24)

/* A score: the stored value decays from its time t to the caller's at
 * (or the addition from at to t, when another instance's clock is ahead),
 * the addition is added, and the fleet's value comes back as "V T". A 0
 * addition only reads. The key lives 20 half-lives after its last
 * addition (2^-20 of the value is left). */
static const char score_script[] =
    "local add = tonumber(ARGV[1]) local at = tonumber(ARGV[2])\n"
    "local h = tonumber(ARGV[3]) * 1000\n"
    "local cur = redis.call('HMGET', KEYS[1], 'v', 't')\n"
    "local v = tonumber(cur[1]) or 0 local t = tonumber(cur[2]) or at\n"
    "if at >= t then v = v * 2 ^ (-(at - t) / h) t = at\n"
    "else add = add * 2 ^ (-(t - at) / h) end\n"
    "v = v + add\n"
    "if add > 0 then\n"
    "  redis.call('HSET', KEYS[1], 'v', string.format('%.17g', v), 't', string.format('%.0f', t))\n"
    "  redis.call('PEXPIREAT', KEYS[1], string.format('%.0f', t + 20 * h))\n"
    "end\n"
    "return string.format('%.17g %.0f', v, t)\n";

/* A mark: the latest expiry any instance set, kept as the key's value and
 * its expiry (PXAT), so it vanishes when the mark does. 0 only reads. */
static const char mark_script[] =
    "local new = tonumber(ARGV[1])\n"
    "local cur = tonumber(redis.call('GET', KEYS[1])) or 0\n"
    "if new > cur then redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[1]) cur = new end\n"
    "return cur\n";

typedef struct rec {
    struct srv_sync *s;
    clf_state_kind kind;
    uint32_t param;
    unsigned waiting; /* replies still to come */
    int bad;          /* one was lost or wrong */
    size_t keylen;
    char key[CLF_STATE_KEY_MAX];
    int64_t window;
    uint64_t cur, prev;
    double score;
    int64_t at_ms, expires_ms;
} rec;

struct srv_sync {
    uv_loop_t *loop;
    clf_store *_Atomic *store_ref;
    clf_store *store; /* the batch's: *store_ref when it started */
    srv_redis *redis;
    srv_redis *sub; /* SUBSCRIBEd to the marks channel */
    srv_sync_stats *st;
    char prefix[PREFIX_MAX + 1];
    size_t prefixlen;
    char channel[PREFIX_MAX + 8]; /* PREFIX "marks" */
    size_t chlen;
    uint64_t interval_ms;
    uv_timer_t tick, slice;
    int handles; /* open: s is freed when both are closed */
    int closing;
    char sha_score[41], sha_mark[41];
    int scripts; /* SCRIPT LOADs answered on this connection */
    int ready;
    uint32_t cursor;
    int walking;
    size_t nrec, cap;
    size_t outstanding; /* replies of the batch still to come */
    int batch_bad;
    rec *recs;
};

static uint64_t unix_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

static size_t rkey(const srv_sync *s, const rec *r, int64_t window, int with_window, char *out)
{
    memcpy(out, s->prefix, s->prefixlen);
    memcpy(out + s->prefixlen, r->key, r->keylen);
    size_t n = s->prefixlen + r->keylen;
    if (with_window)
        n += (size_t)snprintf(out + n, 24, ":%lld", (long long)window);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Replies. */

static void batch_check(srv_sync *s)
{
    if (s->outstanding == 0 && !s->walking && s->nrec > 0) {
        if (!s->batch_bad)
            atomic_store(&s->st->last_sync_ms, unix_ms());
        s->nrec = 0;
    }
}

static void merge(srv_sync *s, rec *r)
{
    clf_state_remote rm;
    memset(&rm, 0, sizeof rm);
    rm.key = r->key;
    rm.keylen = r->keylen;
    rm.window = r->window;
    rm.cur = r->cur;
    rm.prev = r->prev;
    rm.score = r->score;
    rm.at_ms = r->at_ms;
    rm.expires_ms = r->expires_ms;
    srv_count(&s->st->delivered, 1);
    if (clf_store_merge(s->store, &rm) == CLF_OK)
        srv_count(&s->st->merged, 1);
    else
        srv_count(&s->st->refused, 1);
}

static void reply_done(rec *r)
{
    srv_sync *s = r->s;
    s->outstanding--;
    if (--r->waiting > 0)
        return;
    if (r->bad) {
        srv_count(&s->st->lost, 1);
        s->batch_bad = 1;
    } else {
        merge(s, r);
    }
    batch_check(s);
}

/* A reply that is not what the command answers: Redis is not trusted
 * further on this connection. */
static void wrong(rec *r, const char *what)
{
    char why[CLF_STATE_KEY_MAX + 96];
    r->bad = 1;
    snprintf(why, sizeof why, "%s for %.*s", what, (int)r->keylen, r->key);
    srv_redis_fail(r->s->redis, why);
}

static void on_cur(void *ud, const redisReply *rep)
{
    rec *r = ud;
    if (rep == NULL)
        r->bad = 1;
    else if (srv_redis_reply_count(rep, &r->cur) != 0)
        wrong(r, "not a count (INCRBY/GET)");
    reply_done(r);
}

static void on_prev(void *ud, const redisReply *rep)
{
    rec *r = ud;
    if (rep == NULL)
        r->bad = 1;
    else if (srv_redis_reply_count(rep, &r->prev) != 0)
        wrong(r, "not a count (INCRBY/GET)");
    reply_done(r);
}

/* PEXPIREAT's and PUBLISH's replies: an integer. Returns 1 when it was. */
static int int_reply(rec *r, const redisReply *rep, const char *what)
{
    long long n;
    if (rep == NULL)
        r->bad = 1;
    else if (srv_redis_reply_int(rep, &n) != 0)
        wrong(r, what);
    else
        return 1;
    return 0;
}

static void on_expire(void *ud, const redisReply *rep)
{
    int_reply(ud, rep, "not an integer (PEXPIREAT)");
    reply_done(ud);
}

static void on_published(void *ud, const redisReply *rep)
{
    rec *r = ud;
    if (int_reply(r, rep, "not an integer (PUBLISH)"))
        srv_count(&r->s->st->marks_sent, 1);
    reply_done(r);
}

static void on_score(void *ud, const redisReply *rep)
{
    rec *r = ud;
    if (rep == NULL)
        r->bad = 1;
    else if (srv_redis_reply_score(rep, &r->score, &r->at_ms) != 0)
        wrong(r, "not 'VALUE TIME' (the score script)");
    reply_done(r);
}

static void on_mark(void *ud, const redisReply *rep)
{
    rec *r = ud;
    if (rep == NULL)
        r->bad = 1;
    else if (srv_redis_reply_mark(rep, &r->expires_ms) != 0)
        wrong(r, "not an expiry (the mark script)");
    reply_done(r);
}

/* ------------------------------------------------------------------------ */
/* Sending. */

static void cmd(srv_sync *s, rec *r, int argc, const char **argv, const size_t *lens,
                 srv_redis_reply_fn cb)
{
    if (srv_redis_send(s->redis, argc, argv, lens, cb, r) == 0) {
        r->waiting++;
        s->outstanding++;
    } else {
        r->bad = 1;
    }
}

/* One window's count: INCRBY and PEXPIREAT for a change, GET for a read.
 * The key matters while its window is the current or the previous one. */
static void send_window(srv_sync *s, rec *r, int64_t window, uint32_t delta,
                        srv_redis_reply_fn cb)
{
    char key[RKEY_MAX], n[24], at[24];
    size_t klen = rkey(s, r, window, 1, key);
    if (delta == 0) {
        cmd(s, r, 2, (const char *[]){"GET", key}, (size_t[]){3, klen}, cb);
        return;
    }
    int nl = snprintf(n, sizeof n, "%u", delta);
    long long exp = (long long)(window + 2) * r->param * 1000 + SRV_SYNC_EXPIRY_SLACK_MS;
    int al = snprintf(at, sizeof at, "%lld", exp);
    cmd(s, r, 3, (const char *[]){"INCRBY", key, n}, (size_t[]){6, klen, (size_t)nl}, cb);
    cmd(s, r, 3, (const char *[]){"PEXPIREAT", key, at}, (size_t[]){9, klen, (size_t)al},
         on_expire);
}

static void on_delta(void *ud, const clf_state_delta *d)
{
    srv_sync *s = ud;
    if (s->nrec >= s->cap || d->keylen > CLF_STATE_KEY_MAX) {
        srv_count(&s->st->lost, 1);
        s->batch_bad = 1;
        return;
    }
    rec *r = &s->recs[s->nrec++];
    memset(r, 0, offsetof(rec, key));
    r->s = s;
    r->kind = d->kind;
    r->param = d->param;
    r->keylen = d->keylen;
    memcpy(r->key, d->key, d->keylen);
    r->waiting = 1; /* held until every command is sent */
    s->outstanding++;
    char key[RKEY_MAX], a[32], b[24], c[16];
    size_t klen;
    int al, bl, cl;
    switch (d->kind) {
    case CLF_STATE_COUNTER:
        r->window = d->window;
        send_window(s, r, d->window, d->cur, on_cur);
        send_window(s, r, d->window - 1, d->prev, on_prev);
        break;
    case CLF_STATE_SCORE:
        klen = rkey(s, r, 0, 0, key);
        al = snprintf(a, sizeof a, "%.17g", d->score > 0 ? d->score : 0.0);
        bl = snprintf(b, sizeof b, "%lld", (long long)d->at_ms);
        cl = snprintf(c, sizeof c, "%u", d->param ? d->param : 1);
        cmd(s, r, 7,
             (const char *[]){"EVALSHA", s->sha_score, "1", key, a, b, c},
             (size_t[]){7, 40, 1, klen, (size_t)al, (size_t)bl, (size_t)cl}, on_score);
        break;
    case CLF_STATE_MARK:
        klen = rkey(s, r, 0, 0, key);
        al = snprintf(a, sizeof a, "%lld", (long long)(d->expires_ms > 0 ? d->expires_ms : 0));
        cmd(s, r, 5, (const char *[]){"EVALSHA", s->sha_mark, "1", key, a},
             (size_t[]){7, 40, 1, klen, (size_t)al}, on_mark);
        if (d->expires_ms > 0) { /* set here: tell the instances that only test it */
            char msg[32 + CLF_STATE_KEY_MAX];
            memcpy(msg, a, (size_t)al);
            msg[al] = ' ';
            memcpy(msg + al + 1, r->key, r->keylen);
            cmd(s, r, 3, (const char *[]){"PUBLISH", s->channel, msg},
                (size_t[]){7, s->chlen, (size_t)al + 1 + r->keylen}, on_published);
        }
        break;
    default:
        r->bad = 1;
        break;
    }
    reply_done(r); /* the hold above */
}

/* One slice of the walk; the next one on the next turn of the loop, so
 * the main loop (signals, reloads) never waits for a whole store. */
static void on_slice(uv_timer_t *t)
{
    srv_sync *s = t->data;
    if (!s->walking)
        return;
    if (!srv_redis_up(s->redis)) {
        s->walking = 0;
        batch_check(s);
        return;
    }
    clf_store_collect(s->store, &s->cursor, SRV_SYNC_SLICE_BUCKETS, on_delta, s);
    srv_redis_flush(s->redis);
    if (s->cursor == 0 || s->nrec >= SRV_SYNC_BATCH_MAX) {
        if (s->cursor != 0)
            srv_count(&s->st->partial, 1);
        s->walking = 0;
        batch_check(s);
        return;
    }
    uv_timer_start(&s->slice, on_slice, 0, 0);
}

static void on_sub_pong(void *ud, const redisReply *rep);

static void on_tick(uv_timer_t *t)
{
    srv_sync *s = t->data;
    /* A subscribed connection waits for nothing: a PING each interval
     * puts a reply under the time-out, so a Redis gone silent is seen. */
    if (srv_redis_up(s->sub) && srv_redis_pending(s->sub) == 0 &&
        srv_redis_send(s->sub, 1, (const char *[]){"PING"}, (size_t[]){4}, on_sub_pong, s) == 0)
        srv_redis_flush(s->sub);
    if (!s->ready) {
        srv_count(&s->st->ticks[SRV_SYNC_TICK_DOWN], 1);
        return;
    }
    if (s->walking || s->outstanding > 0) {
        srv_count(&s->st->ticks[SRV_SYNC_TICK_BUSY], 1);
        return;
    }
    srv_count(&s->st->ticks[SRV_SYNC_TICK_SYNCED], 1);
    s->store = atomic_load(s->store_ref);
    if (s->store == NULL) { /* no rules have used state yet */
        atomic_store(&s->st->last_sync_ms, unix_ms());
        return;
    }
    s->nrec = 0;
    s->batch_bad = 0;
    s->walking = 1;
    on_slice(&s->slice);
    if (s->nrec == 0 && !s->walking && s->outstanding == 0 && !s->batch_bad)
        atomic_store(&s->st->last_sync_ms, unix_ms());
}

/* ------------------------------------------------------------------------ */
/* The connection's state. */

static void on_sha(srv_sync *s, const redisReply *rep, char *sha)
{
    if (rep == NULL)
        return;
    if (srv_redis_reply_sha(rep, sha) != 0) {
        srv_redis_fail(s->redis, rep->type == REDIS_REPLY_ERROR ? rep->str
                                                                 : "SCRIPT LOAD: not a SHA-1");
        return;
    }
    if (++s->scripts == 2) {
        s->ready = 1;
        on_tick(&s->tick); /* deliver what waited at once */
    }
}

static void on_sha_score(void *ud, const redisReply *rep)
{
    srv_sync *s = ud;
    on_sha(s, rep, s->sha_score);
}

static void on_sha_mark(void *ud, const redisReply *rep)
{
    srv_sync *s = ud;
    on_sha(s, rep, s->sha_mark);
}

/* The marks channel. */

static void on_push(void *ud, const redisReply *rep)
{
    srv_sync *s = ud;
    clf_state_remote rm;
    memset(&rm, 0, sizeof rm);
    if (srv_redis_reply_message(rep, s->channel, s->chlen, CLF_STATE_KEY_MAX, &rm.expires_ms,
                                &rm.key, &rm.keylen) != 0) {
        srv_redis_fail(s->sub, "not a message of the marks channel");
        return;
    }
    clf_store *store = atomic_load(s->store_ref);
    if (store == NULL)
        return;
    srv_count(&s->st->marks_received, 1);
    if (clf_store_merge(store, &rm) == CLF_OK)
        srv_count(&s->st->merged, 1);
    else
        srv_count(&s->st->refused, 1);
}

/* In a subscribed connection PING answers ["pong", ""]. */
static void on_sub_pong(void *ud, const redisReply *rep)
{
    srv_sync *s = ud;
    if (rep != NULL &&
        !(rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
          rep->element[0]->type == REDIS_REPLY_STRING && rep->element[0]->len == 4 &&
          memcmp(rep->element[0]->str, "pong", 4) == 0))
        srv_redis_fail(s->sub, "PING: not a subscribed connection's pong");
}

static void on_subscribed(void *ud, const redisReply *rep)
{
    srv_sync *s = ud;
    if (rep != NULL &&
        !(rep->type == REDIS_REPLY_ARRAY && rep->elements == 3 &&
          rep->element[0]->type == REDIS_REPLY_STRING && rep->element[0]->len == 9 &&
          memcmp(rep->element[0]->str, "subscribe", 9) == 0))
        srv_redis_fail(s->sub, "SUBSCRIBE: not a subscription");
}

static void on_sub_state(void *ud, int up)
{
    srv_sync *s = ud;
    if (!up)
        return;
    if (srv_redis_send(s->sub, 2, (const char *[]){"SUBSCRIBE", s->channel},
                       (size_t[]){9, s->chlen}, on_subscribed, s) != 0)
        srv_redis_fail(s->sub, "out of memory");
    else
        srv_redis_flush(s->sub);
}

static void on_state(void *ud, int up)
{
    srv_sync *s = ud;
    s->ready = 0;
    s->scripts = 0;
    if (!up)
        return;
    int bad = srv_redis_send(s->redis, 3, (const char *[]){"SCRIPT", "LOAD", score_script},
                             (size_t[]){6, 4, sizeof score_script - 1}, on_sha_score, s);
    bad |= srv_redis_send(s->redis, 3, (const char *[]){"SCRIPT", "LOAD", mark_script},
                          (size_t[]){6, 4, sizeof mark_script - 1}, on_sha_mark, s);
    if (bad)
        srv_redis_fail(s->redis, "out of memory");
    else
        srv_redis_flush(s->redis);
}

srv_sync *srv_sync_new(uv_loop_t *loop, clf_store *_Atomic *store, const srv_redis_url *url,
                       const char *prefix, uint64_t interval_ms, uint64_t timeout_ms,
                       srv_sync_stats *st)
{
    srv_sync *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cap = SRV_SYNC_BATCH_MAX + SRV_SYNC_SLICE_BUCKETS * 8;
    s->recs = malloc(s->cap * sizeof *s->recs);
    if (s->recs == NULL) {
        free(s);
        return NULL;
    }
    s->loop = loop;
    s->store_ref = store;
    s->st = st;
    s->prefixlen = strlen(prefix) > PREFIX_MAX ? PREFIX_MAX : strlen(prefix);
    memcpy(s->prefix, prefix, s->prefixlen);
    s->interval_ms = interval_ms;
    memcpy(s->channel, s->prefix, s->prefixlen);
    memcpy(s->channel + s->prefixlen, "marks", 5);
    s->chlen = s->prefixlen + 5;
    s->redis = srv_redis_new(loop, url, timeout_ms, &st->redis, on_state, NULL, NULL, s);
    s->sub = s->redis ? srv_redis_new(loop, url, timeout_ms, &st->sub, on_sub_state, on_push,
                                      "marks channel", s)
                      : NULL;
    if (s->sub == NULL) {
        if (s->redis != NULL)
            srv_redis_close(s->redis);
        free(s->recs);
        free(s);
        return NULL;
    }
    uv_timer_init(loop, &s->tick);
    uv_timer_init(loop, &s->slice);
    s->tick.data = s->slice.data = s;
    s->handles = 2;
    uv_timer_start(&s->tick, on_tick, interval_ms, interval_ms);
    return s;
}

static void timer_closed(uv_handle_t *h)
{
    srv_sync *s = h->data;
    if (--s->handles == 0) {
        free(s->recs);
        free(s);
    }
}

void srv_sync_close(srv_sync *s)
{
    s->closing = 1;
    s->ready = 0;
    s->walking = 0;
    srv_redis_close(s->redis); /* the batch's callbacks get NULL now */
    srv_redis_close(s->sub);
    uv_close((uv_handle_t *)&s->tick, timer_closed);
    uv_close((uv_handle_t *)&s->slice, timer_closed);
}
