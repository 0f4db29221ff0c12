/*
 * log_parse.c: which log format a line is in, and what the formats share:
 * the request line, the request target, headers, and how a record is
 * classified (log_record.h).
 */
#include "log_record.h"

#include "classify_req.h"
#include "http_head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct log_parser {
    log_format_kind kind;
    int template_given; /* nginx with the user's template */
    nginx_format *nginx;
    caddy_parser *caddy;
};

static const char empty[] = "";

void log_record_clear(log_record *rec)
{
    http_slice e = {empty, 0};
    rec->method = rec->target = rec->path = rec->query = rec->client = rec->ua = e;
    rec->nheaders = 0;
}

int log_add_header(log_record *rec, const char *name, size_t nlen, const char *value,
                   size_t vlen)
{
    if (rec->nheaders == LOG_MAX_HEADERS)
        return -1;
    http_header *h = &rec->headers[rec->nheaders++];
    h->name.ptr = name;
    h->name.len = nlen;
    h->value.ptr = value ? value : empty;
    h->value.len = vlen;
    return 0;
}

void log_quote(char *buf, size_t size, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (o + 8 >= size || i == 80) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (c < 0x20 || c >= 0x7f || c == '\'')
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        else
            buf[o++] = (char)c;
    }
    buf[o] = '\0';
}

int log_split_target(log_record *rec, const char *s, size_t n, char *err, size_t errlen)
{
    const char *path, *query;
    size_t plen, qlen;
    if (n == 0 || cm_http_split_target(s, n, &path, &plen, &query, &qlen) != 0) {
        char q[128];
        log_quote(q, sizeof q, s, n);
        snprintf(err, errlen, "the request target '%s' is not one of HTTP's forms", q);
        return -1;
    }
    rec->target.ptr = s;
    rec->target.len = n;
    rec->path.ptr = path;
    rec->path.len = plen;
    rec->query.ptr = query ? query : empty;
    rec->query.len = qlen;
    return 0;
}

int log_split_request(log_record *rec, const char *s, size_t n, char *err, size_t errlen)
{
    const char *sp = memchr(s, ' ', n);
    if (sp == NULL || sp == s) {
        char q[128];
        log_quote(q, sizeof q, s, n);
        snprintf(err, errlen, "the request line '%s' is not METHOD TARGET PROTOCOL", q);
        return -1;
    }
    rec->method.ptr = s;
    rec->method.len = (size_t)(sp - s);
    const char *t = sp + 1, *end = s + n;
    /* The protocol is the last word when it is one; a target with a
     * space in it (nginx logs what the client sent) keeps it. */
    const char *last = end;
    while (last > t && last[-1] != ' ')
        last--;
    if (last > t && end - last >= 5 && memcmp(last, "HTTP/", 5) == 0)
        end = last - 1;
    return log_split_target(rec, t, (size_t)(end - t), err, errlen);
}

int log_parser_new(const char *format, log_parser **out, char *err, size_t errlen)
{
    log_parser *p = calloc(1, sizeof *p);
    *out = NULL;
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *tmpl = NULL;
    if (format == NULL) {
        p->kind = LOG_FORMAT_AUTO;
    } else if (strcmp(format, "nginx-combined") == 0) {
        p->kind = LOG_FORMAT_NGINX;
        tmpl = LOG_NGINX_COMBINED;
    } else if (strcmp(format, "caddy-json") == 0) {
        p->kind = LOG_FORMAT_CADDY;
    } else if (strchr(format, '$') != NULL) {
        p->kind = LOG_FORMAT_NGINX;
        p->template_given = 1;
        tmpl = format;
    } else {
        snprintf(err, errlen, "--log-format: '%.80s' is none of nginx-combined, caddy-json, "
                 "or an nginx log_format template ($remote_addr ... \"$request\" ...)", format);
        free(p);
        return -1;
    }
    if ((tmpl && nginx_format_new(tmpl, &p->nginx, err, errlen) != 0) ||
        (p->kind == LOG_FORMAT_CADDY && caddy_parser_new(&p->caddy) != 0)) {
        if (p->kind == LOG_FORMAT_CADDY)
            snprintf(err, errlen, "out of memory");
        log_parser_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

void log_parser_free(log_parser *p)
{
    if (p == NULL)
        return;
    nginx_format_free(p->nginx);
    caddy_parser_free(p->caddy);
    free(p);
}

const char *log_parser_format_name(const log_parser *p)
{
    if (p == NULL) /* request files, not a log */
        return "request files";
    switch (p->kind) {
    case LOG_FORMAT_NGINX: return p->template_given ? "nginx template" : "nginx-combined";
    case LOG_FORMAT_CADDY: return "caddy-json";
    default: return "auto";
    }
}

int log_parser_parse(log_parser *p, char *line, size_t len, log_record *rec, char *err,
                     size_t errlen)
{
    if (p->kind == LOG_FORMAT_AUTO) {
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        int caddy = i < len && line[i] == '{';
        int rc = caddy ? caddy_parser_new(&p->caddy)
                       : nginx_format_new(LOG_NGINX_COMBINED, &p->nginx, err, errlen);
        if (rc != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        p->kind = caddy ? LOG_FORMAT_CADDY : LOG_FORMAT_NGINX;
    }
    log_record_clear(rec);
    if (p->kind == LOG_FORMAT_CADDY)
        return caddy_parse(p->caddy, line, len, rec, err, errlen);
    return nginx_parse(p->nginx, line, len, rec, err, errlen);
}

int log_record_classify(clf_ctx *ctx, uint32_t filter, const log_record *rec,
                        const char *fallback_peer, const char *rdns, explain_log *explain,
                        clf_verdict *v, char *err, size_t errlen)
{
    cli_request r = {rec->method, rec->path, rec->query, rec->headers, rec->nheaders,
                     fallback_peer, fallback_peer ? strlen(fallback_peer) : 0, rdns,
                     0, 0, NULL, 0}; /* the clock, no scheme: a log line has neither */
    if (rec->client.len > 0) {
        r.peer = rec->client.ptr;
        r.peer_len = rec->client.len;
    }
    return cli_classify(ctx, filter, &r, explain, v, err, errlen);
}
