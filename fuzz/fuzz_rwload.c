/*
 * fuzz_rwload.c: hostile bytes through rw_set_load, the rewrite engine's
 * stored-form loader (rewrite/rw_store.c).
 *
 * Each input is loaded as given; a set that loads rewrites a fixed body,
 * whole and in 3-byte chunks (statuses from rw_stream.h's list only: a
 * hostile set may hold patterns and databases that disagree, which may
 * change the output, never the memory safety). A failed load must return
 * a listed status, leave *out NULL and write a message. Inputs over 1 MiB
 * are skipped.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"
#include "rw_stream.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static int sink(void *ud, const uint8_t *p, size_t n)
{
    (void)p;
    *(size_t *)ud += n;
    return 0;
}

static const char body[] =
    "<a href=\"https://www.origin.example/x\">UA-1234-5 foo foo\nbar</a> xaab aaaa <!-- c -->";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20)) return 0;
    rw_set *s = (rw_set *)&s;
    char err[256];
    memset(err, 'x', sizeof err);
    rw_status st = rw_set_load(data, size, NULL, &s, err, sizeof err);
    if (fuzz_verbose()) fprintf(stderr, "fuzz: load: %s %.*s\n", rw_status_name(st), st ? 200 : 0, err);
    if (st != RW_OK) {
        if (st != RW_E_FORMAT && st != RW_E_VERSION && st != RW_E_NOMEM && st != RW_E_BACKEND)
            FUZZ_FAIL("rw_set_load returned %s", rw_status_name(st));
        if (s) FUZZ_FAIL("a failed load left *out set");
        if (!memchr(err, 0, sizeof err) || !err[0]) FUZZ_FAIL("a failed load wrote no message");
        return 0;
    }
    if (!s) FUZZ_FAIL("RW_OK and no set");
    rw_scratch *sc = NULL;
    if (rw_scratch_new(s, NULL, &sc) == RW_OK) {
        for (int chunked = 0; chunked < 2; chunked++) {
            size_t out = 0;
            rw_stream *str = NULL;
            if (rw_stream_new(s, NULL, sink, &out, &str) != RW_OK) continue;
            size_t len = sizeof body - 1;
            rw_status rc = RW_OK;
            for (size_t at = 0; at < len && !rc; at += chunked ? 3 : len)
                rc = rw_stream_feed(str, sc, body + at, len - at < 3 || !chunked ? len - at : 3);
            if (!rc) rc = rw_stream_finish(str, sc);
            if (rc != RW_OK && rc != RW_E_LIMIT && rc != RW_E_BACKEND)
                FUZZ_FAIL("a loaded set streams with %s", rw_status_name(rc));
            rw_stream_free(str);
        }
        rw_scratch_free(sc);
    }
    rw_set_free(s);
    return 0;
}
