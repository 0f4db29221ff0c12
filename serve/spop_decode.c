/*
 * spop_decode.c: reading SPOP frames (see spop.h). Every read is checked
 * against the end of the buffer first; lengths are compared with what is
 * left, never added to a pointer before that.
 */
#include "spop.h"

#include <string.h>

const char *spop_status_text(unsigned status)
{
    /* HAProxy's own texts (flt_spoe.c, spoe_frm_err_reasons) */
    switch (status) {
    case SPOP_ST_NORMAL: return "normal";
    case SPOP_ST_IO: return "I/O error";
    case SPOP_ST_TIMEOUT: return "a timeout occurred";
    case SPOP_ST_TOO_BIG: return "frame is too big";
    case SPOP_ST_INVALID: return "invalid frame received";
    case SPOP_ST_NO_VERSION: return "version value not found";
    case SPOP_ST_NO_FRAME_SIZE: return "max-frame-size value not found";
    case SPOP_ST_NO_CAPABILITIES: return "capabilities value not found";
    case SPOP_ST_BAD_VERSION: return "unsupported version";
    case SPOP_ST_BAD_FRAME_SIZE: return "max-frame-size too big or too small";
    case SPOP_ST_NO_FRAGMENTATION: return "fragmentation not supported";
    case SPOP_ST_INTERLACED: return "invalid interlaced frames";
    case SPOP_ST_FRAME_ID: return "frame-id not found";
    case SPOP_ST_RESOURCE: return "resource allocation error";
    }
    return "an unknown error occurred";
}

int spop_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return -1;
    uint64_t v = *p++;
    if (v >= 240) {
        /* Each further byte adds its whole value (continuation bit
         * included: the encoder subtracted it) shifted by 4, 11, 18...
         * 60 is the last shift a 64-bit value needs. */
        unsigned shift = 4;
        uint8_t b;
        do {
            if (p >= end || shift > 60)
                return -1;
            b = *p++;
            v += (uint64_t)b << shift;
            shift += 7;
        } while (b >= 128);
    }
    *pp = p;
    *out = v;
    return 0;
}

int spop_string_get(const uint8_t **pp, const uint8_t *end, const uint8_t **s, size_t *len)
{
    const uint8_t *p = *pp;
    uint64_t n;
    if (spop_varint_get(&p, end, &n) != 0 || n > (uint64_t)(end - p))
        return -1;
    *s = p;
    *len = (size_t)n;
    *pp = p + n;
    return 0;
}

int spop_value_get(const uint8_t **pp, const uint8_t *end, spop_value *v)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return -1;
    uint8_t b = *p++;
    memset(v, 0, sizeof *v);
    v->type = b & 0x0fu;
    switch (v->type) {
    case SPOP_T_NULL:
        break;
    case SPOP_T_BOOL:
        v->boolean = (b & 0x10u) != 0;
        break;
    case SPOP_T_INT32:
    case SPOP_T_UINT32:
    case SPOP_T_INT64:
    case SPOP_T_UINT64:
        if (spop_varint_get(&p, end, &v->u) != 0)
            return -1;
        break;
    case SPOP_T_IPV4:
    case SPOP_T_IPV6: {
        size_t n = v->type == SPOP_T_IPV4 ? 4 : 16;
        if ((size_t)(end - p) < n)
            return -1;
        v->ptr = p;
        v->len = n;
        p += n;
        break;
    }
    case SPOP_T_STR:
    case SPOP_T_BIN:
        if (spop_string_get(&p, end, &v->ptr, &v->len) != 0)
            return -1;
        break;
    default:
        return -1;
    }
    *pp = p;
    return 0;
}

int spop_frame_split(const uint8_t *buf, size_t len, uint32_t max_frame, size_t *frame_len)
{
    if (len < 4)
        return 0;
    uint32_t n = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
    if (n > max_frame)
        return -1;
    if (len - 4 < n)
        return 0;
    *frame_len = n;
    return 1;
}

