/*
 * size_arg.h: sizes on command lines ("64M", "1GiB", "65536").
 */
#ifndef CM_SIZE_ARG_H
#define CM_SIZE_ARG_H

#include <stdint.h>

/* Parses decimal digits with an optional binary suffix K, M, G or T (also
 * written KiB, MiB, GiB, TiB): "64M" is 67108864. Returns 0 and the bytes
 * in *out, or -1 for anything else (empty, a sign, an unknown suffix,
 * more than 2^50). */
int cm_parse_bytes(const char *s, uint64_t *out);

#endif
