/*
 * sig_bench.c: what verifying HTTP Message Signatures costs per request
 * (docs/signatures.md, "Cost"): clf_ctx_reset, the request's hand-over
 * (method, path, Host, User-Agent, Accept, the three signature headers)
 * and clf_eval with bench/sig/sig.clf, for each kind of request, as the
 * median over rounds of ns per request. The key and the signatures are
 * made here (libsodium); the time is fixed with clf_ctx_set_time.
 *
 *   build/bench/sig/sig-bench [ROUNDS [REQUESTS_PER_ROUND]]
 */
#include <classify.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "sig-bench: %s: %s\n", what, err);
    exit(1);
}

typedef struct req {
    const char *name, *host, *input, *sig, *agent;
    int64_t time;
    const char *want;
} req;

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *run(clf_ctx *ctx, uint32_t filter, const req *r)
{
    clf_ctx_reset(ctx);
    clf_ctx_set_time(ctx, r->time);
    clf_ctx_set_method(ctx, "GET", 3);
    clf_ctx_set_path(ctx, "/path/to/resource", 17);
    clf_ctx_add_header(ctx, "Host", 4, r->host, strlen(r->host));
    clf_ctx_add_header(ctx, "User-Agent", 10, "Mozilla/5.0 (compatible; ExampleBot/1.0)", 40);
    clf_ctx_add_header(ctx, "Accept", 6, "*/*", 3);
    if (r->input) {
        clf_ctx_add_header(ctx, "Signature-Agent", 15, r->agent, strlen(r->agent));
        clf_ctx_add_header(ctx, "Signature-Input", 15, r->input, strlen(r->input));
        clf_ctx_add_header(ctx, "Signature", 9, r->sig, strlen(r->sig));
    }
    clf_verdict v;
    if (clf_eval_filter(ctx, filter, &v) != CLF_OK) die("clf_eval", clf_ctx_errmsg(ctx));
    return v.reason ? v.reason : "";
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 15, per = argc > 2 ? atoi(argv[2]) : 2000;
    if (sodium_init() < 0) die("sodium_init", "failed");
    uint8_t pk[32], sk[64];
    crypto_sign_keypair(pk, sk);
    char x[64], jwks[256], err[CLF_ERRMSG_SIZE], thumb[64];
    sodium_bin2base64(x, sizeof x, pk, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    /* RFC 7638 thumbprint of the OKP key (RFC 8037 appendix A.3) */
    char tj[128];
    snprintf(tj, sizeof tj, "{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"%s\"}", x);
    uint8_t h[32];
    crypto_hash_sha256(h, (const uint8_t *)tj, strlen(tj));
    sodium_bin2base64(thumb, sizeof thumb, h, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    snprintf(jwks, sizeof jwks, "{\"signature_agent\":\"https://agent.test\",\"keys\":[{"
                                "\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"%s\"}]}", x);

    /* The signed request: @authority, @path and its Signature-Agent member. */
    char input[512], base[1024], sig[128];
    const char *comps = "(\"@authority\" \"@path\" \"signature-agent\";key=\"sig1\")";
    snprintf(input, sizeof input,
             "sig1=%s;created=1700000000;expires=1700003600;keyid=\"%s\";tag=\"web-bot-auth\"",
             comps, thumb);
    int n = snprintf(base, sizeof base,
                     "\"@authority\": example.com\n\"@path\": /path/to/resource\n"
                     "\"signature-agent\";key=\"sig1\": \"https://agent.test\"\n"
                     "\"@signature-params\": %s", input + 5);
    uint8_t s[64];
    crypto_sign_detached(s, NULL, (const uint8_t *)base, (size_t)n, sk);
    char b64[100];
    sodium_bin2base64(b64, sizeof b64, s, 64, sodium_base64_VARIANT_ORIGINAL);
    snprintf(sig, sizeof sig, "sig1=:%s:", b64);
    const char *agent = "sig1=\"https://agent.test\"";

    clf_keyring *ring;
    clf_options *o;
    clf_program *prog;
    clf_ctx *ctx;
    if (clf_keyring_new(&ring) || clf_keyring_add_jwks(ring, jwks, strlen(jwks), NULL, 0, err,
                                                       sizeof err))
        die("key ring", err);
    clf_options_new(&o);
    clf_options_set_keyring(o, ring);
    FILE *f = fopen(SIG_BENCH_RULES, "rb");
    if (!f) die(SIG_BENCH_RULES, "cannot open");
    static char bytes[1 << 20];
    size_t len = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    if (clf_program_load(bytes, len, o, &prog, err, sizeof err)) die("load", err);
    if (clf_ctx_new(prog, &ctx, err, sizeof err)) die("context", err);
    uint32_t fmain, fplain;
    if (clf_program_find_filter(prog, "main", 4, &fmain, err, sizeof err) ||
        clf_program_find_filter(prog, "plain", 5, &fplain, err, sizeof err))
        die("filters", err);

    const req reqs[] = {
        {"unsigned, no signature field read (filter plain)", "example.com", NULL, NULL, NULL,
         1700000100, ""},
        {"unsigned: absent", "example.com", NULL, NULL, NULL, 1700000100, "absent"},
        {"signed, fields not read (filter plain)", "example.com", input, sig, agent, 1700000100,
         ""},
        {"signed: valid (one Ed25519 verification)", "example.com", input, sig, agent,
         1700000100, "agent"},
        {"signed, host changed: invalid (the verification fails)", "example.org", input, sig,
         agent, 1700000100, "invalid"},
        {"signed, expired: invalid (no verification)", "example.com", input, sig, agent,
         1800000000, "invalid"},
    };
    double *t = malloc(sizeof *t * (size_t)rounds);
    /* p99 too, and requests per second on one core (1e9 / median) */
    printf("%-58s %14s %10s %14s\n", "request", "ns/op (median)", "p99", "per s per core");
    for (size_t k = 0; k < sizeof reqs / sizeof *reqs; k++) {
        uint32_t filter = strstr(reqs[k].name, "plain") ? fplain : fmain;
        const char *got = run(ctx, filter, &reqs[k]);
        if (reqs[k].want[0] && strcmp(got, reqs[k].want) != 0) die(reqs[k].name, got);
        for (int r = 0; r < rounds; r++) {
            double t0 = now_ns();
            for (int i = 0; i < per; i++) run(ctx, filter, &reqs[k]);
            t[r] = (now_ns() - t0) / per;
        }
        qsort(t, (size_t)rounds, sizeof *t, cmp);
        printf("%-58s %14.0f %10.0f %14.0f\n", reqs[k].name, t[rounds / 2],
               t[(rounds * 99) / 100], 1e9 / t[rounds / 2]);
    }
    /* The floor: libsodium's verification alone, over the same base. */
    for (int r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (int i = 0; i < per; i++)
            if (crypto_sign_verify_detached(s, (const uint8_t *)base, (size_t)n, pk) != 0)
                die("crypto_sign_verify_detached", "failed");
        t[r] = (now_ns() - t0) / per;
    }
    qsort(t, (size_t)rounds, sizeof *t, cmp);
    printf("%-58s %14.0f %10.0f %14.0f\n", "crypto_sign_verify_detached alone", t[rounds / 2],
           t[(rounds * 99) / 100], 1e9 / t[rounds / 2]);
    free(t);
    clf_ctx_free(ctx);
    clf_program_free(prog);
    clf_options_free(o);
    clf_keyring_free(ring);
    return 0;
}
