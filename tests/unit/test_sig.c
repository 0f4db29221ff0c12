/*
 * test_sig.c: HTTP Message Signatures (RFC 9421, Web Bot Auth).
 *
 * - sig/ white-box: structured fields (RFC 8941), URL normalization, the
 *   signature base of RFC 9421 Appendix B.2 byte for byte (the corpora's
 *   rfc9421/, read in place from $CLF_CORPORA; skipped without them) and
 *   B.2.6's Ed25519 signature.
 * - the public API with keys made here (crypto_sign_keypair) and
 *   requests signed here over bases written out by hand: valid and
 *   attributed, each tampering, times, keys, tags, absent, malformed;
 *   verification lazy, once per request, without allocating; key ring
 *   errors.
 */
#include <criterion/criterion.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctx.h"
#include "harness.h"
#include "sg_url.h"
#include "sg_verify.h"

/* ---- structured fields ---------------------------------------------- */

static sg_member members[64];
static sg_item items[256];
static sg_param params[256];
static sg_sf sf = {members, 0, 64, items, 0, 256, params, 0, 256};

static int dict(const char *s, uint32_t *first, uint32_t *count, sg_sf_error *e)
{
    sg_sf_clear(&sf);
    return sg_sf_parse_dict(&sf, s, strlen(s), first, count, e);
}

static const char *ser(const sg_member *m)
{
    static char buf[512];
    sg_out o = {buf, sizeof buf - 1, 0, 0};
    sg_sf_ser_member(&o, &sf, m);
    buf[o.n] = 0;
    return buf;
}

Test(sig_sf, a_signature_input)
{
    uint32_t first, count;
    sg_sf_error e;
    const char *in = "sig1=(\"@authority\" \"signature-agent\";key=\"sig1\");created=1;"
                     "keyid=\"k\", sig2=();tag=\"x\"";
    cr_assert_eq(dict(in, &first, &count, &e), 0, "%s at %zu", e.what, e.off);
    cr_assert_eq(count, 2);
    const sg_member *m = sg_sf_member(&sf, first, count, "sig1", 4);
    cr_assert(m && m->inner && m->nitems == 2 && m->nparams == 2);
    cr_assert(sg_str_eqz(sf.it[m->item0 + 1].v.raw, "signature-agent"));
    const sg_param *key = sg_sf_param(&sf, sf.it[m->item0 + 1].param0,
                                      sf.it[m->item0 + 1].nparams, "key");
    cr_assert(key && key->v.kind == SG_STR && sg_str_eqz(key->v.raw, "sig1"));
    cr_assert_str_eq(ser(m), "(\"@authority\" \"signature-agent\";key=\"sig1\");created=1;keyid=\"k\"");
    cr_assert_str_eq(ser(sg_sf_member(&sf, first, count, "sig2", 4)), "();tag=\"x\"");
}

Test(sig_sf, values_serialize_strictly)
{
    uint32_t first, count;
    sg_sf_error e;
    cr_assert_eq(dict("a=1.50, b=?0, c, d=tok/en:x, e=:YWJj:, f=\"q\\\"s\", g=-7;p;q=2", &first,
                      &count, &e), 0, "%s", e.what);
    const char *want[] = {"1.5", "?0", "?1", "tok/en:x", ":YWJj:", "\"q\\\"s\"", "-7;p;q=2"};
    for (uint32_t i = 0; i < count; i++) cr_assert_str_eq(ser(&sf.m[first + i]), want[i]);
    /* an unpadded byte sequence comes out padded; a repeated key keeps
     * its place and takes the last value */
    cr_assert_eq(dict("x=:YWI:, y=1, x=2", &first, &count, &e), 0);
    cr_assert_eq(count, 2);
    cr_assert_str_eq(ser(&sf.m[first]), "2");
    cr_assert_eq(dict("x=:YWI:", &first, &count, &e), 0);
    cr_assert_str_eq(ser(&sf.m[first]), ":YWI=:");
}

