/*
 * sg_keyfile.c: key rings from files (clf_keyring_load): one JWK Set
 * file, or every "*.json" file of a directory, in name order so that the
 * same directory always makes the same ring. Each file is read whole
 * with a bound; a failure anywhere leaves the ring as it was, and its
 * message starts with the file's path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sg_keyfile.h"

/* Reads regular file path whole (malloc'd into *out, *n bytes). */
static sg_file_status read_file(const char *path, char **out, size_t *n, char *err,
                                size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sg_errf(err, errlen, "%s: %s", path, strerror(errno));
        return SG_FILE_IO;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0) why = strerror(errno);
    else if (!S_ISREG(st.st_mode)) why = "not a regular file";
    else if (st.st_size > SG_KEYFILE_MAX_BYTES) why = "larger than 1 MiB, too large for a key set";
    if (why) {
        sg_errf(err, errlen, "%s: %s", path, why);
        close(fd);
        return SG_FILE_IO;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        sg_errf(err, errlen, "%s: out of memory", path);
        return SG_FILE_NOMEM;
    }
    size_t got = 0;
    int e = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) e = errno;
        if (r <= 0) break; /* a file that shrank while read is read as it is */
        got += (size_t)r;
    }
    close(fd);
    if (e) {
        free(buf);
        sg_errf(err, errlen, "%s: %s", path, strerror(e));
        return SG_FILE_IO;
    }
    *out = buf;
    *n = got;
    return SG_FILE_OK;
}

static sg_file_status add_file(sg_keyring *r, const char *path, char *err, size_t errlen)
{
    char *buf;
    size_t n;
    sg_file_status st = read_file(path, &buf, &n, err, errlen);
    if (st) return st;
    char msg[256];
    sg_keys_status ks = sg_keyring_add_jwks(r, NULL, 0, buf, n, NULL, NULL, msg, sizeof msg);
    free(buf);
    if (ks == SG_KEYS_OK) return SG_FILE_OK;
    sg_errf(err, errlen, "%s: %s", path, msg);
    return ks == SG_KEYS_NOMEM ? SG_FILE_NOMEM : SG_FILE_FORMAT;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_json_name(const char *s)
{
    size_t n = strlen(s);
    return s[0] != '.' && n > 5 && strcmp(s + n - 5, ".json") == 0;
}

static sg_file_status add_dir(sg_keyring *r, const char *path, char *err, size_t errlen)
{
    DIR *d = opendir(path);
    if (!d) {
        sg_errf(err, errlen, "%s: %s", path, strerror(errno));
        return SG_FILE_IO;
    }
    char **names = NULL;
    size_t nn = 0, cap = 0;
    sg_file_status st = SG_FILE_OK;
    struct dirent *de;
    while (st == SG_FILE_OK && (de = readdir(d)) != NULL) {
        if (!is_json_name(de->d_name)) continue;
        size_t pl = strlen(path), dl = strlen(de->d_name);
        char *full = malloc(pl + dl + 2);
        if (!full || (nn == cap && cap > SIZE_MAX / 2 / sizeof *names)) {
            free(full);
            st = SG_FILE_NOMEM;
            break;
        }
        memcpy(full, path, pl);
        full[pl] = '/';
        memcpy(full + pl + 1, de->d_name, dl + 1);
        if (nn == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **q = realloc(names, nc * sizeof *q);
            if (!q) {
                free(full);
                st = SG_FILE_NOMEM;
                break;
            }
            names = q;
            cap = nc;
        }
        names[nn++] = full;
    }
    closedir(d);
    if (st == SG_FILE_NOMEM) sg_errf(err, errlen, "%s: out of memory", path);
    if (st == SG_FILE_OK && nn == 0) {
        sg_errf(err, errlen, "%s: a directory with no .json file: no key set to load", path);
        st = SG_FILE_FORMAT;
    }
    if (nn) qsort(names, nn, sizeof *names, by_name);
    for (size_t i = 0; i < nn && st == SG_FILE_OK; i++) {
        struct stat sb;
        /* Only regular files (a subdirectory called x.json is not a set). */
        if (stat(names[i], &sb) == 0 && !S_ISREG(sb.st_mode)) continue;
        st = add_file(r, names[i], err, errlen);
    }
    for (size_t i = 0; i < nn; i++) free(names[i]);
    free(names);
    return st;
}

sg_file_status sg_keyring_load_path(sg_keyring *r, const char *path, char *err, size_t errlen)
{
    uint32_t nkeys0 = r->nkeys, nagents0 = r->nagents;
    size_t npool0 = r->npool;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        sg_errf(err, errlen, "%s: %s", path, strerror(errno));
        return SG_FILE_IO;
    }
    sg_file_status st = S_ISDIR(sb.st_mode) ? add_dir(r, path, err, errlen)
                                            : add_file(r, path, err, errlen);
    if (st != SG_FILE_OK) { /* all or nothing across the files */
        r->nkeys = nkeys0;
        r->nagents = nagents0;
        r->npool = npool0;
    }
    return st;
}
