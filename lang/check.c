/*
 * check.c: name resolution and type checking.
 *
 * Types: bool, int, str, the string-set and regex literal types, and
 * Request (the filter's parameter). Every expression gets a type; an
 * expression already reported as wrong gets T_ERROR, which every rule
 * accepts silently, so one mistake yields one message.
 *
 * The checker also records where a str value comes from (ast.origin):
 * `req.header("user-agent")`, `req.path`, ... or a local bound to one.
 * Code generation uses it to put every pattern tested on the same
 * request field into one Hyperscan database, scanned once per request.
 */
#include <stdlib.h>
#include <string.h>

#include "compile.h"

typedef struct scope {
    struct scope *up;
    sym *syms;
} scope;

typedef struct checker {
    compilation *c;
    module *m;
    scope *sc;
    unsigned depth; /* expression nesting (CC_MAX_EXPR_DEPTH) */
    int too_deep;   /* reported once */
} checker;

static const char *const type_names[] = {
    "?", "<error>", "bool", "int", "str", "set", "regex", "Request", "module"};

#define ERR(ck, node, ...) src_error((ck)->c->src, (node)->file, (node)->off, __VA_ARGS__)

sym *chk_lookup_global(const module *m, const char *name)
{
    uint32_t i = strmap_get(&m->global_index, name, (uint32_t)strlen(name));
    return i == STRMAP_NONE ? NULL : m->global_vec[i];
}

/* Adds a global symbol to its module's vector and index. */
static int add_global(module *m, sym *s)
{
    if (m->nglobals == m->capglobals) {
        uint32_t cap = m->capglobals ? m->capglobals * 2 : 16;
        sym **v = realloc(m->global_vec, cap * sizeof *v);
        if (!v) return -1;
        m->global_vec = v;
        m->capglobals = cap;
    }
    if (strmap_put(&m->global_index, s->name, (uint32_t)strlen(s->name), m->nglobals)) return -1;
    m->global_vec[m->nglobals++] = s;
    return 0;
}

static sym *lookup(checker *ck, const char *name)
{
    for (scope *s = ck->sc; s; s = s->up)
        for (sym *y = s->syms; y; y = y->next)
            if (strcmp(y->name, name) == 0) return y;
    return chk_lookup_global(ck->m, name);
}

static sym *new_sym(checker *ck, sym_kind kind, const char *name, ast *decl)
{
    sym *s = arena_alloc(ck->c->ar, sizeof *s);
    if (!s) return NULL;
    s->kind = kind;
    s->name = name;
    s->decl = decl;
    s->mod = ck->m;
    s->reg = -1;
    return s;
}

static void redefined(checker *ck, ast *node, const char *name, const sym *prev)
{
    diag *d = ERR(ck, node, "'%s' is already defined", name);
    if (prev->decl)
        src_note(ck->c->src, d, prev->decl->file, prev->decl->off, "'%s' was defined here", name);
}

/* Declares a local in the innermost scope; no shadowing at all, so a
 * name means one thing throughout a filter. */
static sym *declare_local(checker *ck, sym_kind kind, ast *decl, const char *name)
{
    sym *prev = lookup(ck, name);
    if (prev) {
        redefined(ck, decl, name, prev);
        return NULL;
    }
    sym *s = new_sym(ck, kind, name, decl);
    if (!s) return NULL;
    s->next = ck->sc->syms;
    ck->sc->syms = s;
    return s;
}

ast *chk_literal(ast *e)
{
    while (e && (e->kind == AST_NAME || e->kind == AST_MEMBER) && e->sym &&
           ((sym *)e->sym)->kind == SYM_CONST)
        e = ((sym *)e->sym)->decl->a;
    return e;
}

/* ---- expressions ---- */

static ty check_expr(checker *ck, ast *e);
static ty check_expr_inner(checker *ck, ast *e);

