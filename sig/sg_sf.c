/*
 * sg_sf.c: the RFC 8941 parser and strict serializer (sg_sf.h). Each
 * parse function is the algorithm of the RFC section named above it,
 * step for step, so that a reader can check one against the other.
 */
#include <sodium.h>

#include "sg_sf.h"

typedef struct ps {
    const char *p;
    size_t n, i;
    sg_sf *sf;
    sg_sf_error *e;
} ps;

static int fail(ps *s, const char *what)
{
    s->e->off = s->i;
    s->e->what = what;
    return -1;
}

static int at_end(const ps *s) { return s->i >= s->n; }
static unsigned char peek(const ps *s) { return (unsigned char)s->p[s->i]; }

static int is_digit(unsigned c) { return c >= '0' && c <= '9'; }
static int is_lcalpha(unsigned c) { return c >= 'a' && c <= 'z'; }
static int is_alpha(unsigned c) { return is_lcalpha(c) || (c >= 'A' && c <= 'Z'); }

/* RFC 9110 section 5.6.2 tchar. */
static int is_tchar(unsigned c)
{
    return is_alpha(c) || is_digit(c) || (c && strchr("!#$%&'*+-.^_`|~", (int)c) != NULL);
}

static int is_b64(unsigned c) { return is_alpha(c) || is_digit(c) || c == '+' || c == '/' || c == '='; }

static void skip_sp(ps *s)
{
    while (!at_end(s) && peek(s) == ' ') s->i++;
}

static void skip_ows(ps *s)
{
    while (!at_end(s) && (peek(s) == ' ' || peek(s) == '\t')) s->i++;
}

/* 4.2.3.3. Parsing a Key. */
static int parse_key(ps *s, sg_str *key)
{
    if (at_end(s) || !(is_lcalpha(peek(s)) || peek(s) == '*'))
        return fail(s, "a key (lower-case letter or '*')");
    size_t start = s->i;
    while (!at_end(s)) {
        unsigned c = peek(s);
        if (!(is_lcalpha(c) || is_digit(c) || c == '_' || c == '-' || c == '.' || c == '*')) break;
        s->i++;
    }
    key->p = s->p + start;
    key->n = s->i - start;
    return 0;
}

/* 4.2.4. Parsing an Integer or Decimal. */
static int parse_number(ps *s, sg_bare *v)
{
    int decimal = 0, neg = 0;
    size_t len = 0, frac = 0;
    int64_t ip = 0, fp = 0;
    if (peek(s) == '-') {
        s->i++;
        neg = 1;
    }
    if (at_end(s)) return fail(s, "a digit (empty integer)");
    if (!is_digit(peek(s))) return fail(s, "a digit");
    while (!at_end(s)) {
        unsigned c = peek(s);
        if (is_digit(c)) {
            s->i++;
            len++;
            if (decimal) {
                frac++;
                fp = fp * 10 + (c - '0');
            } else {
                ip = ip * 10 + (c - '0');
            }
        } else if (!decimal && c == '.') {
            if (len > 12) return fail(s, "at most 12 integer digits in a Decimal");
            s->i++;
            len++;
            decimal = 1;
        } else {
            break;
        }
        if (!decimal && len > 15) return fail(s, "at most 15 digits in an Integer");
        if (decimal && len > 16) return fail(s, "at most 16 characters in a Decimal");
    }
    if (!decimal) {
        v->kind = SG_INT;
        v->i = neg ? -ip : ip;
        return 0;
    }
    if (frac == 0) return fail(s, "a digit after the decimal point");
    if (frac > 3) return fail(s, "at most 3 fraction digits in a Decimal");
    while (frac++ < 3) fp *= 10;
    v->kind = SG_DEC;
    v->i = (neg ? -1 : 1) * (ip * 1000 + fp);
    return 0;
}

/* 4.2.5. Parsing a String. */
static int parse_string(ps *s, sg_bare *v)
{
    s->i++; /* the opening DQUOTE */
    size_t start = s->i;
    v->kind = SG_STR;
    v->escaped = 0;
    while (!at_end(s)) {
        unsigned c = peek(s);
        if (c == '\\') {
            s->i++;
            if (at_end(s)) return fail(s, "a character after '\\'");
            c = peek(s);
            if (c != '"' && c != '\\') return fail(s, "'\"' or '\\' after '\\'");
            s->i++;
            v->escaped = 1;
        } else if (c == '"') {
            v->raw.p = s->p + start;
            v->raw.n = s->i - start;
            s->i++;
            return 0;
        } else if (c < 0x20 || c > 0x7e) {
            return fail(s, "a printable ASCII character in a String");
        } else {
            s->i++;
        }
    }
    return fail(s, "the closing '\"' of a String");
}

