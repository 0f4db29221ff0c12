/*
 * srv_redis_proto.c: checked readings of Redis replies (srv_redis_proto.h).
 */
#include "srv_redis_proto.h"
#include "srv_redis.h"

#include <hiredis/read.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* task->privdata is hiredis's own table (srv_redis_reader_init). */
static void *bounded_array(const redisReadTask *task, int elements)
{
    const redisReplyObjectFunctions *orig = task->privdata;
    if (elements < 0 || elements > SRV_REDIS_MAX_ELEMENTS)
        return NULL; /* the reader fails ("Out of memory"): a protocol error here */
    return orig->createArray(task, elements);
}

int srv_redis_reader_init(srv_redis_reader *r)
{
    r->rd = redisReaderCreate();
    if (r->rd == NULL)
        return -1;
    r->fns = *r->rd->fn;
    r->fns.createArray = bounded_array;
    r->rd->privdata = r->rd->fn;
    r->rd->fn = &r->fns;
    return 0;
}

void srv_redis_reader_free(srv_redis_reader *r)
{
    if (r->rd != NULL) {
        /* freeObject is hiredis's own: the table is only borrowed */
        r->rd->fn = r->rd->privdata;
        redisReaderFree(r->rd);
        r->rd = NULL;
    }
}

int srv_redis_parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 20)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

int srv_redis_reply_count(const redisReply *r, uint64_t *out)
{
    switch (r->type) {
    case REDIS_REPLY_INTEGER:
        if (r->integer < 0)
            return -1;
        *out = (uint64_t)r->integer;
        return 0;
    case REDIS_REPLY_NIL:
        *out = 0;
        return 0;
    case REDIS_REPLY_STRING:
        return srv_redis_parse_u64(r->str, r->len, out);
    default:
        return -1;
    }
}

int srv_redis_reply_int(const redisReply *r, long long *out)
{
    if (r->type != REDIS_REPLY_INTEGER)
        return -1;
    *out = r->integer;
    return 0;
}

/* A decimal number as Lua's string.format('%.17g') writes one: digits,
 * an optional fraction and exponent; no sign, no "inf" or "nan". */
static int parse_value(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
              ((c == '-' || c == '+') && i > 0 && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
            return -1;
    }
    if (s[0] < '0' || s[0] > '9')
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + len || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

int srv_redis_reply_score(const redisReply *r, double *v, int64_t *t)
{
    if (r->type != REDIS_REPLY_STRING)
        return -1;
    const char *sp = memchr(r->str, ' ', r->len);
    if (sp == NULL)
        return -1;
    size_t vlen = (size_t)(sp - r->str);
    uint64_t ms;
    if (parse_value(r->str, vlen, v) != 0 ||
        srv_redis_parse_u64(sp + 1, r->len - vlen - 1, &ms) != 0 || ms > INT64_MAX)
        return -1;
    *t = (int64_t)ms;
    return 0;
}

int srv_redis_reply_mark(const redisReply *r, int64_t *expires_ms)
{
    if (r->type != REDIS_REPLY_INTEGER || r->integer < 0)
        return -1;
    *expires_ms = r->integer;
    return 0;
}

int srv_redis_reply_message(const redisReply *r, const char *channel, size_t chlen,
                            size_t keymax, int64_t *expires_ms, const char **key,
                            size_t *keylen)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3)
        return -1;
    const redisReply *kind = r->element[0], *ch = r->element[1], *msg = r->element[2];
    if (kind->type != REDIS_REPLY_STRING || kind->len != 7 || memcmp(kind->str, "message", 7) != 0 ||
        ch->type != REDIS_REPLY_STRING || ch->len != chlen || memcmp(ch->str, channel, chlen) != 0 ||
        msg->type != REDIS_REPLY_STRING)
        return -1;
    const char *sp = memchr(msg->str, ' ', msg->len);
    uint64_t ms;
    if (sp == NULL || srv_redis_parse_u64(msg->str, (size_t)(sp - msg->str), &ms) != 0 ||
        ms > INT64_MAX)
        return -1;
    size_t klen = msg->len - (size_t)(sp - msg->str) - 1;
    if (klen < 3 || klen > keymax || sp[1] != 'm' || sp[2] != ':')
        return -1;
    *expires_ms = (int64_t)ms;
    *key = sp + 1;
    *keylen = klen;
    return 0;
}

int srv_redis_reply_sha(const redisReply *r, char sha[41])
{
    if (r->type != REDIS_REPLY_STRING || r->len != 40)
        return -1;
    for (size_t i = 0; i < 40; i++)
        if (!((r->str[i] >= '0' && r->str[i] <= '9') || (r->str[i] >= 'a' && r->str[i] <= 'f')))
            return -1;
    memcpy(sha, r->str, 40);
    sha[40] = '\0';
    return 0;
}
