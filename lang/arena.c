/* arena.c: see arena.h. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct arena_chunk {
    arena_chunk *next;
    alignas(max_align_t) unsigned char data[];
};

void *arena_alloc(arena *a, size_t n)
{
    const size_t align = alignof(max_align_t);
    n = (n + align - 1) / align * align;
    if (n == 0) n = align;
    if (!a->head || n > a->cap - a->used) {
        size_t cap = n > 64 * 1024 ? n : 64 * 1024;
        arena_chunk *c = malloc(sizeof *c + cap);
        if (!c) {
            a->failed = 1;
            return NULL;
        }
        c->next = a->head;
        a->head = c;
        a->used = 0;
        a->cap = cap;
    }
    void *p = a->head->data + a->used;
    a->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *d = arena_alloc(a, n + 1);
    if (d) {
        if (n) memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

void arena_free(arena *a)
{
    arena_chunk *c = a->head;
    while (c) {
        arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
    a->used = a->cap = 0;
}
