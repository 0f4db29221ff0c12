/*
 * log_stats.c: the summary of classify-run --log (log_stats.h).
 */
#include "log_stats.h"

#include "out_escape.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define FIRST_SLOTS 32 /* a table starts this small and doubles up to TOP_SLOTS */

/* An entry is small so that a Misra-Gries pass moves little: its key
 * stays where it was put, in the table's key store. */
typedef struct top_entry {
    uint64_t hash, count;
    uint32_t len;  /* of the whole key; its slot holds at most key_size bytes */
    uint32_t slot; /* of its key */
} top_entry;

typedef struct top_table {
    top_entry *e;
    uint16_t *idx;        /* 2 * cap (a power of two): entry + 1, 0 empty */
    uint16_t *free_slots; /* key slots not in use */
    char *keys;           /* cap slots of key_size bytes */
    size_t n, cap, nfree, key_size;
    uint64_t slack; /* Misra-Gries decrements: a count is low by at most this */
} top_table;

static void top_free(top_table *t)
{
    if (t == NULL)
        return;
    free(t->e);
    free(t->idx);
    free(t->free_slots);
    free(t->keys);
    free(t);
}

static const char *top_key(const top_table *t, const top_entry *e)
{
    return t->keys + (size_t)e->slot * t->key_size;
}

static void reindex(top_table *t)
{
    size_t mask = 2 * t->cap - 1;
    memset(t->idx, 0, 2 * t->cap * sizeof *t->idx);
    for (size_t i = 0; i < t->n; i++) {
        size_t slot = (size_t)t->e[i].hash & mask;
        while (t->idx[slot] != 0)
            slot = (slot + 1) & mask;
        t->idx[slot] = (uint16_t)(i + 1);
    }
}

/* Doubles the table (to cap slots the first time). Returns 0 or -1. */
static int top_grow(top_table *t, size_t cap)
{
    top_entry *e = realloc(t->e, cap * sizeof *e);
    if (e != NULL)
        t->e = e;
    uint16_t *fs = realloc(t->free_slots, cap * sizeof *fs);
    if (fs != NULL)
        t->free_slots = fs;
    char *k = realloc(t->keys, cap * t->key_size);
    if (k != NULL)
        t->keys = k;
    uint16_t *idx = malloc(2 * cap * sizeof *idx);
    if (e == NULL || fs == NULL || k == NULL || idx == NULL) {
        free(idx);
        return -1;
    }
    free(t->idx);
    t->idx = idx;
    for (size_t i = cap; i > t->cap; i--)
        t->free_slots[t->nfree++] = (uint16_t)(i - 1);
    t->cap = cap;
    reindex(t);
    return 0;
}

static top_table *top_new(size_t key_size)
{
    top_table *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->key_size = key_size;
    if (top_grow(t, FIRST_SLOTS) != 0) {
        top_free(t);
        return NULL;
    }
    return t;
}

/* Misra-Gries: one more of key (len bytes). */
static void top_add(top_table *t, const char *key, size_t len)
{
    uint64_t h = XXH3_64bits(key, len);
    size_t keep = len < t->key_size ? len : t->key_size;
    size_t mask = 2 * t->cap - 1, slot = (size_t)h & mask;
    for (; t->idx[slot] != 0; slot = (slot + 1) & mask) {
        top_entry *e = &t->e[t->idx[slot] - 1];
        /* The 64-bit hash of the whole key and its length tell keys apart
         * (two of n distinct ones collide with odds about n^2 / 2^65): the
         * key store, far larger than the entries, is not read per request,
         * so it does not push the rules' tables out of the cache. */
        if (e->hash == h && e->len == len) {
            e->count++;
            return;
        }
    }
    if (t->n == t->cap && t->cap < TOP_SLOTS && top_grow(t, 2 * t->cap) == 0) {
        top_add(t, key, len); /* the index was rebuilt: find the slot again */
        return;
    }
    if (t->n < t->cap) {
        top_entry *e = &t->e[t->n];
        e->hash = h;
        e->count = 1;
        e->len = (uint32_t)len;
        e->slot = t->free_slots[--t->nfree];
        memcpy(t->keys + (size_t)e->slot * t->key_size, key, keep);
        t->idx[slot] = (uint16_t)(t->n + 1);
        t->n++;
        return;
    }
    /* Full: every count one less, the new one not kept. A pass costs
     * the table's size, and at most one happens per size + 1 requests
     * counted, so each request costs O(1) on average. */
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (--t->e[i].count > 0)
            t->e[n++] = t->e[i];
        else
            t->free_slots[t->nfree++] = (uint16_t)t->e[i].slot;
    }
    t->n = n;
    t->slack++;
    reindex(t);
}

