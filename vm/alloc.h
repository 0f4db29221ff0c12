/*
 * alloc.h: every allocation the library makes goes through the host's
 * allocator (clf_options_set_allocator), or malloc/free by default.
 * Hyperscan's own allocations (scratch, databases it compiles) go through
 * Hyperscan's allocator, which the library never changes; deserialized
 * databases are placed in memory from the host's allocator with
 * hs_deserialize_database_at.
 */
#ifndef VM_ALLOC_H
#define VM_ALLOC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct vm_allocator {
    void *(*alloc)(void *ud, size_t size); /* NULL: malloc */
    void (*free)(void *ud, void *ptr);     /* NULL: free */
    void *ud;
} vm_allocator;

static inline void *vm_malloc(const vm_allocator *a, size_t n)
{
    if (n == 0) n = 1; /* a zero-size request still gets a unique pointer */
    return a && a->alloc ? a->alloc(a->ud, n) : malloc(n);
}

/* n * each bytes, zeroed; NULL on overflow or failure. */
static inline void *vm_calloc(const vm_allocator *a, size_t n, size_t each)
{
    if (each && n > SIZE_MAX / each) return NULL;
    size_t bytes = n * each;
    void *p = vm_malloc(a, bytes);
    if (p && bytes) memset(p, 0, bytes);
    return p;
}

static inline void vm_free(const vm_allocator *a, void *p)
{
    if (!p) return;
    if (a && a->free) a->free(a->ud, p);
    else free(p);
}

#endif
