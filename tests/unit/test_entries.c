/*
 * test_entries.c: entry filters. clf_program_find_filter finds `main` and
 * the other filters of the compiled file that decide on every path, and
 * says why any other name is not one; clf_eval_filter and
 * clf_eval_filter_explain run them, and refuse anything else.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char src[] =
    "filter main(req: Request) {\n"
    "    check(req)\n"
    "    if req.header(\"user-agent\").contains(\"bot\") { reject \"bot\" }\n"
    "    accept\n"
    "}\n"
    "filter strict(req: Request) {\n"
    "    if req.path.starts_with(\"/admin\") { reject \"admin\" }\n"
    "    if req.header(\"user-agent\").contains(\"bot\") { reject \"strict-bot\" }\n"
    "    accept \"strict-ok\"\n"
    "}\n"
    "filter check(req: Request) {\n"
    "    if req.path == \"/probe\" { reject \"probe\" }\n"
    "}\n"
    "filter maybe(req: Request) {\n"
    "    if req.path == \"/m\" { pass }\n"
    "    accept\n"
    "}\n";

static clf_program *prog;
static clf_ctx *ctx;

static void setup(void)
{
    h_no_inline = 1; /* keep `check` a function of its own */
    prog = h_program(src);
    h_no_inline = 0;
    cr_assert_eq(clf_ctx_new(prog, &ctx, NULL, 0), CLF_OK);
}

static void teardown(void)
{
    clf_ctx_free(ctx);
    clf_program_free(prog);
}

static uint32_t find(const char *name)
{
    uint32_t f = 12345;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_find_filter(prog, name, strlen(name), &f, err, sizeof err), CLF_OK,
                 "%s: %s", name, err);
    cr_assert_neq(f, 12345);
    return f;
}

static void request(const char *path, const char *ua)
{
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_set_path(ctx, path, strlen(path)), CLF_OK);
    cr_assert_eq(clf_ctx_add_header(ctx, "User-Agent", 10, ua, strlen(ua)), CLF_OK);
}

static const char *verdict(clf_status st, const clf_verdict *v)
{
    static char buf[160];
    cr_assert_eq(st, CLF_OK, "%s", clf_ctx_errmsg(ctx));
    snprintf(buf, sizeof buf, "%s:%s", v->verdict == CLF_ACCEPT ? "accept" : "reject",
             v->reason ? v->reason : "");
    return buf;
}

TestSuite(entries, .init = setup, .fini = teardown);

Test(entries, main_is_clf_eval)
{
    uint32_t m = find("main");
    clf_verdict a, b;
    request("/probe", "Mozilla/5.0");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, m, &a), &a), "reject:probe");
    cr_assert_str_eq(verdict(clf_eval(ctx, &b), &b), "reject:probe");
    request("/", "Mozilla/5.0");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, m, &a), &a), "accept:");
}

Test(entries, another_entry_decides_the_same_request)
{
    uint32_t m = find("main"), s = find("strict");
    cr_assert_neq(m, s);
    clf_verdict v;
    request("/admin/x", "Mozilla/5.0");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, s, &v), &v), "reject:admin");
    /* The same request, no reset: main decides it from the same scans. */
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, m, &v), &v), "accept:");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, s, &v), &v), "reject:admin");
    request("/", "somebot/1.0");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, s, &v), &v), "reject:strict-bot");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, m, &v), &v), "reject:bot");
    request("/", "Mozilla/5.0");
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, s, &v), &v), "accept:strict-ok");
}

