/*
 * srv_rdns.c: a worker's reverse-DNS lookups (see srv_rdns.h).
 *
 * A lookup is forward-confirmed reverse DNS, as crawler operators
 * document it: the PTR records of the client address, then for each name
 * (at most SRV_RDNS_MAX_NAMES, in the answer's order) the A records (IPv4
 * client) or AAAA records (IPv6), until one lists the address again. The
 * outcome goes to the shared cache:
 *   - CONFIRMED, the first name that lists it, for the TTL of its forward
 *     record;
 *   - NONAME when the address has no PTR (NXDOMAIN, or none in the
 *     answer), when no name lists it, and when the PTR answer is not
 *     something to trust (c-ares refuses it as malformed, or its names are
 *     no host names: srv_rdns_host_name): the smallest TTL of the forward
 *     answers seen, or --rdns-min-ttl when there were none (c-ares 1.18
 *     reports the TTLs of A and AAAA records, not those of PTR records or
 *     the SOA's negative TTL);
 *   - FAILED for a time-out, SERVFAIL, REFUSED or a resolver that cannot
 *     be reached, on the PTR query or on a forward query when no other
 *     name confirmed: nothing is known, kept SRV_RDNS_FAIL_TTL_MS.
 * TTLs are clamped to [--rdns-min-ttl, --rdns-max-ttl].
 *
 * DNS answers are hostile input: c-ares parses them (and refuses PTR
 * names with bytes no host name has); the names it returns are checked
 * again here before they are queried or stored, and the address lists are
 * compared as bytes.
 */
#include "srv_rdns.h"
#include "srv_log.h"

/* ares.h uses fd_set, struct timeval and struct hostent without
 * including their headers */
#include <netdb.h>
#include <sys/select.h>
#include <sys/time.h>

#include <ares.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RFC 1035 section 3.2: class IN; types A, PTR; RFC 3596: AAAA. */
enum { DNS_C_IN = 1, DNS_T_A = 1, DNS_T_PTR = 12, DNS_T_AAAA = 28 };

/* c-ares opens a UDP socket (and, after a truncated answer, a TCP one)
 * per server: a few per channel. */
#define MAX_SOCKS 16
/* Forward addresses compared per name; an RRset longer than this is
 * looked at only that far (none of the documented crawlers comes close). */
#define MAX_ADDRS 64
/* Each query goes to each server this many times before it fails. */
#define TRIES 2

enum { SLOT_FREE, SLOT_ACTIVE, SLOT_CLOSING };

typedef struct sock_slot {
    uv_poll_t poll;
    ares_socket_t fd;
    int state;
    struct srv_rdns *r;
} sock_slot;

typedef struct lookup {
    struct srv_rdns *r;
    uint8_t addr[16];
    int v4;
    unsigned nnames, next;
    int failed;      /* a forward query failed (not known rather than no) */
    uint64_t ttl_ms; /* smallest forward TTL seen; UINT64_MAX: none */
    char names[SRV_RDNS_MAX_NAMES][SRV_RDNS_NAME_MAX + 1];
    struct lookup *next_free;
} lookup;

struct srv_rdns {
    uv_loop_t *loop;
    ares_channel ch; /* NULL once stopped */
    srv_rdns_cache *cache;
    srv_metrics *m;
    uint64_t min_ttl_ms, max_ttl_ms;
    uv_timer_t timer;
    int timer_open;
    sock_slot socks[MAX_SOCKS];
    lookup *pool, *free_list;
    int warned;
};

static void arm_timer(srv_rdns *r);

int srv_rdns_library_init(void)
{
    return ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS ? 0 : -1;
}

void srv_rdns_library_cleanup(void)
{
    ares_library_cleanup();
}

/* ------------------------------------------------------------------------ */
/* c-ares on a libuv loop. */

static void on_slot_closed(uv_handle_t *h)
{
    ((sock_slot *)h->data)->state = SLOT_FREE;
}

