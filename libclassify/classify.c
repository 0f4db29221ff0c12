/*
 * classify.c: the public API (classify.h) over the VM internals. This
 * file checks arguments and owns object lifetimes; the work happens in
 * vm/.
 */
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "classify.h"
#include "ctx.h"
#include "explain.h"
#include "explain_text.h"
#include "format.h"
#include "ipaddr.h"

CLF_API const char *clf_strerror(int status)
{
    switch (status) {
    case CLF_OK: return "success";
    case CLF_E_NOMEM: return "out of memory";
    case CLF_E_INVALID: return "invalid argument";
    case CLF_E_FORMAT: return "malformed rules file";
    case CLF_E_VERSION: return "unsupported rules-file version";
    case CLF_E_VERIFY: return "bytecode rejected by the verifier";
    case CLF_E_BACKEND: return "Hyperscan error";
    case CLF_E_LIMIT: return "limit exceeded";
    case CLF_E_STATE: return "invalid state";
    default: return "unknown status";
    }
}

CLF_API int clf_version_number(void) { return CLF_VERSION_NUMBER; }
CLF_API const char *clf_version_string(void) { return CLF_VERSION_STRING; }
CLF_API uint32_t clf_format_version(void) { return VM_FORMAT_VERSION; }

static const clf_options default_options = VM_DEFAULT_OPTIONS;

CLF_API clf_status clf_options_new(clf_options **out)
{
    if (!out) return CLF_E_INVALID;
    *out = malloc(sizeof **out);
    if (!*out) return CLF_E_NOMEM;
    **out = default_options;
    return CLF_OK;
}

CLF_API void clf_options_free(clf_options *opts)
{
    if (!opts) return;
    free(opts->trusted);
    free(opts);
}

static int is_list_sep(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

CLF_API clf_status clf_options_set_trusted_proxies(clf_options *opts, const char *list,
                                                   size_t len, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!opts || (!list && len)) {
        vm_errf(err, errlen, "NULL options or list");
        return CLF_E_INVALID;
    }
    size_t n = 0;
    for (size_t i = 0; i < len;) { /* count the entries */
        while (i < len && is_list_sep(list[i])) i++;
        if (i == len) break;
        n++;
        while (i < len && !is_list_sep(list[i])) i++;
    }
    vm_iprange *r = n ? malloc(n * sizeof *r) : NULL;
    if (n && !r) {
        vm_errf(err, errlen, "out of memory");
        return CLF_E_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && is_list_sep(list[i])) i++;
        if (i == len) break;
        size_t start = i;
        while (i < len && !is_list_sep(list[i])) i++;
        if (!vm_iprange_parse(list + start, i - start, &r[k])) {
            vm_errf(err, errlen, "trusted proxy '%.*s' is not an IP address or CIDR prefix",
                    (int)(i - start > 64 ? 64 : i - start), list + start);
            free(r);
            return CLF_E_INVALID;
        }
        k++;
    }
    free(opts->trusted);
    opts->trusted = r;
    opts->ntrusted = vm_iprange_normalize(r, k);
    return CLF_OK;
}

uint64_t *vm_limit_field(clf_options *o, clf_limit which)
{
    switch (which) {
    case CLF_LIMIT_FILE_BYTES: return &o->file_bytes;
    case CLF_LIMIT_HEADERS: return &o->headers;
    case CLF_LIMIT_WORKSPACE_BYTES: return &o->workspace_bytes;
    case CLF_LIMIT_HEADER_VALUE_BYTES: return &o->header_value_bytes;
    case CLF_LIMIT_HEADER_BYTES: return &o->header_bytes;
    case CLF_LIMIT_PATTERNS: return &o->patterns;
    case CLF_LIMIT_REGISTERS: return &o->registers;
    default: return NULL;
    }
}

CLF_API clf_status clf_options_set_limit(clf_options *opts, clf_limit which,
                                         uint64_t value)
{
    uint64_t *field = opts ? vm_limit_field(opts, which) : NULL;
    if (!field || value == 0) return CLF_E_INVALID;
    /* Ceilings: what the context's arrays and the format can hold. */
    uint64_t ceiling = UINT64_MAX;
    switch (which) {
    case CLF_LIMIT_HEADERS:
    case CLF_LIMIT_HEADER_VALUE_BYTES:
    case CLF_LIMIT_HEADER_BYTES: ceiling = UINT32_MAX; break;
    case CLF_LIMIT_WORKSPACE_BYTES: ceiling = SIZE_MAX / 2; break;
    case CLF_LIMIT_REGISTERS: ceiling = 65536; break;
    default: break;
    }
    if (value > ceiling) return CLF_E_INVALID;
    *field = value;
    return CLF_OK;
}

