/*
 * rw_syntax.c: the two regex dialects of the engine.
 *
 * SRW and sub_filter modes take the PCRE syntax that Hyperscan compiles;
 * PCRE2 reads the same patterns for captures and for the exact re-checks
 * of rw_hs.c, so what both accept must mean the same to both.
 * rw_syntax_check() walks the pattern as PCRE does (escapes, character
 * classes, \Q..\E, comments, group syntax) and refuses, with the offset,
 * what the engine cannot honour: lazy quantifiers (Hyperscan reports every
 * end of a match, so laziness would be silently ignored), possessive
 * quantifiers, atomic groups, look-around, backreferences, \K, \G, \C,
 * conditionals, recursion, callouts, verbs, and the options that change
 * the syntax (x, n, U, J). Plain syntax errors are left to Hyperscan and
 * PCRE2, whose messages say more than a third parser would.
 *
 * replace_filter mode takes sregex's syntax (openresty/sregex, its lexer
 * and grammar in src/sregex/sre_yyparser.y), which differs from PCRE in
 * small ways that matter for a drop-in replacement: `.` matches every
 * byte, ^ and $ are line anchors, \s is [ \t\n\f\r] (no VT), \1 is the
 * byte 001 (no backreferences), `\i` is "i", {n,m} counts stop at 499,
 * `(?` must be `(?:`. rw_sregex_translate() parses it with a
 * recursive-descent copy of that grammar and writes an equivalent PCRE2
 * pattern in which every character class is spelt out as byte ranges and
 * case-insensitivity as [aA], so that no PCRE2 default can differ.
 */
#include <stdio.h>
#include <string.h>

#include "rw_set.h"

/* ---- SRW: the PCRE subset ---------------------------------------------- */

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static int is_alpha(uint8_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_alnum(uint8_t c) { return is_digit(c) || is_alpha(c); }

/* Length of a {n}, {n,} or {n,m} quantifier at p[i] (PCRE 10.42 reads any
 * other `{` as a literal), or 0. */
static size_t quant_len(const uint8_t *p, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j >= n || !is_digit(p[j])) return 0;
    while (j < n && is_digit(p[j])) j++;
    if (j < n && p[j] == '}') return j + 1 - i;
    if (j >= n || p[j] != ',') return 0;
    j++;
    while (j < n && is_digit(p[j])) j++;
    if (j < n && p[j] == '}') return j + 1 - i;
    return 0;
}

/* Skips \Q...\E starting at p[i] == '\\', p[i+1] == 'Q'; returns the index
 * after it (n when \E is missing, as PCRE reads it). Sets *nonempty when
 * it quoted at least one byte. */
static size_t skip_quote(const uint8_t *p, size_t n, size_t i, int *nonempty)
{
    size_t j = i + 2;
    *nonempty = 0;
    while (j < n) {
        if (p[j] == '\\' && j + 1 < n && p[j + 1] == 'E') return j + 2;
        *nonempty = 1;
        j++;
    }
    return n;
}

/* An escape at p[i] == '\\' outside or inside a class: reports what is
 * refused, returns the index after the escape. */
static size_t check_escape(const uint8_t *p, size_t n, size_t i, int in_class, rw_dctx *c)
{
    if (i + 1 >= n) return n; /* PCRE2 reports the trailing backslash */
    uint8_t e = p[i + 1];
    switch (e) {
    case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                    in_class ? "\\%c in a class is ambiguous (octal or backreference); "
                               "write the byte as \\x{HH}"
                             : "backreferences (\\%c) are not supported; "
                               "to match a byte by its code write \\x{HH}",
                    e);
        return i + 2;
    case 'g': case 'k':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                    "backreferences and subroutine calls (\\%c) are not supported", e);
        return i + 2;
    case 'K':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "\\K (reset the match start) is not supported");
        return i + 2;
    case 'G':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "\\G is not supported");
        return i + 2;
    case 'C':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "\\C is not supported; `.` with flag s matches any byte");
        return i + 2;
    case 'N': case 'R': case 'X': case 'p': case 'P':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                    "\\%c is not supported (the engine matches bytes, without Unicode)", e);
        return i + 2;
    case 'x':
        if (i + 2 < n && p[i + 2] == '{') {
            size_t j = i + 3;
            while (j < n && p[j] != '}') j++;
            return j < n ? j + 1 : n;
        }
        {
            size_t j = i + 2, k = 0;
            while (j < n && k < 2 && ((p[j] >= '0' && p[j] <= '9') || ((p[j] | 0x20) >= 'a' &&
                                                                     (p[j] | 0x20) <= 'f'))) {
                j++;
                k++;
            }
            return j;
        }
    case 'o':
        if (i + 2 < n && p[i + 2] == '{') {
            size_t j = i + 3;
            while (j < n && p[j] != '}') j++;
            return j < n ? j + 1 : n;
        }
        return i + 2;
    case 'c':
        return i + 3 <= n ? i + 3 : n;
    case '0': {
        size_t j = i + 2, k = 0;
        while (j < n && k < 2 && p[j] >= '0' && p[j] <= '7') {
            j++;
            k++;
        }
        return j;
    }
    default:
        return i + 2;
    }
}

