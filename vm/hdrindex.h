/*
 * hdrindex.h: from a header name to the program's header slot, the one
 * lookup clf_ctx_add_header makes per header of every request. The
 * loader builds the index (program.h, hdr_index; hdrindex.c) and the
 * context looks names up in it (ctx.c), through this one hash. Inline:
 * the lookup runs about six times per request.
 */
#ifndef VM_HDRINDEX_H
#define VM_HDRINDEX_H

#include <string.h>

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

/* Inlined even where the compiler would not (vm_hdr_slot: an out-of-line
 * call per header of every request showed in the profile). */
#ifdef __GNUC__
#define VM_HDR_INLINE static inline __attribute__((always_inline))
#else
#define VM_HDR_INLINE static inline
#endif

/* Eight bytes from p, in memory order (memcpy: any alignment). */
VM_HDR_INLINE uint64_t vm_hdr_load8(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* The eight bytes of w with A-Z lowered and every other byte unchanged,
 * for all eight at once: a byte is upper-case when adding 0x7f - 'Z'
 * leaves its top bit clear and adding 0x80 - 'A' sets it (computed on
 * the low seven bits, so no carry crosses bytes; bytes >= 0x80 are
 * never upper-case). */
VM_HDR_INLINE uint64_t vm_hdr_lower8(uint64_t w)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80;
    uint64_t low7 = w & ~high;
    uint64_t ge_a = low7 + ones * (0x80 - 'A'), gt_z = low7 + ones * (0x7f - 'Z');
    uint64_t upper = (ge_a & ~gt_z) & ~w & high;
    return w | upper >> 2;
}

/* `a` (n bytes) equals the lower-case name `lower`, ASCII-caselessly:
 * eight bytes at a time (the last word overlapping the one before it),
 * since the name that matches, User-Agent above all, is compared in
 * full on every request. */
VM_HDR_INLINE int vm_hdr_name_eq(const char *a, const char *lower, size_t n)
{
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 < n; i += 8)
            if (vm_hdr_lower8(vm_hdr_load8(a + i)) != vm_hdr_load8(lower + i)) return 0;
        return vm_hdr_lower8(vm_hdr_load8(a + n - 8)) == vm_hdr_load8(lower + n - 8);
    }
    for (size_t i = 0; i < n; i++)
        if (vm_ascii_lower((unsigned char)a[i]) != (unsigned char)lower[i]) return 0;
    return 1;
}

/* Bit of prog->hdr_lens for a name of n bytes. */
static inline uint64_t vm_hdr_len_bit(size_t n)
{
    return UINT64_C(1) << (n < 63 ? n : 63);
}

/* The slot of header `name` (n bytes, any case), or UINT32_MAX when the
 * program inspects no such header. */
VM_HDR_INLINE uint32_t vm_hdr_slot(const clf_program *p, const char *name, size_t n)
{
    if (p->hdr_index) {
        if (!(p->hdr_lens & vm_hdr_len_bit(n))) return UINT32_MAX;
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
