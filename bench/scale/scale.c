/*
 * scale.c: classify-scale, nanoseconds per classification of one rule
 * ("the User-Agent matches one of these N patterns" -> reject, else
 * accept) by libclassify and by a hand-written PCRE2-JIT loop, for one
 * pattern list and one workload. A reporting program, not a test:
 * bench/scale/run.py generates the inputs, runs this program once per
 * point of the two sweeps (pattern count, User-Agent length) and draws
 * the plots (see bench/scale/README.md).
 *
 *   classify-scale RULES.bin PATTERNS.tsv UAS.txt [--seconds S] [--rounds R]
 *   classify-scale --check-pool PATTERNS.tsv UAS.txt
 *
 * PATTERNS.tsv  one pattern per line: FLAGS TAB REGEX. FLAGS is `i`
 *               (caseless) or `-`; REGEX is in the syntax both Hyperscan
 *               and PCRE2 read the same way (run.py writes it, and writes
 *               the same text between slashes into the .clf it compiles
 *               to RULES.bin), so both sides test exactly the same list.
 * UAS.txt       the workload, one User-Agent per line (bytes, no escapes).
 *
 * One classification:
 *  - libclassify: clf_ctx_reset, clf_ctx_set_method ("GET"),
 *    clf_ctx_set_path ("/"), clf_ctx_add_header (Host, User-Agent),
 *    clf_eval: what a server calls per request;
 *  - PCRE2-JIT loop: find the User-Agent among the same two headers, then
 *    pcre2_match() with each of the N regexes (compiled once, each with
 *    pcre2_jit_compile) in file order, stopping at the first match: what
 *    a hand-written C classifier does;
 *  - Hyperscan floor (context): one hs_scan of the User-Agent alone against
 *    the N patterns in one database, stopping at the first match.
 *
 * Before timing, every User-Agent is classified by all three; the verdicts
 * must agree on all of them, or the run stops (exit 1) naming the first
 * User-Agent that differs and the pattern count. This pass also warms up.
 *
 * Timing: whole passes over the workload, clock_gettime(CLOCK_MONOTONIC)
 * around each; ns/classification of a pass = pass time / requests (a mean
 * over the workload). R rounds (default 3), the methods interleaved
 * (rotating which goes first); each method gets S seconds of passes in all
 * (default 1), S/R per round, and at least one pass per round: a method
 * slower than S/R per pass gets one per round. Reported: the median and
 * the p99 (nearest rank) over the passes, the fastest pass, the count.
 *
 * Output on stdout, tab-separated, `#` lines are comments:
 *     verify  ok  REQUESTS  REJECTED
 *     result  libclassify|pcre2|hs-floor  MEDIAN_NS  P99_NS  MIN_NS  PASSES
 *
 * --check-pool compiles every pattern alone with Hyperscan (the flags
 * classifyc gives a `matches` regex: SINGLEMATCH | ALLOWEMPTY, CASELESS
 * for `i`) and with PCRE2, then scans every User-Agent against all of
 * them with both, and prints, instead of timing:
 *     refused   INDEX  hyperscan|pcre2  MESSAGE
 *     disagree  INDEX  UA_LINE  HS(0|1)  PCRE2(0|1)     (first UA only)
 *     checked   PATTERNS  USER_AGENTS  DISAGREEING  REFUSED
 * INDEX is the 0-based line of PATTERNS.tsv, UA_LINE the 1-based line of
 * UAS.txt. run.py leaves such patterns out of the pool.
 *
 * Exit status: 0, or 1 when something cannot be loaded or compiled, a
 * classification fails, or the verdicts differ.
 */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8

#include <hs.h>
#include <math.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "classify.h"
#include "util.h"

/* ------------------------------------------------------------- inputs */

typedef struct pattern {
    char *text;
    int caseless;
} pattern;

typedef struct request {
    const char *ua;
    size_t ualen;
} request;

