/*
 * test_loader.c: the loader refuses every kind of damaged rules file with
 * a message saying which check failed, and never crashes.
 */
#include <stdio.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bytes.h"
#include "format.h"
#include "harness.h"

static const char *const SRC =
    "const A = [\"GPTBot\", \"CCBot\"]i\n"
    "filter main(r: Request) {\n"
    "  let ua = r.header(\"user-agent\")\n"
    "  if ua == \"\" { reject \"no-ua\" }\n"
    "  if ua.contains_word(A) { reject \"ai\" }\n"
    "  if r.path.matches(/^\\/wp-admin/) { reject \"probe\" }\n"
    "  accept\n"
    "}\n";

static uint8_t *good(size_t *len)
{
    char *d = NULL;
    uint8_t *b = h_compile(SRC, len, &d);
    cr_assert(b, "%s", d);
    free(d);
    return b;
}

/* Loads and returns the status; the message goes to err. */
static clf_status load(const uint8_t *b, size_t len, char *err)
{
    clf_program *p = (clf_program *)1;
    clf_status st = clf_program_load(b, len, NULL, &p, err, CLF_ERRMSG_SIZE);
    if (st == CLF_OK) {
        clf_program_free(p);
    } else {
        cr_assert_null(p, "a failed load must store NULL");
    }
    return st;
}

/* Rewrites the checksum so that a deliberate change reaches the later
 * checks. */
static void reseal(uint8_t *b, size_t len)
{
    vm_wr64(b + len - 8, XXH3_64bits(b, len - 8));
}

Test(loader, good_file_loads)
{
    size_t len;
    uint8_t *b = good(&len);
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(load(b, len, err), CLF_OK, "%s", err);
    free(b);
}

Test(loader, bad_magic)
{
    size_t len;
    uint8_t *b = good(&len);
    char err[CLF_ERRMSG_SIZE];
    b[1] = 'X';
    cr_assert_eq(load(b, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "bad magic number: not a compiled rules file");
    memcpy(b, "\x89" "CLF\n\x1a\n", 7); /* CRLF turned into LF */
    cr_assert_eq(load(b, len, err), CLF_E_FORMAT);
    cr_assert(strstr(err, "altered in transfer"), "%s", err);
    cr_assert_eq(load((const uint8_t *)"hello", 5, err), CLF_E_FORMAT);
    cr_assert_eq(load(b, 0, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "the file is empty");
    cr_assert_eq(load(b, 4, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "truncated: 4 bytes, shorter than the header");
    free(b);
}

Test(loader, bad_version)
{
    size_t len;
    uint8_t *b = good(&len);
    char err[CLF_ERRMSG_SIZE];
    vm_wr32(b + 8, VM_FORMAT_VERSION + 1);
    cr_assert_eq(load(b, len, err), CLF_E_VERSION);
    char want[96];
    snprintf(want, sizeof want, "unsupported format version %u (this library reads version %u)",
             VM_FORMAT_VERSION + 1, VM_FORMAT_VERSION);
    cr_assert(strstr(err, want), "%s", err);
    /* A file of the previous version is refused too. */
    vm_wr32(b + 8, VM_FORMAT_VERSION - 1);
    cr_assert_eq(load(b, len, err), CLF_E_VERSION);
    snprintf(want, sizeof want, "unsupported format version %u (this library reads version %u)",
             VM_FORMAT_VERSION - 1, VM_FORMAT_VERSION);
    cr_assert(strstr(err, want), "%s", err);
    free(b);
}

Test(loader, bad_checksum)
{
    size_t len;
    uint8_t *b = good(&len);
    char err[CLF_ERRMSG_SIZE];
    b[len / 2] ^= 0x40;
    cr_assert_eq(load(b, len, err), CLF_E_FORMAT);
    cr_assert(strstr(err, "checksum mismatch"), "%s", err);
    free(b);
}

Test(loader, truncation_at_several_offsets)
{
    size_t len;
    uint8_t *b = good(&len);
    char err[CLF_ERRMSG_SIZE];
    size_t cuts[] = {1, 7, 8, 12, 23, 24, 100, len / 2, len - 9, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        clf_status st = load(b, cuts[i], err);
        cr_assert_eq(st, CLF_E_FORMAT, "cut at %zu: %s", cuts[i], err);
        if (cuts[i] >= 24)
            cr_assert(strstr(err, "truncated"), "cut at %zu: %s", cuts[i], err);
    }
    free(b);
}

Test(loader, trailing_bytes)
{
    size_t len;
    uint8_t *b = good(&len);
    uint8_t *c = malloc(len + 3);
    memcpy(c, b, len);
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(load(c, len + 3, err), CLF_E_FORMAT);
    cr_assert(strstr(err, "trailing data"), "%s", err);
    free(b);
    free(c);
}

Test(loader, size_limit)
{
    size_t len;
    uint8_t *b = good(&len);
    clf_options *o;
    cr_assert_eq(clf_options_new(&o), CLF_OK);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_FILE_BYTES, 100), CLF_OK);
    clf_program *p;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_load(b, len, o, &p, err, sizeof err), CLF_E_LIMIT);
    cr_assert(strstr(err, "over the limit of 100 bytes"), "%s", err);
    clf_options_free(o);
    free(b);
}

