/*
 * options.c: what a clf_options object holds: the limits with their
 * defaults and ceilings, the host allocator, the trusted proxies, the IP
 * databases.
 */
#include "program.h"

const clf_options vm_default_options = {
    CLF_DEFAULT_FILE_BYTES, CLF_DEFAULT_HEADERS, CLF_DEFAULT_WORKSPACE_BYTES,
    CLF_DEFAULT_HEADER_VALUE_BYTES, CLF_DEFAULT_HEADER_BYTES, CLF_DEFAULT_PATTERNS,
    CLF_DEFAULT_REGISTERS, {NULL, NULL, NULL}, NULL, 0, {NULL}, 0, NULL,
    CLF_DEFAULT_SIGNATURE_SKEW};

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

uint64_t vm_limit_ceiling(clf_limit which)
{
    switch (which) {
    /* The context counts headers and their bytes in 32 bits. */
    case CLF_LIMIT_HEADERS:
    case CLF_LIMIT_HEADER_VALUE_BYTES:
    case CLF_LIMIT_HEADER_BYTES: return UINT32_MAX;
    case CLF_LIMIT_WORKSPACE_BYTES: return SIZE_MAX / 2;
    /* Register operands are 16 bits. */
    case CLF_LIMIT_REGISTERS: return CLF_DEFAULT_REGISTERS;
    default: return UINT64_MAX;
    }
}

static int is_list_sep(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

clf_status vm_options_set_trusted(clf_options *o, const char *list, size_t len, char *err,
                                  size_t errlen)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) { /* count the entries */
        while (i < len && is_list_sep(list[i])) i++;
        if (i == len) break;
        n++;
        while (i < len && !is_list_sep(list[i])) i++;
    }
    /* The options object itself is malloc'd (classify.h), and so is this. */
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
    free(o->trusted);
    o->trusted = r;
    o->ntrusted = vm_iprange_normalize(r, k);
    return CLF_OK;
}
