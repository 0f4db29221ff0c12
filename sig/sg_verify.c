/*
 * sg_verify.c: verifying a request's signatures (sg_verify.h): RFC 9421
 * section 3.2, step for step, with the requirements of Web Bot Auth
 * (draft-meunier-webbotauth-httpsig-protocol, "Generating HTTP Message
 * Signature" and "Validating Message Signature"). The cheap checks come
 * first: one Ed25519 verification is the cost of a valid signature, and
 * a signature that fails a parameter check never reaches it.
 */
#include <sodium.h>

#include "sg_url.h"
#include "sg_verify.h"

sg_scratch *sg_scratch_new(const vm_allocator *al)
{
    sg_scratch *sc = vm_calloc(al, 1, sizeof *sc);
    if (!sc) return NULL;
    sc->sf.m = vm_calloc(al, SG_MAX_MEMBERS, sizeof *sc->sf.m);
    sc->sf.it = vm_calloc(al, SG_MAX_ITEMS, sizeof *sc->sf.it);
    sc->sf.pa = vm_calloc(al, SG_MAX_PARAMS, sizeof *sc->sf.pa);
    if (!sc->sf.m || !sc->sf.it || !sc->sf.pa) {
        sg_scratch_free(sc, al);
        return NULL;
    }
    sc->sf.cap_m = SG_MAX_MEMBERS;
    sc->sf.cap_it = SG_MAX_ITEMS;
    sc->sf.cap_pa = SG_MAX_PARAMS;
    return sc;
}

void sg_scratch_free(sg_scratch *sc, const vm_allocator *al)
{
    if (!sc) return;
    vm_free(al, sc->sf.m);
    vm_free(al, sc->sf.it);
    vm_free(al, sc->sf.pa);
    vm_free(al, sc);
}

/* What one signature's check found. */
typedef struct sig_check {
    const sg_key *key;
    sg_str keyid, agent;
} sig_check;

typedef struct verifier {
    const sg_req *rq;
    const sg_keyring *ring;
    const sg_policy *pol;
    sg_scratch *sc;
    sg_buf *ws;
    uint32_t in0, nin;   /* Signature-Input members */
    uint32_t sig0, nsig; /* Signature members */
    vm_text why;
} verifier;

static void say_label(vm_text *t, sg_str label)
{
    vm_text_str(t, "signature ");
    vm_text_name(t, label.p, label.n);
    vm_text_str(t, ": ");
}

/* A signature parameter of kind `kind`: 1 present, 0 absent, -1 of
 * another type (the reason says so). */
static int param(verifier *v, const sg_member *m, const char *name, int kind, const sg_bare **out)
{
    const sg_param *p = sg_sf_param(&v->sc->sf, m->param0, m->nparams, name);
    if (!p) return 0;
    if (p->v.kind != kind) {
        vm_text_str(&v->why, "parameter ");
        vm_text_str(&v->why, name);
        vm_text_str(&v->why, kind == SG_INT ? " is not an Integer" : " is not a String");
        vm_text_str(&v->why, " (RFC 9421 section 2.3)");
        return -1;
    }
    *out = &p->v;
    return 1;
}

static int covers(const sg_sf *sf, const sg_member *m, const char *name)
{
    for (uint32_t k = 0; k < m->nitems; k++)
        if (sg_str_eqz(sf->it[m->item0 + k].v.raw, name)) return 1;
    return 0;
}

/* The Signature-Agent member the signature covers (draft, "Signature-
 * Agent"): the member keyed by the label when it covers that one, else
 * the first "signature-agent";key=... it covers; the whole field when it
 * covers "signature-agent" bare and the field is a String (the legacy
 * form), or a Dictionary with a member keyed by the label. *url gets the
 * String's bytes; *ok 0 when the member is not one to attribute to (not
 * a String, a `type` this verifier does not know, a `directory` value
 * that is not an origin: "MUST ignore that member"). Returns 0 when the
 * signature covers no Signature-Agent, 1 when it does, -1 when the
 * workspace is full. Members parsed here stay in the scratch until the
 * signature's check ends. */