Test(sig_sf, malformed_fields_fail_whole)
{
    static const char *bad[] = {
        "a=1,",              /* trailing comma */
        "a=\"open",          /* no closing quote */
        "a=\"\\x\"",         /* an escape other than \" \\ */
        "A=1",               /* keys are lower case */
        "a=(1 2",            /* no closing paren */
        "a=:YQ:b",           /* garbage after a member */
        "a=:Y:",             /* base64 of one character */
        "a=:Y=Q=:",          /* '=' inside */
        "a=1234567890123456", /* 16 digits */
        "a=1.2345",          /* 4 fraction digits */
        "a=?2",
        "a=\"\x01\"",
        "a=@",
    };
    uint32_t first, count;
    sg_sf_error e;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(dict(bad[i], &first, &count, &e), -1, "%s parsed", bad[i]);
        cr_assert(e.what != NULL);
        cr_assert_eq(sf.nm, 0, "a failed parse leaves nothing behind");
    }
    /* more members than the arrays hold */
    char many[65 * 6 + 1];
    size_t o = 0;
    for (int i = 0; i < 65; i++) o += (size_t)sprintf(many + o, "%sk%d=1", i ? "," : "", i);
    cr_assert_eq(dict(many, &first, &count, &e), -1);
    cr_assert(strstr(e.what, "too many") != NULL, "%s", e.what);
}

/* ---- URLs ----------------------------------------------------------- */

