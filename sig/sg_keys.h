/*
 * sg_keys.h: the key ring: Ed25519 verification keys, each with the
 * Signature-Agent URL it was published at (or none), loaded from JWK Sets
 * in the Web Bot Auth key directory format.
 *
 * Format (draft-meunier-webbotauth-httpsig-protocol, "Directory Format";
 * RFC 7517 section 5): a JSON object with a "keys" array of JWKs. A key
 * is taken when "kty" is "OKP" and "crv" is "Ed25519" (RFC 8037 section
 * 2), with "x" the 32-byte public key in base64url without padding.
 * Other keys (RSA, EC, X25519, ...) are skipped and counted, as are keys
 * whose "use" is not "sig", whose "key_ops" lack "verify" or whose "alg"
 * is not an Ed25519 name ("ed25519", RFC 9421 section 6.2.2; "EdDSA",
 * "Ed25519", the JOSE names): a directory may hold keys for other
 * consumers. Refused, failing the whole set (a verifier "SHOULD validate
 * the directory format and reject malformed entries"): JSON that does
 * not parse (RFC 8259; duplicate member names included), a top level
 * without a "keys" array, an element that is not an object, a member of
 * the wrong JSON type, an "x" that is not 32 bytes of base64url or not a
 * point of the curve, and a "d" member (a private key: a directory
 * publishes public keys only).
 *
 * Each key's keyid is its JWK SHA-256 thumbprint (RFC 7638 section 3;
 * for OKP keys RFC 8037 appendix A.3: the JSON {"crv","kty","x"} in that
 * order, hashed, base64url), the identifier Web Bot Auth's `keyid`
 * parameter carries. A "kid" member is kept too and matches as well: the
 * draft says a directory's kid MUST be the thumbprint, and a jwks_uri
 * set's kid is the operator's label, which signers may use. "nbf" and
 * "exp" (seconds since the epoch, integers) bound when the key may
 * verify.
 *
 * Lookup is keyed on (URL, keyid), as the draft requires ("Key lookup
 * MUST be keyed on the (URL, key) pair"): sg_keyring_find.
 *
 * Memory: a ring owns its arrays (from its vm_allocator). JSON parsing
 * (jansson) allocates with malloc while loading; nothing of it is kept.
 * Lookups are pure. A ring being loaded is used by one thread; a loaded
 * ring may be read by any number.
 */
#ifndef SG_KEYS_H
#define SG_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "sg_buf.h"

#define SG_THUMB_LEN 43 /* base64url of a SHA-256 digest, unpadded */
#define SG_NO_AGENT UINT32_MAX
/* The longest Signature-Agent URL kept, normalized, NUL included. */
#define SG_URL_MAX 2048
/* Most keys one ring holds: a bound on what a loaded set can make the
 * host allocate, far above what any directory publishes. */
#define SG_MAX_KEYS 65536u

typedef struct sg_key {
    uint8_t pk[32];
    char thumb[SG_THUMB_LEN + 1];
    uint32_t kid, kid_len; /* the JWK's kid in the pool; kid_len 0: none */
    uint32_t agent;        /* index into agents, or SG_NO_AGENT */
    int64_t nbf, exp;      /* INT64_MIN / INT64_MAX when the JWK has none */
} sg_key;

typedef struct sg_agent {
    uint32_t off, len; /* the normalized URL (sg_url_norm) in the pool */
} sg_agent;

typedef struct sg_keyring {
    vm_allocator al;
    sg_key *keys;
    uint32_t nkeys, cap_keys;
    sg_agent *agents;
    uint32_t nagents, cap_agents;
    char *pool;
    size_t npool, cap_pool;
} sg_keyring;

typedef enum sg_keys_status { SG_KEYS_OK = 0, SG_KEYS_NOMEM = -1, SG_KEYS_INVALID = -2 } sg_keys_status;

/* Formats a message into err[0..errlen) (err may be NULL with errlen 0). */
void sg_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An empty ring allocating from al (copied; NULL: malloc). */
void sg_keyring_init(sg_keyring *r, const vm_allocator *al);
/* Frees what the ring holds (not r itself). */
void sg_keyring_clear(sg_keyring *r);

/* Adds every usable key of the JWK Set json[0..n) under the
 * Signature-Agent URL agent[0..agent_len) (normalized by sg_url_norm);
 * with agent_len 0, under the set's own top-level "signature_agent"
 * string when it has one, else under no URL. All or nothing: on error the
 * ring is as it was. *added and *skipped (may be NULL) count the keys
 * taken and skipped. Returns SG_KEYS_OK, SG_KEYS_NOMEM, or
 * SG_KEYS_INVALID with a message naming the key (its index in "keys")
 * and the problem, or the JSON line and column. */
sg_keys_status sg_keyring_add_jwks(sg_keyring *r, const char *agent, size_t agent_len,
                                   const char *json, size_t n, uint32_t *added,
                                   uint32_t *skipped, char *err, size_t errlen);

/* A copy of src allocating from al, into *dst (initialized here).
 * Returns SG_KEYS_OK or SG_KEYS_NOMEM (dst then empty). */
sg_keys_status sg_keyring_copy(sg_keyring *dst, const sg_keyring *src, const vm_allocator *al);

/* The RFC 7638 thumbprint of the Ed25519 JWK whose "x" is x[0..xn),
 * into out (SG_THUMB_LEN + 1 bytes, NUL-terminated). */
void sg_thumbprint_okp(const char *x, size_t xn, char out[SG_THUMB_LEN + 1]);

/* Finds the key `keyid` for Signature-Agent URL agent[0..an) (already
 * normalized; an 0: the signature names no agent). With an agent: the
 * key published by that URL; else one the ring holds for no URL (the
 * caller then attributes the request to no URL). Without an agent: a
 * key for no URL first, else one of any URL. A key matches when keyid is
 * its thumbprint or its kid. Returns the key, or NULL; then *other (may
 * be NULL) is a key with that keyid published by another URL, if any. */
const sg_key *sg_keyring_find(const sg_keyring *r, const char *agent, size_t an, sg_str keyid,
                              const sg_key **other);

/* The normalized URL of agent index a (a valid index). */
static inline sg_str sg_keyring_agent(const sg_keyring *r, uint32_t a)
{
    sg_str s = {r->pool + r->agents[a].off, r->agents[a].len};
    return s;
}

#endif