CLF_API clf_status clf_options_set_allocator(clf_options *opts, clf_alloc_fn alloc,
                                             clf_free_fn free_fn, void *ud)
{
    if (!opts || !alloc != !free_fn) return CLF_E_INVALID;
    opts->alloc.alloc = alloc;
    opts->alloc.free = free_fn;
    opts->alloc.ud = ud;
    return CLF_OK;
}

CLF_API clf_status clf_program_load(const void *bytes, size_t len,
                                    const clf_options *opts, clf_program **out,
                                    char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!out) {
        vm_errf(err, errlen, "no place to store the program");
        return CLF_E_INVALID;
    }
    *out = NULL;
    if (!bytes && len) {
        vm_errf(err, errlen, "no bytes given");
        return CLF_E_INVALID;
    }
    return vm_load(bytes ? bytes : "", len, opts ? opts : &default_options, out,
                   err, errlen);
}

CLF_API void clf_program_free(clf_program *prog) { vm_program_free(prog); }

CLF_API uint64_t clf_program_limit(const clf_program *prog, clf_limit which)
{
    if (!prog) return 0;
    clf_options o = prog->opts;
    const uint64_t *field = vm_limit_field(&o, which);
    return field ? *field : 0;
}

CLF_API const char *clf_ctx_errmsg(const clf_ctx *ctx)
{
    return ctx ? ctx->errmsg : "no context";
}

CLF_API clf_status clf_program_disassemble(const clf_program *prog,
                                           clf_write_fn write, void *ud)
{
    if (!prog || !write) return CLF_E_INVALID;
    vm_disassemble(prog, write, NULL, ud);
    return CLF_OK;
}

CLF_API clf_status clf_ctx_new(const clf_program *prog, clf_ctx **out,
                               char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!out || !prog) {
        vm_errf(err, errlen, "NULL program or output");
        return CLF_E_INVALID;
    }
    *out = NULL;
    const vm_allocator *al = &prog->opts.alloc;
    clf_ctx *c = vm_calloc(al, 1, sizeof *c);
    if (!c) goto nomem_freed;
    c->prog = prog;
    c->regs = vm_calloc(al, prog->stack_regs, sizeof *c->regs);
    c->frames = vm_calloc(al, prog->max_depth, sizeof *c->frames);
    if (prog->ncapts && vm_capture_scratch_new(prog->maxgroups, al, &c->capture) != CLF_OK)
        goto nomem;
    c->bits = vm_calloc(al, (prog->nbits + 63) / 64 + 1, 8);
    c->done = vm_calloc(al, (prog->nsubjects + 63) / 64 + 1, 8);
    /* 4 bytes per pattern test, so that explaining needs no allocation. */
    c->first_match = vm_calloc(al, (size_t)prog->nbits + 1, sizeof *c->first_match);
    c->slots = vm_calloc(al, prog->nhdrs, sizeof *c->slots);
    c->entries = vm_calloc(al, (size_t)prog->opts.headers, sizeof *c->entries);
    c->ws_cap = (size_t)prog->opts.workspace_bytes;
    c->ws = vm_malloc(al, c->ws_cap);
    if (!c->regs || !c->frames || !c->bits || !c->done || !c->first_match || !c->slots ||
        !c->entries || !c->ws)
        goto nomem;
    for (uint32_t i = 0; i < prog->nsubjects; i++) {
        hs_error_t rc = hs_alloc_scratch(prog->subjects[i].db, &c->scratch);
        if (rc != HS_SUCCESS) {
            clf_ctx_free(c);
            if (rc == HS_NOMEM) goto nomem_freed;
            vm_errf(err, errlen, "cannot allocate Hyperscan scratch (error %d)", rc);
            return CLF_E_BACKEND;
        }
    }
    clf_ctx_reset(c);
    *out = c;
    return CLF_OK;
nomem:
    clf_ctx_free(c);
nomem_freed:
    vm_errf(err, errlen, "out of memory");
    return CLF_E_NOMEM;
}

CLF_API void clf_ctx_free(clf_ctx *ctx)
{
    if (!ctx) return;
    const vm_allocator *al = &ctx->prog->opts.alloc;
    hs_free_scratch(ctx->scratch);
    vm_capture_scratch_free(ctx->capture);
    vm_free(al, ctx->frames);
    vm_free(al, ctx->regs);
    vm_free(al, ctx->bits);
    vm_free(al, ctx->done);
    vm_free(al, ctx->first_match);
    vm_free(al, ctx->slots);
    vm_free(al, ctx->entries);
    vm_free(al, ctx->ws);
    vm_free(al, ctx);
}

