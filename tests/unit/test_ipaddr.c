/*
 * test_ipaddr.c: vm/ipaddr.c, the address parser, ranges, the formatter
 * and the client-address rule.
 *
 * Every parser input is copied into a heap block of exactly its length,
 * so an ASan build catches any read past s[n-1] (the functions take no
 * NUL terminator).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipaddr.h"

/* A heap copy of s without its NUL, freed by the caller. */
static char *exact(const char *s, size_t n)
{
    char *p = malloc(n ? n : 1);
    cr_assert(p);
    memcpy(p, s, n);
    return p;
}

static int parse(const char *s, uint8_t out[16])
{
    size_t n = strlen(s);
    char *p = exact(s, n);
    memset(out, 0xaa, 16);
    int ok = vm_ip_parse(p, n, out);
    free(p);
    return ok;
}

static const char *fmt(const uint8_t ip[16])
{
    static char buf[8][VM_IP_TEXT_MAX];
    static int k;
    char *b = buf[k++ % 8];
    size_t len = vm_ip_format(ip, b, VM_IP_TEXT_MAX);
    cr_assert_eq(len, strlen(b));
    return b;
}

/* The canonical text of s, or "ERR" when it does not parse. */
static const char *canon(const char *s)
{
    uint8_t a[16];
    if (!parse(s, a)) {
        static const uint8_t zero[16];
        cr_assert_eq(memcmp(a, zero, 16), 0, "out not zeroed after rejecting \"%s\"", s);
        return "ERR";
    }
    return fmt(a);
}

static void bytes_eq(const uint8_t a[16], const uint8_t b[16])
{
    cr_assert_eq(memcmp(a, b, 16), 0, "%s != %s", fmt(a), fmt(b));
}

#define VALID(s, want) cr_expect_str_eq(canon(s), want, "parse \"%s\"", s)
#define INVALID(s) cr_expect_str_eq(canon(s), "ERR", "parse \"%s\" should fail", s)

Test(ipaddr, v4_bytes_are_mapped)
{
    uint8_t a[16];
    cr_assert(parse("192.0.2.10", a));
    const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 10};
    bytes_eq(a, want);
    uint8_t b[16];
    cr_assert(parse("::ffff:192.0.2.10", b));
    bytes_eq(a, b);
    cr_assert(parse("::FFFF:c000:020a", b));
    bytes_eq(a, b);
}

Test(ipaddr, v4_valid)
{
    VALID("0.0.0.0", "0.0.0.0");
    VALID("255.255.255.255", "255.255.255.255");
    VALID("192.0.2.10", "192.0.2.10");
    VALID("10.0.0.1", "10.0.0.1");
    VALID("1.2.3.4", "1.2.3.4");
    VALID("100.64.99.200", "100.64.99.200");
}

Test(ipaddr, v4_invalid)
{
    INVALID("");
    INVALID("1.2.3");
    INVALID("127.1");
    INVALID("1");
    INVALID("1.2.3.4.5");
    INVALID("256.1.1.1");
    INVALID("1.2.3.256");
    INVALID("1.2.3.999");
    INVALID("01.2.3.4");
    INVALID("1.2.3.04");
    INVALID("00.0.0.0");
    INVALID("1.2.3.0004");
    INVALID("1234.1.1.1");
    INVALID("1..2.3");
    INVALID(".1.2.3");
    INVALID("1.2.3.");
    INVALID("1.2.3.4.");
    INVALID("+1.2.3.4");
    INVALID("-1.2.3.4");
    INVALID("1.-2.3.4");
    INVALID(" 1.2.3.4");
    INVALID("1.2.3.4 ");
    INVALID("1. 2.3.4");
    INVALID("1.2.3.4/8");
    INVALID("1.2.3.4:80");
    INVALID("0x1.2.3.4");
    INVALID("1.2.3.a");
    INVALID("[1.2.3.4]");
    INVALID("1.2.3.4\n");
}