/* A character class at p[i] == '['; returns the index after its `]`. */
static size_t check_class(const uint8_t *p, size_t n, size_t i, rw_dctx *c)
{
    size_t j = i + 1;
    if (j < n && p[j] == '^') j++;
    if (j < n && p[j] == ']') j++; /* a leading ] is a member */
    while (j < n && p[j] != ']') {
        if (p[j] == '\\') {
            if (j + 1 < n && p[j + 1] == 'Q') {
                int ne;
                j = skip_quote(p, n, j, &ne);
                continue;
            }
            j = check_escape(p, n, j, 1, c);
            continue;
        }
        if (p[j] == '[' && j + 1 < n && (p[j + 1] == ':' || p[j + 1] == '.' || p[j + 1] == '=')) {
            /* a POSIX class [:name:] (PCRE refuses [.x.] and [=x=]) */
            uint8_t d = p[j + 1];
            size_t k = j + 2;
            while (k + 1 < n && !(p[k] == d && p[k + 1] == ']')) {
                if (p[k] == ']') break;
                k++;
            }
            if (k + 1 < n && p[k] == d && p[k + 1] == ']') {
                j = k + 2;
                continue;
            }
        }
        j++;
    }
    return j < n ? j + 1 : n;
}

/* A `(?` group opener at p[i]; reports refused kinds; returns the index
 * after the opener's syntax, and *kind: 0 group, 1 comment or option
 * setting (no atom), 2 group that captures. */
static size_t check_group(const uint8_t *p, size_t n, size_t i, int *kind, rw_dctx *c)
{
    *kind = 0;
    size_t j = i + 2;
    if (j >= n) return n;
    uint8_t g = p[j];
    switch (g) {
    case ':':
        return j + 1;
    case '#':
        while (j < n && p[j] != ')') j++;
        *kind = 1;
        return j < n ? j + 1 : n;
    case '=': case '!':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "look-ahead assertions (?%c...) are not supported", g);
        return j + 1;
    case '<':
        if (j + 1 < n && (p[j + 1] == '=' || p[j + 1] == '!')) {
            rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                        "look-behind assertions (?<%c...) are not supported", p[j + 1]);
            return j + 2;
        }
        *kind = 2; /* (?<name>...) */
        while (j < n && p[j] != '>') j++;
        return j < n ? j + 1 : n;
    case '\'':
        *kind = 2;
        j++;
        while (j < n && p[j] != '\'') j++;
        return j < n ? j + 1 : n;
    case 'P':
        if (j + 1 < n && p[j + 1] == '<') {
            *kind = 2;
            while (j < n && p[j] != '>') j++;
            return j < n ? j + 1 : n;
        }
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                    "(?P=name) and (?P>name) (backreference, subroutine) are not supported");
        return j + 1;
    case '>':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "atomic groups (?>...) are not supported");
        return j + 1;
    case '|':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "branch-reset groups (?|...) are not supported");
        return j + 1;
    case '(':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "conditional groups (?(...)...) are not supported");
        return j + 1;
    case 'C':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "callouts (?C...) are not supported");
        return j + 1;
    case 'R': case '&': case '+':
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "recursion and subroutine calls are not supported");
        return j + 1;
    default:
        break;
    }
    if (is_digit(g) || (g == '-' && j + 1 < n && is_digit(p[j + 1]))) {
        rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i, "recursion and subroutine calls are not supported");
        return j + 1;
    }
    /* Option letters, then `)` (a setting) or `:` (a group). */
    size_t k = j;
    while (k < n && p[k] != ')' && p[k] != ':') {
        uint8_t o = p[k];
        if (o == 'x' || o == 'n' || o == 'U' || o == 'J' || o == '^') {
            rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)k,
                        o == 'U' ? "option (?U) (swap greedy and lazy) is not supported"
                        : o == 'x' ? "option (?x) (extended syntax) is not supported"
                                   : "option (?%c) is not supported",
                        o);
        } else if (o != 'i' && o != 'm' && o != 's' && o != '-') {
            return k; /* PCRE2 reports the bad syntax */
        }
        k++;
    }
    if (k < n && p[k] == ')') *kind = 1;
    return k < n ? k + 1 : n;
}