CLF_API void clf_ctx_reset(clf_ctx *ctx)
{
    if (!ctx) return;
    for (int i = 0; i < VM_FIELD_COUNT; i++) {
        ctx->field[i].s.p = "";
        ctx->field[i].s.n = 0;
    }
    if (ctx->prog->nhdrs) memset(ctx->slots, 0, ctx->prog->nhdrs * sizeof *ctx->slots);
    ctx->nentries = 0;
    ctx->nheaders = 0;
    ctx->header_bytes = 0;
    ctx->ws_used = 0;
    ctx->peer_valid = 0;
    ctx->client_state = 0;
    ctx->errmsg[0] = 0;
}

CLF_API clf_status clf_ctx_set_peer(clf_ctx *ctx, const char *addr, size_t len)
{
    if (!ctx || (!addr && len)) return CLF_E_INVALID;
    ctx->client_state = 0;
    ctx->peer_valid = vm_ip_parse(addr ? addr : "", len, ctx->peer);
    return ctx->peer_valid ? CLF_OK : CLF_E_INVALID;
}

static clf_status set_field(clf_ctx *ctx, int f, const char *p, size_t n)
{
    if (!ctx || (!p && n)) return CLF_E_INVALID;
    ctx->field[f].s.p = p ? p : "";
    ctx->field[f].s.n = n;
    return CLF_OK;
}

CLF_API clf_status clf_ctx_set_method(clf_ctx *ctx, const char *p, size_t n)
{
    return set_field(ctx, VM_FIELD_METHOD, p, n);
}

CLF_API clf_status clf_ctx_set_path(clf_ctx *ctx, const char *p, size_t n)
{
    return set_field(ctx, VM_FIELD_PATH, p, n);
}

CLF_API clf_status clf_ctx_set_query(clf_ctx *ctx, const char *p, size_t n)
{
    return set_field(ctx, VM_FIELD_QUERY, p, n);
}

static int name_eq(const char *a, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)a[i];
        if (c >= 'A' && c <= 'Z') c += 32;
        if (c != (unsigned char)lower[i]) return 0;
    }
    return 1;
}

CLF_API clf_status clf_ctx_add_header(clf_ctx *ctx, const char *name,
                                      size_t name_len, const char *value,
                                      size_t value_len)
{
    if (!ctx || (!name && name_len) || (!value && value_len)) return CLF_E_INVALID;
    const clf_program *p = ctx->prog;
    const clf_options *lim = &p->opts;
    if (ctx->nheaders >= lim->headers) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "the request has more than %llu headers (CLF_LIMIT_HEADERS)",
                (unsigned long long)lim->headers);
        return CLF_E_LIMIT;
    }
    if (value_len > lim->header_value_bytes) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "the value of header '%.*s' is %zu bytes, over the limit of %llu "
                "(CLF_LIMIT_HEADER_VALUE_BYTES)", (int)(name_len > 64 ? 64 : name_len),
                name ? name : "", value_len, (unsigned long long)lim->header_value_bytes);
        return CLF_E_LIMIT;
    }
    /* header_bytes never passes the limit, so `left` cannot underflow;
     * comparing the two lengths one at a time cannot overflow. */
    uint64_t left = lim->header_bytes - ctx->header_bytes;
    if (name_len > left || value_len > left - name_len) {
        vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                "the request's headers pass %llu bytes (CLF_LIMIT_HEADER_BYTES)",
                (unsigned long long)lim->header_bytes);
        return CLF_E_LIMIT;
    }
    ctx->errmsg[0] = 0;
    ctx->nheaders++;
    ctx->header_bytes += name_len + value_len;
    if (!p->nhdrs) return CLF_OK;
    uint32_t h = UINT32_MAX;
    if (p->hdr_index) {
        for (uint32_t at = vm_hdr_hash(name, name_len) & p->hdr_mask; p->hdr_index[at];
             at = (at + 1) & p->hdr_mask) {
            uint32_t i = p->hdr_index[at] - 1;
            const vm_const *k = &p->consts[p->hdrs[i]];
            if (k->len == name_len && name_eq(name, k->str, name_len)) {
                h = i;
                break;
            }
        }
    } else {
        for (uint32_t i = 0; i < p->nhdrs && h == UINT32_MAX; i++) {
            const vm_const *k = &p->consts[p->hdrs[i]];
            if (k->len == name_len && name_eq(name, k->str, name_len)) h = i;
        }
    }
    if (h == UINT32_MAX) return CLF_OK; /* a header the program does not inspect */
    vm_hslot *s = &ctx->slots[h];
    if (s->count++ == 0) {
        s->p = value ? value : "";
        s->n = value_len;
    }
    vm_hentry *e = &ctx->entries[ctx->nentries++];
    e->slot = h;
    e->p = value ? value : "";
    e->n = value_len;
    return CLF_OK;
}

