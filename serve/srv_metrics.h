/*
 * srv_metrics.h: counters for /metrics. Each worker thread owns one
 * srv_metrics and is its only writer, so counting is a relaxed load and
 * store (no locked instruction, no sharing of cache lines between
 * workers); the admin endpoint reads every worker's counters and adds
 * them up.
 */
#ifndef CLI_SRV_METRICS_H
#define CLI_SRV_METRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Request latency buckets, upper bounds in microseconds (+Inf implied). */
#define SRV_LAT_BUCKETS 12
extern const unsigned srv_lat_bounds_us[SRV_LAT_BUCKETS];

/* Distinct (verdict, reason) pairs counted per worker (up to 3/4 of the
 * slots); more are counted under reason "(other)" so a ruleset with generated reasons cannot grow
 * memory or the scrape without bound. */
#define SRV_REASON_SLOTS 256
#define SRV_REASON_MAX 120

typedef struct srv_reason_slot {
    atomic_uint_least64_t count;
    atomic_int used; /* set last, with release, under the lock */
    uint32_t hash;
    int verdict; /* 0 reject, 1 accept, 2 error */
    uint16_t len;
    char text[SRV_REASON_MAX];
} srv_reason_slot;

enum srv_err_kind {
    SRV_ERR_400,
    SRV_ERR_404,
    SRV_ERR_408,
    SRV_ERR_431,
    SRV_ERR_CLASSIFY, /* clf_eval failed: --on-error decided */
    SRV_ERR_KINDS
};

/* Outcomes of reverse-DNS lookups (srv_rdns.c). */
enum srv_rdns_result {
    SRV_RDNS_RES_CONFIRMED,
    SRV_RDNS_RES_UNCONFIRMED, /* no name, or none that lists the address */
    SRV_RDNS_RES_FAILED,      /* time-out, SERVFAIL, no resolver: not known */
    SRV_RDNS_RESULTS
};

/* AGENT-DISCONNECT frames sent, by SPOP status code (0-13; the last
 * slot counts any other). */
#define SRV_SPOA_STATUSES 14

typedef struct srv_metrics {
    pthread_mutex_t lock; /* slot insertion vs. a scrape */
    srv_reason_slot slots[SRV_REASON_SLOTS];
    unsigned used_slots; /* owner only */
    atomic_uint_least64_t other[3]; /* by verdict, once the slots are full */
    atomic_uint_least64_t lat[SRV_LAT_BUCKETS + 1];
    atomic_uint_least64_t lat_sum_us;
    atomic_uint_least64_t errors[SRV_ERR_KINDS];
    atomic_uint_least64_t conns_accepted;
    atomic_uint_least64_t conns_refused; /* over --max-connections */
    atomic_uint_least64_t conns_timed_out;
    atomic_uint_least64_t admin_requests;
    atomic_uint_least64_t spoa_disconnects[SRV_SPOA_STATUSES + 1];
    atomic_uint_least64_t rdns_lookups; /* started */
    atomic_uint_least64_t rdns_hits;    /* a request answered from the cache */
    atomic_uint_least64_t rdns_skipped; /* a miss with SRV_RDNS_MAX_INFLIGHT in flight */
    atomic_uint_least64_t rdns_results[SRV_RDNS_RESULTS];
} srv_metrics;

int srv_metrics_init(srv_metrics *m);
void srv_metrics_destroy(srv_metrics *m);

/* Single-writer increment. */
static inline void srv_count(atomic_uint_least64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Counts one classified request (verdict 0 reject, 1 accept, 2 error). */
void srv_metrics_verdict(srv_metrics *m, int verdict, const char *reason,
                         size_t reason_len);
void srv_metrics_latency(srv_metrics *m, uint64_t us);

/* Process-wide figures the main thread keeps. */
typedef struct srv_globals {
    atomic_uint_least64_t reloads_ok, reloads_failed;
    atomic_uint_least64_t rules_generation;
    atomic_uint_least64_t rules_loaded_at; /* Unix seconds */
    atomic_long conns_open;
    struct srv_rdns_cache *rdns_cache; /* NULL: --rdns off; set before the workers start */
    /* The state store (docs/state.md): made by the main thread with the
     * first rules that use state, then kept across reloads; NULL until. */
    struct clf_store *_Atomic store;
    const struct srv_state *state;     /* --state-redis figures; set before the workers start */
} srv_globals;

/* Renders the Prometheus text exposition (version 0.0.4) of all workers
 * into a new buffer (*out, *len; the caller frees it). Returns 0 or -1
 * (out of memory). */
int srv_metrics_render(srv_metrics *const *workers, size_t nworkers,
                       const srv_globals *g, char **out, size_t *len);

#endif /* CLI_SRV_METRICS_H */
