/*
 * load.c: reads a rules file (format.h) into a clf_program.
 *
 * The file may come from anywhere, so every count, offset and index is
 * checked against the bytes actually present before it is used; sizes are
 * compared with subtraction so that nothing overflows. Structure is checked
 * here; meaning (operand kinds, register types, jumps) by vm_verify().
 */
#include <stdarg.h>
#include <stdio.h>
#include <xxhash.h>

#include "alloc.h"
#include "bytes.h"
#include "capture.h"
#include "format.h"
#include "hdrindex.h"
#include "program.h"
#include "rw_build.h"
#include "sg_keys.h"
#include "store.h"

void vm_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

typedef struct section {
    const uint8_t *p;
    uint64_t len;
} section;

/* A loader in progress: the error goes to err/errlen. */
typedef struct loader {
    clf_program *prog;
    section sec[VM_SEC_COUNT + 1];
    int foreign; /* another library built the databases: rebuild them all */
    char *err;
    size_t errlen;
} loader;

static const char *const section_names[VM_SEC_COUNT + 1] = {
    "", "constants", "functions", "code", "register types",
    "source positions", "headers", "subjects", "patterns", "databases",
    "IP sets", "captures", "rewrite sets", "int sets", "state slots", "matcher"};

#define FAIL(ld, st, ...)                                                   \
    do {                                                                   \
        vm_errf((ld)->err, (ld)->errlen, __VA_ARGS__);                     \
        return (st);                                                       \
    } while (0)

/* Checks that section `id` holds at least `fixed` bytes plus `n` entries
 * of `each` bytes, as its count field claims. */
static clf_status need(loader *ld, int id, uint64_t fixed, uint64_t n,
                       uint64_t each)
{
    uint64_t len = ld->sec[id].len;
    if (len < fixed || (each && n > (len - fixed) / each))
        FAIL(ld, CLF_E_FORMAT,
             "%s section is %llu bytes, too short for its %llu entries",
             section_names[id], (unsigned long long)len, (unsigned long long)n);
    return CLF_OK;
}

/* A section that starts `u32 n, u32 ...` and holds n entries of `each`
 * bytes after those 8: checks that they fit and stores n. */
static clf_status table(loader *ld, int id, uint64_t each, uint32_t *n)
{
    clf_status st = need(ld, id, 8, 0, 0);
    if (st) return st;
    *n = vm_rd32(ld->sec[id].p);
    return need(ld, id, 8, *n, each);
}

static int is_str(const clf_program *p, uint32_t k)
{
    return k < p->nconsts && p->consts[k].kind == VM_K_STR;
}

static clf_status read_header(loader *ld, const uint8_t *b, size_t len,
                              const clf_options *o)
{
    if (len > o->file_bytes)
        FAIL(ld, CLF_E_LIMIT, "file is %zu bytes, over the limit of %llu bytes",
             len, (unsigned long long)o->file_bytes);
    if (len == 0) FAIL(ld, CLF_E_FORMAT, "the file is empty");
    if (len < VM_MAGIC_LEN && memcmp(b, VM_MAGIC, len) == 0)
        FAIL(ld, CLF_E_FORMAT, "truncated: %zu bytes, shorter than the header", len);
    if (len < VM_MAGIC_LEN || memcmp(b, VM_MAGIC, VM_MAGIC_LEN) != 0) {
        if (len >= 4 && memcmp(b, VM_MAGIC, 4) == 0)
            FAIL(ld, CLF_E_FORMAT, "bad magic number: the file's line endings "
                                   "or bytes were altered in transfer");
        FAIL(ld, CLF_E_FORMAT, "bad magic number: not a compiled rules file");
    }
    if (len < VM_HEADER_LEN)
        FAIL(ld, CLF_E_FORMAT, "truncated: %zu bytes, shorter than the header", len);
    uint32_t version = vm_rd32(b + 8);
    if (version != VM_FORMAT_VERSION)
        FAIL(ld, CLF_E_VERSION,
             "unsupported format version %u (this library reads version %u); "
             "recompile the rules with a matching classifyc",
             version, VM_FORMAT_VERSION);
    uint64_t declared = vm_rd64(b + 16);
    if (declared > len)
        FAIL(ld, CLF_E_FORMAT, "truncated: the header says %llu bytes, got %zu",
             (unsigned long long)declared, len);
    if (declared < len)
        FAIL(ld, CLF_E_FORMAT, "size mismatch: the header says %llu bytes, got %zu "
             "(trailing data)", (unsigned long long)declared, len);
    uint32_t nsec = vm_rd32(b + 12);
    if (nsec != VM_SEC_COUNT)
        FAIL(ld, CLF_E_FORMAT, "bad section count %u (expected %u)", nsec, VM_SEC_COUNT);
    uint64_t body = (uint64_t)VM_HEADER_LEN + (uint64_t)nsec * VM_SECENTRY_LEN;
    if (len < body + VM_TRAILER_LEN)
        FAIL(ld, CLF_E_FORMAT, "truncated: %zu bytes, shorter than the section table", len);
    uint64_t sum = XXH3_64bits(b, len - VM_TRAILER_LEN);
    if (sum != vm_rd64(b + len - VM_TRAILER_LEN))
        FAIL(ld, CLF_E_FORMAT, "checksum mismatch: the file is corrupt "
             "(XXH3-64 %016llx, stored %016llx)", (unsigned long long)sum,
             (unsigned long long)vm_rd64(b + len - VM_TRAILER_LEN));
    uint64_t end = len - VM_TRAILER_LEN;
    for (uint32_t i = 0; i < nsec; i++) {
        const uint8_t *e = b + VM_HEADER_LEN + (size_t)i * VM_SECENTRY_LEN;
        uint32_t id = vm_rd32(e);
        uint64_t off = vm_rd64(e + 8), size = vm_rd64(e + 16);
        if (id != i + 1 || vm_rd32(e + 4) != 0)
            FAIL(ld, CLF_E_FORMAT, "section table entry %u is malformed", i);
        if (off < body || off % 8 || off > end || size > end - off)
            FAIL(ld, CLF_E_FORMAT, "%s section lies outside the file",
                 section_names[id]);
        ld->sec[id].p = b + off;
        ld->sec[id].len = size;
    }
    return CLF_OK;
}