uint32_t rw_syntax_check(const uint8_t *p, size_t n, rw_dctx *c)
{
    uint32_t before = c->errors;
    size_t i = 0;
    while (i < n) {
        uint8_t ch = p[i];
        if (ch == '\\') {
            if (i + 1 < n && p[i + 1] == 'Q') {
                int ne;
                i = skip_quote(p, n, i, &ne);
                continue;
            }
            i = check_escape(p, n, i, 0, c);
            continue;
        }
        if (ch == '[') {
            i = check_class(p, n, i, c);
            continue;
        }
        if (ch == '(') {
            if (i + 1 < n && p[i + 1] == '*') {
                rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                            "backtracking control verbs and start options (*...) are not supported");
                i += 2;
                continue;
            }
            if (i + 1 < n && p[i + 1] == '?') {
                int kind;
                i = check_group(p, n, i, &kind, c);
                continue;
            }
            i++;
            continue;
        }
        size_t q = 0;
        if (ch == '*' || ch == '+' || ch == '?') q = 1;
        else if (ch == '{') q = quant_len(p, n, i);
        if (q) {
            size_t j = i + q;
            if (j < n && p[j] == '?') {
                rw_diag_add(c, RW_D_LAZY, (int64_t)i,
                            "lazy quantifier %.*s?: Hyperscan reports every match end, so it would "
                            "be ignored; write a tighter pattern (e.g. [^<]* instead of .*?)",
                            (int)q, (const char *)p + i);
                i = j + 1;
                continue;
            }
            if (j < n && p[j] == '+') {
                rw_diag_add(c, RW_D_UNSUPPORTED, (int64_t)i,
                            "possessive quantifier %.*s+ is not supported", (int)q,
                            (const char *)p + i);
                i = j + 1;
                continue;
            }
            i = j;
            continue;
        }
        i++;
    }
    return c->errors - before;
}

/* ---- replace_filter: sregex's syntax, translated to PCRE2 ------------- */

typedef struct bset {
    uint8_t b[32];
} bset;

static void bs_add(bset *s, unsigned from, unsigned to)
{
    for (unsigned x = from; x <= to && x < 256; x++) s->b[x >> 3] |= (uint8_t)(1u << (x & 7));
}
static int bs_has(const bset *s, unsigned x) { return s->b[x >> 3] >> (x & 7) & 1; }

/* sregex's shorthand classes (sre_yyparser.y's esc_*_ranges). */
static int shorthand(uint8_t e, bset *s)
{
    memset(s, 0, sizeof *s);
    int neg = 0;
    switch (e) {
    case 'D': neg = 1; /* fall through */
    case 'd': bs_add(s, '0', '9'); break;
    case 'W': neg = 1; /* fall through */
    case 'w': bs_add(s, 'A', 'Z'); bs_add(s, 'a', 'z'); bs_add(s, '0', '9'); bs_add(s, '_', '_'); break;
    case 'S': neg = 1; /* fall through */
    case 's': bs_add(s, ' ', ' '); bs_add(s, '\f', '\f'); bs_add(s, '\n', '\n');
              bs_add(s, '\r', '\r'); bs_add(s, '\t', '\t'); break;
    case 'H': neg = 1; /* fall through */
    case 'h': bs_add(s, 0x09, 0x09); bs_add(s, 0x20, 0x20); bs_add(s, 0xa0, 0xa0); break;
    case 'V': neg = 1; /* fall through */
    case 'v': bs_add(s, 0x0a, 0x0d); bs_add(s, 0x85, 0x85); break;
    case 'N': neg = 1; bs_add(s, '\n', '\n'); break;
    default: return 0;
    }
    if (neg)
        for (int k = 0; k < 32; k++) s->b[k] = (uint8_t)~s->b[k];
    return 1;
}

