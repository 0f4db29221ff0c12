/*
 * sg_keys.c: JWK Sets into the key ring, thumbprints, lookups
 * (sg_keys.h). JSON is parsed by jansson (json_loadb with
 * JSON_REJECT_DUPLICATES: a JWK with two "x" members has no single
 * meaning, RFC 7517 section 4).
 */
#include <jansson.h>
#include <limits.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>

#include "sg_keys.h"
#include "sg_url.h"

void sg_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void sg_keyring_init(sg_keyring *r, const vm_allocator *al)
{
    memset(r, 0, sizeof *r);
    if (al) r->al = *al;
}

void sg_keyring_clear(sg_keyring *r)
{
    vm_free(&r->al, r->keys);
    vm_free(&r->al, r->agents);
    vm_free(&r->al, r->pool);
    vm_allocator al = r->al;
    sg_keyring_init(r, &al);
}

/* Grows *p (of *cap entries of `each` bytes) to hold `need`. */
static int grow(const vm_allocator *al, void **p, size_t *cap, size_t need, size_t each)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > SIZE_MAX / 2 / each) return -1;
        nc *= 2;
    }
    void *q = vm_malloc(al, nc * each);
    if (!q) return -1;
    if (*cap) memcpy(q, *p, *cap * each);
    vm_free(al, *p);
    *p = q;
    *cap = nc;
    return 0;
}

static int grow32(const vm_allocator *al, void **p, uint32_t *cap, size_t need, size_t each)
{
    size_t c = *cap;
    if (need > UINT32_MAX || grow(al, p, &c, need, each)) return -1;
    *cap = (uint32_t)(c > UINT32_MAX ? UINT32_MAX : c);
    return 0;
}

/* Appends bytes to the pool; returns their offset, or -1. */
static long pool_add(sg_keyring *r, const char *s, size_t n)
{
    if (r->npool + n > UINT32_MAX) return -1;
    if (grow(&r->al, (void **)&r->pool, &r->cap_pool, r->npool + n, 1)) return -1;
    memcpy(r->pool + r->npool, s, n);
    r->npool += n;
    return (long)(r->npool - n);
}

