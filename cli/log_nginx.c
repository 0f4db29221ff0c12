/*
 * log_nginx.c: nginx access log lines, in any log_format (log_record.h).
 *
 * A template is text and variables ($name, ${name}), as in nginx.conf.
 * A line is matched against it left to right: each variable's value runs
 * to the first occurrence of the text that follows it, and the last
 * variable's to where the template's closing text begins at the end of
 * the line. That is exact for nginx's own output, because its default
 * escaping writes '"', '\' and every byte outside 0x20-0x7e of a value as
 * \xHH: a quoted value never holds the quote that ends it. Those escapes
 * are decoded in place, so the rules see the bytes the client sent. "-"
 * is nginx's word for an empty value: such a header is left out.
 */
#include "log_record.h"

#include "hex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More than any log_format in use; bounds the per-line work and memory. */
#define MAX_VARS 64
#define MAX_NAME 64

typedef enum var_kind {
    V_OTHER = 0,   /* logged, not looked at ($status, $time_local, ...) */
    V_REMOTE_ADDR, /* the client: the peer */
    V_REQUEST,     /* "METHOD TARGET PROTOCOL" */
    V_METHOD,      /* $request_method */
    V_REQUEST_URI, /* the target as sent */
    V_URI,         /* the path (normalized by nginx) */
    V_ARGS,        /* $args, $query_string */
    V_HEADER       /* $http_NAME, $host: a request header */
} var_kind;

typedef struct var {
    var_kind kind;
    const char *var_name; /* as in the template, for messages */
    size_t var_name_len;
    char name[MAX_NAME]; /* V_HEADER: the header name, '_' as '-' */
    size_t name_len;
    const char *text;    /* the text after it, up to the next variable */
    size_t text_len;
} var;

struct nginx_format {
    char *tmpl;       /* a copy: the texts point into it */
    const char *lead; /* the text before the first variable */
    size_t lead_len;
    var vars[MAX_VARS];
    size_t nvars;
};

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Classifies the variable called name[0..n). */
static void set_kind(var *v, const char *name, size_t n)
{
    static const struct {
        const char *name;
        var_kind kind;
    } known[] = {
        {"remote_addr", V_REMOTE_ADDR}, {"request", V_REQUEST},
        {"request_method", V_METHOD},   {"request_uri", V_REQUEST_URI},
        {"uri", V_URI},                 {"document_uri", V_URI},
        {"args", V_ARGS},               {"query_string", V_ARGS},
    };
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (strlen(known[k].name) == n && memcmp(known[k].name, name, n) == 0) {
            v->kind = known[k].kind;
            return;
        }
    const char *h = NULL;
    size_t hn = 0;
    if (n > 5 && memcmp(name, "http_", 5) == 0 && n - 5 < MAX_NAME) {
        h = name + 5;
        hn = n - 5;
    } else if (n == 4 && memcmp(name, "host", 4) == 0) {
        h = "host";
        hn = 4;
    }
    if (h == NULL) {
        v->kind = V_OTHER;
        return;
    }
    /* nginx names $http_user_agent for User-Agent: lower case, '-' as '_'. */
    v->kind = V_HEADER;
    for (size_t i = 0; i < hn; i++)
        v->name[i] = h[i] == '_' ? '-' : h[i];
    v->name_len = hn;
}

