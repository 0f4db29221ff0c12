/*
 * srv_config.c: classify-serve's options. Every option is a long option
 * taking one value (except the few flags below), so a config file is just
 * "NAME VALUE" lines with the same names: one table serves both.
 */
#include "classify.h"
#include "srv_config.h"
#include "size_arg.h"
#include "srv_redis_url.h"
#include "usage_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "classify-serve"

/* In parts: C11 promises string literals of 4,095 bytes only. */
const char *const srv_usage_text[] = {
    "Usage: " PROG " RULES.bin [--listen ADDR]... [OPTION]...\n"
    "       " PROG " --config FILE [OPTION]...\n"
    "A decision service for reverse proxies: classifies each request with a\n"
    "rules file compiled by classifyc and answers accept or reject.\n"
    "\n"
    "Listeners (each repeatable; at least one of --listen, --listen-auth,\n"
    "--listen-spoa):\n"
    "  --listen ADDR            pass-through: the proxy forwards the request;\n"
    "                           accept = 421 with an empty body, reject =\n"
    "                           --reject-status with the reject body\n"
    "  --listen-auth PROXY=ADDR forward-auth behind PROXY, which decides the\n"
    "                           headers read for the client's method and URI:\n"
    "                           nginx (auth_request): X-Original-Method and\n"
    "                           X-Original-URI; caddy (forward_auth), traefik\n"
    "                           (forwardAuth), haproxy (the Lua action):\n"
    "                           X-Forwarded-Method and X-Forwarded-Uri;\n"
    "                           accept = --auth-accept-status,\n"
    "                           reject = --auth-reject-status\n"
    "  --listen-spoa ADDR       an agent for HAProxy's SPOE filter (SPOP 2.0):\n"
    "                           reads the message arguments method, path,\n"
    "                           query, headers (req.hdrs_bin) and src, and\n"
    "                           sets txn.PREFIX.verdict (accept or reject)\n"
    "                           and txn.PREFIX.reason\n"
    "  --listen-admin ADDR      GET /metrics (Prometheus) and GET /healthz\n"
    "  ADDR is HOST:PORT, [IPV6]:PORT or unix:PATH.\n"
    "\n"
    "Classification:\n"
    "  --trust-proxy CIDR       a proxy trusted to report the client address\n"
    "                           (X-Forwarded-For, X-Real-IP); repeatable\n"
    "  --ipdb FILE              a MaxMind database (ASN, country) for ip.asn(),\n"
    "                           ip.asn_org(), ip.country(); repeatable, up to 4;\n"
    "                           opened again at each reload\n"
    "  --keys PATH              verify HTTP Message Signatures (Web Bot Auth)\n"
    "                           with the JWK Set in PATH, or each *.json set\n"
    "                           in directory PATH; re-read with the rules\n"
    "  --threads N              worker threads, each with its own context\n"
    "                           (default: one per CPU)\n"
    "  --on-error accept|reject verdict when classification fails (default\n"
    "                           accept)\n"
    "  --state-bytes N          memory of the store behind the rules' count(),\n"
    "                           score() and mark(), shared by every thread and\n"
    "                           kept across reloads (K, M, G; at least 64K; 0:\n"
    "                           none; default 64M, made only when rules use\n"
    "                           state; docs/state.md)\n",
    "Reverse DNS (only for rules that read req.rdns or req.rdns_checked; a\n"
    "request never waits: until the answer is in, req.rdns_checked is false):\n"
    "  --rdns on|off            resolve the client address, forward-confirmed\n"
    "                           (default on)\n"
    "  --resolver ADDR[:PORT]   the DNS server ([IPV6]:PORT; several separated\n"
    "                           by commas; default: /etc/resolv.conf's)\n"
    "  --rdns-cache N           answers kept, least recently used dropped first\n"
    "                           (default 10000)\n"
    "  --rdns-min-ttl SEC       shortest time an answer is kept (default 60)\n"
    "  --rdns-max-ttl SEC       longest, whatever its TTL (default 3600)\n"
    "  --rdns-timeout SEC       wait for each query (default 2); each is sent\n"
    "                           twice, the second time waiting twice as long\n"
    "Shared state (a request never waits for Redis):\n"
    "  --state-redis URL        share the store's counters, scores and marks\n"
    "                           with every instance using the same\n"
    "                           Redis: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]\n"
    "                           or unix:PATH[?db=N] (default: this instance alone)\n"
    "  --state-sync-interval SEC  send this instance's changes and merge the\n"
    "                           fleet's counts every SEC seconds (default 1)\n"
    "  --state-redis-timeout SEC  a connection or a reply slower than this is\n"
    "                           Redis unreachable (default 2)\n"
    "  --state-redis-prefix P   before every Redis key (default clf:)\n"
    "Answers:\n"
    "  --reject-status CODE     pass-through reject status (default 403)\n"
    "  --reject-body TEXT       reject body (default \"Forbidden\\n\")\n"
    "  --reject-file FILE       reject body read from FILE at start-up\n"
    "  --reject-content-type T  (default: text/html for .html/.htm files,\n"
    "                           else text/plain; charset=utf-8)\n"
    "  --auth-accept-status CODE  forward-auth accept (default 200)\n"
    "  --auth-reject-status CODE  forward-auth reject (default 403)\n"
    "Limits:\n"
    "  --max-header-bytes N     request line + headers (default 32768; 431);\n"
    "                           also the SPOA max-frame-size\n"
    "  --max-headers N          header lines (default 100; 431)\n"
    "  --max-connections N      open connections, all listeners (default 4096)\n"
    "  --request-timeout SEC    to receive a whole request (default 10; 408)\n"
    "  --keepalive-timeout SEC  idle connection lifetime (default 300)\n"
    "  --shutdown-timeout SEC   grace period after SIGTERM (default 10)\n"
    "Operations:\n"
    "  --watch-interval SEC     reload when RULES.bin changes, checked every\n"
    "                           SEC seconds (default 1; 0 = only on SIGHUP)\n"
    "  --access-log FILE        JSON lines, one per request ('-' = stdout;\n"
    "                           default off); reopened on SIGHUP\n"
    "  --config FILE            read options from FILE: one 'NAME VALUE' per\n"
    "                           line, NAME a long option without '--', plus\n"
    "                           'rules FILE'; '#' starts a comment\n"
    "  --check                  run every check of a start (config, rules,\n"
    "                           listener addresses, access log, resolver) short of\n"
    "                           binding, print 'RULES: ok', exit\n"
    "  --help, --version\n"
    "\n"
    "Signals: SIGHUP reloads RULES.bin (a bad file is refused and the old\n"
    "rules keep serving) and reopens the access log; SIGTERM or SIGINT stop\n"
    "accepting, finish the requests in flight, then exit 0.\n"
    "Every answer carries X-Classify-Verdict (accept or reject) and\n"
    "X-Classify-Reason. Errors: 400 malformed, 408 too slow, 431 too large.\n",
    NULL,
};

