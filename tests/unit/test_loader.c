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
