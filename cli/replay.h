/*
 * replay.h: classify-run --log (replay.c) and --diff (diff.c): the
 * requests of an access log classified with one rules file, or with two
 * to see what changes between them.
 */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

#include <classify.h>

#include <stdint.h>

/* One loaded rules file as classify-run uses it. */
typedef struct replay_rules {
    const char *path;   /* for messages */
    clf_ctx *ctx;
    uint32_t filter;    /* the entry filter that decides (--filter) */
} replay_rules;

typedef struct replay_opts {
    const char *log;         /* the log file, "-": standard input; NULL: */
    const char *const *requests; /* --diff over request files instead */
    size_t nrequests;
    const char *format;      /* --log-format, NULL: auto */
    int json;
    const char *remote_addr; /* the peer of lines that log no client, or NULL */
    const char *rdns;        /* --rdns, or NULL */
} replay_opts;

/* Exit statuses (classify-run's): 0 every line classified; 1 a line was
 * malformed or could not be classified, or the log could not be read to
 * its end; 2 the log could not be opened or the output written. */
int replay_run(const replay_rules *rules, const replay_opts *o);

/* --diff, over o->log or else o->requests: 0 no request changed verdict or reason, 1 some did, 2 an error
 * (the log could not be opened or read, or the output written).
 * Malformed lines are reported and do not count as changes. */
int diff_run(const replay_rules *old_rules, const replay_rules *new_rules,
             const replay_opts *o);

#endif
