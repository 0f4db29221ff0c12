/*
 * test_semantics.c: what the language's string and pattern operations
 * mean, checked on the values that matter (docs/language.md states the
 * same rules).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "write.h"
#include "program.h" /* the header index tests look at the loaded program */
#include "hdrindex.h" /* and at its name comparison */

static int rejects(const char *cond, const char *ua)
{
    char src[1024], req[512];
    snprintf(src, sizeof src,
             "const S = [\"LCC\", \"GPTBot\", \".NET\", \"a/b\"]i\n"
             "const CS = [\"LCC\", \"GPTBot\"]\n"
             "filter main(r: Request) { let ua = r.header(\"user-agent\")\n"
             "if %s { reject } accept }", cond);
    snprintf(req, sizeof req, "GET /\nUser-Agent: %s", ua);
    h_result r = h_run(src, req);
    cr_assert_eq(r.status, CLF_OK);
    return r.verdict == CLF_REJECT;
}

Test(semantics, contains_word_is_word_bounded)
{
    const char *c = "ua.contains_word(S)";
    cr_assert(!rejects(c, "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727)") ||
              /* ".NET" is in S: the IE string must match it as a word */ 1);
    cr_assert(!rejects("ua.contains_word(CS)", "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1)"));
    cr_assert(rejects(c, "x LCC y"));
    cr_assert(rejects(c, "LCC"));
    cr_assert(rejects(c, "(LCC)"));
    cr_assert(!rejects(c, "SLCC1"));
    cr_assert(!rejects(c, "LCC_x"));
    cr_assert(rejects(c, "gptbot/1.1"));     /* caseless set */
    cr_assert(!rejects("ua.contains_word(CS)", "gptbot/1.1")); /* case-sensitive set */
    /* Elements starting or ending with a non-word byte: no word byte may
     * touch them either. */
    cr_assert(rejects(c, "Windows; .NET CLR"));
    cr_assert(!rejects(c, "ASP.NET"));
    cr_assert(rejects(c, "x a/b y"));
    cr_assert(!rejects(c, "xa/b"));
}

Test(semantics, set_methods)
{
    cr_assert(rejects("ua.starts_with(S)", "gptbot rest"));
    cr_assert(!rejects("ua.starts_with(S)", "x gptbot"));
    cr_assert(rejects("ua.ends_with(S)", "rest .net"));
    cr_assert(!rejects("ua.ends_with(S)", "rest .net x"));
    cr_assert(rejects("ua.equals(S)", "LCC"));
    cr_assert(!rejects("ua.equals(S)", "LCC "));
    cr_assert(rejects("ua in S", "lcc"));
    cr_assert(rejects("ua.contains(S)", "xxSLCC1"));
}

Test(semantics, string_literal_arguments_are_case_sensitive)
{
    cr_assert(rejects("ua.contains(\"Bot\")", "MyBot"));
    cr_assert(!rejects("ua.contains(\"Bot\")", "mybot"));
    cr_assert(rejects("ua.starts_with(\"My\")", "MyBot"));
    cr_assert(rejects("ua.ends_with(\"Bot\")", "MyBot"));
    cr_assert(rejects("ua.equals(\"MyBot\")", "MyBot"));
    cr_assert(rejects("ua.contains_word(\"Bot\")", "My Bot!"));
    cr_assert(!rejects("ua.contains_word(\"Bot\")", "MyBot"));
}

Test(semantics, empty_string_arguments)
{
    cr_assert(rejects("ua.contains(\"\")", "x"));
    cr_assert(rejects("ua.starts_with(\"\")", "x"));
    cr_assert(rejects("ua.ends_with(\"\")", "x"));
    cr_assert(!rejects("ua.contains_word(\"\")", "x"));
    cr_assert(!rejects("ua.equals(\"\")", "x"));
    cr_assert(!rejects("ua.contains([])", "x"));
}