static void close_slot(sock_slot *s)
{
    s->state = SLOT_CLOSING;
    uv_close((uv_handle_t *)&s->poll, on_slot_closed);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    sock_slot *s = p->data;
    srv_rdns *r = s->r;
    ares_socket_t fd = s->fd; /* the slot may be closed while processing */
    /* an error is c-ares's to see, by reading or writing */
    int rd = status < 0 || (events & UV_READABLE), wr = status < 0 || (events & UV_WRITABLE);
    if (r->ch == NULL)
        return;
    ares_process_fd(r->ch, rd ? fd : ARES_SOCKET_BAD, wr ? fd : ARES_SOCKET_BAD);
    arm_timer(r);
}

/* c-ares says which of its sockets to watch for what; (0, 0) comes just
 * before it closes one. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
    srv_rdns *r = data;
    sock_slot *s = NULL, *free_slot = NULL;
    for (unsigned i = 0; i < MAX_SOCKS; i++) {
        if (r->socks[i].state == SLOT_ACTIVE && r->socks[i].fd == fd)
            s = &r->socks[i];
        else if (r->socks[i].state == SLOT_FREE && free_slot == NULL)
            free_slot = &r->socks[i];
    }
    if (!readable && !writable) {
        if (s != NULL) {
            uv_poll_stop(&s->poll);
            close_slot(s);
        }
        return;
    }
    if (s == NULL) {
        if (free_slot == NULL || uv_poll_init(r->loop, &free_slot->poll, fd) != 0) {
            /* its queries then end by time-out: failures, not a hang */
            if (!r->warned)
                srv_log_warn("reverse DNS: cannot watch another resolver socket");
            r->warned = 1;
            return;
        }
        s = free_slot;
        s->fd = fd;
        s->r = r;
        s->state = SLOT_ACTIVE;
        s->poll.data = s;
    }
    uv_poll_start(&s->poll, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0), on_poll);
}

static void on_timer(uv_timer_t *t)
{
    srv_rdns *r = t->data;
    if (r->ch == NULL)
        return;
    ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    arm_timer(r);
}

/* After every call into c-ares: its next time-out, if it has queries. */
static void arm_timer(srv_rdns *r)
{
    struct timeval tv, *t;
    if (r->ch == NULL)
        return;
    if ((t = ares_timeout(r->ch, NULL, &tv)) == NULL) {
        uv_timer_stop(&r->timer);
        return;
    }
    uint64_t ms = (uint64_t)t->tv_sec * 1000 + ((uint64_t)t->tv_usec + 999) / 1000;
    uv_timer_start(&r->timer, on_timer, ms, 0);
}

static int make_channel(const srv_config *cfg, ares_sock_state_cb cb, void *ud,
                        ares_channel *ch, char *err, size_t errlen)
{
    struct ares_options o;
    memset(&o, 0, sizeof o);
    o.flags = ARES_FLAG_NOSEARCH; /* the names asked are complete */
    o.timeout = (int)cfg->rdns_timeout_ms;
    o.tries = TRIES;
    o.sock_state_cb = cb;
    o.sock_state_cb_data = ud;
    int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | (cb ? ARES_OPT_SOCK_STATE_CB : 0);
    int rc = ares_init_options(ch, &o, mask);
    if (rc != ARES_SUCCESS) {
        snprintf(err, errlen, "reverse DNS: cannot set up a resolver: %s", ares_strerror(rc));
        return -1;
    }
    if (cfg->resolver != NULL && (rc = ares_set_servers_ports_csv(*ch, cfg->resolver)) != ARES_SUCCESS) {
        snprintf(err, errlen, "--resolver: '%s' is not ADDR, ADDR:PORT or [IPV6]:PORT (%s)",
                 cfg->resolver, ares_strerror(rc));
        ares_destroy(*ch);
        return -1;
    }
    return 0;
}

