/*
 * lexer.re: the .clf lexer, generated into C by re2c.
 *
 * The source buffer ends in a NUL at text[len] (src_add guarantees it);
 * re2c's "sentinel with bounds checks" method (re2c:eof) stops at that
 * NUL only when it is at the limit, so NUL bytes inside the text are
 * ordinary characters (and errors outside strings and comments).
 *
 * '/' is division after a token that ends an operand (a name, a literal,
 * ')' or ']') and the start of a regex literal anywhere else: lx->prev,
 * the previous token, tells the two apart, as in JavaScript lexers.
 *
 * IP address literals (192.0.2.0/24, fc00::/7) are scanned generously
 * here and validated by the parser (vm/ipaddr.c), which gives the better
 * message. No other token contains "::" or four dot-separated numbers.
 */
#include <string.h>

#include "chars.h"
#include "grammar.h"
#include "parse.h"

void lx_init(lexer *lx, src_set *src, uint32_t file)
{
    lx->src = src;
    lx->file = file;
    lx->start = (const unsigned char *)src->files[file].text;
    lx->cur = lx->start;
    lx->lim = lx->start + src->files[file].len;
    lx->prev = 0;
    lx->rewrite = 0;
}

const char *lx_kind_name(int kind)
{
    switch (kind) {
    case 0: return "end of file";
    case TK_OROR: return "'||'";
    case TK_ANDAND: return "'&&'";
    case TK_EQ: return "'=='";
    case TK_NE: return "'!='";
    case TK_LT: return "'<'";
    case TK_LE: return "'<='";
    case TK_GT: return "'>'";
    case TK_GE: return "'>='";
    case TK_IN: return "'in'";
    case TK_NOT: return "'!'";
    case TK_DOT: return "'.'";
    case TK_IMPORT: return "'import'";
    case TK_AS: return "'as'";
    case TK_PUB: return "'pub'";
    case TK_CONST: return "'const'";
    case TK_FILTER: return "'filter'";
    case TK_LET: return "'let'";
    case TK_IF: return "'if'";
    case TK_ELSE: return "'else'";
    case TK_ACCEPT: return "'accept'";
    case TK_REJECT: return "'reject'";
    case TK_TRUE: return "'true'";
    case TK_FALSE: return "'false'";
    case TK_IDENT: return "identifier";
    case TK_INT: return "integer";
    case TK_STRING: return "string";
    case TK_REGEX: return "regex";
    case TK_LPAREN: return "'('";
    case TK_RPAREN: return "')'";
    case TK_LBRACE: return "'{'";
    case TK_RBRACE: return "'}'";
    case TK_LBRACKET: return "'['";
    case TK_RBRACKET: return "']'";
    case TK_RBRACKET_I: return "']i'";
    case TK_COMMA: return "','";
    case TK_COLON: return "':'";
    case TK_ASSIGN: return "'='";
    case TK_FN: return "'fn'";
    case TK_RETURN: return "'return'";
    case TK_MUT: return "'mut'";
    case TK_PASS: return "'pass'";
    case TK_TEST: return "'test'";
    case TK_EXPECT: return "'expect'";
    case TK_EXPECT_RATE: return "'expect-rate'";
    case TK_EXPECT_STATE: return "'expect-state'";
    case TK_REWRITE: return "'rewrite'";
    case TK_ONCE: return "'once'";
    case TK_FATARROW: return "'=>'";
    case TK_STRING_I: return "caseless string";
    case TK_ARROW: return "'->'";
    case TK_PLUS: return "'+'";
    case TK_MINUS: return "'-'";
    case TK_STAR: return "'*'";
    case TK_SLASH: return "'/'";
    case TK_PERCENT: return "'%'";
    case TK_PLUSEQ: return "'+='";
    case TK_MINUSEQ: return "'-='";
    case TK_IP: return "IP address";
    default: return "token";
    }
}

