/*
 * srv_listen.c: see srv_listen.h.
 */
#include "srv_listen.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define BACKLOG 4096 /* the kernel caps it at net.core.somaxconn */

/* The checks on a Unix socket path before binding. Sets *stale when a
 * socket file is there (left by a process that died, in the way of
 * bind()); anything else at that path is not ours to remove. */
static int check_unix(const char *path, int *stale, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    struct stat st;
    *stale = 0;
    if (path[0] == '\0' || strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "a Unix socket path must have 1 to %zu bytes",
                 sizeof sa.sun_path - 1);
        return -1;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            snprintf(err, errlen, "%s exists and is not a socket", path);
            return -1;
        }
        *stale = 1;
    }
    return 0;
}

static int open_unix(srv_listener *l, const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    int stale;
    if (check_unix(path, &stale, err, errlen) != 0)
        return -1;
    if (stale)
        unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, BACKLOG) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    l->fd = fd;
    l->is_unix = 1;
    if ((l->unix_path = strdup(path)) == NULL) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    return 0;
}

/* HOST:PORT with HOST a name, an IPv4 address, [IPv6], empty or '*'
 * (every IPv4 address). */
static int split_host_port(const char *addr, char *host, size_t hostcap,
                           const char **port)
{
    const char *colon;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (close == NULL || close[1] != ':')
            return -1;
        if ((size_t)(close - addr - 1) >= hostcap)
            return -1;
        memcpy(host, addr + 1, (size_t)(close - addr - 1));
        host[close - addr - 1] = '\0';
        colon = close + 1;
    } else {
        colon = strrchr(addr, ':');
        if (colon == NULL || (size_t)(colon - addr) >= hostcap ||
            memchr(addr, ':', (size_t)(colon - addr)) != NULL)
            return -1; /* bare IPv6 needs brackets */
        memcpy(host, addr, (size_t)(colon - addr));
        host[colon - addr] = '\0';
    }
    *port = colon + 1;
    if (**port == '\0' || strlen(*port) > 5 || strspn(*port, "0123456789") != strlen(*port) ||
        atoi(*port) < 1 || atoi(*port) > 65535)
        return -1; /* getaddrinfo would wrap 99999 around */
    if (strcmp(host, "*") == 0)
        host[0] = '\0';
    return 0;
}

/* The address to bind (the caller frees *res), or -1 with a message. */
static int resolve(const char *addr, struct addrinfo **res, char *err, size_t errlen)
{
    char host[256];
    const char *port;
    if (split_host_port(addr, host, sizeof host, &port) != 0) {
        snprintf(err, errlen, "expected HOST:PORT, [IPV6]:PORT (PORT 1 to 65535) or unix:PATH");
        return -1;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (host[0] == '\0')
        hints.ai_family = AF_INET;
    *res = NULL;
    int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, res);
    if (gai != 0) {
        snprintf(err, errlen, "%s", gai_strerror(gai));
        return -1;
    }
    return 0;
}

static int open_inet(srv_listener *l, const char *addr, char *err, size_t errlen)
{
    struct addrinfo *res;
    if (resolve(addr, &res, err, errlen) != 0)
        return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, BACKLOG) != 0) {
        snprintf(err, errlen, "cannot listen: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    l->fd = fd;
    return 0;
}

int srv_listen_open(srv_listener *l, const char *addr, srv_proto proto,
                    char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    l->proto = proto;
    l->name = addr;
    if (strncmp(addr, "unix:", 5) == 0)
        return open_unix(l, addr + 5, err, errlen);
    return open_inet(l, addr, err, errlen);
}

int srv_listen_check(const char *addr, char *err, size_t errlen)
{
    if (strncmp(addr, "unix:", 5) == 0) {
        int stale;
        return check_unix(addr + 5, &stale, err, errlen);
    }
    struct addrinfo *res;
    if (resolve(addr, &res, err, errlen) != 0)
        return -1;
    freeaddrinfo(res);
    return 0;
}

void srv_listen_close(srv_listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    if (l->unix_path != NULL)
        unlink(l->unix_path);
    free(l->unix_path);
    l->unix_path = NULL;
}