static pattern *read_patterns(const char *path, size_t *count)
{
    size_t len;
    char *text = read_file(path, &len);
    size_t n = 0, cap = 0;
    pattern *ps = NULL;
    int line = 0;
    for (char *p = text; p < text + len;) {
        char *eol = memchr(p, '\n', (size_t)(text + len - p));
        if (!eol) eol = text + len;
        *eol = '\0';
        line++;
        if (*p) {
            char *tab = strchr(p, '\t');
            if (!tab || tab - p != 1 || (p[0] != 'i' && p[0] != '-') || !tab[1])
                die("%s line %d: expected `i` or `-`, a tab, then a regex", path, line);
            if (n == cap) ps = xrealloc(ps, (cap = cap * 2 + 256) * sizeof *ps);
            size_t rl = strlen(tab + 1);
            ps[n].text = memcpy(xmalloc(rl + 1), tab + 1, rl + 1);
            ps[n].caseless = p[0] == 'i';
            n++;
        }
        p = eol + 1;
    }
    free(text);
    if (n == 0) die("%s: no patterns", path);
    *count = n;
    return ps;
}

/* The User-Agents point into *buf, which the caller keeps. */
static request *read_uas(const char *path, size_t *count, char **buf)
{
    size_t len;
    char *text = read_file(path, &len);
    size_t n = 0, cap = 0;
    request *rs = NULL;
    for (char *p = text; p < text + len;) {
        char *eol = memchr(p, '\n', (size_t)(text + len - p));
        if (!eol) eol = text + len;
        if (n == cap) rs = xrealloc(rs, (cap = cap * 2 + 256) * sizeof *rs);
        rs[n].ua = p;
        rs[n].ualen = (size_t)(eol - p);
        n++;
        p = eol + 1;
    }
    if (n == 0) die("%s: no User-Agents", path);
    *count = n;
    *buf = text;
    return rs;
}

/* ------------------------------------------------------- libclassify */

typedef struct lib {
    clf_program *prog;
    clf_ctx *ctx;
} lib;

static void lib_init(lib *L, const char *path)
{
    char err[CLF_ERRMSG_SIZE];
    size_t len;
    char *bytes = read_file(path, &len);
    clf_status st = clf_program_load(bytes, len, NULL, &L->prog, err, sizeof err);
    if (st != CLF_OK) die("%s: %s: %s", path, clf_strerror(st), err);
    free(bytes);
    st = clf_ctx_new(L->prog, &L->ctx, err, sizeof err);
    if (st != CLF_OK) die("clf_ctx_new: %s: %s", clf_strerror(st), err);
}

/* 1 reject, 0 accept, -1 an error (clf_ctx_errmsg says which). */
static int lib_classify(void *state, const request *r)
{
    lib *L = state;
    clf_ctx *ctx = L->ctx;
    clf_verdict v;
    clf_ctx_reset(ctx);
    int st = clf_ctx_set_method(ctx, "GET", 3);
    st |= clf_ctx_set_path(ctx, "/", 1);
    st |= clf_ctx_add_header(ctx, "Host", 4, "www.example.org", 15);
    st |= clf_ctx_add_header(ctx, "User-Agent", 10, r->ua, r->ualen);
    if (st != CLF_OK) return -1;
    if (clf_eval(ctx, &v) != CLF_OK) return -1;
    return v.verdict == CLF_REJECT;
}

/* ---------------------------------------------------------- PCRE2 loop */

typedef struct peer {
    pcre2_code **re;
    size_t n;
    pcre2_match_data *md;
    int error; /* the last pcre2_match error, 0 if none */
} peer;

