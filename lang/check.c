/*
 * check.c: name resolution and type checking.
 *
 * Types: bool, int, str, ip, the string-set, regex and IP-set literal
 * types, and Request (the filter's parameter). Every expression gets a
 * type; an expression already reported as wrong gets T_ERROR, which every
 * rule accepts silently, so one mistake yields one message.
 *
 * Functions (`fn`) return a value on every path and cannot decide a
 * verdict; filters decide (accept/reject), or end without deciding
 * (`pass`, or their end) so that their caller goes on. `main` must
 * decide on every path. The call graph must be acyclic: every call site
 * is recorded (sym.calls) and a depth-first search reports a cycle with
 * the chain of calls, so evaluation is bounded.
 *
 * The checker also records where a str value comes from (ast.origin):
 * `req.header("user-agent")`, `req.path`, ... or a local bound to one.
 * Code generation uses it to put every pattern tested on the same
 * request field into one Hyperscan database, scanned once per request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

const char *const chk_type_names[] = {
    "?", "<error>", "bool", "int", "str", "set", "regex", "Request", "module",
    "ip", "ip set", "int set"};


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
    uint32_t i = strmap_get(&ck->local_index, name, (uint32_t)strlen(name));
    if (i != STRMAP_NONE && ck->locals[i]) return ck->locals[i];
    return chk_lookup_global(ck->m, name);
}

/* Makes `s` findable by lookup() until end_scope(). Returns 0 or -1 (out
 * of memory, reported). */
static int add_local(checker *ck, sym *s)
{
    if (ck->nlocals == ck->caplocals) {
        uint32_t cap = ck->caplocals ? ck->caplocals * 2 : 16;
        sym **v = realloc(ck->locals, cap * sizeof *v);
        if (!v) goto nomem;
        ck->locals = v;
        ck->caplocals = cap;
    }
    if (strmap_put(&ck->local_index, s->name, (uint32_t)strlen(s->name), ck->nlocals))
        goto nomem;
    ck->locals[ck->nlocals++] = s;
    return 0;
nomem:
    src_error(ck->c->src, UINT32_MAX, 0, "out of memory");
    return -1;
}

/* The locals of `sc` go out of scope: a later sibling scope may declare
 * their names again. */
static void end_scope(checker *ck, const scope *sc)
{
    for (const sym *y = sc->syms; y; y = y->next) {
        uint32_t i = strmap_get(&ck->local_index, y->name, (uint32_t)strlen(y->name));
        if (i != STRMAP_NONE) ck->locals[i] = NULL;
    }
}

