/*
 * bench.c: classify-bench, the in-process methods of the benchmark
 * (bench/README.md). bench/run.py runs it once per method and round, and
 * builds the table from the JSON lines it prints.
 *
 *   classify-bench REQUESTS --method clf|clf-batch|clf-eval --rules RULES.bin  MODE
 *   classify-bench REQUESTS --method pcre2|pcre2-alt --peerdata PEERDATA.txt
 *                           --program ai_robots|default          MODE
 *   classify-bench REQUESTS --method hs-floor --rules RULES.bin
 *                           [--subject K]                        MODE
 *   classify-bench --stats RULES.bin [REQUESTS]
 *
 * MODE is --verdicts FILE | --time SECONDS [--threads N] | --stats
 * (harness.h; --stats: the pcre2 methods' compile time and memory).
 *
 * clf       this project, as a server embeds it: per request
 *           clf_ctx_reset, clf_ctx_set_method/path/query,
 *           clf_ctx_add_header for every header, clf_eval. Linked against
 *           the shared library, as users link it.
 * clf-batch the same, the hand-over in one call: clf_ctx_set_request with
 *           the request's headers as an array of clf_header slices.
 * clf-eval  clf_eval alone, again and again on the first request, set up
 *           once: the interpreter without the hand-over.
 * pcre2     the hand-written C peer (peer_pcre2.c): the same checks as
 *           the stdlib package, one PCRE2-JIT regex per pattern, in a loop.
 * pcre2-alt the same peer with one PCRE2-JIT alternation per field, each
 *           alternative marked with (*MARK) to recover the reason.
 * hs-floor  the physical limit of a Hyperscan design: one hs_scan of each
 *           field the program inspects (its pattern subjects) with the
 *           program's own databases and nothing else: no request set-up,
 *           no interpreter. --subject K scans subject K only.
 * --stats   one JSON line: the file's size, load time (median and p99 of
 *           repeated clf_program_load), program and per-context memory
 *           (through a counting allocator, plus Hyperscan's scratch), the
 *           subjects with their pattern counts, and, with REQUESTS, the
 *           allocations made while classifying the whole workload.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <hs.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classify.h"
#include "harness.h"
#include "peer_pcre2.h"
/* White-box, for hs-floor and --stats only: the program's subjects and
 * databases. The layout is the library's (same header, same compiler);
 * nothing internal is called. */
#include "ctx.h"

/* ------------------------------------------------------ counting alloc */

/* Counts the library's allocations (clf_options_set_allocator) and
 * Hyperscan's (hs_set_allocator): bytes live and calls made. Each block
 * carries its size in a 16-byte header (keeps malloc's alignment). */
typedef struct counter {
    size_t live, calls;
} counter;
static counter lib_count, hs_count;

static void *count_alloc(counter *c, size_t n)
{
    unsigned char *p = malloc(n + 16);
    if (!p) return NULL;
    memcpy(p, &n, sizeof n);
    c->live += n;
    c->calls++;
    return p + 16;
}

static void count_free(counter *c, void *q)
{
    if (!q) return;
    unsigned char *p = (unsigned char *)q - 16;
    size_t n;
    memcpy(&n, p, sizeof n);
    c->live -= n;
    free(p);
}

static void *lib_alloc(void *ud, size_t n) { (void)ud; return count_alloc(&lib_count, n); }
static void lib_free(void *ud, void *p) { (void)ud; count_free(&lib_count, p); }
static void *hs_alloc_fn(size_t n) { return count_alloc(&hs_count, n); }
static void hs_free_fn(void *p) { count_free(&hs_count, p); }

/* --------------------------------------------------------- the program */

static clf_program *load_rules(const char *path, int counted)
{
    size_t len;
    char *bytes = read_file(path, &len);
    clf_options *opts = NULL;
    if (counted) {
        if (clf_options_new(&opts) != CLF_OK) die("clf_options_new failed");
        clf_options_set_allocator(opts, lib_alloc, lib_free, NULL);
    }
    clf_program *prog;
    char err[512];
    clf_status st = clf_program_load(bytes, len, opts, &prog, err, sizeof err);
    if (st != CLF_OK) die("%s: %s", path, err);
    clf_options_free(opts);
    free(bytes);
    return prog;
}

/* ---------------------------------------------------------- method clf */

