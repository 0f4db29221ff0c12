/*
 * fuzz_rules.c: rules-file bytes through the loader, the verifier and the
 * interpreter.
 *
 * Each input is loaded twice at most:
 *   1. as given, with clf_program_load: every check of docs/format.md
 *      (size limit, magic, version, declared size, XXH3-64 checksum, ...);
 *   2. when (1) fails with CLF_E_FORMAT, a copy with the header's file size
 *      set to the input's length and the trailing checksum recomputed, so
 *      that mutations get past the checksum into the section readers, the
 *      verifier and the Hyperscan databases (whose blobs Hyperscan itself
 *      protects with a CRC32C; a changed version or platform field makes
 *      the loader rebuild the database from the stored patterns).
 * A program that loads is disassembled and classifies the fixed requests
 * (fuzz_common.c); clf_eval must return CLF_OK or CLF_E_LIMIT. Its
 * rewrite sets rewrite a fixed body in several chunkings; the outputs
 * must agree only for a file loaded as given (classifyc's output: a
 * mutated file may store databases that disagree with its patterns,
 * docs/format.md, "Loading").
 *
 * A failed load must return a status listed for clf_program_load, set the
 * output to NULL and write a message. Inputs over 4 MiB are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "fuzz_common.h"

#define FUZZ_MAX_INPUT (4u << 20)

/* Layout (vm/format.h): magic 8, version u32, nsections u32, file size
 * u64 at offset 16, ..., checksum u64 in the last 8 bytes. */
#define SIZE_OFF 16
#define MIN_FIXABLE (24 + 8)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static clf_status load_and_run(const uint8_t *b, size_t n, int as_given)
{
    clf_program *prog = (clf_program *)&prog; /* must be overwritten */
    char err[CLF_ERRMSG_SIZE];
    memset(err, 'x', sizeof err);
    clf_status st = clf_program_load(b, n, NULL, &prog, err, sizeof err);
    if (fuzz_verbose())
        fprintf(stderr, "fuzz: load: %s%s%.*s\n", clf_strerror(st), st ? ": " : "",
                st ? (int)sizeof err : 0, err);
    if (st == CLF_OK) {
        if (!prog) FUZZ_FAIL("clf_program_load returned CLF_OK and no program");
        fuzz_disassemble(prog);
        fuzz_classify_fixed(prog, as_given);
        clf_program_free(prog);
        return st;
    }
    switch (st) {
    case CLF_E_NOMEM: case CLF_E_LIMIT: case CLF_E_FORMAT: case CLF_E_VERSION:
    case CLF_E_VERIFY: case CLF_E_BACKEND:
        break;
    default:
        FUZZ_FAIL("clf_program_load returned %d, not a status it documents", st);
    }
    if (prog) FUZZ_FAIL("clf_program_load failed (%d) but left *out non-NULL", st);
    if (!memchr(err, '\0', sizeof err) || err[0] == '\0')
        FUZZ_FAIL("clf_program_load failed (%d) without a NUL-terminated message", st);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) return 0;
    clf_status st = load_and_run(data, size, 1);
    if (st != CLF_E_FORMAT || size < MIN_FIXABLE) return 0;

    uint8_t *copy = malloc(size);
    if (!copy) return 0;
    memcpy(copy, data, size);
    put64(copy + SIZE_OFF, size);
    put64(copy + size - 8, XXH3_64bits(copy, size - 8));
    if (memcmp(copy, data, size) != 0) load_and_run(copy, size, 0);
    free(copy);
    return 0;
}