Test(sig_url, normalization)
{
    static const struct { const char *in, *out; int origin; } cases[] = {
        {"https://signature-agent.test", "https://signature-agent.test", 1},
        {"HTTPS://Signature-Agent.TEST:443/", "https://signature-agent.test", 1},
        {"https://a.test:8443", "https://a.test:8443", 1},
        {"https://a.test/keys/../jwks.json?x=1#f", "https://a.test/jwks.json", 0},
        {"https://a.test/%7euser/%2f/./x", "https://a.test/~user/%2F/x", 0},
        {"https://a.test/a/..", "https://a.test", 1},
        {"http://a.test", NULL, 0},
        {"https://user@a.test", NULL, 0},
        {"https://a.test:44x3", NULL, 0},
        {"https://", NULL, 0},
        {"https://a .test", NULL, 0},
        {"https://a.test/%3%36", NULL, 0}, /* a stray '%': not a URI */
        {"https://a.test/%", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[256];
        int origin = -1;
        long n = sg_url_norm(cases[i].in, strlen(cases[i].in), out, sizeof out, &origin);
        if (!cases[i].out) {
            cr_assert_lt(n, 0, "%s normalized", cases[i].in);
            continue;
        }
        cr_assert_geq(n, 0, "%s refused", cases[i].in);
        out[n] = 0;
        cr_assert_str_eq(out, cases[i].out);
        cr_assert_eq(origin, cases[i].origin, "%s", cases[i].in);
    }
}

/* ---- RFC 9421 Appendix B.2 from the corpora ----------------------------- */

static char *corpus(const char *rel, size_t *n)
{
    const char *dir = getenv("CLF_CORPORA");
    char path[1024];
    snprintf(path, sizeof path, "%s/web-bot-auth/%s", dir ? dir : "../shared/corpora", rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 16);
    size_t got = fread(b, 1, (1 << 16) - 1, f);
    fclose(f);
    b[got] = 0;
    if (n) *n = got;
    return b;
}

/* A message file of rfc9421/ as an sg_req: request line, headers to the
 * blank line. The strings point into msg. */
typedef struct parsed {
    sg_req rq;
    vm_hline lines[32];
} parsed;

static void parse_message(char *msg, parsed *p)
{
    memset(p, 0, sizeof *p);
    char *line = msg, *nl = strchr(line, '\n');
    *nl = 0;
    char *sp1 = strchr(line, ' '), *sp2 = strrchr(line, ' ');
    p->rq.method = (sg_str){line, (size_t)(sp1 - line)};
    char *target = sp1 + 1, *q = memchr(target, '?', (size_t)(sp2 - target));
    p->rq.path = (sg_str){target, (size_t)((q ? q : sp2) - target)};
    p->rq.query = q ? (sg_str){q + 1, (size_t)(sp2 - q - 1)} : (sg_str){"", 0};
    p->rq.scheme = (sg_str){"https", 5};
    size_t n = 0;
    for (line = nl + 1; *line && *line != '\n'; line = nl + 1) {
        nl = strchr(line, '\n');
        *nl = 0;
        char *colon = strchr(line, ':');
        char *v = colon + 1;
        while (*v == ' ') v++;
        p->lines[n++] = (vm_hline){line, (size_t)(colon - line), v, strlen(v)};
    }
    p->rq.fields = p->lines;
    p->rq.nfields = n;
}

/* The signature base of the first Signature-Input member of the vector
 * rfc9421/bNN_request_signed.txt, against bNN_request_sigbase.txt. */
static void check_base(const char *nn)
{
    char name[64];
    snprintf(name, sizeof name, "rfc9421/b%s_request_signed.txt", nn);
    char *msg = corpus(name, NULL);
    snprintf(name, sizeof name, "rfc9421/b%s_request_sigbase.txt", nn);
    char *want = corpus(name, NULL);
    if (!msg || !want) {
        free(msg);
        free(want);
        cr_skip_test("corpora not found (CLF_CORPORA)");
    }
    parsed p;
    parse_message(msg, &p);
    sg_scratch *sc = sg_scratch_new(NULL);
    sg_str in;
    cr_assert_eq(sg_field_value(&p.rq, "signature-input", 15, NULL, &in), 1);
    uint32_t first, count;
    sg_sf_error e;
    cr_assert_eq(sg_sf_parse_dict(&sc->sf, in.p, in.n, &first, &count, &e), 0);
    char base[4096], why[256];
    sg_out o = {base, sizeof base, 0, 0};
    vm_text t;
    vm_text_init(&t, why, sizeof why);
    int rc = sg_base_build(&p.rq, sc, &sc->sf.m[first], &o, &t);
    why[vm_text_done(&t)] = 0;
    cr_assert_eq(rc, 0, "B.2.%s: %s", nn, why);
    cr_assert(!o.full);
    cr_assert_eq(o.n, strlen(want), "B.2.%s: %zu bytes, want %zu:\n%.*s", nn, o.n, strlen(want),
                 (int)o.n, base);
    cr_assert(memcmp(base, want, o.n) == 0, "B.2.%s:\n%.*s", nn, (int)o.n, base);
    sg_scratch_free(sc, NULL);
    free(msg);
    free(want);
}

Test(sig_rfc9421, base_b21) { check_base("21"); }
Test(sig_rfc9421, base_b22_query_param_and_digest) { check_base("22"); }
Test(sig_rfc9421, base_b23_full_coverage) { check_base("23"); }
Test(sig_rfc9421, base_b25) { check_base("25"); }
Test(sig_rfc9421, base_b26) { check_base("26"); }

/* The B.1.4 key as a JWK Set, from its PEM (SubjectPublicKeyInfo: the
 * last 32 of its 44 bytes are the key). */
static void b14_jwks(char *out, size_t cap)
{
    char *pem = corpus("rfc9421/test-key-ed25519.pub", NULL);
    if (!pem) cr_skip_test("corpora not found (CLF_CORPORA)");
    char *b = strchr(pem, '\n') + 1, *end = strchr(b, '-');
    uint8_t der[64];
    size_t len;
    cr_assert_eq(sodium_base642bin(der, sizeof der, b, (size_t)(end - b), "\n", &len, NULL,
                                   sodium_base64_VARIANT_ORIGINAL), 0);
    cr_assert_eq(len, 44);
    char x[64];
    sodium_bin2base64(x, sizeof x, der + 12, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    snprintf(out, cap, "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"kid\":\"test-key-ed25519\","
                       "\"x\":\"%s\"}]}", x);
    free(pem);
}

static int verify_b26(const char *tamper_header, const char *tamper_value, char *why)
{
    char jwks[256];
    b14_jwks(jwks, sizeof jwks);
    char *msg = corpus("rfc9421/b26_request_signed.txt", NULL);
    parsed p;
    parse_message(msg, &p);
    for (size_t i = 0; tamper_header && i < p.rq.nfields; i++)
        if (p.lines[i].name_len == strlen(tamper_header) &&
            memcmp(p.lines[i].name, tamper_header, p.lines[i].name_len) == 0) {
            p.lines[i].value = tamper_value;
            p.lines[i].value_len = strlen(tamper_value);
        }
    sg_keyring ring;
    sg_keyring_init(&ring, NULL);
    char err[256];
    cr_assert_eq(sg_keyring_add_jwks(&ring, NULL, 0, jwks, strlen(jwks), NULL, NULL, err,
                                     sizeof err), SG_KEYS_OK, "%s", err);
    sg_scratch *sc = sg_scratch_new(NULL);
    /* RFC 9421 alone: B.2.6 has no tag and no expires. */
    sg_policy pol = {1618884473, 0, 8, 0};
    char ws[8192];
    sg_buf b = {ws, sizeof ws, 0};
    sg_result r;
    sg_verify(&p.rq, &ring, &pol, sc, &b, &r);
    memcpy(why, r.reason, r.reason_len);
    why[r.reason_len] = 0;
    cr_assert_eq(b.used, 0, "the workspace is given back");
    sg_scratch_free(sc, NULL);
    sg_keyring_clear(&ring);
    free(msg);
    return r.status;
}

Test(sig_rfc9421, b26_ed25519_verifies)
{
    char why[SG_REASON_BYTES + 1];
    cr_assert_eq(verify_b26(NULL, NULL, why), SG_VALID, "%s", why);
    cr_assert(strstr(why, "test-key-ed25519") != NULL, "%s", why);
    cr_assert_eq(verify_b26("Date", "Tue, 20 Apr 2021 02:07:56 GMT", why), SG_INVALID);
    cr_assert(strstr(why, "does not verify") != NULL, "%s", why);
    cr_assert_eq(verify_b26("Content-Length", "19", why), SG_INVALID);
    cr_assert_eq(verify_b26("Signature", "sig-b26=:AAAA:", why), SG_INVALID);
    cr_assert(strstr(why, "64 bytes") != NULL, "%s", why);
}

/* ---- the public API, with keys made here --------------------------------- */

static const char rules[] =
    "filter main(req: Request) {\n"
    "    let st = req.signature_status\n"
    "    if st == \"valid\" && req.signature_agent == \"https://agent.test\" { accept \"agent\" }\n"
    "    if st == \"valid\" && req.signature_agent == \"\" { accept \"key-only\" }\n"
    "    if st == \"valid\" { accept \"other-agent\" }\n"
    "    if st == \"absent\" { reject \"absent\" }\n"
    "    if st == \"invalid\" { reject \"invalid\" }\n"
    "    reject \"unknown status\"\n"
    "}\n";

static uint8_t pk[32], sk[64];
static char thumb[64], jwks_agent[512], jwks_bare[512];
static clf_program *prog;
static clf_ctx *ctx;

static clf_program *load_with(const char *jwks, const char *src)
{
    clf_keyring *ring = NULL;
    clf_options *o = NULL;
    char err[256];
    cr_assert_eq(clf_keyring_new(&ring), CLF_OK);
    if (jwks)
        cr_assert_eq(clf_keyring_add_jwks(ring, jwks, strlen(jwks), NULL, 0, err, sizeof err),
                     CLF_OK, "%s", err);
    cr_assert_eq(clf_options_new(&o), CLF_OK);
    cr_assert_eq(clf_options_set_keyring(o, ring), CLF_OK);
    clf_program *p = h_program_opts(src, o);
    clf_options_free(o);
    clf_keyring_free(ring); /* the program holds its own copy */
    return p;
}

static void setup(void)
{
    cr_assert_geq(sodium_init(), 0);
    crypto_sign_keypair(pk, sk);
    char x[64];
    sodium_bin2base64(x, sizeof x, pk, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sg_thumbprint_okp(x, strlen(x), thumb);
    snprintf(jwks_agent, sizeof jwks_agent,
             "{\"signature_agent\":\"https://agent.test\",\"keys\":[{\"kty\":\"OKP\","
             "\"crv\":\"Ed25519\",\"x\":\"%s\",\"use\":\"sig\"},{\"kty\":\"RSA\",\"n\":\"x\","
             "\"e\":\"AQAB\"}]}", x);
    snprintf(jwks_bare, sizeof jwks_bare, "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
                                          "\"x\":\"%s\"}]}", x);
    prog = load_with(jwks_agent, rules);
    cr_assert_eq(clf_ctx_new(prog, &ctx, NULL, 0), CLF_OK);
}

static void teardown(void)
{
    clf_ctx_free(ctx);
    clf_program_free(prog);
}

TestSuite(sig_api, .init = setup, .fini = teardown);

#define CREATED 1700000000
#define EXPIRES 1700003600

/* A request signed over ("@authority" "@method" "@path"
 * "signature-agent";key="sig1") with the parameters `params` (after the
 * inner list), its base written out as RFC 9421 section 2.5 has it. */
typedef struct signed_req {
    char input[512], sig[256], agent[128];
} signed_req;

static void sign(signed_req *r, const char *authority, const char *method, const char *path,
                 const char *agent_member, const char *params)
{
    static const char comps[] = "(\"@authority\" \"@method\" \"@path\" "
                                "\"signature-agent\";key=\"sig1\")";
    char base[1024];
    int n = snprintf(base, sizeof base,
                     "\"@authority\": %s\n\"@method\": %s\n\"@path\": %s\n"
                     "\"signature-agent\";key=\"sig1\": %s\n\"@signature-params\": %s%s",
                     authority, method, path, agent_member, comps, params);
    uint8_t s[64];
    crypto_sign_detached(s, NULL, (const uint8_t *)base, (size_t)n, sk);
    char b64[128];
    sodium_bin2base64(b64, sizeof b64, s, 64, sodium_base64_VARIANT_ORIGINAL);
    snprintf(r->input, sizeof r->input, "sig1=%s%s", comps, params);
    snprintf(r->sig, sizeof r->sig, "sig1=:%s:", b64);
    snprintf(r->agent, sizeof r->agent, "sig1=%s", agent_member);
}

static void std_params(char *out, size_t cap, const char *keyid, const char *tag)
{
    snprintf(out, cap, ";created=%d;expires=%d;keyid=\"%s\";tag=\"%s\"", CREATED, EXPIRES, keyid,
             tag);
}

/* Classifies GET /p on host example.com with r's headers (Host and path
 * as given), at time `now`. */
static h_result run(const signed_req *r, const char *host, const char *path, int64_t now)
{
    char req[2048];
    snprintf(req, sizeof req,
             "GET %s\nHost: %s\nSignature-Input: %s\nSignature: %s\nSignature-Agent: %s", path,
             host, r->input, r->sig, r->agent);
    h_result res = {0};
    clf_ctx_reset(ctx); /* then the time: h_classify's own reset would drop it */
    clf_ctx_set_time(ctx, now);
    char *line = req, *nl = strchr(line, '\n');
    *nl = 0;
    char *sp = strchr(line, ' ');
    clf_ctx_set_method(ctx, line, (size_t)(sp - line));
    clf_ctx_set_path(ctx, sp + 1, strlen(sp + 1));
    for (line = nl + 1; line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *c = strchr(line, ':');
        cr_assert_eq(clf_ctx_add_header(ctx, line, (size_t)(c - line), c + 2, strlen(c + 2)),
                     CLF_OK);
    }
    clf_verdict v;
    res.status = clf_eval(ctx, &v);
    res.verdict = v.verdict;
    snprintf(res.reason, sizeof res.reason, "%.*s", (int)v.reason_len, v.reason ? v.reason : "");
    return res;
}

static signed_req good(void)
{
    signed_req r;
    char params[256];
    std_params(params, sizeof params, thumb, "web-bot-auth");
    sign(&r, "example.com", "GET", "/p", "\"https://agent.test\"", params);
    return r;
}

Test(sig_api, valid_and_attributed)
{
    signed_req r = good();
    h_result h = run(&r, "example.com", "/p", CREATED + 10);
    cr_assert_eq(h.status, CLF_OK);
    cr_assert_str_eq(h.reason, "agent");
    size_t n;
    const char *why = vm_sig_reason(ctx, &n);
    cr_assert(strstr(why, "valid: key") != NULL, "%.*s", (int)n, why);
    /* the keyid the rules see is the key's thumbprint */
    clf_program *p = load_with(jwks_agent, "filter main(req: Request) {\n"
                                           "    if req.signature_keyid.len() == 43 { accept }\n"
                                           "    reject\n}\n");
    clf_ctx *saved = ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    cr_assert_eq(run(&r, "example.com", "/p", CREATED).verdict, CLF_ACCEPT);
    clf_ctx_free(ctx);
    ctx = saved;
    clf_program_free(p);
}

Test(sig_api, a_key_bound_to_no_url_verifies_unattributed)
{
    clf_ctx_free(ctx);
    clf_program_free(prog);
    prog = load_with(jwks_bare, rules);
    cr_assert_eq(clf_ctx_new(prog, &ctx, NULL, 0), CLF_OK);
    signed_req r = good();
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "key-only");
}

Test(sig_api, another_url_is_not_the_key_owner)
{
    signed_req r;
    char params[256];
    std_params(params, sizeof params, thumb, "web-bot-auth");
    sign(&r, "example.com", "GET", "/p", "\"https://evil.test\"", params);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid");
    /* the same URL spelled otherwise is the same URL */
    sign(&r, "example.com", "GET", "/p", "\"HTTPS://Agent.TEST:443/\"", params);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "agent");
}

Test(sig_api, tampering_invalidates)
{
    signed_req r = good();
    cr_assert_str_eq(run(&r, "example.org", "/p", CREATED).reason, "invalid", "host");
    cr_assert_str_eq(run(&r, "example.com", "/q", CREATED).reason, "invalid", "path");
    cr_assert_str_eq(run(&r, "example.com:8443", "/p", CREATED).reason, "invalid", "port");
    signed_req t = r;
    snprintf(t.agent, sizeof t.agent, "sig1=\"https://agent.test/x\"");
    cr_assert_str_eq(run(&t, "example.com", "/p", CREATED).reason, "invalid", "agent");
    t = r;
    t.input[strlen(t.input) - 2] = 'x'; /* the tag's last letter */
    cr_assert_str_eq(run(&t, "example.com", "/p", CREATED).reason, "invalid", "params");
    t = r;
    t.sig[10] = t.sig[10] == 'A' ? 'B' : 'A';
    cr_assert_str_eq(run(&t, "example.com", "/p", CREATED).reason, "invalid", "signature");
}

Test(sig_api, times)
{
    signed_req r = good();
    cr_assert_str_eq(run(&r, "example.com", "/p", EXPIRES + 60).reason, "agent", "within skew");
    cr_assert_str_eq(run(&r, "example.com", "/p", EXPIRES + 61).reason, "invalid", "expired");
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED - 60).reason, "agent", "within skew");
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED - 61).reason, "invalid", "future");
    size_t n;
    const char *why = vm_sig_reason(ctx, &n);
    cr_assert(strstr(why, "in the future") != NULL, "%.*s", (int)n, why);
}

