/*
 * srv_rdns_cache.h: the reverse-DNS answers of classify-serve, shared by
 * every worker thread (docs/classify-serve.md, "Reverse DNS").
 *
 * One cache for all workers, because a proxy spreads a client's requests
 * over its connections and so over every worker: with a cache per worker
 * each would resolve each address again, and the request after the answer
 * came in would find it only on the worker that asked. The cache is split
 * into shards by a keyed hash of the address, each with its own mutex,
 * holding it only for a probe and a copy of at most 254 bytes.
 *
 * Bounded: the entries are allocated when the cache is made and never
 * more; a full shard reuses its least recently used entry. A lookup in
 * flight is an entry too (SRV_RDNS_PENDING), so that another worker seeing
 * the same address waits for that answer instead of asking again, and so
 * the lookups in flight are bounded by the cache as well.
 */
#ifndef CLI_SRV_RDNS_CACHE_H
#define CLI_SRV_RDNS_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* A DNS name as text, without the root's dot (RFC 1035 section 2.3.4). */
#define SRV_RDNS_NAME_MAX 253

typedef enum srv_rdns_state {
    SRV_RDNS_MISS = 0,  /* nothing known: the caller may start a lookup */
    SRV_RDNS_PENDING,   /* a lookup is in flight (started by any worker) */
    SRV_RDNS_CONFIRMED, /* a forward-confirmed name */
    SRV_RDNS_NONAME,    /* resolved: no name, or none that confirms */
    SRV_RDNS_FAILED     /* the lookup failed (time-out, SERVFAIL): not known */
} srv_rdns_state;

typedef struct srv_rdns_cache srv_rdns_cache;

/* A cache of at most `entries` answers (at least 1). Returns 0, or -1 when
 * out of memory. */
int srv_rdns_cache_new(size_t entries, srv_rdns_cache **out);
void srv_rdns_cache_free(srv_rdns_cache *c);

/* What is known of `addr` (16 bytes, IPv4 as ::ffff:a.b.c.d) at `now_ms`
 * (monotonic milliseconds). CONFIRMED copies the name to `name`
 * (SRV_RDNS_NAME_MAX + 1 bytes, NUL-terminated) and its length to *len.
 * An expired answer, or a lookup in flight for longer than
 * SRV_RDNS_PENDING_MS (its worker stopped), is MISS. With `claim` set, a
 * MISS makes the entry PENDING for the caller, who then owes it an
 * srv_rdns_cache_put. Thread-safe. */
srv_rdns_state srv_rdns_cache_get(srv_rdns_cache *c, const uint8_t addr[16], uint64_t now_ms,
                                  int claim, char *name, size_t *len);

/* A pending lookup is given up for lost after this long (c-ares answers
 * every query, if only with a time-out, well before). */
#define SRV_RDNS_PENDING_MS 60000

/* Stores the outcome of a lookup: CONFIRMED (with name, len bytes),
 * NONAME or FAILED, kept for ttl_ms. A name that srv_rdns_host_name
 * refuses is stored as NONAME: hostile answers never reach the rules.
 * Thread-safe. */
void srv_rdns_cache_put(srv_rdns_cache *c, const uint8_t addr[16], uint64_t now_ms,
                        srv_rdns_state st, const char *name, size_t len, uint64_t ttl_ms);

/* Entries in use (a scrape's gauge; takes every shard's lock). */
size_t srv_rdns_cache_count(srv_rdns_cache *c);

/* Checks a name a DNS answer gave: one trailing dot dropped, 1 to 253
 * bytes, labels of 1 to 63 bytes of letters, digits, '-' and '_'. Writes
 * it lower-cased to `out` (SRV_RDNS_NAME_MAX + 1 bytes, NUL-terminated)
 * and returns its length, or returns -1 for anything else (non-printable
 * bytes, escapes, empty labels, too long). */
int srv_rdns_host_name(const char *name, size_t len, char *out);

#endif /* CLI_SRV_RDNS_CACHE_H */
