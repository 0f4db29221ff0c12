/*
 * keyring.c: the public face of key rings (classify.h, "Key rings"):
 * argument checks and lifetimes; the ring is sig/sg_keys.h's, files are
 * read by sig/sg_keyfile.c.
 */
#include <sodium.h>

#include "classify.h"
#include "program.h"
#include "sg_keyfile.h"

struct clf_keyring {
    sg_keyring r;
};

static void clear_err(char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
}

CLF_API clf_status clf_keyring_new(clf_keyring **out)
{
    if (!out) return CLF_E_INVALID;
    /* Chooses libsodium's implementations; idempotent and thread-safe. */
    if (sodium_init() < 0) return CLF_E_NOMEM;
    *out = malloc(sizeof **out);
    if (!*out) return CLF_E_NOMEM;
    sg_keyring_init(&(*out)->r, NULL);
    return CLF_OK;
}

CLF_API void clf_keyring_free(clf_keyring *ring)
{
    if (!ring) return;
    sg_keyring_clear(&ring->r);
    free(ring);
}

CLF_API clf_status clf_keyring_add_jwks(clf_keyring *ring, const char *json, size_t len,
                                        const char *agent, size_t agent_len, char *err,
                                        size_t errlen)
{
    clear_err(err, errlen);
    if (!ring || (!json && len) || (!agent && agent_len)) {
        vm_errf(err, errlen, "NULL key ring, set or URL");
        return CLF_E_INVALID;
    }
    sg_keys_status st = sg_keyring_add_jwks(&ring->r, agent, agent_len, json ? json : "", len,
                                            NULL, NULL, err, errlen);
    return st == SG_KEYS_OK ? CLF_OK : st == SG_KEYS_NOMEM ? CLF_E_NOMEM : CLF_E_FORMAT;
}

CLF_API clf_status clf_keyring_load(clf_keyring *ring, const char *path, char *err,
                                    size_t errlen)
{
    clear_err(err, errlen);
    if (!ring || !path) {
        vm_errf(err, errlen, "NULL key ring or path");
        return CLF_E_INVALID;
    }
    switch (sg_keyring_load_path(&ring->r, path, err, errlen)) {
    case SG_FILE_OK: return CLF_OK;
    case SG_FILE_NOMEM: return CLF_E_NOMEM;
    case SG_FILE_FORMAT: return CLF_E_FORMAT;
    default: return CLF_E_IO;
    }
}

CLF_API size_t clf_keyring_count(const clf_keyring *ring)
{
    return ring ? ring->r.nkeys : 0;
}

CLF_API clf_status clf_options_set_keyring(clf_options *opts, const clf_keyring *ring)
{
    if (!opts) return CLF_E_INVALID;
    opts->keyring = ring ? &ring->r : NULL;
    return CLF_OK;
}

CLF_API clf_status clf_options_set_signature_skew(clf_options *opts, uint32_t seconds)
{
    if (!opts || seconds > 86400) return CLF_E_INVALID;
    opts->sig_skew = seconds;
    return CLF_OK;
}