int srv_rdns_check(const srv_config *cfg, char *err, size_t errlen)
{
    ares_channel ch;
    if (make_channel(cfg, NULL, NULL, &ch, err, errlen) != 0)
        return -1;
    ares_destroy(ch);
    return 0;
}

int srv_rdns_new(uv_loop_t *loop, srv_rdns_cache *cache, const srv_config *cfg, srv_metrics *m,
                 srv_rdns **out, char *err, size_t errlen)
{
    srv_rdns *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL || (r->pool = calloc(SRV_RDNS_MAX_INFLIGHT, sizeof *r->pool)) == NULL) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->loop = loop;
    r->cache = cache;
    r->m = m;
    r->min_ttl_ms = cfg->rdns_min_ttl_ms;
    r->max_ttl_ms = cfg->rdns_max_ttl_ms;
    for (unsigned i = SRV_RDNS_MAX_INFLIGHT; i-- > 0;) {
        r->pool[i].r = r;
        r->pool[i].next_free = r->free_list;
        r->free_list = &r->pool[i];
    }
    if (make_channel(cfg, sock_state, r, &r->ch, err, errlen) != 0) {
        free(r->pool);
        free(r);
        return -1;
    }
    uv_timer_init(loop, &r->timer);
    r->timer.data = r;
    r->timer_open = 1;
    *out = r;
    return 0;
}

void srv_rdns_stop(srv_rdns *r)
{
    if (r == NULL || r->ch == NULL)
        return;
    ares_channel ch = r->ch;
    r->ch = NULL; /* the callbacks below start nothing more */
    ares_destroy(ch);
    for (unsigned i = 0; i < MAX_SOCKS; i++)
        if (r->socks[i].state == SLOT_ACTIVE)
            close_slot(&r->socks[i]);
    if (r->timer_open)
        uv_close((uv_handle_t *)&r->timer, NULL);
    r->timer_open = 0;
}

void srv_rdns_free(srv_rdns *r)
{
    if (r == NULL)
        return;
    free(r->pool);
    free(r);
}

/* ------------------------------------------------------------------------ */
/* One lookup. */

static uint64_t clamp_ttl(const srv_rdns *r, uint64_t ms)
{
    return ms < r->min_ttl_ms ? r->min_ttl_ms : ms > r->max_ttl_ms ? r->max_ttl_ms : ms;
}

static void release(lookup *lk)
{
    srv_rdns *r = lk->r;
    lk->next_free = r->free_list;
    r->free_list = lk;
}

static void finish(lookup *lk, srv_rdns_state st, const char *name, uint64_t ttl_ms)
{
    srv_rdns *r = lk->r;
    srv_rdns_cache_put(r->cache, lk->addr, uv_now(r->loop), st, name, name ? strlen(name) : 0,
                       ttl_ms);
    srv_count(&r->m->rdns_results[st == SRV_RDNS_CONFIRMED ? SRV_RDNS_RES_CONFIRMED
                                  : st == SRV_RDNS_NONAME  ? SRV_RDNS_RES_UNCONFIRMED
                                                           : SRV_RDNS_RES_FAILED], 1);
    release(lk);
}

/* The channel is going away (srv_rdns_stop): forget the lookup, so that
 * the address is asked again (by another worker, or after a restart). */
static void abandon(lookup *lk)
{
    srv_rdns_cache_put(lk->r->cache, lk->addr, 0, SRV_RDNS_FAILED, NULL, 0, 0);
    release(lk);
}

static int cancelled(int status)
{
    return status == ARES_EDESTRUCTION || status == ARES_ECANCELLED;
}

/* A "no" from DNS (or an answer not to believe), as opposed to no answer. */
static int is_no(int status)
{
    return status == ARES_ENOTFOUND || status == ARES_ENODATA || status == ARES_EBADRESP ||
           status == ARES_EBADNAME;
}