static clf_status read_consts(loader *ld)
{
    clf_program *p = ld->prog;
    section s = ld->sec[VM_SEC_CONST];
    uint32_t n;
    clf_status st = table(ld, VM_SEC_CONST, 16, &n);
    if (st) return st;
    uint64_t strbase = 8 + (uint64_t)n * 16, strlen_ = s.len - strbase;
    p->consts = vm_calloc(&p->opts.alloc, n, sizeof *p->consts);
    p->strings = vm_malloc(&p->opts.alloc, strlen_);
    if (!p->consts || !p->strings) FAIL(ld, CLF_E_NOMEM, "out of memory");
    memcpy(p->strings, s.p + strbase, strlen_);
    p->nconsts = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = s.p + 8 + (size_t)i * 16;
        vm_const *k = &p->consts[i];
        k->kind = vm_rd32(e);
        k->len = vm_rd32(e + 4);
        uint64_t v = vm_rd64(e + 8);
        if (k->kind == VM_K_INT) {
            if (k->len != 0) FAIL(ld, CLF_E_FORMAT, "constant %u is malformed", i);
            k->i = (int64_t)v;
        } else if (k->kind == VM_K_STR) {
            if (v > strlen_ || k->len >= strlen_ - v || p->strings[v + k->len] != 0)
                FAIL(ld, CLF_E_FORMAT, "string constant %u lies outside its section", i);
            k->str = p->strings + v;
        } else {
            FAIL(ld, CLF_E_FORMAT, "constant %u has unknown kind %u", i, k->kind);
        }
    }
    return CLF_OK;
}

