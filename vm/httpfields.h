/*
 * httpfields.h: lookups inside HTTP field values for the VM: one cookie
 * of a Cookie header, one parameter of a query string, and
 * percent-decoding.
 *
 * Every function here is pure: no allocation, no output, no global state,
 * safe from any number of threads. Inputs are (pointer, length), need not
 * be NUL-terminated, and are never read past their length. Bytes are
 * bytes: nothing is validated or converted as UTF-8.
 */
#ifndef VM_HTTPFIELDS_H
#define VM_HTTPFIELDS_H

#include <stddef.h>

#include "visibility.h"

/* Finds the first cookie named name[0..name_len) in one Cookie header
 * value hdr[0..n) such as "a=1; b=2". Names compare byte for byte, case
 * included (RFC 6265 sections 4.2.1 and 5.4). Parsing is lenient, as
 * browsers and servers are: pairs are split on ';' (not ','), OWS (SP,
 * HTAB) around each pair and around its first '=' is trimmed, and a pair
 * without '=' is skipped (it names no cookie). The value is everything
 * after the first '=', as sent: not decoded, surrounding DQUOTEs kept
 * (RFC 6265 4.1.1 makes them part of the value). An empty name matches a
 * pair written "=v", like any other name.
 * Returns 1 and sets *v, *vn to a slice of hdr (possibly empty) when
 * found; 0 otherwise (*v, *vn untouched). */
VM_INTERNAL int vm_http_cookie(const char *hdr, size_t n, const char *name, size_t name_len,
                               const char **v, size_t *vn);

/* Finds the first parameter named name[0..name_len) in the query string
 * q[0..n) (the part after '?', without it; no fragment), parsed as
 * application/x-www-form-urlencoded per the WHATWG URL standard (section
 * 5.1, the parser browsers and most frameworks share): split on
 * '&' only (not ';', which HTML 4 once suggested), empty pieces skipped,
 * name and value split at the first '=' (none: the value is empty), '+'
 * is a space and %HH a byte in both, an invalid escape (a '%' not followed
 * by two hex digits) is kept as it is. The encoded name is decoded before
 * it is compared with `name`, byte for byte; an empty name matches
 * "=v" (the WHATWG parser yields the pair ("", "v") for it).
 * The decoded value is written to buf[0..cap) (not NUL-terminated).
 * Returns the value's length (>= 0) when found, -1 when absent, -2 when
 * the decoded value is longer than cap (nothing past buf[cap-1] is
 * written; buf's contents are then unspecified). */
VM_INTERNAL long vm_http_query_param(const char *q, size_t n, const char *name, size_t name_len,
                                     char *buf, size_t cap);

/* How many parameters of the query string q[0..n) are named
 * name[0..name_len), parsed as vm_http_query_param parses them: RFC 9421
 * section 2.2.8 refuses to sign a parameter that occurs more than once. */
VM_INTERNAL size_t vm_http_query_count(const char *q, size_t n, const char *name,
                                       size_t name_len);

/* Percent-decodes src[0..n) into dst: %HH (either case) becomes one byte,
 * an invalid escape is copied as it is, and '+' becomes ' ' when
 * plus_is_space (form encoding) and stays '+' otherwise (RFC 3986 paths).
 * The decoded text is never longer than the input, and dst may equal src
 * (decoding in place); other overlaps are not allowed. Returns the
 * decoded length. */
VM_INTERNAL size_t vm_http_pct_decode(const char *src, size_t n, char *dst, int plus_is_space);

#endif