Test(sig_api, keys_tags_and_required_parameters)
{
    signed_req r;
    char params[256];
    std_params(params, sizeof params, "an-unknown-key", "web-bot-auth");
    sign(&r, "example.com", "GET", "/p", "\"https://agent.test\"", params);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid", "unknown keyid");
    size_t n;
    const char *why = vm_sig_reason(ctx, &n);
    cr_assert(strstr(why, "not in the key ring") != NULL, "%.*s", (int)n, why);
    std_params(params, sizeof params, thumb, "not-web-bot-auth");
    sign(&r, "example.com", "GET", "/p", "\"https://agent.test\"", params);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid", "wrong tag");
    why = vm_sig_reason(ctx, &n);
    cr_assert(strstr(why, "web-bot-auth") != NULL, "%.*s", (int)n, why);
    snprintf(params, sizeof params, ";created=%d;keyid=\"%s\";tag=\"web-bot-auth\"", CREATED,
             thumb);
    sign(&r, "example.com", "GET", "/p", "\"https://agent.test\"", params);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid", "no expires");
    snprintf(params, sizeof params, ";created=%d;expires=%d;keyid=\"%s\";alg=\"rsa-pss-sha512\";"
                                    "tag=\"web-bot-auth\"", CREATED, EXPIRES, thumb);
    sign(&r, "example.com", "GET", "/p", "\"https://agent.test\"", params);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid", "alg");
}