static clf_status read_funcs(loader *ld)
{
    clf_program *p = ld->prog;
    section s = ld->sec[VM_SEC_FUNC];
    uint32_t n;
    clf_status st = table(ld, VM_SEC_FUNC, 16, &n);
    if (st) return st;
    p->entry = vm_rd32(s.p + 4);
    /* A file of rewrite sets alone has no entry (read_rewrites checks
     * that it has sets). */
    if (n == 0 && p->entry != VM_NO_ENTRY) FAIL(ld, CLF_E_FORMAT, "the program has no functions");
    if (p->entry != VM_NO_ENTRY && p->entry >= n)
        FAIL(ld, CLF_E_FORMAT, "entry function %u does not exist", p->entry);
    p->funcs = vm_calloc(&p->opts.alloc, n, sizeof *p->funcs);
    if (!p->funcs) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->nfuncs = n;
    section code = ld->sec[VM_SEC_CODE], types = ld->sec[VM_SEC_TYPES],
            pos = ld->sec[VM_SEC_POS];
    uint64_t ci = 0, ti = 0; /* instructions and registers used so far */
    for (uint32_t f = 0; f < n; f++) {
        const uint8_t *e = s.p + 8 + (size_t)f * 16;
        vm_func *F = &p->funcs[f];
        F->name = vm_rd32(e);
        F->nregs = vm_rd32(e + 4);
        F->ninsns = vm_rd32(e + 8);
        F->kind = e[12];
        F->nparams = e[13];
        F->ret = e[14];
        F->flags = e[15];
        if (!is_str(p, F->name) || (F->flags & ~(VM_FUNC_ENTRY | VM_FUNC_ROOT)) ||
            F->kind > VM_FUNC_FN ||
            (F->kind == VM_FUNC_FILTER ? F->ret != 0 || F->nparams != 0
                                       : F->ret < VM_T_BOOL || F->ret > VM_T_MAX) ||
            F->nparams > F->nregs)
            FAIL(ld, CLF_E_FORMAT, "function %u is malformed", f);
        if (F->nregs > 65536)
            FAIL(ld, CLF_E_FORMAT, "function %u has %u registers, more than 65536",
                 f, F->nregs);
        if (F->nregs > p->opts.registers)
            FAIL(ld, CLF_E_LIMIT, "function %u uses %u registers, over the limit of %llu "
                 "(CLF_LIMIT_REGISTERS)", f, F->nregs, (unsigned long long)p->opts.registers);
        if (F->ninsns == 0 || F->ninsns > (code.len / 8) - ci)
            FAIL(ld, CLF_E_FORMAT, "function %u's code lies outside the code section", f);
        if (F->nregs > types.len - ti)
            FAIL(ld, CLF_E_FORMAT, "function %u's register types lie outside their section", f);
        if (ci + F->ninsns > pos.len / 12)
            FAIL(ld, CLF_E_FORMAT, "function %u's source positions lie outside their section", f);
        F->code = vm_calloc(&p->opts.alloc, F->ninsns, sizeof *F->code);
        F->pos = vm_calloc(&p->opts.alloc, F->ninsns, sizeof *F->pos);
        F->regtypes = vm_malloc(&p->opts.alloc, F->nregs);
        if (!F->code || !F->pos || !F->regtypes) FAIL(ld, CLF_E_NOMEM, "out of memory");
        for (uint32_t i = 0; i < F->ninsns; i++) {
            const uint8_t *q = code.p + (ci + i) * 8;
            F->code[i].op = q[0];
            F->code[i].zero = q[1];
            F->code[i].a = vm_rd16(q + 2);
            F->code[i].b = vm_rd16(q + 4);
            F->code[i].c = vm_rd16(q + 6);
            const uint8_t *r = pos.p + (ci + i) * 12;
            F->pos[i].file = vm_rd32(r);
            F->pos[i].line = vm_rd32(r + 4);
            F->pos[i].col = vm_rd32(r + 8);
            if (F->pos[i].file != VM_NO_REASON && !is_str(p, F->pos[i].file))
                FAIL(ld, CLF_E_FORMAT, "function %u: bad source file at offset %u", f, i);
        }
        memcpy(F->regtypes, types.p + ti, F->nregs);
        ci += F->ninsns;
        ti += F->nregs;
        if (F->nregs > p->maxregs) p->maxregs = F->nregs;
    }
    if (p->entry != VM_NO_ENTRY && !(p->funcs[p->entry].flags & VM_FUNC_ENTRY))
        FAIL(ld, CLF_E_FORMAT, "entry function %u is not marked as an entry", p->entry);
    if (ci * 8 != code.len || ti != types.len || ci * 12 != pos.len)
        FAIL(ld, CLF_E_FORMAT, "code, register-type and position sections disagree "
             "with the function table");
    return CLF_OK;
}

