/*
 * readfile.h: the one whole-file reader of the compiler and the
 * programs (source files, rules files, request files, reject pages).
 * Every input is read with a bound, so that a FIFO or /dev/zero cannot
 * exhaust memory; each caller words its own messages from the status.
 */
#ifndef COMMON_READFILE_H
#define COMMON_READFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef enum cm_read_status {
    CM_READ_OK = 0,
    CM_READ_OPEN,        /* cannot open: errno in *errnum */
    CM_READ_NOT_REGULAR, /* CM_READ_REGULAR was asked, and it is not a regular file */
    CM_READ_TOO_BIG,     /* more than `max` bytes */
    CM_READ_IO,          /* a read failed: errno in *errnum */
    CM_READ_NOMEM
} cm_read_status;

enum {
    CM_READ_STDIN = 1,   /* "-" is standard input */
    CM_READ_REGULAR = 2  /* refuse anything but a regular file (a FIFO would
                            block, a device never end) */
};

/* Reads all of the file at `path` into a new malloc'd buffer, which is
 * NUL-terminated at (*out)[*len] (the NUL is not counted). At most `max`
 * bytes: the one byte past it that proves a longer file is all that is
 * read beyond. With `st` non-NULL and a file that could be opened, *st
 * is its fstat(2) (for callers that watch it for changes). Returns
 * CM_READ_OK, or a status with *out NULL and, for OPEN and IO, the errno
 * value in *errnum. */
cm_read_status cm_read_file(const char *path, uint64_t max, unsigned flags, char **out,
                            size_t *len, int *errnum, struct stat *st);

#endif
