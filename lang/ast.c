/*
 * ast.c: node construction and the S-expression dump.
 *
 * Children by kind:
 *   IMPORT  str = path, c = alias NAME (or NULL)
 *   CONST   str = name, a = value
 *   FILTER  str = name, a = PARAM list, b = BLOCK
 *   FN      str = name, a = PARAM list, b = BLOCK, c = return type NAME
 *   PARAM   str = name, c = type NAME
 *   TEST    a = name STR, b = list of TDIR and EXPECT
 *   TDIR    str = directive (method, target, header, peer, trust),
 *           a, b = its STR arguments (b: header value only)
 *   EXPECT  ival = AST_V_*, a = reason STR or NULL, c = filter NAME or
 *           MEMBER (NULL: main); expect-rate: flags AST_F_RATE_LE or _GE,
 *           b = the rate STR ("0.1%")
 *   BLOCK   a = statement list
 *   LET     str = name, a = value; flags AST_F_MUT
 *   ASSIGN  str = name, a = value, ival = AST_ADD / AST_SUB for += / -=
 *   IF      a = condition, b = BLOCK, c = else (BLOCK, IF or NULL)
 *   ACCEPT/REJECT  a = reason STR or NULL
 *   RETURN  a = value
 *   EXPRSTMT a = the call
 *   OR..MOD a, b = operands (NOT, NEG: a)
 *   MEMBER  a = object, str = member name
 *   CALL    a = receiver (NULL for a function call f(x)), str = method or
 *           function name, b = argument list
 *   SET     a = element list (STR)
 *   IP      str = 32 bytes: range low, range high (one address: equal)
 *   IPSET   a = element list (IP)
 *   INTSET  a = element list (INT)
 */
#include <string.h>

#include "ast.h"
#include "ipaddr.h"

const char *const ast_kind_names[AST_KIND_COUNT] = {
#define X(k) #k,
    AST_KINDS(X)
#undef X
};

ast *ast_new(arena *ar, ast_kind kind, uint32_t file, uint32_t off, uint32_t len)
{
    ast *n = arena_alloc(ar, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->file = file;
    n->off = off;
    n->len = len;
    return n;
}

ast *ast_append(ast *list, ast *item)
{
    if (!item) return list;
    if (!list) {
        item->tail = item;
        return item;
    }
    if (!list->tail) /* a head that started as a single node */
        for (list->tail = list; list->tail->next;) list->tail = list->tail->next;
    list->tail->next = item;
    list->tail = item;
    return list;
}

static void dump_bytes(const char *s, uint32_t n, char quote, FILE *out)
{
    fputc(quote, out);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == (unsigned char)quote || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
    }
    fputc(quote, out);
}

static void dump(const ast *n, FILE *out);

static void dump_list(const ast *n, FILE *out)
{
    for (; n; n = n->next) {
        fputc(' ', out);
        dump(n, out);
    }
}

/* Operator chains nest the tree without bound; stop printing (and
 * recursing) at a depth no real program reaches. */
static unsigned dump_depth;

static void dump_node(const ast *n, FILE *out);

static void dump(const ast *n, FILE *out)
{
    if (dump_depth >= 10000) {
        fputs("...", out);
        return;
    }
    dump_depth++;
    dump_node(n, out);
    dump_depth--;
}

