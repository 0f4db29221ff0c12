/*
 * bytes.h: little-endian encoding helpers and a growable byte buffer,
 * used by the writer and the loader. Reads go through memcpy-free shifts so
 * that they work at any alignment and on any host byte order.
 */
#ifndef VM_BYTES_H
#define VM_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t vm_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t vm_rd64(const uint8_t *p)
{
    return (uint64_t)vm_rd32(p) | (uint64_t)vm_rd32(p + 4) << 32;
}

static inline uint16_t vm_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline void vm_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

static inline void vm_wr64(uint8_t *p, uint64_t v)
{
    vm_wr32(p, (uint32_t)v);
    vm_wr32(p + 4, (uint32_t)(v >> 32));
}

/* A growable buffer; `failed` sticks once an allocation fails so that
 * callers can check once at the end. */
typedef struct vm_buf {
    uint8_t *data;
    size_t len, cap;
    int failed;
} vm_buf;

static inline uint8_t *vm_buf_grow(vm_buf *b, size_t n)
{
    if (b->failed) return NULL;
    if (n > SIZE_MAX / 2 - b->len) { b->failed = 1; return NULL; }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) { b->failed = 1; return NULL; }
        b->data = d;
        b->cap = cap;
    }
    uint8_t *p = b->data + b->len;
    b->len += n;
    return p;
}

static inline void vm_buf_put(vm_buf *b, const void *src, size_t n)
{
    if (n == 0) return; /* data may still be NULL: no pointer arithmetic on it */
    uint8_t *p = vm_buf_grow(b, n);
    if (p && n) memcpy(p, src, n);
}

static inline void vm_buf_u32(vm_buf *b, uint32_t v)
{
    uint8_t *p = vm_buf_grow(b, 4);
    if (p) vm_wr32(p, v);
}

static inline void vm_buf_u64(vm_buf *b, uint64_t v)
{
    uint8_t *p = vm_buf_grow(b, 8);
    if (p) vm_wr64(p, v);
}

static inline void vm_buf_align8(vm_buf *b)
{
    while (!b->failed && b->len % 8) vm_buf_put(b, "", 1);
}

#endif
