/*
 * sg_base.c: the signature base (RFC 9421 section 2.5) of one signature
 * of a request, from what the host handed over (sg_req).
 *
 * Which HTTP facts each derived component reads (section 2.2):
 *   @method          the method, as given (2.2.1)
 *   @authority       the Host header: host lower-cased, the scheme's
 *                    default port dropped (443 for https, 80 for http;
 *                    none when the scheme is unknown) (2.2.3)
 *   @scheme          the scheme the host gave, lower-cased (2.2.4)
 *   @target-uri      scheme "://" @authority @path, then "?" and the
 *                    query when there is one (2.2.2)
 *   @request-target  the path, then "?" and the query when there is one:
 *                    the origin form (2.2.5)
 *   @path            the path, "/" when empty (2.2.6)
 *   @query           "?" and the query, "?" alone when empty (2.2.7)
 *   @query-param     one query parameter by name, re-encoded (2.2.8)
 * An empty query and no query are the same to the host API, so @query
 * and @target-uri cannot tell "/p?" from "/p".
 *
 * Header fields (2.1): every line's value trimmed, joined with ", ";
 * with `key` one Dictionary member, strictly serialized (2.1.2); with
 * `bs` each line as a Byte Sequence (2.1.3). Not supported, each an
 * error naming it: `sf` (2.1.1: the type of an arbitrary field is not
 * known), `tr` (2.1.4: trailers are not handed over), `req` (2.4: for
 * responses; section 2.5 makes it an error on a request), @status
 * (2.2.9: responses only), unknown derived components and parameters.
 */
#include <sodium.h>

#include "chars.h"
#include "httpfields.h"
#include "sg_verify.h"

static int name_is(const sg_field *f, const char *lower, size_t n)
{
    if (f->name_len != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (vm_ascii_lower((unsigned char)f->name[i]) != (unsigned char)lower[i]) return 0;
    return 1;
}

static sg_str trimmed(const char *p, size_t n)
{
    while (n && (p[0] == ' ' || p[0] == '\t')) { p++; n--; }
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    sg_str s = {p, n};
    return s;
}

long sg_field_value(const sg_req *rq, const char *name, size_t nlen, sg_buf *b, sg_str *out)
{
    long lines = 0;
    size_t total = 0;
    sg_str one = {"", 0};
    for (size_t i = 0; i < rq->nfields; i++) {
        if (!name_is(&rq->fields[i], name, nlen)) continue;
        sg_str v = trimmed(rq->fields[i].value, rq->fields[i].value_len);
        if (lines++ == 0) one = v;
        total += v.n + 2;
    }
    *out = one;
    if (lines <= 1 || !b) return lines;
    char *d = sg_buf_take(b, total - 2);
    if (!d) return -1;
    size_t o = 0;
    for (size_t i = 0; i < rq->nfields; i++) {
        if (!name_is(&rq->fields[i], name, nlen)) continue;
        sg_str v = trimmed(rq->fields[i].value, rq->fields[i].value_len);
        if (o) { d[o++] = ','; d[o++] = ' '; }
        if (v.n) memcpy(d + o, v.p, v.n);
        o += v.n;
    }
    out->p = d;
    out->n = o;
    return lines;
}

static void lower_into(sg_out *o, sg_str s)
{
    for (size_t i = 0; i < s.n; i++) sg_out_byte(o, (char)vm_ascii_lower((unsigned char)s.p[i]));
}

static int fail(vm_text *why, const char *a, sg_str v, const char *b)
{
    vm_text_str(why, a);
    if (v.p) vm_text_quote(why, v.p, v.n);
    vm_text_str(why, b);
    return -1;
}

static const sg_str none = {NULL, 0};

/* @authority (2.2.3). */
static int authority(const sg_req *rq, sg_out *o, vm_text *why)
{
    sg_str h;
    long lines = sg_field_value(rq, "host", 4, NULL, &h);
    if (lines == 0) return fail(why, "@authority: the request has no Host header", none, "");
    if (lines != 1) return fail(why, "@authority: the request has several Host lines", none, "");
    size_t hn = h.n;
    const char *rb = h.n && h.p[0] == '[' ? memchr(h.p, ']', h.n) : NULL;
    const char *colon = NULL;
    for (size_t i = rb ? (size_t)(rb - h.p) : 0; i < h.n; i++)
        if (h.p[i] == ':') colon = h.p + i;
    if (colon) hn = (size_t)(colon - h.p);
    if (hn == 0) return fail(why, "@authority: the Host header ", h, " names no host");
    sg_str host = {h.p, hn}, port = {colon ? colon + 1 : "", colon ? h.n - hn - 1 : 0};
    int https = sg_str_eqz(rq->scheme, "https") || sg_str_eqz(rq->scheme, "HTTPS");
    int http = sg_str_eqz(rq->scheme, "http") || sg_str_eqz(rq->scheme, "HTTP");
    lower_into(o, host);
    if (port.n && !(https && sg_str_eqz(port, "443")) && !(http && sg_str_eqz(port, "80"))) {
        sg_out_byte(o, ':');
        sg_out_str(o, port);
    }
    return 0;
}

static int need_scheme(const sg_req *rq, const char *what, vm_text *why)
{
    if (rq->scheme.n) return 0;
    vm_text_str(why, what);
    vm_text_str(why, ": the host did not give the request's scheme (clf_ctx_set_scheme)");
    return -1;
}

static void path_or_slash(const sg_req *rq, sg_out *o)
{
    if (rq->path.n) sg_out_str(o, rq->path);
    else sg_out_byte(o, '/');
}

/* The "percent-encode after encoding" of the WHATWG URL standard with
 * the application/x-www-form-urlencoded percent-encode set, a space as
 * %20, as RFC 9421 section 2.2.8 and its examples have it. */
static void form_encode(sg_out *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (vm_is_alnum(c) || c == '*' || c == '-' || c == '.' || c == '_') {
            sg_out_byte(o, (char)c);
        } else {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            sg_out_put(o, e, 3);
        }
    }
}

