/*
 * ipaddr.c: parsing, formatting and range lookup of IP addresses, and the
 * client-address rule (see ipaddr.h for the contracts).
 *
 * Parsers take (pointer, length) and check the index before every read,
 * because their input is request headers: attacker-chosen and not
 * NUL-terminated.
 */
#include <string.h>

#include "chars.h"
#include "ipaddr.h"

/* The 12-byte prefix of an IPv4-mapped address (RFC 4291 2.5.5.2). */
static const uint8_t v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Value of a hex digit, or -1. */
static int is_ows(char c) { return c == ' ' || c == '\t'; }

/* Parses exactly a dotted quad s[0..n) into 4 bytes. */
static int parse_v4(const char *s, size_t n, uint8_t out[4])
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0) {
            if (i >= n || s[i] != '.') return 0;
            i++;
        }
        size_t start = i;
        unsigned v = 0;
        while (i < n && is_digit(s[i]) && i - start < 3) v = v * 10 + (unsigned)(s[i++] - '0');
        size_t len = i - start;
        /* A fourth digit is caught by the separator check that follows. */
        if (len == 0 || v > 255) return 0;
        /* "01" would be octal to inet_aton(); refuse rather than guess. */
        if (len > 1 && s[start] == '0') return 0;
        out[part] = (uint8_t)v;
    }
    return i == n;
}

static int has_colon(const char *s, size_t n)
{
    return n > 0 && memchr(s, ':', n) != NULL; /* memchr(NULL, c, 0) is UB */
}

/* Parses IPv6 text s[0..n) (RFC 4291 section 2.2, no brackets). */
static int parse_v6(const char *s, size_t n, uint8_t out[16])
{
    uint8_t g[16] = {0};
    size_t ng = 0;     /* bytes written to g */
    long gap = -1;     /* byte offset in g where "::" stands, or -1 */
    size_t i = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
        if (i == n) goto done; /* "::" */
    } else if (n >= 1 && s[0] == ':') {
        return 0; /* a single leading colon */
    }
    for (;;) {
        size_t start = i;
        unsigned v = 0;
        while (i < n && vm_hex_value((unsigned char)s[i]) >= 0 && i - start < 4) v = v << 4 | (unsigned)vm_hex_value((unsigned char)s[i++]);
        if (i == start) return 0; /* empty group, ":::" or a bad character */
        if (i < n && s[i] == '.') {
            /* The embedded dotted quad: the rest of the text, 32 bits. */
            if (ng > 12 || !parse_v4(s + start, n - start, g + ng)) return 0;
            ng += 4;
            break;
        }
        if (ng == 16) return 0; /* a ninth group */
        g[ng++] = (uint8_t)(v >> 8);
        g[ng++] = (uint8_t)v;
        if (i == n) break;
        if (s[i] != ':') return 0; /* a fifth hex digit, '%', ... */
        i++;
        if (i < n && s[i] == ':') {
            if (gap >= 0) return 0; /* a second "::" */
            gap = (long)ng;
            i++;
            if (i == n) break; /* trailing "::" */
        } else if (i == n) {
            return 0; /* a single trailing colon */
        }
    }
done:
    if (gap >= 0) {
        /* "::" is one or more zero groups (RFC 4291 2.2 item 2). */
        if (ng > 14) return 0;
        size_t tail = ng - (size_t)gap;
        memset(out, 0, 16);
        memcpy(out, g, (size_t)gap);
        memcpy(out + 16 - tail, g + gap, tail);
        return 1;
    }
    if (ng != 16) return 0;
    memcpy(out, g, 16);
    return 1;
}

int vm_ip_parse(const char *s, size_t n, uint8_t out[16])
{
    int ok;
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        /* Brackets exist to set IPv6 apart from a port (RFC 3986 3.2.2). */
        ok = has_colon(s + 1, n - 2) && parse_v6(s + 1, n - 2, out);
    } else if (has_colon(s, n)) {
        ok = parse_v6(s, n, out);
    } else {
        memcpy(out, v4mapped_prefix, 12);
        ok = parse_v4(s, n, out + 12);
    }
    if (!ok) memset(out, 0, 16);
    return ok;
}

