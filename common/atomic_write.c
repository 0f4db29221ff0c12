/* atomic_write.c: see atomic_write.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_write.h"

static int atomic_write_to(const char *path, const void *data, size_t len, char *err,
                           size_t errlen);

/* Where the bytes must go: `path`, or the file a symbolic link at `path`
 * points to. Returns a malloc'd path, or NULL with a message. */
static char *resolve_target(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (*path == 0) {
        snprintf(err, errlen, "the output file name is empty");
        return NULL;
    }
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return strdup(path);
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return NULL;
    }
    char *target = S_ISLNK(st.st_mode) ? realpath(path, NULL) : strdup(path);
    if (!target) {
        if (errno == ENOENT) { /* a dangling link: create what it names? no: refuse */
            snprintf(err, errlen, "refusing to write %s: it is a symbolic link to nothing", path);
        } else {
            snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        }
        return NULL;
    }
    if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "refusing to replace %s: it is %s, not a regular file", path,
                 S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
        free(target);
        return NULL;
    }
    return target;
}

int atomic_write(const char *given, const void *data, size_t len, char *err, size_t errlen)
{
    char *path = resolve_target(given, err, errlen);
    if (!path) return -1;
    int rc = atomic_write_to(path, data, len, err, errlen);
    free(path);
    return rc;
}

static int atomic_write_to(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    /* ".NAME.XXXXXX" beside the target: hidden, and on the same file
     * system so that rename() is atomic. */
    snprintf(tmp, n + 16, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file beside %s: %s", path,
                 strerror(errno));
        free(tmp);
        return -1;
    }
    /* mkstemp makes the file 0600; give it the mode a new file would get. */
    mode_t um = umask(0);
    umask(um);
    const char *what = NULL;
    const char *p = data;
    size_t left = len;
    if (fchmod(fd, 0666 & ~um) != 0) what = "set the mode of";
    while (!what && left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            what = "write";
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (!what && fsync(fd) != 0) what = "flush";
    int saved = errno;
    if (close(fd) != 0 && !what) {
        what = "close";
        saved = errno;
    }
    if (!what && rename(tmp, path) != 0) {
        what = "rename into place";
        saved = errno;
    }
    if (what) {
        snprintf(err, errlen, "cannot %s %s: %s", what, what[0] == 'r' ? path : tmp,
                 strerror(saved));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
