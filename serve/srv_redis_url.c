/*
 * srv_redis_url.c: parsing --state-redis URLs (srv_redis_url.h).
 */
#include "srv_redis_url.h"

#include "hex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, size_t at, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return -1;
    int n = snprintf(err, errlen, "at byte %zu: ", at + 1);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Decimal digits in s[*i..end) into *out, at most `max`; at least one. */
static int number(const char *s, size_t *i, size_t end, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;
    size_t start = *i;
    while (*i < end && s[*i] >= '0' && s[*i] <= '9') {
        v = v * 10 + (unsigned long)(s[*i] - '0');
        if (v > max)
            return -1;
        (*i)++;
    }
    *out = v;
    return *i > start ? 0 : -1;
}

/* Percent-decodes s[from..to) into out (cap bytes with the NUL). Control
 * characters and NUL, raw or encoded, are refused: a credential is sent
 * as a command argument and printed nowhere. */
static int decode(const char *s, size_t from, size_t to, char *out, size_t cap,
                  const char *what, char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < to ? cm_hex_value((unsigned char)s[i + 1]) : -1;
            int lo = hi >= 0 ? cm_hex_value((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return fail(err, errlen, i, "'%%' in the %s is not followed by two hex digits",
                            what);
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        if (c < 0x20 || c == 0x7f)
            return fail(err, errlen, i, "a control character in the %s", what);
        if (n + 1 >= cap)
            return fail(err, errlen, i, "the %s is longer than %zu bytes", what, cap - 1);
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return 0;
}

/* USER:PASSWORD@ (or :PASSWORD@, or PASSWORD-less USER@, which is
 * refused: Redis has no user without a password) before `end`. */
static int userinfo(const char *s, size_t from, size_t at, srv_redis_url *u, char *err,
                    size_t errlen)
{
    const char *colon = memchr(s + from, ':', at - from);
    if (colon == NULL)
        return fail(err, errlen, from, "a user without a password: write USER:PASSWORD@ or "
                                       ":PASSWORD@");
    size_t c = (size_t)(colon - s);
    if (decode(s, from, c, u->user, sizeof u->user, "user", err, errlen) != 0 ||
        decode(s, c + 1, at, u->password, sizeof u->password, "password", err, errlen) != 0)
        return -1;
    u->has_password = 1;
    return 0;
}

static int host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_';
}

static int parse_tcp(const char *s, size_t i, srv_redis_url *u, char *err, size_t errlen)
{
    size_t len = strlen(s);
    size_t end = i; /* the authority ends at '/' (or the end) */
    while (end < len && s[end] != '/' && s[end] != '?' && s[end] != '#')
        end++;
    if (end < len && s[end] != '/')
        return fail(err, errlen, end, "'%c' after the address: only /DB may follow", s[end]);
    const char *at = NULL;
    for (size_t k = i; k < end; k++)
        if (s[k] == '@')
            at = s + k;
    if (at != NULL) {
        if (userinfo(s, i, (size_t)(at - s), u, err, errlen) != 0)
            return -1;
        i = (size_t)(at - s) + 1;
    }
    size_t hs = i, he;
    if (i < end && s[i] == '[') {
        i++;
        hs = i;
        while (i < end && (cm_hex_value((unsigned char)s[i]) >= 0 || s[i] == ':' || s[i] == '.'))
            i++;
        if (i >= end || s[i] != ']')
            return fail(err, errlen, i, "an IPv6 address in brackets must end with ']'");
        he = i++;
        if (he == hs)
            return fail(err, errlen, he, "empty brackets");
    } else {
        while (i < end && host_char(s[i]))
            i++;
        he = i;
        if (he == hs)
            return fail(err, errlen, i, "no host");
    }
    if (he - hs > SRV_REDIS_HOST_MAX)
        return fail(err, errlen, hs, "the host is longer than %d bytes", SRV_REDIS_HOST_MAX);
    memcpy(u->host, s + hs, he - hs);
    u->host[he - hs] = '\0';
    if (i < end && s[i] == ':') {
        unsigned long port;
        size_t ps = ++i;
        if (number(s, &i, end, 65535, &port) != 0 || port == 0)
            return fail(err, errlen, ps, "the port is not a number from 1 to 65535");
        u->port = (unsigned)port;
    }
    if (i < end)
        return fail(err, errlen, i, "unexpected '%c' in the host", s[i]);
    if (end < len) { /* '/' */
        unsigned long db;
        i = end + 1;
        if (i < len) {
            if (number(s, &i, len, 2147483647ul, &db) != 0 || i != len)
                return fail(err, errlen, i, "the database is not a number (redis://HOST:PORT/DB)");
            u->db = (unsigned)db;
        }
    }
    return 0;
}

static int parse_unix(const char *s, size_t i, int slashes, srv_redis_url *u, char *err,
                      size_t errlen)
{
    size_t len = strlen(s);
    size_t end = i;
    while (end < len && s[end] != '?')
        end++;
    if (slashes) {
        /* userinfo comes before the path, which starts with '/' (and may
         * hold '@' itself) */
        const char *at = i < end && s[i] != '/' ? memchr(s + i, '@', end - i) : NULL;
        if (at != NULL) {
            if (userinfo(s, i, (size_t)(at - s), u, err, errlen) != 0)
                return -1;
            i = (size_t)(at - s) + 1;
        }
        if (i >= end || s[i] != '/')
            return fail(err, errlen, i, "unix:// takes an absolute path (unix:///run/redis.sock)");
    }
    if (i >= end)
        return fail(err, errlen, i, "no socket path");
    if (end - i > SRV_REDIS_PATH_MAX)
        return fail(err, errlen, i, "the socket path is longer than %d bytes", SRV_REDIS_PATH_MAX);
    for (size_t k = i; k < end; k++)
        if ((unsigned char)s[k] < 0x20 || s[k] == 0x7f)
            return fail(err, errlen, k, "a control character in the socket path");
    memcpy(u->path, s + i, end - i);
    u->path[end - i] = '\0';
    if (end < len) {
        i = end + 1;
        unsigned long db;
        if (strncmp(s + i, "db=", 3) != 0)
            return fail(err, errlen, i, "the only parameter is db=N");
        i += 3;
        if (number(s, &i, len, 2147483647ul, &db) != 0 || i != len)
            return fail(err, errlen, i, "db= is not a number");
        u->db = (unsigned)db;
    }
    return 0;
}

int srv_redis_url_parse(const char *s, srv_redis_url *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    u->port = SRV_REDIS_DEFAULT_PORT;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (strncmp(s, "redis://", 8) == 0)
        return parse_tcp(s, 8, u, err, errlen);
    if (strncmp(s, "unix://", 7) == 0) {
        u->is_unix = 1;
        return parse_unix(s, 7, 1, u, err, errlen);
    }
    if (strncmp(s, "unix:", 5) == 0) {
        u->is_unix = 1;
        return parse_unix(s, 5, 0, u, err, errlen);
    }
    if (strncmp(s, "rediss://", 9) == 0)
        return fail(err, errlen, 0, "rediss:// (TLS) is not supported: hiredis 0.14 has no TLS; "
                                    "use a local stunnel or a unix socket");
    return fail(err, errlen, 0, "expected redis://HOST[:PORT][/DB] or unix:PATH");
}

void srv_redis_url_name(const srv_redis_url *u, char *out, size_t n)
{
    if (n == 0)
        return;
    if (u->is_unix)
        snprintf(out, n, "unix:%s?db=%u", u->path, u->db);
    else if (strchr(u->host, ':') != NULL)
        snprintf(out, n, "redis://[%s]:%u/%u", u->host, u->port, u->db);
    else
        snprintf(out, n, "redis://%s:%u/%u", u->host, u->port, u->db);
}
