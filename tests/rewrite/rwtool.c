/*
 * rwtool: runs the rewrite engine on cases read from standard input, for
 * the Python tests in tests/rewrite/. Line protocol, bytes in hex:
 *
 *   set MODE L             srw | replace_filter | sub_filter; L = max_match
 *   rule KIND FLAGS PAT TPL
 *                          KIND lit | re; FLAGS letters of "ismo" or "-";
 *                          PAT and TPL hex ("-" for empty)
 *   build                  compiles; prints "ok HOLDBACK" or
 *                          "rules N" then N lines "diag RULE WHERE OFFSET CODE MESSAGE"
 *   save FILE              writes the set's stored form to FILE; prints "ok BYTES"
 *   roundtrip              serializes and reloads the set (then runs use it);
 *                          prints "ok BYTES" or "error STATUS MESSAGE"
 *   input HEX              the body
 *   run CHUNKS             feeds the body cut at the comma-separated lengths
 *                          (0 = an empty chunk; what is left goes in one last
 *                          chunk; "-" = one chunk), then finishes; prints
 *                          "out HEX held=MAX bound=HOLDBACK rep=N gaveup=G"
 *                          or "error STATUS"
 *   runf CHUNKS            the same, the last chunk given with rw_stream_feed_final
 *   ref                    the reference's output (rw_ref.c): "ref HEX" or "ref error"
 *   end                    frees the set
 *
 * Each command's answer is one line (build with errors: 1 + N lines), so
 * a test can send many cases through one process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rw_build.h"
#include "rw_ref.h"
#include "rw_stream.h"

#define MAX_RULES 4096

typedef struct rbuf {
    uint8_t *p;
    size_t n, cap;
} rbuf;

static void rb_put(rbuf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n) c *= 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) {
            fprintf(stderr, "rwtool: out of memory\n");
            exit(2);
        }
        b->p = q;
        b->cap = c;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
}

static int sink(void *ud, const uint8_t *p, size_t n)
{
    rb_put(ud, p, n);
    return 0;
}

static int unhex(const char *h, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (strcmp(h, "-") == 0) {
        *out = malloc(1);
        return *out ? 0 : -1;
    }
    size_t n = strlen(h);
    if (n % 2) return -1;
    uint8_t *p = malloc(n / 2 + 1);
    if (!p) return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1) {
            free(p);
            return -1;
        }
        p[i] = (uint8_t)v;
    }
    *out = p;
    *len = n / 2;
    return 0;
}

static void puthex(const uint8_t *p, size_t n)
{
    if (n == 0) fputs("-", stdout);
    for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
}

static const char *where_name(rw_where w)
{
    switch (w) {
    case RW_AT_SET: return "set";
    case RW_AT_FLAGS: return "flags";
    case RW_AT_PATTERN: return "pattern";
    case RW_AT_TEMPLATE: return "template";
    }
    return "?";
}

int main(void)
{
    rw_set_desc d;
    rw_set_desc_init(&d);
    rw_rule_desc *rules = calloc(MAX_RULES, sizeof *rules);
    ref_rule *refs = calloc(MAX_RULES, sizeof *refs);
    uint8_t *input = NULL;
    size_t input_len = 0;
    rw_set *set = NULL;
    rw_scratch *sc = NULL;
    char *line = NULL;
    size_t lcap = 0;
    if (!rules || !refs) return 2;
    while (getline(&line, &lcap, stdin) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        char *cmd = strtok(line, " ");
        if (!cmd) continue;
        if (strcmp(cmd, "set") == 0) {
            char *m = strtok(NULL, " "), *l = strtok(NULL, " ");
            if (!m || !l) return 2;
            d.mode = strcmp(m, "replace_filter") == 0 ? RW_MODE_REPLACE_FILTER
                     : strcmp(m, "sub_filter") == 0   ? RW_MODE_SUB_FILTER
                     : strcmp(m, "srw") == 0          ? RW_MODE_SRW
                                                      : (rw_mode)99;
            d.max_match = (uint32_t)strtoul(l, NULL, 10);
            for (uint32_t i = 0; i < d.nrules; i++) {
                free((void *)rules[i].pattern);
                free((void *)rules[i].replacement);
            }
            d.nrules = 0;
        } else if (strcmp(cmd, "rule") == 0) {
            char *k = strtok(NULL, " "), *f = strtok(NULL, " "), *ph = strtok(NULL, " "),
                 *th = strtok(NULL, " ");
            if (!k || !f || !ph || !th || d.nrules >= MAX_RULES) return 2;
            rw_rule_desc *r = &rules[d.nrules];
            memset(r, 0, sizeof *r);
            r->kind = strcmp(k, "re") == 0 ? RW_REGEX : RW_LITERAL;
            for (const char *c = f; *c && *c != '-'; c++) {
                if (*c == 'i') r->flags |= RW_CASELESS;
                else if (*c == 's') r->flags |= RW_DOTALL;
                else if (*c == 'm') r->flags |= RW_MULTILINE;
                else if (*c == 'o') r->flags |= RW_ONCE;
                else if (*c == 'X') r->flags |= 0x100; /* an unknown flag, for the tests */
            }
            uint8_t *p, *t;
            size_t pl, tl;
            if (unhex(ph, &p, &pl) || unhex(th, &t, &tl)) return 2;
            r->pattern = p;
            r->pattern_len = pl;
            r->replacement = t;
            r->replacement_len = tl;
            r->pos.line = d.nrules + 1;
            d.nrules++;
        } else if (strcmp(cmd, "build") == 0) {
            rw_set_free(set);
            set = NULL;
            d.rules = rules;
            rw_diags dg;
            rw_status st = rw_build(&d, NULL, &set, &dg);
            if (st == RW_OK) {
                rw_scratch_free(sc);
                sc = NULL;
                st = rw_scratch_new(set, NULL, &sc);
                if (st) printf("error %s\n", rw_status_name(st));
                else printf("ok %llu\n", (unsigned long long)rw_set_holdback(set));
            } else if (st == RW_E_RULES) {
                printf("rules %u\n", dg.n);
                for (uint32_t i = 0; i < dg.n; i++)
                    printf("diag %d %s %lld %s %s\n", dg.v[i].rule, where_name(dg.v[i].where),
                           (long long)dg.v[i].offset, rw_diag_code_name(dg.v[i].code),
                           dg.v[i].message);
            } else {
                printf("error %s\n", rw_status_name(st));
            }
            rw_diags_free(&dg);
        } else if (strcmp(cmd, "save") == 0) {
            char *path = strtok(NULL, " ");
            vm_buf b = {0};
            FILE *f = NULL;
            if (!set || !path || rw_set_serialize(set, &b) != RW_OK || !(f = fopen(path, "wb")) ||
                fwrite(b.data, 1, b.len, f) != b.len)
                printf("error save\n");
            else
                printf("ok %zu\n", b.len);
            if (f) fclose(f);
            free(b.data);
        } else if (strcmp(cmd, "roundtrip") == 0) {
            if (!set) {
                printf("error no-set\n");
            } else {
                vm_buf b = {0};
                rw_status st = rw_set_serialize(set, &b);
                rw_set *again = NULL;
                char err[256] = "";
                if (!st) st = rw_set_load(b.data, b.len, NULL, &again, err, sizeof err);
                if (st) {
                    printf("error %s %s\n", rw_status_name(st), err);
                } else {
                    rw_set_free(set);
                    set = again;
                    rw_scratch_free(sc);
                    sc = NULL;
                    rw_scratch_new(set, NULL, &sc);
                    printf("ok %zu\n", b.len);
                }
                free(b.data);
            }
        } else if (strcmp(cmd, "input") == 0) {
            char *h = strtok(NULL, " ");
            free(input);
            if (!h || unhex(h, &input, &input_len)) return 2;
        } else if (strcmp(cmd, "run") == 0 || strcmp(cmd, "runf") == 0) {
            int final = cmd[3] == 'f';
            char *c = strtok(NULL, " ");
            if (!set || !sc || !c) {
                printf("error no-set\n");
                fflush(stdout);
                continue;
            }
            rbuf out = {0};
            rw_stream *st = NULL;
            rw_status rc = rw_stream_new(set, NULL, sink, &out, &st);
            size_t at = 0;
            if (!rc && strcmp(c, "-") != 0) {
                for (char *tok = strtok(c, ","); tok && !rc; tok = strtok(NULL, ",")) {
                    size_t k = strtoul(tok, NULL, 10);
                    if (k > input_len - at) k = input_len - at;
                    rc = rw_stream_feed(st, sc, input + at, k);
                    at += k;
                }
            }
            if (!rc && final) rc = rw_stream_feed_final(st, sc, input + at, input_len - at);
            if (!rc && !final && at < input_len)
                rc = rw_stream_feed(st, sc, input + at, input_len - at);
            if (!rc && !final) rc = rw_stream_finish(st, sc);
            if (rc) {
                printf("error %s\n", rw_status_name(rc));
            } else {
                rw_stream_stats stt;
                rw_stream_stats_get(st, &stt);
                fputs("out ", stdout);
                puthex(out.p, out.n);
                printf(" held=%llu bound=%llu rep=%llu gaveup=%d dfa=%llu cap=%llu rescans=%llu "
                       "capfail=%llu\n",
                       (unsigned long long)stt.max_held,
                       (unsigned long long)rw_set_holdback(set),
                       (unsigned long long)stt.replacements, stt.gave_up,
                       (unsigned long long)stt.dfa_runs, (unsigned long long)stt.captures,
                       (unsigned long long)stt.rescans, (unsigned long long)stt.captures_failed);
            }
            rw_stream_free(st);
            free(out.p);
        } else if (strcmp(cmd, "ref") == 0) {
            for (uint32_t i = 0; i < d.nrules; i++) {
                refs[i].regex = rules[i].kind == RW_REGEX;
                refs[i].flags = rules[i].flags;
                refs[i].pat = rules[i].pattern;
                refs[i].plen = rules[i].pattern_len;
                refs[i].tpl = rules[i].replacement;
                refs[i].tlen = rules[i].replacement_len;
            }
            uint8_t *o;
            size_t on;
            if (ref_rewrite((int)d.mode, d.max_match, refs, d.nrules, input, input_len, &o,
                            &on)) {
                printf("ref error\n");
            } else {
                fputs("ref ", stdout);
                puthex(o, on);
                putchar('\n');
                free(o);
            }
        } else if (strcmp(cmd, "end") == 0) {
            rw_set_free(set);
            set = NULL;
        } else {
            fprintf(stderr, "rwtool: unknown command %s\n", cmd);
            return 2;
        }
        fflush(stdout);
    }
    rw_scratch_free(sc);
    rw_set_free(set);
    for (uint32_t i = 0; i < d.nrules; i++) {
        free((void *)rules[i].pattern);
        free((void *)rules[i].replacement);
    }
    free(rules);
    free(refs);
    free(input);
    free(line);
    return 0;
}
