/*
 * diff.c: classify-run --diff OLD.bin NEW.bin --log FILE: every request of
 * the log through both rules files, and the ones whose verdict or reason
 * changes, grouped by the change (accept -> reject by the new reason,
 * reject -> accept by the old one, a reason for another), each group with
 * up to DIFF_EXAMPLES example lines and the explain of its first example
 * under both rules files. Its exit status gates a deploy: 0 unchanged,
 * 1 changed, 2 an error.
 */
#include "replay.h"

#include "explain_out.h"
#include "log_source.h"
#include "log_stats.h"
#include "out_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "classify-run"
#define DIFF_EXAMPLES 3
/* Distinct changes (old verdict and reason, new verdict and reason) kept
 * apart; more are counted together, so that memory stays bounded. */
#define DIFF_MAX_GROUPS 256
/* An example line is quoted up to this many bytes. */
#define EXAMPLE_BYTES 1024

typedef enum change_kind { TO_REJECT = 0, TO_ACCEPT = 1, REASON = 2 } change_kind;
static const char *const change_names[] = {"accept -> reject", "reject -> accept",
                                           "reason changed"};

typedef struct side {
    clf_verdict_kind verdict;
    char *reason; /* a copy, NULL for none */
    size_t reason_len;
} side;

typedef struct example {
    uint64_t line;
    char text[EXAMPLE_BYTES];
    size_t len, full_len;
} example;

typedef struct change {
    change_kind kind;
    side old, new_;
    uint64_t count;
    example ex[DIFF_EXAMPLES];
    size_t nex;
    char *first;          /* the first example whole, to explain */
    size_t first_len;
} change;

typedef struct diff_state {
    change *groups;
    size_t ngroups;
    uint64_t other;       /* changes past DIFF_MAX_GROUPS */
    uint64_t changed, unchanged, by_kind[3];
} diff_state;

static int same(const side *s, const clf_verdict *v)
{
    if (s->verdict != v->verdict || (s->reason == NULL) != (v->reason == NULL))
        return 0;
    return v->reason == NULL ||
           (s->reason_len == v->reason_len && memcmp(s->reason, v->reason, v->reason_len) == 0);
}

static int verdicts_equal(const clf_verdict *a, const clf_verdict *b)
{
    if (a->verdict != b->verdict || (a->reason == NULL) != (b->reason == NULL))
        return 0;
    return a->reason == NULL ||
           (a->reason_len == b->reason_len && memcmp(a->reason, b->reason, a->reason_len) == 0);
}

static int set_side(side *s, const clf_verdict *v)
{
    s->verdict = v->verdict;
    s->reason = NULL;
    s->reason_len = v->reason_len;
    if (v->reason == NULL)
        return 0;
    if ((s->reason = malloc(v->reason_len + 1)) == NULL)
        return -1;
    memcpy(s->reason, v->reason, v->reason_len);
    s->reason[v->reason_len] = '\0';
    return 0;
}

/* The group of this change, made on first sight; NULL when there are
 * DIFF_MAX_GROUPS already or memory ran out. */
static change *group_of(diff_state *d, const clf_verdict *a, const clf_verdict *b)
{
    for (size_t i = 0; i < d->ngroups; i++)
        if (same(&d->groups[i].old, a) && same(&d->groups[i].new_, b))
            return &d->groups[i];
    if (d->ngroups == DIFF_MAX_GROUPS)
        return NULL;
    change *g = &d->groups[d->ngroups];
    memset(g, 0, sizeof *g);
    if (set_side(&g->old, a) != 0 || set_side(&g->new_, b) != 0) {
        free(g->old.reason);
        return NULL;
    }
    g->kind = a->verdict == b->verdict ? REASON : b->verdict == CLF_REJECT ? TO_REJECT : TO_ACCEPT;
    d->ngroups++;
    return g;
}

static void record_example(change *g, uint64_t lineno, const char *line, size_t len)
{
    if (g->nex == DIFF_EXAMPLES)
        return;
    example *e = &g->ex[g->nex++];
    e->line = lineno;
    e->full_len = len;
    e->len = len < EXAMPLE_BYTES ? len : EXAMPLE_BYTES;
    memcpy(e->text, line, e->len);
    if (g->first == NULL && (g->first = malloc(len + 1)) != NULL) {
        memcpy(g->first, line, len + 1);
        g->first_len = len;
    }
}

static int group_order(const void *x, const void *y)
{
    const change *a = x, *b = y;
    if (a->kind != b->kind)
        return (int)a->kind - (int)b->kind;
    return a->count < b->count ? 1 : a->count > b->count ? -1 : 0;
}

