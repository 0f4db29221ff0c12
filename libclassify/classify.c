/*
 * classify.c: the public API (classify.h) over the VM internals. This
 * file only checks arguments and owns object lifetimes: loading is
 * vm/load.c, options vm/options.c, contexts and the request hand-over
 * vm/ctx.c, running vm/interp.c and vm/explain.c.
 */
#include <stdlib.h>

#include "classify.h"
#include "ctx.h"
#include "explain.h"
#include "explain_text.h"
#include "format.h"

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
    case CLF_E_IO: return "cannot open or read a file";
    case CLF_E_SINK: return "the output sink asked to stop";
    default: return "unknown status";
    }
}

CLF_API int clf_version_number(void) { return CLF_VERSION_NUMBER; }
CLF_API const char *clf_version_string(void) { return CLF_VERSION_STRING; }
CLF_API uint32_t clf_format_version(void) { return VM_FORMAT_VERSION; }
CLF_API const char *clf_matcher_name(void) { return vm_matcher_name(vm_matcher_this().lib); }
CLF_API const char *clf_matcher_version(void) { return vm_matcher_version_text(); }

CLF_API clf_status clf_options_new(clf_options **out)
{
    if (!out) return CLF_E_INVALID;
    *out = malloc(sizeof **out);
    if (!*out) return CLF_E_NOMEM;
    **out = vm_default_options;
    return CLF_OK;
}

CLF_API void clf_options_free(clf_options *opts)
{
    if (!opts) return;
    free(opts->trusted);
    free(opts);
}

CLF_API clf_status clf_options_set_trusted_proxies(clf_options *opts, const char *list,
                                                   size_t len, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!opts || (!list && len)) {
        vm_errf(err, errlen, "NULL options or list");
        return CLF_E_INVALID;
    }
    return vm_options_set_trusted(opts, list ? list : "", len, err, errlen);
}

CLF_API clf_status clf_options_add_ipdb(clf_options *opts, const clf_ipdb *db)
{
    if (!opts || !db) return CLF_E_INVALID;
    if (opts->nipdbs == VM_MAX_IPDBS) return CLF_E_LIMIT;
    opts->ipdbs[opts->nipdbs++] = db;
    return CLF_OK;
}

