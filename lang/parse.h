/*
 * parse.h: the parser's state, shared by the Lemon grammar (grammar.y),
 * the lexer driver (parse.c) and the actions.
 */
#ifndef LANG_PARSE_H
#define LANG_PARSE_H

#include "ast.h"
#include "source.h"

typedef struct lx_token {
    int kind;
    uint32_t off, len;
} lx_token;

typedef struct ps_state {
    src_set *src;
    arena *ar;
    uint32_t file;
    ast *items;   /* the file's top-level items, in order */
    int error;    /* a syntax error was reported: recover (parse.c) */
    int fatal;    /* the parser's stack overflowed: stop */
    int quiet;    /* finishing an abandoned parser: report nothing */
    uint32_t cur_off; /* offset of the token being parsed */
    /* Offsets of the '{' not yet closed in the current item, innermost
     * last (for "a '}' is missing" messages). */
    uint32_t *braces;
    uint32_t nbraces, capbraces;
} ps_state;

/* Lexer (lexer.re). */
typedef struct lexer {
    src_set *src;
    uint32_t file;
    const unsigned char *start, *cur, *lim;
    int prev; /* kind of the previous token, to tell a regex from a '/' */
    /* Inside a rewrite set's rules a '/' always starts a regex: a rule's
     * pattern may follow its predecessor's template, which ends an
     * operand, and rules have no division. 0: outside; 1: after
     * `rewrite`, before its '{'; 2: in its rules. */
    int rewrite;
} lexer;

void lx_init(lexer *lx, src_set *src, uint32_t file);
/* Scans the next token into *t. Returns its kind, 0 at end of input, or
 * -1 after reporting a lexical error. */
int lx_next(lexer *lx, lx_token *t);
/* Decodes the string literal token at text[off..off+len) (quotes
 * included, escapes already validated by the lexer) into the arena. */
char *lx_decode_string(arena *ar, const char *tok, uint32_t len, uint32_t *outlen);
/* The spelling of a token kind for messages ("'{'", "identifier", ...). */
const char *lx_kind_name(int kind);

/* Parses file `file` of `src`; returns its items. After a syntax or
 * lexical error it reports the error, skips to the next top-level item
 * and goes on (at most PS_MAX_ERRORS errors per file), so that it returns
 * the items without errors along with the errors: callers must look at
 * src->nerrors, not only at the result. Brackets, braces and runs of '!'
 * may nest at most `max_nesting` deep (0: only the parser's own stack
 * bounds them); going deeper stops the file's parse. */
#define PS_MAX_ERRORS 20
ast *ps_parse_file(src_set *src, arena *ar, uint32_t file, unsigned max_nesting);

/* Called from grammar actions. */
ast *ps_node(ps_state *ps, ast_kind kind, lx_token t);
ast *ps_string(ps_state *ps, lx_token t);
ast *ps_string_i(ps_state *ps, lx_token t);
ast *ps_regex(ps_state *ps, lx_token t);
ast *ps_int(ps_state *ps, lx_token t);
/* A node at `name` whose identifier is `name` (ASSIGN). */
ast *ps_named(ps_state *ps, ast_kind kind, lx_token t, lx_token name);
/* An IP address or CIDR literal, validated. */
ast *ps_ip(ps_state *ps, lx_token t);
/* -E: folds a literal integer, so `-5` is a literal. */
ast *ps_negate(ps_state *ps, lx_token t, ast *e);

#endif
