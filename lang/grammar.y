/*
 * grammar.y: the .clf grammar, for the Lemon parser generator. The lexer
 * (lexer.re) pushes tokens; actions build the AST (ast.h). docs/language.md
 * carries the same grammar in EBNF.
 *
 * Statements need no separators: every statement starts with a keyword
 * (let, if, accept, reject) that cannot continue an expression.
 */
%name clfParse
%token_prefix TK_
%token_type { lx_token }
%extra_argument { ps_state *ps }
%default_type { ast * }
%stack_size 10000

%include {
#include <assert.h>
#include <stdlib.h>
#include "parse.h"
void ps_syntax_error(ps_state *ps, lx_token t, int chained);
void ps_too_deep(ps_state *ps);
}

%syntax_error {
    (void)yymajor;
    /* The stack ending in a comparison and an expression means that
     * `a < b` is followed by the token in error: pass the comparison
     * on, so that `a < b < c` gets its own message. */
    int chained = 0;
    if (yypParser->yytos - yypParser->yystack >= 2 && yypParser->yytos->major >= YYNTOKEN)
        chained = yypParser->yytos[-1].major;
    ps_syntax_error(ps, TOKEN, chained);
}
%stack_overflow { ps_too_deep(ps); }

/* Tokens, lowest precedence first. */
%left OROR.
%left ANDAND.
%nonassoc EQ NE LT LE GT GE IN.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right NOT.
%left DOT.
%token IMPORT AS PUB CONST FILTER LET IF ELSE ACCEPT REJECT TRUE FALSE
       IDENT INT STRING REGEX LPAREN RPAREN LBRACE RBRACE LBRACKET RBRACKET
       RBRACKET_I COMMA COLON ASSIGN FN RETURN MUT PASS TEST EXPECT ARROW
       PLUSEQ MINUSEQ IP REWRITE ONCE FATARROW STRING_I EXPECT_RATE
       EXPECT_STATE.

file ::= items.

items ::= items item(I).        { ps->items = ast_append(ps->items, I); }
items ::= .

item(N) ::= IMPORT(T) STRING(S).
    { N = ps_string(ps, S); if (N) { N->kind = AST_IMPORT; N->off = T.off; N->len = T.len; } }
item(N) ::= IMPORT(T) STRING(S) AS IDENT(A).
    { N = ps_string(ps, S);
      if (N) { N->kind = AST_IMPORT; N->off = T.off; N->len = T.len;
               N->c = ps_node(ps, AST_NAME, A); N->flags |= AST_F_ALIAS; } }
item(N) ::= CONST IDENT(I) ASSIGN expr(E).
    { N = ps_node(ps, AST_CONST, I); if (N) N->a = E; }
item(N) ::= PUB CONST IDENT(I) ASSIGN expr(E).
    { N = ps_node(ps, AST_CONST, I); if (N) { N->a = E; N->flags |= AST_F_PUB; } }
item(N) ::= FILTER IDENT(I) LPAREN params(P) RPAREN block(B).
    { N = ps_node(ps, AST_FILTER, I); if (N) { N->a = P; N->b = B; } }
item(N) ::= PUB FILTER IDENT(I) LPAREN params(P) RPAREN block(B).
    { N = ps_node(ps, AST_FILTER, I); if (N) { N->a = P; N->b = B; N->flags |= AST_F_PUB; } }
item(N) ::= fndef(F).     { N = F; }
item(N) ::= PUB fndef(F). { N = F; if (N) N->flags |= AST_F_PUB; }
item(N) ::= TEST(T) STRING(S) LBRACE tstmts(L) RBRACE.
    { N = ps_node(ps, AST_TEST, T); if (N) { N->a = ps_string(ps, S); N->b = L; } }
item(N) ::= REWRITE IDENT(I) LBRACE rwrules(R) RBRACE.
    { N = ps_node(ps, AST_REWRITE, I); if (N) N->b = R; }
item(N) ::= REWRITE IDENT(I) LPAREN rwopts(O) optcomma RPAREN LBRACE rwrules(R) RBRACE.
    { N = ps_node(ps, AST_REWRITE, I); if (N) { N->a = O; N->b = R; } }
item(N) ::= REWRITE IDENT(I) LPAREN RPAREN LBRACE rwrules(R) RBRACE.
    { N = ps_node(ps, AST_REWRITE, I); if (N) N->b = R; }

/* Rewrite sets: options, then rules `PATTERN => TEMPLATE [once]`. A rule
 * ends where the next begins (a pattern cannot continue a template), so
 * rules need no separators either; a comma between them is allowed. */