/* NULL and a message in err when PCRE2 refuses the pattern. */
static pcre2_code *pcre_compile_jit(const pattern *p, char *err, size_t errlen)
{
    int ec;
    PCRE2_SIZE eo;
    uint32_t opts = p->caseless ? PCRE2_CASELESS : 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)p->text, PCRE2_ZERO_TERMINATED, opts, &ec, &eo, NULL);
    if (!re) {
        PCRE2_UCHAR msg[200];
        pcre2_get_error_message(ec, msg, sizeof msg);
        snprintf(err, errlen, "at offset %zu: %s", (size_t)eo, (char *)msg);
        return NULL;
    }
    int rc = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    if (rc != 0) {
        PCRE2_UCHAR msg[200];
        pcre2_get_error_message(rc, msg, sizeof msg);
        snprintf(err, errlen, "JIT: %s", (char *)msg);
        pcre2_code_free(re);
        return NULL;
    }
    return re;
}

static void peer_init(peer *P, const pattern *ps, size_t n)
{
    P->re = xmalloc(n * sizeof *P->re);
    P->n = n;
    P->error = 0;
    for (size_t i = 0; i < n; i++) {
        char err[256];
        P->re[i] = pcre_compile_jit(&ps[i], err, sizeof err);
        if (!P->re[i]) die("pattern %zu /%.80s/: PCRE2 refuses it: %s", i, ps[i].text, err);
    }
    P->md = pcre2_match_data_create(1, NULL);
    if (!P->md) die("pcre2_match_data_create failed");
}

static int peer_match(peer *P, const pcre2_code *re, const char *s, size_t n)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, P->md, NULL);
    if (rc >= 0) return 1;
    if (rc != PCRE2_ERROR_NOMATCH) P->error = rc;
    return 0;
}

/* The request's headers as the server hands them over; the loop finds
 * the User-Agent among them first, as a hand-written classifier must. */
typedef struct hdr {
    const char *name, *value;
    size_t nlen, vlen;
} hdr;

static int peer_classify(void *state, const request *r)
{
    peer *P = state;
    const hdr hs[2] = {{"Host", "www.example.org", 4, 15}, {"User-Agent", r->ua, 10, r->ualen}};
    const char *ua = "";
    size_t ualen = 0;
    for (int k = 0; k < 2; k++)
        if (hs[k].nlen == 10 && strncasecmp(hs[k].name, "user-agent", 10) == 0) {
            ua = hs[k].value;
            ualen = hs[k].vlen;
            break;
        }
    for (size_t i = 0; i < P->n; i++)
        if (peer_match(P, P->re[i], ua, ualen)) return 1;
    return P->error ? -1 : 0;
}

/* --------------------------------------------- Hyperscan floor (context) */

/* The N patterns in one block-mode Hyperscan database (the flags classifyc
 * gives a `matches` regex), scanned over the User-Agent alone, stopping at
 * the first match: no request set-up, no bytecode. A lower bound for any
 * Hyperscan-based classifier, as bench.c's floor. */
typedef struct floor_hs {
    hs_database_t *db;
    hs_scratch_t *scratch;
} floor_hs;

static unsigned hs_flags_for(const pattern *p)
{
    return HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY | (p->caseless ? HS_FLAG_CASELESS : 0);
}

static void floor_init(floor_hs *F, const pattern *ps, size_t n)
{
    const char **exprs = xmalloc(n * sizeof *exprs);
    unsigned *flags = xmalloc(n * sizeof *flags), *ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        exprs[i] = ps[i].text;
        flags[i] = hs_flags_for(&ps[i]);
        ids[i] = (unsigned)i;
    }
    hs_compile_error_t *ce = NULL;
    if (hs_compile_multi(exprs, flags, ids, (unsigned)n, HS_MODE_BLOCK, NULL, &F->db, &ce) != HS_SUCCESS)
        die("hs_compile_multi: %s", ce && ce->message ? ce->message : "failed");
    F->scratch = NULL;
    if (hs_alloc_scratch(F->db, &F->scratch) != HS_SUCCESS) die("hs_alloc_scratch failed");
    free(exprs);
    free(flags);
    free(ids);
}

