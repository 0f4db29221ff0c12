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

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        need = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        need = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        need = 4;
    else
        return 0;
    if (s[0] == 0xe0)
        lo = 0xa0;
    else if (s[0] == 0xed)
        hi = 0x9f;
    else if (s[0] == 0xf0)
        lo = 0x90;
    else if (s[0] == 0xf4)
        hi = 0x8f;
    if (n < need || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < need; k++)
        if (s[k] < 0x80 || s[k] > 0xbf)
            return 0;
    return need;
}

/* A JSON string. JSON text must be Unicode, so each byte that is not part
 * of well-formed UTF-8 becomes U+FFFD. */
void put_json_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;

    putc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        size_t n = utf8_len(u + i, len - i);
        if (n == 0) {
            fputs("\\ufffd", out);
            i++;
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
