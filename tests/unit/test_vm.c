/*
 * test_vm.c: one test per opcode. Source-level tests compile a snippet,
 * check that the opcode under test is really emitted (so the test cannot
 * silently stop covering it), and assert verdicts on requests that take
 * each branch. Opcodes the compiler does not emit yet are assembled by
 * hand (asm.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm.h"
#include "harness.h"

static void free_cb_unused(void *ud, void *p)
{
    (void)ud;
    free(p);
}

/* Compiles `src`, checks that the disassembly mentions `opcode`, then
 * classifies `request` and returns the reason ("" when none) prefixed
 * with "accept:" or "reject:". */
static const char *run_op(const char *opcode, const char *src, const char *request)
{
    static char out[160];
    clf_program *p = h_program(src);
    char *dis = h_disasm(p);
    char needle[32];
    snprintf(needle, sizeof needle, " %s ", opcode);
    cr_assert(strstr(dis, needle), "opcode %s not emitted:\n%s", opcode, dis);
    free(dis);
    snprintf(out, sizeof out, "%s", h_verdict_text(p, request));
    clf_program_free(p);
    return out;
}

#define EXPECT(opcode, src, req, want) cr_assert_str_eq(run_op(opcode, src, req), want)

Test(vm, loadk_seq_field)
{
    const char *s = "filter main(r: Request) { if r.method == \"GET\" { accept \"get\" } reject \"other\" }";
    EXPECT("LOADK", s, "GET /", "accept:get");
    EXPECT("SEQ", s, "POST /", "reject:other");
    EXPECT("FIELD", s, "GETX /", "reject:other");
}

Test(vm, loadi_ilt_ile)
{
    const char *lt = "filter main(r: Request) { if r.path.len() < 3 { accept \"short\" } reject }";
    EXPECT("LOADI", lt, "GET /a", "accept:short");
    EXPECT("ILT", lt, "GET /ab", "reject:");
    const char *le = "filter main(r: Request) { if r.path.len() <= 3 { accept \"short\" } reject }";
    EXPECT("ILE", le, "GET /ab", "accept:short");
    EXPECT("ILE", le, "GET /abc", "reject:");
    /* > and >= swap the operands of < and <=. */
    const char *gt = "filter main(r: Request) { if r.path.len() > 3 { accept \"long\" } reject }";
    EXPECT("ILT", gt, "GET /abc", "accept:long");
    EXPECT("ILT", gt, "GET /ab", "reject:");
    const char *ge = "filter main(r: Request) { if r.path.len() >= 3 { accept \"long\" } reject }";
    EXPECT("ILE", ge, "GET /ab", "accept:long");
    EXPECT("ILE", ge, "GET /a", "reject:");
}

Test(vm, loadki_ieq_large_int)
{
    const char *s = "filter main(r: Request) { if r.path.len() == 9000000000 { accept } "
                    "if 9000000000 == 9000000000 { reject \"big\" } accept }";
    EXPECT("LOADKI", s, "GET /", "reject:big");
    EXPECT("IEQ", s, "GET /", "reject:big");
}

Test(vm, loadb_beq_not)
{
    const char *s = "filter main(r: Request) { let a = r.has_header(\"x\") "
                    "if a == true { accept \"x\" } if a != false { reject } reject \"none\" }";
    EXPECT("BEQ", s, "GET /\nX: 1", "accept:x");
    EXPECT("LOADB", s, "GET /", "reject:none");
    EXPECT("NOT", s, "GET /", "reject:none");
    /* && in value position materializes a bool through LOADB. */
    const char *v = "filter main(r: Request) { let both = r.has_header(\"a\") && r.has_header(\"b\") "
                    "if both { accept \"both\" } reject }";
    EXPECT("LOADB", v, "GET /\na: 1\nb: 2", "accept:both");
    EXPECT("LOADB", v, "GET /\na: 1", "reject:");
}

