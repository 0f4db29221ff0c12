/*
 * srv_listen.h: listening sockets. They are opened by the main thread
 * (so a bad address or a port in use stops start-up with a clear message
 * before any thread runs) and shared by all workers: each worker's event
 * loop watches a dup of the same socket, and the kernel hands each new
 * connection to one of them.
 */
#ifndef CLI_SRV_LISTEN_H
#define CLI_SRV_LISTEN_H

#include "srv_server.h"

#include <stddef.h>

/* Parses `addr` (HOST:PORT, [V6]:PORT, :PORT, unix:PATH), binds and
 * listens. Returns 0, or -1 with a message in err. */
int srv_listen_open(srv_listener *l, const char *addr, srv_proto proto,
                    char *err, size_t errlen);
void srv_listen_close(srv_listener *l);

/* --check: every check srv_listen_open makes on `addr` short of binding
 * (the address parses and resolves; a Unix path fits and holds nothing
 * but a stale socket). Returns 0, or -1 with the same message. */
int srv_listen_check(const char *addr, char *err, size_t errlen);

#endif /* CLI_SRV_LISTEN_H */