static void on_forward(void *arg, int status, int timeouts, unsigned char *abuf, int alen);

/* The forward query of the next name, or the outcome when none is left. */
static void next_name(lookup *lk)
{
    srv_rdns *r = lk->r;
    if (r->ch == NULL) { /* stopped meanwhile */
        abandon(lk);
        return;
    }
    if (lk->next >= lk->nnames) {
        if (lk->failed)
            finish(lk, SRV_RDNS_FAILED, NULL, SRV_RDNS_FAIL_TTL_MS);
        else
            finish(lk, SRV_RDNS_NONAME, NULL,
                   clamp_ttl(r, lk->ttl_ms == UINT64_MAX ? r->min_ttl_ms : lk->ttl_ms));
        return;
    }
    ares_query(r->ch, lk->names[lk->next], DNS_C_IN, lk->v4 ? DNS_T_A : DNS_T_AAAA, on_forward, lk);
}

/* Whether the A or AAAA answer lists lk's address; *ttl gets its TTL
 * (seconds), or the smallest of the answer's when it does not. */
static int lists_address(const lookup *lk, const unsigned char *abuf, int alen, int *status,
                         int *ttl)
{
    int n = MAX_ADDRS, found = 0;
    *ttl = -1;
    if (lk->v4) {
        struct ares_addrttl a[MAX_ADDRS];
        if ((*status = ares_parse_a_reply(abuf, alen, NULL, a, &n)) != ARES_SUCCESS)
            return 0;
        for (int i = 0; i < n && !found; i++) {
            found = memcmp(&a[i].ipaddr, lk->addr + 12, 4) == 0;
            if (found || *ttl < 0 || a[i].ttl < *ttl)
                *ttl = a[i].ttl;
        }
    } else {
        struct ares_addr6ttl a[MAX_ADDRS];
        if ((*status = ares_parse_aaaa_reply(abuf, alen, NULL, a, &n)) != ARES_SUCCESS)
            return 0;
        for (int i = 0; i < n && !found; i++) {
            found = memcmp(&a[i].ip6addr, lk->addr, 16) == 0;
            if (found || *ttl < 0 || a[i].ttl < *ttl)
                *ttl = a[i].ttl;
        }
    }
    return found;
}

static void on_forward(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
    lookup *lk = arg;
    (void)timeouts;
    if (cancelled(status)) {
        abandon(lk);
        return;
    }
    int ttl = -1;
    int found = status == ARES_SUCCESS && lists_address(lk, abuf, alen, &status, &ttl);
    if (found && ttl < 0)
        ttl = 0;
    if (found) {
        finish(lk, SRV_RDNS_CONFIRMED, lk->names[lk->next], clamp_ttl(lk->r, (uint64_t)ttl * 1000));
        return;
    }
    if (ttl >= 0 && (uint64_t)ttl * 1000 < lk->ttl_ms)
        lk->ttl_ms = (uint64_t)ttl * 1000;
    if (status != ARES_SUCCESS && !is_no(status))
        lk->failed = 1;
    lk->next++;
    next_name(lk);
}

/* Keeps the names of the PTR answer that are host names, once each. */
static void take_names(lookup *lk, const struct hostent *h)
{
    char *const one[2] = {h->h_name, NULL};
    char *const *list = h->h_aliases != NULL && h->h_aliases[0] != NULL ? h->h_aliases : one;
    for (; *list != NULL && lk->nnames < SRV_RDNS_MAX_NAMES; list++) {
        char *dst = lk->names[lk->nnames];
        if (srv_rdns_host_name(*list, strlen(*list), dst) < 0)
            continue;
        unsigned k = 0;
        while (k < lk->nnames && strcmp(lk->names[k], dst) != 0)
            k++;
        if (k == lk->nnames)
            lk->nnames++;
    }
}

