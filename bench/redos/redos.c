/*
 * redos.c: classify-redos-bench, the time of one classification of a
 * ReDoS attack User-Agent, per attack string and length. A reporting
 * program, not a test: bench/redos/run.py builds the inputs (the rules
 * file compiled from uap-core's regexes, the attack strings of
 * redos-attack-specs.jsonl at several lengths), runs this program and
 * turns its raw figures into the report (see bench/redos/README.md).
 *
 *   classify-redos-bench RULES.bin CASES.tsv [--runs N] [--header-value-limit BYTES]
 *
 * CASES.tsv, one case per line, tab-separated:
 *     ID  PREFIX_HEX  UNIT_HEX  COUNT  SUFFIX_HEX  CUT
 * The User-Agent of a case is PREFIX + UNIT * COUNT + SUFFIX (bytes given
 * in hex; an empty field is the empty string), cut to CUT bytes when CUT
 * is not 0. ID is an opaque label echoed back (no tabs).
 *
 * Every case is built once, before any timing, and classified once to
 * check that clf_eval() succeeds (the verdict and reason are printed).
 * Then N rounds; in each round every case is classified once, in an order
 * shuffled per round (a fixed seed), so that a burst of noise on the
 * shared machine is spread over all cases instead of hitting one.
 *
 * One classification is exactly what a server calls for a request:
 * clf_ctx_reset, clf_ctx_set_method ("GET"), clf_ctx_set_path ("/"),
 * clf_ctx_add_header ("User-Agent", the attack string), clf_eval. It is
 * timed with clock_gettime(CLOCK_MONOTONIC); the median cost of an empty
 * timed interval is subtracted. Before each timed call the User-Agent is
 * read once (untimed), so it is in the cache as it would be in a server
 * that has just received the request.
 *
 * The library's default limits apply, as in a server that sets none;
 * --header-value-limit raises CLF_LIMIT_HEADER_VALUE_BYTES (and, if
 * needed, CLF_LIMIT_HEADER_BYTES) so that longer strings can be measured.
 *
 * Output on stdout: `#` comment lines (timer cost, runs), then one line
 * per case, tab-separated:
 *     ID  LENGTH  VERDICT  REASON  MEDIAN_NS  MIN_NS  MAX_NS
 * VERDICT is accept or reject, REASON is "-" when the rule gave none. A
 * case longer than the library's header-value limit (64 KiB by default) is
 * refused by clf_ctx_add_header() (CLF_E_LIMIT), by design: its line reads
 *     ID  LENGTH  refused  CLF_E_LIMIT  -  -  -
 * and it is not timed.
 * Exit status: 0, or 1 when something cannot be loaded or classified.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify.h"
#include "util.h"

/* xorshift64*: a fixed, portable shuffle order. */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Du;
}

/* ---------------------------------------------------------------- cases */

typedef struct bench_case {
    char *id;
    char *ua;
    size_t len;
    int verdict;
    int refused; /* clf_ctx_add_header() refused it (CLF_E_LIMIT) */
    char reason[64];
    uint64_t *samples;
} bench_case;

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes the hex field [s, e) into a new buffer; *n gets its length. */
static char *unhex(const char *s, const char *e, size_t *n, int line)
{
    size_t len = (size_t)(e - s);
    if (len % 2) die("cases line %d: odd-length hex field", line);
    char *out = xmalloc(len / 2 + 1);
    for (size_t i = 0; i < len / 2; i++) {
        int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0) die("cases line %d: bad hex digit", line);
        out[i] = (char)(hi * 16 + lo);
    }
    out[len / 2] = '\0';
    *n = len / 2;
    return out;
}

static size_t parse_size(const char *s, const char *e, int line)
{
    if (s == e) die("cases line %d: empty number", line);
    size_t v = 0;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9') die("cases line %d: bad number", line);
        if (v > (SIZE_MAX - 9) / 10) die("cases line %d: number too large", line);
        v = v * 10 + (size_t)(*s - '0');
    }
    return v;
}

#define MAX_UA_BYTES ((size_t)64 << 20) /* a sanity cap on a built case */

