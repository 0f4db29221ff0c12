/*
 * srv_redis_url.h: the address given to --state-redis
 * (docs/classify-serve.md, "Shared state through Redis"):
 *
 *   redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]
 *   unix:PATH[?db=DB]   or   unix://[[USER]:PASSWORD@]PATH[?db=DB]
 *
 * HOST is a name, an IPv4 address or [IPV6]; PORT defaults to 6379, DB to
 * 0. USER and PASSWORD may be percent-encoded (%40 for '@'); with only a
 * password, the connection says AUTH PASSWORD, with both AUTH USER
 * PASSWORD (Redis 6 ACLs). rediss:// (TLS) is refused: Debian's hiredis
 * 0.14 has no TLS. The parser reads outside input (the command line, a
 * config file) and says where it stopped and why; fuzz/fuzz_redis.c runs
 * it.
 */
#ifndef CLI_SRV_REDIS_URL_H
#define CLI_SRV_REDIS_URL_H

#include <stddef.h>

#define SRV_REDIS_HOST_MAX 255
#define SRV_REDIS_PATH_MAX 107 /* sun_path holds 108 bytes with the NUL */
#define SRV_REDIS_CRED_MAX 255
#define SRV_REDIS_DEFAULT_PORT 6379

typedef struct srv_redis_url {
    int is_unix;
    char host[SRV_REDIS_HOST_MAX + 1]; /* TCP: without brackets */
    unsigned port;
    char path[SRV_REDIS_PATH_MAX + 1]; /* unix: the socket */
    unsigned db;
    char user[SRV_REDIS_CRED_MAX + 1];     /* "" without */
    char password[SRV_REDIS_CRED_MAX + 1]; /* "" without: no AUTH */
    int has_password;
} srv_redis_url;

/* Parses `s` (NUL-terminated) into *u. Returns 0, or -1 with a message in
 * err ("at byte N: ..."; err may be NULL). */
int srv_redis_url_parse(const char *s, srv_redis_url *u, char *err, size_t errlen);

/* The address for log lines and /metrics, never the password:
 * "redis://HOST:PORT/DB" or "unix:PATH?db=DB". Always NUL-terminated. */
void srv_redis_url_name(const srv_redis_url *u, char *out, size_t n);

#endif /* CLI_SRV_REDIS_URL_H */
