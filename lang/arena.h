/*
 * arena.h: a bump allocator for compiler memory. Everything the compiler
 * builds for one compilation (AST, symbols, strings) lives in one arena
 * and is freed at once, so no pass frees anything piecemeal.
 */
#ifndef LANG_ARENA_H
#define LANG_ARENA_H

#include <stddef.h>

typedef struct arena_chunk arena_chunk;
typedef struct arena {
    arena_chunk *head;
    size_t used, cap;
    int failed; /* an allocation failed; sticky */
} arena;

/* Returns n zeroed bytes aligned for any type, or NULL (and sets
 * a->failed) when memory runs out. */
void *arena_alloc(arena *a, size_t n);
/* Copies n bytes and appends a NUL. */
char *arena_strndup(arena *a, const char *s, size_t n);
void arena_free(arena *a);

#endif
