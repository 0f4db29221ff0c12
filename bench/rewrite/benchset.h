/*
 * benchset.h: a benchmark rule set (pagegen.h) compiled by the rewrite
 * engine, for rw-bench and rw-body. A set is named "KIND:N" ("lit:100",
 * "re:10"): pagegen_rules(KIND, N) in SRW mode with max_match 8192, the
 * reference configuration of bench/rewrite/README.md.
 */
#ifndef BENCHSET_H
#define BENCHSET_H

#include "rw_build.h"

/* Parses "KIND:N" (N from 1 to 100000) and compiles the set; dies with a
 * message naming the spec on any error. *compile_ms (if not NULL) gets
 * the time rw_build took. The caller frees the set with rw_set_free. */
rw_set *benchset_build(const char *spec, double *compile_ms, unsigned *nrules);

#endif
