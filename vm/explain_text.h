/*
 * explain_text.h: bounded text for clf_eval_explain's steps. Everything
 * is written into a caller's fixed buffer (classification never
 * allocates); a text that does not fit ends in "...". Values are shown
 * quoted and escaped, at most VM_EXPLAIN_VALUE_BYTES bytes of each.
 */
#ifndef VM_EXPLAIN_TEXT_H
#define VM_EXPLAIN_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "visibility.h"

/* Bytes of a value (a string, a regex, a set element) shown before "...". */
#define VM_EXPLAIN_VALUE_BYTES 80

typedef struct vm_text {
    char *p;
    size_t cap; /* of p, at least 4 */
    size_t n;   /* bytes written; p[n] is NUL */
    int full;   /* something did not fit: vm_text_done ends it with "..." */
} vm_text;

VM_INTERNAL void vm_text_init(vm_text *t, char *buf, size_t cap);
/* Appends bytes as they are (the caller knows they are printable). */
VM_INTERNAL void vm_text_put(vm_text *t, const char *s, size_t n);
VM_INTERNAL void vm_text_str(vm_text *t, const char *s);
VM_INTERNAL void vm_text_i64(vm_text *t, int64_t v);
/* A string value: "..." with \" \\ and \xHH for bytes outside printable
 * ASCII, so the text is always one line of ASCII. */
VM_INTERNAL void vm_text_quote(vm_text *t, const char *s, size_t n);
/* A name from the program (a function, a header), unquoted: \xHH for
 * bytes outside printable ASCII, which a rules file may hold. */
VM_INTERNAL void vm_text_name(vm_text *t, const char *s, size_t n);
/* A regex as written: /EXPR/FLAGS, FLAGS from the HS_FLAG_* bits. */
VM_INTERNAL void vm_text_regex(vm_text *t, const char *expr, size_t n, uint32_t hs_flags);
/* Finishes the text (adding "..." when it was cut); returns its length. */
VM_INTERNAL size_t vm_text_done(vm_text *t);

#endif
