/*
 * replay.c: runs a fuzz target's LLVMFuzzerTestOneInput once on each file,
 * without libFuzzer, so that seeds and crash reproducers run as ordinary
 * tests in any build (gcc, clang, with or without sanitizers).
 *
 *   replay [--prefix P] PATH...
 *
 * A PATH that is a directory stands for its regular files whose names
 * start with P (all of them without --prefix; names starting with '.' are
 * skipped), in name order; a path that does not exist is skipped (so
 * tests/regress/ may be absent). Prints
 * TAP: "ok N - FILE" per file. A file that makes the target fail aborts
 * the process (the target's FUZZ_FAIL or a sanitizer report), and the last
 * "# FILE" line names it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

typedef struct list {
    char **v;
    size_t n, cap;
} list;

static void add(list *l, const char *dir, const char *name)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v) {
            perror("replay");
            exit(2);
        }
    }
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p) {
        perror("replay");
        exit(2);
    }
    if (dir[0]) snprintf(p, n, "%s/%s", dir, name);
    else snprintf(p, n, "%s", name);
    l->v[l->n++] = p;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_dir(list *l, const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return;
        perror(dir);
        exit(2);
    }
    size_t first = l->n;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        add(l, dir, e->d_name);
        struct stat st;
        if (stat(l->v[l->n - 1], &st) != 0 || !S_ISREG(st.st_mode)) free(l->v[--l->n]);
    }
    closedir(d);
    qsort(l->v + first, l->n - first, sizeof *l->v, cmp);
}

int main(int argc, char **argv)
{
    const char *prefix = "";
    list files = {0};
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc) {
            prefix = argv[++i];
        } else if (stat(argv[i], &st) != 0) {
            printf("# skipped (%s): %s\n", strerror(errno), argv[i]);
        } else if (S_ISDIR(st.st_mode)) {
            add_dir(&files, argv[i], prefix);
        } else {
            add(&files, "", argv[i]);
        }
    }
    LLVMFuzzerInitialize(&argc, &argv);
    if (files.n == 0) {
        printf("1..0 # SKIP no inputs\n");
        return 0;
    }
    printf("1..%zu\n", files.n);
    for (size_t i = 0; i < files.n; i++) {
        printf("# %s\n", files.v[i]);
        fflush(stdout);
        size_t len = 0;
        uint8_t *data = fuzz_read_file(files.v[i], &len);
        if (!data) {
            printf("not ok %zu - %s: %s\n", i + 1, files.v[i], strerror(errno));
            free(files.v[i]);
            continue;
        }
        /* An exact-size copy, as libFuzzer gives, so ASan sees overreads. */
        uint8_t *copy = malloc(len ? len : 1);
        if (!copy) {
            perror("replay");
            return 2;
        }
        memcpy(copy, data, len);
        free(data);
        LLVMFuzzerTestOneInput(copy, len);
        free(copy);
        printf("ok %zu - %s\n", i + 1, files.v[i]);
        free(files.v[i]);
    }
    free(files.v);
    return 0;
}
