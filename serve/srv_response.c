/*
 * srv_response.c: see srv_response.h.
 */
#include "srv_response.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

const char *srv_status_text(unsigned s)
{
    switch (s) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 410: return "Gone";
    case 418: return "I'm a teapot";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 451: return "Unavailable For Legal Reasons";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

typedef struct w {
    char *p;
    size_t n;
} w;

static void put(w *o, const char *s, size_t n)
{
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

#define PUTS(o, lit) put((o), (lit), sizeof(lit) - 1)

static void put_uint(w *o, size_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    put(o, tmp + i, sizeof tmp - i);
}

/* A reason is rule text and may hold any byte: everything but visible
 * ASCII and space is percent-encoded (and '%' itself), so it can neither
 * break the header nor be misread, and stays decodable. */
static void put_reason(w *o, const char *r, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t start = o->n;
    for (size_t i = 0; i < n && o->n - start + 3 <= SRV_REASON_HDR_MAX; i++) {
        unsigned char c = (unsigned char)r[i];
        if (c >= 0x20 && c < 0x7f && c != '%' &&
            !(c == ' ' && (i == 0 || i + 1 == n))) { /* edge spaces would be trimmed */
            o->p[o->n++] = (char)c;
        } else {
            o->p[o->n++] = '%';
            o->p[o->n++] = hex[c >> 4];
            o->p[o->n++] = hex[c & 15];
        }
    }
}

size_t srv_response_head(char *out, const srv_answer *a, const char *date, size_t date_len)
{
    w o = {out, 0};
    const char *text = srv_status_text(a->status);
    PUTS(&o, "HTTP/1.1 ");
    put_uint(&o, a->status);
    PUTS(&o, " ");
    put(&o, text, strlen(text));
    PUTS(&o, "\r\n");
    put(&o, date, date_len);
    PUTS(&o, "Content-Length: ");
    put_uint(&o, a->body_len);
    PUTS(&o, "\r\n");
    if (a->content_type != NULL) {
        size_t n = strlen(a->content_type);
        PUTS(&o, "Content-Type: ");
        put(&o, a->content_type, n > 200 ? 200 : n);
        PUTS(&o, "\r\n");
    }
    if (a->verdict >= 0) {
        if (a->verdict == 1)
            PUTS(&o, "X-Classify-Verdict: accept\r\nX-Classify-Reason: ");
        else
            PUTS(&o, "X-Classify-Verdict: reject\r\nX-Classify-Reason: ");
        put_reason(&o, a->reason, a->reason != NULL ? a->reason_len : 0);
        PUTS(&o, "\r\n");
    }
    if (a->close)
        PUTS(&o, "Connection: close\r\n");
    PUTS(&o, "\r\n");
    return o.n;
}

size_t srv_date_line(char *out, long long t)
{
    static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct tm tm;
    time_t tt = (time_t)t;
    if (gmtime_r(&tt, &tm) == NULL)
        return 0;
    int n = snprintf(out, 64, "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n",
                     days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
                     tm.tm_hour, tm.tm_min, tm.tm_sec);
    return n > 0 && n < 64 ? (size_t)n : 0;
}
