/*
 * rw_store.c: the stored form of a compiled rule set (docs/rewrite.md,
 * "Stored form"), written by rw_set_serialize and read back, as hostile
 * input, by rw_set_load. All integers are little-endian (vm/bytes.h):
 *
 *   offset 0   magic         8 bytes  "RWSET\0\r\n"
 *          8   version       u32      RW_STORE_VERSION
 *         12   mode          u32      rw_mode
 *         16   max_match     u32
 *         20   nrules        u32
 *         24   record size   u32      RW_STORE_RECORD (48)
 *         28   flags         u32      0
 *         32   strings       u64 offset, u64 length
 *         48   literal db    u64 offset, u64 length (0: none)
 *         64   regex db      u64 offset, u64 length (0: none)
 *         80   total length  u64      of the whole stored set
 *         88   nrules records of 48 bytes:
 *                u32 kind, u32 flags, u32 pattern offset, u32 pattern length,
 *                u32 template offset, u32 template length (both in strings),
 *                u32 min width, u32 max width (0 in replace_filter mode),
 *                u32 file, u32 line, u32 col (rw_srcpos), u32 0
 *              then the strings, then the hs_serialize_database blobs,
 *              each starting at a multiple of 8.
 *
 * Widths are stored because recomputing them costs a Hyperscan parse per
 * pattern; everything else (group counts, templates, PCRE2 codes, the
 * combined replace_filter pattern) is rebuilt by the same code as
 * rw_build, which checks every rule again.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rw_set.h"

#define RW_STORE_MAGIC "RWSET\0\r\n"
#define RW_STORE_VERSION 1u
#define RW_STORE_HEADER 88u
#define RW_STORE_RECORD 48u

static void pad8(vm_buf *b)
{
    while (!b->failed && b->len % 8) vm_buf_put(b, "", 1);
}

static rw_status put_db(vm_buf *b, const hs_database_t *db, size_t at_off, size_t at_len,
                        size_t start)
{
    if (!db) return RW_OK;
    char *bytes = NULL;
    size_t len = 0;
    if (hs_serialize_database(db, &bytes, &len) != HS_SUCCESS) return RW_E_BACKEND;
    pad8(b);
    size_t off = b->len - start;
    vm_buf_put(b, bytes, len);
    free(bytes); /* Hyperscan's misc allocator: malloc unless the host set another */
    if (b->failed) return RW_E_NOMEM;
    vm_wr64(b->data + start + at_off, off);
    vm_wr64(b->data + start + at_len, len);
    return RW_OK;
}

rw_status rw_set_serialize(const rw_set *s, vm_buf *b)
{
    if (!s || !b) return RW_E_INVALID;
    size_t start = b->len;
    uint8_t *h = vm_buf_grow(b, RW_STORE_HEADER);
    if (!h) return RW_E_NOMEM;
    memset(h, 0, RW_STORE_HEADER);
    memcpy(h, RW_STORE_MAGIC, 8);
    vm_wr32(h + 8, RW_STORE_VERSION);
    vm_wr32(h + 12, (uint32_t)s->mode);
    vm_wr32(h + 16, s->L);
    vm_wr32(h + 20, s->nrules);
    vm_wr32(h + 24, RW_STORE_RECORD);
    for (uint32_t i = 0; i < s->nrules; i++) {
        const rw_rule *r = &s->rules[i];
        uint8_t *e = vm_buf_grow(b, RW_STORE_RECORD);
        if (!e) return RW_E_NOMEM;
        int rf = s->mode == RW_MODE_REPLACE_FILTER;
        uint32_t v[12] = {(uint32_t)r->kind,        r->flags,
                          (uint32_t)(r->pat - s->strings), r->pat_len,
                          (uint32_t)(r->tpl - s->strings), r->tpl_len,
                          rf ? 0 : r->min_width,    rf ? 0 : r->max_width,
                          r->pos.file,              r->pos.line,
                          r->pos.col,               0};
        for (int k = 0; k < 12; k++) vm_wr32(e + 4 * k, v[k]);
    }
    pad8(b);
    if (b->failed) return RW_E_NOMEM;
    vm_wr64(b->data + start + 32, b->len - start);
    vm_wr64(b->data + start + 40, s->strings_len);
    vm_buf_put(b, s->strings, s->strings_len);
    if (b->failed) return RW_E_NOMEM;
    rw_status st = put_db(b, s->litdb, 48, 56, start);
    if (!st) st = put_db(b, s->redb, 64, 72, start);
    if (st) return st;
    pad8(b);
    if (b->failed) return RW_E_NOMEM;
    vm_wr64(b->data + start + 80, b->len - start);
    return RW_OK;
}

