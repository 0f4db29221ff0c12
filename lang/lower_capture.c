/*
 * lower_capture.c: captures (cg.h, cg_capture). `s.capture(re, group)`
 * is proven by a Hyperscan test; PCRE2 extracts the group at run time
 * (vm/capture.c). Here PCRE2 compiles the regex once, so that a regex it
 * refuses, or a group it does not have, is a compile error, and named
 * groups become numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "cg.h"

/* Whether a regex repeats, without bound, a group that itself repeats or
 * alternates: (a+)+, (?:x|y)*, (?:[^;]+; ?)+. On a long value such a
 * regex can exhaust the capture budget (vm/capture.h), and the capture
 * is then "": a client could pad its header to get there. A heuristic on
 * the text: it skips escapes and character classes and reports the
 * offset of the repeated group's ')' in *at. */
static int repeats_a_repeating_group(const char *re, uint32_t n, uint32_t *at)
{
    enum { MAXD = 64 };
    int inner[MAXD] = {0}; /* per open group: it repeats or alternates */
    int depth = 0;
    for (uint32_t i = 0; i < n; i++) {
        char c = re[i];
        if (c == '\\') {
            i++;
            continue;
        }
        if (c == '[') { /* a class: to its closing ']' */
            i++;
            if (i < n && re[i] == '^') i++;
            if (i < n && re[i] == ']') i++;
            while (i < n && re[i] != ']') i += re[i] == '\\' ? 2 : 1;
            continue;
        }
        if (c == '(') {
            if (depth < MAXD) inner[depth] = 0;
            depth++;
        } else if (c == ')' && depth > 0) {
            depth--;
            int busy = depth < MAXD && inner[depth];
            char q = i + 1 < n ? re[i + 1] : 0;
            int unbounded = q == '*' || q == '+';
            if (q == '{') { /* {n,} is unbounded; {n} and {n,m} are not */
                uint32_t k = i + 2;
                while (k < n && re[k] >= '0' && re[k] <= '9') k++;
                unbounded = k + 1 < n && re[k] == ',' && re[k + 1] == '}';
            }
            if (busy && unbounded) {
                *at = i;
                return 1;
            }
            /* A repeated group makes its enclosing group repeat, too. */
            if (depth > 0 && depth - 1 < MAXD && (busy || q == '*' || q == '+' || q == '{' || q == '?'))
                inner[depth - 1] = 1;
        } else if ((c == '*' || c == '+' || c == '{' || c == '|') && depth > 0 && depth - 1 < MAXD) {
            inner[depth - 1] = 1;
        }
    }
    return 0;
}

/* A capture of `re`'s group `grp` proven by test t of subject s. The
 * regex is compiled with PCRE2 here too, so that a regex PCRE2 refuses,
 * or a group it does not have, is a compile error, and named groups
 * become numbers. Returns the capture index, or -1 (reported). */
long cg_capture(cg *g, uint32_t s, uint32_t t, const ast *re, const ast *grp)
{
    vm_capture *pc;
    char msg[256];
    /* Only to check the regex and count its groups: no JIT needed. */
    clf_status st = vm_capture_new(re->str, re->slen, cg_hs_flags(re) | VM_CAPTURE_NO_JIT, NULL,
                                   &pc, msg, sizeof msg);
    if (st) {
        if (st == CLF_E_NOMEM) g->failed = 1;
        else {
            /* The message ends in "at offset N" (capture.h): the caret
             * goes there, as for Hyperscan's errors. */
            uint32_t off = re->off;
            const char *at = strstr(msg, " at offset ");
            if (at) {
                unsigned long n = strtoul(at + 11, NULL, 10);
                if (n <= re->slen) off += 1 + (uint32_t)n;
            }
            src_error(g->c->src, re->file, off, "PCRE2 cannot compile this regex for capture: %s",
                      msg);
        }
        return -1;
    }
    long group;
    if (grp->kind == AST_INT) {
        group = (long)grp->ival;
        if ((uint32_t)group > vm_capture_ngroups(pc)) {
            src_error(g->c->src, grp->file, grp->off, "the regex has %u capture group%s, not %ld",
                      vm_capture_ngroups(pc), vm_capture_ngroups(pc) == 1 ? "" : "s", group);
            group = -1;
        }
    } else {
        group = vm_capture_group_number(pc, grp->str, grp->slen);
        if (group < 0)
            src_error(g->c->src, grp->file, grp->off, "the regex has no group named \"%.*s\"",
                      (int)grp->slen, grp->str);
    }
    vm_capture_free(pc);
    if (group < 0) return -1;
    uint32_t rep;
    if (repeats_a_repeating_group(re->str, re->slen, &rep))
        src_warning(g->c->src, re->file, re->off + 1 + rep,
                    "this capture regex repeats a group that itself repeats: on a long value "
                    "it can run out of its budget and capture \"\" (docs/language.md, Captures)");
    uint32_t expr = cg_kstr(g, re->str, re->slen);
    for (uint32_t i = 0; i < g->P.ncapts; i++)
        if (g->P.capts[i].subject == s && g->P.capts[i].test == t && g->P.capts[i].expr == expr &&
            g->P.capts[i].group == (uint32_t)group)
            return i;
    if (GROW(g, g->P.capts, g->P.capcapts, g->P.ncapts + 1)) return -1;
    g->P.capts[g->P.ncapts] = (vm_capt){s, t, cg_hs_flags(re), expr, (uint32_t)group, NULL};
    return g->P.ncapts++;
}

