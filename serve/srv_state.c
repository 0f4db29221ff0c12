/*
 * srv_state.c: the --state-redis sync and its figures (srv_state.h).
 */
#include "srv_state.h"
#include "srv_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

int srv_state_start_sync(srv_state *s, const srv_config *cfg, clf_store *_Atomic *store,
                         uv_loop_t *loop)
{
    if (cfg->state_redis == NULL)
        return 0;
    srv_redis_url url;
    char err[256];
    if (srv_redis_url_parse(cfg->state_redis, &url, err, sizeof err) != 0) {
        srv_log_error("--state-redis: %s", err); /* srv_config_parse checked it */
        return -1;
    }
    srv_redis_url_name(&url, s->redis_name, sizeof s->redis_name);
    for (char *c = s->redis_name; *c; c++) /* a label value: no quote, no backslash */
        if (*c == '"' || *c == '\\')
            *c = '_';
    s->has_redis = 1;
    s->sync = srv_sync_new(loop, store, &url, cfg->state_redis_prefix, cfg->state_sync_ms,
                           cfg->state_redis_timeout_ms, &s->stats);
    if (s->sync == NULL)
        return -1;
    srv_log_info("sharing state through %s: changes sent and the fleet's counts merged every "
                 "%g s; keys prefixed '%s'", s->redis_name, (double)cfg->state_sync_ms / 1000,
                 cfg->state_redis_prefix);
    return 0;
}

void srv_state_stop_sync(srv_state *s)
{
    if (s->sync != NULL) {
        srv_sync_close(s->sync);
        s->sync = NULL;
    }
}

static unsigned long long ld(const atomic_uint_least64_t *c)
{
    return (unsigned long long)atomic_load_explicit(c, memory_order_relaxed);
}

static void render_redis(FILE *f, const srv_state *s)
{
    const srv_sync_stats *st = &s->stats;
    const srv_redis_stats *r = &st->redis;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    uint64_t now = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
    uint64_t down = ld(&r->down_since_ms);
    int up = atomic_load_explicit(&r->up, memory_order_relaxed);
    fprintf(f,
            "# HELP classify_state_redis_up 1 while the state is shared through Redis; 0 while "
            "this instance counts alone.\n"
            "# TYPE classify_state_redis_up gauge\n"
            "classify_state_redis_up{redis=\"%s\"} %d\n"
            "# HELP classify_state_redis_down_seconds How long Redis has been unreachable (0 while up).\n"
            "# TYPE classify_state_redis_down_seconds gauge\n"
            "classify_state_redis_down_seconds %.3f\n"
            "# HELP classify_state_redis_subscribed 1 while the marks channel's connection is up.\n"
            "# TYPE classify_state_redis_subscribed gauge\n"
            "classify_state_redis_subscribed %d\n"
            "# HELP classify_state_redis_connects_total Connections to Redis made (handshake done), "
            "both of them.\n"
            "# TYPE classify_state_redis_connects_total counter\n"
            "classify_state_redis_connects_total %llu\n"
            "# HELP classify_state_redis_failures_total Failed connection attempts and lost "
            "connections, by cause (protocol: bytes that are not Redis's; reply: a reply of the "
            "wrong kind).\n"
            "# TYPE classify_state_redis_failures_total counter\n",
            s->redis_name, up, !up && down && now > down ? (double)(now - down) / 1000 : 0.0,
            atomic_load_explicit(&st->sub.up, memory_order_relaxed),
            ld(&r->connects) + ld(&st->sub.connects));
    for (int k = 0; k < SRV_REDIS_F_KINDS; k++)
        fprintf(f, "classify_state_redis_failures_total{kind=\"%s\"} %llu\n",
                srv_redis_fail_names[k], ld(&r->failures[k]) + ld(&st->sub.failures[k]));
    fprintf(f,
            "# HELP classify_state_redis_commands_total Commands sent to Redis.\n"
            "# TYPE classify_state_redis_commands_total counter\n"
            "classify_state_redis_commands_total %llu\n"
            "# HELP classify_state_sync_ticks_total Sync intervals, by what happened.\n"
            "# TYPE classify_state_sync_ticks_total counter\n"
            "classify_state_sync_ticks_total{result=\"synced\"} %llu\n"
            "classify_state_sync_ticks_total{result=\"down\"} %llu\n"
            "classify_state_sync_ticks_total{result=\"busy\"} %llu\n"
            "# HELP classify_state_sync_partial_total Syncs that stopped at the batch limit (the "
            "rest follows).\n"
            "# TYPE classify_state_sync_partial_total counter\n"
            "classify_state_sync_partial_total %llu\n"
            "# HELP classify_state_sync_delivered_total Entries whose changes Redis took.\n"
            "# TYPE classify_state_sync_delivered_total counter\n"
            "classify_state_sync_delivered_total %llu\n"
            "# HELP classify_state_sync_merged_total Fleet values merged into the store, by result.\n"
            "# TYPE classify_state_sync_merged_total counter\n"
            "classify_state_sync_merged_total{result=\"merged\"} %llu\n"
            "classify_state_sync_merged_total{result=\"refused\"} %llu\n"
            "# HELP classify_state_sync_lost_total Entries whose changes were cut off by a lost "
            "connection (not sent again: never counted twice).\n"
            "# TYPE classify_state_sync_lost_total counter\n"
            "classify_state_sync_lost_total %llu\n"
            "# HELP classify_state_sync_marks_total Marks PUBLISHed (sent: set here) and taken "
            "from the marks channel (received: set anywhere, this instance's included).\n"
            "# TYPE classify_state_sync_marks_total counter\n"
            "classify_state_sync_marks_total{dir=\"sent\"} %llu\n"
            "classify_state_sync_marks_total{dir=\"received\"} %llu\n"
            "# HELP classify_state_sync_last_timestamp_seconds When a sync last completed.\n"
            "# TYPE classify_state_sync_last_timestamp_seconds gauge\n"
            "classify_state_sync_last_timestamp_seconds %.3f\n",
            ld(&r->commands) + ld(&st->sub.commands), ld(&st->ticks[SRV_SYNC_TICK_SYNCED]),
            ld(&st->ticks[SRV_SYNC_TICK_DOWN]), ld(&st->ticks[SRV_SYNC_TICK_BUSY]),
            ld(&st->partial), ld(&st->delivered), ld(&st->merged), ld(&st->refused),
            ld(&st->lost), ld(&st->marks_sent), ld(&st->marks_received),
            (double)ld(&st->last_sync_ms) / 1000);
}

int srv_state_render(const srv_state *s, char **out, size_t *len)
{
    FILE *f = open_memstream(out, len);
    if (f == NULL)
        return -1;
    if (s->has_redis)
        render_redis(f, s);
    if (ferror(f)) {
        fclose(f);
        free(*out);
        return -1;
    }
    fclose(f);
    return 0;
}
