/*
 * patterns.c: a subject's patterns as Hyperscan expressions, and the
 * subject's Hyperscan database built from them. The compiler and the
 * loader (when a stored database does not fit this Hyperscan or CPU)
 * share this code, so both build the same thing.
 *
 * A literal becomes its bytes, each outside [A-Za-z0-9] escaped as \xHH
 * (so no byte of it can mean anything else to Hyperscan), wrapped for
 * the string method it came from:
 *
 *   contains        LIT
 *   starts_with     ^LIT
 *   ends_with       LIT\z
 *   equals, in      ^LIT\z
 *   contains_word   B LIT B, where B is \b next to a word character
 *                   and \B next to a non-word one (vm/chars.h): both
 *                   mean "no word character on this side"
 *
 * Every pattern is HS_FLAG_SINGLEMATCH (a test only asks whether it
 * matched); a regex is HS_FLAG_ALLOWEMPTY too, since `x*` matching the
 * empty string is a match the language promises.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chars.h"
#include "program.h"

const char *const vm_pattern_kind_names[VM_PAT_KIND_COUNT] = {
    "contains", "starts_with", "ends_with", "equals", "contains_word", "matches"};

const char *vm_pattern_expr(const vm_pattern *q, const vm_const *k, char *buf)
{
    if (q->kind == VM_PAT_REGEX) return k->str;
    const unsigned char *s = (const unsigned char *)k->str;
    uint32_t n = k->len;
    char *o = buf;
    if (q->kind == VM_PAT_STARTS_WITH || q->kind == VM_PAT_EQUALS) *o++ = '^';
    if (q->kind == VM_PAT_CONTAINS_WORD && n) o += sprintf(o, vm_is_word(s[0]) ? "\\b" : "\\B");
    for (uint32_t i = 0; i < n; i++) {
        if (vm_is_alnum(s[i])) *o++ = (char)s[i];
        else o += sprintf(o, "\\x%02x", s[i]);
    }
    if (q->kind == VM_PAT_CONTAINS_WORD && n)
        o += sprintf(o, vm_is_word(s[n - 1]) ? "\\b" : "\\B");
    if (q->kind == VM_PAT_ENDS_WITH || q->kind == VM_PAT_EQUALS) o += sprintf(o, "\\z");
    *o = 0;
    return buf;
}

clf_status vm_subject_build(const clf_program *p, uint32_t s, hs_database_t **out,
                            long *bad_pattern, char *err, size_t errlen)
{
    *out = NULL;
    *bad_pattern = -1;
    uint32_t n = 0;
    size_t text = 0; /* bytes of the literals' expressions */
    for (uint32_t i = 0; i < p->npatterns; i++) {
        const vm_pattern *q = &p->patterns[i];
        if (q->subject != s) continue;
        n++;
        if (q->kind != VM_PAT_REGEX) text += VM_PATTERN_EXPR_BYTES(p->consts[q->value].len);
    }
    if (n == 0) {
        vm_errf(err, errlen, "subject %u has no patterns", s);
        return CLF_E_FORMAT;
    }
    const vm_allocator *al = &p->opts.alloc;
    const char **exprs = vm_calloc(al, n, sizeof *exprs);
    unsigned *flags = vm_calloc(al, n, sizeof *flags);
    unsigned *ids = vm_calloc(al, n, sizeof *ids);
    uint32_t *which = vm_calloc(al, n, sizeof *which);
    char *buf = text ? vm_malloc(al, text) : NULL;
    clf_status st = CLF_OK;
    if (!exprs || !flags || !ids || !which || (text && !buf)) {
        vm_errf(err, errlen, "out of memory");
        st = CLF_E_NOMEM;
        goto done;
    }
    n = 0;
    char *at = buf;
    for (uint32_t i = 0; i < p->npatterns; i++) {
        const vm_pattern *q = &p->patterns[i];
        if (q->subject != s) continue;
        const vm_const *k = &p->consts[q->value];
        exprs[n] = vm_pattern_expr(q, k, at);
        if (q->kind != VM_PAT_REGEX) at += VM_PATTERN_EXPR_BYTES(k->len);
        flags[n] = q->flags | HS_FLAG_SINGLEMATCH | (q->kind == VM_PAT_REGEX ? HS_FLAG_ALLOWEMPTY : 0);
        ids[n] = n; /* the pattern's index in its subject: see program.h */
        which[n++] = i;
    }
    /* Generic x86-64 tuning with no optional CPU features, so that a
     * database compiled on one machine deserializes on any other that
     * Hyperscan supports (see Hyperscan's "Serialization" docs). */
    hs_platform_info_t plat = {HS_TUNE_FAMILY_GENERIC, 0, 0, 0};
    hs_compile_error_t *ce = NULL;
    hs_error_t rc = hs_compile_multi(exprs, flags, ids, n, HS_MODE_BLOCK, &plat, out, &ce);
    if (rc != HS_SUCCESS) {
        if (ce && ce->expression >= 0 && (uint32_t)ce->expression < n)
            *bad_pattern = (long)which[ce->expression];
        vm_errf(err, errlen, "%s", ce && ce->message ? ce->message : "Hyperscan compile failed");
        st = CLF_E_BACKEND;
        *out = NULL;
    }
    hs_free_compile_error(ce);
done:
    vm_free(al, exprs);
    vm_free(al, flags);
    vm_free(al, ids);
    vm_free(al, which);
    vm_free(al, buf);
    return st;
}
