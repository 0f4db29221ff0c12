/*
 * atomic_write.h: write a whole file so that readers see either the old
 * file or the complete new one, never a partial file: the bytes go to a
 * temporary file in the same directory, which is flushed to disk and
 * renamed over the target (rename(2) is atomic within a file system).
 */
#ifndef CLI_ATOMIC_WRITE_H
#define CLI_ATOMIC_WRITE_H

#include <stddef.h>
#include <stdio.h>

/* Returns 0, or -1 with a message in err (the target is untouched and no
 * temporary file is left behind). A target that is a symbolic link is
 * written through: the file it points to is replaced and the link kept.
 * A target that exists but is not a regular file (a directory, a device,
 * a FIFO) is refused, so `-o /dev/null` can never replace /dev/null. */
int atomic_write(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* The same, for output written as it is made (classify-run --rewrite
 * --output): atomic_file_open makes the temporary file and returns its
 * stream in af->fp; write to it, then atomic_file_commit (flush to disk,
 * rename over the target) or atomic_file_abort (remove it). Each returns
 * 0, or -1 with a message in err; after either, af is closed. */
typedef struct atomic_file {
    FILE *fp;
    char *path; /* the target (a link resolved), malloc'd */
    char *tmp;  /* the temporary file beside it, malloc'd */
} atomic_file;
int atomic_file_open(atomic_file *af, const char *path, char *err, size_t errlen);
int atomic_file_commit(atomic_file *af, char *err, size_t errlen);
void atomic_file_abort(atomic_file *af);

#endif
