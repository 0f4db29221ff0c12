/*
 * module.c: finds, reads and parses the main file and its imports.
 *
 *   import "name"           name.clf on the search path: each -I directory
 *                           in order, then $CLASSIFY_PATH, then the
 *                           installed stdlib/; reached as name.THING
 *   import "dir/f.clf"      a path relative to the importing file;
 *                           reached as f.THING
 *   import "..." as alias   either form, reached as alias.THING
 *
 * A module is identified by its real path, so two imports of the same
 * file share one module; an import of a file that is still being loaded
 * is a cycle, reported with the chain of imports that led to it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile.h"
#include "parse.h"
#include "readfile.h"

char *mod_read_file(const char *path, uint64_t max, size_t *len, char *err, size_t errlen)
{
    char *text;
    int e;
    switch (cm_read_file(path, max, CM_READ_STDIN, &text, len, &e, NULL)) {
    case CM_READ_OK: return text;
    case CM_READ_OPEN: snprintf(err, errlen, "cannot open: %s", strerror(e)); break;
    case CM_READ_TOO_BIG:
        snprintf(err, errlen, "file is larger than the source limit of %llu bytes",
                 (unsigned long long)max);
        break;
    case CM_READ_NOMEM: snprintf(err, errlen, "out of memory"); break;
    default: snprintf(err, errlen, "read error"); break;
    }
    return NULL;
}

static int is_ident(const char *s, size_t n)
{
    if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Resolves an import string to a path (malloc'd), or NULL. */
static char *resolve(compilation *c, const module *from, const char *spec)
{
    size_t n = strlen(spec);
    char buf[PATH_MAX];
    if (n > 4 && strcmp(spec + n - 4, ".clf") == 0) {
        const char *fp = c->src->files[from->file].path;
        const char *slash = strrchr(fp, '/');
        if (spec[0] == '/' || !slash)
            snprintf(buf, sizeof buf, "%s", spec);
        else
            snprintf(buf, sizeof buf, "%.*s/%s", (int)(slash - fp), fp, spec);
        return file_exists(buf) ? strdup(buf) : NULL;
    }
    for (size_t i = 0; i < c->opts->ninclude; i++) {
        snprintf(buf, sizeof buf, "%s/%s.clf", c->opts->include_dirs[i], spec);
        if (file_exists(buf)) return strdup(buf);
    }
    const char *ep = c->opts->env_path;
    while (ep && *ep) {
        const char *colon = strchr(ep, ':');
        size_t len = colon ? (size_t)(colon - ep) : strlen(ep);
        if (len) {
            snprintf(buf, sizeof buf, "%.*s/%s.clf", (int)len, ep, spec);
            if (file_exists(buf)) return strdup(buf);
        }
        ep += len + (colon != NULL);
    }
    if (c->opts->stdlib_dir) {
        snprintf(buf, sizeof buf, "%s/%s.clf", c->opts->stdlib_dir, spec);
        if (file_exists(buf)) return strdup(buf);
    }
    return NULL;
}

static module *find_module(compilation *c, const char *real)
{
    for (module *m = c->modules; m; m = m->next)
        if (strcmp(m->realpath, real) == 0) return m;
    return NULL;
}

static module *load(compilation *c, char *path, const module *importer, uint32_t import_off);

/* Loads the imports of `m`, depth first. */
static int load_imports(compilation *c, module *m)
{
    int rc = 0;
    for (ast *it = m->items; it; it = it->next) {
        if (it->kind != AST_IMPORT) continue;
        if (memchr(it->str, 0, it->slen)) {
            src_error(c->src, m->file, it->off, "import path contains a NUL byte");
            rc = -1;
            continue;
        }
        char *path = resolve(c, m, it->str);
        if (!path) {
            diag *d = src_error(c->src, m->file, it->off, "cannot find module \"%s\"", it->str);
            if (!(it->slen > 4 && strcmp(it->str + it->slen - 4, ".clf") == 0))
                src_note(c->src, d, UINT32_MAX, 0,
                         "searched %s.clf in the -I directories, $CLASSIFY_PATH and %s",
                         it->str, c->opts->stdlib_dir ? c->opts->stdlib_dir : "(no stdlib)");
            rc = -1;
            continue;
        }
        /* The alias: `as NAME`, or the file's base name. */
        if (!it->c) {
            const char *base = strrchr(it->str, '/');
            base = base ? base + 1 : it->str;
            size_t bl = strlen(base);
            if (bl > 4 && strcmp(base + bl - 4, ".clf") == 0) bl -= 4;
            if (!is_ident(base, bl)) {
                src_error(c->src, m->file, it->off,
                          "\"%s\" is not a valid name: import it with `as NAME`", it->str);
                free(path);
                rc = -1;
                continue;
            }
            it->c = ast_new(c->ar, AST_NAME, m->file, it->off, it->len);
            if (!it->c) {
                free(path);
                return -1;
            }
            it->c->str = arena_strndup(c->ar, base, bl);
            it->c->slen = (uint32_t)bl;
        }
        module *dep = load(c, path, m, it->off);
        if (!dep) {
            rc = -1;
            continue;
        }
        it->sym = dep; /* the checker turns this into a SYM_IMPORT */
    }
    return rc;
}

/* Reads, parses and (recursively) imports `path`, which it takes. */
static module *load(compilation *c, char *path, const module *importer, uint32_t import_off)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    module *m = find_module(c, real);
    if (m) {
        free(path);
        if (m->loading) {
            diag *d = src_error(c->src, importer->file, import_off,
                                "import cycle: \"%s\" is imported again while it is being loaded",
                                c->src->files[m->file].path);
            for (const module *x = importer; x && x != m; x = x->importer)
                src_note(c->src, d, x->importer ? x->importer->file : UINT32_MAX,
                         x->import_off, "\"%s\" is imported here", c->src->files[x->file].path);
            src_note(c->src, d, m->importer ? m->importer->file : UINT32_MAX, m->import_off,
                     "\"%s\" is imported here", c->src->files[m->file].path);
            return NULL;
        }
        return m;
    }
    char err[256];
    size_t len = 0;
    char *text = mod_read_file(path, c->opts->max_source_bytes, &len, err, sizeof err);
    if (!text) {
        if (importer)
            src_error(c->src, importer->file, import_off, "%s: %s", path, err);
        else
            src_error(c->src, UINT32_MAX, 0, "%s: %s", path, err);
        free(path);
        return NULL;
    }
    uint32_t file = src_add(c->src, path, text, len);
    if (file == UINT32_MAX) {
        free(path);
        free(text);
        src_error(c->src, UINT32_MAX, 0, "out of memory");
        return NULL;
    }
    m = arena_alloc(c->ar, sizeof *m);
    if (!m) return NULL;
    m->file = file;
    m->realpath = arena_strndup(c->ar, real, strlen(real));
    m->importer = importer;
    m->import_off = import_off;
    /* Append, so the main module stays first. */
    module **tail = &c->modules;
    while (*tail) tail = &(*tail)->next;
    *tail = m;
    m->items = ps_parse_file(c->src, c->ar, file, c->opts->max_nesting);
    if (!m->items && c->src->nerrors) return NULL;
    m->loading = 1;
    int rc = load_imports(c, m);
    m->loading = 0;
    return rc == 0 ? m : NULL;
}

int mod_load_all(compilation *c, const char *path)
{
    char *p = strdup(path);
    if (!p) return -1;
    c->main = load(c, p, NULL, 0);
    return c->main && c->src->nerrors == 0 ? 0 : -1;
}
