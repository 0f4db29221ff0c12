/*
 * log_record.h: one request as an access log line records it, the parsers
 * of the log formats (log_nginx.c: nginx's log_format templates;
 * log_caddy.c: Caddy's JSON access log) and what classify-run --log and
 * --diff do with it (log_parse.c: choosing the format, classifying).
 *
 * A record points into the line (which a parser may rewrite in place, as
 * nginx's \xHH escapes are decoded) or into its parser's own bounded
 * storage: it is valid until the parser's next line. Nothing is allocated
 * per line.
 */
#ifndef CLI_LOG_RECORD_H
#define CLI_LOG_RECORD_H

#include "explain_out.h"
#include "http_request.h"

#include <classify.h>

#include <stddef.h>

/* Most headers kept from one line: libclassify's default
 * CLF_LIMIT_HEADERS; a Caddy line with more is malformed. */
#define LOG_MAX_HEADERS 256

typedef struct log_record {
    http_slice method, target, path, query; /* path and query as classify-run's */
    http_slice client;                      /* the client address as logged, or "" */
    http_slice ua;                          /* the User-Agent (for the output), or "" */
    http_header headers[LOG_MAX_HEADERS];
    size_t nheaders;
} log_record;

typedef enum log_format_kind {
    LOG_FORMAT_AUTO = 0, /* decided by the first non-empty line */
    LOG_FORMAT_NGINX,    /* a log_format template; nginx-combined by default */
    LOG_FORMAT_CADDY     /* caddy-json */
} log_format_kind;

/* The template of nginx's predefined "combined" format. */
#define LOG_NGINX_COMBINED                                                                       \
    "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent "           \
    "\"$http_referer\" \"$http_user_agent\""

/* --- log_nginx.c -------------------------------------------------------- */

typedef struct nginx_format nginx_format;

/* Compiles a log_format template ($name or ${name} variables, and the text
 * between them). Returns 0, or -1 with a message in err: a template with
 * two variables not separated by text, whose values could not be told
 * apart, or with too many variables, or none. */
int nginx_format_new(const char *tmpl, nginx_format **out, char *err, size_t errlen);
void nginx_format_free(nginx_format *f);

/* Parses line[0..len) into rec, decoding nginx's \xHH escapes in place.
 * Returns 0, or -1 with the reason in err. */
int nginx_parse(const nginx_format *f, char *line, size_t len, log_record *rec, char *err,
                size_t errlen);

/* --- log_caddy.c -------------------------------------------------------- */

typedef struct caddy_parser caddy_parser;

int caddy_parser_new(caddy_parser **out);
void caddy_parser_free(caddy_parser *p);

/* Parses one JSON access log entry. Returns 0, or -1 with the reason. */
int caddy_parse(caddy_parser *p, const char *line, size_t len, log_record *rec, char *err,
                size_t errlen);

/* --- log_parse.c -------------------------------------------------------- */

typedef struct log_parser log_parser;

/* `format`: NULL (auto), "nginx-combined", "caddy-json", or an nginx
 * log_format template (anything with a '$'). Returns 0, or -1 with a
 * message in err (an unknown name, a bad template). */
int log_parser_new(const char *format, log_parser **out, char *err, size_t errlen);
void log_parser_free(log_parser *p);

/* Parses one line, choosing the format on the first call when it is
 * auto: '{' first is caddy-json, anything else nginx-combined. */
int log_parser_parse(log_parser *p, char *line, size_t len, log_record *rec, char *err,
                     size_t errlen);

/* "nginx-combined", "nginx template", "caddy-json"; "auto" before the
 * first line. */
const char *log_parser_format_name(const log_parser *p);

/* Splits a logged request line "METHOD TARGET[ PROTOCOL]" (the protocol
 * is absent for HTTP/0.9) into rec's method, target, path and query.
 * Returns 0, or -1 with the reason. For both parsers. */
int log_split_request(log_record *rec, const char *s, size_t n, char *err, size_t errlen);
/* Sets rec's path and query from a logged request target. */
int log_split_target(log_record *rec, const char *s, size_t n, char *err, size_t errlen);

/* s[0..n) for a message, quoted bytes outside printable ASCII (and ')
 * as \xHH, cut at 80 bytes with "...": a log line is anybody's bytes. */
void log_quote(char *buf, size_t size, const char *s, size_t n);

/* Adds a header, or returns -1 when LOG_MAX_HEADERS are there. */
int log_add_header(log_record *rec, const char *name, size_t nlen, const char *value,
                   size_t vlen);

/* Empties rec for the next line. */
void log_record_clear(log_record *rec);

/* How classify-run hands a record to a context: the client address as
 * the peer (`fallback_peer`, --remote-addr, when the line has none),
 * `rdns` as clf_ctx_set_rdns (NULL: unknown), the request line, every
 * header; then evaluates `filter`, with `explain` when not NULL. Returns
 * 0, or -1 with the reason in err (a client address that is no address,
 * a header over the library's limits, clf_eval failing). */
int log_record_classify(clf_ctx *ctx, uint32_t filter, const log_record *rec,
                        const char *fallback_peer, const char *rdns, explain_log *explain,
                        clf_verdict *v, char *err, size_t errlen);

#endif