/* @query-param;name="..." (2.2.8): the name parameter holds the encoded
 * name. */
static int query_param(const sg_req *rq, const sg_sf *sf, const sg_item *it, sg_out *o,
                       vm_text *why)
{
    const sg_param *nm = sg_sf_param(sf, it->param0, it->nparams, "name");
    if (!nm || nm->v.kind != SG_STR)
        return fail(why, "@query-param: no name parameter (a String)", none, "");
    /* At the top of o: the name unescaped, then decoded, then the value
     * decoded (none is longer than what it comes from). */
    size_t need = 2 * nm->v.raw.n + rq->query.n;
    char *tmp = sg_out_top(o, need);
    if (!tmp) return 0; /* o->full: the caller reports it */
    sg_buf tb = {tmp, need, 0};
    sg_str enc;
    sg_sf_unescape(&nm->v, &tb, &enc); /* fits: raw.n bytes at most */
    char *dec = sg_buf_take(&tb, nm->v.raw.n);
    size_t dn = vm_http_pct_decode(enc.p, enc.n, dec, 1);
    size_t count = vm_http_query_count(rq->query.p, rq->query.n, dec, dn);
    int st = 0;
    if (count == 0) {
        st = fail(why, "@query-param: the query has no parameter ", enc, "");
    } else if (count > 1) {
        st = fail(why, "@query-param: parameter ", enc,
                  " occurs more than once (RFC 9421 section 2.2.8 forbids signing it)");
    } else {
        char *val = tb.p + tb.used;
        long vn = vm_http_query_param(rq->query.p, rq->query.n, dec, dn, val, tb.cap - tb.used);
        sg_out_untop(o, need);
        /* Encoding writes forward from o->n while reading val: ahead of
         * it as long as three bytes out per byte in fit below val. */
        size_t n = vn > 0 ? (size_t)vn : 0;
        if ((size_t)(val - (o->p + o->n)) < 3 * n) {
            o->full = 1;
            return 0;
        }
        form_encode(o, val, n);
        return 0;
    }
    sg_out_untop(o, need);
    return st;
}

