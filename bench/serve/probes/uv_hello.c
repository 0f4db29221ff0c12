/*
 * uv_hello.c: the libuv + llhttp probe for the library choice
 * (docs/classify-serve.md, "Why libuv + llhttp"): one thread, keep-alive,
 * every request answered 200 "ok" with uv_try_write, as classify-serve
 * answers. Not part of the build: bench/serve/probes/run.sh compiles it.
 */
#include <llhttp.h>
#include <uv.h>

#include <stdlib.h>

typedef struct conn {
    uv_tcp_t h;
    llhttp_t p;
    int done; /* requests parsed, not yet answered */
    char buf[8192];
} conn;

static llhttp_settings_t settings;
static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

static int on_message_complete(llhttp_t *p)
{
    ((conn *)p->data)->done++;
    return 0;
}

static void on_close(uv_handle_t *h)
{
    free(h);
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *b)
{
    conn *c = (conn *)h;
    (void)size;
    *b = uv_buf_init(c->buf, sizeof c->buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    conn *c = (conn *)s;
    if (n < 0 || llhttp_execute(&c->p, b->base, (size_t)(n > 0 ? n : 0)) != HPE_OK) {
        uv_close((uv_handle_t *)s, on_close);
        return;
    }
    for (; c->done > 0; c->done--) {
        uv_buf_t w = uv_buf_init((char *)answer, sizeof answer - 1);
        uv_try_write(s, &w, 1);
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    conn *c = calloc(1, sizeof *c);
    if (status < 0 || c == NULL)
        return;
    uv_tcp_init(server->loop, &c->h);
    if (uv_accept(server, (uv_stream_t *)&c->h) != 0) {
        uv_close((uv_handle_t *)&c->h, on_close);
        return;
    }
    llhttp_init(&c->p, HTTP_REQUEST, &settings);
    c->p.data = c;
    uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

int main(int argc, char **argv)
{
    uv_tcp_t server;
    struct sockaddr_in addr;
    llhttp_settings_init(&settings);
    settings.on_message_complete = on_message_complete;
    uv_tcp_init(uv_default_loop(), &server);
    uv_ip4_addr("127.0.0.1", argc > 1 ? atoi(argv[1]) : 8092, &addr);
    uv_tcp_bind(&server, (struct sockaddr *)&addr, 0);
    if (uv_listen((uv_stream_t *)&server, 1024, on_connection) != 0)
        return 1;
    return uv_run(uv_default_loop(), UV_RUN_DEFAULT);
}
