/*
 * matcher.h: which libhs this process runs, Intel's Hyperscan or
 * Vectorscan, its maintained fork. Both have the same API, soname and
 * pkg-config name, so a binary built with one runs with the other; but a
 * database one serializes is not the other's to deserialize, so the rules
 * file records which library built its databases (format.h,
 * VM_SEC_MATCHER) and the loader rebuilds them from the stored patterns
 * when that is not this process's library.
 */
#ifndef VM_MATCHER_H
#define VM_MATCHER_H

#include <stddef.h>
#include <stdint.h>

#include <hs.h>

#include "visibility.h"

typedef enum vm_matcher_lib {
    VM_MATCHER_HYPERSCAN = 1,
    VM_MATCHER_VECTORSCAN = 2
} vm_matcher_lib;

/* A library and its version, major << 16 | minor << 8 | patch. */
typedef struct vm_matcher {
    uint32_t lib;
    uint32_t version;
} vm_matcher;

/* The libhs this process runs, read from hs_version() (not from the
 * headers it was built with: the loaded library is the one that builds
 * and reads databases). Thread-safe. */
VM_INTERNAL vm_matcher vm_matcher_this(void);

/* hs_version() as a person reads it: "MAJOR.MINOR.PATCH" and, when the
 * library gives one, its date ("5.4.0 2021-01-26"). Vectorscan 5.4.9 as
 * Debian 12 ships it returns "5.4.9 )" (its build leaves the date macro
 * empty), so whatever follows the version that is not a date is dropped.
 * A static string, set on the first call; thread-safe. */
VM_INTERNAL const char *vm_matcher_version_text(void);

/* "Hyperscan" or "Vectorscan"; NULL for a value that is neither. */
VM_INTERNAL const char *vm_matcher_name(uint32_t lib);

#endif