Test(sig_api, absent_and_malformed)
{
    clf_ctx_reset(ctx);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_verdict v;
    cr_assert_eq(clf_eval(ctx, &v), CLF_OK);
    cr_assert_eq(v.reason_len, 6);
    cr_assert(memcmp(v.reason, "absent", 6) == 0);
    static const char *bad[][2] = {
        {"Signature-Input", "sig1=(\"@authority\""},
        {"Signature-Input", "sig1=(\"@authority\");created=1"}, /* no Signature */
        {"Signature", "sig1=:AAAA:"},
        {"Signature-Input", "\xff\xfe"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        clf_ctx_reset(ctx);
        clf_ctx_add_header(ctx, bad[i][0], strlen(bad[i][0]), bad[i][1], strlen(bad[i][1]));
        cr_assert_eq(clf_eval(ctx, &v), CLF_OK);
        cr_assert(v.reason_len == 7 && memcmp(v.reason, "invalid", 7) == 0, "%zu", i);
    }
    /* garbage in every field, as a whole */
    signed_req r = good();
    snprintf(r.sig, sizeof r.sig, "sig1=:not base64!:");
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid");
    r = good();
    snprintf(r.agent, sizeof r.agent, "sig1=\"https://agent.test\";type=\"\x01");
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "invalid");
}