Test(ipaddr, v6_valid)
{
    VALID("::", "::");
    VALID("::1", "::1");
    VALID("1::", "1::");
    VALID("2001:db8::1", "2001:db8::1");
    VALID("2001:DB8::1", "2001:db8::1");
    VALID("2001:Db8:0:0:0:0:0:1", "2001:db8::1");
    VALID("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8");
    VALID("0:0:0:0:0:0:0:0", "::");
    VALID("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0");
    VALID("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8");
    VALID("1::8", "1::8");
    VALID("0000:0000::0001", "::1");
    VALID("fe80::1", "fe80::1");
    VALID("[::1]", "::1");
    VALID("[2001:db8::1]", "2001:db8::1");
    VALID("[::ffff:1.2.3.4]", "1.2.3.4");
    VALID("::ffff:1.2.3.4", "1.2.3.4");
    VALID("::FFFF:1.2.3.4", "1.2.3.4");
    VALID("0:0:0:0:0:ffff:1.2.3.4", "1.2.3.4");
    VALID("::1.2.3.4", "::102:304");
    VALID("64:ff9b::192.0.2.33", "64:ff9b::c000:221");
    VALID("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304");
    VALID("1::5:6:1.2.3.4", "1::5:6:102:304");
    VALID("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
    VALID("ABCD:EF01:2345:6789:abcd:ef01:2345:6789", "abcd:ef01:2345:6789:abcd:ef01:2345:6789");
}

Test(ipaddr, v6_invalid)
{
    INVALID(":");
    INVALID(":::");
    INVALID("::::");
    INVALID("1::2::3");
    INVALID("::1::");
    INVALID("fe80::1%eth0");
    INVALID("fe80::1%1");
    INVALID("[fe80::1%25eth0]");
    INVALID("1:2:3:4:5:6:7");                /* 7 groups, no "::" */
    INVALID("1:2:3:4:5:6:7:8:9");            /* 9 groups */
    INVALID("1:2:3:4:5:6:7:8::");            /* "::" must stand for a group */
    INVALID("::1:2:3:4:5:6:7:8");
    INVALID("1::2:3:4:5:6:7:8");
    INVALID("1:2:3:4::5:6:7:8");
    INVALID(":1::");                         /* leading single colon */
    INVALID(":1:2:3:4:5:6:7:8");
    INVALID("1::2:");                        /* trailing single colon */
    INVALID("1:2:3:4:5:6:7:8:");
    INVALID("12345::");                      /* 5 hex digits */
    INVALID("::00001");
    INVALID("g::1");
    INVALID(":: 1");
    INVALID(" ::1");
    INVALID("::1 ");
    INVALID("[::1");
    INVALID("::1]");
    INVALID("[[::1]]");
    INVALID("[]");
    INVALID("[::1]:80");
    INVALID("::1/128");
    INVALID("::ffff:1.2.3");
    INVALID("::ffff:256.1.1.1");
    INVALID("::ffff:01.2.3.4");
    INVALID("::ffff:1.2.3.4.5");
    INVALID("::ffff:1.2.3.4:5");
    INVALID("1.2.3.4::");
    INVALID("1.2.3.4:1::");
    INVALID("1:2:3:4:5:6:7:1.2.3.4");        /* 7 groups + 32 bits */
    INVALID("::1:2:3:4:5:6:1.2.3.4");        /* no zero group left for "::" */
    INVALID("::ffff:1.2.3.4::");
    INVALID("::-1");
    INVALID("::+1");
    INVALID("::0x1");
}

Test(ipaddr, never_reads_past_n)
{
    uint8_t a[16];
    /* The length, not a NUL, ends the text. */
    cr_assert(vm_ip_parse("1.2.3.45", 7, a));
    cr_expect_str_eq(fmt(a), "1.2.3.4");
    cr_assert(vm_ip_parse("::1234", 5, a));
    cr_expect_str_eq(fmt(a), "::123");
    cr_assert_not(vm_ip_parse("[::1]", 4, a));
    cr_assert_not(vm_ip_parse(NULL, 0, a));
}

Test(ipaddr, range_single_and_prefix)
{
    vm_iprange r;
    cr_assert(vm_iprange_parse("192.0.2.10", 10, &r));
    cr_expect_str_eq(fmt(r.lo), "192.0.2.10");
    cr_expect_str_eq(fmt(r.hi), "192.0.2.10");

    cr_assert(vm_iprange_parse("10.0.0.0/8", 10, &r));
    cr_expect_str_eq(fmt(r.lo), "10.0.0.0");
    cr_expect_str_eq(fmt(r.hi), "10.255.255.255");

    cr_assert(vm_iprange_parse("1.2.3.4/32", 10, &r));
    cr_expect_str_eq(fmt(r.lo), "1.2.3.4");
    cr_expect_str_eq(fmt(r.hi), "1.2.3.4");

    cr_assert(vm_iprange_parse("10.0.0.0/31", 11, &r));
    cr_expect_str_eq(fmt(r.lo), "10.0.0.0");
    cr_expect_str_eq(fmt(r.hi), "10.0.0.1");

    cr_assert(vm_iprange_parse("172.16.0.0/12", 13, &r));
    cr_expect_str_eq(fmt(r.lo), "172.16.0.0");
    cr_expect_str_eq(fmt(r.hi), "172.31.255.255");

    cr_assert(vm_iprange_parse("0.0.0.0/0", 9, &r));
    cr_expect_str_eq(fmt(r.lo), "0.0.0.0");
    cr_expect_str_eq(fmt(r.hi), "255.255.255.255");

    cr_assert(vm_iprange_parse("::/0", 4, &r));
    cr_expect_str_eq(fmt(r.lo), "::");
    cr_expect_str_eq(fmt(r.hi), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

    cr_assert(vm_iprange_parse("2001:db8::/32", 13, &r));
    cr_expect_str_eq(fmt(r.lo), "2001:db8::");
    cr_expect_str_eq(fmt(r.hi), "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");

    cr_assert(vm_iprange_parse("2001:db8::1/127", 15, &r));
    cr_expect_str_eq(fmt(r.lo), "2001:db8::");
    cr_expect_str_eq(fmt(r.hi), "2001:db8::1");

    cr_assert(vm_iprange_parse("[::1]/128", 9, &r));
    cr_expect_str_eq(fmt(r.lo), "::1");
    cr_expect_str_eq(fmt(r.hi), "::1");

    cr_assert(vm_iprange_parse("fe80::/10", 9, &r));
    cr_expect_str_eq(fmt(r.lo), "fe80::");
    cr_expect_str_eq(fmt(r.hi), "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

Test(ipaddr, range_masks_host_bits)
{
    vm_iprange r;
    cr_assert(vm_iprange_parse("10.1.2.3/8", 10, &r));
    cr_expect_str_eq(fmt(r.lo), "10.0.0.0");
    cr_expect_str_eq(fmt(r.hi), "10.255.255.255");

    /* Not on a byte boundary. */
    cr_assert(vm_iprange_parse("1.2.3.4/9", 9, &r));
    cr_expect_str_eq(fmt(r.lo), "1.0.0.0");
    cr_expect_str_eq(fmt(r.hi), "1.127.255.255");
    cr_assert(vm_iprange_parse("255.255.255.255/9", 17, &r));
    cr_expect_str_eq(fmt(r.lo), "255.128.0.0");
    cr_expect_str_eq(fmt(r.hi), "255.255.255.255");
    cr_assert(vm_iprange_parse("192.0.2.77/27", 13, &r));
    cr_expect_str_eq(fmt(r.lo), "192.0.2.64");
    cr_expect_str_eq(fmt(r.hi), "192.0.2.95");
    cr_assert(vm_iprange_parse("200.1.2.3/1", 11, &r));
    cr_expect_str_eq(fmt(r.lo), "128.0.0.0");
    cr_expect_str_eq(fmt(r.hi), "255.255.255.255");

    cr_assert(vm_iprange_parse("2001:db8:1234:5678::9/33", 24, &r));
    cr_expect_str_eq(fmt(r.lo), "2001:db8::");
    cr_expect_str_eq(fmt(r.hi), "2001:db8:7fff:ffff:ffff:ffff:ffff:ffff");
    cr_assert(vm_iprange_parse("ffff::1/0", 9, &r));
    cr_expect_str_eq(fmt(r.lo), "::");
    cr_expect_str_eq(fmt(r.hi), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

Test(ipaddr, range_v4_prefix_is_in_mapped_space)
{
    vm_iprange a, b;
    /* IPv6 text takes an IPv6 length: the same range written two ways. */
    cr_assert(vm_iprange_parse("10.0.0.0/8", 10, &a));
    cr_assert(vm_iprange_parse("::ffff:10.0.0.0/104", 19, &b));
    bytes_eq(a.lo, b.lo);
    bytes_eq(a.hi, b.hi);
    cr_assert(vm_iprange_parse("::ffff:0:0/96", 13, &b));
    cr_expect_str_eq(fmt(b.lo), "0.0.0.0");
    cr_expect_str_eq(fmt(b.hi), "255.255.255.255");
    /* and an IPv6 length above 32 is fine for IPv6 text only. */
    cr_assert_not(vm_iprange_parse("10.0.0.0/104", 12, &a));
}

Test(ipaddr, range_invalid)
{
    static const char *const bad[] = {
        "", "/", "/8", "1.2.3.4/", "1.2.3.4/33", "1.2.3.4/100", "1.2.3.4/1000",
        "::/129", "::/1280", "1.2.3.4/08", "::/00", "1.2.3.4/-1", "1.2.3.4/+8",
        "1.2.3.4/ 8", "1.2.3.4 /8", "1.2.3.4/8 ", "1.2.3.4/8/8", "1.2.3.4/a",
        "1.2.3/8", "01.2.3.4/8", "fe80::1%eth0/64", "[::1/128]", "1.2.3.4/0x8",
        "10.0.0.0-10.0.0.255",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = strlen(bad[i]);
        char *p = exact(bad[i], n);
        vm_iprange r;
        memset(&r, 0xaa, sizeof r);
        cr_expect_not(vm_iprange_parse(p, n, &r), "\"%s\" should fail", bad[i]);
        vm_iprange zero;
        memset(&zero, 0, sizeof zero);
        cr_expect_eq(memcmp(&r, &zero, sizeof r), 0, "\"%s\": out not zeroed", bad[i]);
        free(p);
    }
    /* Zero lengths are fine when written "0". */
    vm_iprange r;
    cr_expect(vm_iprange_parse("1.2.3.4/0", 9, &r));
    cr_expect(vm_iprange_parse("::/0", 4, &r));
}

static vm_iprange R(const char *s)
{
    vm_iprange r;
    cr_assert(vm_iprange_parse(s, strlen(s), &r), "range \"%s\"", s);
    return r;
}

static const char *range_text(const vm_iprange *r)
{
    static char buf[8][2 * VM_IP_TEXT_MAX + 2];
    static int k;
    char *b = buf[k++ % 8];
    char lo[VM_IP_TEXT_MAX], hi[VM_IP_TEXT_MAX];
    vm_ip_format(r->lo, lo, sizeof lo);
    vm_ip_format(r->hi, hi, sizeof hi);
    strcpy(b, lo);
    strcat(b, "-");
    strcat(b, hi);
    return b;
}

Test(ipaddr, normalize_merges_overlapping)
{
    vm_iprange r[] = {R("10.1.0.0/16"), R("10.0.0.0/8"), R("10.2.3.4")};
    size_t n = vm_iprange_normalize(r, 3);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(range_text(&r[0]), "10.0.0.0-10.255.255.255");

    /* Partial overlap: the union reaches the farther end. */
    vm_iprange p[] = {R("192.0.2.0/25"), R("192.0.2.64/26"), R("192.0.2.96/27")};
    p[1].hi[15] = 200; /* 192.0.2.64-192.0.2.200 */
    n = vm_iprange_normalize(p, 3);
    cr_assert_eq(n, 1);
    cr_expect_str_eq(range_text(&p[0]), "192.0.2.0-192.0.2.200");
}

Test(ipaddr, normalize_merges_adjacent)
{
    vm_iprange r[] = {R("10.128.0.0/9"), R("10.0.0.0/9")};
    cr_assert_eq(vm_iprange_normalize(r, 2), 1);
    cr_expect_str_eq(range_text(&r[0]), "10.0.0.0-10.255.255.255");

    vm_iprange s[] = {R("1.2.3.5"), R("1.2.3.4"), R("1.2.3.7")};
    cr_assert_eq(vm_iprange_normalize(s, 3), 2);
    cr_expect_str_eq(range_text(&s[0]), "1.2.3.4-1.2.3.5");
    cr_expect_str_eq(range_text(&s[1]), "1.2.3.7-1.2.3.7");

    /* Adjacent across a carry: 10.0.255.255 + 1 = 10.1.0.0. */
    vm_iprange t[] = {R("10.1.0.0/16"), R("10.0.0.0/16")};
    cr_assert_eq(vm_iprange_normalize(t, 2), 1);
    cr_expect_str_eq(range_text(&t[0]), "10.0.0.0-10.1.255.255");
}

Test(ipaddr, normalize_sorts_and_keeps_gaps)
{
    vm_iprange r[] = {
        R("2001:db8::/32"), R("192.168.0.0/16"), R("10.0.0.0/8"), R("::1"),
        R("172.16.0.0/12"), R("10.0.0.0/8"), R("192.168.10.0/24"),
    };
    size_t n = vm_iprange_normalize(r, sizeof r / sizeof *r);
    cr_assert_eq(n, 5);
    cr_expect_str_eq(range_text(&r[0]), "::1-::1");
    cr_expect_str_eq(range_text(&r[1]), "10.0.0.0-10.255.255.255");
    cr_expect_str_eq(range_text(&r[2]), "172.16.0.0-172.31.255.255");
    cr_expect_str_eq(range_text(&r[3]), "192.168.0.0-192.168.255.255");
    cr_expect_str_eq(range_text(&r[4]), "2001:db8::-2001:db8:ffff:ffff:ffff:ffff:ffff:ffff");
}

Test(ipaddr, normalize_edges)
{
    cr_expect_eq(vm_iprange_normalize(NULL, 0), 0);

    /* The top address: no overflow when testing adjacency. */
    vm_iprange top[] = {R("ffff::/16"), R("::/0"), R("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")};
    cr_assert_eq(vm_iprange_normalize(top, 3), 1);
    cr_expect_str_eq(range_text(&top[0]), "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

    /* The lowest and the highest address do not wrap into each other. */
    vm_iprange ends[] = {R("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), R("::")};
    cr_assert_eq(vm_iprange_normalize(ends, 2), 2);
    cr_expect_str_eq(range_text(&ends[0]), "::-::");
    cr_expect_str_eq(range_text(&ends[1]),
                     "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

    /* An empty range (lo > hi) is dropped. */
    vm_iprange e[] = {R("10.0.0.0/8"), R("1.2.3.4")};
    memcpy(e[0].lo, e[0].hi, 16);
    e[0].hi[15] = 0; /* lo 10.255.255.255 > hi 10.255.255.0 */
    cr_assert_eq(vm_iprange_normalize(e, 2), 1);
    cr_expect_str_eq(range_text(&e[0]), "1.2.3.4-1.2.3.4");

    /* Duplicates collapse. */
    vm_iprange d[] = {R("1.2.3.4"), R("1.2.3.4"), R("1.2.3.4")};
    cr_assert_eq(vm_iprange_normalize(d, 3), 1);
}

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 8;
}

static void v4(uint32_t x, uint8_t out[16])
{
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    out[12] = (uint8_t)(x >> 24);
    out[13] = (uint8_t)(x >> 16);
    out[14] = (uint8_t)(x >> 8);
    out[15] = (uint8_t)x;
}

/* Random small IPv4 ranges in a narrow space (so that they overlap and
 * touch a lot); normalize, then compare contains with a linear scan of
 * the original ranges for every address of the space. */
Test(ipaddr, normalize_contains_random)
{
    enum { N = 300, SPACE = 4096 };
    for (int round = 0; round < 20; round++) {
        static uint32_t lo[N], hi[N];
        static vm_iprange r[N];
        size_t n = 1 + rng() % N;
        for (size_t i = 0; i < n; i++) {
            lo[i] = rng() % SPACE;
            hi[i] = lo[i] + rng() % (round % 2 ? 3 : 40);
            v4(0x0a000000u + lo[i], r[i].lo);
            v4(0x0a000000u + hi[i], r[i].hi);
        }
        size_t m = vm_iprange_normalize(r, n);
        cr_assert(m >= 1 && m <= n);
        for (size_t i = 1; i < m; i++) {
            /* sorted, disjoint and not adjacent */
            uint8_t next[16];
            memcpy(next, r[i - 1].hi, 16);
            for (int b = 15; b >= 0 && ++next[b] == 0; b--) {}
            cr_assert_lt(memcmp(next, r[i].lo, 16), 0);
        }
        for (uint32_t x = 0; x < SPACE + 64; x++) {
            int want = 0;
            for (size_t i = 0; i < n && !want; i++) want = x >= lo[i] && x <= hi[i];
            uint8_t ip[16];
            v4(0x0a000000u + x, ip);
            cr_assert_eq(vm_iprange_contains(r, m, ip), want, "round %d x %u", round, x);
        }
    }
}

static void ip(const char *s, uint8_t out[16])
{
    cr_assert(parse(s, out), "address \"%s\"", s);
}

Test(ipaddr, contains_at_bounds)
{
    vm_iprange r[] = {R("10.0.0.0/8"), R("192.0.2.16/28"), R("2001:db8::/32")};
    size_t n = vm_iprange_normalize(r, 3);
    cr_assert_eq(n, 3);
    uint8_t a[16];
    static const struct { const char *ip; int in; } cases[] = {
        {"9.255.255.255", 0}, {"10.0.0.0", 1}, {"10.1.2.3", 1}, {"10.255.255.255", 1},
        {"11.0.0.0", 0}, {"192.0.2.15", 0}, {"192.0.2.16", 1}, {"192.0.2.31", 1},
        {"192.0.2.32", 0}, {"0.0.0.0", 0}, {"255.255.255.255", 0},
        {"::ffff:10.9.9.9", 1}, {"::a09:909", 0}, /* IPv4-compatible is not IPv4 */
        {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", 0}, {"2001:db8::", 1},
        {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1}, {"2001:db9::", 0},
        {"::", 0}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ip(cases[i].ip, a);
        cr_expect_eq(vm_iprange_contains(r, n, a), cases[i].in, "%s", cases[i].ip);
    }
    ip("10.0.0.1", a);
    cr_expect_not(vm_iprange_contains(r, 0, a));
    cr_expect_not(vm_iprange_contains(NULL, 0, a));
    /* One range, the whole space. */
    vm_iprange all = R("::/0");
    ip("::", a);
    cr_expect(vm_iprange_contains(&all, 1, a));
    ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", a);
    cr_expect(vm_iprange_contains(&all, 1, a));
}

/* RFC 5952 section 4 and its examples. */
Test(ipaddr, format_rfc5952)
{
    VALID("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1");        /* 4.2.3: first on a tie */
    VALID("2001:0db8::0001", "2001:db8::1");                    /* 4.1: no leading zeros */
    VALID("2001:db8::0:1", "2001:db8::1");                      /* 4.2.1: shorten as much as possible */
    VALID("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1");      /* 4.2.2: not for one group */
    VALID("2001:0:0:1:0:0:0:1", "2001:0:0:1::1");               /* 4.2.3: the longest run */
    VALID("2001:DB8::1", "2001:db8::1");                        /* 4.3: lower case */
    VALID("2001:db8:aaaa:bbbb:cccc:dddd:eeee:0001", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1");
    VALID("2001:db8::aaaa:0:0:1", "2001:db8::aaaa:0:0:1");
    VALID("2001:db8:0:0:aaaa::1", "2001:db8::aaaa:0:0:1");
    VALID("0:0:0:0:0:0:0:1", "::1");
    VALID("1:0:0:0:0:0:0:0", "1::");
    VALID("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0");
    VALID("0:1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7");
    VALID("1:0:0:2:0:0:3:4", "1::2:0:0:3:4");
    VALID("1:0:2:0:0:0:3:0", "1:0:2::3:0");
    VALID("0:0:1:0:0:0:0:2", "0:0:1::2");
    VALID("0:0:0:1:0:0:0:0", "0:0:0:1::");
    VALID("a:b:c:d:e:f:0:0", "a:b:c:d:e:f::");
    VALID("::ffff:c000:20a", "192.0.2.10");
    VALID("::ffff:0.0.0.0", "0.0.0.0");
    VALID("::fffe:1.2.3.4", "::fffe:102:304");
    VALID("::1:ffff:1.2.3.4", "::1:ffff:102:304");
}

Test(ipaddr, format_round_trips)
{
    static const char *const samples[] = {
        "::", "::1", "1::", "1:2:3:4:5:6:7:8", "2001:db8::1:0:0:1", "fe80::1",
        "0.0.0.0", "255.255.255.255", "192.0.2.10", "::102:304", "1:0:2::3:0",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "64:ff9b::c000:221", "::ffff:0:0:0",
    };
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        uint8_t a[16], b[16];
        ip(samples[i], a);
        const char *t = fmt(a);
        cr_expect_str_eq(t, samples[i], "canonical text is its own canon");
        ip(t, b);
        bytes_eq(a, b);
    }
    /* Every 16-bit zero pattern of groups: text parses back to the bytes. */
    for (unsigned mask = 0; mask < 256; mask++) {
        uint8_t a[16] = {0}, b[16];
        for (int k = 0; k < 8; k++)
            if (mask >> k & 1) { a[2 * k] = (uint8_t)(k + 1); a[2 * k + 1] = 0x0f; }
        const char *t = fmt(a);
        cr_assert(parse(t, b), "\"%s\" does not parse", t);
        bytes_eq(a, b);
        cr_assert(strlen(t) < VM_IP_TEXT_MAX);
    }
}

Test(ipaddr, format_truncates_like_snprintf)
{
    uint8_t a[16];
    ip("192.0.2.10", a);
    char buf[8];
    memset(buf, 'x', sizeof buf);
    cr_expect_eq(vm_ip_format(a, buf, 5), 10);
    cr_expect_str_eq(buf, "192.");
    cr_expect_eq(buf[5], 'x');
    cr_expect_eq(vm_ip_format(a, NULL, 0), 10);
    cr_expect_eq(vm_ip_format(a, buf, 1), 10);
    cr_expect_str_eq(buf, "");
    char full[VM_IP_TEXT_MAX];
    ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", a);
    cr_expect_eq(vm_ip_format(a, full, sizeof full), 39);
    char exact39[40];
    cr_expect_eq(vm_ip_format(a, exact39, sizeof exact39), 39);
    cr_expect_str_eq(exact39, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

/* --- the client-address rule -------------------------------------------- */

static vm_iprange trusted_set[8];
static size_t ntrusted_set;

static void trust(const char *const *ranges, size_t n)
{
    cr_assert(n <= 8);
    for (size_t i = 0; i < n; i++) trusted_set[i] = R(ranges[i]);
    ntrusted_set = vm_iprange_normalize(trusted_set, n);
}

#define TRUST(...)                                                                   \
    do {                                                                             \
        static const char *const t_[] = {__VA_ARGS__};                               \
        trust(t_, sizeof t_ / sizeof *t_);                                           \
    } while (0)

/* The client for this peer and headers (NULL: header absent), as text, or
 * "NONE" when vm_client_ip returns 0. */
static const char *client(const char *peer, const char *xff, const char *xrip)
{
    uint8_t p[16], out[16];
    int valid = peer != NULL;
    if (valid) ip(peer, p);
    else memset(p, 0x55, 16);
    size_t xn = xff ? strlen(xff) : 0, rn = xrip ? strlen(xrip) : 0;
    char *x = xff ? exact(xff, xn) : NULL;
    char *r = xrip ? exact(xrip, rn) : NULL;
    memset(out, 0xaa, 16);
    int ok = vm_client_ip(p, valid, trusted_set, ntrusted_set, x, xn, r, rn, out);
    free(x);
    free(r);
    if (!ok) {
        static const uint8_t zero[16];
        cr_assert_eq(memcmp(out, zero, 16), 0, "out not zeroed");
        return "NONE";
    }
    return fmt(out);
}

Test(ipaddr, client_unknown_peer)
{
    TRUST("10.0.0.0/8");
    cr_expect_str_eq(client(NULL, NULL, NULL), "NONE");
    cr_expect_str_eq(client(NULL, "198.51.100.7", "198.51.100.7"), "NONE");
}

Test(ipaddr, client_untrusted_peer_ignores_headers)
{
    TRUST("10.0.0.0/8");
    cr_expect_str_eq(client("203.0.113.5", NULL, NULL), "203.0.113.5");
    cr_expect_str_eq(client("203.0.113.5", "1.2.3.4", NULL), "203.0.113.5");
    cr_expect_str_eq(client("203.0.113.5", "garbage", "junk"), "203.0.113.5");
    cr_expect_str_eq(client("203.0.113.5", NULL, "1.2.3.4"), "203.0.113.5");
    cr_expect_str_eq(client("2001:db8::5", "1.2.3.4", NULL), "2001:db8::5");
    /* With nothing trusted, nothing is believed. */
    ntrusted_set = 0;
    cr_expect_str_eq(client("10.0.0.1", "1.2.3.4", "1.2.3.4"), "10.0.0.1");
}

Test(ipaddr, client_trusted_peer_walks_right_to_left)
{
    TRUST("10.0.0.0/8", "2001:db8:ffff::/48");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7, 10.0.0.2, 10.0.0.3", NULL),
                     "198.51.100.7");
    /* A client-supplied (spoofed) address left of the real one is ignored. */
    cr_expect_str_eq(client("10.0.0.1", "1.1.1.1, 198.51.100.7, 10.0.0.2", NULL),
                     "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "10.9.9.9, 198.51.100.7", NULL), "198.51.100.7");
    /* A garbage element left of the client is never looked at. */
    cr_expect_str_eq(client("10.0.0.1", "garbage, 198.51.100.7", NULL), "198.51.100.7");
    /* Empty elements and OWS (SP, HTAB) are skipped. */
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7, ,10.0.0.2,,  ", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "\t198.51.100.7\t,\t10.0.0.2 ", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", ",198.51.100.7", NULL), "198.51.100.7");
    /* IPv6 hops and clients. */
    cr_expect_str_eq(client("2001:db8:ffff::1", "2001:db8:1::7, 2001:db8:ffff::2", NULL),
                     "2001:db8:1::7");
    cr_expect_str_eq(client("10.0.0.1", "2001:DB8:1:0:0:0:0:7", NULL), "2001:db8:1::7");
    /* The X-Forwarded-For wins over X-Real-IP when both are present. */
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.8", "198.51.100.7"), "198.51.100.8");
}

Test(ipaddr, client_all_trusted_chain)
{
    TRUST("10.0.0.0/8");
    cr_expect_str_eq(client("10.0.0.1", "10.0.0.9, 10.0.0.2", NULL), "10.0.0.9");
    cr_expect_str_eq(client("10.0.0.1", "10.0.0.2", NULL), "10.0.0.2");
    cr_expect_str_eq(client("10.0.0.1", " , 10.0.0.9 ,, 10.0.0.2, ", NULL), "10.0.0.9");
    /* Present but empty: no element, the peer. */
    cr_expect_str_eq(client("10.0.0.1", "", NULL), "10.0.0.1");
    cr_expect_str_eq(client("10.0.0.1", " , ,\t", NULL), "10.0.0.1");
    cr_expect_str_eq(client("10.0.0.1", ",", "198.51.100.7"), "10.0.0.1");
}

Test(ipaddr, client_garbage_is_invalid)
{
    TRUST("10.0.0.0/8");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7, garbage, 10.0.0.2", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "unknown", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "_hidden, 10.0.0.2", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "1.2.3.4, 01.2.3.4", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7 10.0.0.2", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "fe80::1%eth0", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "10.0.0.0/8", NULL), "NONE");
}

Test(ipaddr, client_x_real_ip)
{
    TRUST("10.0.0.0/8");
    cr_expect_str_eq(client("10.0.0.1", NULL, "198.51.100.7"), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", NULL, " \t198.51.100.7 "), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", NULL, "2001:db8::7"), "2001:db8::7");
    cr_expect_str_eq(client("10.0.0.1", NULL, "[2001:db8::7]"), "2001:db8::7");
    /* Its value is taken as it is, even a trusted one. */
    cr_expect_str_eq(client("10.0.0.1", NULL, "10.0.0.5"), "10.0.0.5");
    cr_expect_str_eq(client("10.0.0.1", NULL, "junk"), "NONE");
    cr_expect_str_eq(client("10.0.0.1", NULL, ""), "NONE");
    cr_expect_str_eq(client("10.0.0.1", NULL, "198.51.100.7, 10.0.0.2"), "NONE");
    /* Ports are an X-Forwarded-For accommodation only. */
    cr_expect_str_eq(client("10.0.0.1", NULL, "198.51.100.7:80"), "NONE");
    /* No header at all: the peer. */
    cr_expect_str_eq(client("10.0.0.1", NULL, NULL), "10.0.0.1");
}

Test(ipaddr, client_mapped_peer_matches_v4_range)
{
    TRUST("10.0.0.0/8");
    cr_expect_str_eq(client("::ffff:10.0.0.1", "198.51.100.7", NULL), "198.51.100.7");
    cr_expect_str_eq(client("::ffff:a00:1", "198.51.100.7", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "::ffff:198.51.100.7", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7, ::ffff:10.0.0.2", NULL), "198.51.100.7");
    /* The IPv4-compatible form ::10.0.0.1 is not IPv4. */
    cr_expect_str_eq(client("::10.0.0.1", "198.51.100.7", NULL), "::a00:1");
}

Test(ipaddr, client_ports_in_xff)
{
    TRUST("10.0.0.0/8", "2001:db8:ffff::/48");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:51234", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:51234, 10.0.0.2:80", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "[2001:db8:1::7]:8080", NULL), "2001:db8:1::7");
    cr_expect_str_eq(client("10.0.0.1", "[2001:db8:1::7]", NULL), "2001:db8:1::7");
    cr_expect_str_eq(client("10.0.0.1", "[2001:db8:1::7], [2001:db8:ffff::9]:443", NULL),
                     "2001:db8:1::7");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:0", NULL), "198.51.100.7");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:65535", NULL), "198.51.100.7");
    /* All trusted: the leftmost, port dropped. */
    cr_expect_str_eq(client("10.0.0.1", "10.0.0.9:1234, 10.0.0.2:80", NULL), "10.0.0.9");
    /* Malformed ports make the element invalid. */
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:65536", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:123456", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:8o", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7:-1", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "198.51.100.7: 80", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "[2001:db8:1::7]:", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "[2001:db8:1::7]80", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "[2001:db8:1::7", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", "[198.51.100.7]:80", NULL), "NONE");
    cr_expect_str_eq(client("10.0.0.1", ":80", NULL), "NONE");
    /* A bare IPv6 address is never split: its last group is not a port. */
    cr_expect_str_eq(client("10.0.0.1", "2001:db8:1::7:8080", NULL), "2001:db8:1::7:8080");
}