/* The characters sregex takes literally after a backslash (outside a
 * class; inside, z and C too). */
static int literal_escape(uint8_t e, int in_class)
{
    if (e < 0x20 || e > 0x7e) return 1; /* !isprint */
    if (strchr("'\" iM%@!,_-|*+?():.^$\\/[]{}", e)) return 1;
    return in_class && (e == 'z' || e == 'C');
}

typedef struct sre_parser {
    const uint8_t *p;
    size_t n, i;
    int caseless;
    vm_buf *out;
    uint32_t ngroups;
    rw_dctx *c;
    int failed; /* one error per pattern: the parser stops at the first */
    unsigned depth;
} sre_parser;

static void sre_err(sre_parser *ps, size_t at, const char *msg)
{
    if (ps->failed) return;
    ps->failed = 1;
    rw_diag_add(ps->c, RW_D_SYNTAX, (int64_t)at, "%s", msg);
}

static void sre_err_unsup(sre_parser *ps, size_t at, const char *msg)
{
    if (ps->failed) return;
    ps->failed = 1;
    rw_diag_add(ps->c, RW_D_UNSUPPORTED, (int64_t)at, "%s", msg);
}

static void emit_str(sre_parser *ps, const char *s) { vm_buf_put(ps->out, s, strlen(s)); }

static void emit_byte(vm_buf *out, unsigned b)
{
    char t[8];
    if (is_alnum((uint8_t)b)) {
        t[0] = (char)b;
        vm_buf_put(out, t, 1);
    } else {
        snprintf(t, sizeof t, "\\x{%02x}", b);
        vm_buf_put(out, t, strlen(t));
    }
}

/* Writes a set as a PCRE2 class of byte ranges. */
static void emit_set(vm_buf *out, const bset *s)
{
    int any = 0;
    for (unsigned x = 0; x < 256; x++) any |= bs_has(s, x);
    if (!any) {
        vm_buf_put(out, "[^\\x{00}-\\x{ff}]", 16);
        return;
    }
    vm_buf_put(out, "[", 1);
    unsigned x = 0;
    while (x < 256) {
        if (!bs_has(s, x)) {
            x++;
            continue;
        }
        unsigned y = x;
        while (y + 1 < 256 && bs_has(s, y + 1)) y++;
        char t[24];
        if (y == x) snprintf(t, sizeof t, "\\x{%02x}", x);
        else snprintf(t, sizeof t, "\\x{%02x}-\\x{%02x}", x, y);
        vm_buf_put(out, t, strlen(t));
        x = y + 1;
    }
    vm_buf_put(out, "]", 1);
}

static void fold_case(bset *s)
{
    for (unsigned x = 'A'; x <= 'Z'; x++) {
        if (bs_has(s, x) || bs_has(s, x + 32)) {
            bs_add(s, x, x);
            bs_add(s, x + 32, x + 32);
        }
    }
}

/* A single byte atom: [xX] when caseless and a letter. */
static void emit_char(sre_parser *ps, unsigned b)
{
    if (ps->caseless && is_alpha((uint8_t)b)) {
        bset s;
        memset(&s, 0, sizeof s);
        bs_add(&s, b, b);
        fold_case(&s);
        emit_set(ps->out, &s);
    } else {
        emit_byte(ps->out, b);
    }
}

/* Reads up to `max` digits of base 8 or 16 at ps->i. */
static unsigned read_num(sre_parser *ps, int base, unsigned max, unsigned *count)
{
    unsigned v = 0, k = 0;
    while (ps->i < ps->n && k < max) {
        uint8_t d = ps->p[ps->i];
        unsigned dv;
        if (d >= '0' && d <= '9' && (base == 16 || d <= '7')) dv = d - '0';
        else if (base == 16 && (d | 0x20) >= 'a' && (d | 0x20) <= 'f') dv = (unsigned)((d | 0x20) - 'a' + 10);
        else break;
        v = v * (unsigned)base + dv;
        ps->i++;
        k++;
    }
    *count = k;
    return v;
}

