/*
 * classify-run: classify HTTP requests with a compiled rules file.
 *
 *   classify-run RULES.bin --request FILE.http [FILE.http ...]
 *   classify-run RULES.bin --ua-file FILE
 *   classify-run RULES.bin --rewrite NAME [FILE]
 *
 * A debugging and testing front end for libclassify: it loads RULES.bin
 * with the default options, feeds each request to one context and prints
 * the verdict, or streams a body through a rewrite set (rewrite_run.c).
 * See docs/classify-run.md for the formats.
 */
#include "classify_req.h"
#include "explain_out.h"
#include "http_request.h"
#include "out_escape.h"
#include "readfile.h"
#include "replay.h"
#include "rewrite_run.h"
#include "size_arg.h"
#include "usage_error.h"

#include <classify.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#define PROG "classify-run"
#define STDIN_NAME "(standard input)"

/* Exit statuses (also in --help and docs/classify-run.md). */
enum {
    EXIT_CLASSIFIED = 0, /* every request was classified */
    EXIT_BAD_INPUT = 1,  /* some input was unreadable, malformed or failed */
                         /* (rewrite_run() returns the same statuses) */
    EXIT_USAGE = 2       /* usage, rules file, or output error */
};

static const char usage_text[] =
    "Usage: " PROG " RULES.bin --request FILE.http [FILE.http ...]\n"
    "       " PROG " RULES.bin --ua-file FILE\n"
    "       " PROG " RULES.bin --log FILE [--log-format FORMAT] [--json]\n"
    "       " PROG " --diff OLD.bin NEW.bin --log FILE [--log-format FORMAT] [--json]\n"
    "       " PROG " --diff OLD.bin NEW.bin --request FILE.http [FILE.http ...] [--json]\n"
    "       " PROG " RULES.bin --rewrite NAME [--chunk-size N | --chunk-lengths FILE]\n"
    "                    [--output FILE] [--stats] [FILE]\n"
    "Classify HTTP requests with a rules file compiled by classifyc, or\n"
    "rewrite a body with one of its rewrite sets.\n"
    "\n"
    "Options:\n"
    "  --request FILE...  classify each FILE, one raw HTTP/1.x request\n"
    "                     (request line and headers; a body is ignored)\n"
    "  --ua-file FILE     classify each line of FILE as a \"GET /\" request\n"
    "                     with that User-Agent (an empty line: no User-Agent)\n"
    "  --log FILE         classify each request of an access log (plain or gzip'd);\n"
    "                     print a summary: requests, accepted, rejected by reason,\n"
    "                     the top User-Agents and client networks of each\n"
    "  --log-format F     nginx-combined, caddy-json, or an nginx log_format\n"
    "                     template ('$remote_addr ... \"$request\" ...'); without it,\n"
    "                     a first line starting with '{' is caddy-json, else\n"
    "                     nginx-combined\n"
    "  --diff OLD NEW     with --log (or --request): classify every request with\n"
    "                     both rules files and show which change verdict or\n"
    "                     reason, grouped, with examples and their explain;\n"
    "                     exit 0 none, 1 some, 2 error\n"
    "  --remote-addr ADDR the peer address of every request (the TCP\n"
    "                     client: IPv4 or IPv6); req.client_ip derives from it.\n"
    "                     Without it the peer is unknown and req.client_ip is\n"
    "                     the invalid address\n"
    "  --trust-proxy LIST trust these proxies (addresses or CIDR prefixes,\n"
    "                     comma-separated; repeatable) to report the client in\n"
    "                     X-Forwarded-For / X-Real-IP (docs/language.md, Client IP)\n"
    "  --ipdb FILE        a MaxMind database (ASN, country) for ip.asn(),\n"
    "                     ip.asn_org() and ip.country(); repeatable, up to 4\n"
    "  --rdns NAME        the forward-confirmed reverse-DNS name of every\n"
    "                     request's client address, as a host would resolve it\n"
    "                     (req.rdns; '' means resolved, no confirmed name);\n"
    "                     without it req.rdns_checked is false\n"
    "  --keys PATH        verify HTTP Message Signatures (Web Bot Auth) with the\n"
    "                     JWK Set in PATH, or every *.json set in directory PATH\n"
    "                     (req.signature_*; docs/signatures.md)\n"
    "  --time SECONDS     the time of every request, in seconds since the epoch,\n"
    "                     for signatures' created and expires (default: now)\n"
    "  --state-bytes N    the memory of the store the rules' count(), score() and\n"
    "                     mark() share across the run's requests (docs/state.md):\n"
    "                     bytes, or with K, M, G; at least 64K; 0: no store\n"
    "                     (every state call has its 'absent' result); default 64M,\n"
    "                     made only for rules with state calls\n"
    "  --scheme SCHEME    the scheme requests came by (https or http), for\n"
    "                     @scheme, @target-uri and @authority; an absolute-form\n"
    "                     target gives its own\n"
    ;
