/*
 * sg_url.c: Signature-Agent URL normalization (sg_url.h).
 */
#include <string.h>

#include "chars.h"
#include "sg_url.h"

/* RFC 3986 section 2.3. */
static int is_unreserved(unsigned char c)
{
    return vm_is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 section 5.2.4 on out[start..*n), in place: the output never
 * grows, and each step only reads what is ahead of what it writes. */
static void remove_dot_segments(char *out, size_t start, size_t *n)
{
    char *in = out + start;
    size_t len = *n - start, r = 0, w = 0;
    while (r < len) {
        if (len - r >= 3 && memcmp(in + r, "../", 3) == 0) r += 3;
        else if (len - r >= 2 && memcmp(in + r, "./", 2) == 0) r += 2;
        else if (len - r >= 3 && memcmp(in + r, "/./", 3) == 0) r += 2;
        else if (len - r == 2 && memcmp(in + r, "/.", 2) == 0) { r += 1; in[r] = '/'; }
        else if ((len - r >= 4 && memcmp(in + r, "/../", 4) == 0) ||
                 (len - r == 3 && memcmp(in + r, "/..", 3) == 0)) {
            if (len - r == 3) { r += 2; in[r] = '/'; }
            else r += 3;
            while (w > 0 && in[w - 1] != '/') w--; /* drop the last segment */
            if (w > 0) w--;                         /* and its '/' */
        } else if (len - r == 1 && in[r] == '.') r += 1;
        else if (len - r == 2 && memcmp(in + r, "..", 2) == 0) r += 2;
        else {
            do in[w++] = in[r++]; while (r < len && in[r] != '/');
        }
    }
    *n = start + w;
}

long sg_url_norm(const char *url, size_t n, char *out, size_t cap, int *origin)
{
    static const char https[] = "https://";
    size_t o = 0, i = 0;
    if (origin) *origin = 0;
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)url[k] <= 0x20 || (unsigned char)url[k] >= 0x7f) return -1;
    if (n < 8 || cap < 9) return -1;
    for (; i < 8; i++)
        if (vm_ascii_lower((unsigned char)url[i]) != (unsigned char)https[i]) return -1;
    memcpy(out, https, 8);
    o = 8;
    /* The authority: up to the path, query or fragment. */
    size_t a = i;
    while (i < n && url[i] != '/' && url[i] != '?' && url[i] != '#') i++;
    const char *auth = url + a;
    size_t an = i - a;
    if (memchr(auth, '@', an)) return -1;
    size_t hn = an;
    if (an && auth[0] == '[') { /* an IP literal: the port follows the ']' */
        const char *rb = memchr(auth, ']', an);
        if (!rb) return -1;
        hn = (size_t)(rb - auth) + 1;
        if (hn < an && auth[hn] != ':') return -1;
    } else {
        const char *colon = memchr(auth, ':', an);
        if (colon) hn = (size_t)(colon - auth);
    }
    if (hn == 0) return -1;
    if (hn > cap - o) return -1;
    for (size_t k = 0; k < hn; k++) out[o++] = (char)vm_ascii_lower((unsigned char)auth[k]);
    if (hn < an) { /* ":port" */
        const char *port = auth + hn + 1;
        size_t pn = an - hn - 1;
        for (size_t k = 0; k < pn; k++)
            if (!vm_is_digit((unsigned char)port[k])) return -1;
        while (pn > 1 && port[0] == '0') { port++; pn--; } /* ":0443" is :443 */
        if (pn && !(pn == 3 && memcmp(port, "443", 3) == 0)) {
            if (pn + 1 > cap - o) return -1;
            out[o++] = ':';
            memcpy(out + o, port, pn);
            o += pn;
        }
    }
    /* The path, with its percent-encodings normalized. */
    size_t path0 = o;
    while (i < n && url[i] != '?' && url[i] != '#') {
        unsigned char c = (unsigned char)url[i];
        if (c == '%') {
            /* Not a URI (RFC 3986 section 2.1) unless two hex digits
             * follow; decoding around a stray '%' ("%3%36") could make a
             * new escape, and the form would not be canonical. */
            if (n - i < 3 || vm_hex_value((unsigned char)url[i + 1]) < 0 ||
                vm_hex_value((unsigned char)url[i + 2]) < 0)
                return -1;
            unsigned char d = (unsigned char)(vm_hex_value((unsigned char)url[i + 1]) << 4 |
                                              vm_hex_value((unsigned char)url[i + 2]));
            if (is_unreserved(d)) {
                if (o == cap) return -1;
                out[o++] = (char)d;
            } else {
                static const char hex[] = "0123456789ABCDEF";
                if (cap - o < 3) return -1;
                out[o++] = '%';
                out[o++] = hex[d >> 4];
                out[o++] = hex[d & 15];
            }
            i += 3;
            continue;
        }
        if (o == cap) return -1;
        out[o++] = (char)c;
        i++;
    }
    remove_dot_segments(out, path0, &o);
    if (o == path0 + 1 && out[path0] == '/') o = path0; /* "https://a.test/" is the origin */
    if (origin) *origin = o == path0;
    return (long)o;
}