/* Records that the function being checked calls `callee` at `site`. */
static void add_call(checker *ck, sym *callee, ast *site)
{
    if (!ck->fn) return;
    call_edge *e = arena_alloc(ck->c->ar, sizeof *e);
    if (!e) return;
    e->callee = callee;
    e->site = site;
    e->next = ck->fn->calls;
    ck->fn->calls = e;
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
    s->func = -1;
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
    if (!s || add_local(ck, s)) return NULL;
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

const req_field_desc cc_request_fields[] = {
    {"method", RF_METHOD, T_STR, ORIGIN_METHOD},
    {"path", RF_PATH, T_STR, ORIGIN_PATH},
    {"query", RF_QUERY, T_STR, ORIGIN_QUERY},
    {"client_ip", RF_CLIENT_IP, T_IP, ORIGIN_NONE},
    {"rdns", RF_RDNS, T_STR, ORIGIN_NONE},
    {"rdns_checked", RF_RDNS_CHECKED, T_BOOL, ORIGIN_NONE},
    {"signature_status", RF_SIGNATURE_STATUS, T_STR, ORIGIN_NONE},
    {"signature_agent", RF_SIGNATURE_AGENT, T_STR, ORIGIN_NONE},
    {"signature_keyid", RF_SIGNATURE_KEYID, T_STR, ORIGIN_NONE},
};
const unsigned cc_nrequest_fields = sizeof cc_request_fields / sizeof cc_request_fields[0];

/* Argument kinds of the built-in methods. */
enum { A_NONE, A_STRSET, A_REGEX, A_HDRNAME, A_STR, A_INT, A_GROUP };

typedef struct method_desc {
    const char *name;
    method_id id;
    ty recv;
    int nargs;
    unsigned char args[2]; /* A_* */
    ty result;
} method_desc;

static const method_desc methods[] = {
    {"len", M_LEN, T_STR, 0, {A_NONE, A_NONE}, T_INT},
    {"lower", M_LOWER, T_STR, 0, {A_NONE, A_NONE}, T_STR},
    {"contains", M_CONTAINS, T_STR, 1, {A_STRSET, A_NONE}, T_BOOL},
    {"starts_with", M_STARTS_WITH, T_STR, 1, {A_STRSET, A_NONE}, T_BOOL},
    {"ends_with", M_ENDS_WITH, T_STR, 1, {A_STRSET, A_NONE}, T_BOOL},
    {"equals", M_EQUALS, T_STR, 1, {A_STRSET, A_NONE}, T_BOOL},
    {"contains_word", M_CONTAINS_WORD, T_STR, 1, {A_STRSET, A_NONE}, T_BOOL},
    {"matches", M_MATCHES, T_STR, 1, {A_REGEX, A_NONE}, T_BOOL},
    {"index_of", M_INDEX_OF, T_STR, 1, {A_STR, A_NONE}, T_INT},
    {"capture", M_CAPTURE, T_STR, 2, {A_REGEX, A_GROUP}, T_STR},
    {"to_int", M_TO_INT, T_STR, 0, {A_NONE, A_NONE}, T_INT},
    {"trim", M_TRIM, T_STR, 0, {A_NONE, A_NONE}, T_STR},
    {"substr", M_SUBSTR, T_STR, 2, {A_INT, A_INT}, T_STR},
    {"to_ip", M_TO_IP, T_STR, 0, {A_NONE, A_NONE}, T_IP},
    {"valid", M_VALID, T_IP, 0, {A_NONE, A_NONE}, T_BOOL},
    {"asn", M_ASN, T_IP, 0, {A_NONE, A_NONE}, T_INT},
    {"asn_org", M_ASN_ORG, T_IP, 0, {A_NONE, A_NONE}, T_STR},
    {"country", M_COUNTRY, T_IP, 0, {A_NONE, A_NONE}, T_STR},
    {"header", M_HEADER, T_REQUEST, 1, {A_HDRNAME, A_NONE}, T_STR},
    {"has_header", M_HAS_HEADER, T_REQUEST, 1, {A_HDRNAME, A_NONE}, T_BOOL},
    {"cookie", M_COOKIE, T_REQUEST, 1, {A_STR, A_NONE}, T_STR},
    {"query_param", M_QUERY_PARAM, T_REQUEST, 1, {A_STR, A_NONE}, T_STR},
};

/* Checks argument `arg` of method `md` against kind `k`. */
static int check_method_arg(checker *ck, ast *e, const method_desc *md, int k, ast *arg)
{
    ty at = check_expr(ck, arg);
    if (at == T_ERROR) return -1;
    switch (k) {
    case A_STRSET:
        if (at != T_STR && at != T_SET) {
            ERR(ck, arg, "'%s' takes a str or a set, not %s", md->name, chk_type_names[at]);
            return -1;
        }
        return 0;
    case A_REGEX:
        if (at != T_REGEX) {
            ERR(ck, arg, "'%s' takes a regex literal such as /^abc/, not %s", md->name,
                chk_type_names[at]);
            return -1;
        }
        return 0;
    case A_HDRNAME:
        if (at != T_STR) {
            ERR(ck, arg, "'%s' takes a header name (str), not %s", md->name, chk_type_names[at]);
            return -1;
        }
        if (lowercase_header_name(ck, e, arg, &e->oname)) return -1;
        if (md->id == M_HEADER) e->origin = ORIGIN_HEADER;
        return 0;
    case A_STR:
    case A_INT:
        if (at != (k == A_STR ? T_STR : T_INT)) {
            ERR(ck, arg, "'%s' takes %s here, not %s", md->name, k == A_STR ? "a str" : "an int",
                chk_type_names[at]);
            return -1;
        }
        return 0;
    default: { /* A_GROUP */
        ast *lit = chk_literal(arg);
        if (!lit || (lit->kind != AST_INT && lit->kind != AST_STR)) {
            ERR(ck, arg, "the capture group must be a number or a group name, written as a "
                         "literal or constant");
            return -1;
        }
        if (lit->kind == AST_INT && (lit->ival < 0 || lit->ival > 65535)) {
            ERR(ck, arg, "capture group %lld does not exist", (long long)lit->ival);
            return -1;
        }
        return 0;
    }
    }
}

static ty type_from_name(const char *n)
{
    static const struct { const char *name; ty t; } names[] = {
        {"bool", T_BOOL}, {"int", T_INT}, {"str", T_STR}, {"ip", T_IP}, {"Request", T_REQUEST}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(n, names[i].name) == 0) return names[i].t;
    return T_NONE;
}

/* Resolves the fn or filter a call names: `f(...)` in this module, or
 * `mod.f(...)`. Sets *is_call to 0 when `e` is a method call instead.
 * Returns NULL (reported) when the name is wrong; `what` ("function",
 * "filter") is what a module's constant is said not to be. */
sym *chk_resolve_callee(checker *ck, ast *e, int *is_call, const char *what)
{
    *is_call = 1;
    sym *t;
    if (!e->a) {
        t = lookup(ck, e->str);
        if (!t) {
            ERR(ck, e, "unknown function '%s'", e->str);
            return NULL;
        }
        if (t->kind != SYM_FN && t->kind != SYM_FILTER) {
            t->used = 1; /* no "never read" warning on top of this error */
            ERR(ck, e, "'%s' is %s, not a function", e->str,
                t->kind == SYM_CONST ? "a constant" : t->kind == SYM_IMPORT ? "a module"
                : t->kind == SYM_PARAM ? "a parameter" : "a local");
            return NULL;
        }
        t->used = 1;
        return t;
    }
    sym *im = e->a->kind == AST_NAME ? lookup(ck, e->a->str) : NULL;
    if (!im || im->kind != SYM_IMPORT) {
        *is_call = 0;
        return NULL;
    }
    im->used = 1;
    e->a->type = T_MODULE;
    t = chk_lookup_global(im->mod, e->str);
    if (!t || t->kind == SYM_IMPORT) {
        ERR(ck, e, "module '%s' has no '%s'", e->a->str, e->str);
        return NULL;
    }
    if (t->kind != SYM_FN && t->kind != SYM_FILTER) {
        ERR(ck, e, "'%s.%s' is a constant, not a %s", e->a->str, e->str, what);
        return NULL;
    }
    if (!(t->decl->flags & AST_F_PUB)) {
        diag *d = ERR(ck, e, "'%s' is not public in module '%s'", e->str, e->a->str);
        src_note(ck->c->src, d, t->decl->file, t->decl->off, "declared here without `pub`");
        return NULL;
    }
    return t;
}

/* Checks the arguments of a call of `callee` against its parameters. */
static void check_call_args(checker *ck, ast *e, sym *callee)
{
    int nparams = 0, nargs = 0;
    for (ast *p = callee->decl->a; p; p = p->next) nparams++;
    for (ast *a = e->b; a; a = a->next) nargs++;
    if (nargs != nparams) {
        diag *d = ERR(ck, e, "'%s' takes %d argument%s, got %d", callee->name, nparams,
                      nparams == 1 ? "" : "s", nargs);
        src_note(ck->c->src, d, callee->decl->file, callee->decl->off, "'%s' is defined here",
                 callee->name);
        for (ast *a = e->b; a; a = a->next) check_expr(ck, a);
        return;
    }
    ast *p = callee->decl->a;
    for (ast *a = e->b; a; a = a->next, p = p->next) {
        ty at = check_expr(ck, a);
        if (at != T_ERROR && p->type != T_ERROR && at != p->type)
            ERR(ck, a, "argument '%s' of '%s' is %s, not %s", p->str, callee->name,
                chk_type_names[p->type], chk_type_names[at]);
    }
}

/* "f" or "mod.f": the name the call `e` is written with, for messages. */
const char *chk_called_name(checker *ck, const ast *e)
{
    if (!e->a || e->a->kind != AST_NAME) return e->str;
    size_t n = strlen(e->a->str) + strlen(e->str) + 2;
    char *q = arena_alloc(ck->c->ar, n);
    if (!q) return e->str;
    snprintf(q, n, "%s.%s", e->a->str, e->str);
    return q;
}

static ty check_call(checker *ck, ast *e)
{
    int is_call;
    if (chk_is_state_call(ck, e) && !lookup(ck, e->str)) return chk_state_call(ck, e);
    sym *callee = chk_resolve_callee(ck, e, &is_call, "function");
    if (is_call) {
        if (!callee) {
            for (ast *a = e->b; a; a = a->next) check_expr(ck, a);
            return T_ERROR;
        }
        if (callee->kind == SYM_FILTER) {
            const char *n = chk_called_name(ck, e);
            ERR(ck, e, "'%s' is a filter: it decides a verdict, so call it as a statement, "
                       "`%s(req)`", n, n);
            return T_ERROR;
        }
        check_call_args(ck, e, callee);
        e->sym = callee;
        e->method = M_FUNC;
        add_call(ck, callee, e);
        return callee->type;
    }
    ty rt = check_expr(ck, e->a);
    if (rt == T_IP && strcmp(e->str, "net") == 0) return chk_ip_net(ck, e);
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
        ERR(ck, e, "%s has no method '%s'", chk_type_names[rt], e->str);
        return T_ERROR;
    }
    if (nargs != md->nargs) {
        ERR(ck, e, "'%s' takes %d argument%s, got %d", md->name, md->nargs,
            md->nargs == 1 ? "" : "s", nargs);
        return T_ERROR;
    }
    e->method = md->id;
    /* A wrong argument is reported by check_method_arg; the result type
     * stands, since the call itself is well formed. */
    int k = 0;
    for (ast *a = e->b; a; a = a->next, k++) check_method_arg(ck, e, md, md->args[k], a);
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
            s->used = 1;
            if (t->kind != SYM_CONST) {
                ERR(ck, e, "'%s.%s' is a %s, not a value", e->a->str, e->str,
                    t->kind == SYM_FN ? "function: call it" : "filter");
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
        for (unsigned i = 0; i < cc_nrequest_fields; i++)
            if (strcmp(e->str, cc_request_fields[i].name) == 0) {
                e->origin = cc_request_fields[i].origin;
                e->field = cc_request_fields[i].id;
                return (ty)cc_request_fields[i].type;
            }
        if (strcmp(e->str, "header") == 0 || strcmp(e->str, "has_header") == 0 ||
            strcmp(e->str, "cookie") == 0 || strcmp(e->str, "query_param") == 0) {
            ERR(ck, e, "'%s' is a method: write %s(\"name\")", e->str, e->str);
        } else {
            char names[160];
            size_t o = 0;
            for (unsigned i = 0; i < cc_nrequest_fields && o < sizeof names; i++)
                o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "",
                                      cc_request_fields[i].name);
            ERR(ck, e, "Request has no field '%s' (fields: %s)", e->str, names);
        }
        return T_ERROR;
    }
    ERR(ck, e, "%s has no field '%s'", chk_type_names[ot], e->str);
    return T_ERROR;
}