void sg_thumbprint_okp(const char *x, size_t xn, char out[SG_THUMB_LEN + 1])
{
    /* RFC 7638 section 3.2: the required members, in lexicographic order,
     * no whitespace; RFC 8037 appendix A.3 gives them for OKP. */
    static const char pre[] = "{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"";
    uint8_t h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, (const unsigned char *)pre, sizeof pre - 1);
    crypto_hash_sha256_update(&st, (const unsigned char *)x, xn);
    crypto_hash_sha256_update(&st, (const unsigned char *)"\"}", 2);
    crypto_hash_sha256_final(&st, h);
    sodium_bin2base64(out, SG_THUMB_LEN + 1, h, sizeof h, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

/* A string member, or NULL when absent; -1 in *bad when it is there but
 * not a string. */
static const char *str_member(json_t *o, const char *name, size_t *len, int *bad)
{
    json_t *v = json_object_get(o, name);
    if (!v) return NULL;
    if (!json_is_string(v)) {
        *bad = 1;
        return NULL;
    }
    *len = json_string_length(v);
    return json_string_value(v);
}

static int str_is(const char *s, size_t n, const char *z)
{
    return s && n == strlen(z) && memcmp(s, z, n) == 0;
}

/* An integer member ("nbf", "exp"): 0 absent, 1 present, -1 not an integer. */
static int int_member(json_t *o, const char *name, int64_t *out)
{
    json_t *v = json_object_get(o, name);
    if (!v) return 0;
    if (!json_is_integer(v)) return -1;
    *out = (int64_t)json_integer_value(v);
    return 1;
}

/* Whether key_ops (an array of strings) allows "verify"; -1 malformed. */
static int allows_verify(json_t *ops)
{
    if (!json_is_array(ops)) return -1;
    size_t i;
    json_t *e;
    int yes = 0;
    json_array_foreach(ops, i, e) {
        if (!json_is_string(e)) return -1;
        if (str_is(json_string_value(e), json_string_length(e), "verify")) yes = 1;
    }
    return yes;
}

/* One element of "keys": 1 taken (into *k), 0 skipped, -1 refused. */
static int parse_jwk(sg_keyring *r, json_t *o, size_t idx, sg_key *k, char *err, size_t errlen)
{
    if (!json_is_object(o)) {
        sg_errf(err, errlen, "key %zu is not a JSON object", idx);
        return -1;
    }
    int bad = 0;
    size_t ktyn = 0, crvn = 0, xn = 0, usen = 0, algn = 0, kidn = 0;
    const char *kty = str_member(o, "kty", &ktyn, &bad);
    const char *crv = str_member(o, "crv", &crvn, &bad);
    const char *x = str_member(o, "x", &xn, &bad);
    const char *use = str_member(o, "use", &usen, &bad);
    const char *alg = str_member(o, "alg", &algn, &bad);
    const char *kid = str_member(o, "kid", &kidn, &bad);
    if (bad) {
        sg_errf(err, errlen, "key %zu: kty, crv, x, use, alg and kid must be strings", idx);
        return -1;
    }
    if (!kty) {
        sg_errf(err, errlen, "key %zu has no \"kty\" (RFC 7517 section 4.1)", idx);
        return -1;
    }
    if (!str_is(kty, ktyn, "OKP") || !str_is(crv, crvn, "Ed25519")) return 0;
    if (json_object_get(o, "d")) {
        sg_errf(err, errlen, "key %zu holds a private key (\"d\"): a key directory publishes "
                          "public keys only", idx);
        return -1;
    }
    if (!x || xn != SG_THUMB_LEN) {
        sg_errf(err, errlen, "key %zu: \"x\" must be 32 bytes in base64url without padding "
                          "(43 characters)", idx);
        return -1;
    }
    size_t len = 0;
    const char *end = NULL;
    if (sodium_base642bin(k->pk, sizeof k->pk, x, xn, NULL, &len, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        len != 32 || end != x + xn) {
        sg_errf(err, errlen, "key %zu: \"x\" is not base64url of 32 bytes", idx);
        return -1;
    }
    if (!crypto_core_ed25519_is_valid_point(k->pk)) {
        sg_errf(err, errlen, "key %zu: \"x\" is not an Ed25519 public key (not a point of "
                          "prime order on the curve)", idx);
        return -1;
    }
    k->nbf = INT64_MIN;
    k->exp = INT64_MAX;
    if (int_member(o, "nbf", &k->nbf) < 0 || int_member(o, "exp", &k->exp) < 0) {
        sg_errf(err, errlen, "key %zu: \"nbf\" and \"exp\" must be integers (seconds since the "
                          "epoch)", idx);
        return -1;
    }
    json_t *ops = json_object_get(o, "key_ops");
    int verify = ops ? allows_verify(ops) : 1;
    if (verify < 0) {
        sg_errf(err, errlen, "key %zu: \"key_ops\" must be an array of strings", idx);
        return -1;
    }
    if (!verify || (use && !str_is(use, usen, "sig"))) return 0;
    if (alg && !str_is(alg, algn, "ed25519") && !str_is(alg, algn, "EdDSA") &&
        !str_is(alg, algn, "Ed25519"))
        return 0;
    sg_thumbprint_okp(x, xn, k->thumb);
    k->kid = k->kid_len = 0;
    if (kid && kidn) {
        long off = kidn <= UINT32_MAX ? pool_add(r, kid, kidn) : -1;
        if (off < 0) return -2;
        k->kid = (uint32_t)off;
        k->kid_len = (uint32_t)kidn;
    }
    return 1;
}

/* The index of agent URL u (normalized), added when new; -1 no memory. */
static long agent_index(sg_keyring *r, const char *u, size_t n)
{
    for (uint32_t a = 0; a < r->nagents; a++)
        if (sg_str_eq(sg_keyring_agent(r, a), u, n)) return a;
    if (grow32(&r->al, (void **)&r->agents, &r->cap_agents, (size_t)r->nagents + 1,
               sizeof *r->agents))
        return -1;
    long off = pool_add(r, u, n);
    if (off < 0) return -1;
    r->agents[r->nagents].off = (uint32_t)off;
    r->agents[r->nagents].len = (uint32_t)n;
    return r->nagents++;
}

/* The ring index of Signature-Agent URL agent[0..n) (normalized here),
 * into *ai: SG_KEYS_OK, SG_KEYS_INVALID (not an https URL) or
 * SG_KEYS_NOMEM. */
static sg_keys_status agent_of(sg_keyring *r, const char *agent, size_t n, uint32_t *ai,
                               char *err, size_t errlen)
{
    char norm[SG_URL_MAX];
    long nn = n < sizeof norm ? sg_url_norm(agent, n, norm, sizeof norm, NULL) : -1;
    if (nn < 0) {
        sg_errf(err, errlen, "the Signature-Agent URL '%.*s' is not an https URL of at most %d "
                          "bytes (draft-meunier-webbotauth-httpsig-protocol: \"scheme MUST be "
                          "https\")", (int)(n > 100 ? 100 : n), agent, SG_URL_MAX - 1);
        return SG_KEYS_INVALID;
    }
    long a = agent_index(r, norm, (size_t)nn);
    if (a < 0) {
        sg_errf(err, errlen, "out of memory");
        return SG_KEYS_NOMEM;
    }
    *ai = (uint32_t)a;
    return SG_KEYS_OK;
}

sg_keys_status sg_keyring_add_jwks(sg_keyring *r, const char *agent, size_t agent_len,
                                   const char *json, size_t n, uint32_t *added,
                                   uint32_t *skipped, char *err, size_t errlen)
{
    uint32_t nkeys0 = r->nkeys, nagents0 = r->nagents, took = 0, skip = 0;
    size_t npool0 = r->npool;
    sg_keys_status st = SG_KEYS_OK;
    if (added) *added = 0;
    if (skipped) *skipped = 0;
    json_error_t je;
    json_t *root = json_loadb(json, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        sg_errf(err, errlen, "not JSON (RFC 8259): %s at line %d, column %d", je.text, je.line,
             je.column);
        return SG_KEYS_INVALID;
    }
    json_t *keys = json_is_object(root) ? json_object_get(root, "keys") : NULL;
    if (!json_is_array(keys)) {
        sg_errf(err, errlen, "not a JWK Set: the top level must be an object with a \"keys\" "
                          "array (RFC 7517 section 5)");
        st = SG_KEYS_INVALID;
        goto done;
    }
    /* The URL the set was fetched from: the caller's, else the set's own
     * "signature_agent" member (ours: RFC 7517 section 5 lets a JWK Set
     * carry members its readers do not know). */
    json_t *sa = json_object_get(root, "signature_agent");
    if (sa && !json_is_string(sa)) {
        sg_errf(err, errlen, "\"signature_agent\" must be a string (an https URL)");
        st = SG_KEYS_INVALID;
        goto done;
    }
    if (!agent_len && sa) {
        agent = json_string_value(sa);
        agent_len = json_string_length(sa);
    }
    uint32_t ai = SG_NO_AGENT;
    if (agent_len && (st = agent_of(r, agent, agent_len, &ai, err, errlen))) goto done;
    size_t i;
    json_t *o;
    json_array_foreach(keys, i, o) {
        sg_key k;
        memset(&k, 0, sizeof k);
        int got = parse_jwk(r, o, i, &k, err, errlen);
        if (got == -2) {
            st = SG_KEYS_NOMEM;
            sg_errf(err, errlen, "out of memory");
            goto done;
        }
        if (got < 0) {
            st = SG_KEYS_INVALID;
            goto done;
        }
        if (got == 0) {
            skip++;
            continue;
        }
        if (r->nkeys >= SG_MAX_KEYS) {
            sg_errf(err, errlen, "more than %u keys in the key ring", SG_MAX_KEYS);
            st = SG_KEYS_INVALID;
            goto done;
        }
        if (grow32(&r->al, (void **)&r->keys, &r->cap_keys, (size_t)r->nkeys + 1,
                   sizeof *r->keys)) {
            st = SG_KEYS_NOMEM;
            sg_errf(err, errlen, "out of memory");
            goto done;
        }
        k.agent = ai;
        r->keys[r->nkeys++] = k;
        took++;
    }
done:
    json_decref(root);
    if (st == SG_KEYS_OK) {
        if (added) *added = took;
        if (skipped) *skipped = skip;
        return st;
    }
    r->nkeys = nkeys0; /* all or nothing */
    r->nagents = nagents0;
    r->npool = npool0;
    return st;
}

sg_keys_status sg_keyring_copy(sg_keyring *dst, const sg_keyring *src, const vm_allocator *al)
{
    sg_keyring_init(dst, al);
    if (!src->nkeys) return SG_KEYS_OK;
    dst->keys = vm_malloc(&dst->al, src->nkeys * sizeof *dst->keys);
    dst->agents = vm_malloc(&dst->al, (src->nagents ? src->nagents : 1) * sizeof *dst->agents);
    dst->pool = vm_malloc(&dst->al, src->npool ? src->npool : 1);
    if (!dst->keys || !dst->agents || !dst->pool) {
        sg_keyring_clear(dst);
        return SG_KEYS_NOMEM;
    }
    memcpy(dst->keys, src->keys, src->nkeys * sizeof *dst->keys);
    if (src->nagents) memcpy(dst->agents, src->agents, src->nagents * sizeof *dst->agents);
    if (src->npool) memcpy(dst->pool, src->pool, src->npool);
    dst->nkeys = dst->cap_keys = src->nkeys;
    dst->nagents = dst->cap_agents = src->nagents;
    dst->npool = dst->cap_pool = src->npool;
    return SG_KEYS_OK;
}

static int key_matches(const sg_keyring *r, const sg_key *k, sg_str keyid)
{
    if (sg_str_eq(keyid, k->thumb, SG_THUMB_LEN)) return 1;
    return k->kid_len && sg_str_eq(keyid, r->pool + k->kid, k->kid_len);
}

const sg_key *sg_keyring_find(const sg_keyring *r, const char *agent, size_t an, sg_str keyid,
                              const sg_key **other)
{
    const sg_key *mine = NULL, *nourl = NULL, *any = NULL;
    for (uint32_t i = 0; i < r->nkeys; i++) {
        const sg_key *k = &r->keys[i];
        if (!key_matches(r, k, keyid)) continue;
        if (k->agent == SG_NO_AGENT) {
            if (!nourl) nourl = k;
        } else {
            if (!any) any = k;
            if (an && !mine && sg_str_eq(sg_keyring_agent(r, k->agent), agent, an)) mine = k;
        }
    }
    if (other) *other = NULL;
    if (mine) return mine;
    if (nourl) return nourl;
    if (an) {
        if (other) *other = any;
        return NULL;
    }
    return any;
}
