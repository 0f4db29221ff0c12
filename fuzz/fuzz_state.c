/*
 * fuzz_state.c: the state store's entry points for what a sync layer
 * hands it from outside (Redis): key text and values (clf_store_merge,
 * clf_store_peek, clf_store_poke), and the calls a request makes on the
 * same keys (count, score, mark) with any clock, on a small store that
 * evicts. The input is lines: "OP KEY" then up to three decimal numbers,
 * OP one of merge, peek, poke, count, score, mark, collect.
 *
 * Checks: no crash or sanitizer report; every read is 0 or more; a key
 * that does not parse is refused (CLF_E_INVALID), never stored; collect
 * gives each changed entry once and walks the whole store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "store.h"

static clf_store *store;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const uint8_t seed[16] = {1};
    char err[CLF_ERRMSG_SIZE];
    if (clf_store_new(CLF_STORE_MIN_BYTES, seed, &store, err, sizeof err) != CLF_OK)
        FUZZ_FAIL("clf_store_new: %s", err);
    return 0;
}

static void on_delta(void *ud, const clf_state_delta *d)
{
    (void)ud;
    int kind;
    uint32_t param;
    if (!vm_state_key_parse(d->key, d->keylen, &kind, &param) || (int)d->kind != kind ||
        d->param != param)
        FUZZ_FAIL("collect gave a delta whose key does not say its kind and period");
}

static void one(const char *op, const char *key, size_t kn, const int64_t *v)
{
    int kind;
    uint32_t param;
    int parses = vm_state_key_parse(key, kn, &kind, &param);
    int64_t out = 0;
    clf_status st = CLF_OK;
    int64_t now = v[0];
    if (strcmp(op, "merge") == 0) {
        clf_state_remote r = {key, kn, v[1], (uint64_t)v[2], (uint64_t)v[1], (double)v[2] / 7,
                              v[0], v[2]};
        st = clf_store_merge(store, &r);
    } else if (strcmp(op, "peek") == 0) {
        st = clf_store_peek(store, key, kn, now, &out);
    } else if (strcmp(op, "poke") == 0) {
        st = clf_store_poke(store, key, kn, now, v[1]);
    } else if (parses && kn <= CLF_STATE_KEY_MAX && strcmp(op, "count") == 0) {
        vm_store_count(store, key, kn, param, (uint32_t)v[1], now, &out);
    } else if (parses && kn <= CLF_STATE_KEY_MAX && strcmp(op, "score") == 0) {
        double d = 0;
        vm_store_score(store, key, kn, param, v[1] < 0 ? 0 : v[1] % 1000001, now, &d);
        if (!(d >= 0)) FUZZ_FAIL("a score read %g", d);
    } else if (parses && kn <= CLF_STATE_KEY_MAX && strcmp(op, "mark") == 0) {
        int m = 0;
        vm_store_mark(store, key, kn, param, (int)(v[1] & 1), now, &m);
        out = m;
    } else if (strcmp(op, "collect") == 0) {
        uint32_t cursor = 0;
        do clf_store_collect(store, &cursor, (uint32_t)(v[0] & 63) + 1, on_delta, NULL);
        while (cursor != 0);
    }
    if (out < 0) FUZZ_FAIL("%s %.*s read %lld", op, (int)kn, key, (long long)out);
    if (!parses && st != CLF_E_INVALID && (strcmp(op, "merge") == 0 || strcmp(op, "peek") == 0))
        FUZZ_FAIL("%s accepted a key that does not parse", op);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    for (char *line = text, *next; line && line < text + size; line = next) {
        char *nl = memchr(line, '\n', (size_t)(text + size - line));
        next = nl ? nl + 1 : NULL;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *sp = memchr(line, ' ', len);
        if (!sp) continue;
        char op[16];
        size_t on = (size_t)(sp - line) < sizeof op - 1 ? (size_t)(sp - line) : sizeof op - 1;
        memcpy(op, line, on);
        op[on] = 0;
        /* KEY runs to the next " |" (keys may hold spaces), then numbers */
        const char *key = sp + 1, *end = line + len, *bar = NULL;
        for (const char *p = key; p + 1 < end; p++)
            if (p[0] == ' ' && p[1] == '|') bar = p;
        size_t kn = (size_t)((bar ? bar : end) - key);
        int64_t v[3] = {0, 0, 0};
        if (bar) {
            char nums[96];
            size_t nn = (size_t)(end - bar - 2) < sizeof nums - 1 ? (size_t)(end - bar - 2) : sizeof nums - 1;
            memcpy(nums, bar + 2, nn);
            nums[nn] = 0;
            char *p = nums;
            for (int k = 0; k < 3; k++) v[k] = strtoll(p, &p, 10);
        }
        one(op, key, kn, v);
    }
    free(text);
    return 0;
}