typedef struct group {
    clf_verdict_kind verdict;
    const char *reason_ptr; /* as the program gave it (compared first) */
    char *reason;           /* a copy, NULL for none */
    size_t reason_len;
    uint64_t count;
    top_table *ua, *net;
} group;

struct log_stats {
    uint64_t total, accepted;
    group groups[STATS_MAX_GROUPS];
    size_t ngroups;
    uint64_t other[2]; /* past STATS_MAX_GROUPS groups: by verdict */
};

log_stats *log_stats_new(void)
{
    return calloc(1, sizeof(log_stats));
}

void log_stats_free(log_stats *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->ngroups; i++) {
        free(s->groups[i].reason);
        top_free(s->groups[i].ua);
        top_free(s->groups[i].net);
    }
    free(s);
}

static group *find_group(log_stats *s, const clf_verdict *v)
{
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].verdict == v->verdict && s->groups[i].reason_ptr == v->reason)
            return &s->groups[i];
    for (size_t i = 0; i < s->ngroups; i++) {
        group *g = &s->groups[i];
        if (g->verdict == v->verdict && (g->reason == NULL) == (v->reason == NULL) &&
            (v->reason == NULL ||
             (g->reason_len == v->reason_len && memcmp(g->reason, v->reason, v->reason_len) == 0)))
            return g;
    }
    if (s->ngroups == STATS_MAX_GROUPS)
        return NULL;
    group *g = &s->groups[s->ngroups];
    memset(g, 0, sizeof *g);
    g->ua = top_new(TOP_KEY);
    g->net = top_new(8);
    if (v->reason != NULL && (g->reason = malloc(v->reason_len + 1)) != NULL) {
        memcpy(g->reason, v->reason, v->reason_len);
        g->reason[v->reason_len] = '\0';
    }
    if (g->ua == NULL || g->net == NULL || (v->reason != NULL && g->reason == NULL)) {
        top_free(g->ua);
        top_free(g->net);
        free(g->reason);
        return NULL;
    }
    g->verdict = v->verdict;
    g->reason_ptr = v->reason;
    g->reason_len = v->reason_len;
    s->ngroups++;
    return g;
}

/* The network of addr as a key: 0 for unknown, else 4 or 6 then the
 * prefix's bytes. */
static size_t net_key(const uint8_t addr[16], int valid, char key[8])
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!valid) {
        key[0] = 0;
        return 1;
    }
    if (memcmp(addr, v4mapped, 12) == 0) {
        key[0] = 4;
        memcpy(key + 1, addr + 12, 3);
        return 4;
    }
    key[0] = 6;
    memcpy(key + 1, addr, 6);
    return 7;
}

int log_stats_add(log_stats *s, const clf_verdict *v, const char *ua, size_t ua_len,
                  const uint8_t addr[16], int valid)
{
    s->total++;
    s->accepted += v->verdict == CLF_ACCEPT;
    group *g = find_group(s, v);
    if (g == NULL) {
        s->other[v->verdict == CLF_ACCEPT]++;
        return s->ngroups == STATS_MAX_GROUPS ? 0 : -1;
    }
    g->count++;
    char key[8];
    top_add(g->ua, ua, ua_len);
    top_add(g->net, key, net_key(addr, valid, key));
    return 0;
}

void log_stats_network(const uint8_t addr[16], int valid, char *buf, size_t len)
{
    char key[8];
    uint8_t a[16] = {0};
    size_t n = net_key(addr, valid, key);
    if (n == 1) {
        snprintf(buf, len, "unknown");
    } else if (key[0] == 4) {
        memcpy(a, key + 1, 3);
        char t[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, a, t, sizeof t);
        snprintf(buf, len, "%s/24", t);
    } else {
        memcpy(a, key + 1, 6);
        char t[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, a, t, sizeof t);
        snprintf(buf, len, "%s/48", t);
    }
}