static int lowercase_header_name(checker *ck, ast *call, ast *arg, char **out)
{
    ast *lit = chk_literal(arg);
    if (!lit || lit->kind != AST_STR) {
        ERR(ck, arg, "the header name must be a string literal or constant");
        return -1;
    }
    if (lit->slen == 0) {
        ERR(ck, arg, "the header name is empty");
        return -1;
    }
    char *n = arena_strndup(ck->c->ar, lit->str, lit->slen);
    if (!n) return -1;
    for (uint32_t i = 0; i < lit->slen; i++) {
        unsigned char ch = (unsigned char)n[i];
        /* RFC 9110 section 5.6.2: a field name is a token. */
        if (!(ch > 0x20 && ch < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", ch))) {
            char shown[96];
            size_t o = 0;
            for (uint32_t k = 0; k < lit->slen && o + 5 < sizeof shown; k++) {
                unsigned char b = (unsigned char)lit->str[k];
                o += (size_t)snprintf(shown + o, sizeof shown - o,
                                      b >= 0x20 && b < 0x7f && b != '"' && b != '\\' ? "%c" : "\\x%02x", b);
            }
            ERR(ck, arg, "\"%s\" is not a valid header name (RFC 9110 token)", shown);
            return -1;
        }
        if (ch >= 'A' && ch <= 'Z') n[i] = (char)(ch + 32);
    }
    (void)call;
    *out = n;
    return 0;
}

typedef struct method_desc {
    const char *name;
    method_id id;
    ty recv;
    int nargs;
    int arg;  /* 0 none, 1 str or set, 2 regex, 3 header name */
    ty result;
} method_desc;

static const method_desc methods[] = {
    {"len", M_LEN, T_STR, 0, 0, T_INT},
    {"lower", M_LOWER, T_STR, 0, 0, T_STR},
    {"contains", M_CONTAINS, T_STR, 1, 1, T_BOOL},
    {"starts_with", M_STARTS_WITH, T_STR, 1, 1, T_BOOL},
    {"ends_with", M_ENDS_WITH, T_STR, 1, 1, T_BOOL},
    {"equals", M_EQUALS, T_STR, 1, 1, T_BOOL},
    {"contains_word", M_CONTAINS_WORD, T_STR, 1, 1, T_BOOL},
    {"matches", M_MATCHES, T_STR, 1, 2, T_BOOL},
    {"header", M_HEADER, T_REQUEST, 1, 3, T_STR},
    {"has_header", M_HAS_HEADER, T_REQUEST, 1, 3, T_BOOL},
};

static ty check_call(checker *ck, ast *e)
{
    ty rt = check_expr(ck, e->a);
    int nargs = 0;
    for (ast *a = e->b; a; a = a->next) nargs++;
    const method_desc *md = NULL;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(methods[i].name, e->str) == 0 && (rt == T_ERROR || methods[i].recv == rt)) {
            md = &methods[i];
            break;
        }
    if (rt == T_ERROR) {
        for (ast *a = e->b; a; a = a->next) check_expr(ck, a);
        return md ? md->result : T_ERROR;
    }
    if (!md) {
        ERR(ck, e, "%s has no method '%s'", type_names[rt], e->str);
        return T_ERROR;
    }
    if (nargs != md->nargs) {
        ERR(ck, e, "'%s' takes %d argument%s, got %d", md->name, md->nargs,
            md->nargs == 1 ? "" : "s", nargs);
        return T_ERROR;
    }
    e->method = md->id;
    if (md->arg == 0) return md->result;
    ast *arg = e->b;
    ty at = check_expr(ck, arg);
    if (at == T_ERROR) return md->result;
    switch (md->arg) {
    case 1:
        if (at != T_STR && at != T_SET) {
            ERR(ck, arg, "'%s' takes a str or a set, not %s", md->name, type_names[at]);
            return T_ERROR;
        }
        break;
    case 2:
        if (at != T_REGEX) {
            ERR(ck, arg, "'matches' takes a regex literal such as /^abc/, not %s",
                type_names[at]);
            return T_ERROR;
        }
        break;
    case 3:
        if (at != T_STR) {
            ERR(ck, arg, "'%s' takes a header name (str), not %s", md->name, type_names[at]);
            return T_ERROR;
        }
        if (lowercase_header_name(ck, e, arg, &e->oname)) return T_ERROR;
        if (md->id == M_HEADER) e->origin = ORIGIN_HEADER;
        break;
    }
    return md->result;
}