unsigned spop_frame_parse(const uint8_t *frame, size_t len, spop_frame *f)
{
    const uint8_t *p = frame, *end = frame + len;
    if (len < 5)
        return SPOP_ST_INVALID;
    f->type = p[0];
    f->flags = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
    p += 5;
    if (spop_varint_get(&p, end, &f->stream_id) != 0 ||
        spop_varint_get(&p, end, &f->frame_id) != 0)
        return SPOP_ST_INVALID;
    f->payload = p;
    f->payload_len = (size_t)(end - p);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* KV lists and HELLO. */

int spop_kv_next(spop_kv *it, const uint8_t **name, size_t *name_len, spop_value *v)
{
    if (it->p >= it->end)
        return 0;
    if (spop_string_get(&it->p, it->end, name, name_len) != 0 ||
        spop_value_get(&it->p, it->end, v) != 0) {
        it->p = it->end;
        return -1;
    }
    return 1;
}

static int is_space(uint8_t c)
{
    return c == ' ' || c == '\t';
}

/* The items of a comma-separated list, spaces around them trimmed
 * (SPOE.txt: "Spaces must be ignored"). Returns 1 with the next item, 0
 * at the end. */
static int list_next(const uint8_t **pp, const uint8_t *end, const uint8_t **item, size_t *len)
{
    const uint8_t *p = *pp;
    if (p >= end)
        return 0;
    const uint8_t *comma = memchr(p, ',', (size_t)(end - p));
    const uint8_t *stop = comma ? comma : end;
    *pp = comma ? comma + 1 : end;
    while (p < stop && is_space(*p))
        p++;
    while (stop > p && is_space(stop[-1]))
        stop--;
    *item = p;
    *len = (size_t)(stop - p);
    return 1;
}

static int name_is(const uint8_t *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* "MAJOR.MINOR" with major 2: the protocol version this agent speaks. */
static int is_version_2(const uint8_t *s, size_t n)
{
    size_t i = 0, digits = 0;
    while (i < n && s[i] == '0')
        i++;
    if (i == n || s[i] != '2')
        return 0;
    i++;
    if (i == n || s[i] != '.')
        return 0;
    for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    return i == n && digits > 0;
}

static int is_int(unsigned t)
{
    return t == SPOP_T_INT32 || t == SPOP_T_UINT32 || t == SPOP_T_INT64 || t == SPOP_T_UINT64;
}

unsigned spop_hello_parse(const uint8_t *payload, size_t len, spop_hello *h)
{
    spop_kv it = {payload, payload + len};
    const uint8_t *name, *item;
    size_t nl, il;
    spop_value v;
    int has_versions = 0, has_size = 0, has_caps = 0, rc;

    memset(h, 0, sizeof *h);
    while ((rc = spop_kv_next(&it, &name, &nl, &v)) == 1) {
        if (name_is(name, nl, "supported-versions")) {
            if (v.type != SPOP_T_STR)
                return SPOP_ST_INVALID;
            has_versions = 1;
            const uint8_t *p = v.ptr;
            while (list_next(&p, v.ptr + v.len, &item, &il))
                h->version_2 |= is_version_2(item, il);
        } else if (name_is(name, nl, "max-frame-size")) {
            if (!is_int(v.type))
                return SPOP_ST_INVALID;
            has_size = 1;
            h->max_frame = v.u;
        } else if (name_is(name, nl, "capabilities")) {
            if (v.type != SPOP_T_STR)
                return SPOP_ST_INVALID;
            has_caps = 1;
            const uint8_t *p = v.ptr;
            while (list_next(&p, v.ptr + v.len, &item, &il)) {
                h->pipelining |= name_is(item, il, "pipelining");
                h->async |= name_is(item, il, "async");
                h->fragmentation |= name_is(item, il, "fragmentation");
            }
        } else if (name_is(name, nl, "healthcheck")) {
            if (v.type != SPOP_T_BOOL)
                return SPOP_ST_INVALID;
            h->healthcheck = v.boolean;
        } else if (name_is(name, nl, "engine-id")) {
            if (v.type != SPOP_T_STR)
                return SPOP_ST_INVALID;
            h->engine_id = v.ptr;
            h->engine_id_len = v.len;
        }
    }
    if (rc < 0)
        return SPOP_ST_INVALID;
    if (!has_versions)
        return SPOP_ST_NO_VERSION;
    if (!has_size)
        return SPOP_ST_NO_FRAME_SIZE;
    if (!has_caps)
        return SPOP_ST_NO_CAPABILITIES;
    if (!h->version_2)
        return SPOP_ST_BAD_VERSION;
    if (h->max_frame < SPOP_MIN_FRAME)
        return SPOP_ST_BAD_FRAME_SIZE;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* NOTIFY messages. */

void spop_args_init(spop_args *it, const uint8_t *payload, size_t len)
{
    it->p = payload;
    it->end = payload + len;
    it->msg = NULL;
    it->msg_len = 0;
    it->left = 0;
}

int spop_args_next(spop_args *it, spop_arg *a)
{
    while (it->left == 0) {
        if (it->p >= it->end)
            return 0;
        if (spop_string_get(&it->p, it->end, &it->msg, &it->msg_len) != 0 || it->p >= it->end)
            goto bad;
        it->left = *it->p++;
    }
    a->msg = it->msg;
    a->msg_len = it->msg_len;
    if (spop_string_get(&it->p, it->end, &a->name, &a->name_len) != 0 ||
        spop_value_get(&it->p, it->end, &a->value) != 0)
        goto bad;
    it->left--;
    return 1;
bad:
    it->p = it->end;
    it->left = 0;
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Header blocks. */

int spop_hdrs_bin_next(spop_hdrs *it, const uint8_t **name, size_t *name_len,
                       const uint8_t **value, size_t *value_len)
{
    if (spop_string_get(&it->p, it->end, name, name_len) != 0 ||
        spop_string_get(&it->p, it->end, value, value_len) != 0) {
        it->p = it->end;
        return -1;
    }
    if (*name_len == 0) {
        if (*value_len != 0)
            return -1;
        it->end = it->p; /* the end marker: stay there */
        return 0;
    }
    return 1;
}

int spop_hdrs_text_next(spop_hdrs *it, const uint8_t **name, size_t *name_len,
                        const uint8_t **value, size_t *value_len)
{
    const uint8_t *p = it->p, *end = it->end;
    const uint8_t *lf = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
    if (lf == NULL || lf == p || lf[-1] != '\r')
        goto bad;
    const uint8_t *eol = lf - 1;
    it->p = lf + 1;
    if (eol == p) { /* the empty line */
        it->end = it->p;
        return 0;
    }
    const uint8_t *colon = memchr(p, ':', (size_t)(eol - p));
    if (colon == NULL || colon == p)
        goto bad;
    *name = p;
    *name_len = (size_t)(colon - p);
    const uint8_t *v = colon + 1, *ve = eol;
    while (v < ve && is_space(*v))
        v++;
    while (ve > v && is_space(ve[-1]))
        ve--;
    *value = v;
    *value_len = (size_t)(ve - v);
    return 1;
bad:
    it->p = it->end;
    return -1;
}