/* What each proxy sets itself (its documentation, and the recipes the
 * tests run): nginx's auth_request sets nothing, so the recipe sets
 * X-Original-*; Caddy's forward_auth and Traefik's forwardAuth set
 * X-Forwarded-Method and X-Forwarded-Uri, replacing the client's; the
 * HAProxy recipe's Lua action sets the same two. */
const srv_auth_proxy srv_auth_proxies[] = {
    {"nginx", "X-Original-Method", "X-Original-URI"},
    {"caddy", "X-Forwarded-Method", "X-Forwarded-Uri"},
    {"traefik", "X-Forwarded-Method", "X-Forwarded-Uri"},
    {"haproxy", "X-Forwarded-Method", "X-Forwarded-Uri"},
    {NULL, NULL, NULL},
};

const char *srv_proto_name(srv_proto p)
{
    switch (p) {
    case SRV_PASS_THROUGH: return "pass-through";
    case SRV_FORWARD_AUTH: return "forward-auth";
    case SRV_ADMIN: return "admin";
    case SRV_SPOA: return "spoa";
    }
    return "?";
}

/* ------------------------------------------------------------------------ */
/* The option table. */

typedef enum opt_kind {
    K_STRING,  /* char * field, replaced */
    K_UINT,    /* unsigned field, within [min, max] */
    K_SIZE,    /* size_t field, within [min, max] */
    K_SECONDS, /* uint64_t milliseconds; the value is seconds, may be fractional */
    K_LISTEN,  /* appended to listens, with proto */
    K_TRUST,   /* appended to trusted_proxies */
    K_IPDB,    /* appended to ipdb_paths (at most 4) */
    K_STATUS,  /* unsigned HTTP status 200..599 */
    K_ON_ERROR,
    K_OFF,     /* int field: 1 for "off", 0 for "on" */
    K_CONFIG,
    K_FLAG,
    K_BYTES,   /* uint64_t bytes, with K/M/G (cm_parse_bytes): 0, or within [min, max] */
    K_REDIS    /* char * field: a --state-redis URL, checked */
} opt_kind;

