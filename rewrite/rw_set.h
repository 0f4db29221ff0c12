/*
 * rw_set.h: the compiled rule set as the engine's files see it (private to
 * rewrite/). rw_build.c makes it from a description, rw_store.c from its
 * stored form; both go through rw_rule_prepare (rw_prepare.c), so a loaded
 * set is checked exactly as a built one.
 */
#ifndef RW_SET_H
#define RW_SET_H

#include <stdarg.h>
#include <stdint.h>

#include <hs.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "rw_build.h"

/* The longest literal prefix kept for a rule (rw_rule.prefix). */
#define RW_PREFIX_MAX 16u

/* hs_expression_info's "unbounded" max_width. */
#define RW_UNBOUNDED UINT32_MAX

/* One piece of a parsed template: bytes of the template, or a group. */
enum { RW_OP_LIT = 0, RW_OP_GROUP = 1 };
typedef struct rw_op {
    uint32_t kind;
    uint32_t a; /* LIT: offset in the rule's template; GROUP: group number */
    uint32_t b; /* LIT: length */
} rw_op;

typedef struct rw_rule {
    rw_kind kind;
    uint32_t flags;
    const uint8_t *pat; /* into rw_set.strings */
    uint32_t pat_len;
    const uint8_t *tpl;
    uint32_t tpl_len;
    rw_srcpos pos;
    /* Widths of a match, bytes (hs_expression_info; literals: the length).
     * max_width is RW_UNBOUNDED when there is no bound. */
    uint32_t min_width, max_width;
    /* min(max_width, L): the longest match the engine looks for (SRW and
     * sub_filter modes). */
    uint32_t width;
    uint32_t ngroups;   /* capturing groups of the pattern */
    uint32_t op_first;  /* the template: ops[op_first .. op_first + nops) */
    uint32_t nops;
    uint8_t fixed;      /* every match is exactly `width` bytes: no SOM */
    uint8_t uses_groups;/* the template names a group >= 1 */
    uint8_t uses_match; /* the template names group 0 ($0, $&) */
    uint32_t var_index; /* index among variable-width rules, or UINT32_MAX */
    /* SRW variable-width rules: the pattern compiled without
     * auto-possessification, for pcre2_dfa_match (every end at a start). */
    pcre2_code *dfa;
    /* Rules whose template names groups >= 1 (SRW mode): "(?:P)(?C1)", for
     * pcre2_match with a callout that pins the end of the match. */
    pcre2_code *cap;
    /* Bytes a match can start with (bit b of first[b >> 3]); all ones when
     * PCRE2 could not tell. For the scans that look for hidden starts, and
     * for rw_set.wfirst (SRW and sub_filter modes). */
    uint8_t first[32];
    /* replace_filter mode: the number of the group wrapping this rule in
     * the combined pattern. */
    uint32_t rf_group;
    /* SRW and sub_filter variable-width rules: the literal bytes every
     * match begins with (`<!--` for `<!--.*-->`; ASCII case-insensitive
     * when RW_CASELESS), at most RW_PREFIX_MAX, maybe none. For the
     * frontier (rw_hs.c, start_bound). */
    uint8_t prefix[RW_PREFIX_MAX];
    uint32_t prefix_len;
} rw_rule;

struct rw_set {
    vm_allocator al;
    rw_mode mode;
    uint32_t L;
    uint32_t nrules;
    rw_rule *rules;
    uint8_t *strings; /* patterns and templates, as given */
    size_t strings_len;
    rw_op *ops;
    uint32_t nops;
    /* Hyperscan streaming databases: literal rules (hs_compile_lit_multi)
     * and regex rules (hs_compile_multi); either may be NULL. The id of a
     * pattern is its rule index. *_in_place: placed in host memory by
     * rw_set_load (free with vm_free, not hs_free_database). */
    hs_database_t *litdb, *redb;
    int litdb_in_place, redb_in_place;
    uint32_t W;         /* max rule width: the engine's window */
    uint32_t nvar;      /* variable-width regex rules (SRW) */
    uint32_t nonce;     /* rules with RW_ONCE */
    uint32_t maxgroups; /* most groups of a rule with a capture code */
    size_t dfa_ws_ints; /* pcre2_dfa_match workspace the rules need */
    /* replace_filter mode: all rules as one alternation, each wrapped in a
     * capturing group (rules[i].rf_group). */
    pcre2_code *rf_code;
    /* The same with PCRE2_AUTO_CALLOUT, and its text: for the "pending
     * match" of replace-filter's buffer cap (rw_rf.c). */
    pcre2_code *rf_code_ac;
    uint8_t *rf_pattern;
    size_t rf_pattern_len;
    uint32_t rf_ngroups;
    /* replace-filter's "capturing parse": a template names a capture or
     * (several rules and a once rule); changes what its buffer cap counts
     * (docs/rewrite.md). */
    int rf_capturing;
    /* The hold-back, bytes: rw_set_holdback(). */
    uint64_t holdback;
    /* SRW and sub_filter modes: per byte value b, the widest fixed-width
     * rule (literals, fixed regexes) and the widest variable-width rule
     * whose matches can start with b (0: none can). A start whose byte
     * is b is decided once that many bytes + 2 are in, not W + 2 (rw_hs.c,
     * the frontier): bytes no long rule starts with are not held back. */
    uint32_t wfixed[256], wvar[256];
    /* The variable-width rules that can start with byte b, widest first:
     * vfirst[vfirst_at[b] .. vfirst_at[b + 1]) (SRW and sub_filter). */
    uint32_t *vfirst;
    uint32_t vfirst_at[257];
};

