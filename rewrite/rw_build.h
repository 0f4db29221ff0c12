/*
 * rw_build.h: the build-time API of the streaming rewrite engine
 * (docs/rewrite.md has the semantics; this header has the contract).
 *
 * A rule set is described by plain C structs (rw_set_desc, rw_rule_desc)
 * and compiled by rw_build() into an immutable rw_set: the Hyperscan
 * streaming databases, the per-rule metadata (widths, group counts,
 * parsed templates) and, where a rule needs them, PCRE2 codes. Every
 * rejection is a diagnostic naming the rule, the place (pattern, template,
 * flags) and, when known, the byte offset in it; rw_build() checks every
 * rule, so one call reports every bad rule at once.
 *
 * A compiled set can be written in its stored form (rw_set_serialize) and
 * rebuilt from those bytes (rw_set_load), which validates every field as
 * hostile input. docs/rewrite.md ("Stored form") gives the layout.
 *
 * Memory: everything the engine allocates goes through the vm_allocator
 * given here (NULL: malloc/free), except Hyperscan's own allocations for
 * databases it compiles, streams and scratch (Hyperscan's allocator, never
 * changed by the library), and PCRE2 JIT code (PCRE2's executable-memory
 * allocator). Deserialized databases are placed in host memory with
 * hs_deserialize_database_at.
 *
 * Threads: rw_build and rw_set_load may run in any number of threads at
 * once. An rw_set is immutable once built and may be shared by any number
 * of threads (streams, scratches) at once.
 */
#ifndef RW_BUILD_H
#define RW_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "bytes.h"

/* Status codes. Those shared with classify.h's clf_status have the same
 * values, so that the public API can pass them through. */
typedef enum rw_status {
    RW_OK = 0,
    RW_E_NOMEM = -1,   /* an allocation failed; nothing was leaked */
    RW_E_INVALID = -2, /* misuse: NULL handle, bad argument */
    RW_E_FORMAT = -3,  /* a stored set is malformed, truncated or inconsistent */
    RW_E_VERSION = -4, /* a stored set has an unsupported version */
    RW_E_BACKEND = -6, /* Hyperscan or PCRE2 failed (scan, scratch, stream) */
    RW_E_LIMIT = -7,   /* a documented limit was exceeded */
    RW_E_STATE = -8,   /* the call is not valid in the stream's state */
    RW_E_RULES = -10,  /* the rule set was rejected: see the diagnostics */
    RW_E_SINK = -11    /* the output sink returned non-zero */
} rw_status;

/* A short constant name for a status ("RW_E_RULES"), for messages. */
const char *rw_status_name(rw_status st);

/* How a match is chosen (docs/rewrite.md, "Semantics"). */
typedef enum rw_mode {
    RW_MODE_SRW = 0,            /* leftmost-longest, ties to the earlier rule */
    RW_MODE_REPLACE_FILTER = 1, /* OpenResty replace-filter (sregex) */
    RW_MODE_SUB_FILTER = 2      /* nginx ngx_http_sub_module */
} rw_mode;

typedef enum rw_kind {
    RW_LITERAL = 0, /* the pattern is bytes to find as they are */
    RW_REGEX = 1    /* the pattern is a regular expression (docs/rewrite.md) */
} rw_kind;

/* Rule flags. */
#define RW_CASELESS 0x01u  /* `i`: ASCII case-insensitive (A-Z = a-z only) */
#define RW_DOTALL 0x02u    /* `s`: `.` matches LF too (regex rules) */
#define RW_MULTILINE 0x04u /* `m`: `^`/`$` match at lines (regex rules) */
#define RW_ONCE 0x08u      /* `once`: the rule fires at most once per stream */
#define RW_FLAGS_ALL 0x0fu

/* max_match (L): the default, and the largest value accepted. */
#define RW_MAX_MATCH_DEFAULT 8192u
#define RW_MAX_MATCH_LIMIT (1u << 20)
/* The most rules a set may hold, and the longest pattern and template
 * (bytes). */
#define RW_MAX_RULES 100000u
#define RW_MAX_PATTERN (1u << 16)
#define RW_MAX_TEMPLATE (1u << 16)

/* Where a rule came from, for diagnostics: opaque to the engine, stored
 * with the set and given back unchanged (the compiler stores a file
 * index, a line and a column). */
typedef struct rw_srcpos {
    uint32_t file, line, col;
} rw_srcpos;

typedef struct rw_rule_desc {
    rw_kind kind;
    uint32_t flags;             /* RW_CASELESS | RW_DOTALL | ... */
    const void *pattern;        /* pattern_len bytes, any values */
    size_t pattern_len;
    const void *replacement;    /* the template, replacement_len bytes */
    size_t replacement_len;
    rw_srcpos pos;
} rw_rule_desc;

typedef struct rw_set_desc {
    rw_mode mode;
    uint32_t max_match;         /* L; see docs/rewrite.md per mode */
    const rw_rule_desc *rules;  /* in priority order */
    uint32_t nrules;
} rw_set_desc;

/* Fills *d with the defaults: RW_MODE_SRW, max_match
 * RW_MAX_MATCH_DEFAULT, no rules. */
void rw_set_desc_init(rw_set_desc *d);