static clf_status read_tables(loader *ld)
{
    clf_program *p = ld->prog;
    clf_status st;
    section h = ld->sec[VM_SEC_HDRS];
    if ((st = need(ld, VM_SEC_HDRS, 4, 0, 0))) return st;
    uint32_t n = vm_rd32(h.p);
    if ((st = need(ld, VM_SEC_HDRS, 4, n, 4))) return st;
    p->hdrs = vm_calloc(&p->opts.alloc, n, sizeof *p->hdrs);
    if (!p->hdrs) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->nhdrs = n;
    for (uint32_t i = 0; i < n; i++) {
        p->hdrs[i] = vm_rd32(h.p + 4 + (size_t)i * 4);
        if (!is_str(p, p->hdrs[i]))
            FAIL(ld, CLF_E_FORMAT, "header slot %u does not name a string", i);
    }
    if (vm_hdr_index_build(ld->prog)) FAIL(ld, CLF_E_NOMEM, "out of memory");

    section s = ld->sec[VM_SEC_SUBJ];
    if ((st = need(ld, VM_SEC_SUBJ, 4, 0, 0))) return st;
    n = vm_rd32(s.p);
    if ((st = need(ld, VM_SEC_SUBJ, 4, n, 16))) return st;
    p->subjects = vm_calloc(&p->opts.alloc, n, sizeof *p->subjects);
    if (!p->subjects) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->nsubjects = n;
    uint64_t bits = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = s.p + 4 + (size_t)i * 16;
        vm_subject *S = &p->subjects[i];
        S->kind = vm_rd32(e);
        S->hdr = vm_rd32(e + 4);
        S->ntests = vm_rd32(e + 8);
        if (S->kind >= VM_SUBJ_KIND_COUNT || vm_rd32(e + 12) != 0 ||
            (S->kind == VM_SUBJ_HEADER ? S->hdr >= p->nhdrs : S->hdr != 0) ||
            S->ntests == 0 || S->ntests > 65536)
            FAIL(ld, CLF_E_FORMAT, "subject %u is malformed", i);
        S->bit_base = (uint32_t)bits;
        bits += S->ntests;
        if (bits > UINT32_MAX / 2) FAIL(ld, CLF_E_FORMAT, "too many tests");
    }
    p->nbits = (uint32_t)bits;

    section q = ld->sec[VM_SEC_PAT];
    if ((st = need(ld, VM_SEC_PAT, 4, 0, 0))) return st;
    n = vm_rd32(q.p);
    if ((st = need(ld, VM_SEC_PAT, 4, n, 24))) return st;
    if (n > p->opts.patterns)
        FAIL(ld, CLF_E_LIMIT, "the file holds %u patterns, over the limit of %llu "
             "(CLF_LIMIT_PATTERNS)", n, (unsigned long long)p->opts.patterns);
    p->patterns = vm_calloc(&p->opts.alloc, n, sizeof *p->patterns);
    if (!p->patterns) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->npatterns = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = q.p + 4 + (size_t)i * 24;
        vm_pattern *P = &p->patterns[i];
        P->subject = vm_rd32(e);
        P->test = vm_rd32(e + 4);
        P->kind = vm_rd32(e + 8);
        P->flags = vm_rd32(e + 12);
        P->value = vm_rd32(e + 16);
        /* A literal is caseless or not; a regex may be dotall and
         * multiline too. Hyperscan refuses an empty literal. */
        uint32_t allowed = HS_FLAG_CASELESS |
                           (P->kind == VM_PAT_REGEX ? HS_FLAG_DOTALL | HS_FLAG_MULTILINE : 0);
        if (P->subject >= p->nsubjects || P->test >= p->subjects[P->subject].ntests ||
            P->kind >= VM_PAT_KIND_COUNT || (P->flags & ~allowed) || !is_str(p, P->value) ||
            (P->kind != VM_PAT_REGEX && p->consts[P->value].len == 0) || vm_rd32(e + 20) != 0)
            FAIL(ld, CLF_E_FORMAT, "pattern %u is malformed", i);
        p->subjects[P->subject].npatterns++;
    }
    /* Each subject's id -> test table (ids are indices, in file order). */
    for (uint32_t s = 0; s < p->nsubjects; s++) {
        vm_subject *S = &p->subjects[s];
        if (S->npatterns == 0) FAIL(ld, CLF_E_FORMAT, "subject %u has no patterns", s);
        S->test_of = vm_calloc(&p->opts.alloc, S->npatterns, sizeof *S->test_of);
        if (!S->test_of) FAIL(ld, CLF_E_NOMEM, "out of memory");
        S->npatterns = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        vm_subject *S = &p->subjects[p->patterns[i].subject];
        S->test_of[S->npatterns++] = p->patterns[i].test;
    }
    return CLF_OK;
}

static int ip_less(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 16) < 0; }

/* The head of a set section (IP sets, int sets): `u32 nsets, u32 nitems`,
 * nsets x {u32 first, u32 count}, then nitems items of `each` bytes.
 * Checks that all of it fits; *items points at the first item. */
static clf_status set_section(loader *ld, int id, uint64_t each, uint32_t *nsets,
                              uint32_t *nitems, const uint8_t **items)
{
    const section s = ld->sec[id];
    clf_status st = need(ld, id, 8, 0, 0);
    if (st) return st;
    *nsets = vm_rd32(s.p);
    *nitems = vm_rd32(s.p + 4);
    if ((st = need(ld, id, 8, *nsets, 8))) return st;
    if ((st = need(ld, id, 8 + (uint64_t)*nsets * 8, *nitems, each))) return st;
    *items = s.p + 8 + (size_t)*nsets * 8;
    return CLF_OK;
}

/* Set i's {first, count} of a set section, which must lie inside its
 * nitems items ("IP set 3 lies outside its section"). */
static clf_status set_span(loader *ld, int id, uint32_t i, uint32_t nitems, const char *what,
                           uint32_t *first, uint32_t *count)
{
    const uint8_t *e = ld->sec[id].p + 8 + (size_t)i * 8;
    *first = vm_rd32(e);
    *count = vm_rd32(e + 4);
    if (*first > nitems || *count > nitems - *first)
        FAIL(ld, CLF_E_FORMAT, "%s %u lies outside its section", what, i);
    return CLF_OK;
}

/* IP sets: every set's ranges must be sorted, disjoint and not adjacent,
 * as vm_iprange_contains' binary search assumes. */