/* 1234567 as "1,234,567". */
const char *log_stats_commas(uint64_t v, char buf[32])
{
    char t[32];
    int n = snprintf(t, sizeof t, "%llu", (unsigned long long)v), o = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = t[i];
    }
    buf[o] = '\0';
    return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int by_count(const void *a, const void *b)
{
    uint64_t x = (*(const top_entry *const *)a)->count, y = (*(const top_entry *const *)b)->count;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int group_order(const void *a, const void *b)
{
    const group *x = *(const group *const *)a, *y = *(const group *const *)b;
    if (x->verdict != y->verdict)
        return x->verdict == CLF_ACCEPT ? -1 : 1;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void print_group_name(FILE *out, const group *g)
{
    fputs(g->verdict == CLF_ACCEPT ? "accept" : "reject", out);
    if (g->reason != NULL) {
        putc(' ', out);
        put_text(out, g->reason, g->reason_len);
    }
}

static void print_top(FILE *out, const top_table *t, int is_net, uint64_t of, size_t top)
{
    const top_entry **sorted = malloc(t->n * sizeof *sorted + 1);
    if (sorted == NULL) {
        fputs("    (out of memory)\n", out);
        return;
    }
    char b[32];
    for (size_t i = 0; i < t->n; i++)
        sorted[i] = &t->e[i];
    qsort(sorted, t->n, sizeof *sorted, by_count);
    for (size_t i = 0; i < t->n && i < top; i++) {
        const top_entry *e = sorted[i];
        fprintf(out, "    %12s %5.1f%%  ", log_stats_commas(e->count, b), pct(e->count, of));
        if (is_net) {
            uint8_t a[16] = {0};
            int valid;
            const char *k = top_key(t, e);
            valid = k[0] != 0;
            if (k[0] == 4) {
                a[10] = a[11] = 0xff;
                memcpy(a + 12, k + 1, 3);
            } else if (valid) {
                memcpy(a, k + 1, 6);
            }
            char net[64];
            log_stats_network(a, valid, net, sizeof net);
            fputs(net, out);
        } else if (e->len == 0) {
            fputs("(no User-Agent)", out);
        } else {
            put_text(out, top_key(t, e), e->len < TOP_KEY ? e->len : TOP_KEY);
            if (e->len > TOP_KEY)
                fprintf(out, "... (%u bytes)", e->len);
        }
        putc('\n', out);
    }
    free(sorted);
    if (t->slack > 0)
        fprintf(out, "    (more than %d distinct: each count may be low by up to %llu)\n",
                TOP_SLOTS, (unsigned long long)t->slack);
}

void log_stats_print(const log_stats *s, FILE *out, size_t top)
{
    char b[32];
    const group *sorted[STATS_MAX_GROUPS];
    size_t width = 16;
    for (size_t i = 0; i < s->ngroups; i++) {
        sorted[i] = &s->groups[i];
        size_t w = 2 + (s->groups[i].reason ? s->groups[i].reason_len : 11);
        if (w > width)
            width = w < 60 ? w : 60;
    }
    qsort(sorted, s->ngroups, sizeof *sorted, group_order);
    uint64_t rejected = s->total - s->accepted;
    fprintf(out, "%-*s %12s\n", (int)width, "requests", log_stats_commas(s->total, b));
    for (int pass = 0; pass < 2; pass++) {
        clf_verdict_kind k = pass == 0 ? CLF_ACCEPT : CLF_REJECT;
        uint64_t n = pass == 0 ? s->accepted : rejected;
        fprintf(out, "%-*s %12s %6.1f%%\n", (int)width, pass == 0 ? "accepted" : "rejected",
                log_stats_commas(n, b), pct(n, s->total));
        for (size_t i = 0; i < s->ngroups; i++) {
            const group *g = sorted[i];
            if (g->verdict != k)
                continue;
            fputs("  ", out);
            if (g->reason != NULL)
                put_text(out, g->reason, g->reason_len);
            else
                fputs("(no reason)", out);
            size_t w = 2 + (g->reason ? g->reason_len : 11);
            fprintf(out, "%*s %12s %6.1f%%\n", w < width ? (int)(width - w) : 0, "",
                    log_stats_commas(g->count, b), pct(g->count, s->total));
        }
        if (s->other[pass == 0])
            fprintf(out, "  %-*s %12s %6.1f%%\n", (int)width - 2, "(other reasons)",
                    log_stats_commas(s->other[pass == 0], b), pct(s->other[pass == 0], s->total));
    }
    for (size_t i = 0; i < s->ngroups; i++) {
        const group *g = sorted[i];
        fputc('\n', out);
        print_group_name(out, g);
        fprintf(out, ": %s request%s\n  top User-Agents\n", log_stats_commas(g->count, b),
                g->count == 1 ? "" : "s");
        print_top(out, g->ua, 0, g->count, top);
        fputs("  top client networks\n", out);
        print_top(out, g->net, 1, g->count, top);
    }
}
