/* atomic_write.c: see atomic_write.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_write.h"

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

int atomic_file_open(atomic_file *af, const char *given, char *err, size_t errlen)
{
    memset(af, 0, sizeof *af);
    af->path = resolve_target(given, err, errlen);
    if (!af->path) return -1;
    size_t n = strlen(af->path);
    af->tmp = malloc(n + 16);
    if (!af->tmp) {
        snprintf(err, errlen, "out of memory");
        atomic_file_abort(af);
        return -1;
    }
    const char *slash = strrchr(af->path, '/');
    size_t dirlen = slash ? (size_t)(slash - af->path) + 1 : 0;
    /* ".NAME.XXXXXX" beside the target: hidden, and on the same file
     * system so that rename() is atomic. */
    snprintf(af->tmp, n + 16, "%.*s.%s.XXXXXX", (int)dirlen, af->path, af->path + dirlen);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary file beside %s: %s", af->path,
                 strerror(errno));
        free(af->tmp);
        af->tmp = NULL;
        atomic_file_abort(af);
        return -1;
    }
    /* mkstemp makes the file 0600; give it the mode a new file would get. */
    mode_t um = umask(0);
    umask(um);
    const char *what = NULL;
    if (fchmod(fd, 0666 & ~um) != 0) what = "set the mode of";
    else if (!(af->fp = fdopen(fd, "wb"))) what = "open";
    if (what) {
        snprintf(err, errlen, "cannot %s %s: %s", what, af->tmp, strerror(errno));
        close(fd);
        atomic_file_abort(af);
        return -1;
    }
    return 0;
}

void atomic_file_abort(atomic_file *af)
{
    if (af->fp) fclose(af->fp);
    if (af->tmp) unlink(af->tmp);
    free(af->tmp);
    free(af->path);
    memset(af, 0, sizeof *af);
}

int atomic_file_commit(atomic_file *af, char *err, size_t errlen)
{
    const char *what = NULL;
    int saved = 0;
    if (fflush(af->fp) != 0 || ferror(af->fp)) what = "write";
    else if (fsync(fileno(af->fp)) != 0) what = "flush";
    saved = errno;
    int rc = fclose(af->fp);
    af->fp = NULL;
    if (rc != 0 && !what) {
        what = "close";
        saved = errno;
    }
    if (!what && rename(af->tmp, af->path) != 0) {
        what = "rename into place";
        saved = errno;
    }
    if (what) {
        /* errno is lost when an earlier buffered write failed */
        snprintf(err, errlen, "cannot %s %s%s%s", what, what[0] == 'r' ? af->path : af->tmp,
                 saved ? ": " : "", saved ? strerror(saved) : "");
        atomic_file_abort(af);
        return -1;
    }
    free(af->tmp);
    af->tmp = NULL;
    atomic_file_abort(af);
    return 0;
}

int atomic_write(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    atomic_file af;
    if (atomic_file_open(&af, path, err, errlen) != 0) return -1;
    if (len && fwrite(data, 1, len, af.fp) != len) {
        snprintf(err, errlen, "cannot write %s: %s", af.tmp, strerror(errno));
        atomic_file_abort(&af);
        return -1;
    }
    return atomic_file_commit(&af, err, errlen);
}
