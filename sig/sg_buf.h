/*
 * sg_buf.h: the byte slices and bounded buffers of sig/. Verification
 * never allocates: what it builds (the signature base, a String with its
 * escapes undone, field lines joined) goes into memory the caller gives,
 * in practice the context's string workspace.
 *
 *   sg_str  a slice: pointer and length, not NUL-terminated
 *   sg_buf  a bump allocator over a caller's buffer, with marks, so that
 *           what one signature needed is given back before the next
 *   sg_out  an output that appends into a fixed span and remembers
 *           whether anything did not fit (one check at the end)
 */
#ifndef SG_BUF_H
#define SG_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct sg_str {
    const char *p;
    size_t n;
} sg_str;

#define SG_STR_LIT(s) ((sg_str){(s), sizeof(s) - 1})

static inline int sg_str_eq(sg_str a, const char *b, size_t bn)
{
    return a.n == bn && (bn == 0 || memcmp(a.p, b, bn) == 0);
}

static inline int sg_str_eqz(sg_str a, const char *z) { return sg_str_eq(a, z, strlen(z)); }

typedef struct sg_buf {
    char *p;
    size_t cap, used;
} sg_buf;

/* n bytes from b, or NULL when it has fewer left. */
static inline char *sg_buf_take(sg_buf *b, size_t n)
{
    if (n > b->cap - b->used) return NULL;
    char *d = b->p + b->used;
    b->used += n;
    return d;
}

typedef struct sg_out {
    char *p;
    size_t cap, n;
    int full;
} sg_out;

/* An output over all that is left of b (sg_out_commit takes it). */
static inline sg_out sg_out_over(sg_buf *b)
{
    sg_out o = {b->p + b->used, b->cap - b->used, 0, 0};
    return o;
}

/* Keeps what o wrote in b. */
static inline void sg_out_commit(sg_buf *b, const sg_out *o) { b->used += o->n; }

/* n bytes at the top of o's free space, for a value that o's next
 * writes consume (a field's lines joined, a name decoded): o cannot
 * write over them until sg_out_untop gives them back. NULL when they do
 * not fit (o->full is then set). */
static inline char *sg_out_top(sg_out *o, size_t n)
{
    if (n > o->cap - o->n) {
        o->full = 1;
        return NULL;
    }
    o->cap -= n;
    return o->p + o->cap;
}

static inline void sg_out_untop(sg_out *o, size_t n) { o->cap += n; }

static inline void sg_out_put(sg_out *o, const char *s, size_t n)
{
    if (n > o->cap - o->n) {
        o->full = 1;
        n = o->cap - o->n;
    }
    if (n) memcpy(o->p + o->n, s, n);
    o->n += n;
}

static inline void sg_out_byte(sg_out *o, char c) { sg_out_put(o, &c, 1); }
static inline void sg_out_str(sg_out *o, sg_str s) { sg_out_put(o, s.p, s.n); }
static inline void sg_out_z(sg_out *o, const char *z) { sg_out_put(o, z, strlen(z)); }

static inline void sg_out_i64(sg_out *o, int64_t v)
{
    char d[24];
    size_t k = sizeof d;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do d[--k] = (char)('0' + u % 10); while ((u /= 10) != 0);
    if (v < 0) d[--k] = '-';
    sg_out_put(o, d + k, sizeof d - k);
}

#endif