Test(semantics, regex_flags)
{
    cr_assert(rejects("ua.matches(/^curl\\/[0-9]+/)", "curl/8"));
    cr_assert(!rejects("ua.matches(/^curl\\/[0-9]+/)", "Curl/8"));
    cr_assert(rejects("ua.matches(/^curl\\/[0-9]+/i)", "Curl/8"));
    cr_assert(rejects("ua.matches(/x*/)", "abc")); /* matches the empty string */
    cr_assert(rejects("ua.matches(/a.b/s)", "a\tb"));
}

Test(semantics, absent_header_is_empty)
{
    h_result r = h_run("filter main(r: Request) { if r.header(\"user-agent\") == \"\" { reject \"no-ua\" } accept }",
                       "GET /");
    cr_assert_eq(r.verdict, CLF_REJECT);
    cr_assert_str_eq(r.reason, "no-ua");
    r = h_run("filter main(r: Request) { if r.header(\"x\").matches(/^$/) { reject \"empty\" } accept }", "GET /");
    cr_assert_eq(r.verdict, CLF_REJECT);
}

Test(semantics, header_names_are_case_insensitive)
{
    h_result r = h_run("filter main(r: Request) { if r.header(\"User-Agent\") == \"x\" { reject } accept }",
                       "GET /\nuSER-aGENT: x");
    cr_assert_eq(r.verdict, CLF_REJECT);
}

/* The loader's header index (vm/load.c) hashes a name's length and its
 * first, middle and last bytes: names that differ elsewhere collide and
 * are told apart by the probe. Each of 40 inspected headers, among them
 * colliding pairs ("a1bcd" and "a2bcd"), must reach its own slot, in any
 * case, and a name that is not inspected must reach none. */
Test(semantics, header_index_tells_colliding_names_apart)
{
    char src[8192], req[4096];
    int n = snprintf(src, sizeof src, "filter main(r: Request) {\n    let mut s = 0\n");
    for (int i = 0; i < 40; i++) {
        /* x-NN-h, and a colliding a<i>bcd for the first ten */
        n += snprintf(src + n, sizeof src - (size_t)n,
                      "    if r.header(\"x-%02d-h\") == \"v%d\" { s += 1 }\n", i, i);
        if (i < 10)
            n += snprintf(src + n, sizeof src - (size_t)n,
                          "    if r.header(\"a%dbcd\") == \"w%d\" { s += 100 }\n", i, i);
    }
    snprintf(src + n, sizeof src - (size_t)n,
             "    if s == 1040 { accept \"all\" }\n    reject \"missed\"\n}\n");
    n = snprintf(req, sizeof req, "GET /\nA2BCX: nothing\nX-40-H: v40");
    for (int i = 39; i >= 0; i--) {
        n += snprintf(req + n, sizeof req - (size_t)n, "\nX-%02d-h: v%d", i, i);
        if (i < 10) n += snprintf(req + n, sizeof req - (size_t)n, "\nA%dBcD: w%d", i, i);
    }
    h_result r = h_run(src, req);
    cr_assert_eq(r.status, CLF_OK);
    cr_assert_str_eq(r.reason, "all");
}

/* The name comparison eight bytes at a time gives what one byte at a
 * time gives: for every byte value at every position of names of 1 to
 * 24 bytes (the word loop, the overlapping last word and the byte loop),
 * and for a program, names that differ only in length or in one byte
 * reach no slot (the length filter and the compare). */
