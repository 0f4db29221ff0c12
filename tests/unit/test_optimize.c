/*
 * test_optimize.c: the code generator's optimizations (lang/codegen.c)
 * change how many instructions run, never what a rule computes. Each test
 * checks both: the disassembly shows the optimization happened (so a
 * regression that silently drops it fails), and every combination of
 * inputs gives the verdict the unoptimized meaning gives.
 *   - test merging: neighbouring `||` operands scanning one request field
 *     are one test (one OP_SCANF);
 *   - chain guards: a run of 4 or more `if`s testing one field is skipped
 *     after one test when none can hold.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* How many times " OP " occurs in the program's disassembly. */
static int count_op(const clf_program *p, const char *op)
{
    char *dis = h_disasm(p);
    char needle[32];
    snprintf(needle, sizeof needle, " %s ", op);
    int n = 0;
    for (const char *s = dis; (s = strstr(s, needle)); s++) n++;
    free(dis);
    return n;
}

#define verdict h_verdict_text

/* A request with User-Agent `ua` and path `path`. */
static const char *req(const char *path, const char *ua)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "GET %s\nUser-Agent: %s", path, ua);
    return buf;
}

/* ---- test merging ---- */

Test(optimize, or_of_one_field_is_one_test_as_condition)
{
    /* Runs [ua, ua] [path] [ua]: three scans of fields, one per run. */
    clf_program *p = h_program(
        "filter main(req: Request) {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    if ua.contains(\"aa\") || ua.matches(/b+c/) || req.path.contains(\"/x\") ||\n"
        "       ua.contains_word([\"dd\"]i) { reject \"hit\" }\n"
        "    accept\n"
        "}\n");
    cr_assert_eq(count_op(p, "SCANF"), 3);
    /* Every combination of the four operands. */
    for (int m = 0; m < 16; m++) {
        char ua[64] = "z";
        if (m & 1) strcat(ua, " aa");
        if (m & 2) strcat(ua, " bbbc");
        if (m & 8) strcat(ua, " DD");
        const char *path = m & 4 ? "/x/y" : "/y";
        cr_assert_str_eq(verdict(p, req(path, ua)), m ? "reject:hit" : "accept:", "case %d", m);
    }
    /* Whole words only, for the operand that asks for them. */
    cr_assert_str_eq(verdict(p, req("/", "zDDz")), "accept:");
    clf_program_free(p);
}

Test(optimize, or_of_one_field_is_one_test_as_value)
{
    clf_program *p = h_program(
        "fn bot(req: Request) -> bool {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    return ua.matches(/^curl\\//) || ua.contains([\"Bot\", \"Spider\"]) || ua.ends_with(\"!\")\n"
        "}\n"
        "filter main(req: Request) {\n"
        "    let b = bot(req)\n"
        "    if b { reject \"bot\" }\n"
        "    accept\n"
        "}\n");
    cr_assert_eq(count_op(p, "SCANF"), 1);
    cr_assert_eq(count_op(p, "JMPT"), 0, "a merged || needs no jumps");
    cr_assert_str_eq(verdict(p, req("/", "curl/8.0")), "reject:bot");
    cr_assert_str_eq(verdict(p, req("/", "x curl/8.0")), "accept:");
    cr_assert_str_eq(verdict(p, req("/", "GoogleBot")), "reject:bot");
    cr_assert_str_eq(verdict(p, req("/", "hey!")), "reject:bot");
    cr_assert_str_eq(verdict(p, req("/", "Mozilla/5.0")), "accept:");
    clf_program_free(p);
}

Test(optimize, or_with_a_runtime_operand_keeps_its_order)
{
    /* The middle operand is a runtime comparison: the runs around it are
     * merged separately, and the comparison still decides in between. */
    clf_program *p = h_program(
        "filter main(req: Request) {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    if ua.contains(\"a\") || ua.contains(\"b\") || ua.len() > 10 || ua.contains(\"c\") ||\n"
        "       ua.contains(\"d\") { reject \"hit\" }\n"
        "    accept\n"
        "}\n");
    cr_assert_eq(count_op(p, "SCANF"), 2);
    cr_assert_str_eq(verdict(p, req("/", "xb")), "reject:hit");
    cr_assert_str_eq(verdict(p, req("/", "xd")), "reject:hit");
    cr_assert_str_eq(verdict(p, req("/", "xxxxxxxxxxxx")), "reject:hit");
    cr_assert_str_eq(verdict(p, req("/", "xyz")), "accept:");
    clf_program_free(p);
}

