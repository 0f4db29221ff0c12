/*
 * check.h: the type checker's state, shared by its files (not part of the
 * compiler's interface, which is chk_program in compile.h):
 *
 *   check.c        scopes, expressions, statements, signatures, bodies
 *   check_tests.c  `test` blocks
 *   check_calls.c  the call graph: recursion and call depth
 *   check_rewrite.c  rewrite sets
 */
#ifndef LANG_CHECK_H
#define LANG_CHECK_H

#include "compile.h"
#include "strmap.h"

typedef struct scope {
    struct scope *up;
    sym *syms;
} scope;

typedef struct checker {
    compilation *c;
    module *m;
    scope *sc;
    /* The locals and parameters in scope in the body being checked, by
     * name: locals[i] is the sym of index i, NULL once its scope ended.
     * A name means one thing throughout a body (no shadowing), so one map
     * per body does, and lookups stay O(1) however many locals it has. */
    strmap local_index;
    sym **locals;
    uint32_t nlocals, caplocals;
    sym *fn;        /* the fn or filter whose body is being checked */
    unsigned depth; /* expression nesting (CC_MAX_EXPR_DEPTH) */
    int too_deep;   /* reported once */
    int passes;     /* the body being checked has a `pass` */
} checker;

/* Checking the body of a fn (not a filter). */
#define IS_FN(ck) ((ck)->fn && (ck)->fn->kind == SYM_FN)

/* An error at a node. */
#define ERR(ck, node, ...) src_error((ck)->c->src, (node)->file, (node)->off, __VA_ARGS__)

extern const char *const chk_type_names[]; /* by ty */

/* The fn or filter a call names (`f(...)` or `mod.f(...)`), NULL when
 * the name is wrong (reported); *is_call is 0 when `e` is a method call.
 * `what` ("function" or "filter") words the messages. */
sym *chk_resolve_callee(checker *ck, ast *e, int *is_call, const char *what);
/* The name a call is written with: "f" or "mod.f". */
const char *chk_called_name(checker *ck, const ast *e);
/* Checks one `test` item. */
void chk_test(checker *ck, ast *t);
/* Reports call cycles and chains deeper than VM_MAX_CALL_DEPTH. */
void chk_recursion(checker *ck);
/* Checks an expression (check.c), for the checker's other files. */
ty chk_expr(checker *ck, ast *e);
/* The state calls (check_state.c): whether `e` (a CALL) is one, that is
 * a call of count, count_of, score_add, score, mark or marked that no
 * definition of the program's shadows; and checking one, or ip.net(). */
int chk_is_state_call(checker *ck, const ast *e);
ty chk_state_call(checker *ck, ast *e);
ty chk_ip_net(checker *ck, ast *e);
/* Checks the rewrite sets of module m (check_rewrite.c). */
void chk_rewrites(checker *ck, module *m);

#endif
