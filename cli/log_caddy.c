/*
 * log_caddy.c: Caddy's JSON access log (log_record.h), one object per
 * line as its "http.log.access" logger writes it:
 *
 *   {"level":"info","ts":...,"logger":"http.log.access.log0","msg":"handled request",
 *    "request":{"remote_ip":"127.0.0.1","remote_port":"50412","client_ip":"127.0.0.1",
 *               "proto":"HTTP/1.1","method":"GET","host":"example.org","uri":"/a?b=1",
 *               "headers":{"User-Agent":["curl/7.88.1"],"Accept-Language":["en"]}},
 *    "status":200,...}
 *
 * It logs every request header (each name with the list of its values;
 * Go keeps Host apart, so "host" becomes the Host header). The peer is
 * remote_ip, the TCP client, as --remote-addr is: with --trust-proxy the
 * rules derive the client from the logged X-Forwarded-For as a server
 * would. (client_ip, Caddy 2.7 on, is that derivation by Caddy's own
 * trusted_proxies: used only when remote_ip is missing.)
 *
 * jansson allocates every value it parses. So that a line costs no
 * malloc, its allocator is pointed at this parser's arena for the parse
 * and set back after: a bump allocator over ARENA_BYTES, emptied before
 * each line, whose free() does nothing. A line too big for the arena
 * fails as out of memory and counts as malformed. The functions are
 * process-wide, hence put back at once: other users of jansson in the
 * process keep their own.
 */
#include "log_record.h"

#include <jansson.h>

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A LOG_MAX_LINE line of short JSON strings needs several times its size
 * in jansson's values and hash tables. */
#define ARENA_BYTES ((size_t)4 << 20)

struct caddy_parser {
    char *arena;
    size_t used;
};

/* The arena being parsed into; set only during caddy_parse. */
static struct caddy_parser *current;

static void *arena_alloc(size_t n)
{
    struct caddy_parser *p = current;
    if (p == NULL)
        return NULL;
    size_t a = alignof(max_align_t);
    size_t start = (p->used + a - 1) / a * a;
    if (start > ARENA_BYTES || n > ARENA_BYTES - start)
        return NULL;
    p->used = start + n;
    return p->arena + start;
}

static void arena_free(void *ptr)
{
    (void)ptr; /* the whole arena is emptied before the next line */
}

int caddy_parser_new(caddy_parser **out)
{
    caddy_parser *p = calloc(1, sizeof *p);
    *out = NULL;
    if (p == NULL || (p->arena = malloc(ARENA_BYTES)) == NULL) {
        free(p);
        return -1;
    }
    *out = p;
    return 0;
}

void caddy_parser_free(caddy_parser *p)
{
    if (p == NULL)
        return;
    free(p->arena);
    free(p);
}

/* The string member `key` of obj, or an empty slice. */
static http_slice str_member(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    http_slice s = {"", 0};
    if (json_is_string(v)) {
        s.ptr = json_string_value(v);
        s.len = json_string_length(v);
    }
    return s;
}

/* Fills rec from the parsed entry; the strings stay in the arena. */
static int fill(json_t *root, log_record *rec, char *err, size_t errlen)
{
    json_t *req = json_object_get(root, "request");
    if (!json_is_object(req)) {
        snprintf(err, errlen, "no \"request\" object: not an access log entry");
        return -1;
    }
    http_slice method = str_member(req, "method"), uri = str_member(req, "uri");
    if (method.len == 0 || uri.len == 0) {
        snprintf(err, errlen, "the request has no \"method\" or \"uri\"");
        return -1;
    }
    rec->method = method;
    if (log_split_target(rec, uri.ptr, uri.len, err, errlen) != 0)
        return -1;
    rec->client = str_member(req, "remote_ip");
    if (rec->client.len == 0)
        rec->client = str_member(req, "client_ip");
    http_slice host = str_member(req, "host");
    if (host.len > 0)
        log_add_header(rec, "Host", 4, host.ptr, host.len);
    json_t *headers = json_object_get(req, "headers");
    const char *name;
    json_t *values;
    json_object_foreach(headers, name, values) {
        size_t nlen = strlen(name), i;
        json_t *value;
        if (nlen == 0) { /* not a header Caddy could have seen */
            snprintf(err, errlen, "a header with an empty name");
            return -1;
        }
        if (!json_is_array(values)) {
            snprintf(err, errlen, "header %.64s is not a list of strings", name);
            return -1;
        }
        json_array_foreach(values, i, value) {
            if (!json_is_string(value)) {
                snprintf(err, errlen, "header %.64s is not a list of strings", name);
                return -1;
            }
            if (log_add_header(rec, name, nlen, json_string_value(value),
                               json_string_length(value)) != 0) {
                snprintf(err, errlen, "more than %d headers", LOG_MAX_HEADERS);
                return -1;
            }
            if (rec->ua.len == 0 && nlen == 10 && strcasecmp(name, "user-agent") == 0) {
                rec->ua.ptr = json_string_value(value);
                rec->ua.len = json_string_length(value);
            }
        }
    }
    return 0;
}

int caddy_parse(caddy_parser *p, const char *line, size_t len, log_record *rec, char *err,
                size_t errlen)
{
    json_malloc_t old_malloc;
    json_free_t old_free;
    json_get_alloc_funcs(&old_malloc, &old_free);
    p->used = 0;
    current = p;
    json_set_alloc_funcs(arena_alloc, arena_free);
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    int rc = -1;
    if (root == NULL)
        snprintf(err, errlen, "not JSON: %s at column %d", jerr.text, jerr.column);
    else if (!json_is_object(root))
        snprintf(err, errlen, "not a JSON object");
    else
        rc = fill(root, rec, err, errlen);
    /* The record's strings stay in the arena: only the reference goes,
     * and freeing in the arena does nothing. */
    json_decref(root);
    json_set_alloc_funcs(old_malloc, old_free);
    current = NULL;
    return rc;
}