/* In two parts: C11 promises string literals of 4,095 bytes only. */
static const char usage_text2[] =
    "  --filter NAME      decide with entry filter NAME of the rules instead of\n"
    "                     main (a filter of the compiled file that accepts or\n"
    "                     rejects on every path; classifyc --dump marks them)\n"
    "  --json             print one JSON object per request (--diff: one object)\n"
    "  --explain          after each verdict, print the steps that led to it:\n"
    "                     values read, comparisons, pattern tests (with the\n"
    "                     pattern that matched), calls and branches, as\n"
    "                     '  FILE:LINE: STEP', with the source line under the\n"
    "                     first step on it when FILE can be read; with --json,\n"
    "                     an \"explain\" array of {file, line, col, depth, text}\n"
    "\n"
    "Rewriting (docs/classify-run.md, Rewriting a body):\n"
    "  --rewrite NAME     stream FILE (standard input without one) through the\n"
    "                     rewrite set NAME of the rules, to standard output\n"
    "  --chunk-size N     feed the body in chunks of N bytes (1 to 1073741824;\n"
    "                     default 65536); the output does not depend on it\n"
    "  --chunk-lengths FILE  feed the chunks FILE lists, one length in bytes\n"
    "                     per line (0: an empty chunk), then the rest of the\n"
    "                     body in 65536-byte chunks: a test's exact split\n"
    "  --output FILE      write the rewritten body to FILE, which is replaced\n"
    "                     only when the whole body was rewritten\n"
    "  --stats            then print the byte counts, the replacements and the\n"
    "                     most bytes held back to standard error\n"
    "\n"
    "  --help             print this help and exit\n"
    "  --version          print version information and exit\n"
    "Any FILE (or RULES.bin) may be '-' for standard input, once.\n"
    "'--' ends the options.\n"
    "\n"
    "Output, one line per request (VERDICT is accept or reject; REASON is\n"
    "printed when the deciding rule gave one):\n"
    "  VERDICT [REASON]           for a single request file\n"
    "  FILE: VERDICT [REASON]     for several request files\n"
    "  VERDICT [REASON]<TAB>UA    for --ua-file\n"
    "  then, with --explain, indented lines:\n"
    "    FILE:LINE: STEP          one per step\n"
    "    LINE | SOURCE            the source line, under its first step\n"
    "Errors go to standard error as '" PROG ": FILE: error: MESSAGE'.\n"
    "\n"
    "Exit status:\n"
    "  0  every request was classified\n"
    "  1  an input was unreadable or malformed, or a request could not be\n"
    "     classified (the other requests are still classified); with\n"
    "     --rewrite, the body or the chunk lengths could not be read, or the\n"
    "     body could not be rewritten\n"
    "  2  usage error, the rules file could not be loaded (or has no such\n"
    "     rewrite set), the log could not be opened, or the output could not be\n"
    "     written\n"
    "  with --log, 1 also means a line was malformed or not classified (the\n"
    "  first 10 are named on standard error); with --diff: 0 no request\n"
    "  changed, 1 some changed, 2 an error (malformed lines do not count)\n"
    "With --rewrite, a failure leaves no partial output in a file: --output\n"
    "is not replaced, and standard output redirected to a file is cut back\n"
    "to where it was.\n";

/* ------------------------------------------------------------------------ */
/* Command line. */

typedef struct options {
    const char *rules;
    const char **requests; /* argv entries; array sized for argc */
    size_t request_count;
    int request_given; /* --request appeared */
    const char *ua_file;
    const char *log;          /* --log FILE, or NULL */
    const char *log_format;   /* --log-format, or NULL: detected */
    const char *diff[2];      /* --diff OLD NEW, or NULLs */
    const char *filter;       /* --filter NAME, or NULL: main */
    int json;
    int explain;
    const char *remote_addr;  /* --remote-addr, or NULL */
    const char *rdns;         /* --rdns, or NULL */
    const char *ipdb[4];      /* --ipdb FILE... */
    size_t nipdb;
    clf_ipdb *ipdbs[4];       /* opened by load_rules, closed by main */
    const char *keys;         /* --keys, or NULL */
    const char *time;         /* --time, or NULL */
    int64_t time_value;       /* --time, parsed */
    const char *scheme;       /* --scheme, or NULL */
    const char *state_arg;    /* --state-bytes, or NULL */
    uint64_t state_bytes;     /* --state-bytes, parsed */
    clf_store *stores[2];     /* one per rules file loaded (--diff: two) */
    size_t nstores;
    char *trusted;            /* --trust-proxy values joined with ',' (malloc'd) */
    size_t trusted_len;
    rewrite_opts rewrite;     /* --rewrite and its options (rewrite.set NULL: none) */
    const char *first_other;  /* the first option --rewrite cannot go with */
    const char *first_rw;     /* the first option only --rewrite takes */
    size_t extra_count;       /* positional words after RULES outside --request */
    const char *extra;        /* the first of them */
} options;

typedef enum parse_result { ARGS_RUN, ARGS_HELP, ARGS_VERSION, ARGS_BAD } parse_result;

static int is_stdin(const char *path)
{
    return strcmp(path, "-") == 0;
}