typedef struct opt_def {
    const char *name;
    opt_kind kind;
    size_t offset;
    unsigned long long min, max; /* K_UINT, K_SIZE, K_SECONDS (ms) */
    srv_proto proto;             /* K_LISTEN */
} opt_def;

#define F(field) offsetof(srv_config, field)

static const opt_def opts[] = {
    {"listen", K_LISTEN, 0, 0, 0, SRV_PASS_THROUGH},
    {"listen-auth", K_LISTEN, 0, 0, 0, SRV_FORWARD_AUTH},
    {"listen-admin", K_LISTEN, 0, 0, 0, SRV_ADMIN},
    {"listen-spoa", K_LISTEN, 0, 0, 0, SRV_SPOA},
    {"rules", K_STRING, F(rules_path), 0, 0, 0},
    {"trust-proxy", K_TRUST, 0, 0, 0, 0},
    {"ipdb", K_IPDB, 0, 0, 0, 0},
    {"keys", K_STRING, F(keys_path), 0, 0, 0},
    {"threads", K_UINT, F(threads), 1, 256, 0},
    {"on-error", K_ON_ERROR, F(on_error), 0, 0, 0},
    {"reject-status", K_STATUS, F(reject_status), 0, 0, 0},
    {"reject-body", K_STRING, F(reject_body), 0, 0, 0},
    {"reject-file", K_STRING, F(reject_file), 0, 0, 0},
    {"reject-content-type", K_STRING, F(reject_content_type), 0, 0, 0},
    {"auth-accept-status", K_STATUS, F(auth_accept_status), 0, 0, 0},
    {"auth-reject-status", K_STATUS, F(auth_reject_status), 0, 0, 0},
    {"max-header-bytes", K_SIZE, F(max_header_bytes), 1024, 1u << 20, 0},
    {"max-headers", K_UINT, F(max_headers), 1, CLF_DEFAULT_HEADERS, 0},
    {"max-connections", K_UINT, F(max_connections), 1, 1000000, 0},
    {"request-timeout", K_SECONDS, F(request_timeout_ms), 1, 3600000, 0},
    {"keepalive-timeout", K_SECONDS, F(keepalive_timeout_ms), 1, 86400000, 0},
    {"shutdown-timeout", K_SECONDS, F(shutdown_timeout_ms), 0, 3600000, 0},
    {"watch-interval", K_SECONDS, F(watch_interval_ms), 0, 3600000, 0},
    {"access-log", K_STRING, F(access_log), 0, 0, 0},
    {"rdns", K_OFF, F(rdns_off), 0, 0, 0},
    {"resolver", K_STRING, F(resolver), 0, 0, 0},
    {"rdns-cache", K_SIZE, F(rdns_cache), 1, 10000000, 0},
    {"rdns-min-ttl", K_SECONDS, F(rdns_min_ttl_ms), 0, 86400000, 0},
    {"rdns-max-ttl", K_SECONDS, F(rdns_max_ttl_ms), 1000, 604800000, 0},
    {"rdns-timeout", K_SECONDS, F(rdns_timeout_ms), 100, 30000, 0},
    {"state-bytes", K_BYTES, F(state_bytes), CLF_STORE_MIN_BYTES, 1ULL << 40, 0},
    {"state-redis", K_REDIS, F(state_redis), 0, 0, 0},
    {"state-redis-prefix", K_STRING, F(state_redis_prefix), 0, 0, 0},
    {"state-sync-interval", K_SECONDS, F(state_sync_ms), 10, 60000, 0},
    {"state-redis-timeout", K_SECONDS, F(state_redis_timeout_ms), 50, 60000, 0},
    {"config", K_CONFIG, 0, 0, 0, 0},
    {"check", K_FLAG, F(check_only), 0, 0, 0},
};

static const opt_def *find_opt(const char *name)
{
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strcmp(opts[i].name, name) == 0)
            return &opts[i];
    return NULL;
}

static int parse_ull(const char *s, unsigned long long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno != 0 || *end != '\0' ? -1 : 0;
}

