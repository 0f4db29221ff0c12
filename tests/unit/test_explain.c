/*
 * test_explain.c: clf_eval_explain. It gives clf_eval's results, and its
 * steps say where (file, line, call depth), which values were compared,
 * and which string-set element or regex matched, with values cut at 80
 * bytes and escaped to one line of ASCII.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define MAX_STEPS 256

/* Every step of one run: the texts joined by '\n' in `all`. */
typedef struct steps {
    char all[1 << 16];
    size_t n;
    int count;
    uint32_t line[MAX_STEPS], depth[MAX_STEPS];
    int has_file;
} steps;

static void collect(void *ud, const clf_explain_step *st)
{
    steps *s = ud;
    cr_assert(st->text != NULL && strlen(st->text) == st->text_len);
    cr_assert(s->count < MAX_STEPS && s->n + st->text_len + 2 < sizeof s->all);
    s->line[s->count] = st->line;
    s->depth[s->count] = st->depth;
    s->count++;
    s->has_file = st->file != NULL;
    memcpy(s->all + s->n, st->text, st->text_len);
    s->n += st->text_len;
    s->all[s->n++] = '\n';
    s->all[s->n] = 0;
}

/* Sets up "UA" (NULL: no User-Agent) and `path`, with extra headers
 * "Name: value" lines in `more` (may be NULL). */
static void request(clf_ctx *ctx, const char *ua, const char *path, const char *more)
{
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, path, strlen(path));
    if (ua) clf_ctx_add_header(ctx, "User-Agent", 10, ua, strlen(ua));
    for (const char *l = more; l && *l;) {
        const char *colon = strchr(l, ':'), *end = strchr(l, '\n');
        if (!end) end = l + strlen(l);
        clf_ctx_add_header(ctx, l, (size_t)(colon - l), colon + 2, (size_t)(end - colon - 2));
        l = *end ? end + 1 : end;
    }
}

/* Classifies with clf_eval, then with clf_eval_explain into *s, and
 * checks that both give the same status and verdict. */
static clf_verdict explain(clf_ctx *ctx, const char *ua, const char *path, const char *more,
                           steps *s)
{
    clf_verdict v, e;
    memset(s, 0, sizeof *s);
    request(ctx, ua, path, more);
    clf_status sv = clf_eval(ctx, &v);
    request(ctx, ua, path, more);
    clf_status se = clf_eval_explain(ctx, &e, collect, s);
    cr_assert_eq(se, sv, "explain returned %d, clf_eval %d", se, sv);
    cr_assert_eq(sv, CLF_OK, "%s", clf_ctx_errmsg(ctx));
    cr_assert(e.verdict == v.verdict && e.reason == v.reason, "different verdicts for UA %s",
              ua ? ua : "(none)");
    return e;
}

#define has(s, text) cr_assert(strstr((s)->all, text) != NULL, "no step has\n  %s\nsteps:\n%s", \
                               text, (s)->all)

static const char *const bots_rules =
    "const BOTS = [\"GPTBot\", \"CCBot\", \"Claude-Web\"]i\n"
    "const CLIENTS = [\"python-requests/\", \"curl/\"]\n"
    "filter main(req: Request) {\n"
    "    let ua = req.header(\"user-agent\")\n"
    "    if ua == \"\" { reject \"no-ua\" }\n"
    "    if ua.contains_word(BOTS) && req.path != \"/robots.txt\" { reject \"ai\" }\n"
    "    if ua.starts_with(CLIENTS) { reject \"script\" }\n"
    "    if req.path.matches(/^\\/wp-admin/i) { reject \"probe\" }\n"
    "    accept\n"
    "}\n";