static void on_ptr(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
    lookup *lk = arg;
    srv_rdns *r = lk->r;
    (void)timeouts;
    if (cancelled(status)) {
        abandon(lk);
        return;
    }
    if (status == ARES_SUCCESS) {
        struct hostent *h = NULL;
        status = lk->v4 ? ares_parse_ptr_reply(abuf, alen, lk->addr + 12, 4, AF_INET, &h)
                        : ares_parse_ptr_reply(abuf, alen, lk->addr, 16, AF_INET6, &h);
        if (status == ARES_SUCCESS) {
            take_names(lk, h);
            ares_free_hostent(h);
        }
    }
    if (status == ARES_SUCCESS)
        next_name(lk); /* no name left after the checks: NONAME */
    else if (is_no(status))
        finish(lk, SRV_RDNS_NONAME, NULL, r->min_ttl_ms);
    else
        finish(lk, SRV_RDNS_FAILED, NULL, SRV_RDNS_FAIL_TTL_MS);
}

/* RFC 1035 section 3.5 (in-addr.arpa), RFC 3596 section 2.5 (ip6.arpa). */
static void reverse_name(const lookup *lk, char *out, size_t cap)
{
    const uint8_t *a = lk->addr;
    if (lk->v4) {
        snprintf(out, cap, "%u.%u.%u.%u.in-addr.arpa", a[15], a[14], a[13], a[12]);
        return;
    }
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (int i = 15; i >= 0; i--) {
        out[n++] = hex[a[i] & 15];
        out[n++] = '.';
        out[n++] = hex[a[i] >> 4];
        out[n++] = '.';
    }
    memcpy(out + n, "ip6.arpa", 9);
    (void)cap; /* 64 + 9 bytes: the caller's buffer holds 80 */
}

static void start(srv_rdns *r, const uint8_t addr[16])
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    lookup *lk = r->free_list;
    r->free_list = lk->next_free;
    memcpy(lk->addr, addr, 16);
    lk->v4 = memcmp(addr, v4mapped, 12) == 0;
    lk->nnames = lk->next = 0;
    lk->failed = 0;
    lk->ttl_ms = UINT64_MAX;
    char q[80];
    reverse_name(lk, q, sizeof q);
    srv_count(&r->m->rdns_lookups, 1);
    ares_query(r->ch, q, DNS_C_IN, DNS_T_PTR, on_ptr, lk);
    arm_timer(r);
}

void srv_rdns_apply(srv_rdns *r, clf_ctx *ctx)
{
    uint8_t addr[16];
    int valid;
    char name[SRV_RDNS_NAME_MAX + 1];
    size_t len = 0;
    if (clf_ctx_client_ip(ctx, addr, &valid) != CLF_OK || !valid)
        return; /* no address: nothing to resolve, req.rdns_checked stays false */
    int can_start = r->ch != NULL && r->free_list != NULL;
    switch (srv_rdns_cache_get(r->cache, addr, uv_now(r->loop), can_start, name, &len)) {
    case SRV_RDNS_CONFIRMED:
        srv_count(&r->m->rdns_hits, 1);
        /* the cache holds only names that pass srv_rdns_host_name, which
         * clf_ctx_set_rdns takes; were one refused, say "no name" */
        if (clf_ctx_set_rdns(ctx, name, len) != CLF_OK)
            clf_ctx_set_rdns(ctx, NULL, 0);
        break;
    case SRV_RDNS_NONAME:
        srv_count(&r->m->rdns_hits, 1);
        clf_ctx_set_rdns(ctx, NULL, 0);
        break;
    case SRV_RDNS_FAILED: /* known to be unknown for a while */
        srv_count(&r->m->rdns_hits, 1);
        break;
    case SRV_RDNS_PENDING:
        break;
    case SRV_RDNS_MISS:
        if (can_start)
            start(r, addr);
        else if (r->ch != NULL)
            srv_count(&r->m->rdns_skipped, 1);
        break;
    }
}
