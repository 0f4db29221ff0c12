/*
 * store.c: the public face of the state store (classify.h, "State"):
 * argument checks and lifetimes; vm/store.c does the work.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, getrandom */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "classify.h"
#include "ctx.h"
#include "program.h"
#include "store.h"

CLF_API clf_status clf_store_wrap(const clf_store_ops *ops, void *self, clf_store **out)
{
    if (!out) return CLF_E_INVALID;
    *out = NULL;
    if (!ops || !ops->count || !ops->score || !ops->mark) return CLF_E_INVALID;
    return vm_store_wrap(ops, self, out);
}

CLF_API clf_status clf_store_new(uint64_t bytes, const uint8_t seed[16], clf_store **out,
                                 char *err, size_t errlen)
{
    if (!out) return CLF_E_INVALID;
    *out = NULL;
    if (bytes < CLF_STORE_MIN_BYTES || bytes > (UINT64_C(1) << 40)) {
        vm_errf(err, errlen, "a store of %llu bytes: it must hold %llu to 2^40 bytes",
                (unsigned long long)bytes, (unsigned long long)CLF_STORE_MIN_BYTES);
        return CLF_E_INVALID;
    }
    void *mem = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
    if (mem == MAP_FAILED) {
        vm_errf(err, errlen, "cannot map %llu bytes for the store", (unsigned long long)bytes);
        return CLF_E_NOMEM;
    }
    /* Huge pages where the kernel has them: a lookup lands anywhere in
     * the region, and 4 KiB pages would make most lookups a TLB miss too.
     * Advice only: without it the store works the same. */
#ifdef MADV_HUGEPAGE
    madvise(mem, (size_t)bytes, MADV_HUGEPAGE);
#endif
    clf_status st = vm_store_format(mem, bytes, seed, err, errlen);
    if (!st) st = vm_store_attach(mem, bytes, 1, out, err, errlen);
    if (st) munmap(mem, (size_t)bytes);
    return st;
}

CLF_API clf_status clf_store_format(void *mem, uint64_t bytes, const uint8_t seed[16],
                                    char *err, size_t errlen)
{
    return vm_store_format(mem, bytes, seed, err, errlen);
}

CLF_API clf_status clf_store_attach(void *mem, uint64_t bytes, clf_store **out, char *err,
                                    size_t errlen)
{
    if (!out) return CLF_E_INVALID;
    *out = NULL;
    return vm_store_attach(mem, bytes, 0, out, err, errlen);
}

CLF_API void clf_store_free(clf_store *store) { vm_store_free(store); }

CLF_API void clf_store_get_stats(const clf_store *store, clf_store_stats *out)
{
    if (out) vm_store_stats(store, out);
}

CLF_API int clf_program_uses_state(const clf_program *prog)
{
    return prog && prog->nslots > 0;
}

CLF_API clf_status clf_ctx_set_store(clf_ctx *ctx, clf_store *store)
{
    if (!ctx) return CLF_E_INVALID;
    ctx->store = store;
    return CLF_OK;
}

CLF_API clf_status clf_ctx_set_time_ms(clf_ctx *ctx, int64_t ms)
{
    if (!ctx) return CLF_E_INVALID;
    ctx->time_ms = ms;
    ctx->time = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    ctx->time_set = 1;
    return CLF_OK;
}

CLF_API clf_status clf_store_collect(clf_store *store, uint32_t *cursor, uint32_t max_buckets,
                                     clf_state_delta_fn fn, void *ud)
{
    if (!vm_store_builtin(store) || !cursor || !fn) return CLF_E_INVALID;
    return vm_store_collect(store, cursor, max_buckets, fn, ud);
}

CLF_API clf_status clf_store_merge(clf_store *store, const clf_state_remote *remote)
{
    if (!vm_store_builtin(store) || !remote) return CLF_E_INVALID;
    return vm_store_merge(store, remote);
}

CLF_API clf_status clf_store_peek(clf_store *store, const char *key, size_t keylen,
                                  int64_t now_ms, int64_t *out)
{
    if (out) *out = 0;
    if (!vm_store_builtin(store) || !key || !out) return CLF_E_INVALID;
    return vm_store_peek(store, key, keylen, now_ms, out);
}

CLF_API clf_status clf_store_poke(clf_store *store, const char *key, size_t keylen,
                                  int64_t now_ms, int64_t value)
{
    if (!vm_store_builtin(store) || !key) return CLF_E_INVALID;
    return vm_store_poke(store, key, keylen, now_ms, value);
}