typedef struct clf_state {
    clf_program *prog;
    clf_ctx *ctx;
    /* clf-batch: every request's headers as clf_header slices, built
     * before timing (as a server fills the array while parsing), at the
     * indices of the workload's own header array, `base` */
    const clf_header *ch;
    const bh_header *base;
} clf_state;

/* clf_eval, its verdict into *out. 0, or -1 on an error. */
static int eval_into(clf_ctx *ctx, bh_verdict *out)
{
    clf_verdict v;
    if (clf_eval(ctx, &v) != CLF_OK) return -1;
    out->reject = v.verdict == CLF_REJECT;
    out->reason = v.reason;
    out->rlen = v.reason ? v.reason_len : 0;
    return 0;
}

static int clf_classify(void *s, const bh_request *r, bh_verdict *out)
{
    clf_state *st = s;
    clf_ctx *ctx = st->ctx;
    clf_ctx_reset(ctx);
    if (clf_ctx_set_method(ctx, r->method, r->mlen) != CLF_OK ||
        clf_ctx_set_path(ctx, r->path, r->plen) != CLF_OK ||
        clf_ctx_set_query(ctx, r->query, r->qlen) != CLF_OK)
        return -1;
    for (size_t i = 0; i < r->nh; i++)
        if (clf_ctx_add_header(ctx, r->h[i].name, r->h[i].nlen, r->h[i].value, r->h[i].vlen) !=
            CLF_OK)
            return -1;
    return eval_into(ctx, out);
}

/* clf-batch: the same with the hand-over in one call,
 * clf_ctx_set_request. */
static int clf_batch_classify(void *s, const bh_request *r, bh_verdict *out)
{
    clf_state *st = s;
    clf_ctx *ctx = st->ctx;
    if (clf_ctx_set_request(ctx, r->method, r->mlen, r->path, r->plen, r->query, r->qlen,
                            st->ch + (r->h - st->base), r->nh) != CLF_OK)
        return -1;
    return eval_into(ctx, out);
}

/* clf-eval: clf_eval alone, on the request set up once (the first of the
 * workload): what the interpreter costs without the hand-over. */
static int clf_eval_only(void *s, const bh_request *r, bh_verdict *out)
{
    (void)r;
    return eval_into(((clf_state *)s)->ctx, out);
}

static void *clf_clone(void *s)
{
    clf_state *st = s, *n = malloc(sizeof *n);
    if (!n) return NULL;
    *n = *st;
    if (clf_ctx_new(st->prog, &n->ctx, NULL, 0) != CLF_OK) {
        free(n);
        return NULL;
    }
    return n;
}

static void clf_release(void *s)
{
    clf_state *st = s;
    clf_ctx_free(st->ctx);
    free(st);
}

/* ----------------------------------------------------- method hs-floor */

typedef struct floor_state {
    clf_program *prog;
    uint32_t first, last; /* subjects [first, last) */
    hs_scratch_t *scratch;
    uint64_t bits[64];
} floor_state;

static int floor_match(unsigned int id, unsigned long long from, unsigned long long to,
                       unsigned int flags, void *ud)
{
    (void)from, (void)to, (void)flags;
    uint64_t *bits = ud;
    bits[(id / 64) % 64] |= UINT64_C(1) << (id % 64);
    return 0;
}

/* The value a subject scans in request r, as the interpreter reads it. */
static const char *subject_value(const clf_program *p, const vm_subject *S, const bh_request *r,
                                 size_t *n)
{
    switch (S->kind) {
    case VM_SUBJ_METHOD: *n = r->mlen; return r->method;
    case VM_SUBJ_PATH: *n = r->plen; return r->path;
    case VM_SUBJ_QUERY: *n = r->qlen; return r->query;
    case VM_SUBJ_HEADER: {
        const char *v = bh_header_get(r, p->consts[p->hdrs[S->hdr]].str, n);
        return v ? v : "";
    }
    default: *n = 0; return NULL; /* computed by the program: not a field */
    }
}

static int floor_classify(void *s, const bh_request *r, bh_verdict *out)
{
    floor_state *st = s;
    const clf_program *p = st->prog;
    for (uint32_t k = st->first; k < st->last; k++) {
        const vm_subject *S = &p->subjects[k];
        size_t n;
        const char *v = subject_value(p, S, r, &n);
        if (!v) continue;
        if (hs_scan(S->db, v, (unsigned)n, 0, st->scratch, floor_match, st->bits) != HS_SUCCESS)
            return -1;
    }
    out->reject = 0;
    out->reason = NULL;
    out->rlen = 0;
    return 0;
}

