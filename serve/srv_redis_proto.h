/*
 * srv_redis_proto.h: what classify-serve reads from Redis, checked. Redis
 * is outside input: a reply of the wrong type, a number that is not one,
 * a count that does not fit, are each an error (and the connection is
 * then treated as unreachable, srv_redis_fail), never a value. The
 * replies' layout is docs/classify-serve.md's ("Shared state through
 * Redis"); fuzz/fuzz_redis.c runs every function here.
 */
#ifndef CLI_SRV_REDIS_PROTO_H
#define CLI_SRV_REDIS_PROTO_H

#include <hiredis/hiredis.h>

#include <stddef.h>
#include <stdint.h>

/* hiredis's reply reader, with arrays bounded by SRV_REDIS_MAX_ELEMENTS
 * (hiredis 0.14 allocates an array as long as the wire says before any of
 * it arrives). */
typedef struct srv_redis_reader {
    redisReader *rd;
    redisReplyObjectFunctions fns;
} srv_redis_reader;

/* Returns 0, or -1 (out of memory). The struct must not move afterwards. */
int srv_redis_reader_init(srv_redis_reader *r);
void srv_redis_reader_free(srv_redis_reader *r);

/* Decimal digits only ("0" to "18446744073709551615"), the whole of
 * s[0..len). Returns 0 or -1. */
int srv_redis_parse_u64(const char *s, size_t len, uint64_t *out);

/* A count: INCRBY's integer (>= 0), or GET's bulk string of digits, or
 * nil (0). Returns 0 or -1. */
int srv_redis_reply_count(const redisReply *r, uint64_t *out);

/* An integer reply (PEXPIREAT's 0 or 1). Returns 0 or -1. */
int srv_redis_reply_int(const redisReply *r, long long *out);

/* The score script's reply: a bulk string "V T", V a finite decimal
 * number >= 0 (the fleet's value at T), T milliseconds since the epoch.
 * Returns 0 or -1. */
int srv_redis_reply_score(const redisReply *r, double *v, int64_t *t);

/* The mark script's reply: an integer, the latest expiry in milliseconds
 * since the epoch (0: not marked). Returns 0 or -1. */
int srv_redis_reply_mark(const redisReply *r, int64_t *expires_ms);

/* A mark published on the marks channel (docs/classify-serve.md): the
 * array ["message", CHANNEL, "EXPIRES KEY"] with CHANNEL the given one,
 * EXPIRES milliseconds since the epoch, KEY a mark's store key ("m:...",
 * 1 to keymax bytes); *key points into the reply. Returns 0 or -1. */
int srv_redis_reply_message(const redisReply *r, const char *channel, size_t chlen,
                            size_t keymax, int64_t *expires_ms, const char **key,
                            size_t *keylen);

/* SCRIPT LOAD's reply: 40 lowercase hex digits, copied into sha[41].
 * Returns 0 or -1. */
int srv_redis_reply_sha(const redisReply *r, char sha[41]);

#endif /* CLI_SRV_REDIS_PROTO_H */