/* Handles one option argument; *i may advance past its value. */
static parse_result parse_option(int argc, char **argv, int *i, options *o,
                                 int *in_request)
{
    const char *a = argv[*i];
    /* Options of classifying, which --rewrite does not take. */
    static const char *const classify_only[] = {"--request", "--ua-file", "--filter", "--json",
                                                "--explain", "--remote-addr", "--trust-proxy",
                                                "--rdns", "--ipdb", "--keys", "--time", "--scheme", "--state-bytes",
                                                "--log", "--log-format", "--diff"};
    for (size_t k = 0; k < sizeof classify_only / sizeof *classify_only; k++)
        if (strcmp(a, classify_only[k]) == 0 && !o->first_other) o->first_other = a;

    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
        return ARGS_HELP;
    if (strcmp(a, "--version") == 0)
        return ARGS_VERSION;
    if (strcmp(a, "--json") == 0) {
        o->json = 1;
    } else if (strcmp(a, "--explain") == 0) {
        o->explain = 1;
    } else if (strcmp(a, "--request") == 0) {
        o->request_given = 1;
        *in_request = 1;
    } else if (strcmp(a, "--remote-addr") == 0 || strcmp(a, "--trust-proxy") == 0) {
        if (*i + 1 >= argc) {
            cli_usage_error(PROG, "option '%s' needs %s", a,
                        a[2] == 'r' ? "an address" : "addresses or prefixes");
            return ARGS_BAD;
        }
        const char *v = argv[++*i];
        if (a[2] == 'r') {
            if (o->remote_addr != NULL) {
                cli_usage_error(PROG, "option '%s' given more than once", a);
                return ARGS_BAD;
            }
            o->remote_addr = v;
        } else {
            size_t n = strlen(v);
            char *t = realloc(o->trusted, o->trusted_len + n + 2);
            if (t == NULL) {
                cli_usage_error(PROG, "out of memory");
                return ARGS_BAD;
            }
            memcpy(t + o->trusted_len, v, n);
            t[o->trusted_len + n] = ',';
            o->trusted = t;
            o->trusted_len += n + 1;
        }
        *in_request = 0;
    } else if (strcmp(a, "--stats") == 0) {
        o->rewrite.stats = 1;
        if (!o->first_rw) o->first_rw = a;
    } else if (strcmp(a, "--rewrite") == 0 || strcmp(a, "--chunk-size") == 0 ||
               strcmp(a, "--chunk-lengths") == 0 || strcmp(a, "--output") == 0) {
        static const char *const what[] = {"a rewrite set name", "a number of bytes",
                                           "a file", "a file"};
        int w = a[2] == 'r' ? 0 : a[2] == 'o' ? 3 : a[8] == 's' ? 1 : 2;
        const char **slot[] = {&o->rewrite.set, NULL, &o->rewrite.chunk_lengths,
                               &o->rewrite.output};
        if (*i + 1 >= argc) {
            cli_usage_error(PROG, "option '%s' needs %s", a, what[w]);
            return ARGS_BAD;
        }
        const char *v = argv[++*i];
        if (w == 1 ? o->rewrite.chunk_size != 0 : *slot[w] != NULL) {
            cli_usage_error(PROG, "option '%s' given more than once", a);
            return ARGS_BAD;
        }
        if (w == 1) {
            if (rewrite_parse_length(v, strlen(v), 0, &o->rewrite.chunk_size) != 0) {
                cli_usage_error(PROG, "--chunk-size: '%s' is not a number of bytes from 1 to %zu",
                                v, REWRITE_CHUNK_MAX);
                return ARGS_BAD;
            }
        } else {
            *slot[w] = v;
        }
        if (w != 0 && !o->first_rw) o->first_rw = a;
        *in_request = 0;
    } else if (strcmp(a, "--ipdb") == 0) {
        if (*i + 1 >= argc) {
            cli_usage_error(PROG, "option '%s' needs a file", a);
            return ARGS_BAD;
        }
        if (o->nipdb == sizeof o->ipdb / sizeof o->ipdb[0]) {
            cli_usage_error(PROG, "option '%s' given more than 4 times", a);
            return ARGS_BAD;
        }
        o->ipdb[o->nipdb++] = argv[++*i];
    } else if (strcmp(a, "--keys") == 0 || strcmp(a, "--time") == 0 ||
               strcmp(a, "--scheme") == 0) {
        const char **slot = a[2] == 'k' ? &o->keys : a[2] == 't' ? &o->time : &o->scheme;
        if (*i + 1 >= argc) {
            cli_usage_error(PROG, "option '%s' needs %s", a,
                            a[2] == 'k' ? "a file or directory"
                            : a[2] == 't' ? "a number of seconds" : "a scheme");
            return ARGS_BAD;
        }
        if (*slot != NULL) {
            cli_usage_error(PROG, "option '%s' given more than once", a);
            return ARGS_BAD;
        }
        const char *v = argv[++*i];
        if (a[2] == 't') {
            char *end;
            errno = 0;
            long long t = strtoll(v, &end, 10);
            if (!*v || *end || errno) {
                cli_usage_error(PROG, "--time: '%s' is not a whole number of seconds since "
                                "the epoch", v);
                return ARGS_BAD;
            }
            o->time_value = t;
        } else if (a[2] == 's' && strcmp(v, "https") != 0 && strcmp(v, "http") != 0) {
            cli_usage_error(PROG, "--scheme: '%s' is neither https nor http", v);
            return ARGS_BAD;
        }
        *slot = v;
        *in_request = 0;
    } else if (strcmp(a, "--state-bytes") == 0) {
        if (*i + 1 >= argc) {
            cli_usage_error(PROG, "option '%s' needs a size", a);
            return ARGS_BAD;
        }
        if (o->state_arg != NULL) {
            cli_usage_error(PROG, "option '%s' given more than once", a);
            return ARGS_BAD;
        }
        o->state_arg = argv[++*i];
        if (cm_parse_bytes(o->state_arg, &o->state_bytes) != 0 ||
            (o->state_bytes != 0 && o->state_bytes < CLF_STORE_MIN_BYTES)) {
            cli_usage_error(PROG, "--state-bytes: '%s' is not 0 or a size of at least 64K",
                            o->state_arg);
            return ARGS_BAD;
        }
        *in_request = 0;
    } else if (strcmp(a, "--diff") == 0) {
        if (*i + 2 >= argc) {
            cli_usage_error(PROG, "option '--diff' needs two rules files, OLD.bin NEW.bin");
            return ARGS_BAD;
        }
        if (o->diff[0] != NULL) {
            cli_usage_error(PROG, "option '%s' given more than once", a);
            return ARGS_BAD;
        }
        o->diff[0] = argv[++*i];
        o->diff[1] = argv[++*i];
        *in_request = 0;
    } else if (strcmp(a, "--ua-file") == 0 || strcmp(a, "--filter") == 0 ||
               strcmp(a, "--rdns") == 0 || strcmp(a, "--log") == 0 ||
               strcmp(a, "--log-format") == 0) {
        const char **slot = a[2] == 'u' ? &o->ua_file : a[2] == 'f' ? &o->filter
                            : a[2] == 'r' ? &o->rdns : a[5] == '-' ? &o->log_format : &o->log;
        if (*i + 1 >= argc) {
            cli_usage_error(PROG, "option '%s' needs a %s", a,
                            a[2] == 'u' || a[2] == 'l' ? (a[5] == '-' ? "format" : "file name")
                            : a[2] == 'f' ? "filter name" : "host name");
            return ARGS_BAD;
        }
        if (*slot != NULL) {
            cli_usage_error(PROG, "option '%s' given more than once", a);
            return ARGS_BAD;
        }
        *slot = argv[++*i];
        *in_request = 0;
    } else {
        cli_usage_error(PROG, "unknown option '%s'", a);
        return ARGS_BAD;
    }
    return ARGS_RUN;
}