/* The escapes both contexts share: octal, \c, \o{}, \x, \t\n\r\f\a\e.
 * ps->i is after the backslash and the letter e. Returns 1 and the byte in
 * *b, 0 when e is none of them, -1 on error. */
static int common_escape(sre_parser *ps, uint8_t e, size_t at, unsigned *b)
{
    unsigned cnt;
    if (e >= '0' && e <= '7') {
        unsigned v = e - '0';
        ps->i--; /* reread e as the first digit */
        v = read_num(ps, 8, 3, &cnt);
        *b = v & 0xff;
        return 1;
    }
    switch (e) {
    case 'c':
        if (ps->i >= ps->n) {
            sre_err(ps, at, "\\c at the end of the pattern");
            return -1;
        }
        {
            uint8_t x = ps->p[ps->i++];
            if (x >= 'a' && x <= 'z') x = (uint8_t)(x - 32);
            *b = (unsigned)(x ^ 64) & 0xff;
        }
        return 1;
    case 'o':
        if (ps->i >= ps->n || ps->p[ps->i] != '{') {
            sre_err(ps, at, "\\o must be followed by {octal digits}");
            return -1;
        }
        ps->i++;
        *b = read_num(ps, 8, 3, &cnt) & 0xff;
        if (ps->i >= ps->n || ps->p[ps->i] != '}') {
            sre_err(ps, at, "\\o{...} takes 1 to 3 octal digits and a closing }");
            return -1;
        }
        ps->i++;
        return 1;
    case 'x':
        if (ps->i < ps->n && ps->p[ps->i] == '{') {
            ps->i++;
            *b = read_num(ps, 16, 2, &cnt) & 0xff;
            if (ps->i >= ps->n || ps->p[ps->i] != '}') {
                sre_err(ps, at, "\\x{...} takes at most 2 hex digits and a closing }");
                return -1;
            }
            ps->i++;
            return 1;
        }
        *b = read_num(ps, 16, 2, &cnt) & 0xff;
        return 1;
    case 't': *b = '\t'; return 1;
    case 'n': *b = '\n'; return 1;
    case 'r': *b = '\r'; return 1;
    case 'f': *b = '\f'; return 1;
    case 'a': *b = 0x07; return 1;
    case 'e': *b = 0x1b; return 1;
    default: return 0;
    }
}

/* A class [...] at ps->i (after the `[`). */
static void parse_class(sre_parser *ps, size_t at)
{
    bset s;
    memset(&s, 0, sizeof s);
    int neg = 0;
    if (ps->i < ps->n && ps->p[ps->i] == '^') {
        neg = 1;
        ps->i++;
    }
    /* sregex's state: the last range (for a-z), a pending dash, no_dash
     * after a shorthand or a completed range. */
    int have_last = 0, seen_dash = 0, no_dash = 0;
    unsigned last_from = 0;
    unsigned nread = 0;
    for (;;) {
        if (ps->i >= ps->n) {
            sre_err(ps, at, "character class without a closing ]");
            return;
        }
        nread++;
        size_t here = ps->i;
        uint8_t ch = ps->p[ps->i++];
        unsigned b;
        if (ch == ']' && nread > 1) {
            if (seen_dash) bs_add(&s, '-', '-');
            break;
        }
        if (ch == '\\') {
            if (ps->i >= ps->n) {
                sre_err(ps, here, "a backslash at the end of the pattern");
                return;
            }
            uint8_t e = ps->p[ps->i++];
            int r = common_escape(ps, e, here, &b);
            if (r < 0) return;
            if (r == 0) {
                if (e == 'b') {
                    b = 0x08;
                } else if (literal_escape(e, 1)) {
                    b = e;
                } else {
                    bset sh;
                    if (!shorthand(e, &sh) || e == 'N') {
                        sre_err(ps, here, "unknown escape in a character class");
                        return;
                    }
                    if (seen_dash) {
                        bs_add(&s, '-', '-');
                        seen_dash = 0;
                    }
                    for (int k = 0; k < 32; k++) s.b[k] |= sh.b[k];
                    no_dash = 1;
                    have_last = 0;
                    continue;
                }
            }
        } else if (ch == '-' && !seen_dash && have_last && !no_dash) {
            seen_dash = 1;
            continue;
        } else {
            b = ch;
        }
        /* process_char */
        if (seen_dash) {
            if (b < last_from) {
                sre_err(ps, here, "range out of order in a character class");
                return;
            }
            bs_add(&s, last_from, b);
            seen_dash = 0;
            no_dash = 1;
            have_last = 1;
            continue;
        }
        no_dash = 0;
        bs_add(&s, b, b);
        last_from = b;
        have_last = 1;
    }
    if (ps->caseless) fold_case(&s);
    if (neg)
        for (int k = 0; k < 32; k++) s.b[k] = (uint8_t)~s.b[k];
    emit_set(ps->out, &s);
}

