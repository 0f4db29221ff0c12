/*
 * test_rdns_cache.c: classify-serve's reverse-DNS cache and the check of
 * the names DNS answers with (serve/srv_rdns_cache.c): states, TTLs,
 * claims of lookups in flight, the bound and its LRU order, hostile names.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "srv_rdns_cache.h"

static void addr_of(unsigned n, uint8_t a[16])
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memcpy(a, v4mapped, 12);
    a[12] = 192;
    a[13] = 0;
    a[14] = (uint8_t)(n >> 8);
    a[15] = (uint8_t)n;
}

static srv_rdns_state get(srv_rdns_cache *c, unsigned n, uint64_t now, int claim, char *name)
{
    uint8_t a[16];
    size_t len = 999;
    addr_of(n, a);
    srv_rdns_state st = srv_rdns_cache_get(c, a, now, claim, name, &len);
    if (st == SRV_RDNS_CONFIRMED)
        cr_assert_eq(len, strlen(name));
    return st;
}

static void put(srv_rdns_cache *c, unsigned n, uint64_t now, srv_rdns_state st, const char *name,
                uint64_t ttl)
{
    uint8_t a[16];
    addr_of(n, a);
    srv_rdns_cache_put(c, a, now, st, name, name ? strlen(name) : 0, ttl);
}

Test(rdns_cache, states_and_ttls)
{
    srv_rdns_cache *c;
    char name[SRV_RDNS_NAME_MAX + 1];
    cr_assert_eq(srv_rdns_cache_new(100, &c), 0);
    cr_assert_eq(get(c, 1, 1000, 0, name), SRV_RDNS_MISS);
    cr_assert_eq(get(c, 1, 1000, 0, name), SRV_RDNS_MISS, "no claim: still nothing");
    cr_assert_eq(get(c, 1, 1000, 1, name), SRV_RDNS_MISS, "the claimer starts the lookup");
    cr_assert_eq(get(c, 1, 1001, 1, name), SRV_RDNS_PENDING, "the others wait for it");
    put(c, 1, 1500, SRV_RDNS_CONFIRMED, "Crawl-1.GoogleBot.com.", 60000);
    cr_assert_eq(get(c, 1, 2000, 1, name), SRV_RDNS_CONFIRMED);
    cr_assert_str_eq(name, "crawl-1.googlebot.com", "lower-case, no root dot");
    cr_assert_eq(get(c, 1, 61499, 0, name), SRV_RDNS_CONFIRMED);
    cr_assert_eq(get(c, 1, 61500, 0, name), SRV_RDNS_MISS, "expired at its TTL");
    put(c, 2, 0, SRV_RDNS_NONAME, NULL, 1000);
    put(c, 3, 0, SRV_RDNS_FAILED, NULL, 1000);
    cr_assert_eq(get(c, 2, 10, 1, name), SRV_RDNS_NONAME);
    cr_assert_eq(get(c, 3, 10, 1, name), SRV_RDNS_FAILED);
    /* a lookup whose worker went away is given up */
    cr_assert_eq(get(c, 4, 0, 1, name), SRV_RDNS_MISS);
    cr_assert_eq(get(c, 4, SRV_RDNS_PENDING_MS - 1, 1, name), SRV_RDNS_PENDING);
    cr_assert_eq(get(c, 4, SRV_RDNS_PENDING_MS, 1, name), SRV_RDNS_MISS);
    cr_assert_eq(srv_rdns_cache_count(c), 4);
    srv_rdns_cache_free(c);
}

Test(rdns_cache, bounded_lru)
{
    srv_rdns_cache *c;
    char name[SRV_RDNS_NAME_MAX + 1];
    cr_assert_eq(srv_rdns_cache_new(3, &c), 0);
    for (unsigned n = 1; n <= 3; n++)
        put(c, n, 0, SRV_RDNS_CONFIRMED, "h.example", 100000);
    cr_assert_eq(get(c, 1, 1, 0, name), SRV_RDNS_CONFIRMED, "1 is now the most recent");
    put(c, 4, 2, SRV_RDNS_NONAME, NULL, 100000);
    cr_assert_eq(srv_rdns_cache_count(c), 3, "never more than the bound");
    cr_assert_eq(get(c, 2, 3, 0, name), SRV_RDNS_MISS, "2 was the least recently used");
    cr_assert_eq(get(c, 1, 3, 0, name), SRV_RDNS_CONFIRMED);
    cr_assert_eq(get(c, 3, 3, 0, name), SRV_RDNS_CONFIRMED);
    cr_assert_eq(get(c, 4, 3, 0, name), SRV_RDNS_NONAME);
    /* a claim takes an entry as well: the lookups in flight are bounded */
    cr_assert_eq(get(c, 5, 4, 1, name), SRV_RDNS_MISS);
    cr_assert_eq(get(c, 1, 4, 0, name), SRV_RDNS_MISS, "1 made room for 5");
    srv_rdns_cache_free(c);

    /* many entries over several shards: still at most the bound */
    cr_assert_eq(srv_rdns_cache_new(5000, &c), 0);
    for (unsigned n = 0; n < 20000; n++)
        put(c, n, 0, SRV_RDNS_NONAME, NULL, 100000);
    cr_assert_leq(srv_rdns_cache_count(c), 5000);
    unsigned kept = 0;
    for (unsigned n = 0; n < 20000; n++)
        kept += get(c, n, 1, 0, name) == SRV_RDNS_NONAME;
    cr_assert_eq(kept, srv_rdns_cache_count(c));
    cr_assert_eq(get(c, 19999, 1, 0, name), SRV_RDNS_NONAME, "the newest are kept");
    srv_rdns_cache_free(c);
}

Test(rdns_cache, hostile_names)
{
    char out[SRV_RDNS_NAME_MAX + 1];
    static const char *const bad[] = {
        "", ".", "a..b", ".a", "a.b..", "bad!name.example", "bad name.example", "a\\.b.example",
        "caf\xc3\xa9.example", "tab\t.example", "del\x7f.example",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(srv_rdns_host_name(bad[i], strlen(bad[i]), out), -1, "%s", bad[i]);
    cr_assert_eq(srv_rdns_host_name("nul\0.example", 12, out), -1, "a NUL inside");
    char label[70];
    memset(label, 'a', 64);
    label[64] = 0;
    cr_assert_eq(srv_rdns_host_name(label, 64, out), -1, "a label of 64 bytes");
    cr_assert_eq(srv_rdns_host_name(label, 63, out), 63);
    char name[300];
    snprintf(name, sizeof name, "%.59s.%.59s.%.59s.%.59s.googlebot.com", label, label, label, label);
    cr_assert_eq(strlen(name), 253);
    cr_assert_eq(srv_rdns_host_name(name, 253, out), 253, "253 bytes: the longest name");
    strcat(name, ".");
    cr_assert_eq(srv_rdns_host_name(name, 254, out), 253, "... with the root's dot");
    memmove(name + 1, name, 255);
    name[0] = 'x';
    cr_assert_eq(srv_rdns_host_name(name, 254, out), -1, "254 bytes");
    cr_assert_eq(srv_rdns_host_name("Crawl_1-A.Example.", 18, out), 17);
    cr_assert_str_eq(out, "crawl_1-a.example");

    /* the cache never hands out a name that fails the check */
    srv_rdns_cache *c;
    cr_assert_eq(srv_rdns_cache_new(10, &c), 0);
    put(c, 1, 0, SRV_RDNS_CONFIRMED, "bad!name.googlebot.com", 1000);
    cr_assert_eq(get(c, 1, 1, 0, out), SRV_RDNS_NONAME);
    srv_rdns_cache_free(c);
}