/* 4.2.6. Parsing a Token. */
static int parse_token(ps *s, sg_bare *v)
{
    size_t start = s->i;
    s->i++; /* ALPHA or '*', checked by the caller */
    while (!at_end(s) && (is_tchar(peek(s)) || peek(s) == ':' || peek(s) == '/')) s->i++;
    v->kind = SG_TOKEN;
    v->raw.p = s->p + start;
    v->raw.n = s->i - start;
    return 0;
}

/* 4.2.7. Parsing a Byte Sequence. */
static int parse_bytes(ps *s, sg_bare *v)
{
    s->i++; /* the opening ':' */
    size_t start = s->i;
    while (!at_end(s) && peek(s) != ':') {
        if (!is_b64(peek(s))) return fail(s, "a base64 character in a Byte Sequence");
        s->i++;
    }
    if (at_end(s)) return fail(s, "the closing ':' of a Byte Sequence");
    /* "If base64 decoding fails, parsing fails": '=' only as the padding
     * that ends it, and no length that leaves one character over. */
    size_t len = s->i - start, pad = 0;
    while (pad < len && pad < 3 && s->p[s->i - 1 - pad] == '=') pad++;
    if (memchr(s->p + start, '=', len - pad) || pad > 2 || (len - pad) % 4 == 1 ||
        (pad && len % 4 != 0))
        return fail(s, "base64 in a Byte Sequence");
    v->kind = SG_BYTES;
    v->raw.p = s->p + start;
    v->raw.n = s->i - start;
    s->i++;
    return 0;
}

/* 4.2.8. Parsing a Boolean. */
static int parse_bool(ps *s, sg_bare *v)
{
    s->i++; /* '?' */
    if (at_end(s) || (peek(s) != '0' && peek(s) != '1')) return fail(s, "'0' or '1' after '?'");
    v->kind = SG_BOOL;
    v->i = peek(s) == '1';
    s->i++;
    return 0;
}

/* 4.2.3.1. Parsing a Bare Item. */
static int parse_bare(ps *s, sg_bare *v)
{
    memset(v, 0, sizeof *v);
    if (at_end(s)) return fail(s, "an item");
    unsigned c = peek(s);
    if (c == '-' || is_digit(c)) return parse_number(s, v);
    if (c == '"') return parse_string(s, v);
    if (c == '*' || is_alpha(c)) return parse_token(s, v);
    if (c == ':') return parse_bytes(s, v);
    if (c == '?') return parse_bool(s, v);
    return fail(s, "an item (Integer, Decimal, String, Token, Byte Sequence or Boolean)");
}

/* 4.2.3.2. Parsing Parameters: appended to sf->pa; a key given again
 * overwrites the earlier value in place. */
static int parse_params(ps *s, uint32_t *param0, uint32_t *nparams)
{
    sg_sf *sf = s->sf;
    *param0 = sf->npa;
    while (!at_end(s) && peek(s) == ';') {
        s->i++;
        skip_sp(s);
        sg_param pm;
        if (parse_key(s, &pm.key)) return -1;
        memset(&pm.v, 0, sizeof pm.v);
        pm.v.kind = SG_BOOL;
        pm.v.i = 1;
        if (!at_end(s) && peek(s) == '=') {
            s->i++;
            if (parse_bare(s, &pm.v)) return -1;
        }
        uint32_t k;
        for (k = *param0; k < sf->npa; k++)
            if (sg_str_eq(sf->pa[k].key, pm.key.p, pm.key.n)) break;
        if (k == sf->npa) {
            if (sf->npa == sf->cap_pa) return fail(s, "fewer parameters (too many in the field)");
            sf->npa++;
        }
        sf->pa[k] = pm;
    }
    *nparams = sf->npa - *param0;
    return 0;
}

/* 4.2.3. Parsing an Item: appended to sf->it. */
static int parse_item(ps *s, uint32_t *index)
{
    sg_sf *sf = s->sf;
    sg_item it;
    if (parse_bare(s, &it.v)) return -1;
    /* Reserve the item before its parameters: neither array depends on
     * the other's order. */
    if (sf->nit == sf->cap_it) return fail(s, "fewer items (too many in the field)");
    *index = sf->nit++;
    if (parse_params(s, &it.param0, &it.nparams)) return -1;
    sf->it[*index] = it;
    return 0;
}

