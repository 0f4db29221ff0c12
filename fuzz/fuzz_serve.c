/*
 * fuzz_serve.c: libFuzzer target for classify-serve's request handling
 * (fuzz/README.md). The input is what a client (or a proxy) sends on one
 * connection. It is parsed as srv_conn.c parses it, with the same code:
 * cm_http_feed over llhttp with the project's callbacks
 * (common/http_head.c), pipelined requests included; each request head is
 * answered by srv_answer_request (serve/srv_answer.c) with
 * examples/main.clf loaded as classify-serve loads rules (srv_rules_load),
 * its answer head written by srv_response_head and its access-log line
 * built by srv_answer_log. Each input is run on four listeners:
 * pass-through, forward-auth behind nginx, forward-auth behind Caddy and
 * admin.
 *
 * Besides crashes and sanitizer reports, it aborts (FUZZ_FAIL) when:
 *   - a request span (method, target, header name or value) lies outside
 *     the input, or a header name is not a token, or a value holds CR/LF;
 *   - an answer's status does not fit its listener and verdict (421 or
 *     --reject-status for pass-through, 200 or 403 for forward-auth, 400
 *     or 431 without a verdict, 200/404/503 on admin), or its head is not
 *     one well-formed HTTP/1.1 head (printable ASCII lines ending in
 *     CRLF, one blank line at the end, the right Content-Length, the
 *     verdict headers exactly when there is a verdict, Connection: close
 *     exactly when closing);
 *   - a request is classified although it has a Transfer-Encoding whose
 *     last coding is not chunked, or a Transfer-Encoding in HTTP/1.0: RFC
 *     9112 sections 6.3 and 6.1 say 400 and close;
 *   - adding the forwarding headers that a listener must ignore
 *     (X-Forwarded-Uri/Method behind nginx, X-Original-URI/Method behind
 *     Caddy, both on pass-through) after the request line changes the
 *     first request's verdict or reason (examples/main.clf reads none of
 *     them): a client could then choose what is classified;
 *   - an access-log line is not one JSON object of strings, numbers and
 *     nulls in ASCII, ending in a newline.
 * Inputs over 64 KiB are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "srv_answer.h"
#include "srv_config.h"
#include "srv_conn.h"
#include "srv_log.h"
#include "http_head.h"
#include "srv_rules.h"
#include "srv_server.h"
#include "srv_worker.h"

#ifndef FUZZ_RULES_PATH
#error "FUZZ_RULES_PATH: the compiled examples/main.clf (fuzz/meson.build)"
#endif

#define FUZZ_MAX_INPUT (64u << 10)

static srv_config cfg;
static srv_server srv;
static srv_worker worker;
static llhttp_settings_t settings;
static srv_listener listeners[4];
static const char *const listener_names[4] = {"pass-through", "nginx", "caddy", "admin"};
/* What each listener must ignore, inserted after the request line. */
static const char *const spoof[4] = {
    "X-Forwarded-Uri: /wp-admin/\r\nX-Forwarded-Method: DELETE\r\n"
    "X-Original-URI: /wp-admin/\r\nX-Original-Method: DELETE\r\n",
    "X-Forwarded-Uri: /wp-admin/\r\nX-Forwarded-Method: DELETE\r\n",
    "X-Original-URI: /wp-admin/\r\nX-Original-Method: DELETE\r\n",
    NULL,
};