static clf_status read_ipsets(loader *ld)
{
    clf_program *p = ld->prog;
    uint32_t nsets, nranges;
    const uint8_t *r;
    clf_status st = set_section(ld, VM_SEC_IPSET, 32, &nsets, &nranges, &r);
    if (st) return st;
    p->ipsets = vm_calloc(&p->opts.alloc, nsets, sizeof *p->ipsets);
    p->ranges = vm_calloc(&p->opts.alloc, nranges, sizeof *p->ranges);
    if (!p->ipsets || !p->ranges) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->nipsets = nsets;
    p->nranges = nranges;
    for (uint32_t i = 0; i < nranges; i++) {
        memcpy(p->ranges[i].lo, r + (size_t)i * 32, 16);
        memcpy(p->ranges[i].hi, r + (size_t)i * 32 + 16, 16);
        if (ip_less(p->ranges[i].hi, p->ranges[i].lo))
            FAIL(ld, CLF_E_FORMAT, "IP range %u is inverted", i);
    }
    for (uint32_t i = 0; i < nsets; i++) {
        vm_ipset *S = &p->ipsets[i];
        if ((st = set_span(ld, VM_SEC_IPSET, i, nranges, "IP set", &S->first, &S->count)))
            return st;
        for (uint32_t k = 1; k < S->count; k++) {
            const vm_iprange *a = &p->ranges[S->first + k - 1], *b = &p->ranges[S->first + k];
            if (!ip_less(a->hi, b->lo))
                FAIL(ld, CLF_E_FORMAT, "IP set %u is not sorted and merged", i);
        }
    }
    return CLF_OK;
}

/* Int sets: each strictly increasing, for the binary search of OP_INTIN. */
static clf_status read_intsets(loader *ld)
{
    clf_program *p = ld->prog;
    uint32_t nsets, nints;
    const uint8_t *v;
    clf_status st = set_section(ld, VM_SEC_INTSET, 8, &nsets, &nints, &v);
    if (st) return st;
    p->intsets = vm_calloc(&p->opts.alloc, nsets ? nsets : 1, sizeof *p->intsets);
    p->ints = vm_calloc(&p->opts.alloc, nints ? nints : 1, sizeof *p->ints);
    if (!p->intsets || !p->ints) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->nintsets = nsets;
    p->nints = nints;
    for (uint32_t i = 0; i < nints; i++) p->ints[i] = (int64_t)vm_rd64(v + (size_t)i * 8);
    for (uint32_t i = 0; i < nsets; i++) {
        vm_intset *S = &p->intsets[i];
        if ((st = set_span(ld, VM_SEC_INTSET, i, nints, "int set", &S->first, &S->count)))
            return st;
        for (uint32_t k = 1; k < S->count; k++)
            if (p->ints[S->first + k - 1] >= p->ints[S->first + k])
                FAIL(ld, CLF_E_FORMAT, "int set %u is not strictly increasing", i);
    }
    return CLF_OK;
}

/* State slots: kinds, key types, names and bounds as classifyc checks
 * them (vm/store.h), so that no slot can build a key that does not fit. */
static clf_status read_slots(loader *ld)
{
    clf_program *p = ld->prog;
    const section s = ld->sec[VM_SEC_STATE];
    clf_status st = need(ld, VM_SEC_STATE, 8, 0, 0);
    if (st) return st;
    uint32_t n = vm_rd32(s.p);
    if ((st = need(ld, VM_SEC_STATE, 8, n, 24))) return st;
    p->slots = vm_calloc(&p->opts.alloc, n ? n : 1, sizeof *p->slots);
    if (!p->slots) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->nslots = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = s.p + 8 + (size_t)i * 24;
        vm_slot *S = &p->slots[i];
        S->kind = vm_rd32(e);
        S->keytype = vm_rd32(e + 4);
        S->name = vm_rd32(e + 8);
        S->param = vm_rd32(e + 12);
        S->amount = (int64_t)vm_rd64(e + 16);
        uint32_t max = S->kind == CLF_STATE_COUNTER ? VM_STATE_WINDOW_MAX
                       : S->kind == CLF_STATE_SCORE ? VM_STATE_HALF_LIFE_MAX : VM_STATE_TTL_MAX;
        if (S->kind < CLF_STATE_COUNTER || S->kind > CLF_STATE_MARK || S->keytype < VM_KEY_IP ||
            S->keytype > VM_KEY_STR)
            FAIL(ld, CLF_E_FORMAT, "state slot %u has an unknown kind or key type", i);
        if (S->param < 1 || S->param > max || S->amount < 0 || S->amount > VM_STATE_AMOUNT_MAX)
            FAIL(ld, CLF_E_FORMAT, "state slot %u has a period or amount out of bounds", i);
        if (S->name >= p->nconsts || p->consts[S->name].kind != VM_K_STR ||
            p->consts[S->name].len < 1 || p->consts[S->name].len > VM_STATE_NAME_MAX)
            FAIL(ld, CLF_E_FORMAT, "state slot %u has no valid name", i);
        for (uint32_t k = 0; k < p->consts[S->name].len; k++) {
            char c = p->consts[S->name].str[k];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                FAIL(ld, CLF_E_FORMAT, "state slot %u has no valid name", i);
        }
    }
    return CLF_OK;
}