/* 4.2.1.2. Parsing an Inner List. */
static int parse_inner(ps *s, sg_member *m)
{
    sg_sf *sf = s->sf;
    s->i++; /* '(' */
    m->inner = 1;
    m->item0 = sf->nit;
    m->nitems = 0;
    while (!at_end(s)) {
        skip_sp(s);
        if (at_end(s)) break;
        if (peek(s) == ')') {
            s->i++;
            return parse_params(s, &m->param0, &m->nparams);
        }
        uint32_t k;
        if (parse_item(s, &k)) return -1;
        m->nitems++;
        if (!at_end(s) && peek(s) != ' ' && peek(s) != ')')
            return fail(s, "' ' or ')' after an item of an Inner List");
    }
    return fail(s, "the closing ')' of an Inner List");
}

/* 4.2.1.1. Parsing an Item or Inner List. */
static int parse_member_value(ps *s, sg_member *m)
{
    if (!at_end(s) && peek(s) == '(') return parse_inner(s, m);
    m->inner = 0;
    m->nitems = 1;
    m->param0 = m->nparams = 0;
    return parse_item(s, &m->item0);
}

/* 4.2.2. Parsing a Dictionary. */
static int parse_dict(ps *s, uint32_t first)
{
    sg_sf *sf = s->sf;
    while (!at_end(s)) {
        sg_member m;
        memset(&m, 0, sizeof m);
        if (parse_key(s, &m.key)) return -1;
        if (!at_end(s) && peek(s) == '=') {
            s->i++;
            if (parse_member_value(s, &m)) return -1;
        } else {
            /* A key alone: the Boolean true, with parameters. */
            sg_item it;
            memset(&it, 0, sizeof it);
            it.v.kind = SG_BOOL;
            it.v.i = 1;
            if (sf->nit == sf->cap_it) return fail(s, "fewer items (too many in the field)");
            m.item0 = sf->nit++;
            m.nitems = 1;
            if (parse_params(s, &it.param0, &it.nparams)) return -1;
            sf->it[m.item0] = it;
        }
        uint32_t k;
        for (k = first; k < sf->nm; k++)
            if (sg_str_eq(sf->m[k].key, m.key.p, m.key.n)) break;
        if (k == sf->nm) {
            if (sf->nm == sf->cap_m) return fail(s, "fewer members (too many in the field)");
            sf->nm++;
        }
        sf->m[k] = m;
        skip_ows(s);
        if (at_end(s)) return 0;
        if (peek(s) != ',') return fail(s, "',' between members");
        s->i++;
        skip_ows(s);
        if (at_end(s)) return fail(s, "a member after ',' (trailing comma)");
    }
    return 0;
}

int sg_sf_parse_dict(sg_sf *sf, const char *p, size_t n, uint32_t *first, uint32_t *count,
                     sg_sf_error *e)
{
    ps s = {p, n, 0, sf, e};
    uint32_t nm0 = sf->nm, nit0 = sf->nit, npa0 = sf->npa;
    *first = sf->nm;
    *count = 0;
    /* 4.2: discard leading SP, parse, discard leading SP, nothing left. */
    skip_sp(&s);
    if (parse_dict(&s, *first) == 0) {
        skip_sp(&s);
        if (at_end(&s)) {
            *count = sf->nm - *first;
            return 0;
        }
        fail(&s, "the end of the field");
    }
    sf->nm = nm0; /* a failed parse leaves nothing behind */
    sf->nit = nit0;
    sf->npa = npa0;
    return -1;
}

int sg_sf_parse_item(sg_sf *sf, const char *p, size_t n, uint32_t *first, sg_sf_error *e)
{
    ps s = {p, n, 0, sf, e};
    uint32_t nm0 = sf->nm, nit0 = sf->nit, npa0 = sf->npa;
    skip_sp(&s);
    if (sf->nm == sf->cap_m) {
        fail(&s, "fewer members (too many in the field)");
        return -1;
    }
    sg_member m;
    memset(&m, 0, sizeof m);
    m.nitems = 1;
    if (parse_item(&s, &m.item0) == 0) {
        skip_sp(&s);
        if (at_end(&s)) {
            *first = sf->nm;
            sf->m[sf->nm++] = m;
            return 0;
        }
        fail(&s, "the end of the field");
    }
    sf->nm = nm0;
    sf->nit = nit0;
    sf->npa = npa0;
    return -1;
}

const sg_param *sg_sf_param(const sg_sf *sf, uint32_t param0, uint32_t nparams, const char *key)
{
    size_t kn = strlen(key);
    for (uint32_t k = param0; k < param0 + nparams; k++)
        if (sg_str_eq(sf->pa[k].key, key, kn)) return &sf->pa[k];
    return NULL;
}