static ty check_binary(checker *ck, ast *e)
{
    ty a = check_expr(ck, e->a), b = check_expr(ck, e->b);
    if (a == T_ERROR || b == T_ERROR) /* reported already: no knock-on errors */
        return e->kind >= AST_ADD && e->kind <= AST_MOD ? T_ERROR : T_BOOL;
    switch (e->kind) {
    case AST_OR:
    case AST_AND:
        if (a != T_BOOL) ERR(ck, e->a, "'%s' needs bool operands, not %s",
                             e->kind == AST_OR ? "||" : "&&", chk_type_names[a]);
        else if (b != T_BOOL) ERR(ck, e->b, "'%s' needs bool operands, not %s",
                                  e->kind == AST_OR ? "||" : "&&", chk_type_names[b]);
        return T_BOOL;
    case AST_ADD:
    case AST_SUB:
    case AST_MUL:
    case AST_DIV:
    case AST_MOD:
        if (a != T_INT || b != T_INT) {
            ERR(ck, e, "arithmetic needs int operands, not %s and %s%s", chk_type_names[a],
                chk_type_names[b],
                e->kind == AST_ADD && (a == T_STR || b == T_STR) ? " (strings are not joined with '+')" : "");
            return T_ERROR;
        }
        return T_INT;
    case AST_EQ:
    case AST_NE:
        if (a != b)
            ERR(ck, e, "cannot compare %s with %s", chk_type_names[a], chk_type_names[b]);
        else if (a != T_BOOL && a != T_INT && a != T_STR && a != T_IP)
            ERR(ck, e, "cannot compare %s values with '%s'%s", chk_type_names[a],
                e->kind == AST_EQ ? "==" : "!=",
                a == T_SET ? " (to test membership, write `x in SET`)" : "");
        return T_BOOL;
    case AST_IN:
        if (a == T_IP) {
            if (b != T_IPSET)
                ERR(ck, e->b, "'ip in' needs a set of addresses and prefixes on its right, "
                              "such as [10.0.0.0/8, ::1], not %s", chk_type_names[b]);
        } else if (a == T_INT) {
            if (b != T_INTSET)
                ERR(ck, e->b, "'int in' needs a set of integers on its right, such as "
                              "[16509, 14618], not %s", chk_type_names[b]);
        } else if (a != T_STR) {
            ERR(ck, e->a, "'in' tests a str, an int or an ip, not %s", chk_type_names[a]);
        } else if (b != T_SET) {
            ERR(ck, e->b, "'in' needs a set on its right, not %s", chk_type_names[b]);
        }
        return T_BOOL;
    default: /* < <= > >= */
        if (a != T_INT || b != T_INT)
            ERR(ck, e, "cannot order %s and %s (only int values are ordered)",
                chk_type_names[a], chk_type_names[b]);
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

ty chk_expr(checker *ck, ast *e)
{
    return check_expr(ck, e);
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
    case AST_IP:
        t = T_IP;
        if (e->flags & AST_F_PREFIX) {
            ERR(ck, e, "a prefix is not an address: test membership with `ip in [%.*s]`",
                (int)e->len, ck->c->src->files[e->file].text + e->off);
            t = T_ERROR;
        }
        break;
    case AST_IPSET: t = T_IPSET; break;
    case AST_INTSET: t = T_INTSET; break;
    case AST_NEG: {
        ty a = check_expr(ck, e->a);
        if (a != T_INT && a != T_ERROR) ERR(ck, e, "'-' needs an int, not %s", chk_type_names[a]);
        t = T_INT;
        break;
    }
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
        if (s->kind == SYM_FILTER || s->kind == SYM_FN) {
            ERR(ck, e, "'%s' is a %s, not a value", e->str,
                s->kind == SYM_FN ? "function: call it with ()" : "filter");
            break;
        }
        s->used = 1;
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
        if (a != T_BOOL && a != T_ERROR) ERR(ck, e, "'!' needs a bool, not %s", chk_type_names[a]);
        t = T_BOOL;
        break;
    }
    default: t = check_binary(ck, e); break;
    }
    return t;
}