/* Collecting diagnostics: the rule and place they are about. */
typedef struct rw_dctx {
    rw_diags *d;      /* may be NULL: count only */
    int32_t rule;
    rw_where where;
    rw_srcpos pos;
    uint32_t errors;  /* added through this context */
    int nomem;        /* the list could not grow */
} rw_dctx;

void rw_diag_add(rw_dctx *c, rw_diag_code code, int64_t offset, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* rw_syntax.c: the regex dialects. */

/* SRW mode: reports (RW_D_UNSUPPORTED, RW_D_LAZY) the constructs of the
 * PCRE syntax that the engine refuses, with their offsets; what is left is
 * checked by Hyperscan and PCRE2. Returns the number of errors. */
uint32_t rw_syntax_check(const uint8_t *p, size_t n, rw_dctx *c);

/* replace_filter mode: parses p as sregex's syntax and appends to *out an
 * equivalent PCRE2 pattern (to compile with PCRE2_DOTALL,
 * PCRE2_MULTILINE, PCRE2_ALT_CIRCUMFLEX and no PCRE2_CASELESS: caseless
 * rules are spelt out as [aA]). A literal rule is translated as bytes.
 * Stores the number of capturing groups in *ngroups. Returns the number of
 * errors reported. */
uint32_t rw_sregex_translate(const uint8_t *p, size_t n, int literal, int caseless,
                             vm_buf *out, uint32_t *ngroups, rw_dctx *c);

/* rw_template.c: parses a template for mode into ops appended to *ops
 * (growing; *nops, *cap), against a pattern with ngroups groups. Sets the
 * rule's op range and uses_* fields. Returns the number of errors. */
uint32_t rw_template_parse(rw_mode mode, rw_rule *r, rw_op **ops, uint32_t *nops,
                           uint32_t *cap, const vm_allocator *al, rw_dctx *c);

/* rw_prepare.c. */

/* Checks rule r (kind, flags, pattern, template) for the set's mode and
 * fills in what does not come from Hyperscan: group count, template ops,
 * PCRE2 codes. r->min_width/max_width must already be set for SRW and
 * sub_filter modes when `have_widths`; otherwise they are computed with
 * hs_expression_info. Returns the number of errors reported through c,
 * or -1 when out of memory. */
int rw_rule_prepare(rw_set *s, uint32_t i, int have_widths, uint32_t *opcap, rw_dctx *c);

/* Compiles the Hyperscan databases of an SRW or sub_filter set into
 * s->litdb / s->redb. Failures are reported per rule through c (rule set
 * from the expression Hyperscan names); returns the number of errors, or
 * -1 when out of memory. */
int rw_compile_databases(rw_set *s, rw_dctx *c);

/* Compiles the combined replace_filter pattern into s->rf_code. Returns
 * the number of errors (reported for the set) or -1 (memory). */
int rw_compile_rf(rw_set *s, rw_dctx *c);

/* Computes the derived fields (W, nvar, nonce, maxgroups, holdback,
 * dfa_ws_ints) once every rule is prepared. */
rw_status rw_set_finish(rw_set *s);

/* The PCRE2 compile context the engine uses: newline LF; memory from al. */
pcre2_code *rw_pcre2_compile(const uint8_t *p, size_t n, uint32_t options,
                             const vm_allocator *al, int *errcode, size_t *erroff);

/* A PCRE2 error as text. */
void rw_pcre2_message(int code, char *buf, size_t n);

/* replace_filter mode: an undecided match attempt may look this many
 * bytes past its start before the engine gives up (docs/rewrite.md,
 * "replace_filter: the buffer cap"). */
static inline uint32_t rw_rf_hard_bound(uint32_t L) { return 2 * L + 4096; }

/* Bit helpers for bitmaps of rules. */
static inline int rw_bit(const uint8_t *b, uint32_t i) { return b[i >> 3] >> (i & 7) & 1; }
static inline void rw_bit_set(uint8_t *b, uint32_t i) { b[i >> 3] |= (uint8_t)(1u << (i & 7)); }
static inline void rw_bit_clear(uint8_t *b, uint32_t i) { b[i >> 3] &= (uint8_t)~(1u << (i & 7)); }

#endif