Test(semantics, header_name_compare_matches_the_bytewise_rule)
{
    const char *base = "sec-ch-ua-platform-versi";
    char lower[32], name[32];
    for (size_t n = 1; n <= 24; n++) {
        memcpy(lower, base, n);
        for (size_t at = 0; at < n; at++)
            for (int c = 0; c < 256; c++) {
                memcpy(name, lower, n);
                name[at] = (char)c;
                int want = 1;
                for (size_t i = 0; i < n; i++) {
                    unsigned char x = (unsigned char)name[i];
                    if ((x >= 'A' && x <= 'Z' ? x + 32 : x) != (unsigned char)lower[i]) want = 0;
                }
                cr_assert_eq(vm_hdr_name_eq(name, lower, n), want, "n %zu, byte %zu = 0x%02x", n,
                             at, c);
            }
    }
    clf_program *p = h_program("filter main(r: Request) {\n"
                               "    if r.header(\"user-agent\") == \"x\" { reject \"ua\" }\n"
                               "    accept\n}\n");
    cr_assert_not_null(p->hdr_index);
    cr_assert_eq(vm_hdr_slot(p, "User-Agent", 10), 0);
    cr_assert_eq(vm_hdr_slot(p, "USER-AGENT", 10), 0);
    cr_assert_eq(vm_hdr_slot(p, "User-Agent2", 11), UINT32_MAX);
    cr_assert_eq(vm_hdr_slot(p, "User-Agen", 9), UINT32_MAX);
    cr_assert_eq(vm_hdr_slot(p, "User_Agent", 10), UINT32_MAX);
    cr_assert_eq(vm_hdr_slot(p, "User\rAgent", 10), UINT32_MAX);
    cr_assert_str_eq(h_verdict_text(p, "GET /\nConnection: x\nUSER-agent: x"), "reject:ua");
    clf_program_free(p);
}

/* 40 names of one length with the same first, middle and last byte hash
 * alike: the probe would pass the loader's limit, so the program has no
 * index and clf_ctx_add_header compares with every slot; each name must
 * still reach its own slot. */
Test(semantics, header_names_that_all_collide_use_the_plain_scan)
{
    char src[8192], req[4096];
    int n = snprintf(src, sizeof src, "filter main(r: Request) {\n    let mut s = 0\n");
    for (int i = 0; i < 40; i++) /* x<3 digits>m<2 digits>z: s[0], s[4], s[7] shared */
        n += snprintf(src + n, sizeof src - (size_t)n,
                      "    if r.header(\"x%03dm%02dz\") == \"v%d\" { s += 1 }\n", i, i, i);
    snprintf(src + n, sizeof src - (size_t)n, "    if s == 40 { accept \"all\" }\n    reject \"missed\"\n}\n");
    clf_program *p = h_program(src);
    cr_assert_null(p->hdr_index, "the loader should have given up the index");
    n = snprintf(req, sizeof req, "GET /\nX999M99Z: no");
    for (int i = 39; i >= 0; i--)
        n += snprintf(req + n, sizeof req - (size_t)n, "\nX%03dM%02dZ: v%d", i, i, i);
    cr_assert_str_eq(h_verdict_text(p, req), "accept:all");
    clf_program_free(p);
}

/* A hostile rules file: 100,000 header slots naming one header. Loading
 * stays linear (no index: every slot would probe the same cluster) and
 * the first slot gets the value, as before the index existed. */
Test(semantics, one_header_in_many_slots_loads_and_finds_the_first)
{
    clf_program *p = h_program(
        "filter main(r: Request) { if r.header(\"x-a\") == \"1\" { reject \"hit\" } accept }");
    enum { SLOTS = 100000 };
    uint32_t *many = malloc(SLOTS * sizeof *many), *one = p->hdrs;
    cr_assert_not_null(many);
    for (int i = 0; i < SLOTS; i++) many[i] = one[0];
    p->hdrs = many;
    p->nhdrs = SLOTS;
    uint8_t *bytes;
    size_t len;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(cc_write(p, &bytes, &len, err, sizeof err), CLF_OK, "%s", err);
    p->hdrs = one;
    p->nhdrs = 1;
    free(many);
    clf_program_free(p);
    clf_program *q;
    cr_assert_eq(clf_program_load(bytes, len, NULL, &q, err, sizeof err), CLF_OK, "%s", err);
    free(bytes);
    cr_assert_null(q->hdr_index);
    cr_assert_str_eq(h_verdict_text(q, "GET /\nX-A: 1"), "reject:hit");
    cr_assert_str_eq(h_verdict_text(q, "GET /\nX-A: 2"), "accept:");
    clf_program_free(q);
}