const sg_member *sg_sf_member(const sg_sf *sf, uint32_t first, uint32_t count, const char *key,
                              size_t klen)
{
    for (uint32_t k = first; k < first + count; k++)
        if (sg_str_eq(sf->m[k].key, key, klen)) return &sf->m[k];
    return NULL;
}

int sg_sf_unescape(const sg_bare *s, sg_buf *b, sg_str *out)
{
    if (!s->escaped) {
        *out = s->raw;
        return 0;
    }
    char *d = sg_buf_take(b, s->raw.n);
    if (!d) return -1;
    size_t o = 0;
    for (size_t i = 0; i < s->raw.n; i++) {
        if (s->raw.p[i] == '\\') i++; /* the parser saw to it that a byte follows */
        d[o++] = s->raw.p[i];
    }
    b->used -= s->raw.n - o;
    out->p = d;
    out->n = o;
    return 0;
}

/* 4.1.5. Serializing a Decimal: at most 3 fraction digits, trailing
 * zeros dropped but one kept. */
static void ser_decimal(sg_out *o, int64_t milli)
{
    uint64_t u = milli < 0 ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    if (milli < 0) sg_out_byte(o, '-');
    sg_out_i64(o, (int64_t)(u / 1000));
    sg_out_byte(o, '.');
    unsigned f = (unsigned)(u % 1000);
    char d[3] = {(char)('0' + f / 100), (char)('0' + f / 10 % 10), (char)('0' + f % 10)};
    size_t k = 3;
    while (k > 1 && d[k - 1] == '0') k--;
    sg_out_put(o, d, k);
}

void sg_sf_ser_bare(sg_out *o, const sg_bare *v)
{
    switch (v->kind) {
    case SG_INT: sg_out_i64(o, v->i); break;
    case SG_DEC: ser_decimal(o, v->i); break;
    case SG_STR:
        /* The parser kept the escapes, and \" and \\ are the only ones
         * there are: the raw text is the strict serialization (4.1.6). */
        sg_out_byte(o, '"');
        sg_out_str(o, v->raw);
        sg_out_byte(o, '"');
        break;
    case SG_TOKEN: sg_out_str(o, v->raw); break;
    case SG_BYTES:
        /* 4.1.8: base64 with padding. The text is what the sender wrote,
         * padded when it was not. */
        sg_out_byte(o, ':');
        sg_out_str(o, v->raw);
        if (v->raw.n % 4 == 2) sg_out_z(o, "==");
        else if (v->raw.n % 4 == 3) sg_out_byte(o, '=');
        sg_out_byte(o, ':');
        break;
    case SG_BOOL: sg_out_z(o, v->i ? "?1" : "?0"); break;
    default: break;
    }
}

void sg_sf_ser_params(sg_out *o, const sg_sf *sf, uint32_t param0, uint32_t nparams)
{
    for (uint32_t k = param0; k < param0 + nparams; k++) {
        const sg_param *pm = &sf->pa[k];
        sg_out_byte(o, ';');
        sg_out_str(o, pm->key);
        if (pm->v.kind == SG_BOOL && pm->v.i) continue; /* 4.1.1.2: true is the key alone */
        sg_out_byte(o, '=');
        sg_sf_ser_bare(o, &pm->v);
    }
}

void sg_sf_ser_item(sg_out *o, const sg_sf *sf, const sg_item *it)
{
    sg_sf_ser_bare(o, &it->v);
    sg_sf_ser_params(o, sf, it->param0, it->nparams);
}

void sg_sf_ser_member(sg_out *o, const sg_sf *sf, const sg_member *m)
{
    if (!m->inner) {
        sg_sf_ser_item(o, sf, &sf->it[m->item0]);
        return;
    }
    sg_out_byte(o, '(');
    for (uint32_t k = 0; k < m->nitems; k++) {
        if (k) sg_out_byte(o, ' ');
        sg_sf_ser_item(o, sf, &sf->it[m->item0 + k]);
    }
    sg_out_byte(o, ')');
    sg_sf_ser_params(o, sf, m->param0, m->nparams);
}

long sg_sf_bytes(const sg_bare *v, uint8_t *dst, size_t cap)
{
    size_t len = 0;
    const char *end = NULL;
    if (sodium_base642bin(dst, cap, v->raw.p, v->raw.n, NULL, &len, &end,
                          sodium_base64_VARIANT_ORIGINAL) == 0 &&
        end == v->raw.p + v->raw.n)
        return (long)len;
    if (sodium_base642bin(dst, cap, v->raw.p, v->raw.n, NULL, &len, &end,
                          sodium_base64_VARIANT_ORIGINAL_NO_PADDING) == 0 &&
        end == v->raw.p + v->raw.n)
        return (long)len;
    return -1;
}