/* ---- statements ---- */

/* Returns 1 when every path through the list ends the function: in
 * accept, reject or pass in a filter, in return in a fn. */
static int check_block(checker *ck, ast *block);

/* The statement call `f(req)` or `mod.f(req)`: only filters are called
 * for their effect. */
static void check_filter_call(checker *ck, ast *call)
{
    int is_call;
    sym *callee = chk_resolve_callee(ck, call, &is_call, "function");
    if (!is_call) {
        ERR(ck, call, "only a filter can be called as a statement");
        sym *y = call->a->kind == AST_NAME ? lookup(ck, call->a->str) : NULL;
        if (y) y->used = 1; /* no "never read" warning on top of this error */
        return;
    }
    if (!callee) return;
    if (callee->kind == SYM_FN) {
        const char *n = chk_called_name(ck, call);
        ERR(ck, call, "the value of '%s' is not used (a statement calls a filter; to use a "
                      "function's value, write `let x = %s(...)` or test it in `if`)", n, n);
        return;
    }
    if (IS_FN(ck)) {
        ERR(ck, call, "a function cannot call filter '%s': only filters decide verdicts",
            callee->name);
        return;
    }
    check_call_args(ck, call, callee);
    call->sym = callee;
    call->method = M_FUNC;
    add_call(ck, callee, call);
}