static int on_first(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ud)
{
    (void)id;
    (void)from;
    (void)to;
    (void)flags;
    *(int *)ud = 1;
    return 1; /* stop */
}

static int floor_classify(void *state, const request *r)
{
    floor_hs *F = state;
    int hit = 0;
    hs_error_t rc = hs_scan(F->db, r->ua, (unsigned)r->ualen, 0, F->scratch, on_first, &hit);
    if (rc != HS_SUCCESS && rc != HS_SCAN_TERMINATED) return -1;
    return hit;
}

/* ------------------------------------------------------------- timing */

typedef int (*classify_fn)(void *state, const request *r);

enum { NMETHODS = 3 };

typedef struct method {
    const char *name;
    classify_fn fn;
    void *state;
    double *ns; /* per pass: ns per classification */
    size_t npass, cap;
    uint64_t spent; /* ns spent in timed passes */
} method;

static volatile unsigned g_sink;

static double one_pass(method *m, const request *rs, size_t n)
{
    unsigned acc = 0;
    int err = 0;
    uint64_t t0 = now_ns();
    for (size_t i = 0; i < n; i++) {
        int v = m->fn(m->state, &rs[i]);
        err |= v < 0;
        acc += (unsigned)v;
    }
    uint64_t t1 = now_ns();
    if (err) die("%s: a classification failed during timing", m->name);
    g_sink += acc;
    return (double)(t1 - t0) / (double)n;
}

/* Round r of R: passes until this method has spent (r + 1) / R of its
 * budget in all, and at least r + 1 passes in all. A method whose pass is
 * longer than the whole budget (the PCRE2 loop over 20,000 regexes: about
 * 3 s per pass) thus gets exactly one pass per round, R in all. */
static void time_round(method *m, const request *rs, size_t n, double budget, int r, int rounds)
{
    uint64_t goal = (uint64_t)(budget * 1e9 * (r + 1) / rounds);
    while (m->spent < goal || m->npass < (size_t)r + 1) {
        uint64_t t0 = now_ns();
        double ns = one_pass(m, rs, n);
        m->spent += now_ns() - t0;
        if (m->npass == m->cap) m->ns = xrealloc(m->ns, (m->cap = m->cap * 2 + 64) * sizeof *m->ns);
        m->ns[m->npass++] = ns;
    }
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (p in (0,1]) of a sorted array. */
static double pct(const double *s, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return s[k == 0 ? 0 : k - 1];
}

/* --------------------------------------------------------- check-pool */

typedef struct hits {
    unsigned char *bit;
} hits;

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ud)
{
    (void)from;
    (void)to;
    (void)flags;
    ((hits *)ud)->bit[id] = 1;
    return 0;
}

