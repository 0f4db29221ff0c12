/*
 * srv_state.h: sharing classify-serve's state store (the rules'
 * counters, scores and marks; docs/state.md) with a fleet through Redis,
 * with --state-redis (srv_sync.h). The store itself is made with the
 * first rules that use state and kept in srv_globals.store
 * (srv_rules_load); the sync reads it there at each interval.
 */
#ifndef CLI_SRV_STATE_H
#define CLI_SRV_STATE_H

#include "srv_config.h"
#include "srv_sync.h"

#include <classify.h>
#include <uv.h>

#include <stddef.h>

typedef struct srv_state {
    srv_sync *sync; /* NULL: no --state-redis, or stopped */
    int has_redis;  /* set before the workers start */
    char redis_name[SRV_REDIS_HOST_MAX + SRV_REDIS_PATH_MAX + 32];
    srv_sync_stats stats;
} srv_state;

/* Starts syncing `*store` (NULL until rules use state) through
 * cfg->state_redis on `loop` (the main thread's), when given. Returns 0,
 * or -1 after logging why. Main thread, before the workers start. */
int srv_state_start_sync(srv_state *s, const srv_config *cfg, clf_store *_Atomic *store,
                         uv_loop_t *loop);

/* Stops syncing (SIGTERM, or a start that failed): the batch in flight is
 * dropped, the handles closed, so the loop can end; the store is not
 * touched afterwards. */
void srv_state_stop_sync(srv_state *s);

/* The --state-redis figures for /metrics in a new buffer (*out, *len;
 * the caller frees it; empty without --state-redis). Any thread. Returns
 * 0 or -1 (out of memory). */
int srv_state_render(const srv_state *s, char **out, size_t *len);

#endif /* CLI_SRV_STATE_H */
