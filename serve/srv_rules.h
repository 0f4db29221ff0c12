/*
 * srv_rules.h: the rules a worker classifies with, and hot reload.
 *
 * A srv_rules bundles one loaded program with one context per worker,
 * all made (and test-run) by the main thread before the bundle is
 * published, so a worker switching to new rules never allocates and a
 * file that loads but cannot classify is refused before any request sees
 * it. Workers notice a new generation between requests: a request in
 * flight always finishes on the rules it started with. A bundle is freed
 * by whoever drops its last reference (the holder's, or the last worker's).
 */
#ifndef CLI_SRV_RULES_H
#define CLI_SRV_RULES_H

#include <classify.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

typedef struct srv_rules {
    clf_program *prog;
    clf_ipdb *ipdbs[4]; /* the program's IP databases, closed with it */
    unsigned nipdbs;
    clf_ctx **ctx; /* [nctx], ctx[i] for worker i */
    unsigned nctx;
    unsigned refs; /* under srv_rules_holder.lock */
    uint64_t generation;
    size_t file_bytes;
    int reads_rdns; /* clf_program_reads_rdns: classify-serve resolves */
    struct srv_rules *next_garbage;
} srv_rules;

typedef struct srv_rules_holder {
    pthread_mutex_t lock;
    srv_rules *current;
    atomic_uint_least64_t generation; /* current->generation, for a cheap check */
    /* Bundles whose last reference a worker dropped: freeing Hyperscan
     * databases takes time, so workers hand them to the main thread
     * (notify wakes it; srv_rules_collect frees them). */
    srv_rules *garbage;
    void (*notify)(void *ud);
    void *notify_ud;
} srv_rules_holder;

/* Reads and loads `path` with `trusted` proxies (NULL or a list for
 * clf_options_set_trusted_proxies), the IP databases of `ipdbs` (NULL
 * or file names separated by newlines: opened for this bundle, so that a
 * reload picks up a replaced file) and the key ring of `keys` (NULL or a
 * path for clf_keyring_load, read again on every load so that a reload
 * picks up rotated keys), makes `nctx` contexts and classifies
 * one test request with each. Returns a bundle with refs = 1, or NULL
 * with a message in err. When the file could be opened, *seen gets its
 * fstat (so a watcher knows which version it tried, good or bad). */
srv_rules *srv_rules_load(const char *path, const char *trusted, const char *ipdbs,
                          const char *keys, unsigned nctx, struct stat *seen,
                          clf_store **store, uint64_t state_bytes, char *err, size_t errlen);
/* (store: the server's one state store, *store NULL until rules use
 * state: then it is made here, of state_bytes (0: never), and kept by
 * the caller across reloads; every context of the bundle uses it, after
 * its smoke test, which must not count.) */

/* The same file version: device, inode, size, change and modify times. */
int srv_rules_same_file(const struct stat *a, const struct stat *b);

int srv_rules_holder_init(srv_rules_holder *h, srv_rules *first);
/* Publishes `r` (whose reference passes to the holder) and drops the
 * holder's reference to the previous bundle. */
void srv_rules_publish(srv_rules_holder *h, srv_rules *r);
/* A new reference to the current bundle. */
srv_rules *srv_rules_acquire(srv_rules_holder *h);
/* Drops a reference; the last one frees the bundle now (main thread) or
 * queues it for srv_rules_collect (defer = 1, worker threads). */
void srv_rules_release(srv_rules_holder *h, srv_rules *r, int defer);
/* Frees the queued bundles (main thread). */
void srv_rules_collect(srv_rules_holder *h);
/* Drops the holder's reference (at exit). */
void srv_rules_holder_destroy(srv_rules_holder *h);

#endif /* CLI_SRV_RULES_H */