static int check_pool(const char *pat_path, const char *ua_path)
{
    size_t np, nu;
    char *buf;
    pattern *ps = read_patterns(pat_path, &np);
    request *rs = read_uas(ua_path, &nu, &buf);
    pcre2_code **re = xmalloc(np * sizeof *re);
    int *ok = xmalloc(np * sizeof *ok);
    const char **exprs = xmalloc(np * sizeof *exprs);
    unsigned *flags = xmalloc(np * sizeof *flags), *ids = xmalloc(np * sizeof *ids);
    size_t nhs = 0, refused = 0, disagreeing = 0;
    for (size_t i = 0; i < np; i++) {
        char err[256];
        unsigned f = hs_flags_for(&ps[i]);
        hs_database_t *db = NULL;
        hs_compile_error_t *ce = NULL;
        ok[i] = 1;
        re[i] = pcre_compile_jit(&ps[i], err, sizeof err);
        if (!re[i]) {
            printf("refused\t%zu\tpcre2\t%s\n", i, err);
            ok[i] = 0;
        }
        if (hs_compile(ps[i].text, f, HS_MODE_BLOCK, NULL, &db, &ce) != HS_SUCCESS) {
            printf("refused\t%zu\thyperscan\t%s\n", i, ce && ce->message ? ce->message : "failed");
            ok[i] = 0;
        }
        if (ce) hs_free_compile_error(ce);
        if (db) hs_free_database(db);
        if (!ok[i]) {
            refused++;
            continue;
        }
        exprs[nhs] = ps[i].text;
        flags[nhs] = f;
        ids[nhs] = (unsigned)i;
        nhs++;
    }
    if (nhs == 0) die("no pattern compiles with both engines");
    hs_database_t *db = NULL;
    hs_compile_error_t *ce = NULL;
    if (hs_compile_multi(exprs, flags, ids, (unsigned)nhs, HS_MODE_BLOCK, NULL, &db, &ce) != HS_SUCCESS)
        die("hs_compile_multi: %s", ce && ce->message ? ce->message : "failed");
    hs_scratch_t *scratch = NULL;
    if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) die("hs_alloc_scratch failed");
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md) die("pcre2_match_data_create failed");
    hits h = {xmalloc(np)};
    unsigned char *reported = calloc(np, 1);
    if (!reported) die("out of memory");
    for (size_t u = 0; u < nu; u++) {
        memset(h.bit, 0, np);
        if (hs_scan(db, rs[u].ua, (unsigned)rs[u].ualen, 0, scratch, on_match, &h) != HS_SUCCESS)
            die("hs_scan failed on line %zu", u + 1);
        for (size_t i = 0; i < np; i++) {
            if (!ok[i]) continue;
            int rc = pcre2_match(re[i], (PCRE2_SPTR)rs[u].ua, rs[u].ualen, 0, 0, md, NULL);
            if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
                die("pcre2_match(pattern %zu) on line %zu: error %d", i, u + 1, rc);
            int p = rc >= 0;
            if (p != h.bit[i] && !reported[i]) {
                reported[i] = 1;
                disagreeing++;
                printf("disagree\t%zu\t%zu\t%d\t%d\n", i, u + 1, h.bit[i], p);
            }
        }
    }
    printf("checked\t%zu\t%zu\t%zu\t%zu\n", np, nu, disagreeing, refused);
    hs_free_scratch(scratch);
    hs_free_database(db);
    pcre2_match_data_free(md);
    for (size_t i = 0; i < np; i++) {
        if (re[i]) pcre2_code_free(re[i]);
        free(ps[i].text);
    }
    free(re);
    free(ok);
    free(exprs);
    free(flags);
    free(ids);
    free(h.bit);
    free(reported);
    free(ps);
    free(rs);
    free(buf);
    return 0;
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
    fprintf(stderr,
            "usage: classify-scale RULES.bin PATTERNS.tsv UAS.txt [--seconds S] [--rounds R]\n"
            "       classify-scale --check-pool PATTERNS.tsv UAS.txt\n");
    exit(2);
}

static double parse_num(const char *s, const char *what)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0)) die("%s must be a positive number, not '%s'", what, s);
    return v;
}

/* A User-Agent for a message: printable ASCII, cut at 160 bytes. */
static void print_ua(FILE *f, const request *r)
{
    size_t n = r->ualen < 160 ? r->ualen : 160;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)r->ua[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') fputc(c, f);
        else fprintf(f, "\\x%02x", c);
    }
    if (n < r->ualen) fprintf(f, "... (%zu bytes)", r->ualen);
}