Test(entries, names_are_byte_slices_compared_exactly)
{
    uint32_t f = 7;
    char err[CLF_ERRMSG_SIZE];
    /* Not NUL-terminated: the first 6 bytes name `strict`. */
    cr_assert_eq(clf_program_find_filter(prog, "strictXYZ", 6, &f, err, sizeof err), CLF_OK);
    cr_assert_eq(f, find("strict"));
    f = 7;
    cr_assert_eq(clf_program_find_filter(prog, "Strict", 6, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(f, 7, "*filter is not written on failure");
    cr_assert_eq(clf_program_find_filter(prog, "stric", 5, &f, err, sizeof err), CLF_E_INVALID);
}

Test(entries, absent_names_the_entries)
{
    uint32_t f = 7;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_find_filter(prog, "nope", 4, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert_str_eq(err, "no filter 'nope' in the file the rules were compiled from "
                          "(entry filters: main, strict)");
    cr_assert_eq(f, 7);
    /* The caller's bytes are escaped, so the message stays one line. */
    cr_assert_eq(clf_program_find_filter(prog, "a\nb\x01", 4, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert(strstr(err, "no filter 'a\\x0ab\\x01' in"), "%s", err);
    cr_assert_eq(clf_program_find_filter(prog, NULL, 0, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert(strstr(err, "no filter '' in"), "%s", err);
}

Test(entries, a_filter_that_can_pass_is_not_an_entry)
{
    uint32_t f = 7;
    char err[CLF_ERRMSG_SIZE];
    /* `check` reaches its end without a verdict; `maybe` has a `pass`. */
    const char *why = "' can end without a verdict (it may pass, or reach its end): only a "
                      "filter that accepts or rejects on every path can decide a request";
    char want[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_find_filter(prog, "check", 5, &f, err, sizeof err), CLF_E_INVALID);
    snprintf(want, sizeof want, "filter 'check%s", why);
    cr_assert_str_eq(err, want);
    cr_assert_eq(clf_program_find_filter(prog, "maybe", 5, &f, err, sizeof err), CLF_E_INVALID);
    snprintf(want, sizeof want, "filter 'maybe%s", why);
    cr_assert_str_eq(err, want);
    cr_assert_eq(f, 7);
}

Test(entries, bad_arguments)
{
    uint32_t f;
    char err[CLF_ERRMSG_SIZE];
    cr_assert_eq(clf_program_find_filter(NULL, "main", 4, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert_str_eq(err, "invalid argument");
    cr_assert_eq(clf_program_find_filter(prog, "main", 4, NULL, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_program_find_filter(prog, NULL, 4, &f, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(clf_program_find_filter(prog, "main", 4, &f, NULL, 0), CLF_OK);
    clf_verdict v;
    cr_assert_eq(clf_eval_filter(NULL, f, &v), CLF_E_INVALID);
    cr_assert_eq(clf_eval_filter(ctx, f, NULL), CLF_E_INVALID);
}

static int steps_seen;
static void count_step(void *ud, const clf_explain_step *st)
{
    (void)ud;
    (void)st;
    steps_seen++;
}

Test(entries, only_entries_run)
{
    clf_verdict v = {CLF_ACCEPT, "untouched", 9};
    request("/probe", "Mozilla/5.0");
    /* Function 1 is `check`, which main calls (not inlined here). */
    cr_assert_eq(clf_eval_filter(ctx, 1, &v), CLF_E_INVALID);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "filter 1 is not an entry filter of the program");
    cr_assert_eq(clf_eval_filter(ctx, 999999, &v), CLF_E_INVALID);
    cr_assert_str_eq(v.reason, "untouched", "*out is not written on error");
    steps_seen = 0;
    cr_assert_eq(clf_eval_filter_explain(ctx, 1, &v, count_step, NULL), CLF_E_INVALID);
    cr_assert_eq(steps_seen, 0);
    /* After an error, a good call clears the message. */
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, find("strict"), &v), &v), "accept:strict-ok");
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "");
}

Test(entries, explain_runs_the_filter)
{
    uint32_t s = find("strict");
    clf_verdict a, b;
    request("/admin", "Mozilla/5.0");
    steps_seen = 0;
    cr_assert_str_eq(verdict(clf_eval_filter_explain(ctx, s, &a, count_step, NULL), &a),
                     "reject:admin");
    cr_assert_gt(steps_seen, 1);
    cr_assert_str_eq(verdict(clf_eval_filter(ctx, s, &b), &b), "reject:admin");
    cr_assert_eq(clf_eval_filter_explain(ctx, s, &a, NULL, NULL), CLF_E_INVALID);
}