static int covered_agent(verifier *v, const sg_member *m, sg_str label, sg_str *url, int *ok)
{
    sg_sf *sf = &v->sc->sf;
    const sg_item *pick = NULL;
    int whole = 0;
    for (uint32_t k = 0; k < m->nitems; k++) {
        const sg_item *it = &sf->it[m->item0 + k];
        if (!sg_str_eqz(it->v.raw, "signature-agent")) continue;
        const sg_param *key = sg_sf_param(sf, it->param0, it->nparams, "key");
        if (!key) {
            whole = 1;
            continue;
        }
        if (key->v.kind != SG_STR) continue;
        if (!pick || (sg_str_eq(key->v.raw, label.p, label.n) && !key->v.escaped)) pick = it;
    }
    if (!pick && !whole) return 0;
    *ok = 0;
    sg_str field;
    long lines = sg_field_value(v->rq, "signature-agent", 15, v->ws, &field);
    if (lines < 0) return -1;
    if (lines == 0) return 1; /* the base will say that it is absent */
    const sg_member *mem = NULL;
    uint32_t first, count;
    sg_sf_error e;
    if (pick) {
        const sg_param *key = sg_sf_param(sf, pick->param0, pick->nparams, "key");
        sg_str kname;
        if (sg_sf_unescape(&key->v, v->ws, &kname)) return -1;
        if (sg_sf_parse_dict(sf, field.p, field.n, &first, &count, &e) == 0)
            mem = sg_sf_member(sf, first, count, kname.p, kname.n);
    } else if (field.n && field.p[0] == '"') {
        if (sg_sf_parse_item(sf, field.p, field.n, &first, &e) == 0) mem = &sf->m[first];
    } else if (sg_sf_parse_dict(sf, field.p, field.n, &first, &count, &e) == 0) {
        mem = sg_sf_member(sf, first, count, label.p, label.n);
    }
    if (!mem || mem->inner) return 1;
    const sg_item *it = &sf->it[mem->item0];
    if (it->v.kind != SG_STR) return 1;
    const sg_param *type = sg_sf_param(sf, it->param0, it->nparams, "type");
    int directory = !type || (type->v.kind == SG_TOKEN && sg_str_eqz(type->v.raw, "directory"));
    if (!directory && !(type->v.kind == SG_TOKEN && (sg_str_eqz(type->v.raw, "jwks_uri") ||
                                                     sg_str_eqz(type->v.raw, "cimd"))))
        return 1;
    if (sg_sf_unescape(&it->v, v->ws, url)) return -1;
    *ok = directory ? 2 : 1;
    return 1;
}

/* a + b and a - b, saturating: the request's time is the host's (any
 * int64, clf_ctx_set_time) and so are a key's nbf and exp. */
static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    if (b == INT64_MIN) return a >= 0 ? INT64_MAX : a - INT64_MIN; /* no -b */
    return sat_add(a, -b);
}