Test(vm, header_hashdr_joined)
{
    const char *s = "filter main(r: Request) { if !r.has_header(\"Accept\") { reject \"none\" } "
                    "if r.header(\"accept\") == \"a, b\" { accept \"joined\" } accept \"single\" }";
    EXPECT("HASHDR", s, "GET /", "reject:none");
    EXPECT("HEADER", s, "GET /\nACCEPT: a\naccept: b", "accept:joined");
    EXPECT("HEADER", s, "GET /\nAccept: a", "accept:single");
}

Test(vm, slen_slower)
{
    const char *s = "filter main(r: Request) { if r.header(\"ua\").lower() == \"abc-1\" { accept \"low\" } reject }";
    EXPECT("SLOWER", s, "GET /\nua: AbC-1", "accept:low");
    EXPECT("SLEN", "filter main(r: Request) { if r.query.len() == 3 { accept } reject }",
           "GET /?abc", "accept:");
}

Test(vm, string_ops_on_runtime_values)
{
    /* A value that is not a request field (lower()) with a one-string
     * argument uses the direct string opcodes. */
    const char *c = "filter main(r: Request) { if r.header(\"ua\").lower().contains(\"bot\") { reject } accept }";
    EXPECT("SCONT", c, "GET /\nua: MyBOT/1", "reject:");
    EXPECT("SCONT", c, "GET /\nua: Mozilla", "accept:");
    const char *st = "filter main(r: Request) { if r.header(\"ua\").lower().starts_with(\"curl/\") { reject } accept }";
    EXPECT("SSTART", st, "GET /\nua: Curl/8", "reject:");
    EXPECT("SSTART", st, "GET /\nua: xcurl/8", "accept:");
    const char *en = "filter main(r: Request) { if r.header(\"ua\").lower().ends_with(\"bot\") { reject } accept }";
    EXPECT("SEND", en, "GET /\nua: MyBot", "reject:");
    EXPECT("SEND", en, "GET /\nua: bot/1", "accept:");
    /* A runtime needle: the value of another header. */
    const char *w = "filter main(r: Request) { if r.header(\"ua\").contains_word(r.header(\"x\")) { reject } accept }";
    EXPECT("SWORD", w, "GET /\nua: a LCC b\nx: LCC", "reject:");
    EXPECT("SWORD", w, "GET /\nua: SLCC1\nx: LCC", "accept:");
    EXPECT("SWORD", w, "GET /\nua: LCC", "accept:"); /* empty needle: no word */
}

Test(vm, scanf_shared_database)
{
    const char *s = "const A = [\"GPTBot\", \"CCBot\"]i\n"
                    "filter main(r: Request) { let ua = r.header(\"user-agent\")\n"
                    "if ua.contains_word(A) { reject \"ai\" }\n"
                    "if ua.matches(/^curl\\//) { reject \"curl\" }\n"
                    "if ua.starts_with([\"Mozilla/\"]) && ua.ends_with(\"Safari/537.36\") { accept \"browser\" }\n"
                    "accept }";
    EXPECT("SCANF", s, "GET /\nUser-Agent: x gptbot/1.0", "reject:ai");
    EXPECT("SCANF", s, "GET /\nUser-Agent: curl/8.0", "reject:curl");
    EXPECT("SCANF", s, "GET /\nUser-Agent: Mozilla/5.0 Safari/537.36", "accept:browser");
    EXPECT("SCANF", s, "GET /\nUser-Agent: Mozilla/5.0 Safari/537.36 x", "accept:");
    /* All four tests on user-agent share one database. */
    clf_program *p = h_program(s);
    char *dis = h_disasm(p);
    cr_assert(strstr(dis, "subject S0 (header user-agent): 4 tests"), "%s", dis);
    cr_assert(!strstr(dis, "subject S1"), "%s", dis);
    free(dis);
    clf_program_free(p);
}

