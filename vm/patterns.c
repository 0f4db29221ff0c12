/*
 * patterns.c: builds a subject's Hyperscan database from its patterns.
 * The compiler and the loader (when a stored database does not fit this
 * Hyperscan or CPU) share this code, so both build the same thing.
 */
#include <stdlib.h>

#include "program.h"

clf_status vm_subject_build(const clf_program *p, uint32_t s, hs_database_t **out,
                            long *bad_pattern, char *err, size_t errlen)
{
    *out = NULL;
    *bad_pattern = -1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->npatterns; i++) n += p->patterns[i].subject == s;
    if (n == 0) {
        vm_errf(err, errlen, "subject %u has no patterns", s);
        return CLF_E_FORMAT;
    }
    const vm_allocator *al = &p->opts.alloc;
    const char **exprs = vm_calloc(al, n, sizeof *exprs);
    unsigned *flags = vm_calloc(al, n, sizeof *flags);
    unsigned *ids = vm_calloc(al, n, sizeof *ids);
    uint32_t *which = vm_calloc(al, n, sizeof *which);
    clf_status st = CLF_OK;
    if (!exprs || !flags || !ids || !which) {
        vm_errf(err, errlen, "out of memory");
        st = CLF_E_NOMEM;
        goto done;
    }
    n = 0;
    for (uint32_t i = 0; i < p->npatterns; i++) {
        const vm_pattern *q = &p->patterns[i];
        if (q->subject != s) continue;
        exprs[n] = p->consts[q->expr].str;
        flags[n] = q->flags;
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
    return st;
}