/* The combination, for --rewrite: one input at most, and no option of
 * classifying. */
static parse_result check_rewrite_args(options *o)
{
    rewrite_opts *r = &o->rewrite;
    r->input = o->extra;
    size_t stdin_uses = is_stdin(o->rules) + (r->input == NULL || is_stdin(r->input)) +
                        (r->chunk_lengths != NULL && is_stdin(r->chunk_lengths));
    if (o->first_other != NULL)
        cli_usage_error(PROG, "--rewrite cannot be combined with %s", o->first_other);
    else if (o->extra_count > 1)
        cli_usage_error(PROG, "--rewrite takes one input FILE (more were given, from '%s')",
                        o->extra);
    else if (r->chunk_size != 0 && r->chunk_lengths != NULL)
        cli_usage_error(PROG, "--chunk-size and --chunk-lengths cannot be combined");
    else if (stdin_uses > 1)
        cli_usage_error(PROG, "standard input ('-', or no input FILE with --rewrite) can be "
                        "read only once");
    else
        return ARGS_RUN;
    return ARGS_BAD;
}

/* --log and --diff: a log, and no other input. */
static parse_result check_log_args(options *o, size_t stdin_uses)
{
    if (o->diff[0] != NULL && o->rules != NULL)
        cli_usage_error(PROG, "--diff takes the two rules files: unexpected '%s'", o->rules);
    else if (o->diff[0] == NULL && o->rules == NULL)
        cli_usage_error(PROG, "missing the RULES file");
    else if (o->log == NULL && !(o->diff[0] != NULL && o->request_given && o->log_format == NULL))
        cli_usage_error(PROG, o->diff[0] == NULL ? "--log-format goes with --log"
                              : o->log_format ? "--log-format goes with --log"
                                              : "--diff needs --log FILE or --request FILE...");
    else if ((o->log != NULL && o->request_given) || o->ua_file != NULL)
        cli_usage_error(PROG, "%s cannot be combined with %s", o->log ? "--log" : "--diff",
                        o->request_given ? "--request" : "--ua-file");
    else if (o->request_given && o->request_count == 0)
        cli_usage_error(PROG, "option '--request' needs at least one file");
    else if (o->explain)
        cli_usage_error(PROG, "--explain goes with --request or --ua-file (--diff explains "
                        "an example of each change)");
    else if (o->first_rw != NULL || o->rewrite.set != NULL)
        cli_usage_error(PROG, "%s cannot be combined with %s", o->log ? "--log" : "--diff",
                        o->rewrite.set ? "--rewrite" : o->first_rw);
    else if (o->extra != NULL)
        cli_usage_error(PROG, "unexpected argument '%s'", o->extra);
    else if (stdin_uses > 1)
        cli_usage_error(PROG, "standard input ('-') can be read only once");
    else
        return ARGS_RUN;
    return ARGS_BAD;
}

