/*
 * parse.c: drives the lexer and the Lemon parser over one file, and holds
 * the small helpers the grammar actions call.
 */
#include <stdlib.h>
#include <string.h>

#include "grammar.h"
#include "ipaddr.h"
#include "parse.h"

/* Lemon's generated entry points (grammar.h only has token numbers). */
void *clfParseAlloc(void *(*malloc_fn)(size_t));
void clfParse(void *parser, int kind, lx_token tok, ps_state *ps);
void clfParseFree(void *parser, void (*free_fn)(void *));

ast *ps_node(ps_state *ps, ast_kind kind, lx_token t)
{
    ast *n = ast_new(ps->ar, kind, ps->file, t.off, t.len);
    if (!n) return NULL;
    if (kind == AST_NAME || kind == AST_CONST || kind == AST_LET ||
        kind == AST_FILTER || kind == AST_PARAM || kind == AST_MEMBER ||
        kind == AST_CALL || kind == AST_FN || kind == AST_TDIR) {
        n->str = arena_strndup(ps->ar, ps->src->files[ps->file].text + t.off, t.len);
        n->slen = t.len;
    }
    return n;
}

ast *ps_named(ps_state *ps, ast_kind kind, lx_token t, lx_token name)
{
    (void)t;
    ast *n = ast_new(ps->ar, kind, ps->file, name.off, name.len);
    if (!n) return NULL;
    n->str = arena_strndup(ps->ar, ps->src->files[ps->file].text + name.off, name.len);
    n->slen = name.len;
    return n;
}

ast *ps_ip(ps_state *ps, lx_token t)
{
    ast *n = ast_new(ps->ar, AST_IP, ps->file, t.off, t.len);
    if (!n) return NULL;
    const char *text = ps->src->files[ps->file].text + t.off;
    vm_iprange r;
    n->str = arena_alloc(ps->ar, 32);
    n->slen = 32;
    if (!n->str) return n;
    if (memchr(text, '/', t.len)) n->flags |= AST_F_PREFIX;
    if (!vm_iprange_parse(text, t.len, &r)) {
        src_error(ps->src, ps->file, t.off, "invalid IP address%s '%.*s'",
                  n->flags & AST_F_PREFIX ? " prefix" : "", (int)t.len, text);
        memset(n->str, 0, 32);
        return n;
    }
    memcpy(n->str, r.lo, 16);
    memcpy(n->str + 16, r.hi, 16);
    return n;
}

ast *ps_negate(ps_state *ps, lx_token t, ast *e)
{
    if (e && e->kind == AST_INT && !(e->flags & AST_F_PREFIX)) {
        e->ival = -e->ival; /* no overflow: literals are at most INT64_MAX */
        e->off = t.off;
        return e;
    }
    ast *n = ps_node(ps, AST_NEG, t);
    if (n) n->a = e;
    return n;
}

ast *ps_string(ps_state *ps, lx_token t)
{
    ast *n = ast_new(ps->ar, AST_STR, ps->file, t.off, t.len);
    if (!n) return NULL;
    n->str = lx_decode_string(ps->ar, ps->src->files[ps->file].text + t.off, t.len, &n->slen);
    return n;
}

ast *ps_regex(ps_state *ps, lx_token t)
{
    const char *text = ps->src->files[ps->file].text + t.off;
    uint32_t end = t.len - 1;
    while (text[end] != '/') end--; /* flags follow the closing slash */
    ast *n = ast_new(ps->ar, AST_REGEX, ps->file, t.off, t.len);
    if (!n) return NULL;
    n->str = arena_strndup(ps->ar, text + 1, end - 1);
    n->slen = end - 1;
    for (uint32_t i = end + 1; i < t.len; i++) {
        switch (text[i]) {
        case 'i': n->flags |= AST_F_CASELESS; break;
        case 's': n->flags |= AST_F_DOTALL; break;
        case 'm': n->flags |= AST_F_MULTILINE; break;
        default:
            src_error(ps->src, ps->file, t.off + i,
                      "unknown regex flag '%c' (flags are i, m and s)", text[i]);
        }
    }
    return n;
}

ast *ps_int(ps_state *ps, lx_token t)
{
    ast *n = ast_new(ps->ar, AST_INT, ps->file, t.off, t.len);
    if (!n) return NULL;
    const char *s = ps->src->files[ps->file].text + t.off;
    uint64_t v = 0;
    for (uint32_t i = 0; i < t.len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_C(9223372036854775807) - d) / 10) {
            src_error(ps->src, ps->file, t.off, "integer literal is larger than %s",
                      "9223372036854775807");
            return n;
        }
        v = v * 10 + d;
    }
    n->ival = (int64_t)v;
    return n;
}

void ps_syntax_error(ps_state *ps, lx_token t)
{
    if (ps->error) return;
    ps->error = 1;
    if (t.kind == 0)
        src_error(ps->src, ps->file, t.off, "unexpected end of file");
    else
        src_error(ps->src, ps->file, t.off, "syntax error: unexpected %s",
                  lx_kind_name(t.kind));
}

void ps_too_deep(ps_state *ps)
{
    if (ps->error) return;
    ps->error = 1;
    src_error(ps->src, ps->file, ps->cur_off,
              "nesting is too deep for the parser's stack (10000 entries; an else-if "
              "chain takes 4 per link)");
}

ast *ps_parse_file(src_set *src, arena *ar, uint32_t file, unsigned max_nesting)
{
    unsigned depth = 0, nots = 0;
    ps_state ps = {.src = src, .ar = ar, .file = file};
    lexer lx;
    lx_token t;
    unsigned errors_before = src->nerrors;
    void *p = clfParseAlloc(malloc);
    if (!p) {
        src_error(src, file, 0, "out of memory");
        return NULL;
    }
    lx_init(&lx, src, file);
    for (;;) {
        int k = lx_next(&lx, &t);
        if (k < 0) {
            ps.error = 1;
            break;
        }
        /* Bound nesting before the parser's stack does, with a message
         * that names the option. */
        if (k == TK_LPAREN || k == TK_LBRACKET || k == TK_LBRACE) depth++;
        else if ((k == TK_RPAREN || k == TK_RBRACKET || k == TK_RBRACKET_I || k == TK_RBRACE) && depth)
            depth--;
        nots = k == TK_NOT ? nots + 1 : 0;
        if (max_nesting && (depth > max_nesting || nots > max_nesting)) {
            src_error(src, file, t.off, "nesting deeper than %u levels (classifyc --max-nesting)",
                      max_nesting);
            ps.error = 1;
            break;
        }
        ps.cur_off = t.off;
        clfParse(p, k, t, &ps);
        if (ps.error || k == 0) break;
    }
    clfParseFree(p, free);
    if (ar->failed) {
        src_error(src, file, 0, "out of memory");
        return NULL;
    }
    return src->nerrors == errors_before ? ps.items : NULL;
}