Test(vm, scand_dynamic_subject)
{
    const char *s = "filter main(r: Request) { if r.header(\"ua\").lower().matches(/bot\\b/) { reject } accept }";
    EXPECT("SCAND", s, "GET /\nua: MyBot", "reject:");
    EXPECT("SCAND", s, "GET /\nua: Bottle", "accept:");
}

Test(vm, jumps_and_terminals)
{
    const char *s = "filter main(r: Request) { if r.path == \"/a\" || r.path == \"/b\" { reject \"ab\" } "
                    "else if r.path == \"/c\" { accept \"c\" } else { accept \"other\" } }";
    EXPECT("JMPT", s, "GET /a", "reject:ab");
    EXPECT("JMPF", s, "GET /b", "reject:ab");
    const char *j = "filter main(r: Request) { if r.path == \"/c\" { let z = 1 } else { reject \"notc\" } accept \"c\" }";
    EXPECT("JMP", j, "GET /c", "accept:c");
    EXPECT("JMP", j, "GET /d", "reject:notc");
    EXPECT("ACCEPT", s, "GET /d", "accept:other");
    EXPECT("REJECT", s, "GET /a", "reject:ab");
}

/* MOVS, MOVI and MOVB are not emitted by the compiler yet (locals are
 * immutable): assemble them. */
Test(vm, moves_assembled)
{
    static const char *const strs[] = {"yes"};
    const vm_insn code[] = {
        IBX(LOADK, 0, 0),   /* R0 = "yes" */
        I(MOVS, 1, 0, 0),   /* R1 = R0 */
        IBX(LOADI, 2, 7),   /* R2 = 7 */
        I(MOVI, 3, 2, 0),   /* R3 = R2 */
        IBX(LOADB, 4, 1),   /* R4 = true */
        I(MOVB, 5, 4, 0),   /* R5 = R4 */
        I(SEQ, 6, 1, 0),    /* R6 = R1 == R0 */
        I(IEQ, 7, 3, 2),    /* R7 = R3 == R2 */
        IBX(JMPF, 6, 3),
        IBX(JMPF, 7, 2),
        IBX(JMPF, 5, 1),
        IBX(ACCEPT, 0, 0),  /* reason "yes" */
        IBX(REJECT, 0, VM_NO_REASON),
    };
    asm_spec sp = {code, sizeof code / sizeof code[0], "ssiibbbb", strs, 1, NULL};
    size_t len;
    uint8_t *b = asm_bytes(&sp, &len);
    clf_program *p;
    char err[256];
    cr_assert_eq(clf_program_load(b, len, NULL, &p, err, sizeof err), CLF_OK, "%s", err);
    free(b);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    h_result r = h_classify(ctx, "GET /");
    cr_assert_eq(r.verdict, CLF_ACCEPT);
    cr_assert_str_eq(r.reason, "yes");
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* Loads `src` with the header limits raised to 1 MiB, so that large
 * values reach the workspace. */
static clf_program *program_with_big_headers(const char *src)
{
    clf_options *o;
    cr_assert_eq(clf_options_new(&o), CLF_OK);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_HEADER_VALUE_BYTES, 1 << 20), CLF_OK);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_HEADER_BYTES, 1 << 20), CLF_OK);
    clf_program *p = h_program_opts(src, o);
    clf_options_free(o);
    return p;
}