static void put_side_text(FILE *out, const side *s)
{
    fputs(s->verdict == CLF_ACCEPT ? "accept" : "reject", out);
    if (s->reason != NULL) {
        putc(' ', out);
        put_text(out, s->reason, s->reason_len);
    }
}

static void put_side_json(FILE *out, const side *s)
{
    fprintf(out, "{\"verdict\": \"%s\", \"reason\": ",
            s->verdict == CLF_ACCEPT ? "accept" : "reject");
    if (s->reason != NULL)
        put_json_string(out, s->reason, s->reason_len);
    else
        fputs("null", out);
}

/* Classifies the group's first example again with `r`, traced into log.
 * Returns 0, or -1 when it cannot be (memory, a request file gone). */
static int explain_example(log_source *src, const replay_rules *r, const replay_opts *o,
                           const change *g, explain_log *log)
{
    if (g->first == NULL || log_source_again(src, g->ex[0].line, g->first, g->first_len) != 0)
        return -1;
    char err[CLF_ERRMSG_SIZE + 128];
    clf_verdict v;
    if (log_record_classify(r->ctx, r->filter, &src->rec, o->remote_addr, o->rdns, log, &v, err,
                            sizeof err) != 0)
        return -1;
    return 0;
}

static void print_text(FILE *out, diff_state *d, log_source *src, const replay_rules *old_r,
                       const replay_rules *new_r, const replay_opts *o, explain_log *log)
{
    char b[4][32];
    fprintf(out, "diff %s -> %s on %s%s%s%s: %s requests, %s changed (%.2f%%), %s unchanged\n",
            old_r->path, new_r->path, src->name, src->files ? "" : " (",
            src->files ? "" : log_parser_format_name(src->parser), src->files ? "" : ")",
            log_stats_commas(src->requests, b[0]),
            log_stats_commas(d->changed, b[1]),
            d->changed + d->unchanged ? 100.0 * (double)d->changed /
                                            (double)(d->changed + d->unchanged) : 0.0,
            log_stats_commas(d->unchanged, b[2]));
    for (int k = 0; k < 3; k++)
        fprintf(out, "  %-18s %12s\n", change_names[k], log_stats_commas(d->by_kind[k], b[3]));
    if (d->other)
        fprintf(out, "  (%s more changes past %d groups are not grouped)\n",
                log_stats_commas(d->other, b[0]), DIFF_MAX_GROUPS);
    log_source_print_bad(src, out);
    for (size_t i = 0; i < d->ngroups; i++) {
        const change *g = &d->groups[i];
        fputs(g->kind == REASON ? "\nreason changed: " : "\n", out);
        put_side_text(out, &g->old);
        fputs(" -> ", out);
        put_side_text(out, &g->new_);
        fprintf(out, ": %s request%s\n", log_stats_commas(g->count, b[0]), g->count == 1 ? "" : "s");
        for (size_t e = 0; e < g->nex; e++) {
            if (src->files == NULL)
                fprintf(out, "  line %llu: ", (unsigned long long)g->ex[e].line);
            else
                fputs("  ", out); /* the text is the file's name */
            put_text(out, g->ex[e].text, g->ex[e].len);
            fputs(g->ex[e].full_len > g->ex[e].len ? "...\n" : "\n", out);
        }
        for (int which = 0; which < 2; which++) {
            const replay_rules *r = which == 0 ? old_r : new_r;
            char where[512];
            log_source_where(src, g->ex[0].line, where, sizeof where);
            fprintf(out, "  explain %s%s with %s (", src->files ? "" : "line ",
                    src->files ? where : strrchr(where, ':') + 1, r->path);
            put_side_text(out, which == 0 ? &g->old : &g->new_);
            fputs("):\n", out);
            if (explain_example(src, r, o, g, log) != 0)
                fputs("    (cannot be explained: it no longer reads or parses, or out of memory)\n",
                      out);
            else
                explain_log_print_text(log, out);
        }
    }
}

