/*
 * srv_spoa.h: a connection on an SPOA listener (--listen-spoa): HAProxy's
 * SPOE filter asks about each request over SPOP (serve/spop.h), and the
 * answer is an ACK that sets txn variables (docs/classify-serve.md,
 * "HAProxy, SPOE").
 *
 * States: HELLO (until HAPROXY-HELLO is answered), READY (NOTIFY frames,
 * pipelined: each is answered as soon as it is read, in the order read),
 * LINGER (after an AGENT-DISCONNECT, or the AGENT-HELLO of a health
 * check: our side is shut down and input is drained for up to 2 s, so
 * HAProxy reads the frame rather than a reset), CLOSING.
 *
 * Memory: the input buffer (4 + our max-frame-size bytes, which is
 * --max-header-bytes) and the output buffer are allocated with the
 * connection; a NOTIFY is classified straight from the input buffer (its
 * strings, and the headers in req.hdrs_bin, are handed to libclassify as
 * slices of it) and its ACK written into the output buffer: nothing is
 * allocated per request.
 */
#ifndef CLI_SRV_SPOA_H
#define CLI_SRV_SPOA_H

#include "spop.h"
#include "srv_worker.h"

#include <uv.h>

#include <stdint.h>

/* Room for the ACKs (at most SRV_SPOA_ACK_MAX bytes each) of a batch of
 * pipelined NOTIFY frames; a fuller batch is written out first. */
#define SRV_SPOA_OUT_CAP 16384
#define SRV_SPOA_ACK_MAX 512
/* The reason set in txn.<prefix>.reason is cut at this many bytes. */
#define SRV_SPOA_REASON_MAX 255

typedef struct srv_spoa {
    srv_stream h;
    uv_timer_t timer;
    uv_write_t wreq;
    uv_shutdown_t sreq;
    uv_buf_t wbuf; /* what uv_write still sends of out */
    srv_worker *w;
    const srv_listener *l;
    uint8_t *in;
    size_t in_cap, in_len;
    size_t out_len;
    uint32_t max_frame; /* ours until the HELLO, then the one agreed */
    int state;
    int writing;      /* a uv_write is pending: out is not to be touched */
    int linger_after; /* the last frame queued ends the connection */
    int open_handles;
    uint64_t since;   /* loop time (ms) of the last frame, for the timeout */
    uint64_t t0_ns;   /* when the bytes being processed were read */
    struct srv_spoa *prev, *next;
    uint8_t out[SRV_SPOA_OUT_CAP];
} srv_spoa;

/* A new connection on SPOA listener `lh`. */
void srv_spoa_accept(srv_lhandle *lh);

/* Shutdown: each connection gets an AGENT-DISCONNECT (status 0) and
 * closes. */
void srv_spoa_stop_all(srv_worker *w);
/* The grace period is over: close everything. */
void srv_spoa_close_all(srv_worker *w);

/* srv_spoa_answer.c: classifies NOTIFY frame `f` and writes its ACK at
 * out (cap bytes, at least SRV_SPOA_ACK_MAX); returns the ACK's length,
 * or 0 with *status the code to disconnect with (a malformed payload).
 * Counts the verdict and writes the access-log line. */
size_t srv_spoa_answer(srv_spoa *c, const spop_frame *f, uint8_t *out, size_t cap,
                       unsigned *status);

#endif /* CLI_SRV_SPOA_H */
