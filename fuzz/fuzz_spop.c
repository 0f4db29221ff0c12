/*
 * fuzz_spop.c: libFuzzer target for the SPOP codec (serve/spop_*.c,
 * fuzz/README.md). The input is what HAProxy (or anyone) sends on an
 * SPOA connection: frames are split off as serve/srv_spoa.c does (with
 * the smallest max-frame-size, 256, and the default, 32768), and each is
 * read the way its type is: HAPROXY-HELLO through spop_hello_parse, NOTIFY
 * through spop_args_next and, for each argument named "headers", both
 * header-block readers; any other frame as a KV-LIST.
 *
 * Besides crashes and sanitizer reports, it aborts (FUZZ_FAIL) when:
 *   - a slice (a name, a string value, an address, a header name or
 *     value, a frame's payload) lies outside the bytes it was read from,
 *     or a header's value holds CR or LF in the text form;
 *   - a frame is split off longer than the max-frame-size, or a status
 *     other than the ones spop.h lists for the call comes back;
 *   - an integer read is not what spop_varint_put writes back and
 *     spop_varint_get reads again;
 *   - an ACK built with every string argument as a set-var, or an
 *     AGENT-HELLO and AGENT-DISCONNECT built from the HELLO's values, does
 *     not read back (type, ids, names and values) as it was written, or
 *     fails to fit while its size says it should.
 * Inputs over 64 KiB are skipped.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"
#include "spop.h"

#define FUZZ_MAX_INPUT (64u << 10)
#define MAX_VARS 16

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void in_bounds(const void *s, size_t n, const uint8_t *lo, const uint8_t *hi,
                      const char *what)
{
    const uint8_t *p = s;
    if (n > 0 && (p < lo || p > hi || n > (size_t)(hi - p)))
        FUZZ_FAIL("%s: a slice outside its buffer", what);
}

static void varint_roundtrip(uint64_t v)
{
    uint8_t b[SPOP_VARINT_MAX];
    size_t n = spop_varint_put(b, v);
    const uint8_t *p = b;
    uint64_t back;
    if (n == 0 || n > SPOP_VARINT_MAX || spop_varint_get(&p, b + n, &back) != 0 || back != v ||
        p != b + n)
        FUZZ_FAIL("varint %llu does not read back", (unsigned long long)v);
}

static void check_value(const spop_value *v, const uint8_t *lo, const uint8_t *hi)
{
    if (v->type > SPOP_T_BIN)
        FUZZ_FAIL("type %u decoded", v->type);
    if (v->type >= SPOP_T_INT32 && v->type <= SPOP_T_UINT64)
        varint_roundtrip(v->u);
    if ((v->type == SPOP_T_IPV4 && v->len != 4) || (v->type == SPOP_T_IPV6 && v->len != 16))
        FUZZ_FAIL("an address of %zu bytes", v->len);
    in_bounds(v->ptr, v->len, lo, hi, "value");
}

/* Reads an ACK written by spop_put_ack and compares it with what went
 * in. */
static void ack_reads_back(const uint8_t *out, size_t n, uint64_t sid, uint64_t fid,
                           const spop_setvar *vars, size_t nv)
{
    size_t flen;
    spop_frame f;
    if (spop_frame_split(out, n, UINT32_MAX, &flen) != 1 || flen + 4 != n ||
        spop_frame_parse(out + 4, flen, &f) != 0)
        FUZZ_FAIL("ACK: not one whole frame");
    if (f.type != SPOP_ACK || f.flags != SPOP_FL_FIN || f.stream_id != sid || f.frame_id != fid)
        FUZZ_FAIL("ACK: metadata differs");
    const uint8_t *p = f.payload, *end = f.payload + f.payload_len;
    for (size_t i = 0; i < nv; i++) {
        const uint8_t *name;
        size_t nl;
        spop_value v;
        if (end - p < 3 || p[0] != 1 || p[1] != 3 || p[2] != vars[i].scope)
            FUZZ_FAIL("ACK: action %zu is not set-var", i);
        p += 3;
        if (spop_string_get(&p, end, &name, &nl) != 0 || spop_value_get(&p, end, &v) != 0 ||
            nl != vars[i].name_len || memcmp(name, vars[i].name, nl) != 0 ||
            v.type != SPOP_T_STR || v.len != vars[i].value_len ||
            (v.len && memcmp(v.ptr, vars[i].value, v.len) != 0))
            FUZZ_FAIL("ACK: action %zu reads back otherwise", i);
    }
    if (p != end)
        FUZZ_FAIL("ACK: bytes after the actions");
}

static void check_headers(const spop_value *v, int text)
{
    spop_hdrs it = {v->ptr, v->ptr + v->len};
    const uint8_t *name, *value, *hi = v->ptr + v->len;
    size_t nl, vl;
    int rc;
    while ((rc = text ? spop_hdrs_text_next(&it, &name, &nl, &value, &vl)
                      : spop_hdrs_bin_next(&it, &name, &nl, &value, &vl)) == 1) {
        if (nl == 0)
            FUZZ_FAIL("a header without a name");
        in_bounds(name, nl, v->ptr, hi, "header name");
        in_bounds(value, vl, v->ptr, hi, "header value");
        if (text && (memchr(value, '\n', vl) || memchr(name, '\n', nl)))
            FUZZ_FAIL("a text header holds LF");
    }
    if (rc != 0 && rc != -1)
        FUZZ_FAIL("header reader returned %d", rc);
}

