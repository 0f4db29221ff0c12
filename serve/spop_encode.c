/*
 * spop_encode.c: the frames an agent sends (see spop.h). A writer keeps
 * its place and whether everything fitted; a frame that did not fit is
 * reported as length 0 and whatever was written of it is garbage the
 * caller never sends.
 */
#include "spop.h"

#include <string.h>

size_t spop_varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    if (v < 240) {
        out[0] = (uint8_t)v;
        return 1;
    }
    out[n++] = (uint8_t)(v | 240);
    v = (v - 240) >> 4;
    while (v >= 128) {
        out[n++] = (uint8_t)(v | 128);
        v = (v - 128) >> 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

typedef struct writer {
    uint8_t *buf;
    size_t cap, len;
    int full;
} writer;

static void put_bytes(writer *w, const void *s, size_t n)
{
    if (w->full || w->cap - w->len < n) {
        w->full = 1;
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void put_byte(writer *w, uint8_t b)
{
    put_bytes(w, &b, 1);
}

static void put_varint(writer *w, uint64_t v)
{
    uint8_t tmp[SPOP_VARINT_MAX];
    put_bytes(w, tmp, spop_varint_put(tmp, v));
}

static void put_string(writer *w, const void *s, size_t n)
{
    put_varint(w, n);
    put_bytes(w, s, n);
}

static void put_typed_str(writer *w, const void *s, size_t n)
{
    put_byte(w, SPOP_T_STR);
    put_string(w, s, n);
}

/* Room for the length, then the type, flags (FIN: nothing we send is
 * fragmented) and ids. */
static void begin(writer *w, uint8_t *out, size_t cap, unsigned type, uint64_t sid, uint64_t fid)
{
    static const uint8_t fin[4] = {0, 0, 0, SPOP_FL_FIN};
    w->buf = out;
    w->cap = cap;
    w->len = 0;
    w->full = cap < 4;
    if (!w->full)
        w->len = 4;
    put_byte(w, (uint8_t)type);
    put_bytes(w, fin, 4);
    put_varint(w, sid);
    put_varint(w, fid);
}

/* Fills in the length; returns the frame's whole length or 0. */
static size_t finish(writer *w)
{
    if (w->full)
        return 0;
    size_t n = w->len - 4;
    w->buf[0] = (uint8_t)(n >> 24);
    w->buf[1] = (uint8_t)(n >> 16);
    w->buf[2] = (uint8_t)(n >> 8);
    w->buf[3] = (uint8_t)n;
    return w->len;
}

#define LIT(w, s) put_string((w), (s), sizeof(s) - 1)

size_t spop_put_agent_hello(uint8_t *out, size_t cap, uint32_t max_frame,
                            const char *capabilities)
{
    writer w;
    begin(&w, out, cap, SPOP_AGENT_HELLO, 0, 0);
    LIT(&w, "version");
    put_typed_str(&w, "2.0", 3);
    LIT(&w, "max-frame-size");
    put_byte(&w, SPOP_T_UINT32);
    put_varint(&w, max_frame);
    LIT(&w, "capabilities");
    put_typed_str(&w, capabilities, strlen(capabilities));
    return finish(&w);
}

size_t spop_put_disconnect(uint8_t *out, size_t cap, unsigned status, const char *message)
{
    writer w;
    begin(&w, out, cap, SPOP_AGENT_DISCONNECT, 0, 0);
    LIT(&w, "status-code");
    put_byte(&w, SPOP_T_UINT32);
    put_varint(&w, status);
    LIT(&w, "message");
    put_typed_str(&w, message, strlen(message));
    return finish(&w);
}

size_t spop_put_ack(uint8_t *out, size_t cap, uint64_t stream_id, uint64_t frame_id,
                    const spop_setvar *vars, size_t n)
{
    writer w;
    begin(&w, out, cap, SPOP_ACK, stream_id, frame_id);
    for (size_t i = 0; i < n; i++) {
        put_byte(&w, 1); /* set-var */
        put_byte(&w, 3); /* scope, name, value */
        put_byte(&w, (uint8_t)vars[i].scope);
        put_string(&w, vars[i].name, vars[i].name_len);
        put_typed_str(&w, vars[i].value, vars[i].value_len);
    }
    return finish(&w);
}