static void parse_alt(sre_parser *ps);

/* A counted quantifier at ps->i == '{' as sregex's lexer reads it: returns
 * 1 and the bounds (to = -1: no upper bound), 0 when it is a literal `{`,
 * -1 on error. */
static int parse_cquant(sre_parser *ps, long *from, long *to)
{
    size_t j = ps->i + 1;
    const uint8_t *p = ps->p;
    size_t n = ps->n;
    if (j >= n || !is_digit(p[j])) return 0;
    long f = 0, t;
    while (j < n && is_digit(p[j])) {
        if (f < 100000) f = f * 10 + (p[j] - '0');
        j++;
    }
    if (j < n && p[j] == '}') {
        t = f;
        j++;
    } else {
        if (j >= n || p[j] != ',') return 0;
        j++;
        if (j < n && p[j] == '}') {
            t = -1;
            j++;
        } else {
            if (j >= n || !is_digit(p[j])) return 0;
            t = 0;
            while (j < n && is_digit(p[j])) {
                if (t < 100000) t = t * 10 + (p[j] - '0');
                j++;
            }
            if (j >= n || p[j] != '}') return 0;
            j++;
        }
    }
    if (f >= 500 || t >= 500) {
        sre_err(ps, ps->i, "counted repetition {n,m} takes numbers below 500 (sregex)");
        return -1;
    }
    if (t >= 0 && f > t) {
        sre_err(ps, ps->i, "counted repetition {n,m} with n > m");
        return -1;
    }
    ps->i = j;
    *from = f;
    *to = t;
    return 1;
}

