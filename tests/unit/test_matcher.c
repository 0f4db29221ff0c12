/*
 * test_matcher.c: a rules file written under one regex library loads
 * under the other, Hyperscan or Vectorscan (vm/matcher.h), with the same
 * verdicts and rewrites. data/matcher-hyperscan.bin and
 * data/matcher-vectorscan.bin are data/matcher.clf compiled by a build
 * against each (data/make_matcher_fixtures.sh); every build loads both,
 * so one of them always has databases another library built, which the
 * loader must rebuild from the stored patterns without reading them. CI
 * runs this in a Hyperscan and a Vectorscan build (.ci/run): each
 * direction once. Then the matcher section itself, on a fresh file: its
 * record says what built it, a foreign record rebuilds, a malformed one
 * is refused.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bytes.h"
#include "format.h"
#include "harness.h"
#include "program.h"
#include "readfile.h"
#include "rw_set.h"

/* data/matcher.clf's verdicts: the same under either library. */
static const struct {
    const char *request, *verdict;
} cases[] = {
    {"GET /\nUser-Agent: Mozilla/5.0 (compatible; GPTBot/1.1)\nAccept: */*", "reject:ai"},
    {"GET /\nUser-Agent: mozilla ccbot/2.0\nAccept: */*", "reject:ai"},
    {"GET /\nUser-Agent: GPTBotX/1.0\nAccept: */*", "accept:"},
    {"GET /\nUser-Agent: Python-Requests/2.31\nAccept: */*", "reject:tool"},
    {"GET /\nUser-Agent: Mozilla/5.0 Spider/2.0\nAccept: */*", "reject:ambiguous"},
    {"GET /\nUser-Agent: Mozilla/5.0 HeadlessChrome/120.0\nAccept: */*", "reject:headless"},
    {"GET /wp-admin/x\nUser-Agent: Mozilla/5.0\nAccept: */*", "reject:probe"},
    {"GET /.env\nUser-Agent: Mozilla/5.0\nAccept: */*", "reject:probe"},
    {"GET /index.php\nUser-Agent: Mozilla/5.0\nAccept: */*", "reject:php"},
    {"GET /\nUser-Agent: Mozilla/5.0", "reject:no-accept"},
    {"GET /\nAccept: */*", "reject:no-ua"},
    {"GET /a.html\nUser-Agent: Mozilla/5.0\nAccept: text/html", "accept:"},
};

static const char BODY[] = "<a href=\"https://origin.example/\">UA-1234-5</a> origin.example";
static const char REWRITTEN[] = "<a href=\"https://clone.example/\">UA-1234-0</a> clone.example";

typedef struct out_buf {
    char data[256];
    size_t len;
} out_buf;

static int sink(void *ud, const char *p, size_t n)
{
    out_buf *b = ud;
    cr_assert(b->len + n < sizeof b->data);
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/* Checks every verdict and the rewrite of p, fed in chunks of 7 bytes. */
static void check_program(const clf_program *p, const char *what)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_str_eq(h_verdict_text(p, cases[i].request), cases[i].verdict,
                         "%s: request %zu", what, i);
    char err[CLF_ERRMSG_SIZE];
    clf_rewrite_scratch *sc;
    clf_rewriter *rw;
    out_buf b = {{0}, 0};
    cr_assert_eq(clf_rewrite_scratch_new(p, &sc, err, sizeof err), CLF_OK, "%s", err);
    cr_assert_eq(clf_rewriter_new(p, "clone", 5, sink, &b, &rw, err, sizeof err), CLF_OK, "%s", err);
    for (size_t at = 0; at < sizeof BODY - 1; at += 7) {
        size_t n = sizeof BODY - 1 - at < 7 ? sizeof BODY - 1 - at : 7;
        cr_assert_eq(clf_rewriter_feed(rw, sc, BODY + at, n), CLF_OK);
    }
    cr_assert_eq(clf_rewriter_finish(rw, sc), CLF_OK);
    cr_assert_eq(b.len, sizeof REWRITTEN - 1, "%s: %.*s", what, (int)b.len, b.data);
    cr_assert(memcmp(b.data, REWRITTEN, b.len) == 0, "%s: %.*s", what, (int)b.len, b.data);
    clf_rewriter_free(rw);
    clf_rewrite_scratch_free(sc);
}

/* 1: every database deserialized as stored; 0: every one rebuilt. */
static int stored_databases_used(const clf_program *p)
{
    int in_place = 0, rebuilt = 0;
    for (uint32_t i = 0; i < p->nsubjects; i++) {
        in_place += p->subjects[i].db_in_place;
        rebuilt += !p->subjects[i].db_in_place;
    }
    for (uint32_t i = 0; i < p->nrewrites; i++) {
        const rw_set *s = p->rewrites[i].set;
        cr_assert(s->litdb && s->redb, "matcher.clf's set has literals and regexes");
        in_place += s->litdb_in_place + s->redb_in_place;
        rebuilt += !s->litdb_in_place + !s->redb_in_place;
    }
    cr_assert(in_place == 0 || rebuilt == 0, "%d databases deserialized, %d rebuilt", in_place,
              rebuilt);
    return in_place > 0;
}

/* A file of tests/unit/data, NUL-terminated (malloc'd). */
static char *fixture(const char *name, size_t *len)
{
    const char *dir = getenv("CLF_TEST_DATA");
    cr_assert(dir, "CLF_TEST_DATA names tests/unit/data (tests/unit/meson.build)");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *b = NULL;
    int errnum = 0;
    cr_assert_eq(cm_read_file(path, 1u << 20, CM_READ_REGULAR, &b, len, &errnum, NULL), CM_READ_OK,
                 "%s: %s", path, strerror(errnum));
    return b;
}

