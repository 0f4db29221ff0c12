/*
 * test_spop.c: the SPOP codec (serve/spop_*.c) alone: HAProxy's varint
 * at the boundaries of SPOE.txt's table, typed values, frames, HELLO's
 * checks and their status codes, NOTIFY arguments, both header blocks,
 * and the frames an agent writes, byte for byte.
 *
 * Inputs are copied into heap blocks of exactly their length, so an ASan
 * build catches a read past the end.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "spop.h"

static uint8_t *exact(const void *s, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    cr_assert(p);
    memcpy(p, s, n);
    return p;
}

static uint64_t decode_all(const uint8_t *b, size_t n, int *rc, size_t *used)
{
    uint8_t *p = exact(b, n);
    const uint8_t *q = p;
    uint64_t v = 0;
    *rc = spop_varint_get(&q, p + n, &v);
    *used = (size_t)(q - p);
    free(p);
    return v;
}

/* SPOE.txt 3.1: the first value of each length. */
Test(spop, varint_lengths)
{
    static const struct { uint64_t v; size_t len; } cases[] = {
        {0, 1}, {239, 1}, {240, 2}, {2287, 2}, {2288, 3}, {264431, 3}, {264432, 4},
        {33818863, 4}, {33818864, 5}, {4328786159ULL, 5}, {4328786160ULL, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t b[SPOP_VARINT_MAX];
        size_t n = spop_varint_put(b, cases[i].v), used;
        int rc;
        cr_expect_eq(n, cases[i].len, "%llu: %zu bytes, want %zu",
                     (unsigned long long)cases[i].v, n, cases[i].len);
        cr_expect_eq(decode_all(b, n, &rc, &used), cases[i].v);
        cr_expect(rc == 0 && used == n);
        for (size_t cut = 0; cut < n; cut++) {
            decode_all(b, cut, &rc, &used);
            cr_expect_eq(rc, -1, "%llu cut to %zu bytes decodes", (unsigned long long)cases[i].v,
                         cut);
        }
    }
}

/* Worked by hand from the encoder of HAProxy's include/haproxy/intops.h. */
Test(spop, varint_bytes)
{
    uint8_t b[SPOP_VARINT_MAX];
    cr_expect_eq(spop_varint_put(b, 300), 2);
    cr_expect(b[0] == 0xfc && b[1] == 0x03);
    cr_expect_eq(spop_varint_put(b, 240), 2);
    cr_expect(b[0] == 0xf0 && b[1] == 0x00);
    cr_expect_eq(spop_varint_put(b, 16380), 3); /* HAProxy's max-frame-size */
    int rc;
    size_t used;
    static const uint8_t three[] = {0xfc, 0x83, 0x00};
    cr_expect_eq(decode_all(three, 3, &rc, &used), 252 + (0x83 << 4));
}

Test(spop, varint_roundtrip_and_limits)
{
    uint64_t v = 1;
    for (int i = 0; i < 200; i++, v = v * 3 + (uint64_t)i) {
        uint8_t b[SPOP_VARINT_MAX];
        size_t n = spop_varint_put(b, v), used;
        int rc;
        cr_assert(n <= SPOP_VARINT_MAX);
        cr_expect_eq(decode_all(b, n, &rc, &used), v);
        cr_expect(rc == 0 && used == n);
    }
    uint8_t b[SPOP_VARINT_MAX];
    size_t n = spop_varint_put(b, UINT64_MAX), used;
    int rc;
    cr_expect_eq(n, SPOP_VARINT_MAX);
    cr_expect_eq(decode_all(b, n, &rc, &used), UINT64_MAX);
    /* longer than any 64-bit value: refused, never a shift past 63 */
    static const uint8_t overlong[12] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    decode_all(overlong, sizeof overlong, &rc, &used);
    cr_expect_eq(rc, -1);
}

static int value(const void *b, size_t n, spop_value *v, size_t *used)
{
    uint8_t *p = exact(b, n);
    const uint8_t *q = p;
    int rc = spop_value_get(&q, p + n, v);
    *used = (size_t)(q - p);
    if (rc == 0 && v->ptr != NULL) {
        cr_expect(v->ptr >= p && v->ptr + v->len <= p + n, "a slice of the input");
        v->ptr = (const uint8_t *)b + (v->ptr - p); /* into the caller's bytes */
    }
    free(p);
    return rc;
}

Test(spop, typed_values)
{
    spop_value v;
    size_t used;
    cr_expect(value("\x00", 1, &v, &used) == 0 && v.type == SPOP_T_NULL && used == 1);
    cr_expect(value("\x11", 1, &v, &used) == 0 && v.type == SPOP_T_BOOL && v.boolean);
    cr_expect(value("\x01", 1, &v, &used) == 0 && v.type == SPOP_T_BOOL && !v.boolean);
    cr_expect(value("\x03\xfc\x03", 3, &v, &used) == 0 && v.type == SPOP_T_UINT32 && v.u == 300);
    cr_expect(value("\x06\xc0\x00\x02\x0a", 5, &v, &used) == 0 && v.type == SPOP_T_IPV4 &&
              v.len == 4 && memcmp(v.ptr, "\xc0\x00\x02\x0a", 4) == 0);
    cr_expect(value("\x06\xc0\x00\x02", 4, &v, &used) == -1, "a truncated IPv4");
    uint8_t v6[17] = {SPOP_T_IPV6};
    v6[16] = 1;
    cr_expect(value(v6, 17, &v, &used) == 0 && v.len == 16 && used == 17);
    cr_expect(value(v6, 16, &v, &used) == -1);
    cr_expect(value("\x08\x03GET", 5, &v, &used) == 0 && v.type == SPOP_T_STR && v.len == 3 &&
              memcmp(v.ptr, "GET", 3) == 0);
    cr_expect(value("\x09\x04GET", 5, &v, &used) == -1, "a string longer than the input");
    cr_expect(value("\x0a\x00", 2, &v, &used) == -1, "type 10 is reserved");
    cr_expect(value("", 0, &v, &used) == -1);
}

Test(spop, frame_split)
{
    size_t len = 0;
    cr_expect_eq(spop_frame_split((const uint8_t *)"\x00\x00", 2, 300, &len), 0);
    cr_expect_eq(spop_frame_split((const uint8_t *)"\x00\x00\x00\x07" "abc", 7, 300, &len), 0);
    cr_expect_eq(spop_frame_split((const uint8_t *)"\x00\x00\x00\x03" "abcd", 8, 300, &len), 1);
    cr_expect_eq(len, 3);
    cr_expect_eq(spop_frame_split((const uint8_t *)"\x00\x00\x01\x2d", 4, 300, &len), -1,
                 "301 > 300");
    cr_expect_eq(spop_frame_split((const uint8_t *)"\xff\xff\xff\xff", 4, 300, &len), -1);
}

Test(spop, frame_parse)
{
    spop_frame f;
    static const uint8_t notify[] = {SPOP_NOTIFY, 0, 0, 0, 1, 0xfc, 0x03, 7, 'x'};
    uint8_t *p = exact(notify, sizeof notify);
    cr_expect_eq(spop_frame_parse(p, sizeof notify, &f), 0);
    cr_expect(f.type == SPOP_NOTIFY && f.flags == SPOP_FL_FIN && f.stream_id == 300 &&
              f.frame_id == 7 && f.payload_len == 1 && f.payload[0] == 'x');
    for (size_t n = 0; n < 8; n++)
        cr_expect_eq(spop_frame_parse(p, n, &f), SPOP_ST_INVALID, "cut to %zu bytes", n);
    free(p);
}

/* ------------------------------------------------------------------------ */
/* HELLO, as HAProxy 2.6 writes it (spoe_prepare_hahello_frame). */

typedef struct buf {
    uint8_t b[1024];
    size_t n;
} buf;

static void put(buf *b, const void *s, size_t n)
{
    cr_assert(b->n + n <= sizeof b->b);
    memcpy(b->b + b->n, s, n);
    b->n += n;
}

static void put_str(buf *b, const char *s)
{
    uint8_t v[SPOP_VARINT_MAX];
    put(b, v, spop_varint_put(v, strlen(s)));
    put(b, s, strlen(s));
}

static void kv_str(buf *b, const char *k, const char *s)
{
    put_str(b, k);
    put(b, "\x08", 1);
    put_str(b, s);
}

static void kv_uint(buf *b, const char *k, uint64_t n)
{
    uint8_t v[SPOP_VARINT_MAX];
    put_str(b, k);
    put(b, "\x03", 1);
    put(b, v, spop_varint_put(v, n));
}

static unsigned hello(const buf *b, spop_hello *h)
{
    uint8_t *p = exact(b->b, b->n);
    unsigned st = spop_hello_parse(p, b->n, h);
    free(p);
    return st;
}

static buf haproxy_hello(const char *versions, uint64_t size, const char *caps)
{
    buf b = {{0}, 0};
    if (versions)
        kv_str(&b, "supported-versions", versions);
    if (size)
        kv_uint(&b, "max-frame-size", size);
    if (caps)
        kv_str(&b, "capabilities", caps);
    kv_str(&b, "engine-id", "7F1E0B2A-1234-4ABC-9DEF-0123456789AB");
    return b;
}

Test(spop, hello_haproxy_2_6)
{
    spop_hello h;
    buf b = haproxy_hello("2.0", 16380, "pipelining,async");
    cr_expect_eq(hello(&b, &h), 0);
    cr_expect(h.version_2 && h.max_frame == 16380 && h.pipelining && h.async &&
              !h.fragmentation && !h.healthcheck);
    cr_expect(h.engine_id_len == 36);
    /* a health check (option spop-check) adds healthcheck=true */
    put_str(&b, "healthcheck");
    put(&b, "\x11", 1);
    cr_expect(hello(&b, &h) == 0 && h.healthcheck);
    /* unknown items are skipped, spaces ignored */
    b = haproxy_hello(" 3.1 , 2.5 ", 256, " async ,  pipelining");
    kv_uint(&b, "future-item", 9);
    cr_expect(hello(&b, &h) == 0 && h.version_2 && h.async && h.pipelining);
}

Test(spop, hello_refusals)
{
    spop_hello h;
    buf b;
    b = haproxy_hello(NULL, 16380, "async");
    cr_expect_eq(hello(&b, &h), SPOP_ST_NO_VERSION);
    b = haproxy_hello("2.0", 0, "async");
    cr_expect_eq(hello(&b, &h), SPOP_ST_NO_FRAME_SIZE);
    b = haproxy_hello("2.0", 16380, NULL);
    cr_expect_eq(hello(&b, &h), SPOP_ST_NO_CAPABILITIES);
    b = haproxy_hello("1.0", 16380, "");
    cr_expect_eq(hello(&b, &h), SPOP_ST_BAD_VERSION);
    b = haproxy_hello("20.0, 2, 2.x", 16380, "");
    cr_expect_eq(hello(&b, &h), SPOP_ST_BAD_VERSION);
    b = haproxy_hello("2.0", 255, "");
    cr_expect_eq(hello(&b, &h), SPOP_ST_BAD_FRAME_SIZE);
    /* wrong types, and a truncated list */
    b.n = 0;
    kv_uint(&b, "supported-versions", 2);
    cr_expect_eq(hello(&b, &h), SPOP_ST_INVALID);
    b = haproxy_hello("2.0", 16380, "async");
    b.n -= 3;
    cr_expect_eq(hello(&b, &h), SPOP_ST_INVALID);
}

/* ------------------------------------------------------------------------ */
/* NOTIFY and the header blocks. */

Test(spop, notify_args)
{
    buf b = {{0}, 0};
    put_str(&b, "first");
    put(&b, "\x02", 1);
    kv_str(&b, "method", "GET");
    put_str(&b, ""); /* an unnamed argument */
    put(&b, "\x00", 1);
    put_str(&b, "empty");
    put(&b, "\x00", 1);
    put_str(&b, "second");
    put(&b, "\x01", 1);
    kv_str(&b, "path", "/a");
    uint8_t *p = exact(b.b, b.n);
    spop_args it;
    spop_arg a;
    spop_args_init(&it, p, b.n);
    cr_assert_eq(spop_args_next(&it, &a), 1);
    cr_expect(a.msg_len == 5 && a.name_len == 6 && a.value.type == SPOP_T_STR && a.value.len == 3);
    cr_assert_eq(spop_args_next(&it, &a), 1);
    cr_expect(a.name_len == 0 && a.value.type == SPOP_T_NULL);
    cr_assert_eq(spop_args_next(&it, &a), 1);
    cr_expect(a.msg_len == 6 && memcmp(a.msg, "second", 6) == 0 && a.value.len == 2);
    cr_expect_eq(spop_args_next(&it, &a), 0);
    for (size_t n = 1; n < b.n; n++) { /* every cut but at a message's end */
        int rc, count = 0;
        spop_args_init(&it, p, n);
        while ((rc = spop_args_next(&it, &a)) == 1)
            count++;
        if (rc == 0)
            cr_expect(count == 3 || count == 2, "cut at %zu ends cleanly after %d", n, count);
    }
    free(p);
}

static int hdrs(const void *block, size_t n, int text, int *count, char *out, size_t cap)
{
    uint8_t *p = exact(block, n);
    spop_hdrs it = {p, p + n};
    const uint8_t *name, *value;
    size_t nl, vl, o = 0;
    int rc;
    *count = 0;
    while ((rc = text ? spop_hdrs_text_next(&it, &name, &nl, &value, &vl)
                      : spop_hdrs_bin_next(&it, &name, &nl, &value, &vl)) == 1) {
        cr_assert(name >= p && value >= p && name + nl <= p + n && value + vl <= p + n);
        cr_assert(o + nl + vl + 3 < cap);
        memcpy(out + o, name, nl), o += nl;
        out[o++] = '=';
        memcpy(out + o, value, vl), o += vl;
        out[o++] = ';';
        (*count)++;
    }
    out[o] = '\0';
    free(p);
    return rc;
}

Test(spop, hdrs_bin)
{
    static const char block[] = "\x04host\x0b""example.com\x0auser-agent\x06GPTBot\x00\x00";
    char out[256];
    int n;
    cr_expect_eq(hdrs(block, sizeof block - 1, 0, &n, out, sizeof out), 0);
    cr_expect_str_eq(out, "host=example.com;user-agent=GPTBot;");
    cr_expect_eq(hdrs("\x00\x00", 2, 0, &n, out, sizeof out), 0);
    cr_expect_eq(n, 0);
    cr_expect_eq(hdrs(block, sizeof block - 3, 0, &n, out, sizeof out), -1, "no end marker");
    cr_expect_eq(hdrs("\x00\x01x", 3, 0, &n, out, sizeof out), -1, "an empty name with a value");
    cr_expect_eq(hdrs("\x04ho", 3, 0, &n, out, sizeof out), -1);
    cr_expect_eq(hdrs("", 0, 0, &n, out, sizeof out), -1);
}

Test(spop, hdrs_text)
{
    static const char block[] = "host: example.com\r\nuser-agent:  GPTBot \r\nx-empty:\r\n\r\n";
    char out[256];
    int n;
    cr_expect_eq(hdrs(block, sizeof block - 1, 1, &n, out, sizeof out), 0);
    cr_expect_str_eq(out, "host=example.com;user-agent=GPTBot;x-empty=;");
    cr_expect_eq(hdrs(block, sizeof block - 3, 1, &n, out, sizeof out), -1, "no empty line");
    cr_expect_eq(hdrs("host example.com\r\n\r\n", 20, 1, &n, out, sizeof out), -1);
    cr_expect_eq(hdrs(": x\r\n\r\n", 7, 1, &n, out, sizeof out), -1);
    cr_expect_eq(hdrs("a: b\n\r\n", 7, 1, &n, out, sizeof out), -1, "LF without CR");
    cr_expect_eq(hdrs("\r\n", 2, 1, &n, out, sizeof out), 0);
}

/* ------------------------------------------------------------------------ */
/* What the agent writes. */

Test(spop, agent_hello_bytes)
{
    uint8_t out[256];
    size_t n = spop_put_agent_hello(out, sizeof out, 16380, "pipelining,async");
    static const char want[] =
        "\x65\x00\x00\x00\x01\x00\x00"
        "\x07version\x08\x03" "2.0"
        "\x0emax-frame-size\x03\xfc\xf0\x06" /* 16380 */
        "\x0c" "capabilities\x08\x10pipelining,async";
    size_t wl = sizeof want - 1;
    cr_assert_eq(n, 4 + wl);
    cr_expect(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == wl);
    cr_expect(memcmp(out + 4, want, wl) == 0);
    for (size_t cap = 0; cap < n; cap++)
        cr_expect_eq(spop_put_agent_hello(out, cap, 16380, "pipelining,async"), 0);
}

Test(spop, disconnect_and_ack)
{
    uint8_t out[256];
    size_t n = spop_put_disconnect(out, sizeof out, SPOP_ST_TOO_BIG,
                                   spop_status_text(SPOP_ST_TOO_BIG));
    spop_frame f;
    cr_assert(n > 4);
    cr_assert_eq(spop_frame_parse(out + 4, n - 4, &f), 0);
    cr_expect(f.type == SPOP_AGENT_DISCONNECT && f.flags == SPOP_FL_FIN);
    spop_kv kv = {f.payload, f.payload + f.payload_len};
    const uint8_t *name;
    size_t nl;
    spop_value v;
    cr_assert_eq(spop_kv_next(&kv, &name, &nl, &v), 1);
    cr_expect(nl == 11 && memcmp(name, "status-code", 11) == 0 && v.type == SPOP_T_UINT32 &&
              v.u == 3);
    cr_assert_eq(spop_kv_next(&kv, &name, &nl, &v), 1);
    cr_expect(v.type == SPOP_T_STR && v.len == 16 && memcmp(v.ptr, "frame is too big", 16) == 0);
    cr_expect_eq(spop_kv_next(&kv, &name, &nl, &v), 0);

    spop_setvar vars[2] = {{SPOP_SCOPE_TXN, "verdict", 7, "reject", 6},
                           {SPOP_SCOPE_TXN, "reason", 6, "ai", 2}};
    n = spop_put_ack(out, sizeof out, 300, 1, vars, 2);
    static const char want[] = "\x67\x00\x00\x00\x01\xfc\x03\x01"
                               "\x01\x03\x02\x07verdict\x08\x06reject"
                               "\x01\x03\x02\x06reason\x08\x02" "ai";
    cr_assert_eq(n, 4 + sizeof want - 1);
    cr_expect(memcmp(out + 4, want, sizeof want - 1) == 0);
    cr_expect_eq(spop_put_ack(out, sizeof out, 1, 1, NULL, 0), 4 + 7, "an ACK without actions");
    cr_expect_str_eq(spop_status_text(10), "fragmentation not supported");
    cr_expect_str_eq(spop_status_text(42), "an unknown error occurred");
}
