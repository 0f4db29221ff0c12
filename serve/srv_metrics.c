/*
 * srv_metrics.c: per-worker counters and their Prometheus rendering.
 */
#include "classify.h"
#include "srv_metrics.h"
#include "srv_rdns_cache.h"
#include "srv_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const unsigned srv_lat_bounds_us[SRV_LAT_BUCKETS] = {
    25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 100000, 1000000};

int srv_metrics_init(srv_metrics *m)
{
    memset(m, 0, sizeof *m);
    return pthread_mutex_init(&m->lock, NULL) == 0 ? 0 : -1;
}

void srv_metrics_destroy(srv_metrics *m)
{
    pthread_mutex_destroy(&m->lock);
}

static uint32_t hash_reason(int verdict, const char *s, size_t n)
{
    uint32_t h = 2166136261u ^ (uint32_t)verdict;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int slot_matches(const srv_reason_slot *s, uint32_t h, int verdict,
                        const char *r, size_t n)
{
    return s->hash == h && s->verdict == verdict && s->len == n &&
           memcmp(s->text, r, n) == 0;
}

/* Open addressing; a slot, once used, never moves or changes its key, so
 * the owner reads keys without the lock. The lock only orders a new
 * slot's key against a concurrent scrape. A table 3/4 full counts new
 * reasons under "(other)" instead, which keeps probing short. */
void srv_metrics_verdict(srv_metrics *m, int verdict, const char *reason,
                         size_t len)
{
    if (reason == NULL)
        reason = "", len = 0;
    if (len > SRV_REASON_MAX)
        len = SRV_REASON_MAX;
    uint32_t h = hash_reason(verdict, reason, len);
    for (unsigned i = 0; i < SRV_REASON_SLOTS; i++) {
        srv_reason_slot *s = &m->slots[(h + i) % SRV_REASON_SLOTS];
        if (!atomic_load_explicit(&s->used, memory_order_relaxed)) {
            if (m->used_slots >= SRV_REASON_SLOTS * 3 / 4)
                break;
            pthread_mutex_lock(&m->lock);
            s->hash = h;
            s->verdict = verdict;
            s->len = (uint16_t)len;
            memcpy(s->text, reason, len);
            atomic_store_explicit(&s->count, 1, memory_order_relaxed);
            atomic_store_explicit(&s->used, 1, memory_order_release);
            pthread_mutex_unlock(&m->lock);
            m->used_slots++;
            return;
        }
        if (slot_matches(s, h, verdict, reason, len)) {
            srv_count(&s->count, 1);
            return;
        }
    }
    srv_count(&m->other[verdict], 1);
}

void srv_metrics_latency(srv_metrics *m, uint64_t us)
{
    unsigned b = 0;
    while (b < SRV_LAT_BUCKETS && us > srv_lat_bounds_us[b])
        b++;
    srv_count(&m->lat[b], 1);
    srv_count(&m->lat_sum_us, us);
}

/* ------------------------------------------------------------------------ */
/* Rendering. */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        if (b->oom)
            return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)n;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

/* A label value: backslash, double quote and newline are escaped (the
 * exposition format); other control bytes become '?'. */
static void sb_label(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == '"')
            sb_printf(b, "\\%c", c);
        else if (c == '\n')
            sb_printf(b, "\\n");
        else if (c < 0x20 || c == 0x7f)
            sb_printf(b, "?");
        else
            sb_printf(b, "%c", c);
    }
}

typedef struct agg {
    int verdict;
    size_t len;
    const char *text;
    uint64_t count;
} agg;

static const char *verdict_label(int v)
{
    return v == 1 ? "accept" : v == 0 ? "reject" : "error";
}

