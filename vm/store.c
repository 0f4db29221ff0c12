/*
 * store.c: the built-in state store (docs/state.md) and the dispatch to a
 * host's store.
 *
 * Memory. One region of exactly the configured bytes: a 128-byte header,
 * then the buckets, each a 64-byte line (its lock and its entries' short
 * tags) and eight 192-byte entries. Nothing is allocated after creation, so a flood of distinct
 * keys can only replace entries, never grow the store.
 *
 * Placement. A key's bucket comes from SipHash-2-4 of its text under a
 * 128-bit secret seed: without the seed nobody can tell which keys share
 * a bucket, so aiming keys at one entry's bucket takes, on average, as
 * many tries as there are buckets per key landed there.
 *
 * Eviction. A new entry takes a free slot of its bucket, else the slot of
 * lowest value (a counter's estimate, a score's value, an expired entry
 * 0, a live mark above everything), but only if that value is at most the
 * newcomer's (a first count is 1): so a flood of fresh keys only churns
 * entries that are as cold as it is, and never evicts a client that has
 * counted more, a score that is higher, or a live mark. When the bucket
 * has nothing that cold the newcomer is refused (not stored; its count is
 * then the defined "full" result).
 *
 * Locks. One spin lock per bucket (the finest striping there is: two
 * requests contend only when their keys share one of the buckets), held
 * for a few dozen instructions, never across a call out, and atomics in
 * the region itself, so they work between processes sharing it. A lock
 * that stays taken (a process died holding it) is given up on after a
 * bounded spin: the call answers "busy", never hangs. A lock-free table
 * would need multi-word updates (a counter's windows roll together):
 * striping keeps each update a plain critical section.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, getrandom */
#include "store.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include <xxhash.h>

#include "ipaddr.h"
#include "program.h"

#define ST_MAGIC UINT64_C(0x3145524f5453464c) /* "LFSTORE1" */
#define ST_VERSION 1u
#define ST_WAYS 8u
#define ST_HEAD 128u
#define ST_SPIN 20000u /* tries before a bucket answers busy */

typedef struct st_entry {
    uint64_t tag; /* keyed hash | 1; 0: a free slot */
    uint8_t kind, keylen, dirty, pad0;
    uint32_t param;
    int64_t t_ms; /* the latest time the entry has seen: never goes back */
    union {
        /* counter: window `win` (cur) and win - 1 (prev): local, remote,
         * and local not yet collected */
        struct { int64_t win; uint32_t cur, prev, rcur, rprev, pcur, pprev; } c;
        /* score at t_ms: local, remote, local not yet collected */
        struct { double v, r, p; int64_t pad; } s;
        /* mark: expiry ms, local, remote, local not yet collected */
        struct { int64_t exp, rexp, pexp, pad; } m;
    } u;
    char key[CLF_STATE_KEY_MAX];
    uint8_t pad[8];
} st_entry;

_Static_assert(sizeof(st_entry) == 192, "an entry is 192 bytes");

typedef struct st_region {
    uint64_t magic;
    uint32_t version, entry_bytes;
    uint64_t bytes, nbuckets;
    uint64_t k0, k1; /* the SipHash key */
    _Atomic uint64_t used, evictions, refused, busy;
    uint8_t pad[ST_HEAD - 80];
} st_region;

_Static_assert(sizeof(st_region) == ST_HEAD, "the header is 128 bytes");

/* A bucket: its lock and its entries' short tags in one cache line, so
 * that a lookup reads that line and then only the entry that matches. */
typedef struct st_bucket {
    _Atomic uint32_t lock;
    uint32_t tags[ST_WAYS]; /* (hash >> 32) | 1 of each entry in use; 0: free */
    uint8_t pad[64 - 4 - 4 * ST_WAYS];
    st_entry e[ST_WAYS];
} st_bucket;

_Static_assert(sizeof(st_bucket) == 64 + ST_WAYS * 192, "a bucket is 1600 bytes");

