/*
 * mhd_hello.c: the libmicrohttpd probe for the library choice
 * (docs/classify-serve.md, "Why libuv + llhttp"): its fastest mode here
 * (internal epoll thread, MHD_USE_TURBO), one thread, every request
 * answered 200 "ok" after reading the User-Agent. Not part of the build:
 * bench/serve/probes/run.sh compiles it.
 */
#include <microhttpd.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct MHD_Response *ok;

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *data,
                               size_t *size, void **state)
{
    (void)cls, (void)url, (void)method, (void)version, (void)data, (void)size, (void)state;
    (void)MHD_lookup_connection_value(c, MHD_HEADER_KIND, "User-Agent");
    return MHD_queue_response(c, 200, ok);
}

int main(int argc, char **argv)
{
    int port = argc > 1 ? atoi(argv[1]) : 8091;
    ok = MHD_create_response_from_buffer(2, (void *)"ok", MHD_RESPMEM_PERSISTENT);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO, (uint16_t)port, NULL,
        NULL, handler, NULL, MHD_OPTION_THREAD_POOL_SIZE, 1u, MHD_OPTION_CONNECTION_LIMIT, 4000u,
        MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "mhd_hello: cannot start on port %d\n", port);
        return 1;
    }
    pause();
    return 0;
}