/* The key for keyid and the covered agent (sg_keyring_find), or a reason. */
static int find_key(verifier *v, sg_str keyid, const sg_member *m, sg_str label, sig_check *c)
{
    sg_str url = {"", 0};
    int ok = 0;
    int has = covered_agent(v, m, label, &url, &ok);
    if (has < 0) {
        vm_text_str(&v->why, "the string workspace is full (CLF_LIMIT_WORKSPACE_BYTES)");
        return -1;
    }
    char norm[SG_URL_MAX];
    long nn = -1;
    int origin = 0;
    if (has && ok && url.n < sizeof norm - 1)
        nn = sg_url_norm(url.p, url.n, norm, sizeof norm, &origin);
    if (nn >= 0 && ok == 2 && !origin) nn = -1; /* a directory member names an origin */
    const sg_key *other = NULL;
    const sg_key *k = sg_keyring_find(v->ring, norm, nn > 0 ? (size_t)nn : 0, keyid, &other);
    if (!k) {
        vm_text_str(&v->why, "key ");
        vm_text_quote(&v->why, keyid.p, keyid.n);
        if (other) {
            vm_text_str(&v->why, " is not published by ");
            vm_text_quote(&v->why, url.p, url.n);
            vm_text_str(&v->why, " (the key ring has it for ");
            sg_str o = sg_keyring_agent(v->ring, other->agent);
            vm_text_quote(&v->why, o.p, o.n);
            vm_text_str(&v->why, ")");
        } else {
            vm_text_str(&v->why, " is not in the key ring");
        }
        return -1;
    }
    c->key = k;
    /* The ring's own bytes, equal to keyid: they outlive the request's. */
    if (sg_str_eq(keyid, k->thumb, SG_THUMB_LEN)) c->keyid = (sg_str){k->thumb, SG_THUMB_LEN};
    else c->keyid = (sg_str){v->ring->pool + k->kid, k->kid_len};
    /* Attributed only to the URL that publishes the key (the draft's
     * "discovery-is-not-trust": never to a URL the client merely names),
     * in its normalized form, which the ring holds. */
    c->agent = k->agent != SG_NO_AGENT && nn > 0 ? sg_keyring_agent(v->ring, k->agent)
                                                 : (sg_str){"", 0};
    int64_t now = v->pol->now, skew = v->pol->skew;
    if (k->nbf != INT64_MIN && sat_add(now, skew) < k->nbf) {
        vm_text_str(&v->why, "key ");
        vm_text_quote(&v->why, keyid.p, keyid.n);
        vm_text_str(&v->why, " is not valid before ");
        vm_text_i64(&v->why, k->nbf);
        vm_text_str(&v->why, " (its JWK's nbf)");
        return -1;
    }
    if (k->exp != INT64_MAX && sat_sub(now, skew) > k->exp) {
        vm_text_str(&v->why, "key ");
        vm_text_quote(&v->why, keyid.p, keyid.n);
        vm_text_str(&v->why, " expired at ");
        vm_text_i64(&v->why, k->exp);
        vm_text_str(&v->why, " (its JWK's exp)");
        return -1;
    }
    return 0;
}

/* The time parameters against the clock (RFC 9421 section 3.2.1). */
static int check_times(verifier *v, const sg_bare *created, const sg_bare *expires)
{
    int64_t now = v->pol->now, skew = v->pol->skew;
    if (created && created->i > sat_add(now, skew)) {
        vm_text_str(&v->why, "created ");
        vm_text_i64(&v->why, sat_sub(created->i, now));
        vm_text_str(&v->why, " s in the future: not yet valid (tolerance ");
        vm_text_i64(&v->why, skew);
        vm_text_str(&v->why, " s)");
        return -1;
    }
    if (expires && created && expires->i < created->i) {
        vm_text_str(&v->why, "expires is before created");
        return -1;
    }
    if (expires && sat_sub(now, skew) > expires->i) {
        vm_text_str(&v->why, "expired ");
        vm_text_i64(&v->why, sat_sub(now, expires->i));
        vm_text_str(&v->why, " s ago (expires=");
        vm_text_i64(&v->why, expires->i);
        vm_text_str(&v->why, ", tolerance ");
        vm_text_i64(&v->why, skew);
        vm_text_str(&v->why, " s)");
        return -1;
    }
    return 0;
}

/* One signature: 0 valid (c filled), -1 invalid (the reason in v->why
 * after the label). */
