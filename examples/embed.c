/*
 * embed.c: the smallest complete host of libclassify. It loads a rules
 * file once, makes one context, and classifies `GET PATH` with the given
 * User-Agent, as a server would per request.
 *
 *   cc embed.c $(pkg-config --cflags --libs libclassify) -o embed
 *   ./embed rules.bin /some/path 'Mozilla/5.0 (compatible; GPTBot/1.1)'
 *
 * Prints "accept" or "reject REASON"; exits 0, or 2 on errors.
 */
#include <classify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len == cap) {
            char *b = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!b) break;
            buf = b;
        }
        size_t n = fread(buf + *len, 1, cap - *len, f);
        if (n == 0) break;
        *len += n;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: embed RULES.bin PATH USER-AGENT\n");
        return 2;
    }
    size_t len;
    void *bytes = read_file(argv[1], &len);
    if (!bytes) {
        perror(argv[1]);
        return 2;
    }
    char err[CLF_ERRMSG_SIZE];
    clf_program *prog;
    clf_ctx *ctx;
    if (clf_program_load(bytes, len, NULL, &prog, err, sizeof err) != CLF_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err);
        free(bytes);
        return 2;
    }
    free(bytes); /* the program keeps its own copy */
    if (clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK) {
        fprintf(stderr, "%s\n", err);
        clf_program_free(prog);
        return 2;
    }

    /* Per request: reset, describe the request (borrowed slices), eval. */
    clf_verdict v;
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, argv[2], strlen(argv[2]));
    clf_ctx_add_header(ctx, "Host", 4, "example.org", 11);
    clf_ctx_add_header(ctx, "User-Agent", 10, argv[3], strlen(argv[3]));
    clf_status st = clf_eval(ctx, &v);
    if (st != CLF_OK) {
        fprintf(stderr, "cannot classify: %s: %s\n", clf_strerror(st), clf_ctx_errmsg(ctx));
    } else if (v.verdict == CLF_ACCEPT) {
        printf("accept%s%.*s\n", v.reason ? " " : "", (int)v.reason_len, v.reason ? v.reason : "");
    } else {
        printf("reject%s%.*s\n", v.reason ? " " : "", (int)v.reason_len, v.reason ? v.reason : "");
    }
    clf_ctx_free(ctx);
    clf_program_free(prog);
    return st == CLF_OK ? 0 : 2;
}