Test(sig_api, lazy_and_once_per_request)
{
    /* rules that decide before reading a signature field verify nothing */
    clf_program *p = load_with(jwks_agent,
                               "filter main(req: Request) {\n"
                               "    if req.path == \"/free\" { accept \"free\" }\n"
                               "    if req.signature_status == \"valid\" && req.signature_agent != \"\" &&\n"
                               "       req.signature_keyid != \"\" { accept \"signed\" }\n"
                               "    reject\n}\n");
    clf_ctx *saved = ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    signed_req r = good();
    cr_assert_str_eq(run(&r, "example.com", "/free", CREATED).reason, "free");
    cr_assert_eq(vm_sig_count(ctx), 0);
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "signed");
    cr_assert_eq(vm_sig_count(ctx), 1, "three fields, one verification");
    cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "signed");
    cr_assert_eq(vm_sig_count(ctx), 2, "the next request verifies again");
    clf_ctx_free(ctx);
    ctx = saved;
    clf_program_free(p);
}

static size_t allocs;
static void *count_alloc(void *ud, size_t n)
{
    (void)ud;
    allocs++;
    return malloc(n);
}
static void count_free(void *ud, void *p)
{
    (void)ud;
    free(p);
}

Test(sig_api, verifying_allocates_nothing)
{
    clf_keyring *ring;
    clf_options *o;
    char err[256];
    clf_keyring_new(&ring);
    clf_keyring_add_jwks(ring, jwks_agent, strlen(jwks_agent), NULL, 0, err, sizeof err);
    clf_options_new(&o);
    clf_options_set_keyring(o, ring);
    clf_options_set_allocator(o, count_alloc, count_free, NULL);
    clf_program *p = h_program_opts(rules, o);
    clf_options_free(o);
    clf_keyring_free(ring);
    clf_ctx *saved = ctx;
    cr_assert_eq(clf_ctx_new(p, &ctx, NULL, 0), CLF_OK);
    signed_req r = good();
    size_t before = allocs;
    for (int i = 0; i < 10; i++) {
        cr_assert_str_eq(run(&r, "example.com", "/p", CREATED).reason, "agent");
        cr_assert_str_eq(run(&r, "example.org", "/p", CREATED).reason, "invalid");
    }
    cr_assert_eq(allocs, before, "%zu allocations while classifying", allocs - before);
    clf_ctx_free(ctx);
    ctx = saved;
    clf_program_free(p);
}