Test(vm, workspace_limit_is_an_error_not_a_crash)
{
    clf_program *p = program_with_big_headers(
        "filter main(r: Request) { if r.header(\"ua\").lower() == \"x\" { accept } reject }");
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    size_t n = 300 * 1024; /* over the 256 KiB default workspace */
    char *big = malloc(n);
    memset(big, 'A', n);
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_add_header(ctx, "ua", 2, big, n), CLF_OK);
    clf_verdict v;
    cr_assert_eq(clf_eval(ctx, &v), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "lower() needs 307200 bytes; the string workspace has "
                                          "262144 left (CLF_LIMIT_WORKSPACE_BYTES)");
    cr_assert_eq(clf_program_limit(p, CLF_LIMIT_WORKSPACE_BYTES), 262144);
    /* The context stays usable. */
    clf_ctx_reset(ctx);
    clf_ctx_add_header(ctx, "ua", 2, "X", 1);
    cr_assert_eq(clf_eval(ctx, &v), CLF_OK);
    cr_assert_eq(v.verdict, CLF_ACCEPT);
    /* Joining repeated headers draws on the same workspace. */
    clf_program *q = program_with_big_headers(
        "filter main(r: Request) { if r.header(\"ua\") == \"x\" { accept } reject }");
    clf_ctx *c2;
    cr_assert_eq(clf_ctx_new(q, &c2, NULL, 0), CLF_OK);
    clf_ctx_add_header(c2, "ua", 2, big, 150 * 1024);
    clf_ctx_add_header(c2, "ua", 2, big, 150 * 1024);
    cr_assert_eq(clf_eval(c2, &v), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(c2), "joining header 'ua' needs 307202 bytes; the string "
                                         "workspace has 262144 left (CLF_LIMIT_WORKSPACE_BYTES)");
    free(big);
    clf_ctx_free(c2);
    clf_program_free(q);
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(vm, header_value_and_total_limits)
{
    clf_program *p = h_program("filter main(r: Request) { if r.header(\"user-agent\").len() > 0 { reject } accept }");
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    cr_assert_eq(clf_program_limit(p, CLF_LIMIT_HEADER_VALUE_BYTES), 65536);
    cr_assert_eq(clf_program_limit(p, CLF_LIMIT_HEADER_BYTES), 262144);
    char *big = malloc(1 << 18);
    memset(big, 'a', 1 << 18);
    /* A 64 KiB User-Agent is at the limit: accepted. One byte more is not. */
    cr_assert_eq(clf_ctx_add_header(ctx, "User-Agent", 10, big, 65536), CLF_OK);
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_add_header(ctx, "User-Agent", 10, big, 65537), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "the value of header 'User-Agent' is 65537 bytes, over the "
                                          "limit of 65536 (CLF_LIMIT_HEADER_VALUE_BYTES)");
    /* The header was ignored: the request classifies as if it had none. */
    clf_verdict v;
    cr_assert_eq(clf_eval(ctx, &v), CLF_OK);
    cr_assert_eq(v.verdict, CLF_ACCEPT);
    /* Names and values count: 4 x (1 + 65534) + (1 + 1) = 262142 bytes fit
     * in 256 KiB; 3 bytes more do not. */
    clf_ctx_reset(ctx);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(clf_ctx_add_header(ctx, "x", 1, big, 65534), CLF_OK, "header %d", i);
    cr_assert_eq(clf_ctx_add_header(ctx, "x", 1, big, 1), CLF_OK);
    cr_assert_eq(clf_ctx_add_header(ctx, "x", 1, big, 2), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "the request's headers pass 262144 bytes (CLF_LIMIT_HEADER_BYTES)");
    clf_ctx_reset(ctx);
    cr_assert_eq(clf_ctx_add_header(ctx, "x", 1, big, 100), CLF_OK);
    free(big);
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(vm, option_ceilings)
{
    clf_options *o;
    cr_assert_eq(clf_options_new(&o), CLF_OK);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_REGISTERS, 65537), CLF_E_INVALID);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_HEADER_BYTES, UINT64_C(1) << 33), CLF_E_INVALID);
    cr_assert_eq(clf_options_set_limit(o, CLF_LIMIT_PATTERNS, 0), CLF_E_INVALID);
    cr_assert_eq(clf_options_set_limit(o, (clf_limit)99, 1), CLF_E_INVALID);
    cr_assert_eq(clf_options_set_allocator(o, NULL, free_cb_unused, NULL), CLF_E_INVALID);
    clf_options_free(o);
}