static void print_json(FILE *out, diff_state *d, log_source *src, const replay_rules *old_r,
                       const replay_rules *new_r, const replay_opts *o, explain_log *log)
{
    fputs("{\"old\": ", out);
    put_json_cstr(out, old_r->path);
    fputs(", \"new\": ", out);
    put_json_cstr(out, new_r->path);
    fputs(src->files ? ", \"log\": null" : ", \"log\": ", out);
    if (src->files == NULL)
        put_json_cstr(out, src->path);
    fprintf(out, ", \"format\": \"%s\", \"lines\": %llu, \"requests\": %llu, \"changed\": %llu, "
            "\"unchanged\": %llu, \"accept_to_reject\": %llu, \"reject_to_accept\": %llu, "
            "\"reason_changed\": %llu, \"ungrouped\": %llu, \"bad_lines\": %llu, "
            "\"bad_line_numbers\": [",
            log_parser_format_name(src->parser), (unsigned long long)src->lines,
            (unsigned long long)src->requests, (unsigned long long)d->changed,
            (unsigned long long)d->unchanged, (unsigned long long)d->by_kind[TO_REJECT],
            (unsigned long long)d->by_kind[TO_ACCEPT], (unsigned long long)d->by_kind[REASON],
            (unsigned long long)d->other, (unsigned long long)src->bad);
    for (uint64_t i = 0; i < src->bad && i < LOG_LISTED; i++)
        fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)src->bad_at[i]);
    fputs("], \"groups\": [", out);
    static const char *const kinds[] = {"accept->reject", "reject->accept", "reason"};
    for (size_t i = 0; i < d->ngroups; i++) {
        const change *g = &d->groups[i];
        fprintf(out, "%s{\"change\": \"%s\", \"count\": %llu, \"examples\": [", i ? ", " : "",
                kinds[g->kind], (unsigned long long)g->count);
        for (size_t e = 0; e < g->nex; e++) {
            fprintf(out, "%s{\"line\": %llu, \"text\": ", e ? ", " : "",
                    (unsigned long long)g->ex[e].line);
            put_json_string(out, g->ex[e].text, g->ex[e].len);
            fprintf(out, ", \"truncated\": %s}", g->ex[e].full_len > g->ex[e].len ? "true" : "false");
        }
        fputs("]", out);
        for (int which = 0; which < 2; which++) {
            fputs(which == 0 ? ", \"old\": " : ", \"new\": ", out);
            put_side_json(out, which == 0 ? &g->old : &g->new_);
            if (explain_example(src, which == 0 ? old_r : new_r, o, g, log) == 0)
                explain_log_print_json(log, out);
            putc('}', out);
        }
        putc('}', out);
    }
    fputs("]}\n", out);
}

int diff_run(const replay_rules *old_r, const replay_rules *new_r, const replay_opts *o)
{
    log_source src;
    if ((o->log != NULL ? log_source_open(&src, o->log, o->format, 1, PROG)
                        : log_source_open_files(&src, o->requests, o->nrequests, 1, PROG)) != 0)
        return 2;
    diff_state d;
    memset(&d, 0, sizeof d);
    d.groups = calloc(DIFF_MAX_GROUPS, sizeof *d.groups);
    if (d.groups == NULL) {
        fprintf(stderr, PROG ": error: out of memory\n");
        log_source_close(&src);
        return 2;
    }
    int rc, failed = 0;
    uint64_t lineno;
    while ((rc = log_source_next(&src, &lineno, PROG)) == 1) {
        clf_verdict a, b;
        char err[CLF_ERRMSG_SIZE + 128];
        if (log_record_classify(old_r->ctx, old_r->filter, &src.rec, o->remote_addr, o->rdns,
                                NULL, &a, err, sizeof err) != 0 ||
            log_record_classify(new_r->ctx, new_r->filter, &src.rec, o->remote_addr, o->rdns,
                                NULL, &b, err, sizeof err) != 0) {
            log_source_unclassified(&src, lineno, err, PROG);
            continue;
        }
        if (verdicts_equal(&a, &b)) {
            d.unchanged++;
            continue;
        }
        d.changed++;
        d.by_kind[a.verdict == b.verdict ? REASON : b.verdict == CLF_REJECT ? TO_REJECT
                                                                              : TO_ACCEPT]++;
        change *g = group_of(&d, &a, &b);
        if (g == NULL) {
            d.other++;
            continue;
        }
        g->count++;
        record_example(g, lineno, src.copy, src.copy_len);
    }
    if (rc < 0)
        failed = 1;
    qsort(d.groups, d.ngroups, sizeof *d.groups, group_order);
    explain_log log;
    explain_log_init(&log);
    if (o->json)
        print_json(stdout, &d, &src, old_r, new_r, o, &log);
    else
        print_text(stdout, &d, &src, old_r, new_r, o, &log);
    explain_log_free(&log);
    for (size_t i = 0; i < d.ngroups; i++) {
        free(d.groups[i].old.reason);
        free(d.groups[i].new_.reason);
        free(d.groups[i].first);
    }
    free(d.groups);
    log_source_close(&src);
    return failed ? 2 : d.changed > 0 ? 1 : 0;
}