static ty check_member(checker *ck, ast *e)
{
    /* module.NAME */
    if (e->a->kind == AST_NAME) {
        sym *s = lookup(ck, e->a->str);
        if (s && s->kind == SYM_IMPORT) {
            e->a->type = T_MODULE;
            sym *t = chk_lookup_global(s->mod, e->str);
            if (!t || t->kind == SYM_IMPORT) {
                ERR(ck, e, "module '%s' has no '%s'", e->a->str, e->str);
                return T_ERROR;
            }
            if (t->kind != SYM_CONST) {
                ERR(ck, e, "'%s.%s' is a filter, not a value", e->a->str, e->str);
                return T_ERROR;
            }
            if (!(t->decl->flags & AST_F_PUB)) {
                diag *d = ERR(ck, e, "'%s' is not public in module '%s'", e->str, e->a->str);
                src_note(ck->c->src, d, t->decl->file, t->decl->off,
                         "declared here without `pub`");
                return T_ERROR;
            }
            e->sym = t;
            return t->type;
        }
    }
    ty ot = check_expr(ck, e->a);
    if (ot == T_ERROR) return T_ERROR;
    if (ot == T_REQUEST) {
        static const struct { const char *name; int origin; } fields[] = {
            {"method", ORIGIN_METHOD}, {"path", ORIGIN_PATH}, {"query", ORIGIN_QUERY}};
        for (size_t i = 0; i < 3; i++)
            if (strcmp(e->str, fields[i].name) == 0) {
                e->origin = fields[i].origin;
                return T_STR;
            }
        if (strcmp(e->str, "header") == 0 || strcmp(e->str, "has_header") == 0)
            ERR(ck, e, "'%s' is a method: write %s(\"name\")", e->str, e->str);
        else
            ERR(ck, e, "Request has no field '%s' (fields: method, path, query)", e->str);
        return T_ERROR;
    }
    ERR(ck, e, "%s has no field '%s'", type_names[ot], e->str);
    return T_ERROR;
}

static ty check_binary(checker *ck, ast *e)
{
    ty a = check_expr(ck, e->a), b = check_expr(ck, e->b);
    if (a == T_ERROR || b == T_ERROR) return T_BOOL;
    switch (e->kind) {
    case AST_OR:
    case AST_AND:
        if (a != T_BOOL) ERR(ck, e->a, "'%s' needs bool operands, not %s",
                             e->kind == AST_OR ? "||" : "&&", type_names[a]);
        else if (b != T_BOOL) ERR(ck, e->b, "'%s' needs bool operands, not %s",
                                  e->kind == AST_OR ? "||" : "&&", type_names[b]);
        return T_BOOL;
    case AST_EQ:
    case AST_NE:
        if (a != b)
            ERR(ck, e, "cannot compare %s with %s", type_names[a], type_names[b]);
        else if (a != T_BOOL && a != T_INT && a != T_STR)
            ERR(ck, e, "cannot compare %s values with '%s'%s", type_names[a],
                e->kind == AST_EQ ? "==" : "!=",
                a == T_SET ? " (to test membership, write `x in SET`)" : "");
        return T_BOOL;
    case AST_IN:
        if (a != T_STR) ERR(ck, e->a, "'in' tests a str, not %s", type_names[a]);
        else if (b != T_SET) ERR(ck, e->b, "'in' needs a set on its right, not %s", type_names[b]);
        return T_BOOL;
    default: /* < <= > >= */
        if (a != T_INT || b != T_INT)
            ERR(ck, e, "cannot order %s and %s (only int values are ordered)",
                type_names[a], type_names[b]);
        return T_BOOL;
    }
}

static ty check_set(checker *ck, ast *e)
{
    for (ast *el = e->a; el; el = el->next)
        if (el->slen == 0)
            ERR(ck, el, "empty string in a set (it would match every value)");
    return T_SET;
}

