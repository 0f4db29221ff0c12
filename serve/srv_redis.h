/*
 * srv_redis.h: classify-serve's connection to Redis for shared state
 * (--state-redis; docs/classify-serve.md, "Shared state through Redis").
 *
 * One connection, on the main thread's libuv loop: requests are answered
 * by the workers from the local store and never wait for it. hiredis
 * supplies the protocol (redisFormatCommandArgv for commands, redisReader
 * for replies); the socket is driven here with libuv rather than through
 * hiredis's async context and its libuv adapter, because hiredis 0.14's
 * async.c asserts (aborts the process) on a reply that answers no
 * command, which is exactly what a peer that is not Redis, or a broken
 * one, may send. Here such a reply, a protocol error, an array over
 * SRV_REDIS_MAX_ELEMENTS, more than SRV_REDIS_MAX_BUFFERED bytes waiting
 * for the end of one reply, or no reply within the timeout each count as
 * Redis being unreachable: the connection is dropped, every command in
 * flight gets a NULL reply, and the next attempt follows a capped,
 * jittered exponential back-off.
 *
 * The connection is usable (srv_redis_up) after AUTH (with a password),
 * SELECT (with a database other than 0) and PING have been answered as
 * Redis answers them. Main thread only, except the counters in
 * srv_redis_stats, which any thread may read.
 */
#ifndef CLI_SRV_REDIS_H
#define CLI_SRV_REDIS_H

#include "srv_redis_url.h"

#include <hiredis/hiredis.h>
#include <uv.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SRV_REDIS_MAX_ELEMENTS 65536           /* in one array reply */
#define SRV_REDIS_MAX_BUFFERED ((size_t)4 << 20) /* bytes of a reply not yet whole */
#define SRV_REDIS_MAX_PENDING 1000000          /* commands in flight */
#define SRV_REDIS_BACKOFF_MIN_MS 100
#define SRV_REDIS_BACKOFF_MAX_MS 5000
#define SRV_REDIS_HEALTHY_MS 10000 /* up this long: the back-off starts again at the minimum */

/* Why a connection attempt failed or a connection was dropped. */
enum srv_redis_fail {
    SRV_REDIS_F_CONNECT,  /* no connection: refused, unreachable, name not found */
    SRV_REDIS_F_CLOSED,   /* the peer closed it, or a read or write failed */
    SRV_REDIS_F_TIMEOUT,  /* a connection or a reply took longer than the timeout */
    SRV_REDIS_F_PROTOCOL, /* bytes that are not the Redis protocol, or too many of them */
    SRV_REDIS_F_REPLY,    /* a well-formed reply that is wrong: an error, or the wrong type */
    SRV_REDIS_F_KINDS
};

extern const char *const srv_redis_fail_names[SRV_REDIS_F_KINDS];

/* Written by the main thread only (srv_count), read by any. */
typedef struct srv_redis_stats {
    atomic_int up;                       /* 1: connected, handshake done */
    atomic_uint_least64_t connects;      /* handshakes completed */
    atomic_uint_least64_t failures[SRV_REDIS_F_KINDS];
    atomic_uint_least64_t commands;      /* sent */
    atomic_uint_least64_t replies;       /* received and handed over */
    atomic_uint_least64_t down_since_ms; /* Unix ms it last went (or started) down; 0 while up */
} srv_redis_stats;

typedef struct srv_redis srv_redis;

/* A command's reply: `reply` is NULL when the connection was dropped
 * first (or is being closed); it belongs to the caller for the call only. */
typedef void (*srv_redis_reply_fn)(void *ud, const redisReply *reply);
/* The connection became usable (up 1) or stopped being so (up 0). */
typedef void (*srv_redis_state_fn)(void *ud, int up);
/* A reply that answers no command: on a subscribed connection, a
 * message (owned by the caller for the call only). */
typedef void (*srv_redis_push_fn)(void *ud, const redisReply *reply);

/* Starts connecting to `url` on `loop` (a copy is kept). timeout_ms
 * bounds a connection attempt and each reply. `st` (zeroed by the
 * caller) must outlive the connection. `push` NULL: a reply to no command
 * is a protocol failure; else it is handed to push (a connection that
 * SUBSCRIBEs). `role` (NULL, or a few words) follows the address in log
 * lines: "redis://h:6379/0 (marks channel)". Returns NULL when out of
 * memory. */
srv_redis *srv_redis_new(uv_loop_t *loop, const srv_redis_url *url, uint64_t timeout_ms,
                         srv_redis_stats *st, srv_redis_state_fn on_state,
                         srv_redis_push_fn push, const char *role, void *ud);

int srv_redis_up(const srv_redis *r);
/* Commands sent whose replies have not come yet. */
size_t srv_redis_pending(const srv_redis *r);

/* Queues one command (argv[i] of lens[i] bytes, binary-safe); it is sent
 * at the next srv_redis_flush. Returns 0, or -1 when not up, with
 * SRV_REDIS_MAX_PENDING in flight, or out of memory (cb is then never
 * called). */
int srv_redis_send(srv_redis *r, int argc, const char **argv, const size_t *lens,
                   srv_redis_reply_fn cb, void *ud);
/* Hands the queued commands to the socket in one write (a pipeline). */
void srv_redis_flush(srv_redis *r);

/* The caller found a reply it cannot use (the wrong type, an error):
 * counted as SRV_REDIS_F_REPLY, logged with `why`, and the connection
 * dropped as if Redis had gone away. Safe inside a reply callback. */
void srv_redis_fail(srv_redis *r, const char *why);

/* Drops the connection (pending callbacks get NULL), closes the handles
 * and frees `r` once libuv is done with them, so the loop can end. */
void srv_redis_close(srv_redis *r);

#endif /* CLI_SRV_REDIS_H */
