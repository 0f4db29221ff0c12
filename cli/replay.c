/*
 * replay.c: classify-run --log: every request of an access log through
 * one rules file, printed one JSON object per request (--json) or summed
 * up in a table (log_stats.c).
 */
#include "replay.h"

#include "log_source.h"
#include "log_stats.h"
#include "out_escape.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#define PROG "classify-run"
#define TOP_N 5

/* The address the rules saw as req.client_ip, as text, or "" unknown. */
static void client_text(const uint8_t a[16], int valid, char *buf, size_t len)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (!valid)
        buf[0] = '\0';
    else if (memcmp(a, v4mapped, 12) == 0)
        inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
    else
        inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

static void put_json_or_null(FILE *out, http_slice s)
{
    if (s.len > 0)
        put_json_string(out, s.ptr, s.len);
    else
        fputs("null", out);
}

static void print_json(FILE *out, uint64_t lineno, const log_record *rec, const clf_verdict *v,
                       const char *client)
{
    fprintf(out, "{\"line\": %llu, \"verdict\": \"%s\", \"reason\": ",
            (unsigned long long)lineno, v->verdict == CLF_ACCEPT ? "accept" : "reject");
    if (v->reason != NULL)
        put_json_string(out, v->reason, v->reason_len);
    else
        fputs("null", out);
    fputs(", \"method\": ", out);
    put_json_string(out, rec->method.ptr, rec->method.len);
    fputs(", \"path\": ", out);
    put_json_string(out, rec->path.ptr, rec->path.len);
    fputs(", \"ua\": ", out);
    put_json_or_null(out, rec->ua);
    fputs(", \"client\": ", out);
    http_slice c = {client, strlen(client)};
    put_json_or_null(out, c);
    fputs("}\n", out);
}

int replay_run(const replay_rules *rules, const replay_opts *o)
{
    log_source src;
    if (log_source_open(&src, o->log, o->format, 0, PROG) != 0)
        return 2;
    log_stats *stats = o->json ? NULL : log_stats_new();
    if (!o->json && stats == NULL) {
        fprintf(stderr, PROG ": error: out of memory\n");
        log_source_close(&src);
        return 2;
    }
    FILE *out = stdout;
    int status = 0, rc;
    uint64_t lineno;
    while ((rc = log_source_next(&src, &lineno, PROG)) == 1) {
        clf_verdict v;
        char err[CLF_ERRMSG_SIZE + 128];
        if (log_record_classify(rules->ctx, rules->filter, &src.rec, o->remote_addr, o->rdns,
                                NULL, &v, err, sizeof err) != 0) {
            log_source_unclassified(&src, lineno, err, PROG);
            continue;
        }
        uint8_t addr[16];
        int valid = 0;
        if (clf_ctx_client_ip(rules->ctx, addr, &valid) != CLF_OK)
            valid = 0;
        if (o->json) {
            char client[64];
            client_text(addr, valid, client, sizeof client);
            print_json(out, lineno, &src.rec, &v, client);
            if (ferror(out))
                break;
        } else if (log_stats_add(stats, &v, src.rec.ua.ptr, src.rec.ua.len, addr, valid) != 0) {
            fprintf(stderr, PROG ": error: out of memory\n");
            status = 2;
            break;
        }
    }
    if (rc < 0 || src.bad > 0)
        status = status ? status : 1;
    if (!o->json) {
        char b[3][32];
        log_stats_commas(src.lines, b[0]);
        log_stats_commas(src.requests, b[1]);
        log_stats_commas(src.empty, b[2]);
        fprintf(out, "log %s (%s): %s lines, %s requests, %s empty\n", src.name,
                log_parser_format_name(src.parser), b[0], b[1], b[2]);
        log_source_print_bad(&src, out);
        if (rc < 0)
            fputs("the log could not be read to its end: the figures cover what was read\n",
                  out);
        putc('\n', out);
        log_stats_print(stats, out, TOP_N);
    }
    log_stats_free(stats);
    log_source_close(&src);
    return status;
}
