/*
 * chars.h: the byte classes every stage agrees on (like Lua's lctype.h).
 * All are ASCII-only and locale-free, on bytes.
 *
 * vm_is_word is the word character of the language's contains_word and
 * of Hyperscan's and PCRE2's \b and \B (ASCII [A-Za-z0-9_]): the compiler
 * lowers contains_word to \b or \B by it (vm/patterns.c), the interpreter
 * checks word boundaries on computed values by it (vm/interp_ops.h), so
 * both paths give the same answer.
 */
#ifndef VM_CHARS_H
#define VM_CHARS_H

static inline int vm_is_alpha(unsigned char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static inline int vm_is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline int vm_is_alnum(unsigned char c)
{
    return vm_is_alpha(c) || vm_is_digit(c);
}

static inline int vm_is_word(unsigned char c)
{
    return vm_is_alnum(c) || c == '_';
}

/* The value of hex digit c, or -1. */
static inline int vm_hex_value(unsigned char c)
{
    if (vm_is_digit(c)) return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
}

static inline unsigned char vm_ascii_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

#endif