rwopts(L) ::= rwopt(O).                   { L = O; }
rwopts(L) ::= rwopts(L0) COMMA rwopt(O).  { L = ast_append(L0, O); }
rwopt(N) ::= IDENT(K) COLON expr(E).      { N = ps_node(ps, AST_RWOPT, K); if (N) N->a = E; }
rwrules(L) ::= rwrules(L0) rwrule(R).     { L = ast_append(L0, R); }
rwrules(L) ::= rwrules(L0) rwrule(R) COMMA. { L = ast_append(L0, R); }
rwrules(L) ::= .                          { L = NULL; }
rwrule(N) ::= rwpat(P) FATARROW(T) expr(E).
    { N = ps_node(ps, AST_RWRULE, T); if (N) { N->a = P; N->b = E; } }
rwrule(N) ::= rwpat(P) FATARROW(T) expr(E) ONCE.
    { N = ps_node(ps, AST_RWRULE, T); if (N) { N->a = P; N->b = E; N->flags |= AST_F_ONCE; } }
rwpat(N) ::= STRING(S).   { N = ps_string(ps, S); }
rwpat(N) ::= STRING_I(S). { N = ps_string_i(ps, S); }
rwpat(N) ::= REGEX(R).    { N = ps_regex(ps, R); }
rwpat(N) ::= IDENT(I).    { N = ps_node(ps, AST_NAME, I); }
rwpat(N) ::= IDENT(M) DOT IDENT(I).
    { N = ps_node(ps, AST_MEMBER, I); if (N) N->a = ps_node(ps, AST_NAME, M); }

fndef(N) ::= FN IDENT(I) LPAREN RPAREN ARROW IDENT(R) block(B).
    { N = ps_node(ps, AST_FN, I); if (N) { N->b = B; N->c = ps_node(ps, AST_NAME, R); } }
fndef(N) ::= FN IDENT(I) LPAREN params(P) RPAREN ARROW IDENT(R) block(B).
    { N = ps_node(ps, AST_FN, I); if (N) { N->a = P; N->b = B; N->c = ps_node(ps, AST_NAME, R); } }

/* Test blocks: directives that build a request, and expectations. */
tstmts(L) ::= tstmts(L0) tstmt(S). { L = ast_append(L0, S); }
tstmts(L) ::= .                    { L = NULL; }
tstmt(N) ::= IDENT(I) STRING(A).
    { N = ps_node(ps, AST_TDIR, I); if (N) N->a = ps_string(ps, A); }
tstmt(N) ::= IDENT(I) STRING(A) STRING(B).
    { N = ps_node(ps, AST_TDIR, I); if (N) { N->a = ps_string(ps, A); N->b = ps_string(ps, B); } }
tstmt(N) ::= EXPECT(T) verdict(V).
    { N = V; if (N) { N->off = T.off; N->len = T.len; } }
tstmt(N) ::= EXPECT(T) fref(F) verdict(V).
    { N = V; if (N) { N->off = T.off; N->len = T.len; N->c = F; } }
/* expect-rate [FILTER] VERDICT (<= | >=) "P%": over a test's `uas` file. */
tstmt(N) ::= EXPECT_RATE(T) verdict(V) LE STRING(P).
    { N = V; if (N) { N->off = T.off; N->len = T.len; N->flags |= AST_F_RATE_LE; N->b = ps_string(ps, P); } }
tstmt(N) ::= EXPECT_RATE(T) verdict(V) GE STRING(P).
    { N = V; if (N) { N->off = T.off; N->len = T.len; N->flags |= AST_F_RATE_GE; N->b = ps_string(ps, P); } }
tstmt(N) ::= EXPECT_RATE(T) fref(F) verdict(V) LE STRING(P).
    { N = V; if (N) { N->off = T.off; N->len = T.len; N->c = F; N->flags |= AST_F_RATE_LE; N->b = ps_string(ps, P); } }
tstmt(N) ::= EXPECT_RATE(T) fref(F) verdict(V) GE STRING(P).
    { N = V; if (N) { N->off = T.off; N->len = T.len; N->c = F; N->flags |= AST_F_RATE_GE; N->b = ps_string(ps, P); } }
/* expect-state "NAME KEY" "VALUE": the store after the request. */
tstmt(N) ::= EXPECT_STATE(T) STRING(A) STRING(B).
    { N = ps_node(ps, AST_TDIR, T); if (N) { N->a = ps_string(ps, A); N->b = ps_string(ps, B); } }
fref(N) ::= IDENT(I).   { N = ps_node(ps, AST_NAME, I); }
fref(N) ::= IDENT(M) DOT IDENT(I).
    { N = ps_node(ps, AST_MEMBER, I); if (N) N->a = ps_node(ps, AST_NAME, M); }
