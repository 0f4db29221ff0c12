/*
 * fuzz_sig.c: HTTP Message Signatures: the structured-field parser and
 * serializer, Signature-Agent URLs, signature bases and verification,
 * and key sets (sig/, fuzz/README.md).
 *
 * The input is a request as text lines: "METHOD TARGET", then header
 * lines "Name: value" ('\n'-separated; a line without ':' is skipped), a
 * line "@time N" setting the request's time. The seeds (made by
 * fuzz/make_sig_seeds.py) are requests signed with the key this target
 * derives from a fixed seed, valid and tampered, so that mutations reach
 * the base and the Ed25519 check.
 *
 * Checked beyond crashes:
 *   - every header value that parses as a Dictionary (RFC 8941) serializes
 *     to text that parses again and serializes to the same bytes; the
 *     same for an Item;
 *   - sg_url_norm never lengthens and is idempotent;
 *   - classification with fuzz/sig.clf returns CLF_OK (or CLF_E_LIMIT),
 *     with a reason from the rules' set: never "unknown status", never
 *     valid without a keyid; clf_eval_explain agrees;
 *   - the whole input as a JWK Set: clf_keyring_add_jwks returns a listed
 *     status, and a refused set adds no key.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "readfile.h"
#include "sg_url.h"
#include "sg_verify.h"

static clf_program *prog;
static clf_ctx *ctx;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (sodium_init() < 0) FUZZ_FAIL("sodium_init");
    /* The seeds' key: crypto_sign_seed_keypair of the bytes 0..31. */
    uint8_t seed[32], pk[32], sk[64];
    for (int i = 0; i < 32; i++) seed[i] = (uint8_t)i;
    crypto_sign_seed_keypair(pk, sk, seed);
    char x[64], jwks[256], err[CLF_ERRMSG_SIZE];
    sodium_bin2base64(x, sizeof x, pk, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    snprintf(jwks, sizeof jwks, "{\"signature_agent\":\"https://agent.test\",\"keys\":[{"
                                "\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\"}]}", x);
    clf_keyring *ring;
    clf_options *o;
    if (clf_keyring_new(&ring) || clf_keyring_add_jwks(ring, jwks, strlen(jwks), NULL, 0, err,
                                                       sizeof err) ||
        clf_options_new(&o) || clf_options_set_keyring(o, ring))
        FUZZ_FAIL("the key ring: %s", err);
    char *bytes;
    size_t len;
    int e;
    if (cm_read_file(FUZZ_SIG_RULES_PATH, 1 << 24, 0, &bytes, &len, &e, NULL) != CM_READ_OK)
        FUZZ_FAIL("cannot read %s", FUZZ_SIG_RULES_PATH);
    if (clf_program_load(bytes, len, o, &prog, err, sizeof err) ||
        clf_ctx_new(prog, &ctx, err, sizeof err))
        FUZZ_FAIL("loading %s: %s", FUZZ_SIG_RULES_PATH, err);
    free(bytes);
    clf_options_free(o);
    clf_keyring_free(ring);
    return 0;
}

static sg_member members[64];
static sg_item items[256];
static sg_param params[256];

/* Serializes members [first, first + count) of sf as a Dictionary. */
static size_t ser_dict(const sg_sf *sf, uint32_t first, uint32_t count, char *buf, size_t cap,
                       int *full)
{
    sg_out o = {buf, cap, 0, 0};
    for (uint32_t k = first; k < first + count; k++) {
        const sg_member *m = &sf->m[k];
        if (k > first) sg_out_z(&o, ", ");
        sg_out_str(&o, m->key);
        const sg_item *it = &sf->it[m->item0];
        if (!m->inner && it->v.kind == SG_BOOL && it->v.i) { /* key alone, then params */
            sg_sf_ser_params(&o, sf, it->param0, it->nparams);
            continue;
        }
        sg_out_byte(&o, '=');
        sg_sf_ser_member(&o, sf, m);
    }
    *full = o.full;
    return o.n;
}

