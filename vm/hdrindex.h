/*
 * hdrindex.h: from a header name to the program's header slot, the one
 * lookup clf_ctx_add_header makes per header of every request. The
 * loader builds the index (program.h, hdr_index; hdrindex.c) and the
 * context looks names up in it (ctx.c), through this one hash. Inline:
 * the lookup runs about six times per request.
 */
#ifndef VM_HDRINDEX_H
#define VM_HDRINDEX_H

#include "chars.h"
#include "program.h"

/* The hash of a header name: ASCII-case-insensitive, from the length and
 * three bytes (first, middle, last), which tell the names a program
 * inspects apart cheaply; equal names always collide, and the lookup
 * compares the whole name anyway. */
static inline uint32_t vm_hdr_hash(const char *s, size_t n)
{
    uint32_t h = (uint32_t)n * UINT32_C(0x9E3779B1);
    if (n) {
        uint32_t a = (unsigned char)s[0] | 0x20, b = (unsigned char)s[n / 2] | 0x20,
                 c = (unsigned char)s[n - 1] | 0x20;
        h ^= a | b << 8 | c << 16;
    }
    h *= UINT32_C(0x85EBCA6B);
    return h ^ (h >> 15);
}

/* Builds prog->hdr_index from its header slots (or leaves it NULL when an
 * index would cost more than it saves). Returns CLF_OK or CLF_E_NOMEM. */
VM_INTERNAL clf_status vm_hdr_index_build(clf_program *prog);

/* `a` (n bytes) equals the lower-case name `lower`, ASCII-caselessly. */
static inline int vm_hdr_name_eq(const char *a, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (vm_ascii_lower((unsigned char)a[i]) != (unsigned char)lower[i]) return 0;
    return 1;
}

/* The slot of header `name` (n bytes, any case), or UINT32_MAX when the
 * program inspects no such header. */
static inline uint32_t vm_hdr_slot(const clf_program *p, const char *name, size_t n)
{
    if (p->hdr_index) {
        for (uint32_t at = vm_hdr_hash(name, n) & p->hdr_mask; p->hdr_index[at];
             at = (at + 1) & p->hdr_mask) {
            uint32_t i = p->hdr_index[at] - 1;
            const vm_const *k = &p->consts[p->hdrs[i]];
            if (k->len == n && vm_hdr_name_eq(name, k->str, n)) return i;
        }
        return UINT32_MAX;
    }
    for (uint32_t i = 0; i < p->nhdrs; i++) {
        const vm_const *k = &p->consts[p->hdrs[i]];
        if (k->len == n && vm_hdr_name_eq(name, k->str, n)) return i;
    }
    return UINT32_MAX;
}

#endif