Test(explain, names_the_matched_set_element)
{
    clf_program *p = h_program(bots_rules);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    steps s;
    clf_verdict v = explain(ctx, "Mozilla/5.0 (compatible; gptbot/1.2; +https://openai.com/gptbot)",
                            "/blog", NULL, &s);
    cr_assert_eq(v.verdict, CLF_REJECT);
    has(&s, "header \"user-agent\" = \"Mozilla/5.0 (compatible; gptbot/1.2; "
            "+https://openai.com/gptbot)\"\n");
    /* The element as written in the set, whatever the case in the UA. */
    has(&s, "contains_word([3 strings]i) on header user-agent \"Mozilla/5.0 (compatible; "
            "gptbot/1.2; +https://openai.com/gptbot)\" -> true: matched \"GPTBot\"\n");
    has(&s, "\"/blog\" != \"/robots.txt\" -> true\n");
    has(&s, "reject \"ai\"\n");
    cr_assert(s.has_file);
    cr_assert_eq(s.line[s.count - 1], 6, "the reject is on line 6, not %u", s.line[s.count - 1]);

    /* Escaped bytes of an element are decoded back: "python-requests/". */
    explain(ctx, "python-requests/2.31", "/", NULL, &s);
    has(&s, "starts_with([2 strings]) on header user-agent -> true: matched "
            "\"python-requests/\"\n");
    has(&s, "reject \"script\"\n");

    explain(ctx, "Mozilla/5.0", "/WP-ADMIN/x", NULL, &s);
    has(&s, "matches(/^\\/wp-admin/i) on path \"/WP-ADMIN/x\" -> true\n");
    has(&s, "condition false: jump to line 7\n");

    explain(ctx, NULL, "/", NULL, &s);
    has(&s, "header \"user-agent\" = \"\" (absent)\n\"\" == \"\" -> true\n");
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(explain, same_verdicts_as_clf_eval)
{
    static const char *const uas[] = {
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36",
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2)",
        "CCBot/2.0 (https://commoncrawl.org/faq/)", "python-requests/2.31", "curl/8.5.0", "",
        "Claude-Web/1.0", "xGPTBotx", NULL};
    static const char *const paths[] = {"/", "/robots.txt", "/wp-admin/", "/blog"};
    clf_program *p = h_program(bots_rules);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    steps s;
    for (size_t u = 0; u < sizeof uas / sizeof *uas; u++)
        for (size_t q = 0; q < sizeof paths / sizeof *paths; q++) {
            explain(ctx, uas[u], paths[q], NULL, &s);
            cr_assert(s.count > 0);
        }
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* main calls filter small, which calls fn weight: explained with the
 * calls kept (classifyc --no-inline) and inlined (the default). */
static const char CALLS_SRC[] =
        "fn weight(n: int) -> int {\n"
        "    return n * 3 + 1\n"
        "}\n"
        "filter small(req: Request) {\n"
        "    if weight(req.header(\"x-n\").to_int()) < 100 { reject \"small\" }\n"
        "}\n"
        "filter main(req: Request) {\n"
        "    small(req)\n"
        "    accept\n"
        "}\n";

Test(explain, arithmetic_calls_and_depth)
{
    h_no_inline = 1; /* calls kept, as classifyc --no-inline */
    clf_program *p = h_program(CALLS_SRC);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    steps s;
    clf_verdict v = explain(ctx, "x", "/", "X-N: 5", &s);
    cr_assert_eq(v.verdict, CLF_REJECT);
    has(&s, "call filter small\n");
    has(&s, "to_int() on \"5\" -> 5\ncall weight(5)\n5 * 3 -> 15\n15 + 1 -> 16\nreturn 16\n"
            "16 < 100 -> true\n");
    /* main is depth 0, small 1, weight 2. */
    int saw_two = 0;
    for (int i = 0; i < s.count; i++) saw_two |= s.depth[i] == 2;
    cr_assert(saw_two && s.depth[0] == 0 && s.depth[s.count - 1] == 1);

    explain(ctx, "x", "/", "X-N: 40", &s);
    has(&s, "121 < 100 -> false\n");
    has(&s, "pass\n");
    has(&s, "accept\n");
    clf_ctx_free(ctx);
    clf_program_free(p);
}

/* Inlined (the default), the same program shows the same steps at the
 * same lines, without the call and return steps and at depth 0. */
Test(explain, inlined_calls_show_their_steps)
{
    clf_program *p = h_program(CALLS_SRC);
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    steps s;
    clf_verdict v = explain(ctx, "x", "/", "X-N: 5", &s);
    cr_assert_eq(v.verdict, CLF_REJECT);
    has(&s, "to_int() on \"5\" -> 5\n5 * 3 -> 15\n15 + 1 -> 16\n16 < 100 -> true\n");
    for (int i = 0; i < s.count; i++) cr_assert_eq(s.depth[i], 0);
    explain(ctx, "x", "/", "X-N: 40", &s);
    has(&s, "121 < 100 -> false\n");
    has(&s, "accept\n");
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(explain, long_values_are_cut_and_bytes_escaped)
{
    clf_program *p = h_program("filter main(req: Request) {\n"
                               "    if req.header(\"user-agent\") == \"a\" { reject }\n"
                               "    accept\n"
                               "}\n");
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    char ua[301];
    memset(ua, 'u', 300);
    ua[300] = 0;
    ua[79] = 'Z';
    steps s;
    explain(ctx, ua, "/", NULL, &s);
    char want[200];
    snprintf(want, sizeof want, "header \"user-agent\" = \"%.79sZ...\"\n", ua);
    has(&s, want);

    explain(ctx, "a\t\"b\\\xc3\xa9", "/", NULL, &s);
    has(&s, "= \"a\\x09\\\"b\\\\\\xc3\\xa9\"\n");
    clf_ctx_free(ctx);
    clf_program_free(p);
}

Test(explain, refuses_null_arguments)
{
    clf_program *p = h_program("filter main(req: Request) { accept }\n");
    clf_ctx *ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    clf_verdict v;
    steps s;
    cr_assert_eq(clf_eval_explain(ctx, &v, NULL, NULL), CLF_E_INVALID);
    cr_assert_eq(clf_eval_explain(ctx, NULL, collect, &s), CLF_E_INVALID);
    cr_assert_eq(clf_eval_explain(NULL, &v, collect, &s), CLF_E_INVALID);
    clf_ctx_free(ctx);
    clf_program_free(p);
}
