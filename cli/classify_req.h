/*
 * classify_req.h: how classify-run hands one request to a context and
 * evaluates it, whatever it was read from (a request file, a --ua-file
 * line, an access log line): one place, so that every mode classifies
 * alike.
 */
#ifndef CLI_CLASSIFY_REQ_H
#define CLI_CLASSIFY_REQ_H

#include "explain_out.h"
#include "http_request.h"

#include <classify.h>

#include <stddef.h>
#include <stdint.h>

typedef struct cli_request {
    http_slice method, path, query;
    const http_header *headers;
    size_t nheaders;
    const char *peer; /* the peer address, or NULL: unknown */
    size_t peer_len;
    const char *rdns; /* clf_ctx_set_rdns's name ("" resolved, none), or NULL: unknown */
    int has_time;     /* clf_ctx_set_time(time) (--time); 0: the clock */
    int64_t time;
    const char *scheme; /* clf_ctx_set_scheme, or NULL: not known */
    size_t scheme_len;
} cli_request;

/* Resets ctx, sets the peer, the rDNS answer, the time and scheme (for
 * signatures), the request line and every header, and evaluates `filter` (traced into `explain` when it is not
 * NULL). The bytes are borrowed until it returns. Returns 0, or -1 with
 * the reason in err: a peer that is not an address, a header refused by
 * the library's limits (classifying without it could give a verdict the
 * request would not get), or clf_eval failing. */
int cli_classify(clf_ctx *ctx, uint32_t filter, const cli_request *req, explain_log *explain,
                 clf_verdict *v, char *err, size_t errlen);

#endif
