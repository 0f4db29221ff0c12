/*
 * program.h: the in-memory form of a compiled program, shared by the code
 * generator (which fills one and hands it to cc_write, lang/write.h), the
 * loader (which rebuilds one from a rules file) and the interpreter.
 *
 * Every index stored here is checked by the loader (bounds) and the
 * verifier (meaning) before the interpreter sees it, so the interpreter
 * does no checks of its own.
 */
#ifndef VM_PROGRAM_H
#define VM_PROGRAM_H

#include "ipdb.h"
#include <stddef.h>
#include <stdint.h>
#include <hs.h>

#include "classify.h"
#include "alloc.h"
#include "ipaddr.h"
#include "matcher.h"
#include "opcodes.h"

#include "visibility.h"

typedef enum vm_const_kind { VM_K_STR = 1, VM_K_INT = 2 } vm_const_kind;

typedef struct vm_const {
    uint32_t kind;   /* vm_const_kind */
    uint32_t len;    /* VM_K_STR: length in bytes */
    const char *str; /* VM_K_STR: bytes, NUL-terminated at str[len] */
    int64_t i;       /* VM_K_INT */
} vm_const;

/* Where an instruction came from: constant index of the file name (or
 * VM_NO_REASON when unknown), 1-based line and column. */
typedef struct vm_pos {
    uint32_t file, line, col;
} vm_pos;

typedef struct vm_func {
    uint32_t name;     /* string constant */
    uint8_t kind;      /* VM_FUNC_FILTER or VM_FUNC_FN */
    uint8_t nparams;   /* fn: parameters, in registers 0..nparams-1 */
    uint8_t ret;       /* fn: vm_type of the result; filter: 0 */
    uint32_t nregs;
    uint32_t ninsns;
    vm_insn *code;     /* ninsns */
    uint8_t *regtypes; /* nregs, vm_type each */
    vm_pos *pos;       /* ninsns */
    uint8_t flags;     /* VM_FUNC_ENTRY, VM_FUNC_ROOT (opcodes.h) */
} vm_func;

/* What a subject's database is scanned against. */
typedef enum vm_subject_kind {
    VM_SUBJ_METHOD = VM_FIELD_METHOD,
    VM_SUBJ_PATH = VM_FIELD_PATH,
    VM_SUBJ_QUERY = VM_FIELD_QUERY,
    VM_SUBJ_HEADER = 3,  /* header slot `hdr` */
    VM_SUBJ_DYNAMIC = 4, /* a value computed by the program (OP_SCAND) */
    VM_SUBJ_KIND_COUNT
} vm_subject_kind;

/* One Hyperscan database and the tests it answers. Test t of the subject
 * is bit (bit_base + t) of a context's scan bitset. */
typedef struct vm_subject {
    uint32_t kind;   /* vm_subject_kind */
    uint32_t hdr;    /* VM_SUBJ_HEADER: header slot */
    uint32_t ntests; /* >= 1 */
    uint32_t bit_base;
    uint32_t npatterns; /* patterns of this subject */
    uint32_t *test_of;  /* Hyperscan id (pattern index) -> test */
    hs_database_t *db;
    int db_in_place; /* db lives in memory from the program's allocator
                        (hs_deserialize_database_at), not Hyperscan's */
} vm_subject;

/* What a pattern asks of its subject, as the source said it: a string
 * method on a literal (the pattern's value holds the literal's bytes),
 * or a regex (the value holds its text). The rules file records this,
 * so the explainer and the disassembler read the method instead of
 * guessing it back from Hyperscan text; vm/patterns.c, the one owner of
 * the lowering, derives the Hyperscan expression from it. */
typedef enum vm_pattern_kind {
    VM_PAT_CONTAINS = 0,
    VM_PAT_STARTS_WITH = 1,
    VM_PAT_ENDS_WITH = 2,
    VM_PAT_EQUALS = 3,
    VM_PAT_CONTAINS_WORD = 4,
    VM_PAT_REGEX = 5,
    VM_PAT_KIND_COUNT
} vm_pattern_kind;

/* The source-level method name of each kind ("matches" for a regex). */
extern const char *const vm_pattern_kind_names[VM_PAT_KIND_COUNT];

/* One pattern of a test. Its Hyperscan id is its index among the
 * patterns of its subject: distinct ids keep Hyperscan's compile time
 * linear in the size of a set (one shared id per set made a 50,000-
 * element set take minutes); the subject's test_of table maps the id
 * back to the test, which all elements of a set share. */
typedef struct vm_pattern {
    uint32_t subject;
    uint32_t test;
    uint32_t kind;  /* vm_pattern_kind */
    uint32_t flags; /* HS_FLAG_CASELESS; for a regex also DOTALL, MULTILINE */
    uint32_t value; /* string constant: the literal's bytes, or the regex */
} vm_pattern;

/* An IP set: `count` sorted, disjoint, non-adjacent ranges starting at
 * ranges[first] (vm/ipaddr.h). */
