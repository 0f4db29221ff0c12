/*
 * srv_log.h: classify-serve's two logs. The error log is text lines on
 * standard error ("classify-serve: LEVEL: message"), for operators and
 * journald. The access log (off by default) is one JSON object per
 * request, written whole with one write(2) so lines from several worker
 * threads never interleave.
 */
#ifndef CLI_SRV_LOG_H
#define CLI_SRV_LOG_H

#include <stddef.h>

#if defined(__GNUC__)
#define SRV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SRV_PRINTF(a, b)
#endif

void srv_log_info(const char *fmt, ...) SRV_PRINTF(1, 2);
void srv_log_warn(const char *fmt, ...) SRV_PRINTF(1, 2);
void srv_log_error(const char *fmt, ...) SRV_PRINTF(1, 2);

/* Opens (or, when already open, reopens in place, for log rotation) the
 * access log: `path` "-" is standard output. Returns 0, or -1 after
 * logging why (a failed reopen keeps the old file). */
int srv_access_log_open(const char *path);
void srv_access_log_close(void);
/* --check: whether srv_access_log_open(path) would succeed, leaving no
 * file behind and nothing open. Returns 0, or -1 after logging why. */
int srv_access_log_check(const char *path);
int srv_access_log_enabled(void);

/* A JSON line under construction, in a caller-owned buffer (one per
 * worker: no allocation per request). A string value is cut after
 * SRV_JLINE_STR_MAX bytes as written; a field that still does not fit is
 * left out whole. The line is always valid JSON ending in "}\n". */
#define SRV_JLINE_STR_MAX 1024
#define SRV_JLINE_CAP 8192 /* a worker's line buffer: every field fits */
typedef struct srv_jline {
    char *buf;
    size_t cap, len;
    int overflow; /* the field being written did not fit */
} srv_jline;

void srv_jline_begin(srv_jline *j);
void srv_jline_str(srv_jline *j, const char *key, const char *s, size_t len);
void srv_jline_num(srv_jline *j, const char *key, unsigned long long n);
/* Ends the object and writes the line to the access log. */
void srv_jline_write(srv_jline *j);

/* One answered request's access-log line, the same fields for every
 * listener (docs/classify-serve.md, "Access log"). Strings are slices;
 * NULL ones are written as null. */
typedef struct srv_logreq {
    const char *listener;
    const char *peer, *xff, *method, *uri, *host, *ua;
    size_t peer_len, xff_len, method_len, uri_len, host_len, ua_len;
    int status;  /* -1: none (an SPOA answer) */
    int verdict; /* -1: none; 0 reject; 1 accept */
    const char *reason;
    size_t reason_len;
    unsigned long long generation, duration_us;
} srv_logreq;

/* Writes r's line, stamped with the current time, through j. */
void srv_jline_request(srv_jline *j, const srv_logreq *r);

#endif /* CLI_SRV_LOG_H */
