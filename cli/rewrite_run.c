/* rewrite_run.c: see rewrite_run.h. */
#include "rewrite_run.h"

#include "atomic_write.h"
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG "classify-run"
#define STDIN_NAME "(standard input)"

/* A --chunk-lengths file is a test's exact split: a few million lines at
 * most. */
#define MAX_LENGTHS_BYTES ((size_t)64 << 20)

int rewrite_parse_length(const char *s, size_t n, int zero_ok, size_t *out)
{
    size_t v = 0;
    if (n == 0 || n > 10) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    if (v > REWRITE_CHUNK_MAX || (v == 0 && !zero_ok)) return -1;
    *out = v;
    return 0;
}

/* The chunk lengths of a --chunk-lengths file: one decimal per line (a
 * final newline optional, "\r\n" accepted). Returns 0, or -1 after
 * printing an error naming the line. */
static int read_lengths(const char *path, size_t **out, size_t *count)
{
    char *data = NULL;
    size_t len = 0;
    int e = 0;
    *out = NULL;
    *count = 0;
    cm_read_status rs = cm_read_file(path, MAX_LENGTHS_BYTES, CM_READ_STDIN, &data, &len, &e, NULL);
    if (rs != CM_READ_OK) {
        const char *name = strcmp(path, "-") == 0 ? STDIN_NAME : path;
        if (rs == CM_READ_TOO_BIG)
            fprintf(stderr, PROG ": %s: error: larger than %zu MiB\n", name,
                    MAX_LENGTHS_BYTES >> 20);
        else
            fprintf(stderr, PROG ": %s: error: cannot %s: %s\n", name,
                    rs == CM_READ_OPEN ? "open" : "read",
                    strerror(rs == CM_READ_NOMEM ? ENOMEM : e));
        return -1;
    }
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += data[i] == '\n';
    size_t *v = malloc((lines + 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, PROG ": %s: error: out of memory\n", path);
        free(data);
        return -1;
    }
    size_t n = 0, lineno = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(data + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - data) : len, l = end - at;
        lineno++;
        if (l > 0 && data[at + l - 1] == '\r') l--;
        if (rewrite_parse_length(data + at, l, 1, &v[n]) != 0) {
            fprintf(stderr, PROG ": %s:%zu: error: not a chunk length (a decimal number of "
                    "bytes from 0 to %zu)\n", path, lineno, REWRITE_CHUNK_MAX);
            free(v);
            free(data);
            return -1;
        }
        n++;
        at = end + 1;
    }
    free(data);
    *out = v;
    *count = n;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Output: standard output, or an --output file replaced atomically. */

typedef struct sink_state {
    FILE *fp;
    int err; /* errno of the first failed write, or -1 without one */
    int failed;
} sink_state;

static int sink_write(void *ud, const char *p, size_t n)
{
    sink_state *s = ud;
    errno = 0;
    if (fwrite(p, 1, n, s->fp) == n) return 0;
    s->failed = 1;
    s->err = errno ? errno : -1;
    return 1;
}

/* Where standard output started, when it is a regular file: a failure
 * cuts it back there, so that a redirected run leaves no partial body.
 * -1 when standard output is a pipe, a terminal or a device. */
static off_t stdout_start(void)
{
    struct stat st;
    if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    int fl = fcntl(STDOUT_FILENO, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND)) return st.st_size;
    return lseek(STDOUT_FILENO, 0, SEEK_CUR);
}

static void stdout_cut_back(off_t start)
{
    fflush(stdout);
    if (start < 0) return;
    /* Best effort: the run failed anyway, and says so. */
    if (ftruncate(STDOUT_FILENO, start) == 0) (void)lseek(STDOUT_FILENO, start, SEEK_SET);
}

/* ------------------------------------------------------------------------ */

typedef struct feeder {
    clf_rewriter *rw;
    clf_rewrite_scratch *sc;
    FILE *in;
    const char *in_name;
    char *buf;
    size_t cap;
    int eof;
} feeder;

/* Reads up to n bytes into f->buf (grown as needed); returns the count,
 * or (size_t)-1 after printing a read error. */
static size_t read_chunk(feeder *f, size_t n)
{
    if (n > f->cap) {
        char *b = realloc(f->buf, n);
        if (!b) {
            fprintf(stderr, PROG ": %s: error: out of memory for a %zu-byte chunk\n",
                    f->in_name, n);
            return (size_t)-1;
        }
        f->buf = b;
        f->cap = n;
    }
    size_t got = f->eof || n == 0 ? 0 : fread(f->buf, 1, n, f->in);
    if (got < n && !f->eof) {
        if (ferror(f->in)) {
            fprintf(stderr, PROG ": %s: error: cannot read: %s\n", f->in_name,
                    strerror(errno ? errno : EIO));
            return (size_t)-1;
        }
        f->eof = 1;
    }
    return got;
}

/* Whether the input has no more bytes (looks one byte ahead). */
static int at_end(feeder *f)
{
    if (f->eof) return 1;
    int c = getc(f->in);
    if (c == EOF) {
        if (ferror(f->in)) return 0; /* the next read reports it */
        f->eof = 1;
        return 1;
    }
    ungetc(c, f->in);
    return 0;
}

