/*
 * util.h: helpers shared by the benchmark programs (classify-bench, its
 * Lua hosts, classify-scale and classify-redos-bench). A benchmark may
 * stop on the first error: these print it, prefixed with the program's
 * name, and exit 1.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The name die() prints before "error:"; set once in main(). */
extern const char *bench_prog;

void die(const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size); /* zeroed */
void *xrealloc(void *p, size_t n);
/* The whole file, NUL-terminated (len excludes the NUL); dies unless it
 * is a regular file. */
char *read_file(const char *path, size_t *len);
/* The value of a number option: all of `s`, decimal, from lo to hi;
 * dies naming `opt` otherwise. */
uint64_t num_arg(const char *opt, const char *s, uint64_t lo, uint64_t hi);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);
/* qsort comparator for uint64_t. */
int cmp_u64(const void *a, const void *b);

#ifdef __cplusplus
}
#endif

#endif