struct clf_store {
    int builtin, owns;
    st_region *r;
    st_bucket *buckets;
    clf_store_ops ops;
    void *self;
};

/* ---- keys ---- */

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

#define SIPROUND                                                                               \
    do {                                                                                       \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);                              \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                                 \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                                 \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);                              \
    } while (0)

/* SipHash-2-4 (Aumasson and Bernstein): a keyed PRF made for hash tables
 * that attackers fill. */
static uint64_t siphash(uint64_t k0, uint64_t k1, const uint8_t *m, size_t n)
{
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575), v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261), v3 = k1 ^ UINT64_C(0x7465646279746573);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&w, m + i, 8); /* SipHash reads words little-endian */
#else
        w = 0;
        for (int k = 7; k >= 0; k--) w = (w << 8) | m[i + (size_t)k];
#endif
        v3 ^= w;
        SIPROUND;
        SIPROUND;
        v0 ^= w;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t k = 0; i + k < n; k++) b |= (uint64_t)m[i + k] << (8 * k);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static size_t put(char *buf, size_t at, const void *p, size_t n)
{
    if (at + n > CLF_STATE_KEY_MAX) return CLF_STATE_KEY_MAX + 1;
    memcpy(buf + at, p, n);
    return at + n;
}

/* Decimal digits of v (a request's hot path: no snprintf), into d
 * (21 bytes); returns the length. */