static void *floor_clone(void *s)
{
    floor_state *st = s, *n = malloc(sizeof *n);
    if (!n) return NULL;
    *n = *st;
    n->scratch = NULL;
    if (hs_clone_scratch(st->scratch, &n->scratch) != HS_SUCCESS) {
        free(n);
        return NULL;
    }
    return n;
}

static void floor_release(void *s)
{
    floor_state *st = s;
    hs_free_scratch(st->scratch);
    free(st);
}

static void pcre2_release(void *s)
{
    peer_pcre2_free(s);
}

static const char *subject_kind(uint32_t k)
{
    switch (k) {
    case VM_SUBJ_METHOD: return "method";
    case VM_SUBJ_PATH: return "path";
    case VM_SUBJ_QUERY: return "query";
    case VM_SUBJ_HEADER: return "header";
    default: return "computed";
    }
}

/* ---------------------------------------------------------------- stats */

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static int stats(const char *rules, const char *requests)
{
    size_t len;
    char *bytes = read_file(rules, &len);
    free(bytes);
    /* Load time: repeated loads for at least 1 s or 20 loads. */
    enum { MAXLOADS = 2000 };
    static uint64_t t[MAXLOADS];
    size_t nl = 0;
    uint64_t t0 = now_ns();
    while (nl < MAXLOADS && (nl < 20 || now_ns() - t0 < 1000000000u)) {
        uint64_t a = now_ns();
        clf_program *p = load_rules(rules, 0);
        t[nl++] = now_ns() - a;
        clf_program_free(p);
    }
    qsort(t, nl, sizeof *t, cmp_u64);

    if (hs_set_allocator(hs_alloc_fn, hs_free_fn) != HS_SUCCESS) die("hs_set_allocator failed");
    size_t lib0 = lib_count.live, hs0 = hs_count.live;
    clf_program *prog = load_rules(rules, 1);
    size_t prog_lib = lib_count.live - lib0, prog_hs = hs_count.live - hs0;
    size_t dbs = 0;
    for (uint32_t k = 0; k < prog->nsubjects; k++) {
        size_t sz = 0;
        if (hs_database_size(prog->subjects[k].db, &sz) == HS_SUCCESS) dbs += sz;
    }
    lib0 = lib_count.live, hs0 = hs_count.live;
    clf_ctx *ctx;
    char err[256];
    if (clf_ctx_new(prog, &ctx, err, sizeof err) != CLF_OK) die("clf_ctx_new: %s", err);
    size_t ctx_lib = lib_count.live - lib0, ctx_hs = hs_count.live - hs0;
    size_t scratch = 0;
    hs_scratch_size(ctx->scratch, &scratch);
    /* The workload's allocations first: nothing is printed unless every
     * figure was had (a bad requests file gives a message, no JSON). */
    size_t classified = 0, allocs = 0;
    if (requests) {
        bh_workload w;
        bh_workload_load(requests, &w);
        clf_state st = {prog, ctx, NULL, NULL};
        bh_verdict v;
        size_t lc = lib_count.calls, hc = hs_count.calls;
        for (size_t i = 0; i < w.n; i++)
            if (clf_classify(&st, &w.req[i], &v) != 0) die("request %zu failed", i);
        classified = w.n;
        allocs = (lib_count.calls - lc) + (hs_count.calls - hc);
        bh_workload_free(&w);
    }

    printf("{\"rules\": ");
    json_str(rules);
    printf(", \"file_bytes\": %zu, \"loads\": %zu, \"load_ns_median\": %llu, "
           "\"load_ns_p99\": %llu, \"program_bytes\": %zu, \"program_hs_bytes\": %zu, "
           "\"databases_bytes\": %zu, \"ctx_bytes\": %zu, \"ctx_hs_bytes\": %zu, "
           "\"scratch_bytes\": %zu, \"functions\": %u, \"patterns\": %u, \"subjects\": [",
           len, nl, (unsigned long long)t[nl / 2],
           (unsigned long long)t[(size_t)ceil(0.99 * (double)nl) - 1], prog_lib, prog_hs, dbs,
           ctx_lib, ctx_hs, scratch, prog->nfuncs, prog->npatterns);
    for (uint32_t k = 0; k < prog->nsubjects; k++) {
        const vm_subject *S = &prog->subjects[k];
        printf("%s{\"index\": %u, \"kind\": \"%s\", \"name\": ", k ? ", " : "", k,
               subject_kind(S->kind));
        json_str(S->kind == VM_SUBJ_HEADER ? prog->consts[prog->hdrs[S->hdr]].str
                                           : subject_kind(S->kind));
        printf(", \"patterns\": %u, \"tests\": %u}", S->npatterns, S->ntests);
    }
    printf("]");
    if (requests)
        printf(", \"classified\": %zu, \"allocations_while_classifying\": %zu", classified,
               allocs);
    printf("}\n");
    clf_ctx_free(ctx);
    clf_program_free(prog);
    return 0;
}