/* Captures: each regex is compiled with PCRE2 here, once. */
static clf_status read_captures(loader *ld)
{
    clf_program *p = ld->prog;
    section s = ld->sec[VM_SEC_CAPT];
    uint32_t n;
    clf_status st = table(ld, VM_SEC_CAPT, 24, &n);
    if (st) return st;
    p->capts = vm_calloc(&p->opts.alloc, n, sizeof *p->capts);
    if (!p->capts) FAIL(ld, CLF_E_NOMEM, "out of memory");
    p->ncapts = n;
    const uint32_t allowed = HS_FLAG_CASELESS | HS_FLAG_DOTALL | HS_FLAG_MULTILINE;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = s.p + 8 + (size_t)i * 24;
        vm_capt *C = &p->capts[i];
        C->subject = vm_rd32(e);
        C->test = vm_rd32(e + 4);
        C->flags = vm_rd32(e + 8);
        C->expr = vm_rd32(e + 12);
        C->group = vm_rd32(e + 16);
        if (C->subject >= p->nsubjects || C->test >= p->subjects[C->subject].ntests ||
            (C->flags & ~allowed) || !is_str(p, C->expr) || vm_rd32(e + 20) != 0)
            FAIL(ld, CLF_E_FORMAT, "capture %u is malformed", i);
        char msg[160];
        st = vm_capture_new(p->consts[C->expr].str, p->consts[C->expr].len, C->flags,
                            &p->opts.alloc, &C->re, msg, sizeof msg);
        if (st == CLF_E_NOMEM) FAIL(ld, st, "out of memory");
        if (st) FAIL(ld, CLF_E_FORMAT, "capture %u: %s", i, msg);
        uint32_t ng = vm_capture_ngroups(C->re);
        if (C->group > ng)
            FAIL(ld, CLF_E_FORMAT, "capture %u asks for group %u of a regex with %u", i,
                 C->group, ng);
        if (ng > p->maxgroups) p->maxgroups = ng;
    }
    return CLF_OK;
}

/* Rewrite sets: names unique string constants, each set's stored form
 * loaded (and so checked as hostile input) by the rewrite engine. */
static clf_status read_rewrites(loader *ld)
{
    clf_program *p = ld->prog;
    section s = ld->sec[VM_SEC_REWRITE];
    uint32_t n;
    clf_status st = table(ld, VM_SEC_REWRITE, 24, &n);
    if (st) return st;
    if (vm_rd32(s.p + 4) != 0) FAIL(ld, CLF_E_FORMAT, "the rewrite-set table is malformed");
    if (n == 0 && p->entry == VM_NO_ENTRY)
        FAIL(ld, CLF_E_FORMAT, "the file has neither an entry filter nor rewrite sets");
    /* The names are compared pairwise: bound the sets (format.h). */
    if (n > VM_MAX_REWRITE_SETS)
        FAIL(ld, CLF_E_FORMAT, "the file holds %u rewrite sets, more than %u", n,
             VM_MAX_REWRITE_SETS);
    p->rewrites = vm_calloc(&p->opts.alloc, n, sizeof *p->rewrites);
    if (!p->rewrites) FAIL(ld, CLF_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *e = s.p + 8 + (size_t)i * 24;
        vm_rewrite *R = &p->rewrites[i];
        R->name = vm_rd32(e);
        uint64_t off = vm_rd64(e + 8), size = vm_rd64(e + 16);
        if (!is_str(p, R->name) || p->consts[R->name].len == 0 || vm_rd32(e + 4) != 0 ||
            off > s.len || size > s.len - off || off % 8 != 0)
            FAIL(ld, CLF_E_FORMAT, "rewrite set %u is malformed", i);
        for (uint32_t k = 0; k < i; k++)
            if (p->consts[p->rewrites[k].name].len == p->consts[R->name].len &&
                memcmp(p->consts[p->rewrites[k].name].str, p->consts[R->name].str,
                       p->consts[R->name].len) == 0)
                FAIL(ld, CLF_E_FORMAT, "two rewrite sets are named '%s'", p->consts[R->name].str);
        char msg[160];
        rw_status rs = (ld->foreign ? rw_set_load_rebuilt : rw_set_load)(
            s.p + off, (size_t)size, &p->opts.alloc, &R->set, msg, sizeof msg);
        if (rs == RW_E_NOMEM) FAIL(ld, CLF_E_NOMEM, "out of memory");
        if (rs != RW_OK)
            FAIL(ld, rs == RW_E_VERSION ? CLF_E_VERSION : rs == RW_E_BACKEND ? CLF_E_BACKEND
                                                                             : CLF_E_FORMAT,
                 "rewrite set '%s': %s", p->consts[R->name].str, msg);
        p->nrewrites = i + 1;
    }
    return CLF_OK;
}

