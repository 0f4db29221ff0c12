/*
 * httpfields.c: cookie and query-parameter lookup, percent-decoding (see
 * httpfields.h for the contracts).
 *
 * Nothing is copied to look a name up: query names are decoded on the fly
 * while they are compared, so a lookup costs one pass and no buffer.
 */
#include <limits.h>
#include <string.h>

#include "chars.h"
#include "httpfields.h"

static int is_ows(char c) { return c == ' ' || c == '\t'; }

static void trim_ows(const char **s, size_t *n)
{
    while (*n > 0 && is_ows((*s)[0])) { (*s)++; (*n)--; }
    while (*n > 0 && is_ows((*s)[*n - 1])) (*n)--;
}

int vm_http_cookie(const char *hdr, size_t n, const char *name, size_t name_len,
                   const char **v, size_t *vn)
{
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && hdr[i] != ';') i++;
        const char *pair = hdr + start;
        size_t pn = i - start;
        i++; /* past the ';' (or past the end, which ends the loop) */
        trim_ows(&pair, &pn);
        const char *eq = pn ? memchr(pair, '=', pn) : NULL;
        if (!eq) continue; /* "a" or empty: not a cookie */
        const char *nm = pair;
        size_t nn = (size_t)(eq - pair);
        const char *val = eq + 1;
        size_t valn = pn - nn - 1;
        trim_ows(&nm, &nn);
        trim_ows(&val, &valn);
        if (nn == name_len && (nn == 0 || memcmp(nm, name, nn) == 0)) {
            *v = val;
            *vn = valn;
            return 1;
        }
    }
    return 0;
}

/* Decodes the byte at s[*i] (a '%HH' escape, '+' or a plain byte) and
 * advances *i past it. *i < n on entry. */
static char decode_one(const char *s, size_t n, size_t *i, int plus_is_space)
{
    char c = s[*i];
    if (c == '%' && n - *i >= 3) {
        int h = vm_hex_value((unsigned char)s[*i + 1]), l = vm_hex_value((unsigned char)s[*i + 2]);
        if (h >= 0 && l >= 0) {
            *i += 3;
            return (char)(unsigned char)(h << 4 | l);
        }
    }
    (*i)++;
    return c == '+' && plus_is_space ? ' ' : c;
}

size_t vm_http_pct_decode(const char *src, size_t n, char *dst, int plus_is_space)
{
    /* The write index never passes the read index, so dst == src works. */
    size_t i = 0, o = 0;
    while (i < n) dst[o++] = decode_one(src, n, &i, plus_is_space);
    return o;
}

/* Whether the form-encoded s[0..n) decodes to exactly name[0..name_len). */
static int decoded_equals(const char *s, size_t n, const char *name, size_t name_len)
{
    size_t i = 0, k = 0;
    while (i < n) {
        if (k == name_len || decode_one(s, n, &i, 1) != name[k]) return 0;
        k++;
    }
    return k == name_len;
}

/* The next non-empty '&'-separated pair of q[0..n) from *i on: its
 * encoded name and value (the value empty when there is no '='). Returns
 * 0 when there is none left. */
static int next_pair(const char *q, size_t n, size_t *i, const char **nm, size_t *nn,
                     const char **val, size_t *valn)
{
    while (*i < n) {
        size_t start = *i;
        while (*i < n && q[*i] != '&') (*i)++;
        const char *piece = q + start;
        size_t pn = *i - start;
        (*i)++;
        if (pn == 0) continue; /* "a=1&&b=2" */
        const char *eq = memchr(piece, '=', pn);
        *nm = piece;
        *nn = eq ? (size_t)(eq - piece) : pn;
        *val = eq ? eq + 1 : piece + pn;
        *valn = eq ? pn - *nn - 1 : 0;
        return 1;
    }
    return 0;
}

long vm_http_query_param(const char *q, size_t n, const char *name, size_t name_len,
                         char *buf, size_t cap)
{
    size_t i = 0, nn, valn;
    const char *nm, *val;
    while (next_pair(q, n, &i, &nm, &nn, &val, &valn)) {
        if (!decoded_equals(nm, nn, name, name_len)) continue;
        /* Decode a byte at a time so that nothing lands past buf[cap-1]. */
        size_t j = 0, o = 0;
        while (j < valn) {
            if (o == cap) return -2;
            buf[o++] = decode_one(val, valn, &j, 1);
        }
        if (o > (size_t)LONG_MAX) return -2; /* unrepresentable, never in practice */
        return (long)o;
    }
    return -1;
}

size_t vm_http_query_count(const char *q, size_t n, const char *name, size_t name_len)
{
    size_t i = 0, nn, valn, count = 0;
    const char *nm, *val;
    while (next_pair(q, n, &i, &nm, &nn, &val, &valn))
        if (decoded_equals(nm, nn, name, name_len)) count++;
    return count;
}