static ty check_expr(checker *ck, ast *e)
{
    ty t = T_ERROR;
    if (ck->depth >= CC_MAX_EXPR_DEPTH) {
        /* Long operator chains nest the tree without nesting brackets;
         * refuse them before any recursive pass runs out of stack. */
        if (!ck->too_deep) ERR(ck, e, "expression is nested more than %d operators deep", CC_MAX_EXPR_DEPTH);
        ck->too_deep = 1;
        e->type = T_ERROR;
        return T_ERROR;
    }
    ck->depth++;
    t = check_expr_inner(ck, e);
    ck->depth--;
    e->type = t;
    return t;
}

static ty check_expr_inner(checker *ck, ast *e)
{
    ty t = T_ERROR;
    switch (e->kind) {
    case AST_INT: t = T_INT; break;
    case AST_BOOL: t = T_BOOL; break;
    case AST_STR: t = T_STR; break;
    case AST_REGEX:
        t = T_REGEX;
        if (e->slen == 0 || memchr(e->str, 0, e->slen))
            ERR(ck, e, "a regex may not contain a NUL byte (write \\x00)");
        break;
    case AST_SET: t = check_set(ck, e); break;
    case AST_NAME: {
        sym *s = lookup(ck, e->str);
        if (!s) {
            ERR(ck, e, "unknown name '%s'", e->str);
            break;
        }
        if (s->kind == SYM_IMPORT) {
            ERR(ck, e, "'%s' is a module: write %s.NAME", e->str, e->str);
            break;
        }
        if (s->kind == SYM_FILTER) {
            ERR(ck, e, "'%s' is a filter, not a value", e->str);
            break;
        }
        e->sym = s;
        t = s->type;
        if (s->kind == SYM_LOCAL) {
            e->origin = s->origin;
            e->oname = s->oname;
        }
        break;
    }
    case AST_MEMBER: t = check_member(ck, e); break;
    case AST_CALL: t = check_call(ck, e); break;
    case AST_NOT: {
        ty a = check_expr(ck, e->a);
        if (a != T_BOOL && a != T_ERROR) ERR(ck, e, "'!' needs a bool, not %s", type_names[a]);
        t = T_BOOL;
        break;
    }
    default: t = check_binary(ck, e); break;
    }
    return t;
}

/* ---- statements ---- */

/* Returns 1 when every path through the list ends in accept or reject. */
static int check_block(checker *ck, ast *block);

static int check_stmt(checker *ck, ast *s)
{
    switch (s->kind) {
    case AST_LET: {
        ty t = check_expr(ck, s->a);
        if (t == T_SET || t == T_REGEX) {
            ERR(ck, s->a, "a %s can only be bound with `const`", type_names[t]);
            t = T_ERROR;
        } else if (t == T_REQUEST) {
            ERR(ck, s->a, "a Request cannot be bound with `let`: use the parameter itself");
            t = T_ERROR;
        }
        sym *y = declare_local(ck, SYM_LOCAL, s, s->str);
        if (y) {
            y->type = t;
            y->origin = s->a->origin;
            y->oname = s->a->oname;
            s->sym = y;
        }
        return 0;
    }
    case AST_IF: {
        ty t = check_expr(ck, s->a);
        if (t != T_BOOL && t != T_ERROR)
            ERR(ck, s->a, "the condition of 'if' must be bool, not %s", type_names[t]);
        int then_ends = check_block(ck, s->b);
        if (!s->c) return 0;
        int else_ends = s->c->kind == AST_IF ? check_stmt(ck, s->c) : check_block(ck, s->c);
        return then_ends && else_ends;
    }
    case AST_ACCEPT:
    case AST_REJECT:
        if (s->a && s->a->slen == 0)
            ERR(ck, s->a, "empty reason: write `%s` without one",
                s->kind == AST_ACCEPT ? "accept" : "reject");
        return 1;
    default:
        ERR(ck, s, "unexpected statement");
        return 0;
    }
}

static int check_block(checker *ck, ast *block)
{
    scope sc = {ck->sc, NULL};
    ck->sc = &sc;
    int ends = 0;
    for (ast *s = block->a; s; s = s->next) {
        if (ends) {
            ERR(ck, s, "unreachable statement: every path before it has ended "
                       "in accept or reject");
            break;
        }
        ends = check_stmt(ck, s);
    }
    ck->sc = sc.up;
    return ends;
}