/* A derived component (2.2): the name begins with '@'. */
static int derived(const sg_req *rq, const sg_sf *sf, const sg_item *it, sg_str name, sg_out *o,
                   vm_text *why)
{
    int is_qp = sg_str_eqz(name, "@query-param");
    for (uint32_t k = it->param0; k < it->param0 + it->nparams; k++) {
        sg_str pk = sf->pa[k].key;
        if (is_qp && sg_str_eqz(pk, "name")) continue;
        if (sg_str_eqz(pk, "req"))
            return fail(why, "component ", name, ";req: the `req` flag signs a response with "
                        "its request (RFC 9421 section 2.4); on a request it is an error");
        vm_text_str(why, "component ");
        vm_text_quote(why, name.p, name.n);
        vm_text_str(why, ": unknown parameter ");
        vm_text_quote(why, pk.p, pk.n);
        return -1;
    }
    if (sg_str_eqz(name, "@method")) {
        if (!rq->method.n) return fail(why, "@method: the host gave no method", none, "");
        sg_out_str(o, rq->method);
    } else if (sg_str_eqz(name, "@authority")) {
        return authority(rq, o, why);
    } else if (sg_str_eqz(name, "@scheme")) {
        if (need_scheme(rq, "@scheme", why)) return -1;
        lower_into(o, rq->scheme);
    } else if (sg_str_eqz(name, "@target-uri")) {
        if (need_scheme(rq, "@target-uri", why)) return -1;
        lower_into(o, rq->scheme);
        sg_out_z(o, "://");
        if (authority(rq, o, why)) return -1;
        path_or_slash(rq, o);
        if (rq->query.n) {
            sg_out_byte(o, '?');
            sg_out_str(o, rq->query);
        }
    } else if (sg_str_eqz(name, "@request-target")) {
        sg_out_str(o, rq->path);
        if (rq->query.n) {
            sg_out_byte(o, '?');
            sg_out_str(o, rq->query);
        }
    } else if (sg_str_eqz(name, "@path")) {
        path_or_slash(rq, o);
    } else if (sg_str_eqz(name, "@query")) {
        sg_out_byte(o, '?');
        sg_out_str(o, rq->query);
    } else if (is_qp) {
        return query_param(rq, sf, it, o, why);
    } else if (sg_str_eqz(name, "@status")) {
        return fail(why, "@status is a response's (RFC 9421 section 2.2.9): a request cannot "
                    "be signed with it", none, "");
    } else if (sg_str_eqz(name, "@signature-params")) {
        return fail(why, "@signature-params must not be listed as a covered component "
                    "(RFC 9421 section 2.3)", none, "");
    } else {
        return fail(why, "unknown derived component ", name, "");
    }
    return 0;
}

/* `bs` (2.1.3): each line's trimmed value as a Byte Sequence, the List
 * of them strictly serialized. */
static void binary_wrapped(const sg_req *rq, sg_str name, sg_out *o)
{
    int first = 1;
    for (size_t i = 0; i < rq->nfields; i++) {
        if (!name_is(&rq->fields[i], name.p, name.n)) continue;
        sg_str v = trimmed(rq->fields[i].value, rq->fields[i].value_len);
        sg_out_z(o, first ? ":" : ", :");
        first = 0;
        size_t need = sodium_base64_ENCODED_LEN(v.n, sodium_base64_VARIANT_ORIGINAL);
        if (need > o->cap - o->n) {
            o->full = 1;
            return;
        }
        sodium_bin2base64(o->p + o->n, need, (const unsigned char *)v.p, v.n,
                          sodium_base64_VARIANT_ORIGINAL);
        o->n += need - 1; /* not the NUL */
        sg_out_byte(o, ':');
    }
}

