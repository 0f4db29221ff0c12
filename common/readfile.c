/*
 * readfile.c: the whole-file reader (readfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readfile.h"

cm_read_status cm_read_file(const char *path, uint64_t max, unsigned flags, char **out,
                            size_t *len, int *errnum, struct stat *st)
{
    *out = NULL;
    *len = 0;
    *errnum = 0;
    int is_stdin = (flags & CM_READ_STDIN) && strcmp(path, "-") == 0;
    FILE *f = stdin;
    if (!is_stdin) {
        /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for
         * a writer before CM_READ_REGULAR could refuse it; it changes
         * nothing for a regular file. */
        int fd = open(path, O_RDONLY | O_CLOEXEC | (flags & CM_READ_REGULAR ? O_NONBLOCK : 0));
        f = fd < 0 ? NULL : fdopen(fd, "rb");
        if (!f) {
            *errnum = errno;
            if (fd >= 0) close(fd);
            return CM_READ_OPEN;
        }
    }
    struct stat sb;
    int have_stat = fstat(fileno(f), &sb) == 0;
    if (st && have_stat) *st = sb;
    cm_read_status rs = CM_READ_OK;
    if ((flags & CM_READ_REGULAR) && (!have_stat || !S_ISREG(sb.st_mode))) {
        rs = CM_READ_NOT_REGULAR;
        goto done;
    }
    /* Read at most limit = max + 1 bytes: a file of exactly max bytes is
     * then told from a longer one. */
    size_t limit = max >= SIZE_MAX - 1 ? SIZE_MAX - 1 : (size_t)max + 1;
    errno = 0;
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 8192;
            if (ncap > limit || ncap < cap) ncap = limit;
            char *nb = realloc(buf, ncap + 1); /* +1: the NUL */
            if (!nb) {
                free(buf);
                rs = CM_READ_NOMEM;
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        size_t want = cap - n;
        size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (n > max) {
            free(buf);
            rs = CM_READ_TOO_BIG;
            goto done;
        }
        if (got < want) {
            if (ferror(f) && errno == EINTR) { /* a signal: read on */
                clearerr(f);
                errno = 0;
                continue;
            }
            if (ferror(f)) {
                *errnum = errno ? errno : EIO;
                free(buf);
                rs = CM_READ_IO;
                goto done;
            }
            break; /* end of file */
        }
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
done:
    if (!is_stdin) fclose(f);
    return rs;
}
