/*
 * rw_ref.h: a whole-buffer, brute-force reference of the rewrite
 * semantics (docs/rewrite.md), written apart from the engine: no
 * Hyperscan, no streaming, no candidate table; it tries every start and,
 * for each rule, every end. The tests and the fuzz target compare the
 * engine's output, for every way of cutting the input into chunks,
 * against it.
 *
 * What it shares with the engine: PCRE2 as the regex matcher (the
 * semantics are defined by PCRE2/Perl on the whole buffer), and in
 * replace_filter mode the translation of sregex's syntax (rw_syntax.c),
 * which tests/rewrite/test_rewrite_peers.py checks on its own.
 * It does not model replace_filter's buffer cap: compare with max_match
 * at least the input's length there.
 */
#ifndef RW_REF_H
#define RW_REF_H

#include <stddef.h>
#include <stdint.h>

typedef struct ref_rule {
    int regex;           /* 0: literal */
    uint32_t flags;      /* RW_CASELESS | RW_DOTALL | RW_MULTILINE | RW_ONCE */
    const uint8_t *pat;
    size_t plen;
    const uint8_t *tpl;
    size_t tlen;
} ref_rule;

/* Rewrites in[0..len) with the rules in mode (rw_mode values) and
 * max_match L. Returns 0 and a malloc'd output (*out, *outlen; free it),
 * or -1 when a rule does not compile or the output does not fit. */
int ref_rewrite(int mode, uint32_t L, const ref_rule *rules, size_t nrules, const uint8_t *in,
                size_t len, uint8_t **out, size_t *outlen);

#endif