static uint64_t load(const atomic_uint_least64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* Adds up the reason slots of all workers; each worker's lock is held for
 * the whole scrape so the slot texts stay put while they are printed. */
static void render_reasons(sbuf *b, srv_metrics *const *w, size_t nw)
{
    size_t cap = nw * SRV_REASON_SLOTS, n = 0;
    agg *a = malloc(cap * sizeof *a);
    if (a == NULL) {
        b->oom = 1;
        return;
    }
    for (size_t k = 0; k < nw; k++)
        pthread_mutex_lock(&w[k]->lock);
    for (size_t k = 0; k < nw; k++) {
        for (unsigned i = 0; i < SRV_REASON_SLOTS; i++) {
            const srv_reason_slot *s = &w[k]->slots[i];
            if (!atomic_load_explicit(&s->used, memory_order_acquire))
                continue;
            size_t j = 0;
            while (j < n && !(a[j].verdict == s->verdict && a[j].len == s->len &&
                              memcmp(a[j].text, s->text, s->len) == 0))
                j++;
            if (j == n)
                a[n++] = (agg){s->verdict, s->len, s->text, 0};
            a[j].count += load(&s->count);
        }
    }
    sb_printf(b, "# HELP classify_requests_total Requests classified, by verdict and reason.\n"
                 "# TYPE classify_requests_total counter\n");
    for (size_t j = 0; j < n; j++) {
        sb_printf(b, "classify_requests_total{verdict=\"%s\",reason=\"",
                  verdict_label(a[j].verdict));
        sb_label(b, a[j].text, a[j].len);
        sb_printf(b, "\"} %llu\n", (unsigned long long)a[j].count);
    }
    for (int v = 0; v < 3; v++) {
        uint64_t o = 0;
        for (size_t k = 0; k < nw; k++)
            o += load(&w[k]->other[v]);
        if (o > 0)
            sb_printf(b, "classify_requests_total{verdict=\"%s\",reason=\"(other)\"} %llu\n",
                      verdict_label(v), (unsigned long long)o);
    }
    for (size_t k = nw; k-- > 0;)
        pthread_mutex_unlock(&w[k]->lock);
    free(a);
}

static uint64_t sum(srv_metrics *const *w, size_t nw, size_t offset)
{
    uint64_t t = 0;
    for (size_t k = 0; k < nw; k++)
        t += load((const atomic_uint_least64_t *)(const void *)((const char *)w[k] + offset));
    return t;
}

#define SUM(field) sum(w, nw, offsetof(srv_metrics, field))

static void render_rdns(sbuf *b, srv_metrics *const *w, size_t nw, srv_rdns_cache *c)
{
    sb_printf(b,
              "# HELP classify_rdns_lookups_total Reverse-DNS lookups started (cache misses).\n"
              "# TYPE classify_rdns_lookups_total counter\n"
              "classify_rdns_lookups_total %llu\n"
              "# HELP classify_rdns_cache_hits_total Requests given a cached reverse-DNS answer.\n"
              "# TYPE classify_rdns_cache_hits_total counter\n"
              "classify_rdns_cache_hits_total %llu\n"
              "# HELP classify_rdns_lookups_skipped_total Misses that started no lookup: too many in flight.\n"
              "# TYPE classify_rdns_lookups_skipped_total counter\n"
              "classify_rdns_lookups_skipped_total %llu\n"
              "# HELP classify_rdns_results_total Reverse-DNS lookups finished, by result.\n"
              "# TYPE classify_rdns_results_total counter\n"
              "classify_rdns_results_total{result=\"confirmed\"} %llu\n"
              "classify_rdns_results_total{result=\"unconfirmed\"} %llu\n"
              "classify_rdns_results_total{result=\"failed\"} %llu\n"
              "# HELP classify_rdns_cache_entries Reverse-DNS cache entries in use.\n"
              "# TYPE classify_rdns_cache_entries gauge\n"
              "classify_rdns_cache_entries %zu\n",
              (unsigned long long)SUM(rdns_lookups), (unsigned long long)SUM(rdns_hits),
              (unsigned long long)SUM(rdns_skipped),
              (unsigned long long)SUM(rdns_results[SRV_RDNS_RES_CONFIRMED]),
              (unsigned long long)SUM(rdns_results[SRV_RDNS_RES_UNCONFIRMED]),
              (unsigned long long)SUM(rdns_results[SRV_RDNS_RES_FAILED]),
              srv_rdns_cache_count(c));
}

static void render_state(sbuf *b, const clf_store *st)
{
    clf_store_stats s;
    clf_store_get_stats(st, &s);
    sb_printf(b,
              "# HELP classify_state_bytes Memory of the state store (--state-bytes).\n"
              "# TYPE classify_state_bytes gauge\n"
              "classify_state_bytes %llu\n"
              "# HELP classify_state_entries Entries the state store holds, and can hold.\n"
              "# TYPE classify_state_entries gauge\n"
              "classify_state_entries{of=\"used\"} %llu\n"
              "classify_state_entries{of=\"capacity\"} %llu\n"
              "# HELP classify_state_evictions_total Entries replaced by a newer one of no more value.\n"
              "# TYPE classify_state_evictions_total counter\n"
              "classify_state_evictions_total %llu\n"
              "# HELP classify_state_refused_total New entries not stored: their bucket held only more valuable ones.\n"
              "# TYPE classify_state_refused_total counter\n"
              "classify_state_refused_total %llu\n"
              "# HELP classify_state_busy_total State calls given up on a bucket lock (answered as absent).\n"
              "# TYPE classify_state_busy_total counter\n"
              "classify_state_busy_total %llu\n",
              (unsigned long long)s.bytes, (unsigned long long)s.used,
              (unsigned long long)s.capacity, (unsigned long long)s.evictions,
              (unsigned long long)s.refused, (unsigned long long)s.busy);
}

int srv_metrics_render(srv_metrics *const *w, size_t nw, const srv_globals *g,
                       char **out, size_t *len)
{
    sbuf b = {malloc(8192), 0, 8192, 0};
    if (b.p == NULL)
        return -1;
    render_reasons(&b, w, nw);

    sb_printf(&b, "# HELP classify_request_duration_seconds Time from a request's first byte to its answer being written.\n"
                  "# TYPE classify_request_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (unsigned i = 0; i <= SRV_LAT_BUCKETS; i++) {
        cum += SUM(lat[i]);
        if (i < SRV_LAT_BUCKETS)
            sb_printf(&b, "classify_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
                      srv_lat_bounds_us[i] / 1e6, (unsigned long long)cum);
        else
            sb_printf(&b, "classify_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                      (unsigned long long)cum);
    }
    sb_printf(&b, "classify_request_duration_seconds_sum %.6f\n"
                  "classify_request_duration_seconds_count %llu\n",
              (double)SUM(lat_sum_us) / 1e6, (unsigned long long)cum);

    static const char *const err_labels[SRV_ERR_KINDS] = {
        "bad_request", "not_found", "timeout", "headers_too_large", "classify_failed"};
    sb_printf(&b, "# HELP classify_errors_total Requests answered with an error, or whose classification failed.\n"
                  "# TYPE classify_errors_total counter\n");
    for (unsigned i = 0; i < SRV_ERR_KINDS; i++)
        sb_printf(&b, "classify_errors_total{kind=\"%s\"} %llu\n", err_labels[i],
                  (unsigned long long)SUM(errors[i]));

    sb_printf(&b, "# HELP classify_spoa_disconnects_total AGENT-DISCONNECT frames sent on SPOA "
                  "listeners, by SPOP status code (0: normal).\n"
                  "# TYPE classify_spoa_disconnects_total counter\n");
    for (unsigned i = 0; i <= SRV_SPOA_STATUSES; i++) {
        uint64_t n = SUM(spoa_disconnects[i]);
        if (i < SRV_SPOA_STATUSES)
            sb_printf(&b, "classify_spoa_disconnects_total{status=\"%u\"} %llu\n", i,
                      (unsigned long long)n);
        else if (n > 0)
            sb_printf(&b, "classify_spoa_disconnects_total{status=\"other\"} %llu\n",
                      (unsigned long long)n);
    }

    sb_printf(&b,
              "# HELP classify_connections_accepted_total Connections accepted.\n"
              "# TYPE classify_connections_accepted_total counter\n"
              "classify_connections_accepted_total %llu\n"
              "# HELP classify_connections_refused_total Connections closed at once: over --max-connections.\n"
              "# TYPE classify_connections_refused_total counter\n"
              "classify_connections_refused_total %llu\n"
              "# HELP classify_connections_timed_out_total Connections cut by --request-timeout.\n"
              "# TYPE classify_connections_timed_out_total counter\n"
              "classify_connections_timed_out_total %llu\n"
              "# HELP classify_connections_open Connections open now.\n"
              "# TYPE classify_connections_open gauge\n"
              "classify_connections_open %ld\n",
              (unsigned long long)SUM(conns_accepted), (unsigned long long)SUM(conns_refused),
              (unsigned long long)SUM(conns_timed_out),
              atomic_load_explicit(&g->conns_open, memory_order_relaxed));
    sb_printf(&b,
              "# HELP classify_reloads_total Rules reloads, by result.\n"
              "# TYPE classify_reloads_total counter\n"
              "classify_reloads_total{result=\"success\"} %llu\n"
              "classify_reloads_total{result=\"failure\"} %llu\n"
              "# HELP classify_rules_generation Rules loaded since start (1 = the first).\n"
              "# TYPE classify_rules_generation gauge\n"
              "classify_rules_generation %llu\n"
              "# HELP classify_rules_loaded_timestamp_seconds When the serving rules were loaded.\n"
              "# TYPE classify_rules_loaded_timestamp_seconds gauge\n"
              "classify_rules_loaded_timestamp_seconds %llu\n",
              (unsigned long long)load(&g->reloads_ok), (unsigned long long)load(&g->reloads_failed),
              (unsigned long long)load(&g->rules_generation),
              (unsigned long long)load(&g->rules_loaded_at));
    if (g->rdns_cache != NULL)
        render_rdns(&b, w, nw, g->rdns_cache);
    clf_store *st = atomic_load_explicit(&((srv_globals *)g)->store, memory_order_acquire);
    if (st != NULL)
        render_state(&b, st);
    if (g->state != NULL) {
        char *text;
        size_t tlen;
        if (srv_state_render(g->state, &text, &tlen) != 0) {
            b.oom = 1;
        } else {
            sb_printf(&b, "%.*s", (int)tlen, text);
            free(text);
        }
    }
    if (b.oom) {
        free(b.p);
        return -1;
    }
    *out = b.p;
    *len = b.len;
    return 0;
}