static int is_main_filter(checker *ck)
{
    return ck->fn && ck->fn->kind == SYM_FILTER && ck->m == ck->c->main &&
           strcmp(ck->fn->name, "main") == 0;
}

static int check_stmt(checker *ck, ast *s)
{
    switch (s->kind) {
    case AST_LET: {
        ty t = check_expr(ck, s->a);
        if (t == T_SET || t == T_REGEX || t == T_IPSET || t == T_INTSET) {
            ERR(ck, s->a, "a%s %s can only be bound with `const`",
                t == T_IPSET || t == T_INTSET ? "n" : "", chk_type_names[t]);
            t = T_ERROR;
        } else if (t == T_REQUEST) {
            ERR(ck, s->a, "a Request cannot be bound with `let`: use the parameter itself");
            t = T_ERROR;
        }
        sym *y = declare_local(ck, SYM_LOCAL, s, s->str);
        if (y) {
            y->type = t;
            y->mut = (s->flags & AST_F_MUT) != 0;
            /* A mutable local may come to hold anything: it is no longer
             * known to be a request field. */
            y->origin = y->mut ? ORIGIN_NONE : s->a->origin;
            y->oname = y->mut ? NULL : s->a->oname;
            s->sym = y;
        }
        return 0;
    }
    case AST_ASSIGN: {
        ty t = check_expr(ck, s->a);
        sym *y = lookup(ck, s->str);
        if (!y) {
            ERR(ck, s, "unknown name '%s'", s->str);
            return 0;
        }
        if (y->kind != SYM_LOCAL || !y->mut) {
            diag *d = ERR(ck, s, "cannot assign to '%s': it is not a `let mut` local", s->str);
            if (y->decl && y->kind == SYM_LOCAL)
                src_note(ck->c->src, d, y->decl->file, y->decl->off,
                         "declared here; write `let mut %s` to change it", s->str);
            return 0;
        }
        s->sym = y;
        if (t == T_ERROR || y->type == T_ERROR) return 0;
        if (s->ival && (y->type != T_INT || t != T_INT))
            ERR(ck, s, "'%s' needs int operands, not %s and %s", s->ival == AST_ADD ? "+=" : "-=",
                chk_type_names[y->type], chk_type_names[t]);
        else if (t != y->type)
            ERR(ck, s->a, "cannot assign %s to '%s', which is %s", chk_type_names[t], s->str,
                chk_type_names[y->type]);
        return 0;
    }
    case AST_IF: {
        ty t = check_expr(ck, s->a);
        if (t != T_BOOL && t != T_ERROR)
            ERR(ck, s->a, "the condition of 'if' must be bool, not %s", chk_type_names[t]);
        int then_ends = check_block(ck, s->b);
        if (!s->c) return 0;
        int else_ends = s->c->kind == AST_IF ? check_stmt(ck, s->c) : check_block(ck, s->c);
        return then_ends && else_ends;
    }
    case AST_ACCEPT:
    case AST_REJECT:
        if (IS_FN(ck)) {
            ERR(ck, s, "a function cannot %s: it returns a value, and a filter decides",
                s->kind == AST_ACCEPT ? "accept" : "reject");
            return 1;
        }
        if (s->a && s->a->slen == 0)
            ERR(ck, s->a, "empty reason: write `%s` without one",
                s->kind == AST_ACCEPT ? "accept" : "reject");
        return 1;
    case AST_PASS:
        ck->passes = 1;
        if (IS_FN(ck))
            ERR(ck, s, "a function cannot pass: it returns a value");
        else if (is_main_filter(ck))
            ERR(ck, s, "'main' must decide: `pass` is for filters that other filters call");
        return 1;
    case AST_RETURN: {
        ty t = check_expr(ck, s->a);
        if (!IS_FN(ck)) {
            ERR(ck, s, "`return` is for functions; a filter ends with accept, reject or pass");
            return 1;
        }
        if (t != T_ERROR && ck->fn->type != T_ERROR && t != ck->fn->type)
            ERR(ck, s->a, "function '%s' returns %s, not %s", ck->fn->name,
                chk_type_names[ck->fn->type], chk_type_names[t]);
        return 1;
    }
    case AST_EXPRSTMT:
        /* A state call as a statement: for what it writes (a mark, a
         * count), its value unused. */
        if (chk_is_state_call(ck, s->a) && !lookup(ck, s->a->str)) {
            check_expr(ck, s->a);
            return 0;
        }
        check_filter_call(ck, s->a);
        return 0;
    default:
        ERR(ck, s, "unexpected statement");
        return 0;
    }
}

