/*
 * sg_sf.h: Structured Field Values for HTTP (RFC 8941): the parser and
 * the strict serializer that HTTP Message Signatures need.
 *
 * Parsing follows RFC 8941 section 4.2 exactly (the algorithms, not a
 * lenient reading of the ABNF): a field that fails anywhere fails as a
 * whole, and the error names the byte offset and the rule that failed.
 * RFC 9651's Date and Display String types are not part of RFC 8941 and
 * are refused as the unknown bare items they are there.
 *
 * Nothing is copied and nothing is allocated: the result is a set of
 * slices of the input, laid out in three arrays the caller provides
 * (sg_sf, sized once, for example when a context is made). Members,
 * items and parameters of one structure are contiguous in their arrays,
 * because RFC 8941 parses each fully before the next one starts:
 *
 *     Signature-Input: sig1=("@authority" "signature-agent";key="sig1");created=1
 *     member "sig1": inner list, items [0, 2), params [1, 2) (created)
 *     item 0 "@authority": no params; item 1 "signature-agent": params [0, 1) (key)
 *
 * A parse that needs more entries than an array holds fails with
 * "too many ..." (the limit is the array's size, documented by its
 * owner). Strings keep their escapes (raw slice between the quotes),
 * byte sequences their base64 text; sg_sf_unescape and the serializer
 * turn them into bytes.
 *
 * Pure functions: no global state, safe from any number of threads on
 * distinct sg_sf arrays.
 */
#ifndef SG_SF_H
#define SG_SF_H

#include <stddef.h>
#include <stdint.h>

#include "sg_buf.h"

/* Bare item types (RFC 8941 section 3.3). */
typedef enum sg_kind {
    SG_INT = 1,   /* i: the value */
    SG_DEC = 2,   /* i: the value times 1000 (at most 3 fraction digits) */
    SG_STR = 3,   /* raw: the bytes between the quotes, escapes kept */
    SG_TOKEN = 4, /* raw: the token */
    SG_BYTES = 5, /* raw: the base64 text between the colons */
    SG_BOOL = 6   /* i: 0 or 1 */
} sg_kind;

typedef struct sg_bare {
    uint8_t kind;    /* sg_kind */
    uint8_t escaped; /* SG_STR: raw holds at least one \" or \\ */
    int64_t i;
    sg_str raw;
} sg_bare;

typedef struct sg_param {
    sg_str key;
    sg_bare v; /* a parameter without "=value" is the Boolean true */
} sg_param;

typedef struct sg_item {
    sg_bare v;
    uint32_t param0, nparams; /* in sg_sf.pa */
} sg_item;

/* A member of a List or Dictionary: an Item or an Inner List. */
typedef struct sg_member {
    sg_str key;               /* Dictionary key; empty for a List member */
    uint8_t inner;            /* 1: an Inner List */
    uint32_t item0, nitems;   /* in sg_sf.it: an Item is one entry */
    uint32_t param0, nparams; /* an Inner List's own parameters (an Item's
                                 are its item's) */
} sg_member;

/* The caller's arrays and how much of each is used. Parses append:
 * several fields may share one sg_sf (sg_sf_clear starts over). */
typedef struct sg_sf {
    sg_member *m;
    uint32_t nm, cap_m;
    sg_item *it;
    uint32_t nit, cap_it;
    sg_param *pa;
    uint32_t npa, cap_pa;
} sg_sf;

/* Where a parse failed: byte offset into the field value, and what the
 * parser expected there (a static string). */
typedef struct sg_sf_error {
    size_t off;
    const char *what;
} sg_sf_error;

static inline void sg_sf_clear(sg_sf *sf) { sf->nm = sf->nit = sf->npa = 0; }

/* Parses p[0..n) as a Dictionary (RFC 8941 section 4.2.2) and appends
 * its members to sf; *first and *count give them. A key given twice
 * keeps its first position and takes its last value, as the RFC's
 * ordered map does. An empty field is the empty Dictionary.
 * Returns 0, or -1 with *e set. */
int sg_sf_parse_dict(sg_sf *sf, const char *p, size_t n, uint32_t *first, uint32_t *count,
                     sg_sf_error *e);

/* Parses p[0..n) as an Item (section 4.2.3) into members entry *first
 * (inner 0). Returns 0, or -1 with *e set. */
int sg_sf_parse_item(sg_sf *sf, const char *p, size_t n, uint32_t *first, sg_sf_error *e);

/* The parameter named key (NUL-terminated, a valid sf key) among
 * params [param0, param0 + nparams) of sf, or NULL. The last one wins
 * (section 4.2.3.2: a repeated key overwrites). */
const sg_param *sg_sf_param(const sg_sf *sf, uint32_t param0, uint32_t nparams, const char *key);

/* The member called key[0..klen) among members [first, first + count),
 * or NULL. */
const sg_member *sg_sf_member(const sg_sf *sf, uint32_t first, uint32_t count, const char *key,
                              size_t klen);

/* The bytes of String s (SG_STR), its escapes undone: s->raw itself when
 * it has none, else a copy in b. Returns 0, or -1 when b is full. */
int sg_sf_unescape(const sg_bare *s, sg_buf *b, sg_str *out);

/* Strict serialization (RFC 8941 section 4.1) into o: a bare item
 * (4.1.3), parameters (4.1.1.2), an Item with its parameters, and a
 * member value (an Item or an Inner List, 4.1.1.1), as RFC 9421 section
 * 2.1.2 serializes a Dictionary member. A Byte Sequence is written as
 * its sender wrote it, padded when it was not (4.1.8 pads; the parser
 * checked the shape of the base64). o->full is set when o overflows. */
void sg_sf_ser_bare(sg_out *o, const sg_bare *v);
void sg_sf_ser_params(sg_out *o, const sg_sf *sf, uint32_t param0, uint32_t nparams);
void sg_sf_ser_item(sg_out *o, const sg_sf *sf, const sg_item *it);
void sg_sf_ser_member(sg_out *o, const sg_sf *sf, const sg_member *m);

/* Decodes byte sequence v (SG_BYTES) into dst[0..cap): padded or not
 * (RFC 8941 section 4.2.7 asks parsers to accept both). Returns the
 * length, or -1 when it is not base64 libsodium accepts (non-zero pad
 * bits included: libsodium cannot be told to ignore them, which the
 * same section allows) or longer than cap. */
long sg_sf_bytes(const sg_bare *v, uint8_t *dst, size_t cap);

#endif
