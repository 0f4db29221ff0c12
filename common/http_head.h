/*
 * http_head.h: an HTTP/1.x request head as llhttp reports it, with the
 * checks the project makes on top of llhttp 8.1: the one request parser
 * of classify-run (request files) and classify-serve (connections).
 *
 * The head is kept as offsets into the caller's buffer (*base), which may
 * grow or be compacted between calls: offsets survive both, pointers
 * would not. On top of llhttp, a head is refused (status 400) for:
 *   - a header name that is empty or not an RFC 9110 token (llhttp 8.1
 *     lets "Name : value" and ": value" through; RFC 9112 section 5.1);
 *   - obsolete line folding (RFC 9112 section 5.2: a server may reject it,
 *     and joining the lines would rewrite the value);
 *   - an HTTP version other than 1.0 and 1.1 (HTTP/0.9, HTTP/2 preface);
 *   - a Transfer-Encoding whose last coding is not chunked (RFC 9112
 *     section 6.3: its body length cannot be known), or any
 *     Transfer-Encoding in HTTP/1.0 (section 6.1: faulty framing).
 * Values lose their leading and trailing spaces and tabs (RFC 9110
 * section 5.5). Past `max` header lines the head gets 431.
 */
#ifndef COMMON_HTTP_HEAD_H
#define COMMON_HTTP_HEAD_H

#include <llhttp.h>

#include <stddef.h>
#include <stdint.h>

typedef struct cm_span {
    uint32_t off, len;
} cm_span;

typedef struct cm_http_field {
    cm_span name, value;
} cm_http_field;

/* An error with no position of ours: llhttp's error position applies. */
#define CM_HTTP_NO_POS UINT32_MAX

typedef struct cm_http_head {
    char *const *base;       /* the buffer the spans are offsets into */
    cm_span method, url, version;
    cm_http_field *h;        /* header lines, in order, repeats kept */
    unsigned n, cap, max;    /* used, allocated, limit (0: none, the array grows) */
    int field_open;          /* the last header's name is still being read */
    uint32_t value_end;      /* end of the last header piece (fold check) */
    int te_seen;             /* a Transfer-Encoding line, even an empty one */
    int event;               /* what paused the parser (http_head.c) */
    int nomem;               /* growing the header array failed */
    unsigned err_status;     /* 400 or 431 once a check refused, else 0 */
    const char *err_what;    /* what it refused, or NULL */
    uint32_t err_at;         /* where, or CM_HTTP_NO_POS */
    char err_buf[80];        /* err_what when it had to be formatted */
} cm_http_head;

/* Sets up `h` over the buffer *base, for at most `max` header lines (0:
 * any number). Returns 0, or -1 when the header array cannot be
 * allocated. */
int cm_http_head_init(cm_http_head *h, char *const *base, unsigned max);
void cm_http_head_free(cm_http_head *h);

/* llhttp settings with this module's callbacks; the llhttp_t's data must
 * be the cm_http_head. */
void cm_http_settings(llhttp_settings_t *s);

/* What cm_http_feed stopped at. */
typedef enum cm_http_feed_result {
    CM_HTTP_MORE,    /* every byte given was parsed: wait for more */
    CM_HTTP_HEAD,    /* a request head is complete: answer it now */
    CM_HTTP_END,     /* a message (with its body) is complete */
    CM_HTTP_UPGRADE, /* llhttp stopped at an upgrade: the rest is not HTTP */
    CM_HTTP_ERROR    /* malformed: err_status (400 or 431), err_what, err_at;
                        or nomem; llhttp's own errors have err_what NULL */
} cm_http_feed_result;

/* Parses buf[0..len) (the input from where the last call stopped) with
 * parser p up to the next event, and sets *used to the bytes consumed.
 * After CM_HTTP_HEAD, call again, even with len 0: llhttp reports the end
 * of a message without a body only then. */
cm_http_feed_result cm_http_feed(llhttp_t *p, const char *buf, size_t len, size_t *used);

/* Moves every span `shift` bytes to the left (the buffer was compacted). */
void cm_http_head_shift(cm_http_head *h, uint32_t shift);

/* ASCII case-insensitive equality of n bytes at p with the lower-case
 * name `lower` (lower_len bytes). */
int cm_http_name_is(const char *p, size_t n, const char *lower, size_t lower_len);

/* Splits a request target as libclassify wants it (docs/classify-run.md):
 * origin-form "/a?b", absolute-form "http://h/a?b" (path "/a"; an empty
 * path is "/", RFC 9110 section 4.2.3), authority-form "h:443" and
 * asterisk-form "*" (RFC 9112 section 3.2). Returns 0, or -1 for any
 * other target ("*?x", "h:443?x", "a/b"), which llhttp lets through and
 * which would put a '?' in the path. */
int cm_http_split_target(const char *t, size_t len, const char **path, size_t *plen,
                         const char **query, size_t *qlen);

#endif