char *lx_decode_string(arena *ar, const char *tok, uint32_t len, uint32_t *outlen)
{
    /* The decoded text is never longer than the literal. */
    char *d = arena_alloc(ar, len + 1);
    uint32_t o = 0;
    if (!d) return NULL;
    for (uint32_t i = 1; i + 1 < len; i++) {
        char c = tok[i];
        if (c != '\\') {
            d[o++] = c;
            continue;
        }
        c = tok[++i];
        switch (c) {
        case 'n': d[o++] = '\n'; break;
        case 't': d[o++] = '\t'; break;
        case 'r': d[o++] = '\r'; break;
        case 'x':
            /* the lexer accepted two hex digits here */
            d[o++] = (char)(vm_hex_value((unsigned char)tok[i + 1]) << 4 |
                            vm_hex_value((unsigned char)tok[i + 2]));
            i += 2;
            break;
        default: d[o++] = c; break; /* \" and \\ */
        }
    }
    d[o] = 0;
    *outlen = o;
    return d;
}

static int is_ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

static int error_at(lexer *lx, const unsigned char *at, const char *msg)
{
    src_error(lx->src, lx->file, (uint32_t)(at - lx->start), "%s", msg);
    return -1;
}

/* Explains why a string literal starting at `tok` stopped at `end`. */
static int bad_string(lexer *lx, const unsigned char *tok, const unsigned char *end)
{
    if (end < lx->lim && *end == '\\')
        return error_at(lx, end, "invalid escape sequence in string "
                                 "(use \\\" \\\\ \\n \\r \\t or \\xNN)");
    return error_at(lx, tok, "unterminated string literal");
}

/* Whether a token of this kind can end an operand, so that a '/' after
 * it divides. */
static int ends_operand(int kind)
{
    return kind == TK_IDENT || kind == TK_INT || kind == TK_STRING || kind == TK_STRING_I ||
           kind == TK_RPAREN ||
           kind == TK_RBRACKET || kind == TK_RBRACKET_I || kind == TK_TRUE ||
           kind == TK_FALSE || kind == TK_IP || kind == TK_REGEX;
}

