/*
 * fuzz_rdns.c: libFuzzer target for what classify-serve does itself with
 * the names DNS answers with (fuzz/README.md): srv_rdns_host_name, the
 * check a PTR name passes before it is queried, stored or handed to the
 * rules, and the cache that keeps it (serve/srv_rdns_cache.c). c-ares
 * parses the DNS messages; this is the part that is ours.
 *
 * The input is a name as c-ares could return it (any bytes). It aborts
 * (FUZZ_FAIL) when:
 *   - a name is accepted that is empty, longer than 253 bytes, has an
 *     empty label or one over 63 bytes, or a byte other than a-z, 0-9,
 *     '-', '_' and '.' in the result; or the result is not the input
 *     lower-cased without one trailing dot;
 *   - a name is refused that is such a host name (the check is exact);
 *   - clf_ctx_set_rdns refuses an accepted name (the rules would then
 *     never see a name the cache hands out);
 *   - the cache, given the input as a confirmed name, hands back anything
 *     but the checked name, or a confirmed state for a refused one.
 * Inputs over 1 KiB are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "srv_rdns_cache.h"

#ifndef FUZZ_RULES_PATH
#error "FUZZ_RULES_PATH: the compiled examples/main.clf (fuzz/meson.build)"
#endif

static clf_program *prog;
static clf_ctx *ctx;
static srv_rdns_cache *cache;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    size_t len = 0;
    uint8_t *bytes = fuzz_read_file(FUZZ_RULES_PATH, &len);
    char err[CLF_ERRMSG_SIZE];
    if (!bytes || clf_program_load(bytes, len, NULL, &prog, err, sizeof err) != CLF_OK ||
        clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK) {
        fprintf(stderr, "%s: cannot load\n", FUZZ_RULES_PATH);
        exit(1);
    }
    free(bytes);
    if (srv_rdns_cache_new(4, &cache) != 0)
        exit(1);
    return 0;
}

static int host_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* The same rule, written the other way: split at dots, look at labels. */
static int is_host_name(const uint8_t *p, size_t n)
{
    if (n > 0 && p[n - 1] == '.')
        n--;
    if (n == 0 || n > SRV_RDNS_NAME_MAX)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '.') {
            if (i == start || i - start > 63)
                return 0;
            start = i + 1;
        } else if (!host_char(p[i])) {
            return 0;
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx) LLVMFuzzerInitialize(NULL, NULL);
    if (size > 1024) return 0;
    char out[SRV_RDNS_NAME_MAX + 1];
    memset(out, 0x55, sizeof out);
    int n = srv_rdns_host_name((const char *)data, size, out);
    int want = is_host_name(data, size);
    if ((n >= 0) != want)
        FUZZ_FAIL("srv_rdns_host_name says %d for a name that is%s a host name", n, want ? "" : " not");
    if (n >= 0) {
        size_t expect = size && data[size - 1] == '.' ? size - 1 : size;
        if ((size_t)n != expect || out[n] != '\0')
            FUZZ_FAIL("length %d, want %zu, NUL-terminated", n, expect);
        for (int i = 0; i < n; i++) {
            unsigned char c = data[i];
            if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
            if ((unsigned char)out[i] != c)
                FUZZ_FAIL("byte %d is 0x%02x, want 0x%02x", i, (unsigned char)out[i], c);
        }
        clf_ctx_reset(ctx);
        if (clf_ctx_set_rdns(ctx, out, (size_t)n) != CLF_OK)
            FUZZ_FAIL("clf_ctx_set_rdns refuses %s: %s", out, clf_ctx_errmsg(ctx));
    }
    static const uint8_t addr[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};
    char got[SRV_RDNS_NAME_MAX + 1];
    size_t glen = 0;
    srv_rdns_cache_put(cache, addr, 0, SRV_RDNS_CONFIRMED, (const char *)data, size, 1000);
    srv_rdns_state st = srv_rdns_cache_get(cache, addr, 1, 0, got, &glen);
    if (n >= 0 && (st != SRV_RDNS_CONFIRMED || glen != (size_t)n || memcmp(got, out, glen + 1) != 0))
        FUZZ_FAIL("the cache gave state %d, %zu bytes, for %s", (int)st, glen, out);
    if (n < 0 && st != SRV_RDNS_NONAME)
        FUZZ_FAIL("the cache gave state %d for a name that is not a host name", (int)st);
    return 0;
}
