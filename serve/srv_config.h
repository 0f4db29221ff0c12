/*
 * srv_config.h: classify-serve's settings, from the command line and an
 * optional config file (the same long option names, one per line).
 */
#ifndef CLI_SRV_CONFIG_H
#define CLI_SRV_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* What a listener speaks (docs/classify-serve.md, "Protocols"). */
typedef enum srv_proto {
    SRV_PASS_THROUGH = 0, /* the proxy forwards the request: 421 = accept */
    SRV_FORWARD_AUTH = 1, /* the proxy asks about a request: 200 = accept */
    SRV_ADMIN = 2,        /* /metrics and /healthz only */
    SRV_SPOA = 3          /* HAProxy's SPOE filter: SPOP, not HTTP (srv_spoa.h) */
} srv_proto;

const char *srv_proto_name(srv_proto p);

/* The proxy in front of a forward-auth listener, which decides which two
 * headers carry the client's method and URI (docs/classify-serve.md,
 * "Forward-auth"). Only headers that proxy sets itself, replacing any the
 * client sent, may say what is classified: every proxy passes the
 * client's other headers on, so any other forwarding header may be the
 * client's own. Names are compared ignoring ASCII case. */
typedef struct srv_auth_proxy {
    const char *name;       /* as written before '=' in --listen-auth */
    const char *method_hdr; /* e.g. "X-Original-Method" */
    const char *uri_hdr;    /* e.g. "X-Original-URI" */
} srv_auth_proxy;

/* The proxies --listen-auth knows, NULL-name terminated. */
extern const srv_auth_proxy srv_auth_proxies[];

typedef struct srv_listen_cfg {
    srv_proto proto;
    char *addr; /* as given: HOST:PORT, [V6]:PORT or unix:PATH */
    const srv_auth_proxy *auth; /* forward-auth: its proxy; else NULL */
} srv_listen_cfg;

/* What happens when classification itself fails (never for bad input:
 * that gets 400 or 431). */
typedef enum srv_on_error { SRV_ON_ERROR_ACCEPT = 0, SRV_ON_ERROR_REJECT = 1 } srv_on_error;

typedef struct srv_config {
    char *rules_path;
    srv_listen_cfg *listens;
    size_t listen_count;
    char *trusted_proxies; /* the --trust-proxy values joined with ',' */
    char *ipdb_paths;      /* the --ipdb files joined with '\n' (paths may hold commas) */
    char *keys_path;       /* --keys: a JWK Set file or a directory of them */
    unsigned threads;      /* 0: one per online CPU */

    unsigned reject_status;    /* pass-through reject (default 403) */
    char *reject_body;         /* --reject-body TEXT */
    char *reject_file;         /* --reject-file PATH (wins over the body) */
    char *reject_content_type; /* NULL: from the file's extension, or text/plain */
    unsigned auth_accept_status; /* forward-auth (default 200) */
    unsigned auth_reject_status; /* forward-auth (default 403) */
    srv_on_error on_error;

    size_t max_header_bytes;  /* request line + header section; an SPOA frame */
    unsigned max_headers;
    unsigned max_connections; /* all listeners, all threads */
    uint64_t request_timeout_ms;
    uint64_t keepalive_timeout_ms;
    uint64_t shutdown_timeout_ms;
    uint64_t watch_interval_ms; /* 0: do not watch the rules file */
    char *access_log;           /* NULL: off; "-": standard output */

    /* Reverse DNS (docs/classify-serve.md, "Reverse DNS"). */
    int rdns_off;             /* --rdns off: never resolve */
    char *resolver;           /* NULL: the system's (/etc/resolv.conf) */
    size_t rdns_cache;        /* entries */
    uint64_t rdns_min_ttl_ms; /* TTL clamps */
    uint64_t rdns_max_ttl_ms;
    uint64_t rdns_timeout_ms; /* per query and try */
    /* Sharing the state store through Redis (docs/classify-serve.md,
     * "Shared state through Redis"). */
    char *state_redis;            /* --state-redis URL; NULL: this instance alone */
    char *state_redis_prefix;     /* before every Redis key (default "clf:") */
    uint64_t state_sync_ms;       /* --state-sync-interval */
    uint64_t state_redis_timeout_ms;
    int check_only;             /* --check: load everything, then exit */
    uint64_t state_bytes;       /* --state-bytes: the state store's memory (0: none) */
} srv_config;

typedef enum srv_args_result {
    SRV_ARGS_RUN,
    SRV_ARGS_HELP,
    SRV_ARGS_VERSION,
    SRV_ARGS_BAD /* a message was printed */
} srv_args_result;

/* Fills `cfg` with the defaults, then reads argv (and any --config file at
 * the place it is named). Prints usage errors to stderr. */
srv_args_result srv_config_parse(srv_config *cfg, int argc, char **argv);

void srv_config_free(srv_config *cfg);

/* The --help text (docs/classify-serve.md has the same options), in
 * parts to print one after the other; NULL ends them. */
extern const char *const srv_usage_text[];

#endif /* CLI_SRV_CONFIG_H */