int main(int argc, char **argv)
{
    bench_prog = "classify-scale";
    if (argc == 4 && strcmp(argv[1], "--check-pool") == 0) return check_pool(argv[2], argv[3]);
    const char *pos[3];
    int npos = 0;
    double seconds = 1.0;
    int rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = parse_num(argv[++i], "--seconds");
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            double r = parse_num(argv[++i], "--rounds");
            if (r != floor(r) || r > 1000) die("--rounds must be a whole number up to 1000");
            rounds = (int)r;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            usage();
        } else if (npos < 3) {
            pos[npos++] = argv[i];
        } else {
            usage();
        }
    }
    if (npos != 3) usage();

    size_t np, nu;
    char *buf;
    pattern *ps = read_patterns(pos[1], &np);
    request *rs = read_uas(pos[2], &nu, &buf);
    size_t maxlen = 0;
    for (size_t i = 0; i < nu; i++)
        if (rs[i].ualen > maxlen) maxlen = rs[i].ualen;

    lib L;
    lib_init(&L, pos[0]);
    if (maxlen > clf_program_limit(L.prog, CLF_LIMIT_HEADER_VALUE_BYTES))
        die("the longest User-Agent (%zu bytes) is over CLF_LIMIT_HEADER_VALUE_BYTES (%llu)", maxlen,
            (unsigned long long)clf_program_limit(L.prog, CLF_LIMIT_HEADER_VALUE_BYTES));
    peer P;
    uint64_t t0 = now_ns();
    peer_init(&P, ps, np);
    uint64_t t1 = now_ns();
    floor_hs F;
    floor_init(&F, ps, np);
    uint64_t t2 = now_ns();
    printf("# %zu patterns (PCRE2 compile + JIT %.0f ms, Hyperscan floor compile %.0f ms), "
           "%zu User-Agents (longest %zu bytes)\n",
           np, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, nu, maxlen);

    /* Verification, which is also the warm-up pass. */
    size_t rejected = 0;
    for (size_t i = 0; i < nu; i++) {
        int a = lib_classify(&L, &rs[i]);
        if (a < 0) die("libclassify failed on User-Agent line %zu: %s", i + 1, clf_ctx_errmsg(L.ctx));
        int b = peer_classify(&P, &rs[i]);
        if (b < 0) die("pcre2_match failed (error %d) on User-Agent line %zu", P.error, i + 1);
        int c = floor_classify(&F, &rs[i]);
        if (c < 0) die("hs_scan failed on User-Agent line %zu", i + 1);
        if (a != b || b != c) {
            fprintf(stderr, "classify-scale: error: verdicts differ with %zu patterns on User-Agent line %zu: "
                    "libclassify %s, PCRE2 loop %s, Hyperscan floor %s\n  User-Agent: ", np, i + 1,
                    a ? "reject" : "accept", b ? "reject" : "accept", c ? "match" : "no match");
            print_ua(stderr, &rs[i]);
            fputc('\n', stderr);
            return 1;
        }
        rejected += (size_t)a;
    }
    printf("verify\tok\t%zu\t%zu\n", nu, rejected);
    fflush(stdout);

    method ms[NMETHODS] = {{"libclassify", lib_classify, &L, NULL, 0, 0, 0},
                           {"pcre2", peer_classify, &P, NULL, 0, 0, 0},
                           {"hs-floor", floor_classify, &F, NULL, 0, 0, 0}};
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NMETHODS; k++) time_round(&ms[(k + r) % NMETHODS], rs, nu, seconds, r, rounds);
    for (int k = 0; k < NMETHODS; k++) {
        method *m = &ms[k];
        qsort(m->ns, m->npass, sizeof *m->ns, cmp_dbl);
        printf("result\t%s\t%.1f\t%.1f\t%.1f\t%zu\n", m->name, pct(m->ns, m->npass, 0.5),
               pct(m->ns, m->npass, 0.99), m->ns[0], m->npass);
        free(m->ns);
    }

    hs_free_scratch(F.scratch);
    hs_free_database(F.db);
    clf_ctx_free(L.ctx);
    clf_program_free(L.prog);
    for (size_t i = 0; i < P.n; i++) pcre2_code_free(P.re[i]);
    free(P.re);
    pcre2_match_data_free(P.md);
    for (size_t i = 0; i < np; i++) free(ps[i].text);
    free(ps);
    free(rs);
    free(buf);
    return 0;
}