static bench_case *read_cases(const char *path, size_t *ncases)
{
    size_t len;
    char *text = read_file(path, &len);
    size_t cap = 256, n = 0;
    bench_case *cs = xmalloc(cap * sizeof *cs);
    int line = 0;
    for (char *p = text; p < text + len;) {
        char *eol = memchr(p, '\n', (size_t)(text + len - p));
        if (!eol) eol = text + len;
        line++;
        if (eol == p) {
            p = eol + 1;
            continue;
        }
        const char *f[7];
        int nf = 0;
        f[nf++] = p;
        for (char *q = p; q < eol; q++)
            if (*q == '\t') {
                if (nf == 6) die("cases line %d: more than 6 fields", line);
                f[nf++] = q + 1;
            }
        if (nf != 6) die("cases line %d: %d fields, expected 6", line, nf);
        f[6] = eol + 1;
#define FEND(i) (f[(i) + 1] - 1)
        if (n == cap) {
            cap *= 2;
            bench_case *nc = realloc(cs, cap * sizeof *cs);
            if (!nc) die("out of memory");
            cs = nc;
        }
        bench_case *c = &cs[n++];
        memset(c, 0, sizeof *c);
        size_t idlen = (size_t)(FEND(0) - f[0]);
        c->id = xmalloc(idlen + 1);
        memcpy(c->id, f[0], idlen);
        c->id[idlen] = '\0';
        size_t plen, ulen, slen;
        char *pre = unhex(f[1], FEND(1), &plen, line);
        char *unit = unhex(f[2], FEND(2), &ulen, line);
        size_t count = parse_size(f[3], FEND(3), line);
        char *suf = unhex(f[4], FEND(4), &slen, line);
        size_t cut = parse_size(f[5], FEND(5), line);
#undef FEND
        if (ulen && count > (MAX_UA_BYTES - plen - slen) / ulen)
            die("cases line %d: the User-Agent would exceed %zu bytes", line, MAX_UA_BYTES);
        size_t total = plen + ulen * count + slen;
        c->ua = xmalloc(total + 1);
        memcpy(c->ua, pre, plen);
        for (size_t k = 0; k < count; k++) memcpy(c->ua + plen + k * ulen, unit, ulen);
        memcpy(c->ua + plen + ulen * count, suf, slen);
        c->len = cut && cut < total ? cut : total;
        c->ua[c->len] = '\0';
        free(pre);
        free(unit);
        free(suf);
        p = eol + 1;
    }
    free(text);
    if (n == 0) die("%s: no cases", path);
    *ncases = n;
    return cs;
}

/* ------------------------------------------------------------- classify */

enum { STEP_SET, STEP_HEADER, STEP_EVAL };

/* One classification, as a server makes it; *step says which call failed. */
static clf_status classify(clf_ctx *ctx, const bench_case *c, clf_verdict *v, int *step)
{
    clf_status st;
    clf_ctx_reset(ctx);
    *step = STEP_SET;
    if ((st = clf_ctx_set_method(ctx, "GET", 3)) != CLF_OK) return st;
    if ((st = clf_ctx_set_path(ctx, "/", 1)) != CLF_OK) return st;
    *step = STEP_HEADER;
    if ((st = clf_ctx_add_header(ctx, "User-Agent", 10, c->ua, c->len)) != CLF_OK) return st;
    *step = STEP_EVAL;
    return clf_eval(ctx, v);
}

/* Reads the User-Agent once so that the timed call finds it in cache. */
static unsigned touch(const bench_case *c)
{
    unsigned sum = 0;
    for (size_t i = 0; i < c->len; i += 64) sum += (unsigned char)c->ua[i];
    return sum;
}

static uint64_t timer_cost(void)
{
    enum { N = 10001 };
    static uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = now_ns();
        uint64_t b = now_ns();
        d[i] = b - a;
    }
    qsort(d, N, sizeof d[0], cmp_u64);
    return d[N / 2];
}

