/*
 * log_read.c: access logs line by line (log_read.h).
 *
 * zlib's gzread reads a gzip'd file and, in its transparent mode, a plain
 * one alike, so that one loop serves both; lines are cut out of this
 * module's own buffer with memchr, which keeps a plain log near memory
 * speed.
 */
#include "log_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Several hundred lines per refill, and room for one whole line of
 * LOG_MAX_LINE bytes with its ending. (128 KiB measured no faster.) */
#define BUF_BYTES ((size_t)256 << 10)

struct log_reader {
    gzFile gz;
    uint64_t size;     /* st_size of a regular file, else 0 */
    char *buf;         /* BUF_BYTES + 1 (the NUL after a last line) */
    size_t start, end; /* the bytes not yet cut into lines */
    int eof, err;
    uint64_t lineno;
    char msg[128];
};

int log_reader_open(const char *path, log_reader **out)
{
    *out = NULL;
    int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0)
        memset(&st, 0, sizeof st);
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return -1;
    }
    log_reader *r = calloc(1, sizeof *r);
    char *buf = malloc(BUF_BYTES + 1);
    gzFile gz = r && buf ? gzdopen(fd, "rb") : NULL;
    if (gz == NULL) {
        free(r);
        free(buf);
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    gzbuffer(gz, (unsigned)BUF_BYTES); /* before the first read, as zlib wants */
    r->gz = gz;
    r->size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    r->buf = buf;
    *out = r;
    return 0;
}

void log_reader_close(log_reader *r)
{
    if (r == NULL)
        return;
    gzclose(r->gz); /* closes the descriptor too */
    free(r->buf);
    free(r);
}

const char *log_reader_error(const log_reader *r)
{
    return r->msg;
}

uint64_t log_reader_offset(log_reader *r)
{
    z_off_t o = gzoffset(r->gz);
    return o > 0 ? (uint64_t)o : 0;
}

uint64_t log_reader_size(const log_reader *r)
{
    return r->size;
}

/* zlib's word for the last error, or NULL when there is none. */
static const char *gz_failed(log_reader *r)
{
    int zerr;
    const char *m = gzerror(r->gz, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return NULL;
    return zerr == Z_ERRNO ? strerror(errno) : m && *m ? m : "gzip error";
}

/* Moves the unread bytes to the front and reads more after them.
 * Returns 0, or -1 on error (r->msg). */
static int refill(log_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->eof || r->end == BUF_BYTES)
        return 0;
    int n = gzread(r->gz, r->buf + r->end, (unsigned)(BUF_BYTES - r->end));
    /* A gzip file cut short reads as its end with an error set: report
     * it, since its last lines are missing. */
    const char *why = n <= 0 ? gz_failed(r) : NULL;
    if (n < 0 || why != NULL) {
        snprintf(r->msg, sizeof r->msg, "%s", why ? why : "gzip error");
        r->err = 1;
        return -1;
    }
    if (n == 0)
        r->eof = 1;
    r->end += (size_t)n;
    return 0;
}

log_read_status log_reader_next(log_reader *r, char **line, size_t *len, uint64_t *lineno)
{
    size_t scanned = r->start; /* where the search for '\n' goes on */
    int skipping = 0;          /* inside a line over LOG_MAX_LINE */
    for (;;) {
        char *nl = memchr(r->buf + scanned, '\n', r->end - scanned);
        if (nl != NULL || (r->eof && r->end > r->start)) {
            size_t stop = nl ? (size_t)(nl - r->buf) : r->end;
            size_t n = stop - r->start;
            char *p = r->buf + r->start;
            r->start = nl ? stop + 1 : stop;
            *lineno = ++r->lineno;
            if (skipping)
                return LOG_TOO_LONG;
            if (n > 0 && p[n - 1] == '\r')
                n--;
            if (n > LOG_MAX_LINE)
                return LOG_TOO_LONG;
            p[n] = '\0'; /* over the '\r' or '\n', or the spare byte */
            *line = p;
            *len = n;
            return LOG_LINE;
        }
        if (r->err)
            return LOG_ERROR;
        if (r->eof)
            return LOG_EOF;
        if (r->end - r->start > LOG_MAX_LINE + 1) {
            /* Too long to keep: drop what was read, then find its end. */
            skipping = 1;
            r->start = r->end;
        }
        size_t already = r->end - r->start; /* searched: no '\n' in it */
        if (refill(r) != 0)
            return LOG_ERROR;
        scanned = r->start + already;
    }
}
