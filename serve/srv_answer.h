/*
 * srv_answer.h: what to answer to a parsed request, by listener protocol:
 * pass-through and forward-auth classify it; admin serves /metrics and
 * /healthz.
 */
#ifndef CLI_SRV_ANSWER_H
#define CLI_SRV_ANSWER_H

#include "srv_conn.h"
#include "srv_response.h"

/* Fills `a` for the request whose head `c` holds. May set c->owned_body
 * (admin answers). The request slices stay valid until the answer is
 * written. */
void srv_answer_request(srv_conn *c, srv_answer *a);

/* Writes the access-log line for an answered request (when enabled). */
void srv_answer_log(srv_conn *c, const srv_answer *a, uint64_t duration_us);

#endif /* CLI_SRV_ANSWER_H */
