/*
 * test_rewrite_api.c: the public rewrite API (classify.h, "Rewriting
 * response bodies") on programs compiled from .clf source: finding sets,
 * feeding, finishing and resetting, every status a call documents, the
 * sink stopping a body, statistics, the skip cache, and the program side
 * (a file of rewrite sets only, the disassembly). The engine's own
 * semantics are tested in tests/rewrite/.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char src[] =
    "const ORIGIN = \"origin.example\"\n"
    "rewrite site {\n"
    "    ORIGIN => \"clone.example\"\n"
    "    /UA-(\\d+)-\\d+/ => \"UA-$1-0\" once\n"
    "}\n"
    "rewrite upper(semantics: \"sub_filter\") { \"abc\" => \"ABC\" }\n"
    "filter main(req: Request) { accept }\n";

typedef struct sink_buf {
    char data[4096];
    size_t len;
    int calls;
    int stop_after; /* refuse the call after this many (0: never) */
    int discard;    /* count only */
} sink_buf;

static int sink(void *ud, const char *p, size_t n)
{
    sink_buf *b = ud;
    b->calls++;
    if (b->stop_after && b->calls > b->stop_after) return 1;
    cr_assert(n > 0, "the sink is never called with 0 bytes");
    if (b->discard) {
        b->len += n;
        return 0;
    }
    cr_assert(b->len + n <= sizeof b->data);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static clf_program *prog;
static clf_rewrite_scratch *sc;

static void setup(void)
{
    prog = h_program(src);
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_rewrite_scratch_new(prog, &sc, err, sizeof err), CLF_OK, "%s", err);
}

static void teardown(void)
{
    clf_rewrite_scratch_free(sc);
    clf_program_free(prog);
}

static clf_rewriter *make(const char *set, sink_buf *b)
{
    clf_rewriter *rw = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_rewriter_new(prog, set, strlen(set), sink, b, &rw, err, sizeof err), CLF_OK,
                 "%s", err);
    return rw;
}

/* Feeds s in pieces of `step` bytes, then finishes. */
static void feed_all(clf_rewriter *rw, const char *s, size_t step)
{
    size_t n = strlen(s);
    for (size_t at = 0; at < n; at += step)
        cr_assert_eq(clf_rewriter_feed(rw, sc, s + at, n - at < step ? n - at : step), CLF_OK,
                     "%s", clf_rewriter_errmsg(rw));
    cr_assert_eq(clf_rewriter_finish(rw, sc), CLF_OK, "%s", clf_rewriter_errmsg(rw));
}

TestSuite(rewrite_api, .init = setup, .fini = teardown);

Test(rewrite_api, rewrites_in_any_chunks)
{
    static const char in[] = "see origin.example and UA-123-4 then UA-5-6 origin.example.";
    static const char want[] = "see clone.example and UA-123-0 then UA-5-6 clone.example.";
    for (size_t step = 1; step <= sizeof in; step++) {
        sink_buf b = {0};
        clf_rewriter *rw = make("site", &b);
        feed_all(rw, in, step);
        cr_assert_eq(b.len, strlen(want), "chunks of %zu", step);
        cr_assert(memcmp(b.data, want, b.len) == 0, "chunks of %zu: %.*s", step, (int)b.len,
                  b.data);
        clf_rewrite_stats st;
        cr_assert_eq(clf_rewriter_stats(rw, &st), CLF_OK);
        cr_assert_eq(st.bytes_in, strlen(in));
        cr_assert_eq(st.bytes_out, strlen(want));
        cr_assert_eq(st.replacements, 3);
        cr_assert(st.max_held <= clf_rewriter_holdback(rw));
        cr_assert_eq(st.skipped, 0);
        clf_rewriter_free(rw);
    }
}