static void usage(void)
{
    fputs("usage: classify-redos-bench RULES.bin CASES.tsv [--runs N] "
          "[--header-value-limit BYTES]\n"
          "(normally run by bench/redos/run.py; see bench/redos/README.md)\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    bench_prog = "classify-redos-bench";
    const char *rules_path = NULL, *cases_path = NULL;
    long runs = 11;
    unsigned long long value_limit = 0; /* 0: the library's default */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            char *end;
            runs = strtol(argv[++i], &end, 10);
            if (*end || runs < 1 || runs > 100000) die("--runs takes a number from 1 to 100000");
        } else if (!strcmp(argv[i], "--header-value-limit") && i + 1 < argc) {
            char *end;
            value_limit = strtoull(argv[++i], &end, 10);
            if (*end || value_limit < 1 || value_limit > ((unsigned long long)1 << 30))
                die("--header-value-limit takes a number of bytes from 1 to 2^30");
        } else if (argv[i][0] == '-' && argv[i][1]) {
            usage();
        } else if (!rules_path) {
            rules_path = argv[i];
        } else if (!cases_path) {
            cases_path = argv[i];
        } else {
            usage();
        }
    }
    if (!rules_path || !cases_path) usage();

    char err[CLF_ERRMSG_SIZE];
    size_t rlen;
    char *rules = read_file(rules_path, &rlen);
    clf_program *prog;
    clf_ctx *ctx;
    clf_options *opts = NULL;
    if (value_limit) {
        if (clf_options_new(&opts) != CLF_OK) die("clf_options_new failed");
        if (clf_options_set_limit(opts, CLF_LIMIT_HEADER_VALUE_BYTES, value_limit) != CLF_OK ||
            clf_options_set_limit(opts, CLF_LIMIT_HEADER_BYTES,
                                  value_limit + 4096 > 262144 ? value_limit + 4096 : 262144) !=
                CLF_OK)
            die("clf_options_set_limit failed");
    }
    if (clf_program_load(rules, rlen, opts, &prog, err, sizeof err) != CLF_OK)
        die("%s: %s", rules_path, err);
    clf_options_free(opts);
    free(rules);
    if (clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK) die("clf_ctx_new: %s", err);

    size_t n;
    bench_case *cs = read_cases(cases_path, &n);

    /* Check every case classifies, and warm up. A User-Agent longer than
     * the library's header-value limit (CLF_LIMIT_HEADER_VALUE_BYTES, 64 KiB
     * by default) is refused by clf_ctx_add_header() with CLF_E_LIMIT, by
     * design: such a case is reported as refused and not timed. */
    size_t ntimed = 0;
    for (size_t i = 0; i < n; i++) {
        clf_verdict v;
        int step;
        clf_status st = classify(ctx, &cs[i], &v, &step);
        if (st == CLF_E_LIMIT && step == STEP_HEADER) {
            cs[i].refused = 1;
            snprintf(cs[i].reason, sizeof cs[i].reason, "CLF_E_LIMIT");
            continue;
        }
        if (st != CLF_OK)
            die("case %s (%zu bytes): %s: %s", cs[i].id, cs[i].len, clf_strerror(st),
                clf_ctx_errmsg(ctx));
        cs[i].verdict = v.verdict;
        if (v.reason)
            snprintf(cs[i].reason, sizeof cs[i].reason, "%.*s", (int)v.reason_len, v.reason);
        else
            strcpy(cs[i].reason, "-");
        for (char *q = cs[i].reason; *q; q++)
            if (*q == '\t' || *q == '\n' || *q == '\r') *q = ' ';
        cs[i].samples = xmalloc((size_t)runs * sizeof(uint64_t));
        ntimed++;
    }

    uint64_t cost = timer_cost();
    size_t *order = xmalloc((ntimed ? ntimed : 1) * sizeof *order);
    for (size_t i = 0, k = 0; i < n; i++)
        if (!cs[i].refused) order[k++] = i;
    volatile unsigned sink = 0; /* keeps the touches from being optimized away */
    uint64_t t_start = now_ns();
    for (long r = 0; r < runs; r++) {
        for (size_t i = ntimed; i > 1; i--) { /* Fisher-Yates */
            size_t j = (size_t)(rng() % i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (size_t k = 0; k < ntimed; k++) {
            bench_case *c = &cs[order[k]];
            clf_verdict v;
            int step;
            sink += touch(c);
            uint64_t a = now_ns();
            clf_status st = classify(ctx, c, &v, &step);
            uint64_t b = now_ns();
            if (st != CLF_OK) die("case %s: %s", c->id, clf_ctx_errmsg(ctx));
            uint64_t d = b - a;
            c->samples[r] = d > cost ? d - cost : 0;
        }
    }
    uint64_t t_total = now_ns() - t_start;
    (void)sink;

    printf("# classify-redos-bench: %zu cases (%zu timed, %zu refused by a limit), %ld runs "
           "each, libclassify %s\n", n, ntimed, n - ntimed, runs, clf_version_string());
    printf("# limits: header value %llu bytes, all headers %llu bytes%s\n",
           (unsigned long long)clf_program_limit(prog, CLF_LIMIT_HEADER_VALUE_BYTES),
           (unsigned long long)clf_program_limit(prog, CLF_LIMIT_HEADER_BYTES),
           value_limit ? " (raised with --header-value-limit)" : " (the library's defaults)");
    printf("# timer: empty interval %llu ns (median), subtracted from every sample\n",
           (unsigned long long)cost);
    printf("# timing took %.2f s\n", (double)t_total / 1e9);
    printf("# id\tlength\tverdict\treason\tmedian_ns\tmin_ns\tmax_ns\n");
    for (size_t i = 0; i < n; i++) {
        bench_case *c = &cs[i];
        if (c->refused) {
            printf("%s\t%zu\trefused\t%s\t-\t-\t-\n", c->id, c->len, c->reason);
            continue;
        }
        qsort(c->samples, (size_t)runs, sizeof(uint64_t), cmp_u64);
        printf("%s\t%zu\t%s\t%s\t%llu\t%llu\t%llu\n", c->id, c->len,
               c->verdict == CLF_ACCEPT ? "accept" : "reject", c->reason,
               (unsigned long long)c->samples[runs / 2], (unsigned long long)c->samples[0],
               (unsigned long long)c->samples[runs - 1]);
    }

    for (size_t i = 0; i < n; i++) {
        free(cs[i].id);
        free(cs[i].ua);
        free(cs[i].samples);
    }
    free(cs);
    free(order);
    clf_ctx_free(ctx);
    clf_program_free(prog);
    return 0;
}