/* What a diagnostic is about. */
typedef enum rw_diag_code {
    RW_D_SET = 1,        /* the set itself (mode, max_match, counts) */
    RW_D_FLAGS,          /* a flag that does not apply to the rule or mode */
    RW_D_EMPTY_PATTERN,  /* the pattern is empty */
    RW_D_EMPTY_MATCH,    /* the pattern can match the empty string */
    RW_D_LAZY,           /* a lazy quantifier, which this mode would ignore */
    RW_D_UNSUPPORTED,    /* a construct the engine does not support */
    RW_D_SYNTAX,         /* the pattern does not parse */
    RW_D_TOO_LONG,       /* every match would be longer than max_match */
    RW_D_TOO_LARGE,      /* Hyperscan: "Pattern is too large" (with SOM) */
    RW_D_NOT_LITERAL,    /* sub_filter mode takes literals only */
    RW_D_NO_SUCH_GROUP,  /* the template names a group the pattern lacks */
    RW_D_TEMPLATE,       /* the template does not parse */
    RW_D_BACKEND         /* another Hyperscan or PCRE2 compile failure */
} rw_diag_code;

/* A short constant name for a diagnostic code ("E_EMPTY_MATCH"). */
const char *rw_diag_code_name(rw_diag_code c);

typedef enum rw_where {
    RW_AT_SET = 0,
    RW_AT_FLAGS = 1,
    RW_AT_PATTERN = 2,
    RW_AT_TEMPLATE = 3
} rw_where;

#define RW_DIAG_MESSAGE 200

typedef struct rw_diag {
    int32_t rule;       /* index in rw_set_desc.rules; -1 for the set */
    rw_where where;
    int64_t offset;     /* byte offset in the pattern or template; -1: unknown */
    rw_diag_code code;
    rw_srcpos pos;      /* the rule's rw_srcpos (zero for the set) */
    char message[RW_DIAG_MESSAGE]; /* one line, NUL-terminated, no rule prefix */
} rw_diag;

/* A list of diagnostics, in rule order. At most RW_MAX_DIAGS are kept;
 * `dropped` counts the others. */
#define RW_MAX_DIAGS 1000u
typedef struct rw_diags {
    rw_diag *v;
    uint32_t n, cap, dropped;
    vm_allocator al;
} rw_diags;

/* Frees the list (NULL-safe) and zeroes it. */
void rw_diags_free(rw_diags *d);

typedef struct rw_set rw_set;

/* Compiles the rule set described by *d.
 *
 * On success returns RW_OK and stores the set in *out. When any rule (or
 * the set) is rejected, returns RW_E_RULES, stores NULL in *out and, when
 * diags is not NULL, the diagnostics in *diags (every bad rule, not only
 * the first; free with rw_diags_free). Other errors: RW_E_INVALID (NULL
 * d or out, NULL pattern with a length), RW_E_NOMEM. `al` may be NULL
 * (malloc/free); it is copied. Nothing is leaked on failure. */
rw_status rw_build(const rw_set_desc *d, const vm_allocator *al, rw_set **out,
                   rw_diags *diags);

/* Frees a set (NULL-safe). No stream or scratch may use it afterwards. */
void rw_set_free(rw_set *s);

rw_mode rw_set_mode(const rw_set *s);
uint32_t rw_set_max_match(const rw_set *s);
uint32_t rw_set_nrules(const rw_set *s);
/* The rule's source position as given to rw_build (zero when i is out of
 * range). */
rw_srcpos rw_set_rule_pos(const rw_set *s, uint32_t i);
/* One rule as the set holds it, for disassemblers (classifyc --dump):
 * the pointers are into the set and live as long as it. */
typedef struct rw_rule_info {
    rw_kind kind;
    uint32_t flags;
    const uint8_t *pattern, *replacement;
    size_t pattern_len, replacement_len;
    uint32_t min_width, max_width; /* bytes a match spans; max UINT32_MAX: no bound */
    int captures;                  /* the template names groups >= 1: PCRE2 runs per match */
    rw_srcpos pos;
} rw_rule_info;
/* Fills *out for rule i; returns 0, or -1 when i is out of range. */
int rw_set_rule_info(const rw_set *s, uint32_t i, rw_rule_info *out);
/* "leftmost_longest", "replace_filter", "sub_filter": the .clf names. */
const char *rw_mode_name(rw_mode m);

/* The most bytes a stream of this set retains between two feed calls
 * (left context byte included): docs/rewrite.md, "Hold-back". */
uint64_t rw_set_holdback(const rw_set *s);

/* Appends the stored form of s to *out (docs/rewrite.md, "Stored form").
 * Returns RW_OK, RW_E_INVALID (NULL argument), RW_E_NOMEM (out->failed is
 * then set) or RW_E_BACKEND (hs_serialize_database failed). */
rw_status rw_set_serialize(const rw_set *s, vm_buf *out);

/* Rebuilds a set from its stored form (n bytes at p; any alignment). The
 * bytes are untrusted: every count, offset, flag and string is checked
 * before use. A stored database that does not fit this Hyperscan or CPU
 * (HS_DB_VERSION_ERROR, HS_DB_PLATFORM_ERROR) is rebuilt from the stored
 * patterns. Returns RW_OK and stores the set in *out; otherwise NULL in
 * *out, a one-line message in err (errlen bytes, may be 0) and
 * RW_E_FORMAT, RW_E_VERSION, RW_E_NOMEM, RW_E_BACKEND or RW_E_INVALID. */
rw_status rw_set_load(const void *p, size_t n, const vm_allocator *al, rw_set **out,
                      char *err, size_t errlen);

/* rw_set_load for a stored form whose databases another library built
 * (Hyperscan or Vectorscan: vm/matcher.h): they are not read but rebuilt
 * from the stored patterns. Same arguments and results. */
rw_status rw_set_load_rebuilt(const void *p, size_t n, const vm_allocator *al, rw_set **out,
                              char *err, size_t errlen);

#endif