static int scan(lexer *lx, lx_token *t)
{
    const unsigned char *mar = NULL;
    const unsigned char *lim = lx->lim;
    for (;;) {
        const unsigned char *tok = lx->cur;
        const unsigned char *cur = lx->cur;
        t->off = (uint32_t)(tok - lx->start);
#define RET(k) do { lx->cur = cur; t->len = (uint32_t)(cur - tok); return (k); } while (0)
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = cur;
        re2c:define:YYMARKER = mar;
        re2c:define:YYLIMIT = lim;
        re2c:yyfill:enable = 0;
        re2c:eof = 0;

        hex = [0-9a-fA-F];
        strchar = [^"\\\n\x00] | "\\" ["\\ntr] | "\\x" hex hex | [\x00];
        rechar = [^/\\\n] | "\\" [^\n];
        dec = [0-9]+;
        ipv4 = dec "." dec "." dec "." dec;
        h16 = hex{1,4};
        ipv6 = (h16 ":"){7} h16 | [0-9a-fA-F:]* "::" [0-9a-fA-F:]* | [0-9a-fA-F:]* "::" [0-9a-fA-F:]* ipv4 | (h16 ":"){6} ipv4;
        /* Shapes that can only be a mistyped address: the parser says
         * "invalid IP address" rather than "unexpected integer". */
        ipbad = dec ("." dec){2,} | (h16 ":"){3,} [0-9a-fA-F:.]*;

        $ { t->len = 0; return 0; }
        [ \t\r\n]+ { lx->cur = cur; continue; }
        "//" [^\n]* { lx->cur = cur; continue; }

        "import" { RET(TK_IMPORT); }
        "as"     { RET(TK_AS); }
        "pub"    { RET(TK_PUB); }
        "const"  { RET(TK_CONST); }
        "filter" { RET(TK_FILTER); }
        "let"    { RET(TK_LET); }
        "if"     { RET(TK_IF); }
        "else"   { RET(TK_ELSE); }
        "accept" { RET(TK_ACCEPT); }
        "reject" { RET(TK_REJECT); }
        "true"   { RET(TK_TRUE); }
        "false"  { RET(TK_FALSE); }
        "in"     { RET(TK_IN); }
        "fn"     { RET(TK_FN); }
        "return" { RET(TK_RETURN); }
        "mut"    { RET(TK_MUT); }
        "pass"   { RET(TK_PASS); }
        "test"   { RET(TK_TEST); }
        "expect" { RET(TK_EXPECT); }
        "expect-rate" { RET(TK_EXPECT_RATE); }
        "expect-state" { RET(TK_EXPECT_STATE); }
        "rewrite" { RET(TK_REWRITE); }
        "once"   { RET(TK_ONCE); }
        (ipv4 | ipv6 | ipbad) ("/" dec)? { RET(TK_IP); }
        [A-Za-z_][A-Za-z0-9_]* { RET(TK_IDENT); }
        [0-9]+ [A-Za-z_] { return error_at(lx, tok, "invalid integer literal"); }
        [0-9]+ { RET(TK_INT); }

        ["] strchar* ["] {
            /* `"..."i` is a case-insensitive string (a rewrite rule's
             * pattern), as `]i` closes a case-insensitive set. */
            if (cur < lim && *cur == 'i' && (cur + 1 >= lim || !is_ident_char(cur[1]))) {
                cur++;
                RET(TK_STRING_I);
            }
            RET(TK_STRING);
        }
        ["] strchar* { return bad_string(lx, tok, cur); }

        "/" rechar+ "/" [A-Za-z]* {
            if (lx->rewrite != 2 && ends_operand(lx->prev)) { cur = tok + 1; RET(TK_SLASH); }
            RET(TK_REGEX);
        }
        "/" rechar* {
            if (lx->rewrite != 2 && ends_operand(lx->prev)) { cur = tok + 1; RET(TK_SLASH); }
            return error_at(lx, tok, "unterminated regex literal (a regex ends with '/' on the same line)");
        }
        "->" { RET(TK_ARROW); }
        "=>" { RET(TK_FATARROW); }
        "+=" { RET(TK_PLUSEQ); }
        "-=" { RET(TK_MINUSEQ); }
        "+"  { RET(TK_PLUS); }
        "-"  { RET(TK_MINUS); }
        "*"  { RET(TK_STAR); }
        "%"  { RET(TK_PERCENT); }

        "||" { RET(TK_OROR); }
        "&&" { RET(TK_ANDAND); }
        "==" { RET(TK_EQ); }
        "!=" { RET(TK_NE); }
        "<=" { RET(TK_LE); }
        ">=" { RET(TK_GE); }
        "<"  { RET(TK_LT); }
        ">"  { RET(TK_GT); }
        "!"  { RET(TK_NOT); }
        "."  { RET(TK_DOT); }
        "("  { RET(TK_LPAREN); }
        ")"  { RET(TK_RPAREN); }
        "{"  { RET(TK_LBRACE); }
        "}"  { RET(TK_RBRACE); }
        "["  { RET(TK_LBRACKET); }
        "]"  {
            /* `]i` closes a case-insensitive set literal. */
            if (cur < lim && *cur == 'i' && (cur + 1 >= lim || !is_ident_char(cur[1]))) {
                cur++;
                RET(TK_RBRACKET_I);
            }
            RET(TK_RBRACKET);
        }
        ","  { RET(TK_COMMA); }
        ":"  { RET(TK_COLON); }
        "="  { RET(TK_ASSIGN); }
        "&" | "|" { return error_at(lx, tok, "unexpected character (did you mean '&&' or '||'?)"); }
        * {
            if (*tok >= 0x80) return error_at(lx, tok, "unexpected non-ASCII byte (only strings, regexes and comments may hold them)");
            if (*tok < 0x20 || *tok == 0x7f) return error_at(lx, tok, "unexpected control character");
            return error_at(lx, tok, "unexpected character");
        }
        */
#undef RET
    }
}

int lx_next(lexer *lx, lx_token *t)
{
    int k = scan(lx, t);
    t->kind = k;
    lx->prev = k;
    /* A rewrite set's rules: from its '{' to the next '}' (no token of a
     * rule holds a brace but strings and regexes, which are tokens). */
    if (k == TK_REWRITE) lx->rewrite = 1;
    else if (k == TK_LBRACE && lx->rewrite == 1) lx->rewrite = 2;
    else if (k == TK_RBRACE || (k == TK_LBRACE && lx->rewrite == 2)) lx->rewrite = 0;
    return k;
}
