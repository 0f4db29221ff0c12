/*
 * explain_text.c: bounded text for clf_eval_explain (explain_text.h).
 */
#include "explain_text.h"

#include <hs.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void vm_text_init(vm_text *t, char *buf, size_t cap)
{
    t->p = buf;
    t->cap = cap;
    t->n = 0;
    t->full = 0;
    buf[0] = 0;
}

void vm_text_put(vm_text *t, const char *s, size_t n)
{
    /* Keep room for the "..." and the NUL that vm_text_done may add. */
    size_t room = t->cap - 4 - t->n;
    if (t->full) return;
    if (n > room) {
        n = room;
        t->full = 1;
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = 0;
}

void vm_text_str(vm_text *t, const char *s) { vm_text_put(t, s, strlen(s)); }

void vm_text_i64(vm_text *t, int64_t v)
{
    char b[24];
    int k = snprintf(b, sizeof b, "%" PRId64, v);
    vm_text_put(t, b, (size_t)k);
}

/* One byte of a value: printable ASCII as is, the rest as \xHH. */
static void put_byte(vm_text *t, unsigned char c, int quoted)
{
    char b[5];
    if (c < 0x20 || c >= 0x7f) {
        snprintf(b, sizeof b, "\\x%02x", c);
        vm_text_put(t, b, 4);
    } else if (quoted && (c == '"' || c == '\\')) {
        b[0] = '\\';
        b[1] = (char)c;
        vm_text_put(t, b, 2);
    } else {
        b[0] = (char)c;
        vm_text_put(t, b, 1);
    }
}

void vm_text_quote(vm_text *t, const char *s, size_t n)
{
    vm_text_put(t, "\"", 1);
    for (size_t i = 0; i < n && i < VM_EXPLAIN_VALUE_BYTES; i++) put_byte(t, (unsigned char)s[i], 1);
    if (n > VM_EXPLAIN_VALUE_BYTES) vm_text_put(t, "...", 3);
    vm_text_put(t, "\"", 1);
}

void vm_text_name(vm_text *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n && i < VM_EXPLAIN_VALUE_BYTES; i++) put_byte(t, (unsigned char)s[i], 0);
    if (n > VM_EXPLAIN_VALUE_BYTES) vm_text_put(t, "...", 3);
}

void vm_text_regex(vm_text *t, const char *expr, size_t n, uint32_t hs_flags)
{
    vm_text_put(t, "/", 1);
    for (size_t i = 0; i < n && i < VM_EXPLAIN_VALUE_BYTES; i++)
        put_byte(t, (unsigned char)expr[i], 0);
    if (n > VM_EXPLAIN_VALUE_BYTES) vm_text_put(t, "...", 3);
    vm_text_put(t, "/", 1);
    if (hs_flags & HS_FLAG_CASELESS) vm_text_put(t, "i", 1);
    if (hs_flags & HS_FLAG_DOTALL) vm_text_put(t, "s", 1);
    if (hs_flags & HS_FLAG_MULTILINE) vm_text_put(t, "m", 1);
}

size_t vm_text_done(vm_text *t)
{
    if (t->full) { /* room for these was kept by vm_text_put */
        memcpy(t->p + t->n, "...", 4);
        t->n += 3;
    }
    return t->n;
}