/* Warns about the locals of `sc` never read, in the order they were
 * declared (the scope, about to end, lists them newest first: the list is
 * reversed in place). A local whose value was already reported as wrong
 * (T_ERROR) gets no warning on top. */
static void warn_unused(checker *ck, scope *sc)
{
    sym *rev = NULL;
    while (sc->syms) {
        sym *y = sc->syms;
        sc->syms = y->next;
        y->next = rev;
        rev = y;
    }
    sc->syms = rev;
    for (const sym *y = sc->syms; y; y = y->next)
        if (y->kind == SYM_LOCAL && !y->used && y->name[0] != '_' && y->type != T_ERROR)
            src_warning(ck->c->src, y->decl->file, y->decl->off,
                        "local '%s' is never read (prefix it with '_' to keep it)", y->name);
}

static int check_block(checker *ck, ast *block)
{
    scope sc = {ck->sc, NULL};
    ck->sc = &sc;
    int ends = 0, warned = 0;
    for (ast *s = block->a; s; s = s->next) {
        if (ends && !warned) {
            src_warning(ck->c->src, s->file, s->off,
                        "unreachable statement: every path before it has ended the %s",
                        IS_FN(ck) ? "function" : "filter");
            warned = 1;
        }
        if (check_stmt(ck, s)) ends = 1;
    }
    warn_unused(ck, &sc);
    end_scope(ck, &sc);
    ck->sc = sc.up;
    return ends;
}

