/*
 * srv_request.h: the request head as llhttp reports it, kept as offsets
 * into the connection's input buffer (which may grow or be compacted
 * between reads: offsets survive both, pointers would not).
 *
 * The checks match classify-run's request-file parser (http_request.c)
 * where a server should be as strict: header names must be RFC 9110
 * tokens (llhttp 8.1 lets "Name : value" through), obsolete line folding
 * is refused, values lose surrounding whitespace, and only HTTP/1.0 and
 * HTTP/1.1 are spoken. A Transfer-Encoding whose last coding is not
 * chunked, or any in HTTP/1.0, gets 400 (RFC 9112, 6.3 and 6.1). Beyond
 * --max-headers the request gets 431.
 */
#ifndef CLI_SRV_REQUEST_H
#define CLI_SRV_REQUEST_H

#include <llhttp.h>

#include <stddef.h>
#include <stdint.h>

typedef struct srv_span {
    uint32_t off, len;
} srv_span;

typedef struct srv_hdr {
    srv_span name, value;
} srv_hdr;

/* What paused the parser. */
enum srv_req_event { SRV_EV_NONE, SRV_EV_HEADERS, SRV_EV_MESSAGE };

typedef struct srv_req {
    char *const *base; /* the connection's buffer pointer */
    srv_span method, url;
    srv_hdr *h;
    unsigned n, cap, max; /* headers: used, allocated, --max-headers */
    int field_open;       /* the last header's name is still being read */
    uint32_t value_end;   /* end of the last value piece (fold check) */
    int te_seen;          /* a Transfer-Encoding line, even an empty one */
    int event;            /* srv_req_event */
    unsigned err_status;  /* 400 or 431 when a callback refused */
    const char *err_what;
} srv_req;

/* Settings with the callbacks below; parser->data must be the srv_req. */
void srv_req_settings(llhttp_settings_t *s);

/* What srv_req_feed stopped at. */
typedef enum srv_feed {
    SRV_FEED_MORE,    /* every byte given was parsed: wait for more */
    SRV_FEED_HEAD,    /* a request head is complete: answer it now */
    SRV_FEED_END,     /* a message (with its body) is complete */
    SRV_FEED_UPGRADE, /* llhttp stopped at an upgrade: the rest is not HTTP */
    SRV_FEED_ERROR    /* malformed: answer r->err_status (400 or 431) */
} srv_feed;

/* Parses buf[0..len) (the connection's input from where the last call
 * stopped) with parser p (p->data is the srv_req) up to the next event,
 * and sets *used to the bytes consumed. After SRV_FEED_HEAD, call again
 * even with len 0: llhttp reports the end of a message without a body
 * only then. The one parse loop of classify-serve (srv_conn.c) and of
 * its fuzz target (fuzz/fuzz_serve.c). */
srv_feed srv_req_feed(llhttp_t *p, const char *buf, size_t len, size_t *used);

/* Allocates the header array (max entries). Returns 0 or -1. */
int srv_req_init(srv_req *r, char *const *base, unsigned max);
void srv_req_free(srv_req *r);

/* Moves every span `shift` bytes to the left (buffer compaction). */
void srv_req_shift(srv_req *r, uint32_t shift);

/* A request target split as libclassify wants it (docs/classify-run.md):
 * origin-form "/a?b", absolute-form "http://h/a?b" (path "/a"; empty path
 * is "/"), authority-form "h:443" and asterisk-form "*". Returns 0, or -1
 * for anything else. */
int srv_split_target(const char *t, size_t len, const char **path, size_t *plen,
                     const char **query, size_t *qlen);

/* ASCII case-insensitive equality of a span with a lower-case name. */
int srv_name_is(const char *p, size_t n, const char *lower, size_t lower_len);

#endif /* CLI_SRV_REQUEST_H */
