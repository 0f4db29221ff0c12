/*
 * atomic_write.h: write a whole file so that readers see either the old
 * file or the complete new one, never a partial file: the bytes go to a
 * temporary file in the same directory, which is flushed to disk and
 * renamed over the target (rename(2) is atomic within a file system).
 */
#ifndef CLI_ATOMIC_WRITE_H
#define CLI_ATOMIC_WRITE_H

#include <stddef.h>

/* Returns 0, or -1 with a message in err (the target is untouched and no
 * temporary file is left behind). A target that is a symbolic link is
 * written through: the file it points to is replaced and the link kept.
 * A target that exists but is not a regular file (a directory, a device,
 * a FIFO) is refused, so `-o /dev/null` can never replace /dev/null. */
int atomic_write(const char *path, const void *data, size_t len, char *err, size_t errlen);

#endif