/* Feeds the chunks: the listed lengths first, then the rest of the input
 * in chunk_size pieces. The last chunk goes with the end of the body
 * (clf_rewriter_feed_final). Returns 0, 1 (input or rewrite failure) or
 * 2 (output failure), after printing the error. */
static int feed_all(feeder *f, const size_t *lengths, size_t nlengths, size_t chunk_size,
                    const sink_state *out)
{
    for (size_t k = 0;; k++) {
        size_t want = k < nlengths ? lengths[k] : chunk_size;
        if (k >= nlengths && at_end(f)) { /* nothing left after the list */
            clf_status rc = clf_rewriter_finish(f->rw, f->sc);
            if (rc == CLF_OK) return 0;
            goto failed;
        }
        size_t got = read_chunk(f, want);
        if (got == (size_t)-1) return 1;
        int last = k + 1 >= nlengths && at_end(f);
        clf_status rc = last ? clf_rewriter_feed_final(f->rw, f->sc, f->buf, got)
                             : clf_rewriter_feed(f->rw, f->sc, f->buf, got);
        if (rc != CLF_OK) goto failed;
        if (last) return 0;
        continue;
    failed:
        if (out->failed) return 2;
        fprintf(stderr, PROG ": %s: error: cannot rewrite: %s\n", f->in_name,
                clf_rewriter_errmsg(f->rw));
        return 1;
    }
}

static void print_stats(const clf_rewriter *rw, const char *set)
{
    clf_rewrite_stats s;
    clf_rewriter_stats(rw, &s);
    fprintf(stderr,
            PROG ": rewrite %s: %llu bytes in, %llu bytes out, %llu replacements; held at most "
                 "%llu bytes (hold-back %llu); rewriter %zu bytes%s",
            set, (unsigned long long)s.bytes_in, (unsigned long long)s.bytes_out,
            (unsigned long long)s.replacements, (unsigned long long)s.max_held,
            (unsigned long long)clf_rewriter_holdback(rw), clf_rewriter_size(rw),
            s.gave_up ? "; gave up at the buffer cap (replace_filter)" : "");
    if (s.captures_failed)
        fprintf(stderr, "; %llu replacements with empty groups (PCRE2's work limit)",
                (unsigned long long)s.captures_failed);
    fputc('\n', stderr);
}

int rewrite_run(const clf_program *prog, const char *rules, const rewrite_opts *o)
{
    char err[CLF_ERRMSG_SIZE];
    int status = 0;
    size_t *lengths = NULL, nlengths = 0;
    clf_rewrite_scratch *sc = NULL;
    clf_rewriter *rw = NULL;
    sink_state out = {stdout, 0, 0};
    atomic_file af = {0};
    off_t start = -1;
    feeder f = {0};
    int from_stdin = o->input == NULL || strcmp(o->input, "-") == 0;

    f.in_name = from_stdin ? STDIN_NAME : o->input;
    if (clf_rewriter_new(prog, o->set, strlen(o->set), sink_write, &out, &rw, err, sizeof err) !=
            CLF_OK ||
        clf_rewrite_scratch_new(prog, &sc, err, sizeof err) != CLF_OK) {
        fprintf(stderr, PROG ": %s: error: --rewrite: %s\n", rules, err);
        status = 2;
        goto done;
    }
    if (o->chunk_lengths != NULL && read_lengths(o->chunk_lengths, &lengths, &nlengths) != 0) {
        status = 1;
        goto done;
    }
    f.rw = rw;
    f.sc = sc;
    f.in = from_stdin ? stdin : fopen(o->input, "rb");
    if (f.in == NULL) {
        fprintf(stderr, PROG ": %s: error: cannot open: %s\n", o->input, strerror(errno));
        status = 1;
        goto done;
    }
    struct stat st;
    if (fstat(fileno(f.in), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, PROG ": %s: error: cannot read: %s\n", f.in_name, strerror(EISDIR));
        status = 1;
        goto done;
    }
    /* The output is opened only once the input is known to be there. */
    if (o->output != NULL) {
        if (atomic_file_open(&af, o->output, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": --output: error: %s\n", err);
            status = 2;
            goto done;
        }
        out.fp = af.fp;
    } else {
        start = stdout_start();
    }

    status = feed_all(&f, lengths, nlengths, o->chunk_size ? o->chunk_size : REWRITE_CHUNK_DEFAULT,
                      &out);
    if (status == 0 && o->output == NULL && fflush(stdout) != 0) {
        out.failed = 1;
        out.err = errno;
    }
    if (out.failed) {
        fprintf(stderr, PROG ": error: cannot write the output%s%s\n", out.err > 0 ? ": " : "",
                out.err > 0 ? strerror(out.err) : "");
        status = 2;
    }
    if (status == 0 && o->output != NULL) {
        if (atomic_file_commit(&af, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": --output: error: %s\n", err);
            status = 2;
        }
    }
    if (status == 0 && o->stats) print_stats(rw, o->set);

done:
    if (status != 0) {
        if (o->output != NULL) atomic_file_abort(&af);
        else stdout_cut_back(start);
    }
    if (f.in != NULL && f.in != stdin) fclose(f.in);
    free(f.buf);
    free(lengths);
    clf_rewriter_free(rw);
    clf_rewrite_scratch_free(sc);
    return status;
}