static void check_filter(checker *ck, ast *f)
{
    scope sc = {NULL, NULL};
    ck->sc = &sc;
    int n = 0;
    for (ast *p = f->a; p; p = p->next) {
        n++;
        if (strcmp(p->c->str, "Request") != 0)
            ERR(ck, p->c, "a filter's parameter must have type Request, not '%s'", p->c->str);
        sym *y = declare_local(ck, SYM_PARAM, p, p->str);
        if (y) y->type = T_REQUEST;
    }
    if (n != 1) ERR(ck, f, "filter '%s' must take exactly one parameter (req: Request)", f->str);
    if (!check_block(ck, f->b)) {
        /* Point at the closing brace: that is where the path falls out. */
        const src_file *sf = &ck->c->src->files[f->b->file];
        uint32_t end = f->b->off;
        int depth = 0;
        for (uint32_t i = f->b->off; i < sf->len; i++) {
            /* Good enough to find the matching brace: braces inside strings,
             * regexes and comments are rare in real rules, and a wrong
             * guess only moves the caret. */
            if (sf->text[i] == '{') depth++;
            else if (sf->text[i] == '}' && --depth == 0) {
                end = i;
                break;
            }
        }
        src_error(ck->c->src, f->file, end,
                  "filter '%s' can reach its end without accept or reject", f->str);
    }
    ck->sc = NULL;
}

/* Declares a module's consts, filters and import aliases. */
static void declare_globals(checker *ck, module *m)
{
    ck->m = m;
    for (ast *it = m->items; it; it = it->next) {
        const char *name = it->kind == AST_IMPORT ? it->c->str : it->str;
        sym_kind k = it->kind == AST_IMPORT ? SYM_IMPORT
                     : it->kind == AST_CONST ? SYM_CONST : SYM_FILTER;
        sym *prev = chk_lookup_global(m, name);
        if (prev) {
            redefined(ck, it->kind == AST_IMPORT ? it->c : it, name, prev);
            continue;
        }
        sym *s = new_sym(ck, k, name, it->kind == AST_IMPORT ? it->c : it);
        if (!s) return;
        if (k == SYM_IMPORT) {
            s->mod = it->sym;
            s->type = T_MODULE;
        }
        if (add_global(m, s)) {
            src_error(ck->c->src, UINT32_MAX, 0, "out of memory");
            return;
        }
        it->sym = s;
    }
}

static void check_consts(checker *ck, module *m)
{
    ck->m = m;
    for (ast *it = m->items; it; it = it->next) {
        if (it->kind != AST_CONST) continue;
        ast *v = it->a;
        if (v->kind != AST_STR && v->kind != AST_INT && v->kind != AST_BOOL &&
            v->kind != AST_SET && v->kind != AST_REGEX) {
            ERR(ck, v, "a constant's value must be a literal");
            if (it->sym) ((sym *)it->sym)->type = T_ERROR; /* no knock-on errors */
            continue;
        }
        sym *s = it->sym;
        if (s) s->type = check_expr(ck, v);
    }
}

static void check_filters(checker *ck, module *m)
{
    ck->m = m;
    for (ast *it = m->items; it; it = it->next)
        if (it->kind == AST_FILTER) check_filter(ck, it);
}

int chk_program(compilation *c)
{
    checker ck = {.c = c};
    unsigned before = c->src->nerrors;
    for (module *m = c->modules; m; m = m->next) declare_globals(&ck, m);
    /* Constants first, everywhere, so that filters see their types. */
    for (module *m = c->modules; m; m = m->next) check_consts(&ck, m);
    for (module *m = c->modules; m; m = m->next) check_filters(&ck, m);
    sym *main = chk_lookup_global(c->main, "main");
    if (!main || main->kind != SYM_FILTER)
        src_error(c->src, c->main->file, 0, "no filter named 'main' in %s "
                  "(the entry point is `filter main(req: Request) { ... }`)",
                  c->src->files[c->main->file].path);
    if (c->ar->failed) src_error(c->src, UINT32_MAX, 0, "out of memory");
    return c->src->nerrors == before ? 0 : -1;
}
