/*
 * srv_rdns_cache.c: the shared reverse-DNS cache (see srv_rdns_cache.h).
 *
 * Each shard is a fixed array of entries, chained hash buckets and a
 * least-recently-used list, all linked by index so that nothing is
 * allocated after srv_rdns_cache_new. The hash is XXH3 keyed with a seed
 * drawn at start: client addresses are the attacker's choice (a /64 of
 * IPv6 is 2^64 of them), and an unkeyed hash would let one address set
 * pile up in one bucket.
 */
#include "srv_rdns_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <xxhash.h>

#define NIL (-1)

typedef struct entry {
    uint8_t addr[16];
    uint64_t expires; /* monotonic ms; for PENDING, when it is given up */
    uint32_t hash;
    int32_t chain;           /* next in the bucket */
    int32_t newer, older;    /* the LRU list */
    uint8_t state;           /* srv_rdns_state, never MISS */
    uint8_t len;             /* CONFIRMED: of name */
    char name[SRV_RDNS_NAME_MAX + 1];
} entry;

typedef struct shard {
    pthread_mutex_t lock;
    entry *e;
    int32_t *bucket; /* mask + 1 heads */
    uint32_t mask, cap, used;
    int32_t newest, oldest;
} shard;

struct srv_rdns_cache {
    shard *shards;
    unsigned nshards; /* a power of two */
    uint64_t seed;
};

/* Shards pay off only with many entries each: under 512 entries one
 * shard keeps the LRU order exact, which small caches want. */
static unsigned shard_count(size_t entries)
{
    unsigned n = 1;
    while (n < 16 && entries / (n * 2) >= 256)
        n *= 2;
    return n;
}

int srv_rdns_cache_new(size_t entries, srv_rdns_cache **out)
{
    *out = NULL;
    if (entries == 0)
        entries = 1;
    srv_rdns_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return -1;
    c->nshards = shard_count(entries);
    c->shards = calloc(c->nshards, sizeof *c->shards);
    if (c->shards == NULL) {
        free(c);
        return -1;
    }
    /* without the kernel's randomness, still a different key per run */
    if (getrandom(&c->seed, sizeof c->seed, GRND_NONBLOCK) != (ssize_t)sizeof c->seed)
        c->seed = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)c << 16);
    for (unsigned i = 0; i < c->nshards; i++) {
        shard *s = &c->shards[i];
        /* the first shards take the remainder: the total is `entries` */
        s->cap = (uint32_t)(entries / c->nshards + (i < entries % c->nshards));
        uint32_t nb = 4;
        while (nb < s->cap * 2u)
            nb *= 2;
        s->mask = nb - 1;
        s->e = calloc(s->cap, sizeof *s->e);
        s->bucket = malloc(nb * sizeof *s->bucket);
        if (s->e == NULL || s->bucket == NULL || pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s->e);
            free(s->bucket);
            s->e = NULL;
            c->nshards = i;
            srv_rdns_cache_free(c);
            return -1;
        }
        memset(s->bucket, 0xff, nb * sizeof *s->bucket); /* NIL */
        s->newest = s->oldest = NIL;
    }
    *out = c;
    return 0;
}

void srv_rdns_cache_free(srv_rdns_cache *c)
{
    if (c == NULL)
        return;
    for (unsigned i = 0; i < c->nshards; i++) {
        pthread_mutex_destroy(&c->shards[i].lock);
        free(c->shards[i].e);
        free(c->shards[i].bucket);
    }
    free(c->shards);
    free(c);
}

static shard *shard_of(srv_rdns_cache *c, const uint8_t addr[16], uint32_t *hash)
{
    uint64_t h = XXH3_64bits_withSeed(addr, 16, c->seed);
    *hash = (uint32_t)(h >> 32); /* the low bits chose the shard */
    return &c->shards[h & (c->nshards - 1)];
}

static void lru_unlink(shard *s, int32_t i)
{
    entry *e = &s->e[i];
    if (e->newer != NIL)
        s->e[e->newer].older = e->older;
    else
        s->newest = e->older;
    if (e->older != NIL)
        s->e[e->older].newer = e->newer;
    else
        s->oldest = e->newer;
}

static void lru_push(shard *s, int32_t i)
{
    entry *e = &s->e[i];
    e->newer = NIL;
    e->older = s->newest;
    if (s->newest != NIL)
        s->e[s->newest].newer = i;
    s->newest = i;
    if (s->oldest == NIL)
        s->oldest = i;
}

