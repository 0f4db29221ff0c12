/*
 * srv_trust.c: see srv_trust.h.
 */
#include "srv_trust.h"

#include <stdio.h>
#include <string.h>

int srv_trust_set_list(clf_options *opts, const char *list, char *err, size_t errlen)
{
    char msg[CLF_ERRMSG_SIZE];
    if (clf_options_set_trusted_proxies(opts, list, strlen(list), msg, sizeof msg) != CLF_OK) {
        snprintf(err, errlen, "--trust-proxy: %s", msg);
        return -1;
    }
    return 0;
}

void srv_trust_set_peer(clf_ctx *ctx, const char *addr, size_t len)
{
    (void)clf_ctx_set_peer(ctx, addr, len);
}