/* ----------------------------------------------------------------- main */

static const char usage[] =
    "usage: classify-bench REQUESTS --method METHOD [OPTIONS] MODE\n"
    "       classify-bench --stats RULES.bin [REQUESTS]\n"
    "\n"
    "METHOD and its options (bench/README.md):\n"
    "  clf --rules RULES.bin          libclassify: hand-over and clf_eval\n"
    "  clf-eval --rules RULES.bin     clf_eval alone, on the first request\n"
    "  clf-batch --rules RULES.bin    libclassify: clf_ctx_set_request, clf_eval\n"
    "  pcre2 --peerdata FILE --program ai_robots|default\n"
    "                                 the C loop over PCRE2-JIT regexes\n"
    "  pcre2-alt --peerdata FILE --program ai_robots|default\n"
    "                                 PCRE2-JIT, one alternation per field\n"
    "  hs-floor --rules RULES.bin [--subject K]\n"
    "                                 one Hyperscan scan per inspected field\n"
    "                                 (K: that subject only)\n"
    "MODE:\n"
    "  --verdicts FILE                write each request's verdict and reason\n"
    "  --time SECONDS [--threads N]   time it; one JSON line on stdout\n"
    "  --stats                        (pcre2, pcre2-alt) compile time and memory\n"
    "                                 of the rules; one JSON line\n"
    "--stats prints one JSON line: load time, memory, subjects and, with\n"
    "REQUESTS, the allocations made classifying them (must be 0).\n";

static const char *arg_value(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) die("%s needs a value", argv[*i]);
    return argv[++*i];
}

