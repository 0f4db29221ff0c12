/*
 * peer_pcre2.h: the PCRE2-JIT peer of the benchmark: what a hand-written C
 * classifier does with the same rules as libclassify's stdlib. Every AI
 * name, AMBIGUOUS token regex and crawler pattern is its own PCRE2 regex,
 * JIT-compiled; a request walks them in the order the .clf tests them and
 * stops at the first hit (or, in alternation mode, one alternation per
 * field). The rest (paths, headless tokens, the browser
 * header checks) is plain C, or PCRE2 where the .clf uses a regex.
 *
 * The patterns come from the peer-data file written by
 *     python3 bench/peerdata.py --out FILE
 * (lines AI_NAME, AI_TOKEN, CRAWLER; other kinds are ignored).
 *
 * Programs (verdict and reason identical to libclassify's on each request):
 *   "ai_robots"  import "ai_robots"; main: ai_robots.check(req); accept
 *   "default"    stdlib/default.clf's main
 */
#ifndef BENCH_PEER_PCRE2_H
#define BENCH_PEER_PCRE2_H

#include "harness.h"

typedef struct peer_pcre2 peer_pcre2;

/* Reads the peer-data file and compiles `program` ("ai_robots" or
 * "default"). With `alternation` nonzero, the best a PCRE2 user does
 * instead of the loop: one JIT-compiled alternation per field (User-Agent,
 * Sec-CH-UA), each alternative opened by (*MARK:priority); the mark of a
 * match names the alternative, and searching on from one past each
 * match's start finds the lowest priority that matches (peer_pcre2.c,
 * alt_scan). Exits via die on any error (unreadable file, unknown
 * program, a regex PCRE2 refuses). */
peer_pcre2 *peer_pcre2_new(const char *peerdata_path, const char *program, int alternation);

/* A bh_classify_fn: state is a peer_pcre2 (from _new or _clone). Returns
 * 0, or -1 when PCRE2 reports a matching error (not a mere no-match). The
 * reason points to storage of the peer, valid until it is freed. */
int peer_pcre2_classify(void *state, const bh_request *r, bh_verdict *out);

/* Another state for another thread: shares the compiled (read-only)
 * regexes, has its own match data. Free clones before their original. */
void *peer_pcre2_clone(void *state);

/* Frees a state from _new (with the compiled regexes) or from _clone
 * (only its own match data). NULL is allowed. */
void peer_pcre2_free(peer_pcre2 *p);

#endif