/* repeat: atom [quantifier ['?']] */
static void parse_repeat(sre_parser *ps)
{
    size_t atom_at = ps->i;
    uint8_t ch = ps->p[ps->i];
    int assertion = 0;
    size_t mark = ps->out->len;
    if (ch == '(') {
        ps->i++;
        if (ps->i < ps->n && ps->p[ps->i] == '?') {
            ps->i++;
            if (ps->i >= ps->n || ps->p[ps->i] != ':') {
                sre_err_unsup(ps, atom_at, "sregex knows only the group syntax (...) and (?:...)");
                return;
            }
            ps->i++;
            emit_str(ps, "(?:");
        } else {
            ps->ngroups++;
            emit_str(ps, "(");
        }
        if (++ps->depth > 200) {
            sre_err(ps, atom_at, "groups nested more than 200 deep");
            return;
        }
        parse_alt(ps);
        ps->depth--;
        if (ps->failed) return;
        if (ps->i >= ps->n || ps->p[ps->i] != ')') {
            sre_err(ps, atom_at, "unclosed group (");
            return;
        }
        ps->i++;
        emit_str(ps, ")");
    } else if (ch == '.') {
        ps->i++;
        emit_str(ps, "[\\x{00}-\\x{ff}]");
    } else if (ch == '^' || ch == '$') {
        ps->i++;
        emit_str(ps, ch == '^' ? "(?:^)" : "(?:$)");
        assertion = 1;
    } else if (ch == '[') {
        ps->i++;
        parse_class(ps, atom_at);
    } else if (ch == '\\') {
        ps->i++;
        if (ps->i >= ps->n) {
            sre_err(ps, atom_at, "a backslash at the end of the pattern");
            return;
        }
        uint8_t e = ps->p[ps->i++];
        unsigned b;
        int r = common_escape(ps, e, atom_at, &b);
        if (r < 0) return;
        if (r == 1) {
            emit_char(ps, b);
        } else if (literal_escape(e, 0)) {
            emit_char(ps, e);
        } else {
            bset sh;
            switch (e) {
            case 'b': emit_str(ps, "(?:\\b)"); assertion = 1; break;
            case 'B': emit_str(ps, "(?:\\B)"); assertion = 1; break;
            case 'A': emit_str(ps, "(?:\\A)"); assertion = 1; break;
            case 'z': emit_str(ps, "(?:\\z)"); assertion = 1; break;
            case 'C': emit_str(ps, "[\\x{00}-\\x{ff}]"); break;
            default:
                if (!shorthand(e, &sh)) {
                    if (e == 'Z' || e == 'G' || e == 'K' || e == 'Q' || e == 'E' || e == 'g' ||
                        e == 'k' || e == 'p' || e == 'P' || e == 'R' || e == 'X')
                        sre_err_unsup(ps, atom_at, "this escape is not in sregex's syntax");
                    else
                        sre_err(ps, atom_at, "unknown escape (sregex)");
                    return;
                }
                if (ps->caseless) fold_case(&sh);
                emit_set(ps->out, &sh);
            }
        }
    } else if (ch == '{') {
        long f, t;
        int q = parse_cquant(ps, &f, &t);
        if (q < 0) return;
        if (q > 0) {
            sre_err(ps, atom_at, "quantifier without something to repeat");
            return;
        }
        ps->i++;
        emit_char(ps, '{');
    } else if (ch == '*' || ch == '+' || ch == '?') {
        sre_err(ps, atom_at, "quantifier without something to repeat");
        return;
    } else {
        /* any other byte, `:`, `]`, `}` included */
        ps->i++;
        emit_char(ps, ch);
    }
    (void)assertion;
    (void)mark;
    if (ps->failed || ps->i >= ps->n) return;
    /* the quantifier */
    ch = ps->p[ps->i];
    if (ch == '*' || ch == '+' || ch == '?') {
        ps->i++;
        char q[2] = {(char)ch, 0};
        emit_str(ps, q);
    } else if (ch == '{') {
        long f, t;
        int q = parse_cquant(ps, &f, &t);
        if (q < 0) return;
        if (q == 0) return; /* a literal `{`: the next atom */
        char buf[32];
        if (f == 0 && t == 1) snprintf(buf, sizeof buf, "?");
        else if (t < 0) snprintf(buf, sizeof buf, "{%ld,}", f);
        else if (t == f) snprintf(buf, sizeof buf, "{%ld}", f);
        else snprintf(buf, sizeof buf, "{%ld,%ld}", f, t);
        emit_str(ps, buf);
    } else {
        return;
    }
    if (ps->i < ps->n && ps->p[ps->i] == '?') {
        ps->i++;
        emit_str(ps, "?");
    }
    if (ps->i < ps->n) {
        uint8_t nx = ps->p[ps->i];
        long f, t;
        size_t save = ps->i;
        if (nx == '*' || nx == '+' || nx == '?' ||
            (nx == '{' && parse_cquant(ps, &f, &t) > 0)) {
            ps->i = save;
            sre_err(ps, save, "a quantifier cannot follow a quantifier (sregex)");
        }
    }
}

/* concat: repeat* ; alt: concat ('|' concat)* */
static void parse_alt(sre_parser *ps)
{
    for (;;) {
        while (!ps->failed && ps->i < ps->n && ps->p[ps->i] != '|' && ps->p[ps->i] != ')')
            parse_repeat(ps);
        if (ps->failed) return;
        if (ps->i < ps->n && ps->p[ps->i] == '|') {
            ps->i++;
            emit_str(ps, "|");
            continue;
        }
        return;
    }
}

uint32_t rw_sregex_translate(const uint8_t *p, size_t n, int literal, int caseless,
                             vm_buf *out, uint32_t *ngroups, rw_dctx *c)
{
    uint32_t before = c->errors;
    *ngroups = 0;
    sre_parser ps = {.p = p, .n = n, .caseless = caseless, .out = out, .c = c};
    if (literal) {
        for (size_t i = 0; i < n; i++) emit_char(&ps, p[i]);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] == 0) {
            rw_diag_add(c, RW_D_SYNTAX, (int64_t)i,
                        "a NUL byte: replace-filter patterns are C strings (write \\x00)");
            return c->errors - before;
        }
    }
    parse_alt(&ps);
    if (!ps.failed && ps.i < n) sre_err(&ps, ps.i, "unmatched )");
    *ngroups = ps.ngroups;
    return c->errors - before;
}