/* Checks the combination once every argument has been read. */
static parse_result check_args(options *o)
{
    size_t stdin_uses = o->rules != NULL && is_stdin(o->rules);
    stdin_uses += o->ua_file != NULL && is_stdin(o->ua_file);
    for (size_t k = 0; k < o->request_count; k++)
        stdin_uses += (size_t)is_stdin(o->requests[k]);
    stdin_uses += o->log != NULL && is_stdin(o->log);
    for (size_t k = 0; k < 2; k++)
        stdin_uses += o->diff[k] != NULL && is_stdin(o->diff[k]);

    if (o->log != NULL || o->log_format != NULL || o->diff[0] != NULL)
        return check_log_args(o, stdin_uses);
    if (o->rules == NULL)
        cli_usage_error(PROG, "missing the RULES file");
    else if (o->rewrite.set != NULL)
        return check_rewrite_args(o);
    else if (o->first_rw != NULL)
        cli_usage_error(PROG, "option '%s' goes with --rewrite", o->first_rw);
    else if (o->extra != NULL)
        cli_usage_error(PROG, "unexpected argument '%s' (request files follow --request)",
                        o->extra);
    else if (o->request_given && o->ua_file != NULL)
        cli_usage_error(PROG, "--request and --ua-file cannot be combined");
    else if (o->request_given && o->request_count == 0)
        cli_usage_error(PROG, "option '--request' needs at least one file");
    else if (!o->request_given && o->ua_file == NULL)
        cli_usage_error(PROG, "nothing to classify: give --request, --ua-file or --log");
    else if (stdin_uses > 1)
        cli_usage_error(PROG, "standard input ('-') can be read only once");
    else
        return ARGS_RUN;
    return ARGS_BAD;
}

/* Words starting with '-' are options, except "-" itself (standard input)
 * and anything after "--". Other words are the rules file, or request
 * files once --request has been seen. */
static parse_result parse_args(int argc, char **argv, options *o)
{
    int in_request = 0, options_done = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = 1;
        } else if (!options_done && a[0] == '-' && a[1] != '\0') {
            parse_result r = parse_option(argc, argv, &i, o, &in_request);
            if (r != ARGS_RUN)
                return r;
        } else if (in_request) {
            o->requests[o->request_count++] = a;
        } else if (o->rules == NULL) {
            o->rules = a;
        } else {
            /* The input of --rewrite, or a misplaced request file: told
             * apart once every option is known (check_args). */
            if (o->extra_count++ == 0) o->extra = a;
        }
    }
    return check_args(o);
}

static void print_version(void)
{
    printf(PROG " %s\n", CLF_VERSION_STRING);
    printf("libclassify %s, rules format version %lu, %s %s\n", clf_version_string(),
           (unsigned long)clf_format_version(), clf_matcher_name(), clf_matcher_version());
}

/* ------------------------------------------------------------------------ */
/* Reading files. */

static const char *display_name(const char *path)
{
    return is_stdin(path) ? STDIN_NAME : path;
}

/* Largest rules file (the library's own limit, CLF_LIMIT_FILE_BYTES,
 * which classify-run does not change) and request file read (a request's
 * header section is far smaller, and its body is never looked at), and
 * longest --ua-file line. Without them a FIFO or /dev/zero would be read
 * until memory runs out. */
#define MAX_RULES_BYTES ((size_t)CLF_DEFAULT_FILE_BYTES)
#define MAX_REQUEST_BYTES ((size_t)16 << 20)
#define MAX_UA_LINE ((size_t)1 << 20)
/* A --ua-file line over MAX_UA_LINE is skipped; one this long ends the
 * file, which is then no list of User-Agents (/dev/zero, a disk image). */
#define MAX_UA_SKIP ((size_t)64 << 20)

/* Reads the whole file at `path` ("-": standard input). On failure prints
 * "classify-run: FILE: error: ..." and returns -1. */
static int read_file(const char *path, size_t max, char **out, size_t *len)
{
    int e;
    switch (cm_read_file(path, max, CM_READ_STDIN, out, len, &e, NULL)) {
    case CM_READ_OK: return 0;
    case CM_READ_OPEN:
        fprintf(stderr, PROG ": %s: error: cannot open: %s\n", path, strerror(e));
        return -1;
    case CM_READ_TOO_BIG:
        fprintf(stderr, PROG ": %s: error: larger than %zu MiB\n", display_name(path), max >> 20);
        return -1;
    case CM_READ_NOMEM:
        fprintf(stderr, PROG ": %s: error: cannot read: %s\n", display_name(path), strerror(ENOMEM));
        return -1;
    default:
        fprintf(stderr, PROG ": %s: error: cannot read: %s\n", display_name(path), strerror(e));
        return -1;
    }
}

/* ------------------------------------------------------------------------ */
/* Output. */

static const char *verdict_word(const clf_verdict *v)
{
    return v->verdict == CLF_ACCEPT ? "accept" : "reject";
}

/* "accept" / "reject ai-bot" */
static void put_verdict_text(FILE *out, const clf_verdict *v)
{
    fputs(verdict_word(v), out);
    if (v->reason != NULL) {
        putc(' ', out);
        put_text(out, v->reason, v->reason_len);
    }
}

/* "verdict": ..., "reason": ... (the tail of an object) */
static void put_verdict_json(FILE *out, const clf_verdict *v)
{
    fprintf(out, "\"verdict\": \"%s\", \"reason\": ", verdict_word(v));
    if (v->reason != NULL)
        put_json_string(out, v->reason, v->reason_len);
    else
        fputs("null", out);
}

/* ------------------------------------------------------------------------ */
/* Classifying. */