int vm_iprange_parse(const char *s, size_t n, vm_iprange *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return 0;
    const char *slash = memchr(s, '/', n);
    size_t alen = slash ? (size_t)(slash - s) : n;
    uint8_t a[16];
    if (!vm_ip_parse(s, alen, a)) return 0;
    /* The family is that of the text: "::ffff:10.0.0.0/104" is IPv6. */
    unsigned max = has_colon(s, alen) ? 128 : 32;
    unsigned bits = max;
    if (slash) {
        const char *p = slash + 1;
        size_t pn = n - alen - 1;
        if (pn == 0 || pn > 3 || (pn > 1 && p[0] == '0')) return 0;
        bits = 0;
        for (size_t i = 0; i < pn; i++) {
            if (!is_digit(p[i])) return 0;
            bits = bits * 10 + (unsigned)(p[i] - '0');
        }
        if (bits > max) return 0;
    }
    if (max == 32) bits += 96;
    for (unsigned b = 0; b < 16; b++) {
        unsigned keep = bits >= 8 * (b + 1) ? 8 : bits > 8 * b ? bits - 8 * b : 0;
        uint8_t mask = (uint8_t)(0xff00u >> keep);
        out->lo[b] = a[b] & mask;
        out->hi[b] = (uint8_t)(a[b] | (uint8_t)~mask);
    }
    return 1;
}

static int ipcmp(const uint8_t a[16], const uint8_t b[16])
{
    return memcmp(a, b, 16);
}

static int range_less(const vm_iprange *a, const vm_iprange *b)
{
    int c = ipcmp(a->lo, b->lo);
    return c < 0 || (c == 0 && ipcmp(a->hi, b->hi) < 0);
}

static void range_swap(vm_iprange *a, vm_iprange *b)
{
    vm_iprange t = *a;
    *a = *b;
    *b = t;
}

static void sift_down(vm_iprange *r, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && range_less(&r[child], &r[child + 1])) child++;
        if (!range_less(&r[root], &r[child])) return;
        range_swap(&r[root], &r[child]);
        root = child;
    }
}

/* Whether lo <= hi + 1, i.e. a range starting at lo overlaps or touches
 * one ending at hi, computed without overflowing at the top address. */
static int touches(const uint8_t hi[16], const uint8_t lo[16])
{
    uint8_t next[16];
    int carry = 1;
    for (int b = 15; b >= 0; b--) {
        unsigned v = (unsigned)hi[b] + (unsigned)carry;
        next[b] = (uint8_t)v;
        carry = v > 0xff;
    }
    if (carry) return 1; /* hi is the last address: everything touches */
    return ipcmp(lo, next) <= 0;
}

size_t vm_iprange_normalize(vm_iprange *r, size_t n)
{
    /* Drop empty ranges first so that the merge can rely on lo <= hi. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (ipcmp(r[i].lo, r[i].hi) <= 0) r[m++] = r[i];
    n = m;
    if (n == 0) return 0;
    for (size_t i = n / 2; i-- > 0;) sift_down(r, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        range_swap(&r[0], &r[end]);
        sift_down(r, 0, end);
    }
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        if (touches(r[out].hi, r[i].lo)) {
            if (ipcmp(r[i].hi, r[out].hi) > 0) memcpy(r[out].hi, r[i].hi, 16);
        } else {
            r[++out] = r[i];
        }
    }
    return out + 1;
}

int vm_iprange_contains(const vm_iprange *r, size_t n, const uint8_t ip[16])
{
    /* Find the last range with lo <= ip; only it can contain ip. */
    size_t lo = 0, hi = n; /* candidates are r[lo..hi) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ipcmp(r[mid].lo, ip) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && ipcmp(ip, r[lo - 1].hi) <= 0;
}

static size_t put_dec(char *d, unsigned v)
{
    size_t o = 0;
    if (v >= 100) d[o++] = (char)('0' + v / 100);
    if (v >= 10) d[o++] = (char)('0' + v / 10 % 10);
    d[o++] = (char)('0' + v % 10);
    return o;
}

static size_t put_hex(char *d, unsigned v)
{
    static const char digits[] = "0123456789abcdef";
    size_t o = 0;
    int shift = 12;
    while (shift > 0 && (v >> shift & 0xf) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) d[o++] = digits[v >> shift & 0xf];
    return o;
}

size_t vm_ip_format(const uint8_t ip[16], char *buf, size_t cap)
{
    char t[VM_IP_TEXT_MAX];
    size_t o = 0;
    if (memcmp(ip, v4mapped_prefix, 12) == 0) {
        for (int b = 12; b < 16; b++) {
            if (b > 12) t[o++] = '.';
            o += put_dec(t + o, ip[b]);
        }
    } else {
        unsigned g[8];
        for (int k = 0; k < 8; k++) g[k] = (unsigned)ip[2 * k] << 8 | ip[2 * k + 1];
        /* RFC 5952 4.2: the longest run of >= 2 zero groups, first on ties. */
        int best = -1, bestlen = 1;
        for (int k = 0; k < 8;) {
            if (g[k] != 0) { k++; continue; }
            int e = k;
            while (e < 8 && g[e] == 0) e++;
            if (e - k > bestlen) { best = k; bestlen = e - k; }
            k = e;
        }
        for (int k = 0; k < 8; k++) {
            if (k == best) {
                t[o++] = ':';
                t[o++] = ':';
                k += bestlen - 1;
                continue;
            }
            if (k > 0 && k != best + bestlen) t[o++] = ':';
            o += put_hex(t + o, g[k]);
        }
    }
    t[o] = '\0';
    if (cap > 0) {
        size_t w = o < cap ? o : cap - 1;
        memcpy(buf, t, w);
        buf[w] = '\0';
    }
    return o;
}

