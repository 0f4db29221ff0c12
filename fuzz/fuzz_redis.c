/*
 * fuzz_redis.c: libFuzzer target for what classify-serve reads from and
 * about Redis (--state-redis; fuzz/README.md). The input's first line is
 * a --state-redis URL (srv_redis_url_parse); the rest is what a peer
 * sends on the connection, fed to hiredis's reader as classify-serve
 * bounds it (srv_redis_reader_init), in two pieces split at a point the
 * input's first byte chooses, and every reply that comes out is read by
 * each of classify-serve's checked readings (serve/srv_redis_proto.c).
 *
 * Besides crashes and sanitizer reports, it aborts (FUZZ_FAIL) when:
 *   - a parsed URL has no host (TCP) or no path (unix), a port outside
 *     1..65535, a credential holding a control character, or a name for
 *     the logs of a TCP address that shows an '@' (the password would
 *     follow);
 *   - a refused URL leaves no message;
 *   - a reply array is longer than SRV_REDIS_MAX_ELEMENTS;
 *   - a count read from a string is not the string's digits, a score is
 *     negative or not finite, a mark's expiry negative, a SHA-1 not 40
 *     lowercase hex digits, a marks-channel message's key not a mark's
 *     or not inside the message.
 * Inputs over 64 KiB are skipped.
 */
#include "fuzz_common.h"
#include "srv_redis.h"
#include "srv_redis_proto.h"
#include "srv_redis_url.h"

#include <hiredis/read.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void check_cred(const char *s, const char *what)
{
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            fuzz_fail("the %s holds a control character", what);
}

static void url(const char *s)
{
    srv_redis_url u;
    char err[256];
    if (srv_redis_url_parse(s, &u, err, sizeof err) != 0) {
        if (err[0] == '\0')
            fuzz_fail("url '%s' refused without a message", s);
        return;
    }
    if (u.is_unix ? u.path[0] == '\0' : u.host[0] == '\0')
        fuzz_fail("url '%s': no %s", s, u.is_unix ? "path" : "host");
    if (!u.is_unix && (u.port == 0 || u.port > 65535))
        fuzz_fail("url '%s': port %u", s, u.port);
    check_cred(u.user, "user");
    check_cred(u.password, "password");
    char name[512];
    srv_redis_url_name(&u, name, sizeof name);
    if (memchr(name, '\0', sizeof name) == NULL)
        fuzz_fail("url name not terminated");
    if (!u.is_unix && strchr(name, '@') != NULL)
        fuzz_fail("url '%s': the log name '%s' shows an '@'", s, name);
}

static void reading(const redisReply *r, int depth)
{
    uint64_t n;
    long long i;
    double v;
    int64_t t, e;
    char sha[41];
    if (r->type == REDIS_REPLY_ARRAY) {
        if (r->elements > SRV_REDIS_MAX_ELEMENTS)
            fuzz_fail("an array of %zu elements passed the bound", r->elements);
        for (size_t k = 0; k < r->elements; k++)
            reading(r->element[k], depth + 1);
    }
    if (srv_redis_reply_count(r, &n) == 0 && r->type == REDIS_REPLY_STRING) {
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)n);
        /* leading zeros are the only other spelling */
        size_t z = 0;
        while (z + 1 < r->len && r->str[z] == '0')
            z++;
        if (strlen(buf) != r->len - z || memcmp(buf, r->str + z, r->len - z) != 0)
            fuzz_fail("count %s read from '%.*s'", buf, (int)r->len, r->str);
    }
    (void)srv_redis_reply_int(r, &i);
    if (srv_redis_reply_score(r, &v, &t) == 0 && (!isfinite(v) || v < 0 || t < 0))
        fuzz_fail("score %g at %lld", v, (long long)t);
    if (srv_redis_reply_mark(r, &e) == 0 && e < 0)
        fuzz_fail("mark expiry %lld", (long long)e);
    const char *key;
    size_t klen;
    if (srv_redis_reply_message(r, "clf:marks", 9, 128, &e, &key, &klen) == 0 &&
        (e < 0 || klen < 3 || klen > 128 || key[0] != 'm' || key[1] != ':' ||
         key < r->element[2]->str || key + klen > r->element[2]->str + r->element[2]->len))
        fuzz_fail("a marks message read outside its payload, or not a mark's key");
    if (srv_redis_reply_sha(r, sha) == 0) {
        if (strlen(sha) != 40 || strspn(sha, "0123456789abcdef") != 40)
            fuzz_fail("sha '%s'", sha);
    }
    (void)depth;
}

/* Replies until the reader wants more bytes or fails; 1 when it failed
 * (the connection would be dropped). */
static int drain(srv_redis_reader *rd)
{
    for (;;) {
        void *reply = NULL;
        if (redisReaderGetReply(rd->rd, &reply) != REDIS_OK)
            return 1;
        if (reply == NULL)
            return 0;
        reading(reply, 0);
        freeReplyObject(reply);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    const uint8_t *nl = memchr(data, '\n', size);
    size_t ulen = nl ? (size_t)(nl - data) : size;
    char *u = malloc(ulen + 1);
    if (u == NULL)
        return 0;
    memcpy(u, data, ulen);
    u[ulen] = '\0';
    if (strlen(u) == ulen) /* the command line has no NUL */
        url(u);
    free(u);
    if (nl == NULL)
        return 0;
    const char *wire = (const char *)nl + 1;
    size_t wlen = size - ulen - 1;
    size_t split = wlen ? (size_t)data[0] % (wlen + 1) : 0;
    srv_redis_reader rd;
    if (srv_redis_reader_init(&rd) != 0)
        return 0;
    if (redisReaderFeed(rd.rd, wire, split) == REDIS_OK && !drain(&rd) &&
        redisReaderFeed(rd.rd, wire + split, wlen - split) == REDIS_OK)
        drain(&rd);
    srv_redis_reader_free(&rd);
    return 0;
}
