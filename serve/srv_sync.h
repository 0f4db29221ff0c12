/*
 * srv_sync.h: sharing the state store with a fleet through Redis
 * (--state-redis; docs/classify-serve.md, "Shared state through Redis").
 *
 * Every --state-sync-interval, on the main thread's loop: the entries
 * this instance changed since the last sync are collected from the store
 * (clf_store_collect, in slices, so no request thread waits more than a
 * bucket copy), their changes sent to Redis in one pipeline, and the
 * fleet's totals that Redis answers merged back (clf_store_merge) as
 * each entry's remote part. Requests never wait for any of it: the
 * workers read the local store, whose local part is exact for this
 * instance and whose remote part is at most one interval (plus a round
 * trip) old for every entry this instance is using.
 *
 * While Redis is unreachable nothing is collected, so the store keeps the
 * changes, and the first sync after the connection is back delivers
 * them: counters in the current and previous windows, scores decayed to
 * then, marks not yet expired. A batch in flight when the connection is
 * lost is not sent again (its changes may have reached Redis: sending
 * them again could count them twice).
 *
 * A mark this instance sets is also PUBLISHed on PREFIX "marks", which a
 * second connection SUBSCRIBEs to: every instance merges every mark the
 * fleet sets, also those it only tests (the store syncs only the entries
 * an instance changed).
 */
#ifndef CLI_SRV_SYNC_H
#define CLI_SRV_SYNC_H

#include "srv_redis.h"

#include <classify.h>
#include <uv.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Entries collected per sync at most; the walk goes on from there at the
 * next one (a flood of new keys is delivered over several intervals). */
#define SRV_SYNC_BATCH_MAX 8192
/* Store buckets walked per turn of the loop. */
#define SRV_SYNC_SLICE_BUCKETS 512
/* Redis keys outlive the time their value matters by this much, for
 * clocks that disagree. */
#define SRV_SYNC_EXPIRY_SLACK_MS 60000

enum srv_sync_tick {
    SRV_SYNC_TICK_SYNCED, /* a batch was collected and sent (maybe empty, or no store yet) */
    SRV_SYNC_TICK_DOWN,   /* Redis unreachable: nothing collected */
    SRV_SYNC_TICK_BUSY,   /* the last batch still in flight: skipped */
    SRV_SYNC_TICKS
};

/* Written by the main thread (srv_count), read by any (/metrics). */
typedef struct srv_sync_stats {
    srv_redis_stats redis;
    srv_redis_stats sub;                  /* the marks channel's connection */
    atomic_uint_least64_t marks_sent;     /* PUBLISHed: marks this instance set */
    atomic_uint_least64_t marks_received; /* the fleet's marks from the channel */
    atomic_uint_least64_t ticks[SRV_SYNC_TICKS];
    atomic_uint_least64_t partial;     /* batches that stopped at SRV_SYNC_BATCH_MAX */
    atomic_uint_least64_t delivered;   /* entries whose changes Redis acknowledged */
    atomic_uint_least64_t merged;      /* fleet values merged into the store */
    atomic_uint_least64_t refused;     /* merges the store had no room for */
    atomic_uint_least64_t lost;        /* entries of a batch cut by a lost connection */
    atomic_uint_least64_t last_sync_ms; /* Unix ms a batch last completed */
} srv_sync_stats;

typedef struct srv_sync srv_sync;

/* Starts syncing the store `*store` (NULL until rules use state; read at
 * each interval; the store outlives the sync) through `url` on `loop`:
 * interval_ms between syncs, timeout_ms for Redis's connection
 * and replies, `prefix` before every Redis key (copied, at most 64
 * bytes). `st` (zeroed) must outlive the sync. Returns NULL when out of
 * memory. */
srv_sync *srv_sync_new(uv_loop_t *loop, clf_store *_Atomic *store, const srv_redis_url *url,
                       const char *prefix, uint64_t interval_ms, uint64_t timeout_ms,
                       srv_sync_stats *st);

/* Stops: the batch in flight is abandoned, the connection closed, the
 * handles closed; `s` is freed once libuv is done with them. */
void srv_sync_close(srv_sync *s);

#endif /* CLI_SRV_SYNC_H */
