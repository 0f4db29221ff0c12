/*
 * log_files.c: request files as the requests of a --diff (log_source.h):
 * each file is read and parsed as --request reads it (readfile.c,
 * http_request.c), and its request becomes the record. A request file
 * carries no client address: --remote-addr is its peer.
 */
#include "log_source.h"

#include "readfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* As classify-run --request: a request's head is far smaller. */
#define MAX_REQUEST_BYTES ((size_t)16 << 20)

/* Reads and parses file `lineno` into s->req and s->rec. Returns 0, or -1
 * with the reason in err. */
static int load(log_source *s, uint64_t lineno, char *err, size_t errlen)
{
    const char *path = s->files[lineno - 1];
    char *data = NULL;
    size_t len = 0;
    int e = 0;
    http_request_free(&s->req);
    cm_read_status st = cm_read_file(path, MAX_REQUEST_BYTES, CM_READ_STDIN, &data, &len, &e, NULL);
    if (st != CM_READ_OK) {
        snprintf(err, errlen, "cannot read: %s", st == CM_READ_TOO_BIG ? "larger than 16 MiB"
                 : strerror(st == CM_READ_NOMEM ? ENOMEM : e));
        return -1;
    }
    /* The request keeps its own copy of the head: the file's bytes go. */
    int rc = http_request_parse(&s->req, data, len, err, errlen) == HTTP_PARSE_OK ? 0 : -1;
    free(data);
    if (rc != 0)
        return -1;
    log_record *rec = &s->rec;
    log_record_clear(rec);
    rec->method = s->req.method;
    rec->target = s->req.target;
    rec->path = s->req.path;
    rec->query = s->req.query;
    for (size_t i = 0; i < s->req.header_count; i++) {
        const http_header *h = &s->req.headers[i];
        if (log_add_header(rec, h->name.ptr, h->name.len, h->value.ptr, h->value.len) != 0) {
            snprintf(err, errlen, "more than %d headers", LOG_MAX_HEADERS);
            return -1;
        }
        if (rec->ua.len == 0 && h->name.len == 10 && strncasecmp(h->name.ptr, "user-agent", 10) == 0)
            rec->ua = h->value;
    }
    return 0;
}

int log_files_next(log_source *s, uint64_t *lineno, const char *prog)
{
    while (s->lines < s->nfiles) {
        *lineno = ++s->lines;
        char err[512];
        if (load(s, *lineno, err, sizeof err) != 0) {
            log_source_bad(s, *lineno, "error", err, prog);
            continue;
        }
        if (s->copy != NULL) {
            const char *name = s->files[*lineno - 1];
            size_t n = strlen(name);
            s->copy_len = n < LOG_MAX_LINE ? n : LOG_MAX_LINE;
            memcpy(s->copy, name, s->copy_len);
            s->copy[s->copy_len] = '\0';
        }
        s->requests++;
        return 1;
    }
    return 0;
}

int log_files_again(log_source *s, uint64_t lineno)
{
    char err[512];
    /* Standard input was read once and is gone. */
    if (strcmp(s->files[lineno - 1], "-") == 0)
        return -1;
    return load(s, lineno, err, sizeof err);
}
