/*
 * program.h: the in-memory form of a compiled program, shared by the code
 * generator (which fills one and hands it to vm_write), the loader (which
 * rebuilds one from a rules file) and the interpreter.
 *
 * Every index stored here is checked by the loader (bounds) and the
 * verifier (meaning) before the interpreter sees it, so the interpreter
 * does no checks of its own.
 */
#ifndef VM_PROGRAM_H
#define VM_PROGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <hs.h>

#include "classify.h"
#include "alloc.h"
#include "ipaddr.h"
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

/* One Hyperscan expression. Its Hyperscan id is its index among the
 * patterns of its subject: distinct ids keep Hyperscan's compile time
 * linear in the size of a set (one shared id per set made a 50,000-
 * element set take minutes); the subject's test_of table maps the id
 * back to the test, which all elements of a set share. */
typedef struct vm_pattern {
    uint32_t subject;
    uint32_t test;
    uint32_t flags; /* HS_FLAG_* */
    uint32_t expr;  /* string constant: the Hyperscan expression */
} vm_pattern;

/* An IP set: `count` sorted, disjoint, non-adjacent ranges starting at
 * ranges[first] (vm/ipaddr.h). */
typedef struct vm_ipset {
    uint32_t first, count;
} vm_ipset;

typedef struct vm_capture vm_capture; /* vm/capture.h */

/* A capture: regex `expr` (with `flags`), proven by test `test` of
 * subject `subject` before PCRE2 runs; the text of group `group`. */
typedef struct vm_capt {
    uint32_t subject, test, flags, expr, group;
    vm_capture *re;   /* compiled at load time */
} vm_capt;

/* Calls nest at most this deep (the verifier checks the call graph). */
#define VM_MAX_CALL_DEPTH 200

/* Default limits (docs/limits.md). */
#define VM_DEFAULT_FILE_BYTES (UINT64_C(64) << 20)
#define VM_DEFAULT_HEADERS 256
#define VM_DEFAULT_WORKSPACE_BYTES (UINT64_C(256) << 10)
#define VM_DEFAULT_HEADER_VALUE_BYTES (UINT64_C(64) << 10)
#define VM_DEFAULT_HEADER_BYTES (UINT64_C(256) << 10)
#define VM_DEFAULT_PATTERNS 1000000
#define VM_DEFAULT_REGISTERS 65536

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
};

/* The defaults, in the order of the fields above. */
#define VM_DEFAULT_OPTIONS                                                  \
    {VM_DEFAULT_FILE_BYTES, VM_DEFAULT_HEADERS, VM_DEFAULT_WORKSPACE_BYTES,  \
     VM_DEFAULT_HEADER_VALUE_BYTES, VM_DEFAULT_HEADER_BYTES,                 \
     VM_DEFAULT_PATTERNS, VM_DEFAULT_REGISTERS, {NULL, NULL, NULL}, NULL, 0}

struct clf_program {
    vm_const *consts;
    uint32_t nconsts;
    vm_func *funcs;
    uint32_t nfuncs;
    uint32_t entry;    /* index of `main`, one of the VM_FUNC_ENTRY functions */
    uint32_t *hdrs;    /* string constants: lower-case header names */
    uint32_t nhdrs;
    /* Built by the loader: an open-addressing table from vm_hdr_hash() of
     * a header name to 1 + its slot (0: empty), hdr_mask + 1 entries (a
     * power of two, at least 4 per slot), so that clf_ctx_add_header finds
     * a name's slot, or that it has none, in about one probe instead of a
     * comparison with every slot. NULL when the loader built none (no
     * slots, or a file whose names make it costly: vm/load.c); then
     * clf_ctx_add_header compares with every slot. */
    uint32_t *hdr_index;
    uint32_t hdr_mask;
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
    vm_capt *capts;
    uint32_t ncapts;
    uint32_t maxgroups;  /* most capture groups of any capture regex */
    /* Set by the verifier: registers of the deepest call chain from any
     * function (the context's register stack), and that chain's length. */
    uint32_t stack_regs;
    uint32_t max_depth;
    /* The trusted proxies (a copy of the options'). */
    vm_iprange *trusted;
    size_t ntrusted;
    /* Loader-owned storage (NULL in a program built by the compiler). */
    char *strings;     /* constant bytes */
    clf_options opts;  /* the limits it was loaded with; opts.alloc serves the
                          program and its contexts */
};

/* The field of `o` that holds limit `which`, or NULL for an unknown
 * limit: the one mapping clf_options_set_limit and clf_program_limit
 * share. */
VM_INTERNAL uint64_t *vm_limit_field(clf_options *o, clf_limit which);

/* The hash of a header name for hdr_index: ASCII-case-insensitive, from
 * the length and three bytes (first, middle, last), which tell the
 * names a program inspects apart cheaply; equal names always collide,
 * and the lookup compares the whole name anyway. */
static inline uint32_t vm_hdr_hash(const char *s, size_t n)
{
    uint32_t h = (uint32_t)n * UINT32_C(0x9E3779B1);
    if (n) {
        uint32_t a = (unsigned char)s[0] | 0x20, b = (unsigned char)s[n / 2] | 0x20,
                 c = (unsigned char)s[n - 1] | 0x20;
        h ^= a | b << 8 | c << 16;
    }
    h *= UINT32_C(0x85EBCA6B);
    return h ^ (h >> 15);
}

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

/* ---- patterns.c ---- */

/* Builds the Hyperscan database of subject `s` from the program's
 * patterns (hs_compile_multi, generic x86-64 target so that the database
 * loads on any CPU Hyperscan supports). On failure returns
 * CLF_E_BACKEND, writes a message, and stores in *bad_pattern the index
 * of the offending pattern in prog->patterns, or -1. */
VM_INTERNAL clf_status vm_subject_build(const clf_program *prog, uint32_t s,
                                        hs_database_t **out, long *bad_pattern,
                                        char *err, size_t errlen);

/* ---- write.c ---- */

/* Serializes `prog` (whose subjects' databases are built) into a new
 * malloc'd buffer. Returns CLF_OK, CLF_E_NOMEM or CLF_E_BACKEND. */
VM_INTERNAL clf_status vm_write(const clf_program *prog, uint8_t **out,
                                size_t *outlen, char *err, size_t errlen);

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
