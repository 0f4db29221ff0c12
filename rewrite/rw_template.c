/*
 * rw_template.c: replacement templates (docs/rewrite.md, "Templates").
 *
 * SRW and sub_filter modes: `$0`..`$9` (one digit), `${N}` (any number of
 * digits), `$$` for a dollar; any other `$` is an error, and so is a group
 * the pattern does not have.
 *
 * replace_filter mode follows replace-filter's script compiler
 * (src/ngx_http_replace_script.c): `$&` and `${&}` for the whole match,
 * `$N` with every digit that follows (`$12` is group 12), `${N}`, `$$`.
 * A group the regex does not have expands to nothing, as there. `$0` is
 * accepted as the whole match (replace-filter would take it for an nginx
 * variable named "0" and refuse the configuration); nginx variables
 * (`$host`) are refused: the engine has none.
 */
#include <string.h>

#include "rw_set.h"

#define MAX_GROUP_NUMBER 65535u

static int is_word_start(uint8_t c)
{
    return c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static int push(rw_op **ops, uint32_t *nops, uint32_t *cap, const vm_allocator *al,
                uint32_t first, uint32_t kind, uint32_t a, uint32_t b)
{
    if (kind == RW_OP_LIT && b == 0) return 0;
    /* merge adjacent literal pieces of this template ($$ between text) */
    if (kind == RW_OP_LIT && *nops > first) {
        rw_op *l = &(*ops)[*nops - 1];
        if (l->kind == RW_OP_LIT && l->a + l->b == a) {
            l->b += b;
            return 0;
        }
    }
    if (*nops == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 16;
        rw_op *n = vm_calloc(al, nc, sizeof *n);
        if (!n) return -1;
        if (*nops) memcpy(n, *ops, *nops * sizeof *n);
        vm_free(al, *ops);
        *ops = n;
        *cap = nc;
    }
    (*ops)[(*nops)++] = (rw_op){kind, a, b};
    return 0;
}

uint32_t rw_template_parse(rw_mode mode, rw_rule *r, rw_op **ops, uint32_t *nops,
                           uint32_t *cap, const vm_allocator *al, rw_dctx *c)
{
    uint32_t before = c->errors;
    const uint8_t *t = r->tpl;
    uint32_t n = r->tpl_len;
    int rf = mode == RW_MODE_REPLACE_FILTER;
    r->op_first = *nops;
    r->uses_groups = r->uses_match = 0;
    uint32_t i = 0, lit = 0;
    while (i < n) {
        if (t[i] != '$') {
            i++;
            continue;
        }
        if (push(ops, nops, cap, al, r->op_first, RW_OP_LIT, lit, i - lit)) goto nomem;
        uint32_t at = i;
        if (i + 1 >= n) {
            rw_diag_add(c, RW_D_TEMPLATE, at, "a lone $ at the end (write $$ for a dollar sign)");
            lit = i = n;
            break;
        }
        uint8_t d = t[i + 1];
        if (d == '$') {
            /* the second $ starts the next literal piece */
            lit = i + 1;
            i += 2;
            continue;
        }
        uint64_t g = 0;
        int ok = 0, whole = 0;
        if (d == '{') {
            uint32_t j = i + 2;
            if (rf && j < n && t[j] == '&') {
                whole = 1;
                j++;
            } else {
                uint32_t k = j;
                while (j < n && t[j] >= '0' && t[j] <= '9') {
                    if (g <= MAX_GROUP_NUMBER) g = g * 10 + (t[j] - '0');
                    j++;
                }
                if (j == k) {
                    uint32_t e = j;
                    while (e < n && t[e] != '}') e++;
                    if (rf && e < n)
                        rw_diag_add(c, RW_D_TEMPLATE, at,
                                    "nginx variables (${%.*s}) are not supported", (int)(e - k),
                                    (const char *)t + k);
                    else
                        rw_diag_add(c, RW_D_TEMPLATE, at,
                                    "${ must be followed by a group number and }");
                    lit = i = e < n ? e + 1 : n;
                    continue;
                }
            }
            if (j >= n || t[j] != '}') {
                rw_diag_add(c, RW_D_TEMPLATE, at, "${ without a closing }");
                lit = i = n;
                break;
            }
            ok = 1;
            i = j + 1;
        } else if (rf && d == '&') {
            whole = ok = 1;
            i += 2;
        } else if (d >= '0' && d <= '9') {
            uint32_t j = i + 1;
            if (rf && d != '0') {
                while (j < n && t[j] >= '0' && t[j] <= '9') {
                    if (g <= MAX_GROUP_NUMBER) g = g * 10 + (t[j] - '0');
                    j++;
                }
            } else {
                g = (uint64_t)(d - '0');
                j++;
            }
            ok = 1;
            i = j;
        } else {
            if (rf && is_word_start(d)) {
                uint32_t e = i + 1;
                while (e < n && (is_word_start(t[e]) || (t[e] >= '0' && t[e] <= '9'))) e++;
                rw_diag_add(c, RW_D_TEMPLATE, at, "nginx variables ($%.*s) are not supported",
                            (int)(e - i - 1), (const char *)t + i + 1);
                lit = i = e;
                continue;
            }
            rw_diag_add(c, RW_D_TEMPLATE, at,
                        rf ? "$ must be followed by &, a group number, { or $"
                           : "$ must be followed by a digit, { or $ (write $$ for a dollar sign)");
            lit = i = i + 2 <= n ? i + 2 : n;
            continue;
        }
        (void)ok;
        if (whole) g = 0;
        if (g > r->ngroups && !rf) {
            rw_diag_add(c, RW_D_NO_SUCH_GROUP, at,
                        r->kind == RW_LITERAL
                            ? "$%llu: a literal has no groups (only $0, the match itself)"
                            : "$%llu: the pattern has %u capturing group%s",
                        (unsigned long long)g, r->ngroups, r->ngroups == 1 ? "" : "s");
        } else if (g <= MAX_GROUP_NUMBER) {
            if (g == 0) r->uses_match = 1;
            else if (g <= r->ngroups) r->uses_groups = 1;
            /* rf: a group the regex lacks expands to nothing; kept as an
             * op so that the expansion (and replace-filter's choice of
             * parser, which counts it) sees it */
            if (g > r->ngroups) r->uses_match = 1;
            if (push(ops, nops, cap, al, r->op_first, RW_OP_GROUP, (uint32_t)g, 0)) goto nomem;
        } else {
            r->uses_match = 1; /* rf: beyond any regex: empty */
            if (push(ops, nops, cap, al, r->op_first, RW_OP_GROUP, MAX_GROUP_NUMBER + 1, 0)) goto nomem;
        }
        lit = i;
    }
    if (push(ops, nops, cap, al, r->op_first, RW_OP_LIT, lit, n - lit)) goto nomem;
    r->nops = *nops - r->op_first;
    return c->errors - before;
nomem:
    c->nomem = 1;
    return c->errors - before + 1;
}