typedef struct vm_ipset {
    uint32_t first, count;
} vm_ipset;

/* An int set: `count` strictly increasing values from ints[first]. */
typedef struct vm_intset {
    uint32_t first, count;
} vm_intset;

/* A state slot (docs/state.md): what one count(), score_add(), mark()...
 * of the rules names: the entry kind (clf_state_kind), the key's type
 * (VM_KEY_*, vm/store.h), the name (a string constant), the window,
 * half-life or time to live in seconds, and what score_add adds (0 for
 * the others). The state opcodes take a slot as operand B. */
typedef struct vm_slot {
    uint32_t kind, keytype, name, param;
    int64_t amount;
} vm_slot;

typedef struct vm_capture vm_capture; /* vm/capture.h */

/* A capture: regex `expr` (with `flags`), proven by test `test` of
 * subject `subject` before PCRE2 runs; the text of group `group`. */
typedef struct vm_capt {
    uint32_t subject, test, flags, expr, group;
    vm_capture *re;   /* compiled at load time */
} vm_capt;

typedef struct rw_set rw_set; /* rewrite/rw_build.h */

/* A named rewrite set (docs/rewrite.md), built by the compiler or loaded
 * from the file's VM_SEC_REWRITE section. */
typedef struct vm_rewrite {
    uint32_t name; /* string constant, unique among the sets */
    rw_set *set;   /* owned by the program */
} vm_rewrite;

/* prog->entry of a file without `main` (rewrite sets only): clf_eval
 * refuses it with CLF_E_STATE. */
#define VM_NO_ENTRY UINT32_C(0xffffffff)

/* Calls nest at most this deep (the verifier checks the call graph). */
#define VM_MAX_CALL_DEPTH 200

struct sg_keyring; /* sig/sg_keys.h */

struct clf_options {
    uint64_t file_bytes;
    uint64_t headers;
    uint64_t workspace_bytes;
    uint64_t header_value_bytes;
    uint64_t header_bytes;
    uint64_t patterns;
    uint64_t registers;
    vm_allocator alloc;
    /* clf_options_set_trusted_proxies: malloc'd by the options object;
     * a program copies them into trusted/ntrusted below. */
    vm_iprange *trusted;
    size_t ntrusted;
    /* clf_options_add_ipdb: borrowed, kept by the program (vm/ipdb.h). */
    const clf_ipdb *ipdbs[VM_MAX_IPDBS];
    unsigned nipdbs;
    /* clf_options_set_keyring: borrowed from the host until the load
     * copies it into the program (keys below); NULL: none. */
    const struct sg_keyring *keyring;
    /* clf_options_set_signature_skew: seconds either way. */
    uint32_t sig_skew;
};

/* The defaults (CLF_DEFAULT_* of classify.h), for a program loaded
 * without options and for the compiler's own checks (vm/options.c). */
VM_INTERNAL extern const clf_options vm_default_options;

struct clf_program {
    vm_const *consts;
    uint32_t nconsts;
    vm_func *funcs;
    uint32_t nfuncs;
    uint32_t entry;    /* index of `main`, one of the VM_FUNC_ENTRY functions */
    uint32_t *hdrs;    /* string constants: lower-case header names */
    uint32_t nhdrs;
    /* Built by the loader (vm_hdr_index_build): an open-addressing table
     * from a header name's hash to 1 + its slot (0: empty), hdr_mask + 1
     * entries (a power of two, at least 4 per slot), so that
     * clf_ctx_add_header finds a name's slot, or that it has none, in
     * about one probe instead of a comparison with every slot. NULL when
     * the loader built none (no slots, or a file whose names make it
     * costly: vm/hdrindex.c); then vm_hdr_slot compares with every slot. */
    uint32_t *hdr_index;
    uint32_t hdr_mask;
    /* Built with the index: bit min(len, 63) is set for the length of
     * every slot's name, so that vm_hdr_slot turns away a name of another
     * length without reading its bytes (most headers of a request: a
     * policy inspects a few names; docs/performance.md). */
    uint64_t hdr_lens;
    vm_subject *subjects;
    uint32_t nsubjects;
    vm_pattern *patterns;
    uint32_t npatterns;
    uint32_t nbits;    /* sum of subjects' ntests */
    uint32_t maxregs;  /* largest nregs of any function */
    vm_iprange *ranges; /* all IP sets' ranges */
    uint32_t nranges;
    vm_ipset *ipsets;
    uint32_t nipsets;
    int64_t *ints;      /* all int sets' values */
    uint32_t nints;
    vm_intset *intsets;
    uint32_t nintsets;
    vm_capt *capts;
    uint32_t ncapts;
    uint32_t maxgroups;  /* most capture groups of any capture regex */
    vm_rewrite *rewrites;
    uint32_t nrewrites;
    vm_slot *slots;     /* state slots (VM_SEC_STATE) */
    uint32_t nslots;
    /* Set by the verifier: registers of the deepest call chain from any
     * function (the context's register stack), and that chain's length. */
    uint32_t stack_regs;
    uint32_t max_depth;
    /* The trusted proxies (a copy of the options'). */
    vm_iprange *trusted;
    size_t ntrusted;
    /* The keys signatures are verified with (a copy of the options' key
     * ring, from opts.alloc; NULL when none was given: every signature is
     * then invalid), and whether any function reads a signature field
     * (OP_SIG*), so that only then do contexts keep every header line and
     * a verification scratch (vm/sigctx.c). */
    struct sg_keyring *keys;
    int uses_sig;
    /* The library that built the file's databases (VM_SEC_MATCHER);
     * the loader rebuilds them from the patterns when it is not
     * vm_matcher_this(). The compiler's own program leaves it zero. */
    vm_matcher built_by;
    /* Loader-owned storage (NULL in a program built by the compiler). */
    char *strings;     /* constant bytes */
    clf_options opts;  /* the limits it was loaded with; opts.alloc serves the
                          program and its contexts */
};