/* Copies the trusted proxies of the options into the program. */
static clf_status copy_trusted(loader *ld, const clf_options *o)
{
    clf_program *p = ld->prog;
    p->opts.trusted = NULL; /* owned by the options object, not us */
    p->opts.ntrusted = 0;
    if (!o->ntrusted) return CLF_OK;
    p->trusted = vm_calloc(&p->opts.alloc, o->ntrusted, sizeof *p->trusted);
    if (!p->trusted) FAIL(ld, CLF_E_NOMEM, "out of memory");
    memcpy(p->trusted, o->trusted, o->ntrusted * sizeof *p->trusted);
    p->ntrusted = o->ntrusted;
    return CLF_OK;
}

/* Copies the options' key ring into the program (from its allocator, so
 * that the host may free its ring right after the load), and notes
 * whether any function reads a signature field: only then do contexts
 * pay for verification (vm/sigctx.c). */
static clf_status copy_keys(loader *ld, const clf_options *o)
{
    clf_program *p = ld->prog;
    p->opts.keyring = NULL; /* the host's, not ours */
    for (uint32_t f = 0; f < p->nfuncs && !p->uses_sig; f++)
        for (uint32_t i = 0; i < p->funcs[f].ninsns; i++) {
            uint8_t op = p->funcs[f].code[i].op;
            if (op == OP_SIGSTATUS || op == OP_SIGAGENT || op == OP_SIGKEYID) p->uses_sig = 1;
        }
    if (!o->keyring) return CLF_OK;
    p->keys = vm_malloc(&p->opts.alloc, sizeof *p->keys);
    if (!p->keys) FAIL(ld, CLF_E_NOMEM, "out of memory");
    if (sg_keyring_copy(p->keys, o->keyring, &p->opts.alloc) != SG_KEYS_OK) {
        vm_free(&p->opts.alloc, p->keys);
        p->keys = NULL;
        FAIL(ld, CLF_E_NOMEM, "out of memory for the key ring");
    }
    return CLF_OK;
}

/* Which library built the databases (VM_SEC_MATCHER). Read before the
 * databases and the rewrite sets: another library's blobs are not
 * handed to this one's deserializer at all, but rebuilt. */
static clf_status read_matcher(loader *ld)
{
    section s = ld->sec[VM_SEC_MATCHER];
    if (s.len != 8) FAIL(ld, CLF_E_FORMAT, "matcher section is %llu bytes, not 8",
                         (unsigned long long)s.len);
    vm_matcher m = {vm_rd32(s.p), vm_rd32(s.p + 4)};
    if (!vm_matcher_name(m.lib))
        FAIL(ld, CLF_E_FORMAT, "unknown matcher library %u (1 is Hyperscan, 2 Vectorscan)", m.lib);
    vm_matcher here = vm_matcher_this();
    ld->prog->built_by = m;
    ld->foreign = m.lib != here.lib || m.version != here.version;
    return CLF_OK;
}

/* Deserializes each subject's database, or rebuilds it from the patterns
 * when another library built it (ld->foreign) or this Hyperscan or this
 * CPU cannot use the stored one. */
