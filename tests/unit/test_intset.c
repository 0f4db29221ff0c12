/*
 * test_intset.c: int set literals and `int in SET` (OP_INTIN, the
 * int-set section): membership at the ends and between elements,
 * duplicates, the largest int, sets shared by their constant, and the
 * loader's refusal of a set out of order.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "bytes.h"
#include "format.h"
#include "harness.h"

static const char src[] =
    "const S = [14618, 16509, 0, 8075, 9223372036854775807, 8075, 396982]\n"
    "const ONE = [7]\n"
    "filter main(req: Request) {\n"
    "    let n = req.header(\"x-n\").to_int()\n"
    "    if req.header(\"x-n\") == \"\" { accept \"none\" }\n"
    "    if n in ONE { accept \"one\" }\n"
    "    if n in S { reject \"in\" }\n"
    "    if !(n in S) && n > 0 { accept \"out\" }\n"
    "    accept \"other\"\n"
    "}\n";

static const char *classify(const clf_program *p, const char *n)
{
    char req[128];
    snprintf(req, sizeof req, "GET /\nX-N: %s", n);
    return h_verdict_text(p, req);
}

Test(intset, membership)
{
    clf_program *p = h_program(src);
    static const char *const in[] = {"0", "8075", "14618", "16509", "396982",
                                     "9223372036854775807", "99999999999999999999"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        cr_expect_str_eq(classify(p, in[i]), "reject:in", "%s is in the set", in[i]);
    static const char *const out[] = {"1", "8074", "8076", "14617", "16510", "396983",
                                      "9223372036854775806"};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        cr_expect_str_eq(classify(p, out[i]), "accept:out", "%s is not in the set", out[i]);
    cr_expect_str_eq(classify(p, "-5"), "accept:other", "a negative value is in no set");
    cr_expect_str_eq(classify(p, "7"), "accept:one", "a set of one element");
    clf_program_free(p);
}

/* Duplicates are merged at compile time: the stored set is strictly
 * increasing, 6 values for the 7 written, and the disassembly names it. */
Test(intset, stored_sorted_and_deduplicated)
{
    clf_program *p = h_program(src);
    char *d = h_disasm(p);
    cr_assert(strstr(d, "INTIN   R3 R1 N1           ; R3 := R1 is in int set 1  [6 integers]"), "%s", d);
    char *second = strstr(strstr(d, "int set 1") + 1, "int set 1");
    cr_assert(second, "both tests of S share its set: %s", d);
    free(d);
    size_t len;
    char *diags = NULL;
    uint8_t *b = h_compile(src, &len, &diags);
    cr_assert(b, "%s", diags);
    free(diags);
    const uint8_t *tab = b + VM_HEADER_LEN + (VM_SEC_INTSET - 1) * VM_SECENTRY_LEN;
    cr_assert_eq(vm_rd32(tab), VM_SEC_INTSET);
    const uint8_t *s = b + vm_rd64(tab + 8);
    cr_assert_eq(vm_rd32(s), 2, "two sets");
    cr_assert_eq(vm_rd32(s + 4), 7, "6 + 1 values");
    const uint8_t *v = s + 8 + 2 * 8;
    uint32_t first = vm_rd32(s + 8), count = vm_rd32(s + 12);
    if (count == 1) first = vm_rd32(s + 16), count = vm_rd32(s + 20);
    cr_assert_eq(count, 6);
    static const int64_t want[] = {0, 8075, 14618, 16509, 396982, INT64_MAX};
    for (uint32_t i = 0; i < 6; i++)
        cr_expect_eq((int64_t)vm_rd64(v + (first + i) * 8), want[i], "value %u", i);

    /* out of order: the loader refuses it, naming the set */
    uint8_t *c = malloc(len);
    memcpy(c, b, len);
    uint64_t a0 = vm_rd64(v + (first + 1) * 8), a1 = vm_rd64(v + (first + 2) * 8);
    vm_wr64(c + (v - b) + (first + 1) * 8, a1);
    vm_wr64(c + (v - b) + (first + 2) * 8, a0);
    vm_wr64(c + len - 8, XXH3_64bits(c, len - 8));
    clf_program *q = NULL;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_load(c, len, NULL, &q, err, sizeof err), CLF_E_FORMAT);
    cr_assert_null(q);
    cr_expect(strstr(err, "is not strictly increasing"), "%s", err);

    /* a set reaching past the values */
    memcpy(c, b, len);
    vm_wr32(c + (s - b) + 12, 100);
    vm_wr64(c + len - 8, XXH3_64bits(c, len - 8));
    cr_assert_eq(clf_program_load(c, len, NULL, &q, err, sizeof err), CLF_E_FORMAT);
    cr_expect(strstr(err, "lies outside its section"), "%s", err);
    free(c);
    free(b);
    clf_program_free(p);
}
