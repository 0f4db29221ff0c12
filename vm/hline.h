/*
 * hline.h: one header field line as the host handed it over, name and
 * value borrowed. A context keeps every line (not only those of the
 * headers its rules name) when its rules read a signature field: the
 * components a signature covers are named by the request, not by the
 * rules (sig/sg_verify.h).
 */
#ifndef VM_HLINE_H
#define VM_HLINE_H

#include <stddef.h>

typedef struct vm_hline {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} vm_hline;

#endif
