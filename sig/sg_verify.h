/*
 * sg_verify.h: HTTP Message Signatures (RFC 9421) on a request, as Web
 * Bot Auth profiles them (draft-meunier-webbotauth-httpsig-protocol):
 * the request as the host handed it over, the signature base
 * (sg_base_build), and the verification of a request's signatures
 * against a key ring (sg_verify), with the outcome and its reason.
 *
 * Nothing here allocates: parsed fields go into the caller's sg_scratch
 * (sized once), and bytes that must be built (field lines joined, the
 * signature base, a String with escapes) into the caller's sg_buf.
 * Functions are pure but for the scratch, the buffer and the result.
 */
#ifndef SG_VERIFY_H
#define SG_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "explain_text.h"
#include "hline.h"
#include "sg_buf.h"
#include "sg_keys.h"
#include "sg_sf.h"

/* One header field line, as the host gave it (the context's own type). */
typedef vm_hline sg_field;

/* The request: the derived components come from these (RFC 9421
 * section 2.2, each function in sg_base.c says which it reads). */
typedef struct sg_req {
    sg_str method;
    sg_str path;   /* before the '?', as sent */
    sg_str query;  /* after the '?', without it */
    sg_str scheme; /* "" when the host did not say */
    const sg_field *fields;
    size_t nfields;
} sg_req;

/* The bounds of what one request's fields may parse into: a field that
 * needs more fails to parse ("too many ..."). Far above any Web Bot Auth
 * request (one or two signatures of a few components). */
#define SG_MAX_MEMBERS 64
#define SG_MAX_ITEMS 256
#define SG_MAX_PARAMS 256

typedef struct sg_scratch {
    sg_sf sf;
    /* Ed25519 verifications run since the scratch was made: what the
     * tests count to show that a request without a signature costs
     * none. */
    uint64_t verifications;
} sg_scratch;

/* Allocates a scratch from al (about 24 KiB). NULL when out of memory. */
sg_scratch *sg_scratch_new(const vm_allocator *al);
void sg_scratch_free(sg_scratch *sc, const vm_allocator *al);

/* The value of header `name` (lower-case, nlen bytes) for a signature
 * base (RFC 9421 section 2.1): every line's value without leading and
 * trailing whitespace, joined with ", " (in b when there are several;
 * with b NULL, *out is the first line's). Returns the number of lines
 * (0: absent, *out empty), or -1 when b is full. */
long sg_field_value(const sg_req *rq, const char *name, size_t nlen, sg_buf *b, sg_str *out);

/* Appends to o the signature base (RFC 9421 section 2.5) of the
 * signature whose Signature-Input member is m (an Inner List in sc->sf):
 * one line per covered component, then the "@signature-params" line.
 * What a line needs built on the way (lines joined, a name decoded)
 * lives at the top of o's space while it is needed. Returns 0, or -1
 * with the reason in why (the component and the rule); o->full means the
 * base did not fit (the caller says so). */
int sg_base_build(const sg_req *rq, sg_scratch *sc, const sg_member *m, sg_out *o, vm_text *why);

/* What a verifier requires beyond RFC 9421 itself (section 3.2.1,
 * "Enforcing Application Requirements"). */
typedef struct sg_policy {
    int64_t now;       /* seconds since the epoch */
    int64_t skew;      /* seconds of clock skew allowed either way */
    uint32_t max_sigs; /* most signatures examined per request */
    /* Web Bot Auth: tag "web-bot-auth", created and expires present,
     * @authority or @target-uri covered. 0: RFC 9421 alone (any tag;
     * created and expires checked when present), for its test vectors. */
    int web_bot_auth;
} sg_policy;

typedef enum sg_outcome { SG_ABSENT = 0, SG_VALID = 1, SG_INVALID = 2 } sg_outcome;

#define SG_REASON_BYTES 256

typedef struct sg_result {
    int status;   /* sg_outcome */
    /* The strings below point into the key ring (they live as long as it
     * does), or are "". */
    sg_str keyid; /* SG_VALID: the keyid that found the key (its
                     thumbprint or kid, as the ring holds it) */
    sg_str agent; /* SG_VALID: the normalized URL of the Signature-Agent
                     member the signature covers and the ring has the key
                     for ("" when the ring names no URL for the key, or the
                     signature covers no member) */
    char reason[SG_REASON_BYTES]; /* one line of printable ASCII */
    size_t reason_len;
} sg_result;

/* Verifies the request's signatures (RFC 9421 section 3.2) with the keys
 * of ring under policy pol, into *out. Absent: no Signature-Input and no
 * Signature field. Otherwise the candidates are the Signature-Input
 * members, in field order, whose tag is "web-bot-auth" (any, without
 * web_bot_auth), at most pol->max_sigs of them; the first that verifies
 * makes the request valid; when none does, it is invalid with the first
 * candidate's reason. ws is used from ws->used on and given back: on
 * return ws->used is what it was. */
void sg_verify(const sg_req *rq, const sg_keyring *ring, const sg_policy *pol, sg_scratch *sc,
               sg_buf *ws, sg_result *out);

#endif