Test(rewrite_api, sets_are_found_by_name)
{
    clf_rewriter *rw = (clf_rewriter *)1;
    char err[CLF_ERRMSG_SIZE];
    sink_buf b = {0};
    cr_assert_eq(clf_rewriter_new(prog, "nope", 4, sink, &b, &rw, err, sizeof err), CLF_E_INVALID);
    cr_assert_null(rw);
    cr_assert_str_eq(err, "no rewrite set 'nope' in the rules file (its rewrite sets: site, upper)");
    /* names are bytes with a length: a prefix is another name */
    cr_assert_eq(clf_rewriter_new(prog, "sitex", 4, sink, &b, &rw, err, sizeof err), CLF_OK);
    clf_rewriter_free(rw);
    cr_assert_eq(clf_rewriter_new(prog, "site", 3, sink, &b, &rw, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_rewriter_new(NULL, "site", 4, sink, &b, &rw, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_rewriter_new(prog, "site", 4, NULL, &b, &rw, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_rewriter_new(prog, "site", 4, sink, &b, NULL, err, sizeof err), CLF_E_INVALID);
    /* sub_filter semantics: ASCII case-insensitive */
    rw = make("upper", &b);
    feed_all(rw, "abc AbC xbcabc", 5);
    cr_assert_eq(b.len, 14);
    cr_assert(memcmp(b.data, "ABC ABC xbcABC", 14) == 0, "%.*s", (int)b.len, b.data);
    clf_rewriter_free(rw);
}

Test(rewrite_api, states_and_reset)
{
    sink_buf b = {0};
    clf_rewriter *rw = make("site", &b);
    cr_assert_eq(clf_rewriter_feed(rw, sc, NULL, 0), CLF_OK, "an empty chunk is fine");
    cr_assert_eq(clf_rewriter_feed(rw, NULL, "x", 1), CLF_E_INVALID);
    cr_assert_eq(clf_rewriter_feed(NULL, sc, "x", 1), CLF_E_INVALID);
    cr_assert_eq(clf_rewriter_feed(rw, sc, NULL, 1), CLF_E_INVALID);
    feed_all(rw, "origin.example", 4);
    cr_assert_eq(clf_rewriter_feed(rw, sc, "x", 1), CLF_E_STATE, "a finished body takes no more");
    cr_assert_eq(clf_rewriter_finish(rw, sc), CLF_E_STATE);
    cr_assert_eq(clf_rewriter_reset(rw, sink, &b), CLF_OK);
    cr_assert_eq(clf_rewriter_reset(NULL, sink, &b), CLF_E_INVALID);
    b.len = 0;
    feed_all(rw, "origin.example UA-1-2 UA-3-4", 100); /* once fires again after a reset */
    cr_assert(memcmp(b.data, "clone.example UA-1-0 UA-3-4", b.len) == 0, "%.*s", (int)b.len,
              b.data);
    cr_assert_str_eq(clf_rewriter_errmsg(rw), "");
    /* feed_final: the last chunk and the end in one call */
    clf_rewriter_reset(rw, sink, &b);
    b.len = 0;
    cr_assert_eq(clf_rewriter_feed_final(rw, sc, "xx origin.example", 17), CLF_OK);
    cr_assert(b.len == 16 && memcmp(b.data, "xx clone.example", 16) == 0);
    cr_assert_eq(clf_rewriter_feed(rw, sc, "x", 1), CLF_E_STATE);
    clf_rewriter_free(rw);
}

Test(rewrite_api, a_sink_that_stops_fails_the_body)
{
    sink_buf b = {.stop_after = 1};
    clf_rewriter *rw = make("site", &b);
    clf_status st = CLF_OK;
    const char *chunk = "origin.example plain text ";
    for (int i = 0; i < 100 && st == CLF_OK; i++) st = clf_rewriter_feed(rw, sc, chunk, strlen(chunk));
    cr_assert_eq(st, CLF_E_SINK);
    cr_assert(strlen(clf_rewriter_errmsg(rw)) > 0);
    cr_assert_eq(clf_rewriter_feed(rw, sc, "x", 1), CLF_E_STATE, "the body is failed");
    cr_assert_eq(clf_rewriter_finish(rw, sc), CLF_E_STATE);
    b.stop_after = 0;
    b.len = 0;
    cr_assert_eq(clf_rewriter_reset(rw, sink, &b), CLF_OK);
    feed_all(rw, "origin.example", 3);
    cr_assert(b.len == 13 && memcmp(b.data, "clone.example", 13) == 0);
    clf_rewriter_free(rw);
}

Test(rewrite_api, a_scratch_serves_one_program)
{
    clf_program *other = h_program("rewrite site { \"a\" => \"b\" }\n");
    clf_rewrite_scratch *osc = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_rewrite_scratch_new(other, &osc, err, sizeof err), CLF_OK, "%s", err);
    sink_buf b = {0};
    clf_rewriter *rw = make("site", &b);
    cr_assert_eq(clf_rewriter_feed(rw, osc, "abc", 3), CLF_E_INVALID);
    cr_assert_eq(clf_rewriter_feed(rw, sc, "abc", 3), CLF_OK, "the right scratch still works");
    clf_rewriter_free(rw);
    clf_rewrite_scratch_free(osc);
    clf_program_free(other);
    /* a program without rewrite sets has no scratch */
    clf_program *none = h_program("filter main(req: Request) { accept }\n");
    cr_assert_eq(clf_rewrite_scratch_new(none, &osc, err, sizeof err), CLF_E_INVALID);
    cr_assert_str_eq(err, "the rules file has no rewrite sets");
    cr_assert_null(osc);
    clf_program_free(none);
}

Test(rewrite_api, the_skip_cache)
{
    clf_rewrite_cache *c = NULL, *up = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_rewrite_cache_new(prog, "site", 4, 0, &c, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_rewrite_cache_new(prog, "nope", 4, 8, &c, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_rewrite_cache_new(prog, "site", 4, 16, &c, err, sizeof err), CLF_OK, "%s", err);
    cr_assert_eq(clf_rewrite_cache_new(prog, "upper", 5, 16, &up, err, sizeof err), CLF_OK);
    sink_buf b = {0};
    clf_rewriter *rw = make("site", &b);
    cr_assert_eq(clf_rewriter_use_cache(rw, up, "k", 1), CLF_E_INVALID, "another set's cache");

    /* a page nothing matches: stored; the next time it is copied unscanned */
    static const char plain[] = "nothing to see here";
    clf_rewrite_stats st;
    for (int round = 0; round < 2; round++) {
        clf_rewriter_reset(rw, sink, &b);
        b.len = 0;
        cr_assert_eq(clf_rewriter_use_cache(rw, c, "/plain etag-1", 13), CLF_OK);
        feed_all(rw, plain, 7);
        cr_assert(b.len == strlen(plain) && memcmp(b.data, plain, b.len) == 0);
        clf_rewriter_stats(rw, &st);
        cr_assert_eq(st.skipped, round, "round %d", round);
    }
    /* a page a rule fires on is scanned every time */
    for (int round = 0; round < 2; round++) {
        clf_rewriter_reset(rw, sink, &b);
        b.len = 0;
        cr_assert_eq(clf_rewriter_use_cache(rw, c, "/page etag-1", 12), CLF_OK);
        feed_all(rw, "at origin.example", 5);
        cr_assert(b.len == 16 && memcmp(b.data, "at clone.example", 16) == 0);
        clf_rewriter_stats(rw, &st);
        cr_assert_eq(st.skipped, 0);
        cr_assert_eq(st.replacements, 1);
    }
    /* the key is the whole of its bytes: another ETag is another resource */
    clf_rewriter_reset(rw, sink, &b);
    cr_assert_eq(clf_rewriter_use_cache(rw, c, "/plain etag-2", 13), CLF_OK);
    feed_all(rw, plain, 100);
    clf_rewriter_stats(rw, &st);
    cr_assert_eq(st.skipped, 0);
    /* too late once the body has started */
    clf_rewriter_reset(rw, sink, &b);
    cr_assert_eq(clf_rewriter_feed(rw, sc, "x", 1), CLF_OK);
    cr_assert_eq(clf_rewriter_use_cache(rw, c, "/plain etag-1", 13), CLF_E_STATE);
    clf_rewrite_cache_stats cs;
    cr_assert_eq(clf_rewrite_cache_stats_get(c, &cs), CLF_OK);
    /* hits: the second round of each page; misses: their first rounds and etag-2 */
    cr_assert_eq(cs.hits, 2, "hits %llu", (unsigned long long)cs.hits);
    cr_assert_eq(cs.misses, 3, "misses %llu", (unsigned long long)cs.misses);
    /* stores: every scanned body (a skipped one has nothing new to say) */
    cr_assert_eq(cs.stores, 4, "stores %llu", (unsigned long long)cs.stores);
    clf_rewriter_free(rw);

    /* a full table evicts: 1,000 keys through 16 slots */
    rw = make("site", &b);
    for (int i = 0; i < 1000; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "/k%d", i);
        clf_rewriter_reset(rw, sink, &b);
        b.len = 0;
        clf_rewriter_use_cache(rw, c, key, (size_t)n);
        feed_all(rw, plain, 100);
    }
    clf_rewrite_cache_stats_get(c, &cs);
    cr_assert(cs.evictions >= 1000 - 16, "evictions %llu", (unsigned long long)cs.evictions);
    clf_rewriter_free(rw);
    clf_rewrite_cache_free(c);
    clf_rewrite_cache_free(up);
}

Test(rewrite_api, a_file_of_rewrite_sets_only)
{
    clf_program *p = h_program("rewrite only { \"a\" => \"b\" }\n");
    clf_ctx *ctx = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_ctx_new(p, &ctx, err, sizeof err), CLF_OK, "%s", err);
    clf_verdict v;
    cr_assert_eq(clf_eval(ctx, &v), CLF_E_STATE, "no main: no verdict");
    uint32_t f;
    cr_assert_eq(clf_program_find_filter(p, "main", 4, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert_str_eq(err, "no filter 'main': the rules file has no entry filters, only rewrite sets");
    char *dis = h_disasm(p);
    cr_assert(strstr(dis, "rewrite W0 only: leftmost_longest, max_match 8192, 1 rule, "
                          "hold-back 3 bytes") != NULL, "%s", dis);
    cr_assert(strstr(dis, "W0.0 literal \"a\" => \"b\": 1 bytes") != NULL, "%s", dis);
    free(dis);
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* Regression: a body on which replace_filter semantics gave up at its
 * buffer cap was stored as "no rule fired", so the next request for the
 * same key skipped a body the rules do rewrite. */
Test(rewrite_api, a_given_up_body_is_not_cached)
{
    clf_program *p = h_program("rewrite rf(semantics: \"replace_filter\", max_match: 4) {\n"
                               "    /a[^z]*z/ => \"Z\"\n"
                               "    \"q\" => \"Q\"\n"
                               "}\n");
    char err[CLF_ERRMSG_SIZE];
    clf_rewrite_scratch *s2 = NULL;
    clf_rewrite_cache *c = NULL;
    clf_rewriter *rw = NULL;
    sink_buf b = {.discard = 1};
    cr_assert_eq(clf_rewrite_scratch_new(p, &s2, err, sizeof err), CLF_OK, "%s", err);
    cr_assert_eq(clf_rewrite_cache_new(p, "rf", 2, 8, &c, err, sizeof err), CLF_OK);
    cr_assert_eq(clf_rewriter_new(p, "rf", 2, sink, &b, &rw, err, sizeof err), CLF_OK);
    /* an attempt at 'a' that never ends passes the cap; a later "q" goes through unscanned */
    char body[9000];
    memset(body, 'x', sizeof body);
    body[0] = 'a';
    body[sizeof body - 1] = 'q';
    clf_rewrite_stats st;
    for (int round = 0; round < 2; round++) {
        clf_rewriter_reset(rw, sink, &b);
        cr_assert_eq(clf_rewriter_use_cache(rw, c, "/big", 4), CLF_OK);
        for (size_t at = 0; at < sizeof body; at += 1000)
            cr_assert_eq(clf_rewriter_feed(rw, s2, body + at, sizeof body - at < 1000 ? sizeof body - at : 1000), CLF_OK);
        cr_assert_eq(clf_rewriter_finish(rw, s2), CLF_OK);
        clf_rewriter_stats(rw, &st);
        cr_assert_eq(st.gave_up, 1, "round %d: the cap was passed", round);
        cr_assert_eq(st.skipped, 0, "round %d: never skipped", round);
    }
    clf_rewrite_cache_stats cs;
    clf_rewrite_cache_stats_get(c, &cs);
    cr_assert_eq(cs.stores, 0);
    clf_rewriter_free(rw);
    clf_rewrite_cache_free(c);
    clf_rewrite_scratch_free(s2);
    clf_program_free(p);
}