/* Parses one X-Forwarded-For element (already trimmed, non-empty):
 * an address, "[v6]", "[v6]:port" or "v4:port". */
static int parse_xff_element(const char *s, size_t n, uint8_t out[16])
{
    size_t alen = n;
    size_t port = n; /* index of the port's first digit, n when none */
    if (s[0] == '[') {
        const char *rb = memchr(s, ']', n);
        if (!rb) return 0;
        alen = (size_t)(rb - s) + 1;
        if (alen < n) {
            if (s[alen] != ':') return 0;
            port = alen + 1;
        }
    } else {
        /* IPv6 text has at least two colons ("::"), so exactly one colon
         * can only be "v4:port". */
        const char *c = memchr(s, ':', n);
        if (c && !memchr(c + 1, ':', n - (size_t)(c - s) - 1)) {
            alen = (size_t)(c - s);
            port = alen + 1;
        }
    }
    if (port < n || alen < n) {
        size_t pn = n - port;
        if (pn == 0 || pn > 5) return 0;
        unsigned long v = 0;
        for (size_t i = port; i < n; i++) {
            if (!is_digit(s[i])) return 0;
            v = v * 10 + (unsigned long)(s[i] - '0');
        }
        if (v > 65535) return 0;
    }
    return vm_ip_parse(s, alen, out);
}

static void trim_ows(const char **s, size_t *n)
{
    while (*n > 0 && is_ows((*s)[0])) { (*s)++; (*n)--; }
    while (*n > 0 && is_ows((*s)[*n - 1])) (*n)--;
}

int vm_client_ip(const uint8_t peer[16], int peer_valid,
                 const vm_iprange *trusted, size_t ntrusted,
                 const char *xff, size_t xff_len,
                 const char *xrip, size_t xrip_len, uint8_t out[16])
{
    memset(out, 0, 16);
    if (!peer_valid) return 0;
    if (!vm_iprange_contains(trusted, ntrusted, peer) || (!xff && !xrip)) {
        memcpy(out, peer, 16);
        return 1;
    }
    if (xff) {
        uint8_t leftmost[16];
        int found = 0;
        size_t end = xff_len; /* the current element is xff[start..end) */
        for (;;) {
            size_t start = end;
            while (start > 0 && xff[start - 1] != ',') start--;
            const char *e = xff + start;
            size_t en = end - start;
            trim_ows(&e, &en);
            if (en > 0) {
                uint8_t a[16];
                if (!parse_xff_element(e, en, a)) return 0; /* invalid */
                if (!vm_iprange_contains(trusted, ntrusted, a)) {
                    memcpy(out, a, 16);
                    return 1;
                }
                memcpy(leftmost, a, 16);
                found = 1;
            }
            if (start == 0) break;
            end = start - 1; /* skip the comma */
        }
        memcpy(out, found ? leftmost : peer, 16);
        return 1;
    }
    const char *v = xrip;
    size_t vn = xrip_len;
    trim_ows(&v, &vn);
    return vm_ip_parse(v, vn, out);
}
