/*
 * rw_stream.h: the run-time API of the streaming rewrite engine
 * (docs/rewrite.md has the semantics, the hold-back and the delay).
 *
 * One rw_stream per response body:
 *
 *     rw_scratch *sc;  rw_stream *st;
 *     rw_scratch_new(set, NULL, &sc);                 // once per thread
 *     rw_stream_new(set, NULL, sink, ud, &st);        // allocates; the only place
 *     for each chunk:  rw_stream_feed(st, sc, p, n);  // any n, 0 included
 *     rw_stream_finish(st, sc);                       // end of data
 *     rw_stream_reset(st, sink, ud);                  // reuse for the next body
 *
 * Output goes to the sink, in order, as soon as it is decided; the
 * concatenated output does not depend on how the input was cut into
 * chunks (replace_filter mode's buffer cap excepted, as in replace-filter:
 * docs/rewrite.md). Feeding and finishing allocate nothing: a chunk of
 * any size is processed in bounded slices, in memory fixed by
 * rw_stream_new and rw_scratch_new.
 *
 * Threads and scratch: Hyperscan scratch space is per thread and not
 * re-entrant, and so is the rest of the engine's working memory (the
 * slice buffer, the candidate table, PCRE2 match data); it lives in an
 * rw_scratch that the host owns, one per thread (or per event loop), and
 * passes to every feed and finish. A stream holds no scratch: it may be
 * fed from one thread, then another, but never from two at once, and a
 * scratch may serve only one call at a time. The sink is called from
 * inside rw_stream_feed/finish on the calling thread; it must not call
 * the engine on the same stream or scratch.
 *
 * Errors: status codes, never abort or print. After any error but
 * RW_E_INVALID and RW_E_STATE, the stream is failed: feed and finish
 * return RW_E_STATE until rw_stream_reset.
 */
#ifndef RW_STREAM_H
#define RW_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "rw_build.h"

typedef struct rw_stream rw_stream;
typedef struct rw_scratch rw_scratch;

/* The output sink: called with n > 0 bytes at p, valid only during the
 * call. Returns 0 to continue; anything else stops the stream, and the
 * engine call returns RW_E_SINK. */
typedef int (*rw_sink_fn)(void *ud, const uint8_t *p, size_t n);

/* Per-thread working memory able to serve streams of `set` (sized from
 * the set's widths and groups: a slice buffer of RW_SLICE bytes plus the
 * window, a candidate table of as many entries, Hyperscan scratch for the
 * set's databases, PCRE2 match data and DFA workspace). Returns RW_OK and
 * stores it in *out, RW_E_INVALID, RW_E_NOMEM or RW_E_BACKEND
 * (hs_alloc_scratch). `al` may be NULL. */
rw_status rw_scratch_new(const rw_set *set, const vm_allocator *al, rw_scratch **out);
/* Grows sc so that it can also serve streams of another set (allocates;
 * call it outside any feed). Returns RW_OK, RW_E_INVALID, RW_E_NOMEM,
 * RW_E_BACKEND; on failure sc still serves what it served before. */
rw_status rw_scratch_add(rw_scratch *sc, const rw_set *set);
/* Bytes the scratch holds (its own allocations; Hyperscan's scratch
 * included). */
size_t rw_scratch_size(const rw_scratch *sc);
void rw_scratch_free(rw_scratch *sc);

/* The slice size: a chunk is scanned RW_SLICE bytes at a time. */
#define RW_SLICE 65536u

/* Creates a stream for `set`, writing to sink(ud, ...). All the memory
 * the stream will ever use is allocated here: Hyperscan stream state,
 * the hold-back window (rw_set_holdback bytes), the candidates of that
 * window, the per-rule state. The set must outlive the stream. Returns
 * RW_OK and stores it in *out, RW_E_INVALID (NULL set, sink or out),
 * RW_E_NOMEM or RW_E_BACKEND (hs_open_stream). */
rw_status rw_stream_new(const rw_set *set, const vm_allocator *al, rw_sink_fn sink, void *ud,
                        rw_stream **out);
void rw_stream_free(rw_stream *st);

/* Bytes the stream holds (its own allocations and its Hyperscan stream
 * state), for sizing. */
size_t rw_stream_size(const rw_stream *st);

/* Restricts the stream to the rules whose bits are set in bitmap (bit i
 * of byte i/8 for rule i; nbytes = (nrules + 7) / 8); NULL: all rules.
 * For the skip cache (rw_cache.h): with an empty bitmap the stream copies
 * its input to the sink without scanning. In replace_filter mode only the
 * empty bitmap restricts (docs/rewrite.md). Valid only before the first
 * feed (RW_E_STATE otherwise); RW_E_INVALID for a short bitmap. */
rw_status rw_stream_set_mask(rw_stream *st, const uint8_t *bitmap, size_t nbytes);

/* Feeds n bytes (p may be NULL when n is 0). Returns RW_OK, RW_E_STATE
 * (finished or failed stream), RW_E_INVALID (NULL stream or scratch,
 * scratch too small for the set), RW_E_SINK, RW_E_BACKEND (a Hyperscan
 * scan failed) or RW_E_LIMIT (a PCRE2 workspace limit: docs/rewrite.md). */
rw_status rw_stream_feed(rw_stream *st, rw_scratch *sc, const void *p, size_t n);

/* Ends the data: matches that depend on the end (`$`, `\z`, a trailing
 * `\b`) are decided now and everything held is written out. Returns as
 * rw_stream_feed. Afterwards only rw_stream_reset, the accessors and
 * rw_stream_free are valid. */
rw_status rw_stream_finish(rw_stream *st, rw_scratch *sc);

/* Feeds the last n bytes and ends the data: rw_stream_feed then
 * rw_stream_finish, except that in replace_filter mode the buffer cap is
 * not applied between the two, as replace-filter does not apply it to a
 * buffer that carries nginx's last_buf flag (a static file sent as one
 * buffer is decided whole). Returns as rw_stream_finish. */
rw_status rw_stream_feed_final(rw_stream *st, rw_scratch *sc, const void *p, size_t n);

/* Makes the stream ready for a new body, writing to sink(ud, ...), with
 * all rules enabled again; allocates nothing and needs no scratch (a body
 * left unfinished is dropped without output). Returns RW_OK or
 * RW_E_INVALID. */
rw_status rw_stream_reset(rw_stream *st, rw_sink_fn sink, void *ud);

/* The rules that fired (were applied) in this body so far, a bitmap of
 * (nrules + 7) / 8 bytes, valid until the next reset. For the skip cache:
 * a rule that never fired can be left out for the same body without
 * changing the output. */
const uint8_t *rw_stream_matched(const rw_stream *st);

/* Statistics of the current body. */
typedef struct rw_stream_stats {
    uint64_t bytes_in, bytes_out;
    uint64_t replacements;   /* matches replaced */
    uint64_t held;           /* input bytes retained now (context byte included) */
    uint64_t max_held;       /* most retained after any feed call */
    uint64_t dfa_runs;       /* pcre2_dfa_match calls (hidden starts and ends) */
    uint64_t captures;       /* pcre2_match calls for captures */
    uint64_t captures_failed;/* of those, given up (PCRE2's budget): groups expanded to nothing */
    uint64_t rescans;        /* window rescans after a once rule fired */
    int gave_up;             /* replace_filter: the buffer cap was exceeded */
} rw_stream_stats;

void rw_stream_stats_get(const rw_stream *st, rw_stream_stats *out);

#endif