/* ---- key rings -------------------------------------------------------- */

static clf_status add(const char *json, char *err)
{
    clf_keyring *ring;
    clf_keyring_new(&ring);
    clf_status st = clf_keyring_add_jwks(ring, json, strlen(json), NULL, 0, err, 256);
    if (st != CLF_OK) cr_assert_eq(clf_keyring_count(ring), 0, "all or nothing");
    clf_keyring_free(ring);
    return st;
}

Test(sig_keys, malformed_sets_are_refused_with_a_reason)
{
    static const struct { const char *json, *says; } bad[] = {
        {"{\"keys\":[", "not JSON"},
        {"[]", "not a JWK Set"},
        {"{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"abc\"}]}", "43 characters"},
        {"{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs\","
         "\"d\":\"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU\"}]}", "private key"},
        {"{\"keys\":[{\"kty\":\"OKP\",\"kty\":\"OKP\"}]}", "duplicate"},
        {"{\"keys\":[7]}", "key 0 is not a JSON object"},
        {"{\"keys\":[{\"crv\":\"Ed25519\"}]}", "no \"kty\""},
        {"{\"signature_agent\":\"http://a.test\",\"keys\":[]}", "not an https URL"},
        {"{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs\","
         "\"exp\":\"soon\"}]}", "integers"},
    };
    char err[256];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(add(bad[i].json, err), CLF_E_FORMAT, "%zu", i);
        cr_assert(strstr(err, bad[i].says) != NULL, "%zu: %s", i, err);
    }
    cr_assert_eq(add("{\"keys\":[]}", err), CLF_OK);
    cr_assert_eq(clf_keyring_add_jwks(NULL, "", 0, NULL, 0, err, sizeof err), CLF_E_INVALID);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    fputs(text, f);
    fclose(f);
}