/* Seconds with up to 3 decimals ("10", "0.5") -> milliseconds. */
static int parse_seconds(const char *s, unsigned long long *ms)
{
    unsigned long long whole = 0, frac = 0, scale = 1000;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > 100000000ULL)
            return -1;
        whole = whole * 10 + (unsigned)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (scale > 1) {
                scale /= 10;
                frac += (unsigned)(*p - '0') * scale;
            }
        }
    }
    if (*p != '\0')
        return -1;
    *ms = whole * 1000 + frac;
    return 0;
}

static int append_str(char **dst, const char *sep, const char *val)
{
    size_t old = *dst ? strlen(*dst) : 0, add = strlen(val);
    char *n = realloc(*dst, old + strlen(sep) + add + 1);
    if (n == NULL)
        return -1;
    if (old > 0) {
        strcpy(n + old, sep);
        old += strlen(sep);
    }
    memcpy(n + old, val, add + 1);
    *dst = n;
    return 0;
}

static int read_config_file(srv_config *cfg, const char *path, int depth);

/* --listen-auth PROXY=ADDR: sets *auth and returns ADDR, or prints why
 * not and returns NULL. There is no default proxy: reading the headers of
 * the wrong one lets the client choose what is classified (a Caddy
 * listener behind nginx would take the client's own X-Forwarded-Uri). */
static const char *auth_proxy(const char *val, const char *where, const srv_auth_proxy **auth)
{
    const char *eq = strchr(val, '=');
    if (eq == NULL) {
        cli_usage_error(PROG, "%s: '%s' does not name the proxy in front: write PROXY=ADDR, "
                        "PROXY one of nginx, caddy, traefik, haproxy (it decides which headers "
                        "carry the client's method and URI; docs/classify-serve.md, "
                        "\"Forward-auth\")", where, val);
        return NULL;
    }
    for (const srv_auth_proxy *p = srv_auth_proxies; p->name != NULL; p++) {
        if (strlen(p->name) == (size_t)(eq - val) && memcmp(p->name, val, (size_t)(eq - val)) == 0) {
            *auth = p;
            return eq + 1;
        }
    }
    cli_usage_error(PROG, "%s: unknown proxy '%.*s' (nginx, caddy, traefik or haproxy)", where,
                    (int)(eq - val), val);
    return NULL;
}

/* Applies option `o` with `val` ("" for a flag). `where` names the source
 * in messages ("--name" or "FILE:LINE"). */
