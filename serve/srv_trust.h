/*
 * srv_trust.h: the client-address calls into libclassify, in one place.
 * The library derives req.client_ip from the peer and the trusted proxies
 * (X-Forwarded-For walked from the right, then X-Real-IP); classify-serve
 * only tells it who the peer is and whom to trust.
 */
#ifndef CLI_SRV_TRUST_H
#define CLI_SRV_TRUST_H

#include <classify.h>

#include <stddef.h>

/* --trust-proxy values, comma-joined. Returns 0 or -1 with a message. */
int srv_trust_set_list(clf_options *opts, const char *list, char *err, size_t errlen);

/* The TCP peer's address as text (no port). An address that does not
 * parse leaves the peer unknown, which only makes req.client_ip invalid. */
void srv_trust_set_peer(clf_ctx *ctx, const char *addr, size_t len);

#endif /* CLI_SRV_TRUST_H */