Test(sig_keys, files_and_directories)
{
    char dir[] = "/tmp/clf-keys-XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char a[64], b[64], sub[64];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(sub, sizeof sub, "%s/ignored.txt", dir);
    write_file(a, "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\","
                  "\"x\":\"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs\"}]}");
    write_file(sub, "not json");
    clf_keyring *ring;
    clf_keyring_new(&ring);
    char err[256];
    cr_assert_eq(clf_keyring_load(ring, dir, err, sizeof err), CLF_OK, "%s", err);
    cr_assert_eq(clf_keyring_count(ring), 1);
    write_file(b, "{\"keys\":[{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"AAAA\"}]}");
    cr_assert_eq(clf_keyring_load(ring, dir, err, sizeof err), CLF_E_FORMAT);
    cr_assert(strstr(err, "b.json: key 0") != NULL, "%s", err);
    cr_assert_eq(clf_keyring_count(ring), 1, "a.json's keys were taken back");
    cr_assert_eq(clf_keyring_load(ring, "/nonexistent/keys.json", err, sizeof err), CLF_E_IO);
    cr_assert(strstr(err, "/nonexistent/keys.json: ") == err, "%s", err);
    unlink(a);
    unlink(b);
    cr_assert_eq(clf_keyring_load(ring, dir, err, sizeof err), CLF_E_FORMAT);
    cr_assert(strstr(err, "no .json file") != NULL, "%s", err);
    unlink(sub);
    rmdir(dir);
    clf_keyring_free(ring);
}