CLF_API clf_status clf_program_find_filter(const clf_program *prog, const char *name,
                                           size_t name_len, uint32_t *filter,
                                           char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!prog || !filter || (!name && name_len)) {
        vm_errf(err, errlen, "invalid argument");
        return CLF_E_INVALID;
    }
    /* A rules file may hold a name twice: the first entry wins. */
    uint32_t root = UINT32_MAX;
    for (uint32_t f = 0; f < prog->nfuncs; f++) {
        const vm_func *F = &prog->funcs[f];
        const vm_const *k = &prog->consts[F->name];
        if (F->kind != VM_FUNC_FILTER || k->len != name_len ||
            (name_len && memcmp(k->str, name, name_len) != 0))
            continue;
        if (F->flags & VM_FUNC_ENTRY) {
            *filter = f;
            return CLF_OK;
        }
        if ((F->flags & VM_FUNC_ROOT) && root == UINT32_MAX) root = f;
    }
    /* Names come from the caller and from the file: escaped (vm_text_name). */
    char msg[CLF_ERRMSG_SIZE];
    vm_text t;
    vm_text_init(&t, msg, sizeof msg);
    if (root != UINT32_MAX) {
        vm_text_str(&t, "filter '");
        vm_text_name(&t, name, name_len);
        vm_text_str(&t, "' can end without a verdict (it may pass, or reach its end): only a "
                        "filter that accepts or rejects on every path can decide a request");
    } else {
        vm_text_str(&t, "no filter '");
        vm_text_name(&t, name, name_len);
        vm_text_str(&t, "' in the file the rules were compiled from (entry filters: ");
        const char *sep = "";
        for (uint32_t f = 0; f < prog->nfuncs; f++)
            if (prog->funcs[f].flags & VM_FUNC_ENTRY) {
                const vm_const *k = &prog->consts[prog->funcs[f].name];
                vm_text_str(&t, sep);
                vm_text_name(&t, k->str, k->len);
                sep = ", ";
            }
        vm_text_str(&t, ")");
    }
    vm_text_done(&t);
    vm_errf(err, errlen, "%s", msg);
    return CLF_E_INVALID;
}

/* Whether `filter` may be run for a verdict: the verifier checked every
 * entry (a filter that never passes), and only those. */
static clf_status check_entry(clf_ctx *ctx, uint32_t filter)
{
    if (filter < ctx->prog->nfuncs && (ctx->prog->funcs[filter].flags & VM_FUNC_ENTRY))
        return CLF_OK;
    vm_errf(ctx->errmsg, sizeof ctx->errmsg, "filter %u is not an entry filter of the program",
            filter);
    return CLF_E_INVALID;
}

CLF_API clf_status clf_eval_filter(clf_ctx *ctx, uint32_t filter, clf_verdict *out)
{
    if (!ctx || !out) return CLF_E_INVALID;
    clf_verdict v;
    vm_outcome how;
    ctx->errmsg[0] = 0;
    clf_status st = check_entry(ctx, filter);
    if (st == CLF_OK) st = vm_run(ctx, filter, &v, &how);
    if (st == CLF_OK) *out = v; /* the verifier keeps pass out of entries */
    return st;
}

CLF_API clf_status clf_eval(clf_ctx *ctx, clf_verdict *out)
{
    if (!ctx) return CLF_E_INVALID;
    return clf_eval_filter(ctx, ctx->prog->entry, out);
}

CLF_API clf_status clf_eval_filter_explain(clf_ctx *ctx, uint32_t filter, clf_verdict *out,
                                           clf_explain_fn fn, void *ud)
{
    if (!ctx || !out || !fn) return CLF_E_INVALID;
    clf_verdict v;
    vm_outcome how;
    ctx->errmsg[0] = 0;
    clf_status st = check_entry(ctx, filter);
    if (st == CLF_OK) st = vm_explain(ctx, filter, &v, &how, fn, ud);
    if (st == CLF_OK) *out = v;
    return st;
}

CLF_API clf_status clf_eval_explain(clf_ctx *ctx, clf_verdict *out, clf_explain_fn fn, void *ud)
{
    if (!ctx) return CLF_E_INVALID;
    return clf_eval_filter_explain(ctx, ctx->prog->entry, out, fn, ud);
}