static size_t decimal(char *d, uint64_t v, int neg)
{
    char t[24];
    size_t n = 0, k = 0;
    do t[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (neg) d[k++] = '-';
    while (n) d[k++] = t[--n];
    return k;
}

size_t vm_state_key(char *buf, int kind, uint32_t param, const char *name, size_t namelen,
                    int keytype, const char *p, size_t n, int64_t i)
{
    static const char kinds[] = "?csm";
    char head[16], val[VM_STATE_STR_KEY_MAX > VM_IP_TEXT_MAX ? VM_STATE_STR_KEY_MAX : VM_IP_TEXT_MAX];
    const char *type, *v = val;
    size_t vn;
    switch (keytype) {
    case VM_KEY_IP:
        if (n != 16) return 0;
        type = "ip";
        vn = vm_ip_format((const uint8_t *)p, val, sizeof val);
        break;
    case VM_KEY_INT:
        type = "int";
        vn = decimal(val, i < 0 ? 0 - (uint64_t)i : (uint64_t)i, i < 0);
        break;
    default:
        if (n <= VM_STATE_STR_KEY_MAX) {
            type = "str";
            v = p;
            vn = n;
        } else {
            XXH128_hash_t h = XXH3_128bits(p, n);
            type = "strh";
            vn = (size_t)snprintf(val, sizeof val, "%016llx%016llx", (unsigned long long)h.high64,
                                  (unsigned long long)h.low64);
        }
    }
    head[0] = kinds[kind & 3];
    head[1] = ':';
    size_t hn = 2 + decimal(head + 2, param, 0);
    head[hn++] = ':';
    size_t at = put(buf, 0, head, hn);
    at = put(buf, at, name, namelen);
    at = put(buf, at, ":", 1);
    at = put(buf, at, type, strlen(type));
    at = put(buf, at, ":", 1);
    at = put(buf, at, v, vn);
    return at > CLF_STATE_KEY_MAX ? 0 : at;
}

int vm_state_key_parse(const char *key, size_t keylen, int *kind, uint32_t *param)
{
    if (!key || keylen < 4 || keylen > CLF_STATE_KEY_MAX || key[1] != ':') return 0;
    switch (key[0]) {
    case 'c': *kind = CLF_STATE_COUNTER; break;
    case 's': *kind = CLF_STATE_SCORE; break;
    case 'm': *kind = CLF_STATE_MARK; break;
    default: return 0;
    }
    uint64_t v = 0;
    size_t i = 2;
    for (; i < keylen && key[i] >= '0' && key[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(key[i] - '0');
        if (v > UINT32_MAX) return 0;
    }
    if (i == 2 || i >= keylen || key[i] != ':' || v == 0) return 0;
    *param = (uint32_t)v;
    return 1;
}

/* ---- entries (under their bucket's lock) ---- */

static uint32_t sat_add(uint32_t a, uint64_t b)
{
    uint64_t s = (uint64_t)a + b;
    return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static int64_t wms(const st_entry *e) { return (int64_t)e->param * 1000; }

/* Moves a counter to window k (>= its own). */
static void roll_to(st_entry *e, int64_t k)
{
    if (k <= e->u.c.win) return;
    if (k == e->u.c.win + 1) {
        e->u.c.prev = e->u.c.cur;
        e->u.c.rprev = e->u.c.rcur;
        e->u.c.pprev = e->u.c.pcur;
    } else {
        e->u.c.prev = e->u.c.rprev = e->u.c.pprev = 0;
    }
    e->u.c.cur = e->u.c.rcur = e->u.c.pcur = 0;
    e->u.c.win = k;
}

static void decay_to(st_entry *e, int64_t now)
{
    if (now <= e->t_ms) return;
    double f = exp2(-(double)(now - e->t_ms) / ((double)e->param * 1000.0));
    e->u.s.v *= f;
    e->u.s.r *= f;
    e->u.s.p *= f;
    if (e->u.s.v < 1e-9) e->u.s.v = 0;
    if (e->u.s.r < 1e-9) e->u.s.r = 0;
    if (e->u.s.p < 1e-9) e->u.s.p = 0;
}

/* Brings an entry to `now` (its own time if the clock went back), and
 * returns the time it is at. */
static int64_t advance(st_entry *e, int64_t now)
{
    if (now < e->t_ms) now = e->t_ms;
    if (e->kind == CLF_STATE_COUNTER) roll_to(e, now / wms(e));
    else if (e->kind == CLF_STATE_SCORE) decay_to(e, now);
    e->t_ms = now;
    return now;
}

static int64_t counter_estimate(const st_entry *e, int64_t now)
{
    int64_t W = wms(e), el = now - e->u.c.win * W;
    if (el < 0) el = 0; /* never: the entry's time is at least its window's start */
    if (el > W) el = W;
    double prev = (double)e->u.c.prev + (double)e->u.c.rprev;
    double est = (double)e->u.c.cur + (double)e->u.c.rcur + floor(prev * (double)(W - el) / (double)W);
    return (int64_t)est;
}

#define MARK_RANK 1e15

/* What an entry is worth keeping at `now`, for eviction: what the rules
 * would read (the entry is not changed). */
static double value_of(const st_entry *e, int64_t now)
{
    if (!e->tag) return -1;
    if (now < e->t_ms) now = e->t_ms;
    switch (e->kind) {
    case CLF_STATE_COUNTER: {
        int64_t W = wms(e), k = now / W;
        double cur = (double)e->u.c.cur + e->u.c.rcur, prev = (double)e->u.c.prev + e->u.c.rprev;
        if (k == e->u.c.win + 1) {
            prev = cur;
            cur = 0;
        } else if (k != e->u.c.win) {
            return 0;
        }
        return cur + floor(prev * (double)(W - (now - k * W)) / (double)W);
    }
    case CLF_STATE_SCORE:
        return (e->u.s.v + e->u.s.r) *
               exp2(-(double)(now - e->t_ms) / ((double)e->param * 1000.0));
    default: {
        int64_t x = e->u.m.exp > e->u.m.rexp ? e->u.m.exp : e->u.m.rexp;
        return x > now ? MARK_RANK + (double)(x - now) : 0;
    }
    }
}

/* ---- buckets ---- */

static int lock_bucket(clf_store *s, uint64_t b)
{
    _Atomic uint32_t *l = &s->buckets[b].lock;
    for (unsigned i = 0; i < ST_SPIN; i++) {
        uint32_t z = 0;
        if (atomic_load_explicit(l, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(l, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
        if (i >= 32) sched_yield();
    }
    atomic_fetch_add_explicit(&s->r->busy, 1, memory_order_relaxed);
    return 0;
}

static void unlock_bucket(clf_store *s, uint64_t b)
{
    atomic_store_explicit(&s->buckets[b].lock, 0, memory_order_release);
}

typedef struct st_slot {
    uint64_t tag, bucket;
} st_slot;

static st_slot place(const clf_store *s, const char *key, size_t keylen)
{
    uint64_t h = siphash(s->r->k0, s->r->k1, (const uint8_t *)key, keylen) | 1;
    return (st_slot){h, (h >> 1) % s->r->nbuckets};
}

/* The entry of `key` in its (locked) bucket; or, when `create` >= 0, a
 * new one of that value made by the eviction rule; NULL when absent or
 * refused (*refused says which). */
static st_entry *find(clf_store *s, st_slot sl, const char *key, size_t keylen, int kind,
                      uint32_t param, int64_t now, double create, int *refused)
{
    st_bucket *bk = &s->buckets[sl.bucket];
    st_entry *b = bk->e, *victim = NULL;
    uint32_t t32 = (uint32_t)(sl.tag >> 32) | 1;
    double least = 0;
    *refused = 0;
    for (unsigned i = 0; i < ST_WAYS; i++)
        if (bk->tags[i] == t32 && b[i].tag == sl.tag && b[i].keylen == keylen &&
            memcmp(b[i].key, key, keylen) == 0)
            return &b[i];
    if (create < 0) return NULL;
    for (unsigned i = 0; i < ST_WAYS; i++) {
        double v = value_of(&b[i], now);
        if (!victim || v < least) {
            victim = &b[i];
            least = v;
        }
    }
    if (least > create) {
        *refused = 1;
        atomic_fetch_add_explicit(&s->r->refused, 1, memory_order_relaxed);
        return NULL;
    }
    atomic_fetch_add_explicit(victim->tag ? &s->r->evictions : &s->r->used, 1,
                              memory_order_relaxed);
    memset(victim, 0, sizeof *victim);
    bk->tags[victim - b] = t32;
    victim->tag = sl.tag;
    victim->kind = (uint8_t)kind;
    victim->keylen = (uint8_t)keylen;
    victim->param = param;
    victim->t_ms = now;
    if (kind == CLF_STATE_COUNTER) victim->u.c.win = now / ((int64_t)param * 1000);
    memcpy(victim->key, key, keylen);
    return victim;
}

/* ---- the operations ---- */

static clf_status b_count(clf_store *s, const char *key, size_t keylen, uint32_t window,
                          uint32_t n, int64_t now, int64_t *out)
{
    st_slot sl = place(s, key, keylen);
    if (!lock_bucket(s, sl.bucket)) return CLF_E_STATE;
    int refused;
    st_entry *e = find(s, sl, key, keylen, CLF_STATE_COUNTER, window, now, n ? (double)n : -1,
                       &refused);
    if (!e) {
        unlock_bucket(s, sl.bucket);
        *out = 0;
        return refused ? CLF_E_LIMIT : CLF_OK;
    }
    now = advance(e, now);
    if (n) {
        e->u.c.cur = sat_add(e->u.c.cur, n);
        e->u.c.pcur = sat_add(e->u.c.pcur, n);
        e->dirty = 1;
    }
    *out = counter_estimate(e, now);
    unlock_bucket(s, sl.bucket);
    return CLF_OK;
}

#define SCORE_MAX 1e12

static clf_status b_score(clf_store *s, const char *key, size_t keylen, uint32_t half_life,
                          int64_t add, int64_t now, double *out)
{
    st_slot sl = place(s, key, keylen);
    if (!lock_bucket(s, sl.bucket)) return CLF_E_STATE;
    int refused;
    st_entry *e = find(s, sl, key, keylen, CLF_STATE_SCORE, half_life, now,
                       add > 0 ? (double)add : -1, &refused);
    if (!e) {
        unlock_bucket(s, sl.bucket);
        *out = 0;
        return refused ? CLF_E_LIMIT : CLF_OK;
    }
    advance(e, now);
    if (add > 0) {
        e->u.s.v = fmin(e->u.s.v + (double)add, SCORE_MAX);
        e->u.s.p = fmin(e->u.s.p + (double)add, SCORE_MAX);
        e->dirty = 1;
    }
    *out = e->u.s.v + e->u.s.r;
    unlock_bucket(s, sl.bucket);
    return CLF_OK;
}

static clf_status b_mark(clf_store *s, const char *key, size_t keylen, uint32_t ttl, int set,
                         int64_t now, int *out)
{
    st_slot sl = place(s, key, keylen);
    if (!lock_bucket(s, sl.bucket)) return CLF_E_STATE;
    int refused;
    st_entry *e = find(s, sl, key, keylen, CLF_STATE_MARK, ttl, now, set ? MARK_RANK * 2 : -1,
                       &refused);
    if (!e) {
        unlock_bucket(s, sl.bucket);
        *out = 0;
        return refused ? CLF_E_LIMIT : CLF_OK;
    }
    now = advance(e, now);
    if (set) {
        e->u.m.exp = now + (int64_t)ttl * 1000;
        e->u.m.pexp = e->u.m.exp;
        e->dirty = 1;
    }
    *out = (e->u.m.exp > e->u.m.rexp ? e->u.m.exp : e->u.m.rexp) > now;
    unlock_bucket(s, sl.bucket);
    return CLF_OK;
}

/* Times are clamped to +-2^53 ms (285,000 years): a host's clock or a
 * fleet's figures of any size then stay clear of overflow in every
 * window and expiry computed from them. */
#define ST_TIME_LIMIT (INT64_C(1) << 53)
static int64_t clamp_ms(int64_t t)
{
    return t > ST_TIME_LIMIT ? ST_TIME_LIMIT : t < -ST_TIME_LIMIT ? -ST_TIME_LIMIT : t;
}

/* The key says the kind and period the call gives: an entry's kind and
 * period are its key's, whoever calls (the sync layer parses them back). */
static int key_fits(const char *key, size_t keylen, int kind, uint32_t param)
{
    int k;
    uint32_t p;
    return vm_state_key_parse(key, keylen, &k, &p) && k == kind && p == param;
}

clf_status vm_store_count(clf_store *s, const char *key, size_t keylen, uint32_t window_s,
                          uint32_t n, int64_t now_ms, int64_t *out)
{
    *out = 0;
    if (!s) return CLF_E_STATE;
    if (s->builtin && !key_fits(key, keylen, CLF_STATE_COUNTER, window_s)) return CLF_E_INVALID;
    if (!s->builtin) return s->ops.count(s->self, key, keylen, window_s, n, now_ms, out);
    return b_count(s, key, keylen, window_s, n, clamp_ms(now_ms), out);
}

clf_status vm_store_score(clf_store *s, const char *key, size_t keylen, uint32_t half_life_s,
                          int64_t add, int64_t now_ms, double *out)
{
    *out = 0;
    if (!s) return CLF_E_STATE;
    if (s->builtin && !key_fits(key, keylen, CLF_STATE_SCORE, half_life_s)) return CLF_E_INVALID;
    if (!s->builtin) return s->ops.score(s->self, key, keylen, half_life_s, add, now_ms, out);
    return b_score(s, key, keylen, half_life_s, add, clamp_ms(now_ms), out);
}

clf_status vm_store_mark(clf_store *s, const char *key, size_t keylen, uint32_t ttl_s, int set,
                         int64_t now_ms, int *out)
{
    *out = 0;
    if (!s) return CLF_E_STATE;
    if (s->builtin && !key_fits(key, keylen, CLF_STATE_MARK, ttl_s)) return CLF_E_INVALID;
    if (!s->builtin) return s->ops.mark(s->self, key, keylen, ttl_s, set, now_ms, out);
    return b_mark(s, key, keylen, ttl_s, set, clamp_ms(now_ms), out);
}

/* ---- creation ---- */

static uint64_t nbuckets_for(uint64_t bytes) { return (bytes - ST_HEAD) / sizeof(st_bucket); }

static clf_status check_region(const void *mem, uint64_t bytes, char *err, size_t errlen)
{
    if (!mem || ((uintptr_t)mem & 63)) {
        vm_errf(err, errlen, "the store's memory must be 64-byte aligned");
        return CLF_E_INVALID;
    }
    if (bytes < CLF_STORE_MIN_BYTES || bytes > (UINT64_C(1) << 40)) {
        vm_errf(err, errlen, "a store of %llu bytes: it must hold %llu to 2^40 bytes",
                (unsigned long long)bytes, (unsigned long long)CLF_STORE_MIN_BYTES);
        return CLF_E_INVALID;
    }
    return CLF_OK;
}

clf_status vm_store_format(void *mem, uint64_t bytes, const uint8_t seed[16], char *err,
                           size_t errlen)
{
    clf_status st = check_region(mem, bytes, err, errlen);
    if (st) return st;
    uint8_t k[16];
    if (seed) {
        memcpy(k, seed, 16);
    } else if (getrandom(k, sizeof k, 0) != (ssize_t)sizeof k) {
        vm_errf(err, errlen, "getrandom: %s", strerror(errno));
        return CLF_E_IO;
    }
    uint64_t nb = nbuckets_for(bytes);
    /* All of it, once: a host's region may hold anything, and the
     * store is then resident at its full size from the start (what an
     * operator sized is what it costs, flood or not). */
    memset(mem, 0, (size_t)bytes);
    st_region *r = mem;
    memcpy(&r->k0, k, 8);
    memcpy(&r->k1, k + 8, 8);
    r->version = ST_VERSION;
    r->entry_bytes = sizeof(st_entry);
    r->bytes = bytes;
    r->nbuckets = nb;
    atomic_thread_fence(memory_order_release);
    r->magic = ST_MAGIC;
    return CLF_OK;
}

clf_status vm_store_attach(void *mem, uint64_t bytes, int owns, clf_store **out, char *err,
                           size_t errlen)
{
    clf_status st = check_region(mem, bytes, err, errlen);
    if (st) return st;
    st_region *r = mem;
    if (r->magic != ST_MAGIC || r->version != ST_VERSION || r->entry_bytes != sizeof(st_entry) ||
        r->bytes != bytes || r->nbuckets != nbuckets_for(bytes)) {
        vm_errf(err, errlen, "the memory does not hold a formatted store of %llu bytes "
                             "(clf_store_format)", (unsigned long long)bytes);
        return CLF_E_FORMAT;
    }
    clf_store *s = calloc(1, sizeof *s);
    if (!s) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    s->builtin = 1;
    s->owns = owns;
    s->r = r;
    s->buckets = (st_bucket *)((char *)mem + ST_HEAD);
    *out = s;
    return CLF_OK;
}

clf_status vm_store_wrap(const clf_store_ops *ops, void *self, clf_store **out)
{
    clf_store *s = calloc(1, sizeof *s);
    if (!s) return CLF_E_NOMEM;
    s->ops = *ops;
    s->self = self;
    *out = s;
    return CLF_OK;
}

void vm_store_free(clf_store *s)
{
    if (!s) return;
    if (!s->builtin && s->ops.destroy) s->ops.destroy(s->self);
    if (s->builtin && s->owns) munmap(s->r, (size_t)s->r->bytes);
    free(s);
}

int vm_store_builtin(const clf_store *s) { return s && s->builtin; }

void vm_store_stats(const clf_store *s, clf_store_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!vm_store_builtin(s)) return;
    out->bytes = s->r->bytes;
    out->capacity = s->r->nbuckets * ST_WAYS;
    out->used = atomic_load_explicit(&s->r->used, memory_order_relaxed);
    out->evictions = atomic_load_explicit(&s->r->evictions, memory_order_relaxed);
    out->refused = atomic_load_explicit(&s->r->refused, memory_order_relaxed);
    out->busy = atomic_load_explicit(&s->r->busy, memory_order_relaxed);
}

/* ---- sync ---- */

clf_status vm_store_collect(clf_store *s, uint32_t *cursor, uint32_t max_buckets,
                            clf_state_delta_fn fn, void *ud)
{
    uint64_t nb = s->r->nbuckets, b = *cursor < nb ? *cursor : 0;
    for (uint32_t done = 0; done < max_buckets && b < nb; done++, b++) {
        st_entry copy[ST_WAYS];
        clf_state_delta d[ST_WAYS];
        unsigned n = 0;
        if (!lock_bucket(s, b)) continue; /* its changes wait for the next round */
        st_entry *e = s->buckets[b].e;
        for (unsigned i = 0; i < ST_WAYS; i++) {
            if (!e[i].tag || !e[i].dirty) continue;
            copy[n] = e[i];
            memset(&d[n], 0, sizeof d[n]);
            d[n].kind = (clf_state_kind)e[i].kind;
            d[n].param = e[i].param;
            if (e[i].kind == CLF_STATE_COUNTER) {
                d[n].window = e[i].u.c.win;
                d[n].cur = e[i].u.c.pcur;
                d[n].prev = e[i].u.c.pprev;
                e[i].u.c.pcur = e[i].u.c.pprev = 0;
            } else if (e[i].kind == CLF_STATE_SCORE) {
                d[n].score = e[i].u.s.p;
                d[n].at_ms = e[i].t_ms;
                e[i].u.s.p = 0;
            } else {
                d[n].expires_ms = e[i].u.m.pexp;
                e[i].u.m.pexp = 0;
            }
            e[i].dirty = 0;
            n++;
        }
        unlock_bucket(s, b);
        for (unsigned i = 0; i < n; i++) {
            d[i].key = copy[i].key;
            d[i].keylen = copy[i].keylen;
            fn(ud, &d[i]);
        }
    }
    *cursor = b >= nb ? 0 : (uint32_t)b;
    return CLF_OK;
}

static uint32_t remote_part(uint64_t total, uint32_t local, uint32_t pending)
{
    uint64_t delivered = (uint64_t)local - pending;
    return total > delivered ? sat_add(0, total - delivered) : 0;
}

clf_status vm_store_merge(clf_store *s, const clf_state_remote *r)
{
    int kind;
    uint32_t param;
    if (!vm_state_key_parse(r->key, r->keylen, &kind, &param)) return CLF_E_INVALID;
    int64_t W = (int64_t)param * 1000, window = r->window, at = clamp_ms(r->at_ms);
    if (window > ST_TIME_LIMIT / W) window = ST_TIME_LIMIT / W;
    if (window < -ST_TIME_LIMIT / W) window = -ST_TIME_LIMIT / W;
    int64_t now = kind == CLF_STATE_COUNTER ? window * W : kind == CLF_STATE_SCORE ? at : 0;
    double worth = kind == CLF_STATE_COUNTER ? (double)r->cur + (double)r->prev
                   : kind == CLF_STATE_SCORE ? r->score : MARK_RANK * 2;
    st_slot sl = place(s, r->key, r->keylen);
    if (!lock_bucket(s, sl.bucket)) return CLF_E_STATE;
    int refused;
    st_entry *e = find(s, sl, r->key, r->keylen, kind, param, now < 0 ? 0 : now, worth, &refused);
    if (!e) {
        unlock_bucket(s, sl.bucket);
        return CLF_E_LIMIT;
    }
    if (kind == CLF_STATE_COUNTER) {
        roll_to(e, window);
        if (window * W > e->t_ms) e->t_ms = window * W; /* its time is its window's, at least */
        if (window == e->u.c.win) {
            e->u.c.rcur = remote_part(r->cur, e->u.c.cur, e->u.c.pcur);
            e->u.c.rprev = remote_part(r->prev, e->u.c.prev, e->u.c.pprev);
        } else if (window == e->u.c.win - 1) {
            e->u.c.rprev = remote_part(r->cur, e->u.c.prev, e->u.c.pprev);
        }
    } else if (kind == CLF_STATE_SCORE) {
        double fleet = r->score;
        if (at > e->t_ms) advance(e, at);
        else if (at < e->t_ms)
            fleet *= exp2(-(double)(e->t_ms - at) / ((double)param * 1000.0));
        double delivered = e->u.s.v - e->u.s.p;
        e->u.s.r = fleet > delivered ? fmin(fleet - delivered, SCORE_MAX) : 0;
    } else if (r->expires_ms > e->u.m.rexp) {
        e->u.m.rexp = r->expires_ms;
    }
    unlock_bucket(s, sl.bucket);
    return CLF_OK;
}

clf_status vm_store_peek(clf_store *s, const char *key, size_t keylen, int64_t now_ms,
                         int64_t *out)
{
    int kind;
    uint32_t param;
    *out = 0;
    if (!vm_state_key_parse(key, keylen, &kind, &param)) return CLF_E_INVALID;
    now_ms = clamp_ms(now_ms);
    st_slot sl = place(s, key, keylen);
    if (!lock_bucket(s, sl.bucket)) return CLF_E_STATE;
    int refused;
    st_entry *e = find(s, sl, key, keylen, kind, param, now_ms, -1, &refused);
    if (e) {
        st_entry c = *e;
        int64_t now = advance(&c, now_ms);
        if (kind == CLF_STATE_COUNTER) *out = counter_estimate(&c, now);
        else if (kind == CLF_STATE_SCORE) *out = (int64_t)floor(c.u.s.v + c.u.s.r + 0.5);
        else *out = (c.u.m.exp > c.u.m.rexp ? c.u.m.exp : c.u.m.rexp) > now;
    }
    unlock_bucket(s, sl.bucket);
    return CLF_OK;
}

clf_status vm_store_poke(clf_store *s, const char *key, size_t keylen, int64_t now_ms,
                         int64_t value)
{
    int kind;
    uint32_t param;
    if (!vm_state_key_parse(key, keylen, &kind, &param) || value < 0) return CLF_E_INVALID;
    now_ms = clamp_ms(now_ms);
    if (value > ST_TIME_LIMIT / 1000) value = ST_TIME_LIMIT / 1000;
    st_slot sl = place(s, key, keylen);
    if (!lock_bucket(s, sl.bucket)) return CLF_E_STATE;
    int refused;
    st_entry *e = find(s, sl, key, keylen, kind, param, now_ms, MARK_RANK * 2, &refused);
    if (!e) {
        unlock_bucket(s, sl.bucket);
        return CLF_E_LIMIT;
    }
    int64_t now = advance(e, now_ms);
    if (kind == CLF_STATE_COUNTER) {
        e->u.c.cur = value > UINT32_MAX ? UINT32_MAX : (uint32_t)value;
        e->u.c.prev = 0;
    } else if (kind == CLF_STATE_SCORE) {
        e->u.s.v = fmin((double)value, SCORE_MAX);
    } else {
        e->u.m.exp = now - value * 1000 + (int64_t)param * 1000;
    }
    unlock_bucket(s, sl.bucket);
    return CLF_OK;
}
