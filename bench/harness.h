/*
 * harness.h: what every benchmark executable shares: the workload (a
 * requests file written by bench/run.py), one calling convention for a
 * classifier under test, the verdict dump the runs are verified with, and
 * the timing loops with their JSON report. bench/run.py is the conductor:
 * it runs each method once per round, as its own process, and builds the
 * table from the JSON lines.
 *
 * Requests file (UTF-8 text, LF line ends, one record per line, fields
 * separated by one TAB; no field contains TAB, CR or LF):
 *     R <method> <path> <query>     starts a request (query may be empty)
 *     H <name> <value>              a header of the current request
 *     (empty line)                  ends the request
 * No request repeats a header name, so a classifier may take the first.
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stddef.h>
#include <stdio.h>

#include "util.h" /* die(), for the harness and its users */

#ifdef __cplusplus /* the RE2 peer (peers/re2) is C++ */
extern "C" {
#endif

typedef struct bh_header {
    const char *name, *value; /* NUL-terminated at [nlen], [vlen] */
    size_t nlen, vlen;
} bh_header;

typedef struct bh_request {
    const char *method, *path, *query; /* NUL-terminated */
    size_t mlen, plen, qlen;
    const bh_header *h;
    size_t nh;
} bh_request;

typedef struct bh_workload {
    bh_request *req;
    size_t n;
    char *buf;        /* the file's bytes; every string points into it */
    bh_header *hdrs;  /* all requests' headers */
} bh_workload;

/* Reads a requests file. Exits the process with a message naming the
 * file and line on a malformed file (a benchmark, not a library). */
void bh_workload_load(const char *path, bh_workload *w);
void bh_workload_free(bh_workload *w);

/* The first value of header `lname` (give it lower-case), matched
 * ASCII-case-insensitively; NULL (and *len 0) when absent. */
const char *bh_header_get(const bh_request *r, const char *lname, size_t *len);

typedef struct bh_verdict {
    int reject;          /* 0 accept, 1 reject */
    const char *reason;  /* may be NULL for none; valid until the next call */
    size_t rlen;
} bh_verdict;

/* A classifier under test. Returns 0, or -1 on an error (the harness
 * stops the run and prints the request's index). */
typedef int (*bh_classify_fn)(void *state, const bh_request *r, bh_verdict *out);

typedef struct bh_method {
    const char *name;
    bh_classify_fn classify;
    void *state;
    /* For --threads N > 1: a fresh state for one more thread (own
     * scratch, context), or NULL when the method is single-threaded. */
    void *(*clone)(void *state);
    /* Frees a state clone() made (NULL: nothing to free). */
    void (*release)(void *clone);
} bh_method;

/* Writes one line per request, "accept\t<reason>\n" or
 * "reject\t<reason>\n" (reason empty when none), to `path`. */
void bh_write_verdicts(const bh_method *m, const bh_workload *w, const char *path);

/* Times method m over workload w and prints one JSON line to stdout:
 *   {"method": NAME, "threads": T, "requests": N,
 *    "pass_ns": [ns per request of each whole pass, ...],
 *    "single_ns": {"n": K, "median": X, "p99": Y},
 *    "overhead_ns": Z, "throughput_rps": R}
 * One warm-up pass, then whole passes for `seconds`, then single
 * requests (each timed, less the empty-interval overhead Z) for
 * seconds/2. With threads > 1 every thread runs the same loop on its own
 * clone at the same time; samples of all threads are pooled and R is the
 * combined requests per second of the pass phase. */
void bh_time(const bh_method *m, const bh_workload *w, double seconds, int threads);

/* Around a peer's compilation of its rules (from the peer data to a
 * matcher ready to classify): the wall time between the two calls and
 * the growth of the process's resident set, for --stats. Call each once,
 * after the workload is loaded. */
void bh_compile_begin(void);
void bh_compile_end(void);

/* The process's resident set in bytes (/proc/self/statm), 0 if unknown. */
size_t bh_rss_bytes(void);

/* Common command line of the benchmark executables, after the
 * method-specific arguments were taken out:
 *     --verdicts FILE | --time SECONDS [--threads N] | --stats
 * Parses argv[first..argc-1], then does the one or the other with m.
 * --stats prints one JSON line (bench/README.md, "Compile, load, memory"):
 *   {"method": NAME, "compile_ns": C, "rules_rss_bytes": R,
 *    "pass_rss_bytes": P}
 * C and R from bh_compile_begin/end (0 when not called), P the resident
 * growth since bh_compile_begin after one more pass over the workload
 * (what lazily built matchers, such as DFA caches, add). */
int bh_main(const bh_method *m, const bh_workload *w, int argc, char **argv, int first);

#ifdef __cplusplus
}
#endif

#endif