/* ---- loading ------------------------------------------------------------ */

typedef struct loader {
    char *err;
    size_t errlen;
} loader;

static rw_status fail(loader *ld, rw_status st, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static rw_status fail(loader *ld, rw_status st, const char *fmt, ...)
{
    if (ld->err && ld->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ld->err, ld->errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* [off, off + len) inside [lo, n)? Compared by subtraction: no overflow. */
static int inside(uint64_t off, uint64_t len, uint64_t lo, uint64_t n)
{
    return off >= lo && off <= n && len <= n - off;
}

/* Places a stored database in host memory (hs_deserialize_database_at),
 * or reports that it must be rebuilt (*stale). */
static rw_status load_db(loader *ld, rw_set *s, const uint8_t *blob, uint64_t len,
                         const char *what, hs_database_t **out, int *in_place, int *stale)
{
    *out = NULL;
    size_t dbsize = 0;
    hs_error_t rc = hs_serialized_database_size((const char *)blob, (size_t)len, &dbsize);
    if (rc == HS_SUCCESS) {
        if (dbsize == 0 || dbsize > ((size_t)1 << 34))
            return fail(ld, RW_E_FORMAT, "the %s database declares %zu bytes", what, dbsize);
        char *info = NULL;
        if (hs_serialized_database_info((const char *)blob, (size_t)len, &info) == HS_SUCCESS) {
            int stream = info && strstr(info, "Mode: STREAM") != NULL;
            free(info);
            if (!stream)
                return fail(ld, RW_E_FORMAT, "the %s database is not a streaming database", what);
        }
        hs_database_t *db = vm_malloc(&s->al, dbsize);
        if (!db) return fail(ld, RW_E_NOMEM, "out of memory for the %s database", what);
        rc = hs_deserialize_database_at((const char *)blob, (size_t)len, db);
        if (rc == HS_SUCCESS) {
            *out = db;
            *in_place = 1;
            return RW_OK;
        }
        vm_free(&s->al, db);
    }
    if (rc == HS_DB_VERSION_ERROR || rc == HS_DB_PLATFORM_ERROR) {
        *stale = 1;
        return RW_OK;
    }
    if (rc == HS_NOMEM) return fail(ld, RW_E_NOMEM, "out of memory");
    return fail(ld, RW_E_FORMAT, "the %s database is corrupt (Hyperscan error %d)", what, rc);
}

static void free_dbs(rw_set *s)
{
    if (s->litdb_in_place) vm_free(&s->al, s->litdb);
    else hs_free_database(s->litdb);
    if (s->redb_in_place) vm_free(&s->al, s->redb);
    else hs_free_database(s->redb);
    s->litdb = s->redb = NULL;
    s->litdb_in_place = s->redb_in_place = 0;
}

/* rw_set_load, and rw_set_load_rebuilt when `rebuild`. */
static rw_status load_set(const void *p, size_t n, const vm_allocator *al, int rebuild,
                          rw_set **out, char *err, size_t errlen)
{
    loader ld = {err, errlen};
    if (err && errlen) err[0] = 0;
    if (out) *out = NULL;
    if (!out || (!p && n)) return fail(&ld, RW_E_INVALID, "invalid argument");
    const uint8_t *b = p;
    if (n < 8 || memcmp(b, RW_STORE_MAGIC, 8) != 0)
        return fail(&ld, RW_E_FORMAT, "not a stored rewrite set (bad magic)");
    if (n < RW_STORE_HEADER)
        return fail(&ld, RW_E_FORMAT, "truncated: %zu bytes, shorter than the header", n);
    uint32_t version = vm_rd32(b + 8);
    if (version != RW_STORE_VERSION)
        return fail(&ld, RW_E_VERSION, "unsupported version %u (this engine reads version %u)",
                    version, RW_STORE_VERSION);
    uint32_t mode = vm_rd32(b + 12), L = vm_rd32(b + 16), nrules = vm_rd32(b + 20);
    if (mode > RW_MODE_SUB_FILTER) return fail(&ld, RW_E_FORMAT, "unknown mode %u", mode);
    if (L > RW_MAX_MATCH_LIMIT || (L == 0 && mode != RW_MODE_REPLACE_FILTER))
        return fail(&ld, RW_E_FORMAT, "max_match %u out of range", L);
    if (nrules > RW_MAX_RULES) return fail(&ld, RW_E_FORMAT, "%u rules, more than %u", nrules, RW_MAX_RULES);
    if (vm_rd32(b + 24) != RW_STORE_RECORD || vm_rd32(b + 28) != 0)
        return fail(&ld, RW_E_FORMAT, "bad record size or flags");
    uint64_t total = vm_rd64(b + 80);
    if (total != n)
        return fail(&ld, RW_E_FORMAT, "size mismatch: the header says %llu bytes, got %zu",
                    (unsigned long long)total, n);
    uint64_t rec_end = RW_STORE_HEADER + (uint64_t)nrules * RW_STORE_RECORD;
    if (rec_end > n) return fail(&ld, RW_E_FORMAT, "truncated: the rule records pass the end");
    uint64_t so = vm_rd64(b + 32), sl = vm_rd64(b + 40);
    uint64_t lo = vm_rd64(b + 48), ll = vm_rd64(b + 56);
    uint64_t ro = vm_rd64(b + 64), rl = vm_rd64(b + 72);
    if (!inside(so, sl, rec_end, n)) return fail(&ld, RW_E_FORMAT, "the strings lie outside the set");
    if (sl > (uint64_t)nrules * (RW_MAX_PATTERN + RW_MAX_TEMPLATE))
        return fail(&ld, RW_E_FORMAT, "the strings are longer than the rules allow");
    if (ll && !inside(lo, ll, so + sl, n))
        return fail(&ld, RW_E_FORMAT, "the literal database lies outside the set");
    if (rl && !inside(ro, rl, so + sl, n))
        return fail(&ld, RW_E_FORMAT, "the regex database lies outside the set");

    rw_set *s = vm_calloc(al, 1, sizeof *s);
    if (!s) return fail(&ld, RW_E_NOMEM, "out of memory");
    if (al) s->al = *al;
    s->mode = (rw_mode)mode;
    s->L = L;
    s->nrules = nrules;
    s->rules = vm_calloc(al, nrules ? nrules : 1, sizeof *s->rules);
    s->strings = vm_malloc(al, sl ? (size_t)sl : 1);
    rw_status st = RW_E_NOMEM;
    if (!s->rules || !s->strings) {
        fail(&ld, st, "out of memory");
        goto bad;
    }
    if (sl) memcpy(s->strings, b + so, (size_t)sl);
    s->strings_len = (size_t)sl;
    int nlit = 0, nre = 0;
    st = RW_E_FORMAT;
    for (uint32_t i = 0; i < nrules; i++) {
        const uint8_t *e = b + RW_STORE_HEADER + (size_t)i * RW_STORE_RECORD;
        rw_rule *r = &s->rules[i];
        uint32_t kind = vm_rd32(e), flags = vm_rd32(e + 4);
        uint32_t po = vm_rd32(e + 8), pl = vm_rd32(e + 12), to = vm_rd32(e + 16),
                 tl = vm_rd32(e + 20);
        r->min_width = vm_rd32(e + 24);
        r->max_width = vm_rd32(e + 28);
        r->pos.file = vm_rd32(e + 32);
        r->pos.line = vm_rd32(e + 36);
        r->pos.col = vm_rd32(e + 40);
        if (kind > RW_REGEX || (flags & ~RW_FLAGS_ALL) || vm_rd32(e + 44) != 0) {
            fail(&ld, st, "rule %u is malformed (kind, flags)", i);
            goto bad;
        }
        if (!inside(po, pl, 0, sl) || !inside(to, tl, 0, sl) || pl > RW_MAX_PATTERN ||
            tl > RW_MAX_TEMPLATE) {
            fail(&ld, st, "rule %u: its pattern or template lies outside the strings", i);
            goto bad;
        }
        r->kind = (rw_kind)kind;
        r->flags = flags;
        r->pat = s->strings + po;
        r->pat_len = pl;
        r->tpl = s->strings + to;
        r->tpl_len = tl;
        if (mode != RW_MODE_REPLACE_FILTER) {
            int ok = r->min_width >= 1 && r->min_width <= r->max_width && r->min_width <= L &&
                     (kind == RW_REGEX || (r->min_width == pl && r->max_width == pl));
            if (!ok) {
                fail(&ld, st, "rule %u: bad widths %u..%u", i, r->min_width, r->max_width);
                goto bad;
            }
        } else if (r->min_width || r->max_width) {
            fail(&ld, st, "rule %u: widths in a replace_filter set", i);
            goto bad;
        }
        nlit += kind == RW_LITERAL;
        nre += kind == RW_REGEX;
    }
    /* every rule again, through the code rw_build uses */
    rw_diags dg;
    memset(&dg, 0, sizeof dg);
    dg.al = s->al;
    rw_dctx c = {.d = &dg, .rule = -1};
    uint32_t opcap = 0;
    for (uint32_t i = 0; i < nrules && c.errors == 0; i++) {
        if (rw_rule_prepare(s, i, 1, &opcap, &c) < 0) {
            rw_diags_free(&dg);
            st = fail(&ld, RW_E_NOMEM, "out of memory");
            goto bad;
        }
    }
    if (c.errors) {
        if (dg.n)
            fail(&ld, st, "rule %d is invalid: %s", dg.v[0].rule, dg.v[0].message);
        else
            fail(&ld, st, "a rule is invalid");
        rw_diags_free(&dg);
        goto bad;
    }
    if (mode == RW_MODE_REPLACE_FILTER) {
        if (ll || rl) {
            rw_diags_free(&dg);
            fail(&ld, st, "a replace_filter set has no Hyperscan databases");
            goto bad;
        }
        int rc = rw_compile_rf(s, &c);
        if (rc) {
            st = rc < 0 ? RW_E_NOMEM : RW_E_FORMAT;
            fail(&ld, st, rc < 0 ? "out of memory" : "the rules do not compile as one pattern");
            rw_diags_free(&dg);
            goto bad;
        }
    } else {
        if ((ll != 0) != (nlit != 0) || (rl != 0) != (nre != 0)) {
            rw_diags_free(&dg);
            fail(&ld, st, "the databases do not match the rules");
            goto bad;
        }
        int stale = rebuild; /* another library's blobs are never read */
        if (!rebuild && ll &&
            (st = load_db(&ld, s, b + lo, ll, "literal", &s->litdb, &s->litdb_in_place, &stale)))
            goto bad_dg;
        if (!rebuild && rl &&
            (st = load_db(&ld, s, b + ro, rl, "regex", &s->redb, &s->redb_in_place, &stale)))
            goto bad_dg;
        if (stale) {
            /* built by another library, or for another Hyperscan or CPU:
             * build again from the patterns */
            free_dbs(s);
            int rc = rw_compile_databases(s, &c);
            if (rc) {
                st = rc < 0 ? RW_E_NOMEM : RW_E_BACKEND;
                fail(&ld, st, "cannot rebuild the Hyperscan databases: %s",
                     dg.n ? dg.v[0].message : "out of memory");
                goto bad_dg;
            }
        }
        /* the widths the engine trusts must be those of these rules */
        for (uint32_t i = 0; i < nrules; i++) {
            rw_rule *r = &s->rules[i];
            r->fixed = r->min_width == r->max_width && r->max_width != RW_UNBOUNDED;
            if (r->kind == RW_REGEX && !r->fixed && !r->dfa) {
                st = RW_E_FORMAT;
                fail(&ld, st, "rule %u: widths disagree with the pattern", i);
                goto bad_dg;
            }
        }
    }
    rw_diags_free(&dg);
    if ((st = rw_set_finish(s)) != RW_OK) goto bad;
    *out = s;
    return RW_OK;
bad_dg:
    rw_diags_free(&dg);
bad:
    rw_set_free(s);
    return st;
}

rw_status rw_set_load(const void *p, size_t n, const vm_allocator *al, rw_set **out,
                      char *err, size_t errlen)
{
    return load_set(p, n, al, 0, out, err, errlen);
}

rw_status rw_set_load_rebuilt(const void *p, size_t n, const vm_allocator *al, rw_set **out,
                              char *err, size_t errlen)
{
    return load_set(p, n, al, 1, out, err, errlen);
}