/* The lines of header `name`, trimmed, joined with ", " into o
 * (2.1). */
static void joined(const sg_req *rq, sg_str name, sg_out *o)
{
    int first = 1;
    for (size_t i = 0; i < rq->nfields; i++) {
        if (!name_is(&rq->fields[i], name.p, name.n)) continue;
        if (!first) sg_out_z(o, ", ");
        first = 0;
        sg_out_str(o, trimmed(rq->fields[i].value, rq->fields[i].value_len));
    }
}

/* `key` (2.1.2): member `key` of the Dictionary header `name` (lines
 * lines), strictly serialized into o. */
static int dict_member(const sg_req *rq, sg_scratch *sc, const sg_param *key, sg_str name,
                       long lines, sg_out *o, vm_text *why)
{
    /* At the top of o: the member's name unescaped, and the lines joined
     * when there are several (RFC 8941 section 4.2 parses them as one). */
    size_t need = key->v.raw.n;
    sg_str v;
    sg_field_value(rq, name.p, name.n, NULL, &v);
    if (lines > 1)
        for (size_t i = 0; i < rq->nfields; i++)
            if (name_is(&rq->fields[i], name.p, name.n)) need += rq->fields[i].value_len + 2;
    char *tmp = sg_out_top(o, need);
    if (!tmp) return 0; /* o->full: the caller reports it */
    sg_buf tb = {tmp, need, 0};
    sg_str member;
    sg_sf_unescape(&key->v, &tb, &member);
    if (lines > 1) sg_field_value(rq, name.p, name.n, &tb, &v);
    uint32_t first, count;
    sg_sf_error e;
    sg_sf *sf = &sc->sf;
    uint32_t nm0 = sf->nm, nit0 = sf->nit, npa0 = sf->npa;
    int st = 0;
    if (sg_sf_parse_dict(sf, v.p, v.n, &first, &count, &e)) {
        vm_text_str(why, "covered header ");
        vm_text_quote(why, name.p, name.n);
        vm_text_str(why, " is not a Dictionary (RFC 8941): expected ");
        vm_text_str(why, e.what);
        vm_text_str(why, " at byte ");
        vm_text_i64(why, (int64_t)e.off);
        st = -1;
    } else {
        const sg_member *m = sg_sf_member(sf, first, count, member.p, member.n);
        if (!m) {
            vm_text_str(why, "covered header ");
            vm_text_quote(why, name.p, name.n);
            vm_text_str(why, " has no member ");
            vm_text_quote(why, member.p, member.n);
            st = -1;
        } else {
            sg_sf_ser_member(o, sf, m);
        }
    }
    sf->nm = nm0; /* the field's members are not needed past this line */
    sf->nit = nit0;
    sf->npa = npa0;
    sg_out_untop(o, need);
    return st;
}

/* A header field (2.1), with its parameters. */
static int field(const sg_req *rq, sg_scratch *sc, const sg_item *it, sg_str name, sg_out *o,
                 vm_text *why)
{
    const sg_sf *sf = &sc->sf;
    const sg_param *key = NULL;
    int bs = 0;
    for (uint32_t k = it->param0; k < it->param0 + it->nparams; k++) {
        const sg_param *pm = &sf->pa[k];
        if (sg_str_eqz(pm->key, "key") && pm->v.kind == SG_STR) key = pm;
        else if (sg_str_eqz(pm->key, "bs") && pm->v.kind == SG_BOOL && pm->v.i) bs = 1;
        else if (sg_str_eqz(pm->key, "req"))
            return fail(why, "component ", name, ";req: the `req` flag signs a response with "
                        "its request (RFC 9421 section 2.4); on a request it is an error");
        else if (sg_str_eqz(pm->key, "sf"))
            return fail(why, "component ", name, ";sf: strict serialization of a whole field "
                        "is not supported (its structured type is not known here)");
        else if (sg_str_eqz(pm->key, "tr"))
            return fail(why, "component ", name, ";tr: trailers are not supported (the host "
                        "hands over headers only)");
        else {
            vm_text_str(why, "component ");
            vm_text_quote(why, name.p, name.n);
            vm_text_str(why, ": unknown parameter ");
            vm_text_quote(why, pm->key.p, pm->key.n);
            return -1;
        }
    }
    if (bs && key)
        return fail(why, "component ", name, ": `bs` and `key` cannot be combined (RFC 9421 "
                    "section 2.1.3)");
    sg_str first;
    long lines = sg_field_value(rq, name.p, name.n, NULL, &first);
    if (lines == 0) return fail(why, "covered header ", name, " is absent");
    if (bs) binary_wrapped(rq, name, o);
    else if (key) return dict_member(rq, sc, key, name, lines, o, why);
    else joined(rq, name, o);
    return 0;
}

