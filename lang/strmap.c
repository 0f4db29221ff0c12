/* strmap.c: see strmap.h. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "strmap.h"

static strmap_slot *find(const strmap_slot *slots, size_t cap, const char *key, uint32_t len,
                         uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    for (;;) {
        const strmap_slot *s = &slots[i];
        if (!s->key || (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0))
            return (strmap_slot *)s;
        i = (i + 1) & (cap - 1);
    }
}

uint32_t strmap_get(const strmap *m, const char *key, uint32_t len)
{
    if (!m->cap) return STRMAP_NONE;
    const strmap_slot *s = find(m->slots, m->cap, key, len, XXH3_64bits(key, len));
    return s->key ? s->value : STRMAP_NONE;
}

int strmap_put(strmap *m, const char *key, uint32_t len, uint32_t value)
{
    if ((m->count + 1) * 2 > m->cap) { /* keep the load under 1/2 */
        size_t cap = m->cap ? m->cap * 2 : 64;
        strmap_slot *slots = calloc(cap, sizeof *slots);
        if (!slots) return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[i].key) *find(slots, cap, m->slots[i].key, m->slots[i].len, m->slots[i].hash) = m->slots[i];
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    uint64_t h = XXH3_64bits(key, len);
    strmap_slot *s = find(m->slots, m->cap, key, len, h);
    if (!s->key) m->count++;
    *s = (strmap_slot){key, len, value, h};
    return 0;
}

void strmap_free(strmap *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}