typedef struct runner {
    clf_ctx *ctx;
    FILE *out;
    int json;
    int prefix; /* text output names the file: several request files */
    explain_log *explain; /* --explain: the steps of the current request */
    const char *remote_addr; /* --remote-addr, set on every request */
    const char *rdns;        /* --rdns, set on every request */
    uint32_t filter;         /* the entry filter that decides (--filter) */
    const options *o;        /* --time and --scheme, set on every request */
} runner;

/* Hands `req` to the context and evaluates (classify_req.c), with
 * --remote-addr, --rdns, --time and the scheme: an absolute-form target's
 * own, else --scheme. On failure writes a message to err and returns -1. */
static int classify(const runner *r, const http_request *req, clf_verdict *v, char *err,
                    size_t errlen)
{
    const char *t = req->target.ptr, *scheme = r->o->scheme;
    size_t tn = req->target.len, sn = scheme ? strlen(scheme) : 0;
    if (tn >= 8 && strncasecmp(t, "https://", 8) == 0) scheme = t, sn = 5;
    else if (tn >= 7 && strncasecmp(t, "http://", 7) == 0) scheme = t, sn = 4;
    cli_request c = {req->method, req->path, req->query, req->headers, req->header_count,
                     r->remote_addr, r->remote_addr ? strlen(r->remote_addr) : 0, r->rdns,
                     r->o->time != NULL, r->o->time_value, scheme, sn};
    return cli_classify(r->ctx, r->filter, &c, r->explain, v, err, errlen);
}

static void report_request(const runner *r, const char *path,
                           const clf_verdict *v)
{
    if (r->json) {
        fputs("{\"file\": ", r->out);
        put_json_cstr(r->out, path);
        fputs(", ", r->out);
        put_verdict_json(r->out, v);
        if (r->explain != NULL)
            explain_log_print_json(r->explain, r->out);
        fputs("}\n", r->out);
        return;
    }
    if (r->prefix)
        fprintf(r->out, "%s: ", display_name(path));
    put_verdict_text(r->out, v);
    putc('\n', r->out);
    if (r->explain != NULL)
        explain_log_print_text(r->explain, r->out);
}