/* ---- options.c ---- */

/* The field of `o` that holds limit `which`, or NULL for an unknown
 * limit: the one mapping clf_options_set_limit and clf_program_limit
 * share. */
VM_INTERNAL uint64_t *vm_limit_field(clf_options *o, clf_limit which);
/* The largest value limit `which` may take: what the context's arrays
 * and the format can hold. */
VM_INTERNAL uint64_t vm_limit_ceiling(clf_limit which);
/* Parses a trusted-proxy list (clf_options_set_trusted_proxies) into
 * o->trusted, replacing the old list. Returns CLF_OK, CLF_E_INVALID with a
 * message naming the bad entry, or CLF_E_NOMEM. */
VM_INTERNAL clf_status vm_options_set_trusted(clf_options *o, const char *list, size_t len,
                                              char *err, size_t errlen);

/* Formats a message into err/errlen (both may be 0/NULL). */
VM_INTERNAL void vm_errf(char *err, size_t errlen, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- load.c ---- */

/* Reads, checks and verifies a rules file; see clf_program_load(). */
VM_INTERNAL clf_status vm_load(const uint8_t *bytes, size_t len,
                               const clf_options *opts, clf_program **out,
                               char *err, size_t errlen);
/* Frees a program made by vm_load() (NULL-safe). */
VM_INTERNAL void vm_program_free(clf_program *prog);
/* clf_program_reads_rdns: some instruction reads req.rdns (OP_FIELD of
 * VM_FIELD_RDNS) or req.rdns_checked (OP_RDNSCHK). */
VM_INTERNAL int vm_program_reads_rdns(const clf_program *prog);

/* ---- patterns.c ---- */

/* Bytes a literal pattern's Hyperscan expression needs, NUL included,
 * for a literal of n bytes (each may become \xHH; anchors around). */
#define VM_PATTERN_EXPR_BYTES(n) ((size_t)(n) * 4 + 8)

/* The Hyperscan expression of pattern `q` whose value is `k`: a regex's
 * text as written, or the literal with each byte outside [A-Za-z0-9]
 * escaped as \xHH, wrapped for its method (patterns.c says how), written
 * into buf (VM_PATTERN_EXPR_BYTES(k->len) bytes). Returns the expression,
 * NUL-terminated. */
VM_INTERNAL const char *vm_pattern_expr(const vm_pattern *q, const vm_const *k, char *buf);

/* Builds the Hyperscan database of subject `s` from the program's
 * patterns (hs_compile_multi, generic x86-64 target so that the database
 * loads on any CPU Hyperscan supports). The compiler builds with it, and
 * so does the loader when a stored database does not fit this Hyperscan
 * or CPU: one lowering for both. On failure returns CLF_E_BACKEND (or
 * CLF_E_NOMEM), writes a message, and stores in *bad_pattern the index
 * of the offending pattern in prog->patterns, or -1. */
VM_INTERNAL clf_status vm_subject_build(const clf_program *prog, uint32_t s,
                                        hs_database_t **out, long *bad_pattern,
                                        char *err, size_t errlen);

/* ---- verify.c ---- */

/* Checks every function of `prog` (see verify.c for the rules) and its
 * call graph, and sets prog->stack_regs and prog->max_depth. Returns
 * CLF_OK, CLF_E_VERIFY with a message naming the function and the
 * instruction offset, CLF_E_LIMIT (the register stack of the deepest call
 * chain passes CLF_LIMIT_REGISTERS) or CLF_E_NOMEM. */
VM_INTERNAL clf_status vm_verify(clf_program *prog, char *err, size_t errlen);

/* ---- disasm.c ---- */

/* Called before each instruction that starts a new source line, so that a
 * caller holding the sources can print them; may be NULL. */
typedef void (*vm_source_fn)(void *ud, const char *file, uint32_t line);
VM_INTERNAL void vm_disassemble(const clf_program *prog, clf_write_fn write,
                                vm_source_fn source, void *ud);

#endif