int nginx_format_new(const char *tmpl, nginx_format **out, char *err, size_t errlen)
{
    *out = NULL;
    nginx_format *f = calloc(1, sizeof *f);
    size_t len = strlen(tmpl);
    char *t = f ? malloc(len + 1) : NULL;
    if (t == NULL) {
        free(f);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(t, tmpl, len + 1);
    f->tmpl = t;
    f->lead = t;
    const char **text = &f->lead; /* the text being collected */
    size_t *text_len = &f->lead_len;
    size_t i = 0;
    while (i < len) {
        if (t[i] != '$') {
            i++;
            *text_len = (size_t)(t + i - *text);
            continue;
        }
        size_t s = i + 1, e;
        if (s < len && t[s] == '{') {
            const char *close = memchr(t + s, '}', len - s);
            if (close == NULL) {
                snprintf(err, errlen, "--log-format: '${' without '}'");
                goto fail;
            }
            s++;
            e = (size_t)(close - t);
            i = e + 1;
        } else {
            e = s;
            while (e < len && is_name_char(t[e]))
                e++;
            i = e;
        }
        if (e == s) {
            snprintf(err, errlen, "--log-format: '$' at byte %zu is not followed by a "
                     "variable name", s);
            goto fail;
        }
        if (f->nvars > 0 && *text_len == 0) {
            snprintf(err, errlen, "--log-format: $%.*s follows another variable with no "
                     "text between them: their values cannot be told apart", (int)(e - s),
                     t + s);
            goto fail;
        }
        if (f->nvars == MAX_VARS) {
            snprintf(err, errlen, "--log-format: more than %d variables", MAX_VARS);
            goto fail;
        }
        var *v = &f->vars[f->nvars++];
        set_kind(v, t + s, e - s);
        v->var_name = t + s;
        v->var_name_len = e - s;
        v->text = t + i;
        v->text_len = 0;
        text = &v->text;
        text_len = &v->text_len;
    }
    if (f->nvars == 0) {
        snprintf(err, errlen, "--log-format: the template has no $variable");
        goto fail;
    }
    *out = f;
    return 0;
fail:
    nginx_format_free(f);
    return -1;
}

void nginx_format_free(nginx_format *f)
{
    if (f == NULL)
        return;
    free(f->tmpl);
    free(f);
}

/* Decodes nginx's \xHH escapes in s[0..n) in place; returns the length.
 * A backslash not starting one stays as it is. */
static size_t unescape(char *s, size_t n)
{
    char *bs = memchr(s, '\\', n);
    if (bs == NULL)
        return n;
    size_t o = (size_t)(bs - s);
    for (size_t i = o; i < n;) {
        int hi, lo;
        if (s[i] == '\\' && i + 3 < n && s[i + 1] == 'x' &&
            (hi = cm_hex_value((unsigned char)s[i + 2])) >= 0 &&
            (lo = cm_hex_value((unsigned char)s[i + 3])) >= 0) {
            s[o++] = (char)(hi << 4 | lo);
            i += 4;
        } else {
            s[o++] = s[i++];
        }
    }
    return o;
}

/* The first occurrence of t[0..tn) in s[0..n), or NULL (memmem is not
 * POSIX). The texts of a format are a few bytes: memchr does the work. */
static const char *find(const char *s, size_t n, const char *t, size_t tn)
{
    const char *end = s + n;
    while ((size_t)(end - s) >= tn) {
        const char *p = memchr(s, t[0], (size_t)(end - s) - tn + 1);
        if (p == NULL)
            return NULL;
        /* Most texts are one to three bytes ('" ', ' - '): no call. */
        size_t k = 1;
        while (k < tn && p[k] == t[k])
            k++;
        if (k == tn)
            return p;
        s = p + 1;
    }
    return NULL;
}

int nginx_parse(const nginx_format *f, char *line, size_t len, log_record *rec, char *err,
                size_t errlen)
{
    if (len < f->lead_len || memcmp(line, f->lead, f->lead_len) != 0) {
        snprintf(err, errlen, "does not begin with '%.*s' as the format does",
                 (int)f->lead_len, f->lead);
        return -1;
    }
    size_t pos = f->lead_len;
    http_slice request = {NULL, 0}, method = {NULL, 0}, uri = {NULL, 0}, path = {NULL, 0},
               args = {NULL, 0};
    for (size_t k = 0; k < f->nvars; k++) {
        const var *v = &f->vars[k];
        size_t end;
        if (k + 1 == f->nvars) {
            /* The last value runs to the closing text at the end. */
            if (len - pos < v->text_len ||
                memcmp(line + len - v->text_len, v->text, v->text_len) != 0) {
                snprintf(err, errlen, "does not end with '%.*s' as the format does",
                         (int)v->text_len, v->text);
                return -1;
            }
            end = len - v->text_len;
        } else {
            const char *hit = find(line + pos, len - pos, v->text, v->text_len);
            if (hit == NULL) {
                snprintf(err, errlen, "no '%.*s' after $%.*s, as the format has",
                         (int)v->text_len, v->text, (int)v->var_name_len, v->var_name);
                return -1;
            }
            end = (size_t)(hit - line);
        }
        char *val = line + pos;
        size_t n = end - pos;
        pos = end + v->text_len;
        if (v->kind == V_OTHER)
            continue;
        if (n == 1 && val[0] == '-') /* nginx's empty value */
            n = 0;
        n = unescape(val, n);
        http_slice s = {val, n};
        switch (v->kind) {
        case V_REMOTE_ADDR: rec->client = s; break;
        case V_REQUEST: request = s; break;
        case V_METHOD: method = s; break;
        case V_REQUEST_URI: uri = s; break;
        case V_URI: path = s; break;
        case V_ARGS: args = s; break;
        case V_HEADER:
            if (n == 0)
                break;
            if (log_add_header(rec, v->name, v->name_len, val, n) != 0) {
                snprintf(err, errlen, "more than %d headers", LOG_MAX_HEADERS);
                return -1;
            }
            if (v->name_len == 10 && memcmp(v->name, "user-agent", 10) == 0)
                rec->ua = s;
            break;
        default: break;
        }
    }
    /* The request line says most; else its parts, as the format has them. */
    if (request.ptr != NULL)
        return log_split_request(rec, request.ptr, request.len, err, errlen);
    if (method.ptr != NULL && method.len == 0) {
        snprintf(err, errlen, "the $request_method is empty");
        return -1;
    }
    if (method.ptr != NULL)
        rec->method = method;
    else /* a format that logs no method: what a log of pages mostly holds */
        rec->method.ptr = "GET", rec->method.len = 3;
    if (uri.ptr != NULL)
        return log_split_target(rec, uri.ptr, uri.len, err, errlen);
    /* $uri is decoded: a %3F in it is a '?', which would end the path of
     * a target; it ends it here too, as libclassify's paths hold no '?'. */
    const char *q = path.ptr ? memchr(path.ptr, '?', path.len) : NULL;
    http_slice target = path;
    if (q != NULL)
        path.len = (size_t)(q - path.ptr);
    if (path.ptr != NULL && path.len > 0) {
        rec->target = target;
        rec->path = path;
        if (args.ptr != NULL)
            rec->query = args;
        return 0;
    }
    snprintf(err, errlen, "no request: the format's $request, $request_uri or $uri is "
             "absent or empty");
    return -1;
}
