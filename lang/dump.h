/*
 * dump.h: loading a compiled rules file back (dump.c).
 */
#ifndef LANG_DUMP_H
#define LANG_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "source.h"

/* Loads bin/len with the hosts' loader and verifier (default options).
 * With `dump` non-NULL, writes the disassembly there, with the lines of
 * `src` above the code compiled from them. Returns 0, or -1 with the
 * loader's message in err. */
int cc_load_back(const uint8_t *bin, size_t len, const src_set *src, FILE *dump, char *err,
                 size_t errlen);

#endif