int main(int argc, char **argv)
{
    bench_prog = "classify-bench";
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc >= 3 && argc <= 4 && strcmp(argv[1], "--stats") == 0)
        return stats(argv[2], argc == 4 ? argv[3] : NULL);
    if (argc < 4 || strcmp(argv[2], "--method") != 0) {
        fputs(usage, stderr);
        return 2;
    }
    const char *method = argv[3], *rules = NULL, *peerdata = NULL, *program = NULL;
    long subject = -1;
    /* The method's options anywhere; the rest is the harness's (MODE). */
    char **rest = xcalloc((size_t)argc, sizeof *rest);
    int nrest = 0;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--rules") == 0) rules = arg_value(argc, argv, &i);
        else if (strcmp(argv[i], "--peerdata") == 0) peerdata = arg_value(argc, argv, &i);
        else if (strcmp(argv[i], "--program") == 0) program = arg_value(argc, argv, &i);
        else if (strcmp(argv[i], "--subject") == 0) {
            const char *v = arg_value(argc, argv, &i);
            char *end;
            errno = 0;
            subject = strtol(v, &end, 10);
            if (!*v || *end || errno || subject < 0)
                die("--subject: want a subject index (0, 1, ...), not '%s'", v);
        } else if (strcmp(argv[i], "--stats") == 0) {
            rest[nrest++] = argv[i];
        } else if (strcmp(argv[i], "--verdicts") == 0 || strcmp(argv[i], "--time") == 0 ||
                   strcmp(argv[i], "--threads") == 0) {
            rest[nrest++] = argv[i];
            rest[nrest++] = (char *)arg_value(argc, argv, &i);
        } else {
            die("unknown option '%s' (classify-bench --help)", argv[i]);
        }
    }
    int is_clf = strcmp(method, "clf") == 0 || strcmp(method, "clf-eval") == 0 ||
                 strcmp(method, "clf-batch") == 0;
    int is_floor = strcmp(method, "hs-floor") == 0;
    if ((rules && !is_clf && !is_floor) || (subject >= 0 && !is_floor) ||
        ((peerdata || program) && strncmp(method, "pcre2", 5) != 0))
        die("an option that --method %s does not take (classify-bench --help)", method);
    bh_workload w;
    bh_workload_load(argv[1], &w);
    bh_method m = {0};
    clf_state cs;
    floor_state fs;
    clf_header *ch = NULL;
    if (strcmp(method, "clf") == 0 || strcmp(method, "clf-eval") == 0 ||
        strcmp(method, "clf-batch") == 0) {
        if (!rules) die("--method %s needs --rules RULES.bin", method);
        memset(&cs, 0, sizeof cs);
        cs.prog = load_rules(rules, 0);
        char err[256];
        if (clf_ctx_new(cs.prog, &cs.ctx, err, sizeof err) != CLF_OK)
            die("clf_ctx_new: %s", err);
        m = (bh_method){"clf", clf_classify, &cs, clf_clone, clf_release};
        if (strcmp(method, "clf-batch") == 0) {
            size_t nh = 0;
            for (size_t i = 0; i < w.n; i++) nh += w.req[i].nh;
            ch = xcalloc(nh ? nh : 1, sizeof *ch);
            for (size_t i = 0; i < nh; i++)
                ch[i] = (clf_header){w.hdrs[i].name, w.hdrs[i].nlen, w.hdrs[i].value, w.hdrs[i].vlen};
            cs.ch = ch;
            cs.base = w.hdrs;
            m = (bh_method){"clf-batch", clf_batch_classify, &cs, clf_clone, clf_release};
        }
        if (strcmp(method, "clf-eval") == 0) {
            bh_verdict v;
            if (clf_classify(&cs, &w.req[0], &v) != 0) die("request 0 failed");
            m = (bh_method){"clf-eval", clf_eval_only, &cs, NULL, NULL};
        }
    } else if (strcmp(method, "pcre2") == 0 || strcmp(method, "pcre2-alt") == 0) {
        if (!peerdata || !program) die("--method %s needs --peerdata FILE --program NAME", method);
        int alt = strcmp(method, "pcre2-alt") == 0;
        bh_compile_begin();
        m = (bh_method){alt ? "pcre2-alt" : "pcre2", peer_pcre2_classify,
                        peer_pcre2_new(peerdata, program, alt), peer_pcre2_clone, pcre2_release};
        bh_compile_end();
    } else if (strcmp(method, "hs-floor") == 0) {
        if (!rules) die("--method hs-floor needs --rules RULES.bin");
        memset(&fs, 0, sizeof fs);
        fs.prog = load_rules(rules, 0);
        fs.first = 0;
        fs.last = fs.prog->nsubjects;
        if (subject >= 0) {
            if ((unsigned long)subject >= fs.prog->nsubjects)
                die("--subject %ld: the program has %u subjects", subject, fs.prog->nsubjects);
            fs.first = (uint32_t)subject;
            fs.last = (uint32_t)subject + 1;
        }
        for (uint32_t k = fs.first; k < fs.last; k++)
            if (hs_alloc_scratch(fs.prog->subjects[k].db, &fs.scratch) != HS_SUCCESS)
                die("hs_alloc_scratch failed");
        m = (bh_method){"hs-floor", floor_classify, &fs, floor_clone, floor_release};
    } else {
        die("unknown method '%s' (clf, clf-batch, clf-eval, pcre2, pcre2-alt, hs-floor)", method);
    }
    int rc = bh_main(&m, &w, nrest, rest, 0);
    /* Everything freed, so that a leak checker run (the test suite under
     * AddressSanitizer) sees none. */
    free(ch);
    if (m.classify == clf_classify || m.classify == clf_eval_only ||
        m.classify == clf_batch_classify) {
        clf_ctx_free(cs.ctx);
        clf_program_free(cs.prog);
    } else if (m.classify == floor_classify) {
        hs_free_scratch(fs.scratch);
        clf_program_free(fs.prog);
    } else {
        peer_pcre2_free(m.state);
    }
    bh_workload_free(&w);
    free(rest);
    return rc;
}
