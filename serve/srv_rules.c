/*
 * srv_rules.c: loading, publishing and releasing rules bundles.
 */
#include "readfile.h"
#include "srv_rules.h"
#include "srv_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The library's default CLF_LIMIT_FILE_BYTES: a larger file is refused by
 * the load anyway, so do not read it (a FIFO or a huge file would
 * otherwise be read until memory runs out). A file being written right
 * now is read as far as it goes: the load refuses it (truncated, or its
 * checksum), and the next check picks it up complete. */
#define MAX_RULES_BYTES ((size_t)CLF_DEFAULT_FILE_BYTES)

static char *read_whole(const char *path, size_t *len, struct stat *seen, char *err,
                        size_t errlen)
{
    char *buf;
    int e;
    switch (cm_read_file(path, MAX_RULES_BYTES, CM_READ_REGULAR, &buf, len, &e, seen)) {
    case CM_READ_OK: return buf;
    case CM_READ_OPEN: snprintf(err, errlen, "cannot open: %s", strerror(e)); break;
    case CM_READ_NOT_REGULAR: snprintf(err, errlen, "not a regular file"); break;
    case CM_READ_TOO_BIG: snprintf(err, errlen, "larger than %zu MiB", MAX_RULES_BYTES >> 20); break;
    case CM_READ_NOMEM: snprintf(err, errlen, "out of memory"); break;
    default: snprintf(err, errlen, "cannot read: %s", strerror(e)); break;
    }
    return NULL;
}

static void bundle_free(srv_rules *r)
{
    if (r == NULL)
        return;
    for (unsigned i = 0; r->ctx != NULL && i < r->nctx; i++)
        clf_ctx_free(r->ctx[i]);
    free(r->ctx);
    clf_program_free(r->prog);
    for (unsigned i = 0; i < r->nipdbs; i++)
        clf_ipdb_close(r->ipdbs[i]);
    free(r);
}

/* Opens the newline-separated IP databases of `list` into r. */
static int open_ipdbs(srv_rules *r, clf_options *opts, const char *list, char *err, size_t errlen)
{
    for (const char *p = list; p && *p && r->nipdbs < 4;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char path[4096];
        if (n >= sizeof path) {
            snprintf(err, errlen, "--ipdb: a file name longer than %zu bytes", sizeof path - 1);
            return -1;
        }
        memcpy(path, p, n);
        path[n] = 0;
        char msg[CLF_ERRMSG_SIZE];
        if (clf_ipdb_open(path, &r->ipdbs[r->nipdbs], msg, sizeof msg) != CLF_OK) {
            snprintf(err, errlen, "--ipdb: %s", msg);
            return -1;
        }
        clf_options_add_ipdb(opts, r->ipdbs[r->nipdbs++]);
        p = nl ? nl + 1 : p + n;
    }
    return 0;
}

/* One request through each context: a program that loads but fails to
 * classify (a Hyperscan scratch or scan error) is caught here, not on
 * live traffic. */
static int smoke_test(clf_ctx *ctx, char *err, size_t errlen)
{
    static const char ua[] = "Mozilla/5.0 (classify-serve load check)";
    clf_verdict v;
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, "/", 1);
    clf_ctx_add_header(ctx, "User-Agent", 10, ua, sizeof ua - 1);
    srv_trust_set_peer(ctx, "127.0.0.1", 9);
    int rc = clf_eval(ctx, &v);
    if (rc != CLF_OK) {
        snprintf(err, errlen, "a test classification failed: %s: %s",
                 clf_strerror(rc), clf_ctx_errmsg(ctx));
        return -1;
    }
    clf_ctx_reset(ctx);
    return 0;
}

int srv_rules_same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The key ring of --keys into opts; *ring is freed by the caller once
 * the program (which copies the keys) is loaded. */
static int load_keys(clf_options *opts, const char *keys, clf_keyring **ring, char *err,
                     size_t errlen)
{
    char msg[CLF_ERRMSG_SIZE];
    if (clf_keyring_new(ring) != CLF_OK) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (clf_keyring_load(*ring, keys, msg, sizeof msg) != CLF_OK) {
        snprintf(err, errlen, "--keys: %s", msg);
        return -1;
    }
    clf_options_set_keyring(opts, *ring);
    return 0;
}