CLF_API clf_status clf_options_set_limit(clf_options *opts, clf_limit which,
                                         uint64_t value)
{
    uint64_t *field = opts ? vm_limit_field(opts, which) : NULL;
    if (!field || value == 0) return CLF_E_INVALID;
    if (value > vm_limit_ceiling(which)) return CLF_E_INVALID;
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
    return vm_load(bytes ? bytes : "", len, opts ? opts : &vm_default_options, out,
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

CLF_API int clf_program_reads_rdns(const clf_program *prog)
{
    return prog ? vm_program_reads_rdns(prog) : 0;
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
    return vm_ctx_new(prog, out, err, errlen);
}

CLF_API void clf_ctx_free(clf_ctx *ctx)
{
    vm_ctx_free(ctx);
}

CLF_API void clf_ctx_reset(clf_ctx *ctx)
{
    if (ctx) vm_ctx_reset(ctx);
}

CLF_API clf_status clf_ctx_set_peer(clf_ctx *ctx, const char *addr, size_t len)
{
    if (!ctx || (!addr && len)) return CLF_E_INVALID;
    return vm_ctx_set_peer(ctx, addr ? addr : "", len);
}

CLF_API clf_status clf_ctx_client_ip(clf_ctx *ctx, uint8_t out[16], int *valid)
{
    if (!ctx || !out || !valid) return CLF_E_INVALID;
    return vm_ctx_client_ip(ctx, out, valid);
}

CLF_API clf_status clf_ctx_set_rdns(clf_ctx *ctx, const char *name, size_t len)
{
    if (!ctx || (!name && len)) return CLF_E_INVALID;
    return vm_ctx_set_rdns(ctx, name, len);
}

CLF_API clf_status clf_ctx_set_time(clf_ctx *ctx, int64_t seconds)
{
    if (!ctx) return CLF_E_INVALID;
    ctx->time = seconds;
    /* In milliseconds for the state calls, saturated so that any second a
     * host passes (INT64_MIN included: tests/regress/fuzz_sig_time_min.txt)
     * has a value; the store clamps times far inside this range anyway. */
    ctx->time_ms = seconds > INT64_MAX / 1000   ? INT64_MAX
                   : seconds < INT64_MIN / 1000 ? INT64_MIN
                                                : seconds * 1000;
    ctx->time_set = 1;
    return CLF_OK;
}

CLF_API clf_status clf_ctx_set_scheme(clf_ctx *ctx, const char *scheme, size_t len)
{
    if (!ctx || (!scheme && len)) return CLF_E_INVALID;
    ctx->scheme = scheme ? scheme : "";
    ctx->scheme_len = len;
    return CLF_OK;
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

CLF_API clf_status clf_ctx_add_header(clf_ctx *ctx, const char *name,
                                      size_t name_len, const char *value,
                                      size_t value_len)
{
    if (!ctx || (!name && name_len) || (!value && value_len)) return CLF_E_INVALID;
    return vm_ctx_add_header(ctx, name, name_len, value, value_len);
}

CLF_API clf_status clf_ctx_set_request(clf_ctx *ctx, const char *method, size_t method_len,
                                       const char *path, size_t path_len, const char *query,
                                       size_t query_len, const clf_header *headers,
                                       size_t nheaders)
{
    if (!ctx || (!method && method_len) || (!path && path_len) || (!query && query_len) ||
        (!headers && nheaders))
        return CLF_E_INVALID;
    vm_ctx_reset(ctx);
    ctx->field[VM_FIELD_METHOD].s.p = method ? method : "";
    ctx->field[VM_FIELD_METHOD].s.n = method_len;
    ctx->field[VM_FIELD_PATH].s.p = path ? path : "";
    ctx->field[VM_FIELD_PATH].s.n = path_len;
    ctx->field[VM_FIELD_QUERY].s.p = query ? query : "";
    ctx->field[VM_FIELD_QUERY].s.n = query_len;
    const clf_program *p = ctx->prog;
    size_t i = 0;
    if (!ctx->lines) {
        /* vm_ctx_add_header's work with the counts in registers (its
         * stores to the context would make the compiler reload them per
         * header): the limits, and the slot of each header the program
         * inspects. A header over a limit falls through to
         * vm_ctx_add_header, for its message. No signature rules here:
         * those keep every header line (ctx->lines). */
        const uint64_t max_n = p->opts.headers, max_v = p->opts.header_value_bytes,
                       max_b = p->opts.header_bytes;
        const uint32_t nhdrs = p->nhdrs;
        vm_hslot *slots = ctx->slots;
        vm_hentry *entries = ctx->entries;
        uint32_t nentries = 0; /* vm_ctx_reset emptied them */
        uint64_t bytes = 0;
        for (; i < nheaders; i++) {
            const clf_header *h = &headers[i];
            if ((!h->name && h->name_len) || (!h->value && h->value_len) || i >= max_n ||
                h->value_len > max_v || h->name_len > max_b - bytes ||
                h->value_len > max_b - bytes - h->name_len)
                break;
            bytes += h->name_len + h->value_len;
            uint32_t k = nhdrs ? vm_hdr_slot(p, h->name, h->name_len) : UINT32_MAX;
            if (k == UINT32_MAX) continue;
            const char *v = h->value ? h->value : "";
            if (slots[k].count++ == 0) {
                slots[k].p = v;
                slots[k].n = h->value_len;
            }
            entries[nentries++] = (vm_hentry){k, v, h->value_len}; /* i < max_n bounds it */
        }
        ctx->nheaders = i;
        ctx->header_bytes = bytes;
        ctx->nentries = nentries;
        if (i == nheaders) return CLF_OK;
    }
    /* vm_ctx_add_header is inline: the loop is the one call's only cost */
    for (; i < nheaders; i++) {
        const clf_header *h = &headers[i];
        clf_status st;
        if ((!h->name && h->name_len) || (!h->value && h->value_len)) {
            vm_errf(ctx->errmsg, sizeof ctx->errmsg,
                    "header %zu: a NULL name or value with a nonzero length", i);
            return CLF_E_INVALID;
        }
        if ((st = vm_ctx_add_header(ctx, h->name, h->name_len, h->value, h->value_len)) != CLF_OK) {
            char why[sizeof ctx->errmsg];
            memcpy(why, ctx->errmsg, sizeof why);
            vm_errf(ctx->errmsg, sizeof ctx->errmsg, "header %zu: %s", i, why);
            return st;
        }
    }
    return CLF_OK;
}

static int has_entry_filter(const clf_program *prog)
{
    for (uint32_t f = 0; f < prog->nfuncs; f++)
        if (prog->funcs[f].flags & VM_FUNC_ENTRY) return 1;
    return 0;
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
    } else if (!has_entry_filter(prog)) {
        /* A file of rewrite sets only (docs/language.md, Rewrite sets). */
        vm_text_str(&t, "no filter '");
        vm_text_name(&t, name, name_len);
        vm_text_str(&t, prog->nrewrites ? "': the rules file has no entry filters, only rewrite sets"
                                        : "': the rules file has no entry filters");
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

/* clf_eval and clf_eval_filter, once their arguments are checked. */
static inline clf_status eval(clf_ctx *ctx, uint32_t filter, clf_verdict *out)
{
    clf_verdict v;
    vm_outcome how;
    ctx->errmsg[0] = 0;
    clf_status st = vm_run(ctx, filter, &v, &how);
    if (st == CLF_OK) *out = v; /* the verifier keeps pass out of entries */
    return st;
}

CLF_API clf_status clf_eval_filter(clf_ctx *ctx, uint32_t filter, clf_verdict *out)
{
    if (!ctx || !out) return CLF_E_INVALID;
    clf_status st = check_entry(ctx, filter);
    return st == CLF_OK ? eval(ctx, filter, out) : st;
}

/* A file of rewrite sets alone has no main (VM_NO_ENTRY). */
static clf_status no_main(clf_ctx *ctx)
{
    vm_errf(ctx->errmsg, sizeof ctx->errmsg,
            "the rules file has no main filter (it was compiled from rewrite sets)");
    return CLF_E_STATE;
}

CLF_API clf_status clf_eval(clf_ctx *ctx, clf_verdict *out)
{
    if (!ctx || !out) return CLF_E_INVALID;
    if (ctx->prog->entry == VM_NO_ENTRY) return no_main(ctx);
    return eval(ctx, ctx->prog->entry, out); /* the loader checked that main is an entry */
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
    if (ctx->prog->entry == VM_NO_ENTRY && out && fn) return no_main(ctx);
    return clf_eval_filter_explain(ctx, ctx->prog->entry, out, fn, ud);
}