static int apply(srv_config *cfg, const opt_def *o, const char *val,
                 const char *where, int depth)
{
    char *base = (char *)cfg;
    unsigned long long n;

    switch (o->kind) {
    case K_STRING: {
        char *copy = strdup(val);
        if (copy == NULL)
            return -1;
        char **field = (char **)(void *)(base + o->offset);
        free(*field);
        *field = copy;
        return 0;
    }
    case K_UINT:
    case K_SIZE:
        if (parse_ull(val, &n) != 0 || n < o->min || n > o->max) {
            cli_usage_error(PROG, "%s: '%s' is not a number from %llu to %llu", where, val,
                        o->min, o->max);
            return -1;
        }
        if (o->kind == K_UINT)
            *(unsigned *)(void *)(base + o->offset) = (unsigned)n;
        else
            *(size_t *)(void *)(base + o->offset) = (size_t)n;
        return 0;
    case K_BYTES: {
        uint64_t v;
        if (cm_parse_bytes(val, &v) != 0 || (v != 0 && (v < o->min || v > o->max))) {
            cli_usage_error(PROG, "%s: '%s' is not 0 or a size from %lluK to %lluG (K, M, G)",
                            where, val, o->min >> 10, o->max >> 30);
            return -1;
        }
        *(uint64_t *)(void *)(base + o->offset) = v;
        return 0;
    }
    case K_SECONDS:
        if (parse_seconds(val, &n) != 0 || n < o->min || n > o->max) {
            cli_usage_error(PROG, "%s: '%s' is not a number of seconds from %g to %g", where,
                        val, (double)o->min / 1000, (double)o->max / 1000);
            return -1;
        }
        *(uint64_t *)(void *)(base + o->offset) = n;
        return 0;
    case K_STATUS:
        if (parse_ull(val, &n) != 0 || n < 200 || n > 599) {
            cli_usage_error(PROG, "%s: '%s' is not an HTTP status from 200 to 599", where, val);
            return -1;
        }
        *(unsigned *)(void *)(base + o->offset) = (unsigned)n;
        return 0;
    case K_ON_ERROR:
        if (strcmp(val, "accept") == 0)
            cfg->on_error = SRV_ON_ERROR_ACCEPT;
        else if (strcmp(val, "reject") == 0)
            cfg->on_error = SRV_ON_ERROR_REJECT;
        else {
            cli_usage_error(PROG, "%s: expected 'accept' or 'reject', got '%s'", where, val);
            return -1;
        }
        return 0;
    case K_LISTEN: {
        const srv_auth_proxy *auth = NULL;
        if (o->proto == SRV_FORWARD_AUTH && (val = auth_proxy(val, where, &auth)) == NULL)
            return -1;
        if (val[0] == '\0') {
            cli_usage_error(PROG, "%s: empty address", where);
            return -1;
        }
        srv_listen_cfg *l = realloc(cfg->listens, (cfg->listen_count + 1) * sizeof *l);
        if (l == NULL)
            return -1;
        cfg->listens = l;
        l[cfg->listen_count].proto = o->proto;
        l[cfg->listen_count].auth = auth;
        if ((l[cfg->listen_count].addr = strdup(val)) == NULL)
            return -1;
        cfg->listen_count++;
        return 0;
    }
    case K_TRUST:
        return append_str(&cfg->trusted_proxies, ",", val);
    case K_IPDB: {
        size_t n = 1;
        for (const char *c = cfg->ipdb_paths; c && *c; c++) n += *c == '\n';
        if (cfg->ipdb_paths && n > 4) {
            cli_usage_error(PROG, "%s: at most 4 IP databases", where);
            return -1;
        }
        if (val[0] == '\0' || strchr(val, '\n')) {
            cli_usage_error(PROG, "%s: not a file name", where);
            return -1;
        }
        return append_str(&cfg->ipdb_paths, "\n", val);
    }
    case K_OFF:
        if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0) {
            cli_usage_error(PROG, "%s: expected 'on' or 'off', got '%s'", where, val);
            return -1;
        }
        *(int *)(void *)(base + o->offset) = strcmp(val, "off") == 0;
        return 0;
    case K_CONFIG:
        return read_config_file(cfg, val, depth + 1);
    case K_FLAG:
        *(int *)(void *)(base + o->offset) = 1;
        return 0;
    case K_REDIS: {
        srv_redis_url u;
        char err[256];
        if (srv_redis_url_parse(val, &u, err, sizeof err) != 0) {
            cli_usage_error(PROG, "%s: '%s': %s", where, val, err);
            return -1;
        }
        char *copy = strdup(val);
        if (copy == NULL)
            return -1;
        char **field = (char **)(void *)(base + o->offset);
        free(*field);
        *field = copy;
        return 0;
    }
    }
    return -1;
}

/* "NAME VALUE" lines; blank lines and lines starting with '#' are
 * skipped; the value is the rest of the line, trimmed. */
static int read_config_file(srv_config *cfg, const char *path, int depth)
{
    if (depth > 4) {
        cli_usage_error(PROG, "%s: config files nested more than 4 deep", path);
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        cli_usage_error(PROG, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char line[4096], where[512];
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        snprintf(where, sizeof where, "%s:%u", path, lineno);
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            cli_usage_error(PROG, "%s: line longer than %zu bytes", where, sizeof line - 2);
            rc = -1;
            break;
        }
        while (len > 0 && strchr(" \t\r\n", line[len - 1]))
            line[--len] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        char *name = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        const opt_def *o = find_opt(name);
        if (o == NULL) {
            cli_usage_error(PROG, "%s: unknown option '%s'", where, name);
            rc = -1;
        } else if (o->kind != K_FLAG && *p == '\0') {
            cli_usage_error(PROG, "%s: option '%s' needs a value", where, name);
            rc = -1;
        } else if (o->kind == K_FLAG && *p != '\0' && strcmp(p, "true") != 0) {
            cli_usage_error(PROG, "%s: option '%s' takes no value (or 'true')", where, name);
            rc = -1;
        } else {
            rc = apply(cfg, o, p, where, depth);
        }
    }
    fclose(f);
    return rc;
}