/* The offset of the '}' closing `block`: that is where a path falls out. */
static uint32_t block_end(checker *ck, const ast *block)
{
    const src_file *sf = &ck->c->src->files[block->file];
    uint32_t end = block->off;
    int depth = 0;
    for (uint32_t i = block->off; i < sf->len; i++) {
        /* Good enough to find the matching brace: braces inside strings,
         * regexes and comments are rare in real rules, and a wrong guess
         * only moves the caret. */
        if (sf->text[i] == '{') depth++;
        else if (sf->text[i] == '}' && --depth == 0) {
            end = i;
            break;
        }
    }
    return end;
}

/* Resolves the parameter and return types of a fn or filter. */
static void check_signature(checker *ck, sym *f)
{
    ast *d = f->decl;
    int n = 0;
    for (ast *p = d->a; p; p = p->next) {
        n++;
        p->type = type_from_name(p->c->str);
        if (p->type == T_NONE) {
            ERR(ck, p->c, "unknown type '%s' (types: bool, int, str, ip, Request)", p->c->str);
            p->type = T_ERROR;
        } else if (d->kind == AST_FILTER && p->type != T_REQUEST) {
            ERR(ck, p->c, "a filter's parameter must have type Request, not '%s'", p->c->str);
        }
    }
    if (d->kind == AST_FILTER) {
        if (n != 1) ERR(ck, d, "filter '%s' must take exactly one parameter (req: Request)", d->str);
        f->type = T_NONE;
        return;
    }
    f->type = type_from_name(d->c->str);
    if (f->type == T_NONE || f->type == T_REQUEST) {
        ERR(ck, d->c, "a function returns bool, int, str or ip, not '%s'", d->c->str);
        f->type = T_ERROR;
    }
}

