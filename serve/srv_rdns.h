/*
 * srv_rdns.h: forward-confirmed reverse DNS for the rules' req.rdns and
 * req.rdns_checked (docs/classify-serve.md, "Reverse DNS").
 *
 * Each worker has its own c-ares channel, driven by its own libuv loop
 * (a uv_poll_t per socket c-ares opens, one uv_timer_t for its time-outs),
 * so a lookup never blocks the loop and needs no other thread; the
 * answers go into the cache all workers share (srv_rdns_cache.h). A
 * request never waits for DNS: it is classified with what the cache knows
 * now, and a miss starts the lookup for the requests that follow.
 */
#ifndef CLI_SRV_RDNS_H
#define CLI_SRV_RDNS_H

#include "srv_config.h"
#include "srv_metrics.h"
#include "srv_rdns_cache.h"

#include <classify.h>
#include <uv.h>

#include <stddef.h>

/* Names of one PTR answer tried in turn for a forward match; the rest are
 * ignored. */
#define SRV_RDNS_MAX_NAMES 4
/* Lookups one worker has in flight at most; past that a miss starts none
 * (counted as skipped), which bounds what a flood of new addresses makes
 * the resolver do. */
#define SRV_RDNS_MAX_INFLIGHT 256
/* How long a failed lookup (time-out, SERVFAIL) is remembered before the
 * next request from the address asks again. */
#define SRV_RDNS_FAIL_TTL_MS 5000

typedef struct srv_rdns srv_rdns;

/* Once per process, before any worker's srv_rdns_new (c-ares's global
 * initialisation is not thread-safe). Returns 0 or -1. */
int srv_rdns_library_init(void);
void srv_rdns_library_cleanup(void);

/* Checks cfg->resolver as srv_rdns_new would use it (--check and the
 * start, before any thread). Returns 0, or -1 with a message in err. */
int srv_rdns_check(const srv_config *cfg, char *err, size_t errlen);

/* A worker's resolver on `loop`, answering into `cache` and counting into
 * `m` (both outlive it). Returns 0, or -1 with a message in err. */
int srv_rdns_new(uv_loop_t *loop, srv_rdns_cache *cache, const srv_config *cfg, srv_metrics *m,
                 srv_rdns **out, char *err, size_t errlen);

/* Gives the request in `ctx` (its peer and headers set) what is known of
 * its client address's reverse DNS (clf_ctx_set_rdns), and starts a
 * lookup when nothing is. Never blocks; allocates nothing but what c-ares
 * allocates for a lookup it starts. Worker thread only. */
void srv_rdns_apply(srv_rdns *r, clf_ctx *ctx);

/* Cancels the lookups in flight (their addresses are left to be asked
 * again) and closes the handles, so the loop can end; later requests are
 * answered from the cache only. Worker thread, or after it ended. */
void srv_rdns_stop(srv_rdns *r);
/* After the loop has run the handles' close callbacks. */
void srv_rdns_free(srv_rdns *r);

#endif /* CLI_SRV_RDNS_H */