static int check_one(verifier *v, const sg_member *m, sig_check *c)
{
    sg_sf *sf = &v->sc->sf;
    const sg_policy *pol = v->pol;
    if (!m->inner) {
        vm_text_str(&v->why, "the Signature-Input member is not an Inner List of components "
                             "(RFC 9421 section 4.1)");
        return -1;
    }
    const sg_bare *created = NULL, *expires = NULL, *keyid = NULL, *alg = NULL, *tag = NULL;
    if (param(v, m, "created", SG_INT, &created) < 0 ||
        param(v, m, "expires", SG_INT, &expires) < 0 ||
        param(v, m, "keyid", SG_STR, &keyid) < 0 || param(v, m, "alg", SG_STR, &alg) < 0 ||
        param(v, m, "tag", SG_STR, &tag) < 0)
        return -1;
    if (pol->web_bot_auth && !created) {
        vm_text_str(&v->why, "no created parameter (Web Bot Auth requires one)");
        return -1;
    }
    if (pol->web_bot_auth && !expires) {
        vm_text_str(&v->why, "no expires parameter (Web Bot Auth requires one)");
        return -1;
    }
    if (check_times(v, created, expires)) return -1;
    if (alg && !sg_str_eqz(alg->raw, "ed25519")) {
        vm_text_str(&v->why, "algorithm ");
        vm_text_quote(&v->why, alg->raw.p, alg->raw.n);
        vm_text_str(&v->why, " is not supported (ed25519 only)");
        return -1;
    }
    if (pol->web_bot_auth && !covers(sf, m, "@authority") && !covers(sf, m, "@target-uri")) {
        vm_text_str(&v->why, "covers neither @authority nor @target-uri (Web Bot Auth requires "
                             "one)");
        return -1;
    }
    if (!keyid) {
        vm_text_str(&v->why, "no keyid parameter: no key to verify with");
        return -1;
    }
    sg_str label = m->key;
    const sg_member *sm = sg_sf_member(sf, v->sig0, v->nsig, label.p, label.n);
    if (!sm) {
        vm_text_str(&v->why, "the Signature field has no member of this label");
        return -1;
    }
    if (sm->inner || sf->it[sm->item0].v.kind != SG_BYTES) {
        vm_text_str(&v->why, "the Signature member is not a Byte Sequence (RFC 9421 section 4.2)");
        return -1;
    }
    uint8_t sig[crypto_sign_BYTES];
    long sn = sg_sf_bytes(&sf->it[sm->item0].v, sig, sizeof sig);
    if (sn != crypto_sign_BYTES) {
        vm_text_str(&v->why, sn < 0 ? "the signature is not base64 of 64 bytes"
                                    : "the signature is not 64 bytes, the size of an Ed25519 "
                                      "signature");
        return -1;
    }
    sg_str kid;
    if (sg_sf_unescape(keyid, v->ws, &kid)) {
        vm_text_str(&v->why, "the string workspace is full (CLF_LIMIT_WORKSPACE_BYTES)");
        return -1;
    }
    if (find_key(v, kid, m, label, c)) return -1;
    /* The base is only needed here: built in what is left of the
     * workspace and given back. */
    sg_out o = sg_out_over(v->ws);
    if (sg_base_build(v->rq, v->sc, m, &o, &v->why)) return -1;
    if (o.full) {
        vm_text_str(&v->why, "the signature base does not fit in the string workspace "
                             "(CLF_LIMIT_WORKSPACE_BYTES)");
        return -1;
    }
    v->sc->verifications++;
    if (crypto_sign_verify_detached(sig, (const unsigned char *)o.p, o.n, c->key->pk) != 0) {
        vm_text_str(&v->why, "the Ed25519 signature does not verify with key ");
        vm_text_quote(&v->why, kid.p, kid.n);
        vm_text_str(&v->why, " (a covered component or parameter differs from what was signed)");
        return -1;
    }
    (void)tag;
    return 0;
}

static void finish(sg_result *out, vm_text *t, int status)
{
    out->status = status;
    out->reason_len = vm_text_done(t);
}

/* Whether member m is a candidate: its tag, under Web Bot Auth. */
static int candidate(const verifier *v, const sg_member *m)
{
    if (!v->pol->web_bot_auth) return 1;
    if (!m->inner) return 1; /* let check_one say what is wrong */
    const sg_param *t = sg_sf_param(&v->sc->sf, m->param0, m->nparams, "tag");
    return t && t->v.kind == SG_STR && sg_str_eqz(t->v.raw, "web-bot-auth");
}

static int parse_field(verifier *v, const char *name, size_t nlen, const char *shown,
                       uint32_t *first, uint32_t *count, sg_result *out)
{
    sg_str f;
    vm_text *t = &v->why;
    long lines = sg_field_value(v->rq, name, nlen, v->ws, &f);
    sg_sf_error e;
    if (lines < 0) {
        vm_text_str(t, "the string workspace is full (CLF_LIMIT_WORKSPACE_BYTES)");
    } else if (sg_sf_parse_dict(&v->sc->sf, f.p, f.n, first, count, &e) == 0) {
        return 0;
    } else {
        vm_text_str(t, shown);
        vm_text_str(t, " is not a Dictionary (RFC 8941): expected ");
        vm_text_str(t, e.what);
        vm_text_str(t, " at byte ");
        vm_text_i64(t, (int64_t)e.off);
    }
    finish(out, t, SG_INVALID);
    return -1;
}