static void check_sf(const char *v, size_t n)
{
    static char a[1 << 17], b[1 << 17];
    sg_sf sf = {members, 0, 64, items, 0, 256, params, 0, 256};
    uint32_t first, count;
    sg_sf_error e;
    if (sg_sf_parse_dict(&sf, v, n, &first, &count, &e) == 0) {
        int full;
        size_t an = ser_dict(&sf, first, count, a, sizeof a, &full);
        if (full) return;
        sg_sf_clear(&sf);
        if (sg_sf_parse_dict(&sf, a, an, &first, &count, &e) != 0)
            FUZZ_FAIL("a serialized Dictionary does not parse: %s at %zu: %.*s", e.what, e.off,
                      (int)an, a);
        size_t bn = ser_dict(&sf, first, count, b, sizeof b, &full);
        if (bn != an || memcmp(a, b, an) != 0)
            FUZZ_FAIL("serializing is not idempotent: %.*s / %.*s", (int)an, a, (int)bn, b);
    } else if (e.off > n || !e.what) {
        FUZZ_FAIL("a parse error at %zu of %zu bytes, or without a reason", e.off, n);
    } else if (sf.nm || sf.nit || sf.npa) {
        FUZZ_FAIL("a failed parse left entries behind");
    }
    sg_sf_clear(&sf);
    if (sg_sf_parse_item(&sf, v, n, &first, &e) == 0) {
        sg_out o = {a, sizeof a, 0, 0};
        sg_sf_ser_member(&o, &sf, &sf.m[first]);
        sg_sf_clear(&sf);
        if (!o.full && sg_sf_parse_item(&sf, a, o.n, &first, &e) != 0)
            FUZZ_FAIL("a serialized Item does not parse: %.*s", (int)o.n, a);
    }
}

static void check_url(const char *v, size_t n)
{
    static char a[1 << 17], b[1 << 17];
    long an = sg_url_norm(v, n, a, sizeof a, NULL);
    if (an < 0) return;
    if ((size_t)an > n) FUZZ_FAIL("a normalized URL grew: %zu to %ld", n, an);
    long bn = sg_url_norm(a, (size_t)an, b, sizeof b, NULL);
    if (bn != an || memcmp(a, b, (size_t)an) != 0)
        FUZZ_FAIL("URL normalization is not idempotent: %.*s / %.*s", (int)an, a,
                  bn < 0 ? 0 : (int)bn, b);
}

static void check_keys(const uint8_t *data, size_t size)
{
    clf_keyring *ring;
    if (clf_keyring_new(&ring) != CLF_OK) return;
    char err[CLF_ERRMSG_SIZE] = "";
    clf_status st = clf_keyring_add_jwks(ring, (const char *)data, size, NULL, 0, err, sizeof err);
    if (st != CLF_OK && st != CLF_E_FORMAT && st != CLF_E_NOMEM)
        FUZZ_FAIL("clf_keyring_add_jwks returned %d", st);
    if (st != CLF_OK && (clf_keyring_count(ring) != 0 || !err[0]))
        FUZZ_FAIL("a refused key set added keys or gave no reason");
    clf_keyring_free(ring);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16) return 0;
    check_keys(data, size);
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    clf_ctx_reset(ctx);
    char *line = text, *end = text + size;
    int first = 1;
    while (line <= end) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        if (first) {
            char *sp = memchr(line, ' ', n);
            size_t mn = sp ? (size_t)(sp - line) : n;
            clf_ctx_set_method(ctx, line, mn);
            const char *t = sp ? sp + 1 : line + n;
            size_t tn = (size_t)(line + n - t);
            const char *q = memchr(t, '?', tn);
            clf_ctx_set_path(ctx, t, q ? (size_t)(q - t) : tn);
            if (q) clf_ctx_set_query(ctx, q + 1, (size_t)(t + tn - q - 1));
            clf_ctx_set_scheme(ctx, "https", 5);
            first = 0;
        } else if (n > 6 && memcmp(line, "@time ", 6) == 0) {
            clf_ctx_set_time(ctx, strtoll(line + 6, NULL, 10));
        } else {
            char *colon = memchr(line, ':', n);
            if (colon) {
                const char *v = colon + 1;
                while (v < line + n && *v == ' ') v++;
                size_t vn = (size_t)(line + n - v);
                clf_ctx_add_header(ctx, line, (size_t)(colon - line), v, vn);
                check_sf(v, vn);
                check_url(v, vn);
            }
        }
        if (!nl) break;
        line = nl + 1;
    }
    clf_verdict v = {CLF_ACCEPT, NULL, 0};
    clf_status st = clf_eval(ctx, &v);
    if (st != CLF_OK && st != CLF_E_LIMIT)
        FUZZ_FAIL("clf_eval returned %d: %s", st, clf_ctx_errmsg(ctx));
    if (st == CLF_OK && v.reason &&
        (strcmp(v.reason, "unknown status") == 0 || strcmp(v.reason, "valid without a keyid") == 0))
        FUZZ_FAIL("the rules saw %s", v.reason);
    if (fuzz_verbose() && st == CLF_OK)
        fprintf(stderr, "fuzz: %s\n", v.reason ? v.reason : "(none)");
    fuzz_check_explain(ctx, st, &v, "the request");
    free(text);
    return 0;
}
