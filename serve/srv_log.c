/*
 * srv_log.c: error log and JSON access log (see srv_log.h).
 */
#include "srv_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void vlog(const char *level, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "classify-serve: %s: ", level);
    if (n < 0)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    /* one fputs per line: stdio locks the stream, so threads do not mix */
    size_t len = strlen(line);
    if (len < sizeof line - 1)
        line[len++] = '\n', line[len] = '\0';
    else
        line[sizeof line - 2] = '\n';
    fputs(line, stderr);
    fflush(stderr);
}

#define DEFINE_LOG(fn, level)                                                  \
    void fn(const char *fmt, ...)                                              \
    {                                                                          \
        va_list ap;                                                            \
        va_start(ap, fmt);                                                     \
        vlog(level, fmt, ap);                                                  \
        va_end(ap);                                                            \
    }
DEFINE_LOG(srv_log_info, "info")
DEFINE_LOG(srv_log_warn, "warning")
DEFINE_LOG(srv_log_error, "error")

/* ------------------------------------------------------------------------ */
/* Access log. The descriptor number never changes once opened: a reopen
 * dup2()s the new file over it, which is atomic for the writers. */

static _Atomic int access_fd = -1;
static int access_is_stdout;

int srv_access_log_open(const char *path)
{
    int fd;
    if (strcmp(path, "-") == 0) {
        if (atomic_load(&access_fd) < 0) {
            access_is_stdout = 1;
            atomic_store(&access_fd, STDOUT_FILENO);
        }
        return 0;
    }
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        srv_log_error("%s: cannot open the access log: %s", path, strerror(errno));
        return -1;
    }
    int cur = atomic_load(&access_fd);
    if (cur < 0) {
        atomic_store(&access_fd, fd);
        return 0;
    }
    if (dup2(fd, cur) < 0) {
        srv_log_error("%s: cannot reopen the access log: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int srv_access_log_check(const char *path)
{
    if (strcmp(path, "-") == 0)
        return 0;
    /* O_EXCL: a file made only to see that it can be made is removed
     * again. O_NONBLOCK: a FIFO without a reader yet is not an error
     * (ENXIO), only a wait at start. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NONBLOCK, 0644);
    int made = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno != ENXIO) {
        srv_log_error("%s: cannot open the access log: %s", path, strerror(errno));
        return -1;
    }
    if (fd >= 0)
        close(fd);
    if (made)
        unlink(path);
    return 0;
}

void srv_access_log_close(void)
{
    int fd = atomic_exchange(&access_fd, -1);
    if (fd >= 0 && !access_is_stdout)
        close(fd);
}

int srv_access_log_enabled(void)
{
    return atomic_load_explicit(&access_fd, memory_order_relaxed) >= 0;
}

/* ------------------------------------------------------------------------ */
/* JSON lines. Room for the closing "}\n" is always kept, and a field goes
 * in whole or not at all, so every line is valid JSON whatever the
 * request held. */

/* Appends n bytes if they fit; else marks the field as not fitting. */
static void put(srv_jline *j, const char *s, size_t n)
{
    if (j->len + n + 2 > j->cap) {
        j->overflow = 1;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
}

void srv_jline_begin(srv_jline *j)
{
    j->len = 0;
    j->overflow = 0;
    put(j, "{", 1);
}

/* Starts a field; returns where it began, for end_field. */
static size_t key(srv_jline *j, const char *k)
{
    size_t start = j->len;
    j->overflow = 0;
    if (j->len > 1)
        put(j, ",", 1);
    put(j, "\"", 1);
    put(j, k, strlen(k));
    put(j, "\":", 2);
    return start;
}

/* A field that did not fit is taken out again, comma included. */
static void end_field(srv_jline *j, size_t start)
{
    if (j->overflow)
        j->len = start;
    j->overflow = 0;
}

/* JSON text must be UTF-8: bytes >= 0x80 are written as \u00XX (their
 * Latin-1 reading), so any input gives valid JSON and stays recoverable
 * byte for byte. A value is cut after SRV_JLINE_STR_MAX bytes as written
 * (never inside an escape), so that the other fields still fit. */
void srv_jline_str(srv_jline *j, const char *k, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t start = key(j, k);
    if (s == NULL) {
        put(j, "null", 4);
        end_field(j, start);
        return;
    }
    put(j, "\"", 1);
    size_t written = 0;
    for (size_t i = 0; i < len && !j->overflow; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[6];
        size_t n = 1;
        e[0] = (char)c;
        if (c == '"' || c == '\\') {
            e[0] = '\\', e[1] = (char)c, n = 2;
        } else if (c < 0x20 || c >= 0x7f) {
            e[0] = '\\', e[1] = 'u', e[2] = '0', e[3] = '0', e[4] = hex[c >> 4],
            e[5] = hex[c & 15], n = 6;
        }
        /* room for this escape and the closing quote */
        if (written + n > SRV_JLINE_STR_MAX || j->len + n + 1 + 2 > j->cap)
            break;
        put(j, e, n);
        written += n;
    }
    put(j, "\"", 1);
    end_field(j, start);
}

void srv_jline_num(srv_jline *j, const char *k, unsigned long long n)
{
    char num[24];
    size_t start = key(j, k);
    int len = snprintf(num, sizeof num, "%llu", n);
    put(j, num, (size_t)len);
    end_field(j, start);
}

void srv_jline_write(srv_jline *j)
{
    j->buf[j->len++] = '}';
    j->buf[j->len++] = '\n';
    int fd = atomic_load_explicit(&access_fd, memory_order_relaxed);
    if (fd < 0)
        return;
    size_t off = 0;
    while (off < j->len) {
        ssize_t n = write(fd, j->buf + off, j->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* a full disk must not stop the service */
        off += (size_t)n;
    }
}

void srv_jline_request(srv_jline *j, const srv_logreq *r)
{
    char ts[32];
    struct timespec now;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    size_t tsl = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    tsl += (size_t)snprintf(ts + tsl, sizeof ts - tsl, ".%03ldZ", now.tv_nsec / 1000000);

    srv_jline_begin(j);
    srv_jline_str(j, "time", ts, tsl);
    srv_jline_str(j, "listener", r->listener, strlen(r->listener));
    srv_jline_str(j, "peer", r->peer, r->peer_len);
    srv_jline_str(j, "x_forwarded_for", r->xff, r->xff_len);
    srv_jline_str(j, "method", r->method, r->method_len);
    srv_jline_str(j, "uri", r->uri, r->uri_len);
    srv_jline_str(j, "host", r->host, r->host_len);
    srv_jline_str(j, "user_agent", r->ua, r->ua_len);
    if (r->status >= 0)
        srv_jline_num(j, "status", (unsigned long long)r->status);
    if (r->verdict >= 0) {
        srv_jline_str(j, "verdict", r->verdict ? "accept" : "reject", 6);
        srv_jline_str(j, "reason", r->reason, r->reason_len);
    }
    srv_jline_num(j, "rules_generation", r->generation);
    srv_jline_num(j, "duration_us", r->duration_us);
    srv_jline_write(j);
}
