/*
 * ast.h: the abstract syntax tree built by the parser (grammar.y), typed
 * by the checker (check.c) and lowered by the code generator (codegen.c).
 * All nodes live in the compilation's arena.
 */
#ifndef LANG_AST_H
#define LANG_AST_H

#include <stdint.h>
#include <stdio.h>

#include "arena.h"

/* Node kinds. Keep ast_kind_names (ast.c) in the same order. */
#define AST_KINDS(X)                                                        \
    X(IMPORT) X(CONST) X(FILTER) X(PARAM) X(FN) X(TEST) X(TDIR) X(EXPECT)  \
    X(BLOCK) X(LET) X(IF) X(ACCEPT) X(REJECT) X(PASS) X(RETURN) X(ASSIGN)  \
    X(EXPRSTMT)                                                            \
    X(OR) X(AND) X(NOT) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(IN)          \
    X(ADD) X(SUB) X(MUL) X(DIV) X(MOD) X(NEG)                              \
    X(MEMBER) X(CALL) X(NAME) X(INT) X(STR) X(BOOL) X(REGEX) X(SET)        \
    X(IP) X(IPSET) X(REWRITE) X(RWOPT) X(RWRULE)

typedef enum ast_kind {
#define X(k) AST_##k,
    AST_KINDS(X)
#undef X
    AST_KIND_COUNT
} ast_kind;

/* Static types. T_ERROR marks an expression already reported as wrong,
 * so that one mistake gives one message. */
typedef enum ty {
    T_NONE = 0, T_ERROR, T_BOOL, T_INT, T_STR, T_SET, T_REGEX, T_REQUEST,
    T_MODULE, T_IP, T_IPSET
} ty;

typedef struct ast ast;
struct ast {
    ast_kind kind;
    uint32_t file; /* source file index */
    uint32_t off;  /* byte offset of the node's key token */
    uint32_t len;  /* that token's length */
    ast *a, *b, *c; /* children; meaning depends on kind (see ast.c) */
    ast *next;     /* next item, statement, argument or set element */
    ast *tail;     /* list heads only: the last element, for O(1) appends */
    char *str;     /* NAME, MEMBER, CALL: identifier; STR/REGEX: bytes;
                      IP: the range, 16 bytes low then 16 bytes high */
    uint32_t slen; /* length of str in bytes (STR may contain NULs) */
    int64_t ival;  /* INT value; BOOL 0/1 */
    unsigned flags; /* AST_F_* */
    /* Filled by the checker. */
    ty type;
    void *sym;     /* NAME/MEMBER: the symbol it resolves to */
    int method;    /* CALL: method id (compile.h) */
    int field;     /* MEMBER of a Request: req_field (compile.h) */
    /* A str expression that is a request field read directly (or through
     * locals): codegen scans such values once per request. */
    int origin;    /* ORIGIN_* (compile.h) */
    char *oname;   /* ORIGIN_HEADER: lower-case header name */
};

enum {
    AST_F_PUB = 1,        /* CONST: visible to importers */
    AST_F_CASELESS = 2,   /* SET, REGEX: flag i */
    AST_F_DOTALL = 4,     /* REGEX: flag s */
    AST_F_MULTILINE = 8,  /* REGEX: flag m */
    AST_F_ALIAS = 16,     /* IMPORT: has an explicit `as` name */
    AST_F_MUT = 32,       /* LET: `let mut` */
    AST_F_PREFIX = 64,    /* IP: written with a /length */
    AST_F_ONCE = 128      /* RWRULE: `once` */
};

/* EXPECT: the verdict a test expects (ival). */
enum { AST_V_ACCEPT = 1, AST_V_REJECT = 2, AST_V_PASS = 3 };

extern const char *const ast_kind_names[AST_KIND_COUNT];

ast *ast_new(arena *ar, ast_kind kind, uint32_t file, uint32_t off, uint32_t len);
/* Appends `item` to the list starting at `list`; returns the list head. */
ast *ast_append(ast *list, ast *item);
/* Writes the tree as an S-expression, one top-level item per line (used
 * by golden tests of the parser). */
void ast_dump(const ast *items, FILE *out);

#endif