srv_rules *srv_rules_load(const char *path, const char *trusted, const char *ipdbs,
                          const char *keys, unsigned nctx, struct stat *seen,
                          clf_store **store, uint64_t state_bytes, char *err, size_t errlen)
{
    clf_keyring *ring = NULL;
    size_t len = 0;
    char *bytes = read_whole(path, &len, seen, err, errlen);
    if (bytes == NULL)
        return NULL;

    srv_rules *r = calloc(1, sizeof *r);
    clf_options *opts = NULL;
    if (r == NULL || (r->ctx = calloc(nctx, sizeof *r->ctx)) == NULL ||
        clf_options_new(&opts) != CLF_OK) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    r->nctx = nctx;
    r->refs = 1;
    r->file_bytes = len;
    if (trusted != NULL && srv_trust_set_list(opts, trusted, err, errlen) != 0)
        goto fail;
    if (open_ipdbs(r, opts, ipdbs, err, errlen) != 0)
        goto fail;
    if (keys != NULL && load_keys(opts, keys, &ring, err, errlen) != 0)
        goto fail;
    if (clf_program_load(bytes, len, opts, &r->prog, err, errlen) != CLF_OK)
        goto fail;
    clf_keyring_free(ring);
    ring = NULL;
    r->reads_rdns = clf_program_reads_rdns(r->prog);
    for (unsigned i = 0; i < nctx; i++) {
        if (clf_ctx_new(r->prog, &r->ctx[i], err, errlen) != CLF_OK)
            goto fail;
        if (smoke_test(r->ctx[i], err, errlen) != 0)
            goto fail;
    }
    if (clf_program_uses_state(r->prog) && *store == NULL && state_bytes != 0 &&
        clf_store_new(state_bytes, NULL, store, err, errlen) != CLF_OK)
        goto fail;
    for (unsigned i = 0; i < nctx; i++)
        clf_ctx_set_store(r->ctx[i], *store);
    clf_options_free(opts);
    free(bytes);
    return r;
fail:
    clf_options_free(opts);
    clf_keyring_free(ring);
    free(bytes);
    bundle_free(r);
    return NULL;
}

int srv_rules_holder_init(srv_rules_holder *h, srv_rules *first)
{
    memset(h, 0, sizeof *h);
    if (pthread_mutex_init(&h->lock, NULL) != 0)
        return -1;
    first->generation = 1;
    h->current = first;
    atomic_store(&h->generation, 1);
    return 0;
}

void srv_rules_publish(srv_rules_holder *h, srv_rules *r)
{
    pthread_mutex_lock(&h->lock);
    srv_rules *old = h->current;
    r->generation = old->generation + 1;
    h->current = r;
    atomic_store_explicit(&h->generation, r->generation, memory_order_release);
    int last = --old->refs == 0;
    pthread_mutex_unlock(&h->lock);
    if (last)
        bundle_free(old);
}

srv_rules *srv_rules_acquire(srv_rules_holder *h)
{
    pthread_mutex_lock(&h->lock);
    srv_rules *r = h->current;
    r->refs++;
    pthread_mutex_unlock(&h->lock);
    return r;
}

void srv_rules_release(srv_rules_holder *h, srv_rules *r, int defer)
{
    if (r == NULL)
        return;
    pthread_mutex_lock(&h->lock);
    int last = --r->refs == 0;
    if (last && defer) {
        r->next_garbage = h->garbage;
        h->garbage = r;
    }
    pthread_mutex_unlock(&h->lock);
    if (last && !defer)
        bundle_free(r);
    else if (last && h->notify != NULL)
        h->notify(h->notify_ud);
}

void srv_rules_collect(srv_rules_holder *h)
{
    pthread_mutex_lock(&h->lock);
    srv_rules *g = h->garbage;
    h->garbage = NULL;
    pthread_mutex_unlock(&h->lock);
    while (g != NULL) {
        srv_rules *next = g->next_garbage;
        bundle_free(g);
        g = next;
    }
}

void srv_rules_holder_destroy(srv_rules_holder *h)
{
    srv_rules *r = h->current;
    h->current = NULL;
    srv_rules_release(h, r, 0);
    srv_rules_collect(h);
    pthread_mutex_destroy(&h->lock);
}