static void check_body(checker *ck, sym *f)
{
    ast *d = f->decl;
    scope sc = {NULL, NULL};
    ck->sc = &sc;
    ck->fn = f;
    unsigned nparams = 0;
    for (ast *p = d->a; p; p = p->next) {
        sym *y = declare_local(ck, SYM_PARAM, p, p->str);
        if (y) {
            y->type = p->type;
            p->sym = y;
        }
        if (p->type != T_REQUEST) nparams++;
    }
    /* Operand A of OP_CALL counts them in 8 bits (vm_func.nparams). */
    if (nparams > CC_MAX_PARAMS)
        src_error(ck->c->src, d->file, d->off, "'%s' has more than %d parameters", d->str,
                  CC_MAX_PARAMS);
    ck->passes = 0;
    int ends = check_block(ck, d->b);
    f->decides = ends && !ck->passes;
    if (!ends && d->kind == AST_FN)
        src_error(ck->c->src, d->file, block_end(ck, d->b),
                  "function '%s' can reach its end without returning a value", d->str);
    else if (!ends && is_main_filter(ck))
        src_error(ck->c->src, d->file, block_end(ck, d->b),
                  "filter '%s' can reach its end without accept or reject", d->str);
    /* The parameters' scope ends: forget every name of this body. */
    strmap_free(&ck->local_index);
    ck->nlocals = 0;
    ck->sc = NULL;
    ck->fn = NULL;
}

/* Declares a module's consts, filters, functions and import aliases. */
static void declare_globals(checker *ck, module *m)
{
    ck->m = m;
    for (ast *it = m->items; it; it = it->next) {
        if (it->kind == AST_TEST || it->kind == AST_REWRITE) continue;
        const char *name = it->kind == AST_IMPORT ? it->c->str : it->str;
        sym_kind k = it->kind == AST_IMPORT ? SYM_IMPORT
                     : it->kind == AST_CONST ? SYM_CONST
                     : it->kind == AST_FN ? SYM_FN : SYM_FILTER;
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
            v->kind != AST_SET && v->kind != AST_REGEX && v->kind != AST_IP &&
            v->kind != AST_IPSET && v->kind != AST_INTSET) {
            ERR(ck, v, "a constant's value must be a literal");
            if (it->sym) ((sym *)it->sym)->type = T_ERROR; /* no knock-on errors */
            continue;
        }
        sym *s = it->sym;
        if (s) s->type = check_expr(ck, v);
    }
}

static void check_signatures(checker *ck, module *m)
{
    ck->m = m;
    for (ast *it = m->items; it; it = it->next)
        if ((it->kind == AST_FILTER || it->kind == AST_FN) && it->sym) check_signature(ck, it->sym);
}

static void check_bodies(checker *ck, module *m)
{
    ck->m = m;
    for (ast *it = m->items; it; it = it->next) {
        if ((it->kind == AST_FILTER || it->kind == AST_FN) && it->sym) check_body(ck, it->sym);
        if (it->kind == AST_TEST) chk_test(ck, it);
    }
}

static void warn_unused_imports(checker *ck, module *m)
{
    for (uint32_t g = 0; g < m->nglobals; g++) {
        sym *s = m->global_vec[g];
        if (s->kind == SYM_IMPORT && !s->used)
            src_warning(ck->c->src, s->decl->file, s->decl->off, "import '%s' is never used",
                        s->name);
    }
}

int chk_program(compilation *c)
{
    checker ck = {.c = c};
    unsigned before = c->src->nerrors;
    for (module *m = c->modules; m; m = m->next) declare_globals(&ck, m);
    /* Constants and signatures first, everywhere, so that bodies see
     * their types wherever they are declared. */
    for (module *m = c->modules; m; m = m->next) check_consts(&ck, m);
    for (module *m = c->modules; m; m = m->next) check_signatures(&ck, m);
    for (module *m = c->modules; m; m = m->next) check_bodies(&ck, m);
    for (module *m = c->modules; m; m = m->next) chk_rewrites(&ck, m);
    for (module *m = c->modules; m; m = m->next) warn_unused_imports(&ck, m);
    chk_recursion(&ck);
    sym *main = chk_lookup_global(c->main, "main");
    /* A file of rewrite sets alone needs no main (docs/language.md). */
    if ((!main || main->kind != SYM_FILTER) && !c->testing && !chk_has_rewrites(c->main))
        src_error(c->src, c->main->file, 0, "no filter named 'main' in %s "
                  "(the entry point is `filter main(req: Request) { ... }`; a package without "
                  "one is checked by its tests, classifyc --test)",
                  c->src->files[c->main->file].path);
    free(ck.locals);
    if (c->ar->failed) src_error(c->src, UINT32_MAX, 0, "out of memory");
    return c->src->nerrors == before ? 0 : -1;
}