static void verify(const sg_req *rq, const sg_keyring *ring, const sg_policy *pol, sg_scratch *sc,
                   sg_buf *ws, sg_result *out)
{
    static const sg_keyring empty;
    verifier v = {rq, ring ? ring : &empty, pol, sc, ws, 0, 0, 0, 0, {0}};
    vm_text *t = &v.why;
    vm_text_init(t, out->reason, sizeof out->reason);
    out->keyid = out->agent = (sg_str){"", 0};
    sg_sf_clear(&sc->sf);
    sg_str a, b;
    long nin = sg_field_value(rq, "signature-input", 15, NULL, &a);
    long nsig = sg_field_value(rq, "signature", 9, NULL, &b);
    if (!nin && !nsig) {
        vm_text_str(t, "the request carries no Signature-Input and no Signature");
        finish(out, t, SG_ABSENT);
        return;
    }
    if (!nin || !nsig) {
        vm_text_str(t, nin ? "Signature-Input without a Signature field (RFC 9421 section 4)"
                           : "Signature without a Signature-Input field (RFC 9421 section 4)");
        finish(out, t, SG_INVALID);
        return;
    }
    if (parse_field(&v, "signature-input", 15, "Signature-Input", &v.in0, &v.nin, out) ||
        parse_field(&v, "signature", 9, "Signature", &v.sig0, &v.nsig, out))
        return;
    /* Candidates in field order; the first valid one decides. */
    uint32_t tried = 0, others = 0;
    char first_reason[SG_REASON_BYTES];
    size_t first_len = 0;
    for (uint32_t k = v.in0; k < v.in0 + v.nin; k++) {
        const sg_member *m = &sc->sf.m[k];
        if (!candidate(&v, m)) {
            others++;
            continue;
        }
        if (tried == pol->max_sigs) break;
        tried++;
        uint32_t nm0 = sc->sf.nm, nit0 = sc->sf.nit, npa0 = sc->sf.npa;
        size_t ws0 = ws->used;
        sig_check c = {NULL, {"", 0}, {"", 0}};
        vm_text_init(t, out->reason, sizeof out->reason);
        if (check_one(&v, m, &c) == 0) {
            out->keyid = c.keyid;
            out->agent = c.agent;
            vm_text_init(t, out->reason, sizeof out->reason);
            say_label(t, m->key);
            vm_text_str(t, "valid: key ");
            vm_text_quote(t, c.keyid.p, c.keyid.n);
            if (c.agent.n) {
                vm_text_str(t, " of ");
                vm_text_quote(t, c.agent.p, c.agent.n);
            } else {
                vm_text_str(t, " (no agent: the key ring names no Signature-Agent URL for it, "
                               "or the signature covers none)");
            }
            finish(out, t, SG_VALID);
            return;
        }
        size_t n = vm_text_done(t);
        if (tried == 1) {
            /* Keep the first candidate's reason, its label in front. */
            vm_text r;
            vm_text_init(&r, first_reason, sizeof first_reason);
            say_label(&r, m->key);
            vm_text_put(&r, out->reason, n);
            first_len = vm_text_done(&r);
        }
        sc->sf.nm = nm0; /* what this signature parsed is not needed any more */
        sc->sf.nit = nit0;
        sc->sf.npa = npa0;
        ws->used = ws0;
    }
    vm_text_init(t, out->reason, sizeof out->reason);
    if (!tried) {
        vm_text_str(t, "no signature has tag \"web-bot-auth\" (");
        vm_text_i64(t, others);
        vm_text_str(t, others == 1 ? " other)" : " others)");
        finish(out, t, SG_INVALID);
        return;
    }
    vm_text_put(t, first_reason, first_len);
    if (tried > 1) {
        vm_text_str(t, "; ");
        vm_text_i64(t, tried - 1);
        vm_text_str(t, tried == 2 ? " more signature invalid" : " more signatures invalid");
    }
    finish(out, t, SG_INVALID);
}

void sg_verify(const sg_req *rq, const sg_keyring *ring, const sg_policy *pol, sg_scratch *sc,
               sg_buf *ws, sg_result *out)
{
    size_t ws0 = ws->used;
    verify(rq, ring, pol, sc, ws, out);
    ws->used = ws0; /* the result points into the ring, never here */
}
