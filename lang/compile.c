/* compile.c: the compiler driver (see compile.h). */
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "grammar.h"
#include "lint.h"
#include "parse.h"

void cc_options_init(cc_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_source_bytes = CC_DEFAULT_MAX_SOURCE_BYTES;
    o->max_nesting = CC_DEFAULT_MAX_NESTING;
    o->max_patterns = CC_DEFAULT_MAX_PATTERNS;
    o->max_registers = CC_DEFAULT_MAX_REGISTERS;
}

/* Ends every diagnostic about an imported file with the chain of imports
 * that brought the file in, so that an error in a package names the line
 * of the user's file that imported it. */
static void add_import_chains(compilation *c, diag *from)
{
    for (diag *d = from; d; d = d->next) {
        int has_chain = 0; /* an import cycle's error already shows it */
        for (const diag *n = d->notes; n; n = n->next)
            if (strstr(n->msg, "is imported here")) has_chain = 1;
        if (has_chain) continue;
        const module *m = c->modules;
        while (m && m->file != d->file) m = m->next;
        for (; m && m->importer; m = m->importer)
            src_note(c->src, d, m->importer->file, m->import_off, "\"%s\" is imported here",
                     c->src->files[m->file].path);
    }
}

int cc_compile(const char *path, const cc_options *o, src_set *src, arena *ar,
               cg_tests *tests, uint8_t **out, size_t *outlen)
{
    compilation c = {.opts = o, .src = src, .ar = ar, .testing = tests != NULL};
    *out = NULL;
    *outlen = 0;
    src->ar = ar;
    int rc = -1;
    diag *last = src->last; /* diagnostics after it are this compilation's */
    if (mod_load_all(&c, path) == 0 && chk_program(&c) == 0) {
        lint_program(&c);
        rc = cg_program(&c, tests, out, outlen);
    }
    add_import_chains(&c, last ? last->next : src->first);
    for (module *m = c.modules; m; m = m->next) {
        strmap_free(&m->global_index);
        free(m->global_vec);
    }
    return rc;
}

/* Reads one file into `src` without resolving its imports (for the
 * debugging dumps). Returns its index, or UINT32_MAX with an error. */
static uint32_t add_single(const char *path, const cc_options *o, src_set *src, arena *ar)
{
    char err[256];
    size_t len;
    src->ar = ar;
    char *text = mod_read_file(path, o->max_source_bytes, &len, err, sizeof err);
    char *p = strdup(path);
    uint32_t f = UINT32_MAX;
    if (text && p) f = src_add(src, p, text, len);
    if (f == UINT32_MAX) {
        src_error(src, UINT32_MAX, 0, "%s: %s", path, text ? "out of memory" : err);
        free(text);
        free(p);
    }
    return f;
}

int cc_dump_ast(const char *path, const cc_options *o, src_set *src, arena *ar, FILE *out)
{
    uint32_t f = add_single(path, o, src, ar);
    if (f == UINT32_MAX) return -1;
    ast *items = ps_parse_file(src, ar, f, o->max_nesting);
    if (src->nerrors) return -1;
    ast_dump(items, out);
    return 0;
}

int cc_dump_tokens(const char *path, const cc_options *o, src_set *src, arena *ar, FILE *out)
{
    uint32_t f = add_single(path, o, src, ar);
    if (f == UINT32_MAX) return -1;
    lexer lx;
    lx_token t;
    lx_init(&lx, src, f);
    int k;
    while ((k = lx_next(&lx, &t)) > 0) {
        uint32_t line, col;
        src_linecol(&src->files[f], t.off, &line, &col);
        fprintf(out, "%u:%u %s ", line, col, lx_kind_name(k));
        fwrite(src->files[f].text + t.off, 1, t.len, out);
        fputc('\n', out);
    }
    return k < 0 ? -1 : 0;
}