/* Classifies one request file. Returns 0, or -1 after printing an error. */
static int run_request_file(const runner *r, const char *path)
{
    char *data = NULL;
    size_t len = 0;
    if (read_file(path, MAX_REQUEST_BYTES, &data, &len) != 0)
        return -1;

    http_request req;
    char err[CLF_ERRMSG_SIZE];
    clf_verdict v;
    int status = 0;
    if (http_request_parse(&req, data, len, err, sizeof err) != HTTP_PARSE_OK ||
        classify(r, &req, &v, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s: error: %s\n", display_name(path), err);
        status = -1;
    } else {
        report_request(r, path, &v);
    }
    http_request_free(&req);
    free(data);
    return status;
}

static void report_ua(const runner *r, size_t lineno, const char *ua,
                      size_t len, const clf_verdict *v)
{
    if (r->json) {
        fprintf(r->out, "{\"line\": %zu, \"user_agent\": ", lineno);
        if (len > 0)
            put_json_string(r->out, ua, len);
        else
            fputs("null", r->out);
        fputs(", ", r->out);
        put_verdict_json(r->out, v);
        if (r->explain != NULL)
            explain_log_print_json(r->explain, r->out);
        fputs("}\n", r->out);
        return;
    }
    put_verdict_text(r->out, v);
    putc('\t', r->out);
    put_text(r->out, ua, len);
    putc('\n', r->out);
    if (r->explain != NULL)
        explain_log_print_text(r->explain, r->out);
}

/* One line of a --ua-file: "GET /" with that User-Agent, or with no
 * headers at all when the line is empty. */
static int run_ua_line(const runner *r, const char *name, size_t lineno,
                       const char *ua, size_t len)
{
    static const char ua_name[] = "User-Agent";
    http_header h = {{ua_name, sizeof ua_name - 1}, {ua, len}};
    http_request req;
    clf_verdict v;
    char err[CLF_ERRMSG_SIZE];

    memset(&req, 0, sizeof req);
    req.method.ptr = "GET";
    req.method.len = 3;
    req.target.ptr = req.path.ptr = "/";
    req.target.len = req.path.len = 1;
    req.query.ptr = "";
    req.headers = &h;
    req.header_count = len > 0;
    if (classify(r, &req, &v, err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s:%zu: error: %s\n", name, lineno, err);
        return -1;
    }
    report_ua(r, lineno, ua, len, &v);
    return 0;
}

/* Streams the file line by line, so a pipe gets answers as it goes (when
 * reading standard input the output is flushed after each line). */
static int run_ua_file(const runner *r, const char *path)
{
    FILE *f = is_stdin(path) ? stdin : fopen(path, "rb");
    const char *name = display_name(path);
    if (f == NULL) {
        fprintf(stderr, PROG ": %s: error: cannot open: %s\n", path,
                strerror(errno));
        return -1;
    }

    char *line = malloc(MAX_UA_LINE + 2);
    size_t lineno = 0;
    int status = 0;
    if (!line) {
        fprintf(stderr, PROG ": %s: error: out of memory\n", name);
        if (f != stdin)
            fclose(f);
        return -1;
    }
    for (;;) {
        errno = 0;
        /* fgets with a bound: a line longer than MAX_UA_LINE is reported
         * and skipped, not an unbounded allocation (think /dev/zero).
         * Embedded NULs are kept: the length comes from the newline, not
         * from strlen. One byte more than the limit is kept, for a "\r"
         * ending a line of exactly MAX_UA_LINE bytes. */
        size_t n = 0, seen = 0;
        int c = EOF;
        while ((c = getc(f)) != EOF && c != '\n') {
            if (n <= MAX_UA_LINE)
                line[n++] = (char)c;
            if (++seen > MAX_UA_SKIP)
                break;
        }
        if (seen == 0 && c == EOF)
            break;
        lineno++;
        size_t len = n;
        if (len > 0 && line[len - 1] == '\r' && seen == n)
            len--;
        if (seen > MAX_UA_SKIP) {
            fprintf(stderr, PROG ": %s:%zu: error: line is longer than %zu MiB: "
                    "not a list of User-Agents, the rest of the file is not read\n",
                    name, lineno, MAX_UA_SKIP >> 20);
            status = -1;
            break;
        }
        if (seen > n || len > MAX_UA_LINE) {
            fprintf(stderr, PROG ": %s:%zu: error: line is longer than %zu bytes: skipped\n",
                    name, lineno, MAX_UA_LINE);
            status = -1;
        } else if (run_ua_line(r, name, lineno, line, len) != 0) {
            status = -1;
        }
        if (f == stdin)
            fflush(r->out);
        if (ferror(r->out)) /* main() reports it; stop reading */
            break;
        if (c == EOF)
            break;
    }
    if (status == 0 && !ferror(r->out) && ferror(f)) {
        fprintf(stderr, PROG ": %s: error: cannot read after line %zu: %s\n",
                name, lineno, strerror(errno ? errno : EIO));
        status = -1;
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return status;
}

/* ------------------------------------------------------------------------ */

/* Loads the rules file and makes the context. Prints the error (prefixed
 * with the file name) and returns -1 on failure. */
static int load_rules(const char *path, options *o, clf_program **prog, clf_ctx **ctx)
{
    char *data = NULL;
    size_t len = 0;
    char err[CLF_ERRMSG_SIZE] = "";
    clf_options *lo = NULL;

    *prog = NULL;
    *ctx = NULL;
    int rc = clf_options_new(&lo);
    clf_keyring *ring = NULL;
    if (rc == CLF_OK && o->keys != NULL) {
        /* The program copies the keys; the ring goes once it is loaded. */
        rc = clf_keyring_new(&ring);
        if (rc == CLF_OK && (rc = clf_keyring_load(ring, o->keys, err, sizeof err)) != CLF_OK) {
            fprintf(stderr, PROG ": --keys: error: %s\n", err);
            clf_keyring_free(ring);
            clf_options_free(lo);
            return -1;
        }
        if (rc == CLF_OK) clf_options_set_keyring(lo, ring);
    }
    if (rc == CLF_OK && o->trusted != NULL &&
        clf_options_set_trusted_proxies(lo, o->trusted, o->trusted_len, err, sizeof err) != CLF_OK) {
        fprintf(stderr, PROG ": --trust-proxy: error: %s\n", err);
        clf_options_free(lo);
        clf_keyring_free(ring);
        return -1;
    }
    for (size_t k = 0; rc == CLF_OK && k < o->nipdb; k++) {
        /* --diff loads two rules files with the same databases */
        if (o->ipdbs[k] == NULL && clf_ipdb_open(o->ipdb[k], &o->ipdbs[k], err, sizeof err) != CLF_OK) {
            fprintf(stderr, PROG ": --ipdb: error: %s\n", err);
            clf_options_free(lo);
            return -1;
        }
        clf_options_add_ipdb(lo, o->ipdbs[k]);
    }
    if (rc != CLF_OK || read_file(path, MAX_RULES_BYTES, &data, &len) != 0) {
        if (rc != CLF_OK) fprintf(stderr, PROG ": error: %s\n", clf_strerror(rc));
        clf_options_free(lo);
        clf_keyring_free(ring);
        return -1;
    }
    rc = clf_program_load(data, len, lo, prog, err, sizeof err);
    clf_options_free(lo);
    clf_keyring_free(ring);
    free(data); /* the program keeps its own copy */
    if (rc == CLF_OK)
        rc = clf_ctx_new(*prog, ctx, err, sizeof err);
    /* A store of its own for each rules file: --diff classifies every
     * request with both, and one store would count it twice. */
    uint64_t sb = o->state_arg ? o->state_bytes : CLF_DEFAULT_STORE_BYTES;
    if (rc == CLF_OK && sb && clf_program_uses_state(*prog) && o->nstores < 2 &&
        (rc = clf_store_new(sb, NULL, &o->stores[o->nstores], err, sizeof err)) == CLF_OK)
        clf_ctx_set_store(*ctx, o->stores[o->nstores++]);
    if (rc != CLF_OK) {
        fprintf(stderr, PROG ": %s: error: %s\n", display_name(path),
                err[0] != '\0' ? err : clf_strerror(rc));
        clf_program_free(*prog);
        *prog = NULL;
        return -1;
    }
    return 0;
}

static int run(const options *o, clf_ctx *ctx, uint32_t filter)
{
    explain_log log;
    runner r = {ctx, stdout, o->json, o->request_count > 1, o->explain ? &log : NULL,
                o->remote_addr, o->rdns, filter, o};
    int status = EXIT_CLASSIFIED;

    explain_log_init(&log);
    if (o->ua_file != NULL) {
        if (run_ua_file(&r, o->ua_file) != 0)
            status = EXIT_BAD_INPUT;
    } else {
        for (size_t k = 0; k < o->request_count && !ferror(r.out); k++)
            if (run_request_file(&r, o->requests[k]) != 0)
                status = EXIT_BAD_INPUT;
    }
    explain_log_free(&log);
    return status;
}

/* Loads a rules file for classifying: the context, the peer and rDNS
 * answer checked on it, and the entry filter. Returns 0, or an exit
 * status after printing the error (nothing left to free). */
static int open_rules(const char *path, options *o, clf_program **prog, clf_ctx **ctx,
                      uint32_t *filter)
{
    if (load_rules(path, o, prog, ctx) != 0)
        return EXIT_USAGE;
    int status = EXIT_CLASSIFIED;
    char err[CLF_ERRMSG_SIZE];
    const char *name = o->filter != NULL ? o->filter : "main";
    if (o->remote_addr != NULL &&
        clf_ctx_set_peer(*ctx, o->remote_addr, strlen(o->remote_addr)) != CLF_OK) {
        cli_usage_error(PROG, "--remote-addr: '%s' is not an IPv4 or IPv6 address",
                        o->remote_addr);
        status = EXIT_USAGE;
    } else if (o->rdns != NULL && *o->rdns &&
               clf_ctx_set_rdns(*ctx, o->rdns, strlen(o->rdns)) != CLF_OK) {
        cli_usage_error(PROG, "--rdns: %s", clf_ctx_errmsg(*ctx));
        status = EXIT_USAGE;
    } else if (clf_program_find_filter(*prog, name, strlen(name), filter, err, sizeof err) !=
               CLF_OK) {
        fprintf(stderr, PROG ": %s: error: %s%s\n", display_name(path),
                o->filter != NULL ? "--filter: " : "", err);
        status = EXIT_USAGE;
    }
    if (status != EXIT_CLASSIFIED) {
        clf_ctx_free(*ctx);
        clf_program_free(*prog);
    }
    return status;
}

/* --log and --diff (replay.c, diff.c). */
static int run_log(options *o)
{
    replay_opts ro = {o->log, o->requests, o->request_count, o->log_format, o->json,
                      o->remote_addr, o->rdns};
    clf_program *prog[2] = {NULL, NULL};
    replay_rules r[2];
    size_t n = o->diff[0] != NULL ? 2 : 1;
    int status = EXIT_CLASSIFIED;
    memset(r, 0, sizeof r);
    for (size_t k = 0; k < n && status == EXIT_CLASSIFIED; k++) {
        r[k].path = n == 2 ? o->diff[k] : o->rules;
        status = open_rules(r[k].path, o, &prog[k], &r[k].ctx, &r[k].filter);
        if (status != EXIT_CLASSIFIED)
            prog[k] = NULL;
        r[k].path = display_name(r[k].path);
    }
    if (status == EXIT_CLASSIFIED)
        status = n == 2 ? diff_run(&r[0], &r[1], &ro) : replay_run(&r[0], &ro);
    for (size_t k = 0; k < n; k++) {
        if (prog[k] == NULL)
            continue;
        clf_ctx_free(r[k].ctx);
        clf_program_free(prog[k]);
    }
    return status;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    o.requests = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *o.requests);
    if (o.requests == NULL) {
        fprintf(stderr, PROG ": error: out of memory\n");
        return EXIT_USAGE;
    }

    int status;
    switch (parse_args(argc, argv, &o)) {
    case ARGS_HELP:
        fputs(usage_text, stdout);
        fputs(usage_text2, stdout);
        status = EXIT_CLASSIFIED;
        break;
    case ARGS_VERSION:
        print_version();
        status = EXIT_CLASSIFIED;
        break;
    case ARGS_BAD:
        status = EXIT_USAGE;
        break;
    default: {
        clf_program *prog;
        clf_ctx *ctx;
        uint32_t filter;
        if (o.log != NULL || o.diff[0] != NULL) {
            status = run_log(&o);
            break;
        }
        if (o.rewrite.set != NULL) {
            if (load_rules(o.rules, &o, &prog, &ctx) != 0) {
                status = EXIT_USAGE;
                break;
            }
            /* rewrite_run reports its own output errors */
            status = rewrite_run(prog, display_name(o.rules), &o.rewrite);
            clf_ctx_free(ctx);
            clf_program_free(prog);
            free(o.requests);
            free(o.trusted);
            return status;
        }
        status = open_rules(o.rules, &o, &prog, &ctx, &filter);
        if (status != EXIT_CLASSIFIED)
            break;
        status = run(&o, ctx, filter);
        clf_ctx_free(ctx);
        clf_program_free(prog);
        break;
    }
    }
    free(o.requests);
    free(o.trusted);
    for (size_t k = 0; k < o.nipdb; k++) clf_ipdb_close(o.ipdbs[k]);
    for (size_t k = 0; k < o.nstores; k++) clf_store_free(o.stores[k]);

    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        /* errno is lost when an earlier flush failed */
        fprintf(stderr, PROG ": error: cannot write the output%s%s\n",
                errno ? ": " : "", errno ? strerror(errno) : "");
        status = EXIT_USAGE;
    }
    return status;
}