static int32_t find(shard *s, const uint8_t addr[16], uint32_t hash)
{
    for (int32_t i = s->bucket[hash & s->mask]; i != NIL; i = s->e[i].chain)
        if (s->e[i].hash == hash && memcmp(s->e[i].addr, addr, 16) == 0)
            return i;
    return NIL;
}

/* A free entry, or the least recently used one taken out of its bucket;
 * either way linked as the newest, in the bucket of `hash`. */
static int32_t take(shard *s, const uint8_t addr[16], uint32_t hash)
{
    int32_t i;
    if (s->used < s->cap) {
        i = (int32_t)s->used++;
    } else {
        i = s->oldest;
        int32_t *p = &s->bucket[s->e[i].hash & s->mask];
        while (*p != i)
            p = &s->e[*p].chain;
        *p = s->e[i].chain;
        lru_unlink(s, i);
    }
    entry *e = &s->e[i];
    memcpy(e->addr, addr, 16);
    e->hash = hash;
    e->chain = s->bucket[hash & s->mask];
    s->bucket[hash & s->mask] = i;
    lru_push(s, i);
    return i;
}

srv_rdns_state srv_rdns_cache_get(srv_rdns_cache *c, const uint8_t addr[16], uint64_t now_ms,
                                  int claim, char *name, size_t *len)
{
    uint32_t hash;
    shard *s = shard_of(c, addr, &hash);
    srv_rdns_state st = SRV_RDNS_MISS;
    pthread_mutex_lock(&s->lock);
    int32_t i = find(s, addr, hash);
    if (i != NIL && now_ms < s->e[i].expires) {
        entry *e = &s->e[i];
        st = (srv_rdns_state)e->state;
        if (st == SRV_RDNS_CONFIRMED) {
            memcpy(name, e->name, (size_t)e->len + 1);
            *len = e->len;
        }
        lru_unlink(s, i);
        lru_push(s, i);
    }
    if (st == SRV_RDNS_MISS && claim) {
        if (i == NIL) {
            i = take(s, addr, hash);
        } else {
            lru_unlink(s, i);
            lru_push(s, i);
        }
        s->e[i].state = SRV_RDNS_PENDING;
        s->e[i].expires = now_ms + SRV_RDNS_PENDING_MS;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

void srv_rdns_cache_put(srv_rdns_cache *c, const uint8_t addr[16], uint64_t now_ms,
                        srv_rdns_state st, const char *name, size_t len, uint64_t ttl_ms)
{
    char norm[SRV_RDNS_NAME_MAX + 1];
    int n = 0;
    if (st == SRV_RDNS_CONFIRMED && (n = srv_rdns_host_name(name, len, norm)) < 0)
        st = SRV_RDNS_NONAME;
    uint32_t hash;
    shard *s = shard_of(c, addr, &hash);
    pthread_mutex_lock(&s->lock);
    /* evicted while in flight: the answer is still worth keeping */
    int32_t i = find(s, addr, hash);
    if (i == NIL)
        i = take(s, addr, hash);
    entry *e = &s->e[i];
    e->state = (uint8_t)st;
    e->expires = now_ms + ttl_ms;
    e->len = st == SRV_RDNS_CONFIRMED ? (uint8_t)n : 0;
    memcpy(e->name, norm, st == SRV_RDNS_CONFIRMED ? (size_t)n + 1 : 0);
    pthread_mutex_unlock(&s->lock);
}

size_t srv_rdns_cache_count(srv_rdns_cache *c)
{
    size_t n = 0;
    for (unsigned i = 0; i < c->nshards; i++) {
        pthread_mutex_lock(&c->shards[i].lock);
        n += c->shards[i].used;
        pthread_mutex_unlock(&c->shards[i].lock);
    }
    return n;
}

int srv_rdns_host_name(const char *name, size_t len, char *out)
{
    if (len > 0 && name[len - 1] == '.')
        len--;
    if (len == 0 || len > SRV_RDNS_NAME_MAX)
        return -1;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == '.') {
            if (label == 0)
                return -1;
            label = 0;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                   ch == '_') {
            label++;
        } else if (ch >= 'A' && ch <= 'Z') {
            ch = (unsigned char)(ch + 32);
            label++;
        } else {
            return -1;
        }
        if (label > 63)
            return -1;
        out[i] = (char)ch;
    }
    if (label == 0) /* "name.." */
        return -1;
    out[len] = '\0';
    return (int)len;
}