static const srv_auth_proxy *proxy_named(const char *name)
{
    for (const srv_auth_proxy *p = srv_auth_proxies; p->name != NULL; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    FUZZ_FAIL("no proxy named %s", name);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("CLF_FUZZ_RULES");
    if (!path || !*path) path = FUZZ_RULES_PATH;
    char *args[] = {"classify-serve", (char *)path, "--listen", "127.0.0.1:1",
                    "--trust-proxy", "127.0.0.1", "--threads", "1", NULL};
    if (srv_config_parse(&cfg, 8, args) != SRV_ARGS_RUN) exit(1);
    srv.cfg = &cfg;
    srv.reject.ptr = cfg.reject_body;
    srv.reject.len = strlen(cfg.reject_body);
    srv.reject.content_type = "text/plain; charset=utf-8";
    char err[CLF_ERRMSG_SIZE + 64];
    struct stat st;
    clf_store *store = NULL; /* the fuzzed rules use no state */
    srv_rules *r = srv_rules_load(path, cfg.trusted_proxies, NULL, NULL, 1, &st, &store, 0, err,
                                  sizeof err);
    if (r == NULL || srv_rules_holder_init(&srv.rules, r) != 0) {
        fprintf(stderr, "fuzz_serve: %s: %s\n", path, r ? "cannot hold the rules" : err);
        exit(1);
    }
    /* One worker, as srv_worker_init sets it up for classifying (its
     * event loop and listener handles are not needed: no sockets here). */
    worker.srv = &srv;
    if (srv_metrics_init(&worker.metrics) != 0) exit(1);
    worker.rules = srv_rules_acquire(&srv.rules);
    worker.gen = worker.rules->generation;
    worker.log.buf = malloc(SRV_JLINE_CAP);
    worker.log.cap = SRV_JLINE_CAP;
    if (!worker.log.buf) exit(1);
    srv.workers = &worker;
    srv.nworkers = 1;
    /* Access-log lines are built (and checked below) only when it is on. */
    if (srv_access_log_open("/dev/null") != 0) exit(1);
    srv_proto protos[4] = {SRV_PASS_THROUGH, SRV_FORWARD_AUTH, SRV_FORWARD_AUTH, SRV_ADMIN};
    for (int i = 0; i < 4; i++) {
        listeners[i].proto = protos[i];
        listeners[i].name = listener_names[i];
        listeners[i].fd = -1;
    }
    listeners[1].auth = proxy_named("nginx");
    listeners[2].auth = proxy_named("caddy");
    cm_http_settings(&settings);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Checks. */

static int lower_eq(const char *p, size_t n, const char *lower)
{
    return cm_http_name_is(p, n, lower, strlen(lower));
}

/* Reads every byte of a span (so ASan checks it lies in the input). */
static unsigned touch(const srv_conn *c, cm_span s, size_t size, const char *what)
{
    if ((size_t)s.off + s.len > size)
        FUZZ_FAIL("%s span %u+%u outside the %zu-byte input", what, s.off, s.len, size);
    unsigned sum = 0;
    for (uint32_t i = 0; i < s.len; i++) sum += (unsigned char)c->in[s.off + i];
    return sum;
}

static void check_head_spans(const srv_conn *c, size_t size)
{
    volatile unsigned sum = touch(c, c->req.method, size, "method") +
                            touch(c, c->req.url, size, "target");
    for (unsigned i = 0; i < c->req.n; i++) {
        cm_span nm = c->req.h[i].name, v = c->req.h[i].value;
        sum += touch(c, nm, size, "header name") + touch(c, v, size, "header value");
        if (nm.len == 0) FUZZ_FAIL("header %u has an empty name", i);
        for (uint32_t k = 0; k < nm.len; k++) {
            unsigned char ch = (unsigned char)c->in[nm.off + k];
            if (ch <= ' ' || ch >= 0x7f || strchr("\"(),/:;<=>?@[\\]{}", ch))
                FUZZ_FAIL("header %u's name holds byte 0x%02x", i, ch);
        }
        if (memchr(c->in + v.off, '\r', v.len) || memchr(c->in + v.off, '\n', v.len))
            FUZZ_FAIL("header %u's value holds CR or LF", i);
    }
    (void)sum;
}

/* RFC 9112, 6.1 and 6.3: a request that must get 400 for its
 * Transfer-Encoding: the last coding of all its lines is not chunked, or
 * the request is HTTP/1.0. */
static int bad_transfer_encoding(const srv_conn *c)
{
    int present = 0;
    const char *last = NULL;
    size_t last_len = 0;
    for (unsigned i = 0; i < c->req.n; i++) {
        if (!lower_eq(c->in + c->req.h[i].name.off, c->req.h[i].name.len, "transfer-encoding"))
            continue;
        present = 1;
        const char *v = c->in + c->req.h[i].value.off;
        size_t n = c->req.h[i].value.len;
        for (size_t a = 0; a <= n;) {
            size_t b = a;
            while (b < n && v[b] != ',') b++;
            size_t s = a, e = b;
            for (size_t k = s; k < e; k++)
                if (v[k] == ';') e = k; /* parameters */
            while (s < e && (v[s] == ' ' || v[s] == '\t')) s++;
            while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t')) e--;
            if (e > s) {
                last = v + s;
                last_len = e - s;
            }
            a = b + 1;
        }
    }
    if (!present)
        return 0;
    return c->parser.http_minor == 0 || last == NULL || !lower_eq(last, last_len, "chunked");
}

static const char *find_line(const char *head, size_t len, const char *prefix)
{
    size_t pl = strlen(prefix);
    for (const char *p = head; p && p + pl <= head + len;) {
        if (memcmp(p, prefix, pl) == 0) return p + pl;
        p = memchr(p, '\n', (size_t)(head + len - p));
        if (p) p++;
    }
    return NULL;
}

static void check_answer(const srv_conn *c, const srv_answer *a, const char *head, size_t hl)
{
    const srv_config *k = srv.cfg;
    srv_proto proto = c->l->proto;
    unsigned st = a->status;
    if (a->verdict < -1 || a->verdict > 1) FUZZ_FAIL("verdict %d", a->verdict);
    if (proto == SRV_ADMIN) {
        if (a->verdict != -1 || (st != 200 && st != 404 && st != 503))
            FUZZ_FAIL("admin: status %u, verdict %d", st, a->verdict);
    } else if (a->verdict == -1) {
        if (st != 400 && st != 431) FUZZ_FAIL("%s: status %u without a verdict",
                                              c->l->name, st);
        if (!a->close) FUZZ_FAIL("%s: %u without closing", c->l->name, st);
    } else if (proto == SRV_PASS_THROUGH) {
        if (st != (a->verdict ? 421 : k->reject_status))
            FUZZ_FAIL("pass-through: status %u for verdict %d", st, a->verdict);
    } else if (st != (a->verdict ? k->auth_accept_status : k->auth_reject_status)) {
        FUZZ_FAIL("%s: status %u for verdict %d", c->l->name, st, a->verdict);
    }
    if (a->verdict >= 0 && bad_transfer_encoding(c))
        FUZZ_FAIL("%s: classified (status %u) a request whose Transfer-Encoding must get 400",
                  c->l->name, st);
    if (a->body_len > 0 && a->body == NULL) FUZZ_FAIL("a body length without a body");

    /* The head: printable ASCII lines ending in CRLF, the last one empty. */
    if (hl < 4 || hl >= SRV_HEAD_MAX) FUZZ_FAIL("head of %zu bytes", hl);
    if (memcmp(head + hl - 4, "\r\n\r\n", 4) != 0) FUZZ_FAIL("head does not end in CRLF CRLF");
    for (size_t i = 0; i < hl; i++) {
        unsigned char ch = (unsigned char)head[i];
        if (ch == '\r' ? head[i + 1] != '\n' : ch == '\n' ? i == 0 || head[i - 1] != '\r'
                                             : ch < 0x20 || ch >= 0x7f)
            FUZZ_FAIL("head byte %zu is 0x%02x", i, ch);
        if (ch == '\n' && i + 1 < hl - 2 && head[i + 1] == '\r')
            FUZZ_FAIL("an empty line inside the head at %zu", i);
    }
    char want[48];
    snprintf(want, sizeof want, "HTTP/1.1 %u ", st);
    if (strncmp(head, want, strlen(want)) != 0) FUZZ_FAIL("status line %.20s", head);
    const char *cl = find_line(head, hl, "Content-Length: ");
    if (!cl || strtoull(cl, NULL, 10) != a->body_len)
        FUZZ_FAIL("Content-Length %s for a %zu-byte body", cl ? "wrong" : "missing", a->body_len);
    if ((find_line(head, hl, "X-Classify-Verdict: ") != NULL) != (a->verdict >= 0) ||
        (find_line(head, hl, "X-Classify-Reason: ") != NULL) != (a->verdict >= 0))
        FUZZ_FAIL("verdict headers %s a verdict", a->verdict >= 0 ? "missing with" : "without");
    if ((find_line(head, hl, "Connection: close\r") != NULL) != (a->close != 0))
        FUZZ_FAIL("Connection: close %s", a->close ? "missing" : "without closing");
}

/* The last 160 bytes of the line, for messages. */
#define TAIL(j) (int)((j)->len > 160 ? 160 : (j)->len), (j)->buf + ((j)->len > 160 ? (j)->len - 160 : 0)

/* The access-log line: {"key":value,...}\n, values strings, numbers or
 * null, every byte ASCII. */
static void check_json_line(const srv_jline *j)
{
    const char *s = j->buf, *e = j->buf + j->len;
    if (j->len < 3 || s[0] != '{' || e[-1] != '\n' || e[-2] != '}')
        FUZZ_FAIL("access-log line does not start with { or end with }\\n: ...%.*s", TAIL(j));
    const char *p = s + 1;
    e -= 2;
    int first = 1;
    while (p < e) {
        if (!first && *p++ != ',') FUZZ_FAIL("access log: no comma at %td", p - 1 - s);
        first = 0;
        for (int part = 0; part < 2; part++) {
            if (part == 1 && (p >= e || (*p != '"' && *p != 'n' && !(*p >= '0' && *p <= '9')))) {
                FUZZ_FAIL("access log: bad value at %td: ...%.*s", p - s, TAIL(j));
            }
            if (*p == '"') {
                for (p++; p < e && *p != '"'; p++) {
                    unsigned char ch = (unsigned char)*p;
                    if (ch < 0x20 || ch >= 0x7f) FUZZ_FAIL("access log: byte 0x%02x", ch);
                    if (ch == '\\') {
                        p++;
                        if (p < e && *p == 'u') {
                            for (int h = 1; h <= 4; h++)
                                if (p + h >= e || !strchr("0123456789abcdef", p[h]))
                                    FUZZ_FAIL("access log: bad \\u escape");
                            p += 4;
                        } else if (p >= e || (*p != '"' && *p != '\\')) {
                            FUZZ_FAIL("access log: bad escape");
                        }
                    }
                }
                if (p >= e) FUZZ_FAIL("access log: unterminated string: ...%.*s", TAIL(j));
                p++;
            } else if (part == 0) {
                FUZZ_FAIL("access log: a key is not a string at %td", p - s);
            } else if (*p == 'n') {
                if (e - p < 4 || memcmp(p, "null", 4) != 0) FUZZ_FAIL("access log: bad null");
                p += 4;
            } else {
                while (p < e && *p >= '0' && *p <= '9') p++;
            }
            if (part == 0 && (p >= e || *p++ != ':'))
                FUZZ_FAIL("access log: no colon after a key at %td", p - s);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* One connection. */

typedef struct outcome {
    int answered; /* the first request got an answer */
    unsigned status;
    int verdict;
    char reason[SRV_REASON_HDR_MAX];
    size_t reason_len;
} outcome;

/* Answers one request head as srv_conn.c's answer_request does. Returns
 * whether the connection closes after it. */
static int answer(srv_conn *c, size_t size, outcome *first)
{
    srv_answer a;
    memset(&a, 0, sizeof a);
    a.verdict = -1;
    check_head_spans(c, size);
    srv_answer_request(c, &a);
    if (!llhttp_should_keep_alive(&c->parser) || c->parser.upgrade)
        a.close = 1;
    size_t dl;
    const char *date = srv_worker_date(c->w, &dl);
    size_t hl = srv_response_head(c->head, &a, date, dl);
    check_answer(c, &a, c->head, hl);
    srv_answer_log(c, &a, 1);
    check_json_line(&c->w->log);
    if (!first->answered) {
        first->answered = 1;
        first->status = a.status;
        first->verdict = a.verdict;
        first->reason_len = a.reason_len < sizeof first->reason ? a.reason_len : sizeof first->reason;
        if (a.reason_len) memcpy(first->reason, a.reason, first->reason_len);
    }
    free(c->owned_body);
    c->owned_body = NULL;
    return a.close;
}

static void run(const srv_listener *l, const uint8_t *data, size_t size, outcome *first)
{
    static srv_conn c; /* large (its answer-head buffer): not on the stack */
    memset(&c, 0, sizeof c);
    memset(first, 0, sizeof *first);
    c.w = &worker;
    c.l = l;
    c.in = malloc(size ? size : 1); /* exactly the input: ASan sees overreads */
    if (!c.in || cm_http_head_init(&c.req, &c.in, cfg.max_headers) != 0) exit(1);
    memcpy(c.in, data, size);
    c.in_len = size;
    memcpy(c.peer, "127.0.0.1", 10);
    c.peer_len = 9;
    llhttp_init(&c.parser, HTTP_REQUEST, &settings);
    c.parser.data = &c.req;
    size_t pos = 0;
    int kick = 0;
    while (pos < size || kick) {
        kick = 0;
        size_t used;
        cm_http_feed_result ev = cm_http_feed(&c.parser, c.in + pos, size - pos, &used);
        if (ev == CM_HTTP_ERROR) {
            if (c.req.err_status != 400 && c.req.err_status != 431)
                FUZZ_FAIL("parse error status %u", c.req.err_status);
            break;
        }
        if (used > size - pos) FUZZ_FAIL("used %zu of %zu bytes", used, size - pos);
        pos += used;
        if (ev == CM_HTTP_HEAD) {
            if (answer(&c, size, first)) break;
            kick = 1;
        } else if (ev != CM_HTTP_END) {
            break;
        }
    }
    cm_http_head_free(&c.req);
    free(c.in);
}

/* The input with `extra` header lines after its first line, or NULL. */
static uint8_t *with_headers(const uint8_t *data, size_t size, const char *extra, size_t *out)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl) return NULL;
    size_t at = (size_t)(nl - data) + 1, el = strlen(extra);
    uint8_t *b = malloc(size + el);
    if (!b) exit(1);
    memcpy(b, data, at);
    memcpy(b + at, extra, el);
    memcpy(b + at + el, data + at, size - at);
    *out = size + el;
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) return 0;
    if (!srv.cfg) LLVMFuzzerInitialize(NULL, NULL);
    for (int i = 0; i < 4; i++) {
        outcome o, s;
        run(&listeners[i], data, size, &o);
        if (fuzz_verbose())
            fprintf(stderr, "fuzz: %s: %s %u %d %.*s\n", listener_names[i],
                    o.answered ? "answered" : "not answered", o.status, o.verdict,
                    (int)o.reason_len, o.reason);
        if (!spoof[i] || !o.answered || o.verdict < 0) continue;
        size_t sl;
        uint8_t *sp = with_headers(data, size, spoof[i], &sl);
        if (!sp) continue;
        run(&listeners[i], sp, sl, &s);
        free(sp);
        /* A spoofed request refused (431: more headers) says nothing. */
        if (s.answered && s.verdict >= 0 &&
            (s.verdict != o.verdict || s.reason_len != o.reason_len ||
             memcmp(s.reason, o.reason, o.reason_len) != 0))
            FUZZ_FAIL("%s: the ignored forwarding headers changed the verdict: %d '%.*s' -> "
                      "%d '%.*s'", listener_names[i], o.verdict, (int)o.reason_len, o.reason,
                      s.verdict, (int)s.reason_len, s.reason);
    }
    return 0;
}