static void dump_node(const ast *n, FILE *out)
{
    if (!n) {
        fputs("()", out);
        return;
    }
    switch (n->kind) {
    case AST_NAME: fputs(n->str, out); return;
    case AST_INT: fprintf(out, "%lld", (long long)n->ival); return;
    case AST_BOOL: fputs(n->ival ? "true" : "false", out); return;
    case AST_STR:
        dump_bytes(n->str, n->slen, '"', out);
        if (n->flags & AST_F_CASELESS) fputc('i', out);
        return;
    case AST_REGEX:
        dump_bytes(n->str, n->slen, '/', out);
        if (n->flags & AST_F_CASELESS) fputc('i', out);
        if (n->flags & AST_F_MULTILINE) fputc('m', out);
        if (n->flags & AST_F_DOTALL) fputc('s', out);
        return;
    default: break;
    }
    fprintf(out, "(%s", ast_kind_names[n->kind]);
    switch (n->kind) {
    case AST_IMPORT:
        fputc(' ', out);
        dump_bytes(n->str, n->slen, '"', out);
        if (n->c) fprintf(out, " as %s", n->c->str);
        break;
    case AST_CONST:
        fprintf(out, "%s %s ", n->flags & AST_F_PUB ? " pub" : "", n->str);
        dump(n->a, out);
        break;
    case AST_FILTER:
    case AST_FN:
        fprintf(out, "%s %s (", n->flags & AST_F_PUB ? " pub" : "", n->str);
        for (const ast *p = n->a; p; p = p->next)
            fprintf(out, "%s%s: %s", p == n->a ? "" : ", ", p->str, p->c->str);
        fputs(") ", out);
        if (n->kind == AST_FN) fprintf(out, "-> %s ", n->c->str);
        dump(n->b, out);
        break;
    case AST_TEST:
        fputc(' ', out);
        dump(n->a, out);
        dump_list(n->b, out);
        break;
    case AST_TDIR:
        fprintf(out, " %s ", n->str);
        dump(n->a, out);
        if (n->b) {
            fputc(' ', out);
            dump(n->b, out);
        }
        break;
    case AST_EXPECT:
        if (n->c) {
            fputc(' ', out);
            dump(n->c, out);
        }
        fputs(n->ival == AST_V_ACCEPT ? " accept" : n->ival == AST_V_REJECT ? " reject" : " pass", out);
        if (n->a) {
            fputc(' ', out);
            dump(n->a, out);
        }
        if (n->flags & (AST_F_RATE_LE | AST_F_RATE_GE)) {
            fputs(n->flags & AST_F_RATE_LE ? " rate<= " : " rate>= ", out);
            dump(n->b, out);
        }
        break;
    case AST_ASSIGN:
        fprintf(out, " %s%s ", n->str, n->ival == AST_ADD ? " +=" : n->ival == AST_SUB ? " -=" : "");
        dump(n->a, out);
        break;
    case AST_PASS: break;
    case AST_IP: {
        char lo[VM_IP_TEXT_MAX], hi[VM_IP_TEXT_MAX];
        vm_ip_format((const uint8_t *)n->str, lo, sizeof lo);
        vm_ip_format((const uint8_t *)n->str + 16, hi, sizeof hi);
        fprintf(out, " %s %s", lo, hi);
        break;
    }
    case AST_IPSET: dump_list(n->a, out); break;
    case AST_INTSET: dump_list(n->a, out); break;
    case AST_REWRITE:
        fprintf(out, " %s", n->str);
        dump_list(n->a, out);
        dump_list(n->b, out);
        break;
    case AST_RWOPT:
        fprintf(out, " %s ", n->str);
        dump(n->a, out);
        break;
    case AST_RWRULE:
        fputc(' ', out);
        dump(n->a, out);
        fputc(' ', out);
        dump(n->b, out);
        if (n->flags & AST_F_ONCE) fputs(" once", out);
        break;
    case AST_BLOCK: dump_list(n->a, out); break;
    case AST_LET:
        fprintf(out, "%s %s ", n->flags & AST_F_MUT ? " mut" : "", n->str);
        dump(n->a, out);
        break;
    case AST_IF:
        fputc(' ', out);
        dump(n->a, out);
        fputc(' ', out);
        dump(n->b, out);
        if (n->c) {
            fputc(' ', out);
            dump(n->c, out);
        }
        break;
    case AST_ACCEPT:
    case AST_REJECT:
        if (n->a) {
            fputc(' ', out);
            dump(n->a, out);
        }
        break;
    case AST_MEMBER:
        fputc(' ', out);
        dump(n->a, out);
        fprintf(out, " %s", n->str);
        break;
    case AST_CALL:
        fputc(' ', out);
        dump(n->a, out);
        fprintf(out, " %s", n->str);
        dump_list(n->b, out);
        break;
    case AST_SET:
        if (n->flags & AST_F_CASELESS) fputs(" i", out);
        dump_list(n->a, out);
        break;
    default:
        fputc(' ', out);
        dump(n->a, out);
        if (n->b) {
            fputc(' ', out);
            dump(n->b, out);
        }
        break;
    }
    fputc(')', out);
}

void ast_dump(const ast *items, FILE *out)
{
    for (const ast *n = items; n; n = n->next) {
        dump(n, out);
        fputc('\n', out);
    }
}
