/*
 * bitset.h: the one bit-set representation: an array of uint64_t, bit i
 * in word i / 64 at position i % 64. Scan results, scanned subjects and
 * the verifier's written-register sets all use it.
 */
#ifndef VM_BITSET_H
#define VM_BITSET_H

#include <stddef.h>
#include <stdint.h>

/* Words that hold n bits. */
#define VM_BITSET_WORDS(n) (((size_t)(n) + 63) / 64)

static inline int vm_bit_test(const uint64_t *s, uint32_t i)
{
    return (int)(s[i / 64] >> (i % 64) & 1);
}

static inline void vm_bit_set(uint64_t *s, uint32_t i)
{
    s[i / 64] |= UINT64_C(1) << (i % 64);
}

/* Clears bits [lo, hi), a word at a time where it can. */
static inline void vm_bit_clear_range(uint64_t *s, uint32_t lo, uint32_t hi)
{
    while (lo < hi) {
        uint32_t off = lo % 64, span = 64 - off < hi - lo ? 64 - off : hi - lo;
        uint64_t mask = span == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << span) - 1) << off;
        s[lo / 64] &= ~mask;
        lo += span;
    }
}

#endif