/* Two component identifiers are the same when their names are and they
 * have the same parameters, in any order (RFC 9421 section 2). */
static int same_params(const sg_sf *sf, const sg_item *a, const sg_item *b)
{
    if (a->nparams != b->nparams) return 0;
    for (uint32_t i = a->param0; i < a->param0 + a->nparams; i++) {
        const sg_param *p = &sf->pa[i];
        const sg_param *q = NULL;
        for (uint32_t j = b->param0; j < b->param0 + b->nparams && !q; j++)
            if (sg_str_eq(sf->pa[j].key, p->key.p, p->key.n)) q = &sf->pa[j];
        if (!q || q->v.kind != p->v.kind || q->v.i != p->v.i ||
            !sg_str_eq(q->v.raw, p->v.raw.p, p->v.raw.n))
            return 0;
    }
    return 1;
}

int sg_base_build(const sg_req *rq, sg_scratch *sc, const sg_member *m, sg_out *o, vm_text *why)
{
    const sg_sf *sf = &sc->sf;
    for (uint32_t k = 0; k < m->nitems; k++) {
        const sg_item *it = &sf->it[m->item0 + k];
        if (it->v.kind != SG_STR || it->v.escaped)
            return fail(why, "covered component ", none, "is not a String naming a component "
                        "(RFC 9421 section 2)");
        sg_str name = it->v.raw;
        for (uint32_t j = 0; j < k; j++) {
            const sg_item *jt = &sf->it[m->item0 + j];
            if (sg_str_eq(jt->v.raw, name.p, name.n) && same_params(sf, it, jt))
                return fail(why, "component ", name, " is covered twice (RFC 9421 section "
                            "2.5)");
        }
        /* Field names are lower case in identifiers (RFC 9421 section 2.1). */
        for (size_t i = 0; i < name.n; i++)
            if (name.p[i] >= 'A' && name.p[i] <= 'Z')
                return fail(why, "component ", name, " is not lower case (RFC 9421 section 2.1)");
        if (name.n == 0) return fail(why, "a covered component has an empty name", none, "");
        sg_sf_ser_item(o, sf, it);
        sg_out_z(o, ": ");
        int st = name.p[0] == '@' ? derived(rq, sf, it, name, o, why)
                                  : field(rq, sc, it, name, o, why);
        if (st) return -1;
        sg_out_byte(o, '\n');
    }
    sg_out_z(o, "\"@signature-params\": ");
    sg_sf_ser_member(o, sf, m);
    if (o->full) return 0; /* the caller reports it */
    /* Section 2.5 step 4: only ASCII (and no line break inside a value). */
    size_t lines = 0;
    for (size_t i = 0; i < o->n; i++) {
        unsigned char c = (unsigned char)o->p[i];
        if (c == '\n') lines++;
        if (c >= 0x80 || c == '\r' || (c < 0x20 && c != '\n' && c != '\t'))
            return fail(why, "the signature base holds a byte that is not ASCII text (RFC 9421 "
                        "section 2.5)", none, "");
    }
    if (lines != m->nitems)
        return fail(why, "a covered component's value holds a line break (RFC 9421 section 2)",
                    none, "");
    return 0;
}
