/*
 * test_rdns.c: the host's reverse-DNS hand-over (clf_ctx_set_rdns,
 * clf_ctx_client_ip) and what the rules see of it (req.rdns,
 * req.rdns_checked): states, normalisation, refusals, and the client
 * address a host is told to resolve.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char src[] =
    "filter main(req: Request) {\n"
    "    if !req.rdns_checked { accept \"unknown\" }\n"
    "    if req.rdns == \"\" { reject \"no-name\" }\n"
    "    if req.rdns.ends_with(\".googlebot.com\") { accept \"googlebot\" }\n"
    "    reject \"other\"\n"
    "}\n";

static clf_program *prog;
static clf_ctx *ctx;

static void setup(void)
{
    prog = h_program_trusted(src, "10.0.0.0/8");
    cr_assert_eq(clf_ctx_new(prog, &ctx, NULL, 0), CLF_OK);
}

static void teardown(void)
{
    clf_ctx_free(ctx);
    clf_program_free(prog);
}

TestSuite(rdns, .init = setup, .fini = teardown);

static const char *verdict(void)
{
    static char buf[64];
    clf_verdict v;
    cr_assert_eq(clf_eval(ctx, &v), CLF_OK, "%s", clf_ctx_errmsg(ctx));
    snprintf(buf, sizeof buf, "%s:%.*s", v.verdict == CLF_ACCEPT ? "accept" : "reject",
             (int)v.reason_len, v.reason ? v.reason : "");
    return buf;
}

Test(rdns, states)
{
    clf_ctx_reset(ctx);
    cr_assert_str_eq(verdict(), "accept:unknown");
    cr_assert_eq(clf_ctx_set_rdns(ctx, NULL, 0), CLF_OK);
    cr_assert_str_eq(verdict(), "reject:no-name");
    cr_assert_eq(clf_ctx_set_rdns(ctx, "crawl-66-249-66-1.googlebot.com", 31), CLF_OK);
    cr_assert_str_eq(verdict(), "accept:googlebot");
    clf_ctx_reset(ctx);
    cr_assert_str_eq(verdict(), "accept:unknown", "a reset forgets the answer");
}

Test(rdns, names_are_normalised)
{
    /* upper case and the root's dot, as some resolvers return them */
    static const char name[] = "CRAWL-1.GoogleBot.COM.";
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_set_rdns(ctx, name, sizeof name - 1), CLF_OK);
    cr_assert_str_eq(verdict(), "accept:googlebot");
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_set_rdns(ctx, "crawl.evilgooglebot.com", 23), CLF_OK);
    cr_assert_str_eq(verdict(), "reject:other");
}

Test(rdns, bad_names_are_refused_and_change_nothing)
{
    char longname[300];
    memset(longname, 'a', sizeof longname);
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_set_rdns(ctx, longname, 254), CLF_E_INVALID);
    cr_assert(strstr(clf_ctx_errmsg(ctx), "longer than a DNS name") != NULL, "%s",
              clf_ctx_errmsg(ctx));
    cr_assert_eq(clf_ctx_set_rdns(ctx, "a\tb", 3), CLF_E_INVALID);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "byte 1 of the name is 0x09: not a host name");
    cr_assert_eq(clf_ctx_set_rdns(ctx, "a\0b", 3), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_set_rdns(ctx, NULL, 3), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_set_rdns(NULL, "a", 1), CLF_E_INVALID);
    cr_assert_str_eq(verdict(), "accept:unknown", "refused names leave it unresolved");
    /* 253 bytes, and 253 plus the root's dot, are names */
    cr_assert_eq(clf_ctx_set_rdns(ctx, longname, 253), CLF_OK);
    longname[253] = '.';
    cr_assert_eq(clf_ctx_set_rdns(ctx, longname, 254), CLF_OK);
}

Test(rdns, the_client_address_to_resolve)
{
    uint8_t a[16];
    int valid = 7;
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_client_ip(ctx, a, &valid), CLF_OK);
    cr_assert_eq(valid, 0, "no peer: unknown");
    /* a trusted proxy: the forwarded client is the one to resolve */
    clf_ctx_reset(ctx);
    clf_ctx_set_peer(ctx, "10.1.2.3", 8);
    clf_ctx_add_header(ctx, "X-Forwarded-For", 15, "66.249.66.1", 11);
    cr_assert_eq(clf_ctx_client_ip(ctx, a, &valid), CLF_OK);
    static const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 66, 249, 66, 1};
    cr_assert_eq(valid, 1);
    cr_assert(memcmp(a, want, 16) == 0);
    /* an untrusted peer: its own address */
    clf_ctx_reset(ctx);
    clf_ctx_set_peer(ctx, "2001:db8::7", 11);
    clf_ctx_add_header(ctx, "X-Forwarded-For", 15, "66.249.66.1", 11);
    cr_assert_eq(clf_ctx_client_ip(ctx, a, &valid), CLF_OK);
    cr_assert(valid == 1 && a[0] == 0x20 && a[1] == 0x01 && a[15] == 7);
    cr_assert_eq(clf_ctx_client_ip(NULL, a, &valid), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_client_ip(ctx, NULL, &valid), CLF_E_INVALID);
}

/* clf_program_reads_rdns: a host resolves only for rules that read the
 * answer, in any function (called or not), through either field. */
Test(rdns, whether_the_rules_read_it)
{
    cr_assert_eq(clf_program_reads_rdns(prog), 1);
    static const char *const readers[] = {
        "filter main(req: Request) { if req.rdns_checked { reject } accept }\n",
        "filter main(req: Request) { if req.rdns.ends_with(\".example\") { reject } accept }\n",
        /* one program of two lines: the parentheses tell clang's
         * -Wstring-concatenation the joined literal is meant */
        ("fn verified(req: Request) -> bool { return req.rdns != \"\" }\n"
         "filter main(req: Request) { if verified(req) { accept } reject }\n"),
    };
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
        clf_program *p = h_program(readers[i]);
        cr_assert_eq(clf_program_reads_rdns(p), 1, "%s", readers[i]);
        clf_program_free(p);
    }
    clf_program *p = h_program("filter main(req: Request) {\n"
                               "    if req.client_ip in [192.0.2.0/24] { reject }\n"
                               "    if req.path == \"/rdns\" { reject }\n"
                               "    accept\n}\n");
    cr_assert_eq(clf_program_reads_rdns(p), 0, "req.client_ip alone is no reason to resolve");
    clf_program_free(p);
    cr_assert_eq(clf_program_reads_rdns(NULL), 0);
}