Test(loader, section_outside_file)
{
    size_t len;
    uint8_t *b = good(&len);
    char err[CLF_ERRMSG_SIZE];
    /* Section 3 (code): size far past the end. */
    vm_wr64(b + VM_HEADER_LEN + 2 * VM_SECENTRY_LEN + 16, UINT64_C(1) << 40);
    reseal(b, len);
    cr_assert_eq(load(b, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "code section lies outside the file");
    free(b);
}

/* Every single-byte change and every truncation is refused or, if the
 * checksum happens to be what changed into something valid (it cannot,
 * but the test would say so), loads a program that classifies safely. */
Test(loader, every_byte_flip_and_truncation)
{
    size_t len;
    uint8_t *b = good(&len);
    uint8_t *c = malloc(len);
    char err[CLF_ERRMSG_SIZE];
    for (size_t i = 0; i < len; i++) {
        memcpy(c, b, len);
        c[i] ^= 0x01;
        cr_assert_neq(load(c, len, err), CLF_OK, "flip at %zu loaded", i);
    }
    for (size_t n = 0; n < len; n++) cr_assert_neq(load(b, n, err), CLF_OK, "cut %zu loaded", n);
    free(c);
    free(b);
}

/* With the checksum recomputed, damage reaches the structural checks and
 * the verifier: each flip must be refused or give a program that runs. */
Test(loader, resealed_byte_flips_never_crash)
{
    size_t len;
    uint8_t *b = good(&len);
    uint8_t *c = malloc(len);
    char err[CLF_ERRMSG_SIZE];
    size_t hs_start = 0;
    /* Skip the Hyperscan blobs: their integrity is Hyperscan's to check
     * (it keeps its own CRC), and the XXH3 checksum guards them here. */
    hs_start = vm_rd64(b + VM_HEADER_LEN + 8 * VM_SECENTRY_LEN + 8);
    unsigned loaded = 0;
    for (size_t i = 0; i < hs_start; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(c, b, len);
            c[i] ^= (uint8_t)(1u << bit);
            reseal(c, len);
            clf_program *p = NULL;
            if (clf_program_load(c, len, NULL, &p, err, sizeof err) != CLF_OK) continue;
            loaded++;
            clf_ctx *ctx;
            cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
            h_result r = h_classify(ctx, "GET /wp-admin\nUser-Agent: GPTBot");
            cr_assert(r.status == CLF_OK || r.status == CLF_E_LIMIT);
            clf_ctx_free(ctx);
            clf_program_free(p);
        }
    }
    /* Some flips are harmless (a reason's text, a source position). */
    cr_assert_gt(loaded, 0);
    free(c);
    free(b);
}

/* A database from another Hyperscan version (HS_DB_VERSION_ERROR) is
 * rebuilt from the stored patterns, and classification is unchanged. */
Test(loader, foreign_database_is_rebuilt)
{
    size_t len;
    uint8_t *b = good(&len);
    const uint8_t *tab = b + VM_HEADER_LEN + (VM_SEC_HSDB - 1) * VM_SECENTRY_LEN;
    uint64_t sec = vm_rd64(tab + 8);
    uint32_t nsubj = 2; /* user-agent and path */
    for (uint32_t i = 0; i < nsubj; i++) {
        uint8_t *blob = b + sec + vm_rd64(b + sec + (size_t)i * 16);
        cr_assert_eq(vm_rd32(blob), 0xdbdbdbdbu, "Hyperscan's serialized magic");
        vm_wr32(blob + 4, vm_rd32(blob + 4) ^ 0x00010000u); /* another minor version */
    }
    reseal(b, len);
    clf_program *p = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_load(b, len, NULL, &p, err, sizeof err), CLF_OK, "%s", err);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    h_result r = h_classify(ctx, "GET /\nUser-Agent: Mozilla/5.0 (compatible; GPTBot/1.1)");
    cr_assert_str_eq(r.reason, "ai");
    r = h_classify(ctx, "GET /wp-admin/x\nUser-Agent: Mozilla/5.0");
    cr_assert_str_eq(r.reason, "probe");
    r = h_classify(ctx, "GET /\nUser-Agent: Mozilla/5.0 SLCC1");
    cr_assert_eq(r.verdict, CLF_ACCEPT);
    clf_ctx_free(ctx);
    clf_program_free(p);
    free(b);
}