Test(vm, header_count_limit)
{
    clf_program *p = h_program("filter main(r: Request) { accept }");
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    for (int i = 0; i < 256; i++) cr_assert_eq(clf_ctx_add_header(ctx, "a", 1, "b", 1), CLF_OK);
    cr_assert_eq(clf_ctx_add_header(ctx, "a", 1, "b", 1), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "the request has more than 256 headers (CLF_LIMIT_HEADERS)");
    cr_assert_eq(clf_program_limit(p, CLF_LIMIT_HEADERS), 256);
    clf_ctx_reset(ctx);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "");
    cr_assert_eq(clf_ctx_add_header(ctx, "a", 1, "b", 1), CLF_OK);
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(vm, reuse_context_across_requests)
{
    /* Scan results must not leak from one request into the next. */
    clf_program *p = h_program("filter main(r: Request) { if r.header(\"ua\").contains([\"bot\"]) { reject } accept }");
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    cr_assert_eq(h_classify(ctx, "GET /\nua: bot").verdict, CLF_REJECT);
    cr_assert_eq(h_classify(ctx, "GET /\nua: human").verdict, CLF_ACCEPT);
    cr_assert_eq(h_classify(ctx, "GET /").verdict, CLF_ACCEPT);
    cr_assert_eq(h_classify(ctx, "GET /\nua: xbotx").verdict, CLF_REJECT);
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* clf_ctx_set_request: a whole request in one call, the same as the
 * reset, the three set calls and one add per header. */
static const char BATCH_RULES[] =
    "filter main(req: Request) {\n"
    "    if req.method == \"POST\" { reject \"method\" }\n"
    "    if req.path == \"/x\" && req.query == \"a=1\" { reject \"line\" }\n"
    "    if req.header(\"user-agent\").contains([\"bot\"]) { reject \"ua\" }\n"
    "    if req.header(\"accept\") == \"a, b\" { reject \"joined\" }\n"
    "    if req.rdns_checked { reject \"rdns\" }\n"
    "    accept\n"
    "}\n";

static const char *batch_reason(clf_ctx *ctx)
{
    static char buf[64];
    clf_verdict v;
    cr_assert_eq(clf_eval(ctx, &v), CLF_OK, "%s", clf_ctx_errmsg(ctx));
    snprintf(buf, sizeof buf, "%s:%.*s", v.verdict == CLF_REJECT ? "reject" : "accept",
             (int)(v.reason ? v.reason_len : 0), v.reason ? v.reason : "");
    return buf;
}

Test(vm, set_request_hands_over_a_whole_request)
{
    clf_program *p = h_program(BATCH_RULES);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    const clf_header ua[] = {{"Host", 4, "h", 1}, {"User-Agent", 10, "a bot", 5}};
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, ua, 2), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "reject:ua");
    /* the request line; a repeated header is joined, as with add_header */
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/x", 2, "a=1", 3, NULL, 0), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "reject:line");
    cr_assert_eq(clf_ctx_set_request(ctx, "POST", 4, "/", 1, "", 0, NULL, 0), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "reject:method");
    const clf_header acc[] = {{"accept", 6, "a", 1}, {"ACCEPT", 6, "b", 1}};
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, acc, 2), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "reject:joined");
    /* it resets first: the last request's headers and rDNS state are gone */
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, NULL, 0), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "accept:");
    cr_assert_eq(clf_ctx_set_rdns(ctx, "a.example", 9), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "reject:rdns");
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, NULL, 0), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "accept:");
    /* the same verdicts as the call per field */
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, "/", 1);
    for (int i = 0; i < 2; i++)
        clf_ctx_add_header(ctx, ua[i].name, ua[i].name_len, ua[i].value, ua[i].value_len);
    cr_assert_str_eq(batch_reason(ctx), "reject:ua");
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(vm, set_request_refusals)
{
    clf_program *p = h_program(BATCH_RULES);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    const clf_header one[] = {{"user-agent", 10, "bot", 3}};
    cr_assert_eq(clf_ctx_set_request(NULL, "GET", 3, "/", 1, NULL, 0, one, 1), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_set_request(ctx, NULL, 3, "/", 1, NULL, 0, one, 1), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, NULL, 1, NULL, 0, one, 1), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 2, one, 1), CLF_E_INVALID);
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, NULL, 1), CLF_E_INVALID);
    const clf_header nul[] = {{"a", 1, "b", 1}, {NULL, 3, "b", 1}};
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, nul, 2), CLF_E_INVALID);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "header 1: a NULL name or value with a nonzero length");
    /* a limit: the headers before the refused one are added, it and the
     * ones after are not */
    char *big = malloc(65537);
    memset(big, 'x', 65537);
    const clf_header lim[] = {{"accept", 6, "a, b", 4}, {"x-big", 5, big, 65537},
                              {"user-agent", 10, "bot", 3}};
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, lim, 3), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(ctx), "header 1: the value of header 'x-big' is 65537 bytes, "
                                          "over the limit of 65536 (CLF_LIMIT_HEADER_VALUE_BYTES)");
    cr_assert_str_eq(batch_reason(ctx), "reject:joined");
    clf_header many[257];
    for (int i = 0; i < 257; i++) many[i] = (clf_header){"a", 1, "b", 1};
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, many, 256), CLF_OK);
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, many, 257), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(ctx),
                     "header 256: the request has more than 256 headers (CLF_LIMIT_HEADERS)");
    /* and the context stays usable */
    cr_assert_eq(clf_ctx_set_request(ctx, "GET", 3, "/", 1, NULL, 0, one, 1), CLF_OK);
    cr_assert_str_eq(batch_reason(ctx), "reject:ua");
    /* a program that reads no header takes the call's own loop: the same
     * limits and messages */
    clf_program *q = h_program("filter main(req: Request) { accept }");
    clf_ctx *c2;
    cr_assert_eq(clf_ctx_new(q, &c2, NULL, 0), CLF_OK);
    cr_assert_eq(clf_ctx_set_request(c2, "GET", 3, "/", 1, NULL, 0, many, 256), CLF_OK);
    cr_assert_str_eq(batch_reason(c2), "accept:");
    cr_assert_eq(clf_ctx_set_request(c2, "GET", 3, "/", 1, NULL, 0, many, 257), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(c2),
                     "header 256: the request has more than 256 headers (CLF_LIMIT_HEADERS)");
    cr_assert_eq(clf_ctx_set_request(c2, "GET", 3, "/", 1, NULL, 0, lim, 3), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(c2), "header 1: the value of header 'x-big' is 65537 bytes, "
                                         "over the limit of 65536 (CLF_LIMIT_HEADER_VALUE_BYTES)");
    cr_assert_eq(clf_ctx_set_request(c2, "GET", 3, "/", 1, NULL, 0, nul, 2), CLF_E_INVALID);
    cr_assert_str_eq(clf_ctx_errmsg(c2), "header 1: a NULL name or value with a nonzero length");
    /* names and values count toward CLF_LIMIT_HEADER_BYTES: 4 x (1 + 65534)
     * + (1 + 1) bytes fit in 256 KiB, 3 more do not */
    clf_header total[6];
    for (int i = 0; i < 4; i++) total[i] = (clf_header){"x", 1, big, 65534};
    total[4] = (clf_header){"x", 1, big, 1};
    total[5] = (clf_header){"x", 1, big, 2};
    cr_assert_eq(clf_ctx_set_request(c2, "GET", 3, "/", 1, NULL, 0, total, 5), CLF_OK);
    cr_assert_eq(clf_ctx_set_request(c2, "GET", 3, "/", 1, NULL, 0, total, 6), CLF_E_LIMIT);
    cr_assert_str_eq(clf_ctx_errmsg(c2),
                     "header 5: the request's headers pass 262144 bytes (CLF_LIMIT_HEADER_BYTES)");
    clf_ctx_free(c2);
    clf_program_free(q);
    free(big);
    clf_ctx_free(ctx);
    clf_program_free(p);
}
