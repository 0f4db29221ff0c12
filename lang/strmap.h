/*
 * strmap.h: a hash map from byte strings to 32-bit values, so that
 * constant deduplication and name lookup stay linear in the size of the
 * program (a 50,000-element set, 40,000 constants). Keys are borrowed:
 * they must outlive the map. Open addressing, XXH3-64 hashes.
 */
#ifndef LANG_STRMAP_H
#define LANG_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct strmap_slot {
    const char *key; /* NULL: empty */
    uint32_t len;
    uint32_t value;
    uint64_t hash;
} strmap_slot;

typedef struct strmap {
    strmap_slot *slots;
    size_t cap, count; /* cap is a power of two, or 0 */
} strmap;

#define STRMAP_NONE UINT32_MAX

/* The value stored for key, or STRMAP_NONE. */
uint32_t strmap_get(const strmap *m, const char *key, uint32_t len);
/* Stores value for key (replacing an existing one). Returns 0, or -1 when
 * out of memory (the map is unchanged). */
int strmap_put(strmap *m, const char *key, uint32_t len, uint32_t value);
void strmap_free(strmap *m);

#endif