/* A database blob that is damaged (not a version or platform mismatch)
 * is refused. */
Test(loader, damaged_database_is_refused)
{
    size_t len;
    uint8_t *b = good(&len);
    const uint8_t *tab = b + VM_HEADER_LEN + (VM_SEC_HSDB - 1) * VM_SECENTRY_LEN;
    uint64_t sec = vm_rd64(tab + 8);
    uint8_t *blob = b + sec + vm_rd64(b + sec);
    blob[0] ^= 0xff; /* Hyperscan's magic */
    reseal(b, len);
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(load(b, len, err), CLF_E_FORMAT);
    cr_assert(strstr(err, "database 0 is corrupt (Hyperscan error"), "%s", err);
    free(b);
}

Test(loader, pattern_and_register_limits)
{
    size_t len;
    uint8_t *b = good(&len);
    clf_options *o;
    clf_program *p;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_options_new(&o), CLF_OK);
    /* SRC has three patterns: two names and one regex. */
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_PATTERNS, 2), CLF_OK);
    cr_assert_eq(clf_program_load(b, len, o, &p, err, sizeof err), CLF_E_LIMIT);
    cr_assert_str_eq(err, "the file holds 3 patterns, over the limit of 2 (CLF_LIMIT_PATTERNS)");
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_PATTERNS, 3), CLF_OK);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_REGISTERS, 2), CLF_OK);
    cr_assert_eq(clf_program_load(b, len, o, &p, err, sizeof err), CLF_E_LIMIT);
    cr_assert(strstr(err, "registers, over the limit of 2 (CLF_LIMIT_REGISTERS)"), "%s", err);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_REGISTERS, 65536), CLF_OK);
    cr_assert_eq(clf_program_load(b, len, o, &p, err, sizeof err), CLF_OK, "%s", err);
    cr_assert_eq(clf_program_limit(p, CLF_LIMIT_PATTERNS), 3);
    clf_program_free(p);
    clf_options_free(o);
    free(b);
}

/* ---- the rewrite-set section (format.h, VM_SEC_REWRITE) ---- */

static const char *const RW_SRC =
    "rewrite alpha { \"origin.example\" => \"clone.example\" /UA-(\\d+)/ => \"UA-$1\" once }\n"
    "rewrite beta(semantics: \"sub_filter\") { \"abc\" => \"x\" }\n"
    "filter main(r: Request) { accept }\n";

/* The rewrite section of a compiled RW_SRC: its offset and size. */
static uint8_t *rw_good(size_t *len, uint64_t *off, uint64_t *size)
{
    char *d = NULL;
    uint8_t *b = h_compile(RW_SRC, len, &d);
    cr_assert(b, "%s", d);
    free(d);
    const uint8_t *tab = b + VM_HEADER_LEN + (VM_SEC_REWRITE - 1) * VM_SECENTRY_LEN;
    cr_assert_eq(vm_rd32(tab), VM_SEC_REWRITE);
    *off = vm_rd64(tab + 8);
    *size = vm_rd64(tab + 16);
    cr_assert_eq(vm_rd32(b + *off), 2, "two sets");
    return b;
}

static int rw_sink_count(void *ud, const char *p, size_t n)
{
    (void)p;
    *(size_t *)ud += n;
    return 0;
}