static clf_status read_databases(loader *ld)
{
    clf_program *p = ld->prog;
    section d = ld->sec[VM_SEC_HSDB];
    clf_status st = need(ld, VM_SEC_HSDB, 0, p->nsubjects, 16);
    if (st) return st;
    for (uint32_t i = 0; i < p->nsubjects; i++) {
        uint64_t off = vm_rd64(d.p + (size_t)i * 16), size = vm_rd64(d.p + (size_t)i * 16 + 8);
        if (off < (uint64_t)p->nsubjects * 16 || off > d.len || size > d.len - off)
            FAIL(ld, CLF_E_FORMAT, "database %u lies outside its section", i);
        if (ld->foreign) {
            long bad;
            if ((st = vm_subject_build(p, i, &p->subjects[i].db, &bad, ld->err, ld->errlen)))
                return st;
            continue;
        }
        /* Place the database in memory from the host's allocator
         * (hs_deserialize_database_at), so that the host sees and can
         * limit it; its size comes from the blob's header. */
        const char *blob = (const char *)d.p + off;
        size_t dbsize = 0;
        hs_error_t rc = hs_serialized_database_size(blob, (size_t)size, &dbsize);
        hs_database_t *db = NULL;
        if (rc == HS_SUCCESS) {
            if (dbsize == 0 || dbsize > ((size_t)1 << 34))
                FAIL(ld, CLF_E_FORMAT, "database %u declares %zu bytes", i, dbsize);
            db = vm_malloc(&p->opts.alloc, dbsize);
            if (!db) FAIL(ld, CLF_E_NOMEM, "out of memory for database %u (%zu bytes)", i, dbsize);
            rc = hs_deserialize_database_at(blob, (size_t)size, db);
            if (rc != HS_SUCCESS) {
                vm_free(&p->opts.alloc, db);
                db = NULL;
            } else {
                p->subjects[i].db_in_place = 1;
            }
        }
        if (rc == HS_DB_VERSION_ERROR || rc == HS_DB_PLATFORM_ERROR) {
            long bad;
            if ((st = vm_subject_build(p, i, &db, &bad, ld->err, ld->errlen)))
                return st;
        } else if (rc == HS_NOMEM) {
            FAIL(ld, CLF_E_NOMEM, "out of memory");
        } else if (rc != HS_SUCCESS) {
            FAIL(ld, CLF_E_FORMAT, "database %u is corrupt (Hyperscan error %d)", i, rc);
        }
        p->subjects[i].db = db;
    }
    return CLF_OK;
}



clf_status vm_load(const uint8_t *b, size_t len, const clf_options *o,
                   clf_program **out, char *err, size_t errlen)
{
    loader ld = {.err = err, .errlen = errlen};
    clf_status st;
    *out = NULL;
    if ((st = read_header(&ld, b, len, o))) return st;
    ld.prog = vm_calloc(&o->alloc, 1, sizeof *ld.prog);
    if (!ld.prog) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    ld.prog->opts = *o;
    if (!(st = copy_trusted(&ld, o)) && !(st = read_consts(&ld)) &&
        !(st = read_funcs(&ld)) && !(st = read_tables(&ld)) && !(st = read_ipsets(&ld)) && !(st = read_intsets(&ld)) &&
        !(st = read_slots(&ld)) &&
        !(st = read_captures(&ld)) && !(st = vm_verify(ld.prog, err, errlen)) &&
        !(st = copy_keys(&ld, o)) && !(st = read_matcher(&ld)) &&
        !(st = read_databases(&ld)) && !(st = read_rewrites(&ld))) {
        *out = ld.prog;
        return CLF_OK;
    }
    vm_program_free(ld.prog);
    return st;
}

/* Every function is looked at, called or not: a host that resolves for
 * a function the rules never run only asks DNS one question too many,
 * while one that skips a function they do run would leave the rules
 * "not known" for good. */
int vm_program_reads_rdns(const clf_program *p)
{
    for (uint32_t f = 0; f < p->nfuncs; f++)
        for (uint32_t i = 0; i < p->funcs[f].ninsns; i++) {
            const vm_insn *in = &p->funcs[f].code[i];
            if (in->op == OP_RDNSCHK || (in->op == OP_FIELD && in->b == VM_FIELD_RDNS)) return 1;
        }
    return 0;
}

void vm_program_free(clf_program *p)
{
    if (!p) return;
    vm_allocator a = p->opts.alloc;
    for (uint32_t f = 0; p->funcs && f < p->nfuncs; f++) {
        vm_free(&a, p->funcs[f].code);
        vm_free(&a, p->funcs[f].pos);
        vm_free(&a, p->funcs[f].regtypes);
    }
    for (uint32_t i = 0; p->subjects && i < p->nsubjects; i++) {
        if (p->subjects[i].db_in_place) vm_free(&a, p->subjects[i].db);
        else hs_free_database(p->subjects[i].db);
        vm_free(&a, p->subjects[i].test_of);
    }
    for (uint32_t i = 0; p->capts && i < p->ncapts; i++) vm_capture_free(p->capts[i].re);
    for (uint32_t i = 0; p->rewrites && i < p->nrewrites; i++) rw_set_free(p->rewrites[i].set);
    vm_free(&a, p->rewrites);
    vm_free(&a, p->capts);
    vm_free(&a, p->ipsets);
    vm_free(&a, p->intsets);
    vm_free(&a, p->slots);
    vm_free(&a, p->ints);
    vm_free(&a, p->ranges);
    vm_free(&a, p->trusted);
    if (p->keys) sg_keyring_clear(p->keys);
    vm_free(&a, p->keys);
    vm_free(&a, p->funcs);
    vm_free(&a, p->consts);
    vm_free(&a, p->strings);
    vm_free(&a, p->hdrs);
    vm_free(&a, p->hdr_index);
    vm_free(&a, p->subjects);
    vm_free(&a, p->patterns);
    vm_free(&a, p);
}
