/*
 * srv_server.h: the state classify-serve's threads share. Set up by the
 * main thread before the workers start and read-only afterwards, except
 * the atomics and what srv_rules_holder guards.
 */
#ifndef CLI_SRV_SERVER_H
#define CLI_SRV_SERVER_H

#include "srv_config.h"
#include "srv_metrics.h"
#include "srv_rules.h"
#include "srv_state.h"

#include <stdatomic.h>
#include <stddef.h>

typedef struct srv_listener {
    srv_proto proto;
    const srv_auth_proxy *auth; /* forward-auth: the proxy in front */
    const char *name; /* the address as configured */
    int fd;           /* bound and listening; each worker watches a dup */
    int is_unix;
    char *unix_path; /* unlinked at exit */
} srv_listener;

/* The reject answer's body (the text or the file, read once at start). */
typedef struct srv_body {
    char *ptr;
    size_t len;
    const char *content_type;
} srv_body;

struct srv_worker;

typedef struct srv_server {
    const srv_config *cfg;
    srv_listener *listeners;
    size_t nlisteners;
    struct srv_worker *workers;
    unsigned nworkers;
    srv_rules_holder rules;
    srv_globals g;
    srv_body reject;
    srv_state state; /* the store every worker's context shares, and its sync */
    atomic_int stopping; /* SIGTERM/SIGINT seen */
} srv_server;

#endif /* CLI_SRV_SERVER_H */