Test(loader, rewrite_section_is_checked)
{
    size_t len;
    uint64_t off, size;
    uint8_t *b = rw_good(&len, &off, &size);
    uint8_t *c = malloc(len);
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(load(b, len, err), CLF_OK, "%s", err);
    uint8_t *e0 = b + off + 8, *e1 = e0 + 24; /* {u32 name, u32 0, u64 off, u64 size} */

    memcpy(c, b, len); /* both sets named as the first */
    vm_wr32(c + off + 8 + 24, vm_rd32(e0));
    reseal(c, len);
    cr_assert_eq(load(c, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "two rewrite sets are named 'alpha'");

    memcpy(c, b, len); /* a name that is no constant */
    vm_wr32(c + off + 8 + 24, 0xfffffff0u);
    reseal(c, len);
    cr_assert_eq(load(c, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "rewrite set 1 is malformed");

    memcpy(c, b, len); /* a set's bytes not 8-aligned */
    vm_wr64(c + off + 8 + 24 + 8, vm_rd64(e1 + 8) + 1);
    reseal(c, len);
    cr_assert_eq(load(c, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "rewrite set 1 is malformed");

    memcpy(c, b, len); /* a set's bytes past the section */
    vm_wr64(c + off + 8 + 24 + 16, size);
    reseal(c, len);
    cr_assert_eq(load(c, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "rewrite set 1 is malformed");

    memcpy(c, b, len); /* more sets than the table holds */
    vm_wr32(c + off, 2000);
    reseal(c, len);
    cr_assert_eq(load(c, len, err), CLF_E_FORMAT);

    memcpy(c, b, len); /* damage inside a stored set: the engine's loader says what */
    uint64_t s1 = off + vm_rd64(e1 + 8);
    c[s1 + 12] ^= 0x7f; /* its mode */
    reseal(c, len);
    cr_assert_eq(load(c, len, err), CLF_E_FORMAT);
    cr_assert(strncmp(err, "rewrite set 'beta': ", 20) == 0, "%s", err);
    free(c);
    free(b);
}

/* With the checksum recomputed, every flip of a bit in the rewrite
 * section's table and in the first 512 bytes of each stored set is
 * refused, or loads a program whose rewriters work. */
Test(loader, rewrite_section_flips_never_crash, .timeout = 120)
{
    size_t len;
    uint64_t off, size;
    uint8_t *b = rw_good(&len, &off, &size);
    uint8_t *c = malloc(len);
    char err[CLF_ERRMSG_SIZE];
    unsigned loaded = 0, tried = 0;
    for (uint64_t i = off; i < off + size; i++) {
        uint64_t rel = i - off, s0 = vm_rd64(b + off + 8 + 8), s1 = vm_rd64(b + off + 8 + 24 + 8);
        if (rel >= 8 + 48 && !(rel >= s0 && rel < s0 + 512) && !(rel >= s1 && rel < s1 + 512))
            continue;
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(c, b, len);
            c[i] ^= (uint8_t)(1u << bit);
            reseal(c, len);
            tried++;
            clf_program *p = NULL;
            if (clf_program_load(c, len, NULL, &p, err, sizeof err) != CLF_OK) continue;
            loaded++;
            clf_rewrite_scratch *sc = NULL;
            cr_assert_eq(clf_rewrite_scratch_new(p, &sc, err, sizeof err), CLF_OK, "%s", err);
            for (int k = 0; k < 2; k++) {
                clf_rewriter *rw = NULL;
                size_t out = 0;
                const char *name = k ? "beta" : "alpha";
                if (clf_rewriter_new(p, name, strlen(name), rw_sink_count, &out, &rw, err,
                                     sizeof err) != CLF_OK)
                    continue; /* a flipped name */
                static const char body[] = "x origin.example UA-12 abcABC y";
                cr_assert_eq(clf_rewriter_feed(rw, sc, body, sizeof body - 1), CLF_OK);
                cr_assert_eq(clf_rewriter_finish(rw, sc), CLF_OK);
                clf_rewriter_free(rw);
            }
            clf_rewrite_scratch_free(sc);
            clf_program_free(p);
        }
    }
    cr_assert_gt(tried, 100);
    free(c);
    free(b);
    (void)loaded;
}

Test(loader, neither_entry_nor_rewrite_sets)
{
    /* a file of rewrite sets only loads; with its table emptied it must not */
    char *d = NULL;
    size_t len;
    uint8_t *b = h_compile("rewrite only { \"a\" => \"b\" }\n", &len, &d);
    cr_assert(b, "%s", d);
    free(d);
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(load(b, len, err), CLF_OK, "%s", err);
    const uint8_t *tab = b + VM_HEADER_LEN + (VM_SEC_REWRITE - 1) * VM_SECENTRY_LEN;
    vm_wr32(b + vm_rd64(tab + 8), 0);
    reseal(b, len);
    cr_assert_eq(load(b, len, err), CLF_E_FORMAT);
    cr_assert_str_eq(err, "the file has neither an entry filter nor rewrite sets");
    free(b);
}