verdict(N) ::= ACCEPT(T).           { N = ps_node(ps, AST_EXPECT, T); if (N) N->ival = AST_V_ACCEPT; }
verdict(N) ::= ACCEPT(T) STRING(S). { N = ps_node(ps, AST_EXPECT, T); if (N) { N->ival = AST_V_ACCEPT; N->a = ps_string(ps, S); } }
verdict(N) ::= REJECT(T).           { N = ps_node(ps, AST_EXPECT, T); if (N) N->ival = AST_V_REJECT; }
verdict(N) ::= REJECT(T) STRING(S). { N = ps_node(ps, AST_EXPECT, T); if (N) { N->ival = AST_V_REJECT; N->a = ps_string(ps, S); } }
verdict(N) ::= PASS(T).             { N = ps_node(ps, AST_EXPECT, T); if (N) N->ival = AST_V_PASS; }

params(L) ::= param(P).                 { L = P; }
params(L) ::= params(L0) COMMA param(P). { L = ast_append(L0, P); }
param(N) ::= IDENT(I) COLON IDENT(T).
    { N = ps_node(ps, AST_PARAM, I); if (N) N->c = ps_node(ps, AST_NAME, T); }

block(N) ::= LBRACE(T) stmts(S) RBRACE. { N = ps_node(ps, AST_BLOCK, T); if (N) N->a = S; }

stmts(L) ::= stmts(L0) stmt(S). { L = ast_append(L0, S); }
stmts(L) ::= .                  { L = NULL; }

stmt(N) ::= LET IDENT(I) ASSIGN expr(E). { N = ps_node(ps, AST_LET, I); if (N) N->a = E; }
stmt(N) ::= LET MUT IDENT(I) ASSIGN expr(E).
    { N = ps_node(ps, AST_LET, I); if (N) { N->a = E; N->flags |= AST_F_MUT; } }
stmt(N) ::= IDENT(I) ASSIGN(T) expr(E).
    { N = ps_named(ps, AST_ASSIGN, T, I); if (N) N->a = E; }
stmt(N) ::= IDENT(I) PLUSEQ(T) expr(E).
    { N = ps_named(ps, AST_ASSIGN, T, I); if (N) { N->a = E; N->ival = AST_ADD; } }
stmt(N) ::= IDENT(I) MINUSEQ(T) expr(E).
    { N = ps_named(ps, AST_ASSIGN, T, I); if (N) { N->a = E; N->ival = AST_SUB; } }
stmt(N) ::= RETURN(T) expr(E).           { N = ps_node(ps, AST_RETURN, T); if (N) N->a = E; }
stmt(N) ::= PASS(T).                     { N = ps_node(ps, AST_PASS, T); }
/* A call as a statement (a filter call): it starts with a name, so that
 * statements still need no separators. */
stmt(N) ::= IDENT(I) LPAREN RPAREN.
    { N = ps_node(ps, AST_EXPRSTMT, I); if (N) N->a = ps_node(ps, AST_CALL, I); }
stmt(N) ::= IDENT(I) LPAREN args(A) RPAREN.
    { N = ps_node(ps, AST_EXPRSTMT, I);
      if (N) { N->a = ps_node(ps, AST_CALL, I); if (N->a) N->a->b = A; } }
stmt(N) ::= IDENT(M) DOT IDENT(I) LPAREN args(A) RPAREN.
    { N = ps_node(ps, AST_EXPRSTMT, I);
      if (N) { N->a = ps_node(ps, AST_CALL, I); if (N->a) { N->a->a = ps_node(ps, AST_NAME, M); N->a->b = A; } } }
stmt(N) ::= ifstmt(I).                   { N = I; }
stmt(N) ::= ACCEPT(T).                   { N = ps_node(ps, AST_ACCEPT, T); }
stmt(N) ::= ACCEPT(T) STRING(S).         { N = ps_node(ps, AST_ACCEPT, T); if (N) N->a = ps_string(ps, S); }
stmt(N) ::= REJECT(T).                   { N = ps_node(ps, AST_REJECT, T); }
stmt(N) ::= REJECT(T) STRING(S).         { N = ps_node(ps, AST_REJECT, T); if (N) N->a = ps_string(ps, S); }

ifstmt(N) ::= IF(T) expr(C) block(B).
    { N = ps_node(ps, AST_IF, T); if (N) { N->a = C; N->b = B; } }
ifstmt(N) ::= IF(T) expr(C) block(B) ELSE block(E).
    { N = ps_node(ps, AST_IF, T); if (N) { N->a = C; N->b = B; N->c = E; } }
ifstmt(N) ::= IF(T) expr(C) block(B) ELSE ifstmt(E).
    { N = ps_node(ps, AST_IF, T); if (N) { N->a = C; N->b = B; N->c = E; } }

