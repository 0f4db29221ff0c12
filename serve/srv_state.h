/*
 * srv_state.h: classify-serve's state store (the rules' counters, scores
 * and marks; docs/state.md) and, with --state-redis, its sharing with a
 * fleet (srv_sync.h). One built-in store for the whole process, shared by
 * every worker's context across rules reloads; made before the workers
 * start and freed after they end.
 */
#ifndef CLI_SRV_STATE_H
#define CLI_SRV_STATE_H

#include "srv_config.h"
#include "srv_sync.h"

#include <classify.h>
#include <uv.h>

#include <stddef.h>

typedef struct srv_state {
    clf_store *store; /* NULL: --state-bytes 0 */
    srv_sync *sync;   /* NULL: no --state-redis, or stopped */
    int has_redis;
    char redis_name[SRV_REDIS_HOST_MAX + SRV_REDIS_PATH_MAX + 32];
    srv_sync_stats stats;
} srv_state;

/* Makes the store (cfg->state_bytes). Returns 0, or -1 after logging why.
 * Main thread, before the workers. */
int srv_state_open(srv_state *s, const srv_config *cfg);

/* Starts syncing through cfg->state_redis on `loop` (the main thread's),
 * when given. Returns 0, or -1 (out of memory). */
int srv_state_start_sync(srv_state *s, const srv_config *cfg, uv_loop_t *loop);

/* Stops syncing (SIGTERM): the loop can then end. */
void srv_state_stop_sync(srv_state *s);

/* Frees the store, once no context uses it. */
void srv_state_close(srv_state *s);

/* The state's /metrics text in a new buffer (*out, *len; the caller
 * frees it). Any thread. Returns 0 or -1 (out of memory). */
int srv_state_render(const srv_state *s, char **out, size_t *len);

#endif /* CLI_SRV_STATE_H */
