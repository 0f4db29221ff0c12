/*
 * lint.h: warnings about rules that compile but silently miss (lint.c;
 * docs/language.md, "Lints").
 */
#ifndef LANG_LINT_H
#define LANG_LINT_H

#include <stddef.h>

#include "compile.h"

/* One User-Agent of a corpus: n bytes at s (not NUL-terminated). */
typedef struct lint_ua {
    const char *s;
    size_t n;
} lint_ua;

/* User-Agents the corpus lints hold patterns against (classifyc
 * --ua-corpus): lines of text files, in the format classify-run
 * --ua-file reads. */
struct lint_corpus {
    lint_ua *uas;
    size_t n, cap;
    char **texts; /* the files' bytes, which uas point into */
    size_t ntexts;
};

/* Adds the lines of the file at `path` (empty lines skipped, a CR before
 * the LF dropped). Returns 0, or -1 with a message in err (the file
 * cannot be read, is over `max` bytes, or memory ran out). */
int lint_corpus_add(lint_corpus *c, const char *path, uint64_t max, char *err, size_t errlen);
void lint_corpus_free(lint_corpus *c);

/* Adds the lints' warnings about the checked main module of `c` to its
 * diagnostics, with the options c->opts gives: the corpus lints only with
 * a corpus, the data-age lint only with max_data_age. */
void lint_program(compilation *c);

#endif