static void check_fixture(const char *name, uint32_t lib)
{
    size_t len;
    uint8_t *b = (uint8_t *)fixture(name, &len);
    cr_assert(len > 12 && vm_rd32(b + 8) == VM_FORMAT_VERSION,
              "%s is format version %u, this build reads %u: regenerate it with "
              "tests/unit/data/make_matcher_fixtures.sh", name, len > 12 ? vm_rd32(b + 8) : 0,
              VM_FORMAT_VERSION);
    clf_program *p = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_load(b, len, NULL, &p, err, sizeof err), CLF_OK, "%s: %s", name, err);
    cr_assert_eq(p->built_by.lib, lib, "%s records library %u", name, p->built_by.lib);
    vm_matcher here = vm_matcher_this();
    int same = p->built_by.lib == here.lib && p->built_by.version == here.version;
    cr_assert_eq(stored_databases_used(p), same,
                 "%s, built by %s %06x, loaded by %s %06x: databases %s", name,
                 vm_matcher_name(p->built_by.lib), p->built_by.version, vm_matcher_name(here.lib),
                 here.version, same ? "rebuilt" : "deserialized");
    check_program(p, name);
    clf_program_free(p);
    free(b);
}

Test(matcher, this_process)
{
    vm_matcher m = vm_matcher_this();
    cr_assert_str_eq(clf_matcher_name(), vm_matcher_name(m.lib));
    cr_assert(m.version >= 0x050000u, "libhs %06x", m.version);
    const char *v = clf_matcher_version();
    char want[32];
    snprintf(want, sizeof want, "%u.%u.%u", m.version >> 16, m.version >> 8 & 0xff, m.version & 0xff);
    cr_assert(strncmp(v, want, strlen(want)) == 0, "hs_version() \"%s\", read as %s", v, want);
    /* the version, then nothing or " YYYY-MM-DD" (never Vectorscan's " )") */
    const char *rest = v + strlen(want);
    cr_assert(*rest == '\0' || (strlen(rest) == 11 && rest[0] == ' ' && rest[5] == '-' && rest[8] == '-'),
              "clf_matcher_version() \"%s\" (hs_version() \"%s\")", v, hs_version());
}

Test(matcher, hyperscan_file) { check_fixture("matcher-hyperscan.bin", VM_MATCHER_HYPERSCAN); }

Test(matcher, vectorscan_file) { check_fixture("matcher-vectorscan.bin", VM_MATCHER_VECTORSCAN); }

/* The fixtures' source compiled here gives the same verdicts (so the
 * fixtures are not stale) and records this process's library. */
Test(matcher, fresh_file)
{
    size_t len;
    char *text = fixture("matcher.clf", &len);
    clf_program *p = h_program(text);
    vm_matcher here = vm_matcher_this();
    cr_assert_eq(p->built_by.lib, here.lib);
    cr_assert_eq(p->built_by.version, here.version);
    cr_assert_eq(stored_databases_used(p), 1);
    check_program(p, "fresh");
    clf_program_free(p);
    free(text);
}

/* The matcher section of a freshly compiled file. */
static uint8_t *matcher_record(uint8_t *b, size_t len)
{
    const uint8_t *e = b + VM_HEADER_LEN + (VM_SEC_MATCHER - 1) * VM_SECENTRY_LEN;
    cr_assert_eq(vm_rd32(e), VM_SEC_MATCHER);
    cr_assert_eq(vm_rd64(e + 16), 8u);
    cr_assert(vm_rd64(e + 8) + 8 <= len);
    return b + vm_rd64(e + 8);
}

static void reseal(uint8_t *b, size_t len) { vm_wr64(b + len - 8, XXH3_64bits(b, len - 8)); }

Test(matcher, foreign_record_rebuilds)
{
    size_t len;
    char *text = fixture("matcher.clf", &len);
    char *d = NULL;
    uint8_t *b = h_compile(text, &len, &d);
    cr_assert(b, "%s", d);
    uint8_t *m = matcher_record(b, len);
    vm_matcher here = vm_matcher_this();
    cr_assert_eq(vm_rd32(m), here.lib);
    cr_assert_eq(vm_rd32(m + 4), here.version);
    char err[CLF_ERRMSG_SIZE];
    clf_program *p;
    /* the other library, then this library at another version */
    uint32_t other = here.lib == VM_MATCHER_HYPERSCAN ? VM_MATCHER_VECTORSCAN : VM_MATCHER_HYPERSCAN;
    const uint32_t records[2][2] = {{other, here.version}, {here.lib, here.version ^ 1u}};
    for (int i = 0; i < 2; i++) {
        vm_wr32(m, records[i][0]);
        vm_wr32(m + 4, records[i][1]);
        reseal(b, len);
        cr_assert_eq(clf_program_load(b, len, NULL, &p, err, sizeof err), CLF_OK, "%s", err);
        cr_assert_eq(stored_databases_used(p), 0, "record %d", i);
        check_program(p, "foreign record");
        clf_program_free(p);
    }
    /* a library this code does not know */
    vm_wr32(m, 3);
    reseal(b, len);
    cr_assert_eq(clf_program_load(b, len, NULL, &p, err, sizeof err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "unknown matcher library 3 (1 is Hyperscan, 2 Vectorscan)");
    free(b);
    free(d);
    free(text);
}