static void set_defaults(srv_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->reject_status = 403;
    cfg->auth_accept_status = 200;
    cfg->auth_reject_status = 403;
    cfg->max_header_bytes = 32768;
    cfg->max_headers = 100;
    cfg->max_connections = 4096;
    cfg->request_timeout_ms = 10000;
    cfg->keepalive_timeout_ms = 300000;
    cfg->shutdown_timeout_ms = 10000;
    cfg->watch_interval_ms = 1000;
    cfg->rdns_cache = 10000;
    cfg->rdns_min_ttl_ms = 60000;
    cfg->rdns_max_ttl_ms = 3600000;
    cfg->rdns_timeout_ms = 2000;
    cfg->state_bytes = CLF_DEFAULT_STORE_BYTES;
    cfg->state_sync_ms = 1000;
    cfg->state_redis_timeout_ms = 2000;
}

srv_args_result srv_config_parse(srv_config *cfg, int argc, char **argv)
{
    set_defaults(cfg);
    int options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (options_done || a[0] != '-' || a[1] == '\0') {
            if (cfg->rules_path != NULL) {
                cli_usage_error(PROG, "unexpected argument '%s' (one RULES file)", a);
                return SRV_ARGS_BAD;
            }
            if ((cfg->rules_path = strdup(a)) == NULL)
                return SRV_ARGS_BAD;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return SRV_ARGS_HELP;
        if (strcmp(a, "--version") == 0)
            return SRV_ARGS_VERSION;
        /* --name VALUE or --name=VALUE */
        char name[64];
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        const opt_def *o = NULL;
        if (a[1] == '-' && nlen - 2 < sizeof name) {
            memcpy(name, a + 2, nlen - 2);
            name[nlen - 2] = '\0';
            o = find_opt(name);
        }
        if (o == NULL) {
            cli_usage_error(PROG, "unknown option '%.*s'", (int)nlen, a);
            return SRV_ARGS_BAD;
        }
        const char *val = "";
        if (o->kind == K_FLAG) {
            if (eq) {
                cli_usage_error(PROG, "option '--%s' takes no value", name);
                return SRV_ARGS_BAD;
            }
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            cli_usage_error(PROG, "option '--%s' needs a value", name);
            return SRV_ARGS_BAD;
        }
        char where[80];
        snprintf(where, sizeof where, "--%s", name);
        if (apply(cfg, o, val, where, 0) != 0)
            return SRV_ARGS_BAD;
    }
    if (cfg->rules_path == NULL) {
        cli_usage_error(PROG, "missing the RULES file");
        return SRV_ARGS_BAD;
    }
    size_t serving = 0;
    for (size_t i = 0; i < cfg->listen_count; i++)
        serving += cfg->listens[i].proto != SRV_ADMIN;
    if (serving == 0) { /* --check too: it says whether this would start */
        cli_usage_error(PROG, "nothing to serve: give --listen, --listen-auth or --listen-spoa");
        return SRV_ARGS_BAD;
    }
    if (cfg->rdns_min_ttl_ms > cfg->rdns_max_ttl_ms) {
        cli_usage_error(PROG, "--rdns-min-ttl (%g s) is longer than --rdns-max-ttl (%g s)",
                        (double)cfg->rdns_min_ttl_ms / 1000, (double)cfg->rdns_max_ttl_ms / 1000);
        return SRV_ARGS_BAD;
    }
    if (cfg->state_redis != NULL && cfg->state_bytes == 0) {
        cli_usage_error(PROG, "--state-redis shares the store, but --state-bytes is 0 (no store)");
        return SRV_ARGS_BAD;
    }
    if (cfg->state_redis_prefix == NULL && (cfg->state_redis_prefix = strdup("clf:")) == NULL)
        return SRV_ARGS_BAD;
    if (strlen(cfg->state_redis_prefix) > 64) {
        cli_usage_error(PROG, "--state-redis-prefix: longer than 64 bytes");
        return SRV_ARGS_BAD;
    }
    if (cfg->reject_body == NULL && (cfg->reject_body = strdup("Forbidden\n")) == NULL)
        return SRV_ARGS_BAD;
    return SRV_ARGS_RUN;
}

void srv_config_free(srv_config *cfg)
{
    for (size_t i = 0; i < cfg->listen_count; i++)
        free(cfg->listens[i].addr);
    free(cfg->listens);
    free(cfg->rules_path);
    free(cfg->trusted_proxies);
    free(cfg->ipdb_paths);
    free(cfg->keys_path);
    free(cfg->reject_body);
    free(cfg->reject_file);
    free(cfg->reject_content_type);
    free(cfg->access_log);
    free(cfg->resolver);
    free(cfg->state_redis);
    free(cfg->state_redis_prefix);
    memset(cfg, 0, sizeof *cfg);
}
