/*
 * out_escape.c: how classify-run writes untrusted bytes (out_escape.h).
 */
#include "out_escape.h"

#include <string.h>

/* Text output keeps one request per line: control bytes are shown as
 * \xHH. Everything else is written as is (--json is the exact format). */
void put_text(FILE *out, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            putc(c, out);
    }
}

/* The UTF-8 sequence at s (n > 0 bytes): returns its length and sets
 * *bad = 0 when it is well-formed (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF); otherwise sets *bad = 1 and returns the length
 * of its maximal subpart (Unicode 15, section 3.9, "U+FFFD Substitution of
 * Maximal Subparts"; the WHATWG Encoding Standard's decoder, and Python's
 * errors="replace", do the same): a lead byte with the continuation bytes
 * that could still begin a well-formed sequence, or 1 for a byte that
 * cannot begin one. Each such subpart becomes one U+FFFD. */
static size_t utf8_scan(const unsigned char *s, size_t n, int *bad)
{
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf;

    *bad = 0;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        need = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        need = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        need = 4;
    else {
        *bad = 1;
        return 1;
    }
    /* The second byte's range excludes overlongs (E0, F0), surrogates
     * (ED) and code points above U+10FFFF (F4). */
    if (s[0] == 0xe0)
        lo = 0xa0;
    else if (s[0] == 0xed)
        hi = 0x9f;
    else if (s[0] == 0xf0)
        lo = 0x90;
    else if (s[0] == 0xf4)
        hi = 0x8f;
    for (size_t k = 1; k < need; k++) {
        if (k == n || s[k] < lo || s[k] > hi) {
            *bad = 1;
            return k;
        }
        lo = 0x80;
        hi = 0xbf;
    }
    return need;
}

/* A JSON string. JSON text must be Unicode, so each maximal subpart of an
 * ill-formed UTF-8 sequence becomes one U+FFFD. */
void put_json_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;

    putc('"', out);
    for (size_t i = 0; i < len;) {
        /* Printable ASCII goes out as it is, a run at a time: most of a
         * User-Agent or a path (classify-run --log --json writes millions). */
        size_t run = i;
        while (run < len && u[run] >= 0x20 && u[run] < 0x7f && u[run] != '"' && u[run] != '\\')
            run++;
        if (run > i) {
            fwrite(u + i, 1, run - i, out);
            i = run;
            continue;
        }
        unsigned char c = u[i];
        int bad;
        size_t n = utf8_scan(u + i, len - i, &bad);
        if (bad) {
            fputs("\\ufffd", out);
            i += n;
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c == '\r')
            fputs("\\r", out);
        else if (c == '\t')
            fputs("\\t", out);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            fwrite(u + i, 1, n, out);
        i += n;
    }
    putc('"', out);
}

void put_json_cstr(FILE *out, const char *s)
{
    put_json_string(out, s, strlen(s));
}
