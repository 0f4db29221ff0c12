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
        kind == AST_CALL || kind == AST_FN || kind == AST_TDIR || kind == AST_REWRITE ||
        kind == AST_RWOPT) {
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
    if (e && e->kind == AST_INT) {
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

/* `"..."i`: the string without its i, flagged case-insensitive. */
ast *ps_string_i(ps_state *ps, lx_token t)
{
    t.len--;
    ast *n = ps_string(ps, t);
    if (n) {
        n->len++;
        n->flags |= AST_F_CASELESS;
    }
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

static int is_comparison(int kind)
{
    return kind == TK_EQ || kind == TK_NE || kind == TK_LT || kind == TK_LE || kind == TK_GT ||
           kind == TK_GE || kind == TK_IN;
}

/* Tokens that only start a top-level item: where recovery resumes. */
static int starts_item(int kind)
{
    return kind == TK_IMPORT || kind == TK_CONST || kind == TK_PUB || kind == TK_FILTER ||
           kind == TK_FN || kind == TK_TEST || kind == TK_REWRITE;
}

/* Whether only blanks precede offset `off` on its line. */
static int first_on_line(const src_file *f, uint32_t off)
{
    for (; off > 0; off--) {
        char c = f->text[off - 1];
        if (c == '\n') return 1;
        if (c != ' ' && c != '\t' && c != '\r') return 0;
    }
    return 1;
}

/* The operator of a comparison token, without quotes, for messages. */
static const char *comparison_op(int kind)
{
    switch (kind) {
    case TK_EQ: return "==";
    case TK_NE: return "!=";
    case TK_LT: return "<";
    case TK_LE: return "<=";
    case TK_GT: return ">";
    case TK_GE: return ">=";
    default: return "in";
    }
}

/* Notes where the innermost '{' still open is. */
static void note_open_brace(ps_state *ps, diag *d)
{
    if (ps->nbraces)
        src_note(ps->src, d, ps->file, ps->braces[ps->nbraces - 1], "this '{' is not closed");
}

/* `chained`: the kind of the token below the expression on top of the
 * parser's stack (grammar.y), which is a comparison in `a < b < c`. */
void ps_syntax_error(ps_state *ps, lx_token t, int chained)
{
    if (ps->error) return;
    ps->error = 1;
    if (ps->quiet) return;
    src_file *f = &ps->src->files[ps->file];
    diag *d;
    if (t.kind == 0) {
        if (ps->nbraces) {
            d = src_error(ps->src, ps->file, t.off, "unexpected end of file: a '}' is missing");
            note_open_brace(ps, d);
        } else {
            src_error(ps->src, ps->file, t.off, "unexpected end of file");
        }
    } else if (is_comparison(t.kind) && is_comparison(chained)) {
        const char *a = comparison_op(chained), *b = comparison_op(t.kind);
        src_error(ps->src, ps->file, t.off,
                  "comparisons do not chain: write `a %s b && b %s c` or `(a %s b) %s c`", a, b,
                  a, b);
    } else if (starts_item(t.kind) && ps->nbraces && first_on_line(f, t.off)) {
        d = src_error(ps->src, ps->file, t.off,
                      "syntax error: unexpected %s (is a '}' missing before it?)",
                      lx_kind_name(t.kind));
        note_open_brace(ps, d);
    } else if (starts_item(t.kind) && !ps->nbraces) {
        /* Any item may start where the one before has ended. */
        src_error(ps->src, ps->file, t.off,
                  "syntax error: unexpected %s (the item before it is incomplete)",
                  lx_kind_name(t.kind));
    } else {
        src_error(ps->src, ps->file, t.off, "syntax error: unexpected %s",
                  lx_kind_name(t.kind));
    }
}

void ps_too_deep(ps_state *ps)
{
    if (ps->fatal) return;
    ps->error = ps->fatal = 1;
    if (ps->quiet) return;
    src_error(ps->src, ps->file, ps->cur_off,
              "nesting is too deep for the parser's stack (10000 entries; an else-if "
              "chain takes 4 per link)");
}

static int is_ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* After lx_next has reported a lexical error in the token starting at
 * t->off (it leaves the lexer there), moves the lexer past the bad text:
 * the rest of the line for an unterminated regex, the string up to its
 * closing quote (or the end of the line) for a bad escape or an
 * unterminated string, the letters and digits of an invalid number, a run
 * of non-ASCII bytes (one character), and otherwise the one bad byte.
 * Always moves at least one byte forward. */
static void lx_skip_error(lexer *lx, const lx_token *t)
{
    const unsigned char *p = lx->start + t->off, *lim = lx->lim;
    if (p >= lim) {
        lx->cur = lim;
        return;
    }
    if (*p == '"') {
        p++;
        while (p < lim && *p != '\n') {
            if (*p == '\\' && p + 1 < lim && p[1] != '\n') {
                p += 2;
                continue;
            }
            if (*p++ == '"') break;
        }
    } else if (*p == '/') {
        while (p < lim && *p != '\n') p++;
    } else if (*p >= '0' && *p <= '9') {
        while (p < lim && is_ident_char(*p)) p++;
    } else if (*p >= 0x80) {
        while (p < lim && *p >= 0x80) p++;
    } else {
        p++;
    }
    lx->cur = p;
}

static void push_brace(ps_state *ps, uint32_t off)
{
    if (ps->nbraces == ps->capbraces) {
        uint32_t cap = ps->capbraces ? ps->capbraces * 2 : 16;
        uint32_t *b = realloc(ps->braces, cap * sizeof *b);
        if (!b) return; /* only messages lose their note */
        ps->braces = b;
        ps->capbraces = cap;
    }
    ps->braces[ps->nbraces++] = off;
}

/*
 * Error recovery. The parser stops at the first syntax error of a
 * top-level item; the driver then drops that parser (what it built lives
 * in the arena), skips tokens until the braces opened since the item
 * began are closed and a token that only starts an item comes (import,
 * const, pub, filter, fn, test), and starts a fresh parser there, which
 * appends to the same item list. A token that starts an item is also a
 * restart point inside braces when it is the first on its line, since it
 * cannot appear inside a block: that recovers from a missing '}' without
 * losing the rest of the file. After a lexical error the lexer skips the
 * bad text (lx_skip_error); a stray ';' is then dropped and a single '&'
 * or '|' read as '&&' or '||' (the message says so), and parsing goes on;
 * any other lexical error abandons the item like a syntax error: the
 * abandoned parser is first given the end of input, silently, so that an
 * item it had finished (and not yet reduced, for want of a lookahead)
 * still counts. Lexical errors met while skipping are reported, since
 * they are errors wherever they are; syntax errors there are not, since
 * the item is already known to be wrong. Every restart consumes at least
 * one token, so this ends on any input; at most PS_MAX_ERRORS errors are
 * reported per file.
 *
 * The file's good items are returned with the errors. The compiler does
 * not type-check a program with syntax errors: mod_load_all fails on any
 * error, after loading the imports of the good items (so that their
 * syntax errors are reported too). Checking the good items as well would
 * need placeholders for the broken ones, or every use of a broken item's
 * name would be reported again as unknown; one wrong item giving one
 * message was preferred to reporting type errors in the same run.
 */
ast *ps_parse_file(src_set *src, arena *ar, uint32_t file, unsigned max_nesting)
{
    unsigned depth = 0, nots = 0, ntok = 0;
    ps_state ps = {.src = src, .ar = ar, .file = file};
    lexer lx;
    lx_token t;
    int pending = 0;  /* t is to be looked at again */
    int skipping = 0; /* skipping the rest of a wrong item */
    const unsigned errors_before = src->nerrors;
    void *p = clfParseAlloc(malloc);
    if (!p) {
        src_error(src, file, 0, "out of memory");
        return NULL;
    }
    lx_init(&lx, src, file);
    for (;;) {
        if (src->nerrors - errors_before >= PS_MAX_ERRORS) {
            src_note(src, src->last, UINT32_MAX, 0,
                     "%u errors in %s: not looking for more in this file", PS_MAX_ERRORS,
                     src->files[file].path);
            break;
        }
        int k;
        if (pending) {
            k = t.kind;
            pending = 0;
        } else {
            k = lx_next(&lx, &t);
        }
        if (k < 0) {
            unsigned char bad = (unsigned char)src->files[file].text[t.off];
            lx_skip_error(&lx, &t);
            if (skipping || bad == ';') continue; /* `;` ends nothing: parse on */
            if (bad == '&' || bad == '|') {
                /* Reported as "did you mean '&&' or '||'?": parse on as that. */
                k = t.kind = bad == '&' ? TK_ANDAND : TK_OROR;
                t.len = 1;
            } else {
                ps.quiet = 1;
                lx_token eof = {0, t.off, 0};
                clfParse(p, 0, eof, &ps);
                clfParseFree(p, free);
                p = NULL;
                ps.quiet = ps.error = 0;
                skipping = 1;
                continue;
            }
        }
        if (skipping) {
            if (k == 0) break;
            if (!starts_item(k) ||
                (ps.nbraces && !first_on_line(&src->files[file], t.off))) {
                if (k == TK_LBRACE) ps.nbraces++; /* counted only: not parsed */
                else if (k == TK_RBRACE && ps.nbraces) ps.nbraces--;
                continue;
            }
            p = clfParseAlloc(malloc);
            if (!p) {
                src_error(src, file, t.off, "out of memory");
                break;
            }
            skipping = 0;
            depth = nots = ntok = 0;
            ps.nbraces = 0;
        }
        /* Bound nesting before the parser's stack does, with a message
         * that names the option. */
        if (k == TK_LPAREN || k == TK_LBRACKET || k == TK_LBRACE) depth++;
        else if ((k == TK_RPAREN || k == TK_RBRACKET || k == TK_RBRACKET_I || k == TK_RBRACE) && depth)
            depth--;
        if (k == TK_LBRACE) push_brace(&ps, t.off);
        else if (k == TK_RBRACE && ps.nbraces) ps.nbraces--;
        nots = k == TK_NOT ? nots + 1 : 0;
        if (max_nesting && (depth > max_nesting || nots > max_nesting)) {
            src_error(src, file, t.off, "nesting deeper than %u levels (classifyc --max-nesting)",
                      max_nesting);
            break;
        }
        ps.cur_off = t.off;
        clfParse(p, k, t, &ps);
        ntok++;
        if (ps.fatal || k == 0) break;
        if (ps.error) {
            clfParseFree(p, free);
            p = NULL;
            ps.error = 0;
            skipping = 1;
            /* A fresh parser takes any token that starts an item, so the
             * one in error may be where the next item starts; but never
             * the first token of a parser again, or this could loop. */
            pending = starts_item(k) && ntok > 1;
        }
    }
    if (p) clfParseFree(p, free);
    free(ps.braces);
    if (ar->failed) {
        src_error(src, file, 0, "out of memory");
        return NULL;
    }
    return ps.items;
}
