/* benchset.c: see benchset.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchset.h"
#include "pagegen.h"
#include "util.h"

rw_set *benchset_build(const char *spec, double *compile_ms, unsigned *nrules)
{
    char kind[8] = {0};
    unsigned n = 0;
    char tail;
    if (sscanf(spec, "%7[a-z]:%u%c", kind, &n, &tail) != 2 || n == 0 || n > 100000)
        die("bad rule set %s (want lit:N or re:N, N from 1 to 100000)", spec);
    pagegen_rule *pr = pagegen_rules(kind, n);
    if (!pr) die("bad rule set %s (want lit:N or re:N)", spec);
    rw_rule_desc *rd = xcalloc(n, sizeof *rd);
    for (unsigned i = 0; i < n; i++) {
        rd[i].kind = pr[i].regex ? RW_REGEX : RW_LITERAL;
        rd[i].flags = pr[i].caseless ? RW_CASELESS : 0;
        rd[i].pattern = pr[i].pattern;
        rd[i].pattern_len = strlen(pr[i].pattern);
        rd[i].replacement = pr[i].replacement;
        rd[i].replacement_len = strlen(pr[i].replacement);
    }
    rw_set_desc d;
    rw_set_desc_init(&d);
    d.rules = rd;
    d.nrules = n;
    rw_set *set = NULL;
    rw_diags dg;
    uint64_t c0 = now_ns();
    rw_status st = rw_build(&d, NULL, &set, &dg);
    if (compile_ms) *compile_ms = (double)(now_ns() - c0) / 1e6;
    if (st) die("%s: %s%s%s", spec, rw_status_name(st), dg.n ? ": " : "", dg.n ? dg.v[0].message : "");
    rw_diags_free(&dg);
    free(rd);
    pagegen_free_rules(pr, n);
    if (nrules) *nrules = n;
    return set;
}