expr(N) ::= expr(A) OROR(T) expr(B).  { N = ps_node(ps, AST_OR, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) ANDAND(T) expr(B). { N = ps_node(ps, AST_AND, T); if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) EQ(T) expr(B).    { N = ps_node(ps, AST_EQ, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) NE(T) expr(B).    { N = ps_node(ps, AST_NE, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) LT(T) expr(B).    { N = ps_node(ps, AST_LT, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) LE(T) expr(B).    { N = ps_node(ps, AST_LE, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) GT(T) expr(B).    { N = ps_node(ps, AST_GT, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) GE(T) expr(B).    { N = ps_node(ps, AST_GE, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) IN(T) expr(B).    { N = ps_node(ps, AST_IN, T);  if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) PLUS(T) expr(B).    { N = ps_node(ps, AST_ADD, T); if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) MINUS(T) expr(B).   { N = ps_node(ps, AST_SUB, T); if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) STAR(T) expr(B).    { N = ps_node(ps, AST_MUL, T); if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) SLASH(T) expr(B).   { N = ps_node(ps, AST_DIV, T); if (N) { N->a = A; N->b = B; } }
expr(N) ::= expr(A) PERCENT(T) expr(B). { N = ps_node(ps, AST_MOD, T); if (N) { N->a = A; N->b = B; } }
expr(N) ::= MINUS(T) expr(A). [NOT]     { N = ps_negate(ps, T, A); }
expr(N) ::= NOT(T) expr(A).           { N = ps_node(ps, AST_NOT, T); if (N) N->a = A; }
expr(N) ::= postfix(P).               { N = P; }

postfix(N) ::= primary(P). { N = P; }
postfix(N) ::= postfix(O) DOT IDENT(I).
    { N = ps_node(ps, AST_MEMBER, I); if (N) N->a = O; }
postfix(N) ::= postfix(O) DOT IDENT(I) LPAREN RPAREN.
    { N = ps_node(ps, AST_CALL, I); if (N) N->a = O; }
postfix(N) ::= postfix(O) DOT IDENT(I) LPAREN args(A) RPAREN.
    { N = ps_node(ps, AST_CALL, I); if (N) { N->a = O; N->b = A; } }

args(L) ::= expr(E).                 { L = E; }
args(L) ::= args(L0) COMMA expr(E).  { L = ast_append(L0, E); }

primary(N) ::= IDENT(I).   { N = ps_node(ps, AST_NAME, I); }
primary(N) ::= IDENT(I) LPAREN RPAREN.
    { N = ps_node(ps, AST_CALL, I); }
primary(N) ::= IDENT(I) LPAREN args(A) RPAREN.
    { N = ps_node(ps, AST_CALL, I); if (N) N->b = A; }
primary(N) ::= IP(I).      { N = ps_ip(ps, I); }
primary(N) ::= INT(I).     { N = ps_int(ps, I); }
primary(N) ::= STRING(S).  { N = ps_string(ps, S); }
primary(N) ::= REGEX(R).   { N = ps_regex(ps, R); }
primary(N) ::= TRUE(T).    { N = ps_node(ps, AST_BOOL, T); if (N) N->ival = 1; }
primary(N) ::= FALSE(T).   { N = ps_node(ps, AST_BOOL, T); }
primary(N) ::= LPAREN expr(E) RPAREN. { N = E; }
primary(N) ::= LBRACKET(T) RBRACKET.   { N = ps_node(ps, AST_SET, T); }
primary(N) ::= LBRACKET(T) RBRACKET_I. { N = ps_node(ps, AST_SET, T); if (N) N->flags |= AST_F_CASELESS; }
primary(N) ::= LBRACKET(T) elems(E) optcomma RBRACKET.
    { N = ps_node(ps, AST_SET, T); if (N) N->a = E; }
primary(N) ::= LBRACKET(T) elems(E) optcomma RBRACKET_I.
    { N = ps_node(ps, AST_SET, T); if (N) { N->a = E; N->flags |= AST_F_CASELESS; } }

primary(N) ::= LBRACKET(T) ipelems(E) optcomma RBRACKET.
    { N = ps_node(ps, AST_IPSET, T); if (N) N->a = E; }

primary(N) ::= LBRACKET(T) intelems(E) optcomma RBRACKET.
    { N = ps_node(ps, AST_INTSET, T); if (N) N->a = E; }

intelems(L) ::= INT(I).                  { L = ps_int(ps, I); }
intelems(L) ::= intelems(L0) COMMA INT(I). { L = ast_append(L0, ps_int(ps, I)); }

ipelems(L) ::= IP(I).                 { L = ps_ip(ps, I); }
ipelems(L) ::= ipelems(L0) COMMA IP(I). { L = ast_append(L0, ps_ip(ps, I)); }

elems(L) ::= STRING(S).                 { L = ps_string(ps, S); }
elems(L) ::= elems(L0) COMMA STRING(S). { L = ast_append(L0, ps_string(ps, S)); }
optcomma ::= .
optcomma ::= COMMA.