Test(optimize, negated_or_merges_too)
{
    clf_program *p = h_program(
        "filter main(req: Request) {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    if !(ua.contains(\"a\") || ua.contains(\"b\")) { reject \"neither\" }\n"
        "    accept\n"
        "}\n");
    cr_assert_eq(count_op(p, "SCANF"), 1);
    cr_assert_str_eq(verdict(p, req("/", "a")), "accept:");
    cr_assert_str_eq(verdict(p, req("/", "b")), "accept:");
    cr_assert_str_eq(verdict(p, req("/", "c")), "reject:neither");
    clf_program_free(p);
}

/* ---- chain guards ---- */

Test(optimize, run_of_ifs_on_one_field_is_guarded)
{
    /* Bodies that fall through: skipping the run when no condition holds
     * must leave the score as the unguarded run would. */
    clf_program *p = h_program(
        "filter main(req: Request) {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    let mut score = 0\n"
        "    if ua.contains(\"a\") { score += 1 }\n"
        "    if ua.contains([\"b\", \"B\"]) { score += 2 }\n"
        "    if ua.matches(/c[0-9]/) || ua.contains(\"C\") { score += 4 }\n"
        "    if ua.contains_word(\"d\") { score += 8 }\n"
        "    if ua.starts_with(\"e\") { score += 16 }\n"
        "    if score == 0 { accept \"none\" }\n"
        "    if score == 31 { reject \"all\" }\n"
        "    reject \"some\"\n"
        "}\n");
    /* 5 tests and the guard. */
    cr_assert_eq(count_op(p, "SCANF"), 6);
    cr_assert_str_eq(verdict(p, req("/", "zzz")), "accept:none");
    cr_assert_str_eq(verdict(p, req("/", "e a B c1 d")), "reject:all");
    cr_assert_str_eq(verdict(p, req("/", "e")), "reject:some");
    cr_assert_str_eq(verdict(p, req("/", "xd")), "accept:none"); /* not a whole word */
    cr_assert_str_eq(verdict(p, req("/", "x d")), "reject:some");
    cr_assert_str_eq(verdict(p, req("/", "C")), "reject:some");
    clf_program_free(p);
}

Test(optimize, run_of_ifs_that_decide)
{
    clf_program *p = h_program(
        "filter main(req: Request) {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    if ua.contains(\"one\") { reject \"1\" }\n"
        "    if ua.contains(\"two\") { reject \"2\" }\n"
        "    if ua.contains(\"three\") { reject \"3\" }\n"
        "    if ua.contains(\"four\") { reject \"4\" }\n"
        "    accept\n"
        "}\n");
    cr_assert_eq(count_op(p, "SCANF"), 5);
    /* The first that holds decides, as without the guard. */
    cr_assert_str_eq(verdict(p, req("/", "four three")), "reject:3");
    cr_assert_str_eq(verdict(p, req("/", "four")), "reject:4");
    cr_assert_str_eq(verdict(p, req("/", "five")), "accept:");
    clf_program_free(p);
}

Test(optimize, short_or_mixed_runs_are_not_guarded)
{
    /* Three ifs on the user agent: below the threshold. Four with another
     * field in the middle: two runs of two. Neither gets a guard. */
    clf_program *p = h_program(
        "filter main(req: Request) {\n"
        "    let ua = req.header(\"user-agent\")\n"
        "    if ua.contains(\"a\") { reject \"a\" }\n"
        "    if ua.contains(\"b\") { reject \"b\" }\n"
        "    if ua.contains(\"c\") { reject \"c\" }\n"
        "    if req.path.contains(\"p\") { reject \"p\" }\n"
        "    if ua.contains(\"d\") { reject \"d\" }\n"
        "    accept\n"
        "}\n");
    cr_assert_eq(count_op(p, "SCANF"), 5);
    cr_assert_str_eq(verdict(p, req("/p", "d")), "reject:p");
    cr_assert_str_eq(verdict(p, req("/", "d")), "reject:d");
    clf_program_free(p);
}