static void on_notify(const spop_frame *f)
{
    spop_args it;
    spop_arg a;
    spop_setvar vars[MAX_VARS];
    size_t nv = 0;
    int rc;
    const uint8_t *lo = f->payload, *hi = f->payload + f->payload_len;
    spop_args_init(&it, f->payload, f->payload_len);
    while ((rc = spop_args_next(&it, &a)) == 1) {
        in_bounds(a.msg, a.msg_len, lo, hi, "message name");
        in_bounds(a.name, a.name_len, lo, hi, "argument name");
        check_value(&a.value, lo, hi);
        if (a.value.type == SPOP_T_STR || a.value.type == SPOP_T_BIN) {
            check_headers(&a.value, 0);
            check_headers(&a.value, 1);
            if (nv < MAX_VARS)
                vars[nv++] = (spop_setvar){SPOP_SCOPE_TXN, (const char *)a.name, a.name_len,
                                           (const char *)a.value.ptr, a.value.len};
        }
    }
    if (rc != 0 && rc != -1)
        FUZZ_FAIL("spop_args_next returned %d", rc);
    static uint8_t out[2 * FUZZ_MAX_INPUT];
    size_t need = 4 + 1 + 4 + 2 * SPOP_VARINT_MAX;
    for (size_t i = 0; i < nv; i++)
        need += 3 + 2 * SPOP_VARINT_MAX + 1 + vars[i].name_len + vars[i].value_len;
    size_t n = spop_put_ack(out, sizeof out, f->stream_id, f->frame_id, vars, nv);
    if (n == 0 && need <= sizeof out)
        FUZZ_FAIL("ACK of at most %zu bytes did not fit in %zu", need, sizeof out);
    if (n > 0) {
        ack_reads_back(out, n, f->stream_id, f->frame_id, vars, nv);
        if (spop_put_ack(out, n - 1, f->stream_id, f->frame_id, vars, nv) != 0)
            FUZZ_FAIL("ACK fits one byte short");
    }
}

static void on_hello(const spop_frame *f)
{
    spop_hello h;
    unsigned st = spop_hello_parse(f->payload, f->payload_len, &h);
    if (st != 0 && st != SPOP_ST_INVALID && (st < SPOP_ST_NO_VERSION || st > SPOP_ST_BAD_FRAME_SIZE))
        FUZZ_FAIL("spop_hello_parse returned %u", st);
    if (st == 0 && (!h.version_2 || h.max_frame < SPOP_MIN_FRAME))
        FUZZ_FAIL("a HELLO accepted without version 2 or with a small frame");
    in_bounds(h.engine_id, h.engine_id_len, f->payload, f->payload + f->payload_len, "engine-id");
    uint8_t out[512];
    uint32_t mf = h.max_frame > UINT32_MAX ? UINT32_MAX : (uint32_t)h.max_frame;
    size_t n = spop_put_agent_hello(out, sizeof out, mf, "pipelining,async");
    spop_frame back;
    size_t flen;
    if (n == 0 || spop_frame_split(out, n, UINT32_MAX, &flen) != 1 ||
        spop_frame_parse(out + 4, flen, &back) != 0 || back.type != SPOP_AGENT_HELLO)
        FUZZ_FAIL("AGENT-HELLO does not read back");
    spop_kv kv = {back.payload, back.payload + back.payload_len};
    const uint8_t *name;
    size_t nl;
    spop_value v;
    int items = 0, rc;
    while ((rc = spop_kv_next(&kv, &name, &nl, &v)) == 1) {
        items++;
        if (nl == 14 && memcmp(name, "max-frame-size", 14) == 0 && v.u != mf)
            FUZZ_FAIL("AGENT-HELLO: max-frame-size %llu, wrote %u", (unsigned long long)v.u, mf);
    }
    if (rc != 0 || items != 3)
        FUZZ_FAIL("AGENT-HELLO: %d items", items);
    n = spop_put_disconnect(out, sizeof out, st, spop_status_text(st));
    if (n == 0 || spop_frame_split(out, n, UINT32_MAX, &flen) != 1)
        FUZZ_FAIL("AGENT-DISCONNECT does not fit");
}

static void on_other(const spop_frame *f)
{
    spop_kv kv = {f->payload, f->payload + f->payload_len};
    const uint8_t *name;
    size_t nl;
    spop_value v;
    int rc;
    while ((rc = spop_kv_next(&kv, &name, &nl, &v)) == 1) {
        in_bounds(name, nl, f->payload, f->payload + f->payload_len, "KV name");
        check_value(&v, f->payload, f->payload + f->payload_len);
    }
    if (rc != 0 && rc != -1)
        FUZZ_FAIL("spop_kv_next returned %d", rc);
}

/* The connection's loop, with max-frame-size `max`. */
static void run(const uint8_t *data, size_t size, uint32_t max)
{
    size_t pos = 0;
    for (;;) {
        size_t flen;
        int r = spop_frame_split(data + pos, size - pos, max, &flen);
        if (r <= 0)
            return; /* more needed, or status 3 */
        if (flen > max || flen > size - pos - 4)
            FUZZ_FAIL("a frame of %zu bytes split off", flen);
        const uint8_t *frame = data + pos + 4;
        spop_frame f;
        unsigned st = spop_frame_parse(frame, flen, &f);
        if (st != 0 && st != SPOP_ST_INVALID)
            FUZZ_FAIL("spop_frame_parse returned %u", st);
        if (st == 0) {
            in_bounds(f.payload, f.payload_len, frame, frame + flen, "payload");
            varint_roundtrip(f.stream_id);
            varint_roundtrip(f.frame_id);
            if (f.type == SPOP_HAPROXY_HELLO)
                on_hello(&f);
            else if (f.type == SPOP_NOTIFY)
                on_notify(&f);
            else
                on_other(&f);
        }
        pos += 4 + flen;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    run(data, size, SPOP_MIN_FRAME);
    run(data, size, 32768);
    return 0;
}
