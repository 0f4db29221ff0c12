/*
 * compile.h: the compiler's entry point and the structures its passes
 * share. The passes run in order:
 *
 *   module.c   read the main file and its imports, parse each (parse.c)
 *   check.c    resolve names, type-check, check that every path through a
 *              filter ends in accept or reject
 *   codegen.c  lower to register bytecode and Hyperscan patterns (cg.h
 *              says which file does what), build the databases,
 *              serialize (write.c)
 *
 * Errors are collected in the src_set and printed by the caller; a pass
 * that finds errors lets the next passes be skipped.
 */
#ifndef LANG_COMPILE_H
#define LANG_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "source.h"
#include "strmap.h"

/* Compile-time limits (docs/limits.md). */
#define CC_DEFAULT_MAX_SOURCE_BYTES (UINT64_C(16) << 20)
#define CC_DEFAULT_MAX_NESTING 100
#define CC_DEFAULT_MAX_PATTERNS 100000
#define CC_DEFAULT_MAX_REGISTERS 65535
/* Operators nested inside one expression, e.g. a chain a || b || ... (not
 * an option: it only guards the compiler's recursion). */
#define CC_MAX_EXPR_DEPTH 10000
/* Parameters of a fn (besides a Request): one byte of the format counts
 * them (vm_func.nparams). The checker refuses more; the code generator
 * relies on it. */
#define CC_MAX_PARAMS 255

typedef struct lint_corpus lint_corpus;

typedef struct cc_options {
    const char *const *include_dirs; /* -I, searched first, in order */
    size_t ninclude;
    const char *env_path;    /* $CLASSIFY_PATH (colon-separated) or NULL */
    const char *stdlib_dir;  /* the installed stdlib/, or NULL */
    uint64_t max_source_bytes;
    /* For these three, 0 means no limit beyond the format's own. */
    unsigned max_nesting;   /* brackets, blocks and runs of '!' */
    unsigned max_patterns;  /* Hyperscan patterns in the program */
    unsigned max_registers; /* registers per filter, at most 65535 */
    int no_inline;          /* keep every call a call (classifyc --no-inline) */
    /* User-Agents for the corpus lints (lint.h; classifyc --ua-corpus), or
     * NULL: those lints are skipped. */
    const struct lint_corpus *lint_corpus;
    /* classifyc --max-data-age: warn about a package whose `// data-date:`
     * line is more than this many days before `now` (seconds since the
     * epoch); 0: no such warning. */
    unsigned max_data_age;
    int64_t now;
} cc_options;

/* The defaults for every field above. */
void cc_options_init(cc_options *o);

typedef struct cg_tests cg_tests;

/* Compiles `path` and its imports into a rules file. On success returns 0
 * and stores a malloc'd buffer in *out (the caller frees it). On failure
 * returns -1 with diagnostics in `src`. `ar` holds all compiler memory and
 * may be freed after `src` has been printed (and `tests` freed with
 * cg_tests_free). With `tests` non-NULL, the main file's `test` blocks
 * are compiled too: the program then also holds the filters they name
 * (and may lack `main`), and *tests describes them (classifyc --test). */
int cc_compile(const char *path, const cc_options *o, src_set *src, arena *ar,
               cg_tests *tests, uint8_t **out, size_t *outlen);

/* Like cc_compile but stops after parsing and prints the AST of the main
 * file (for golden tests). */
int cc_dump_ast(const char *path, const cc_options *o, src_set *src, arena *ar,
                FILE *out);
/* Prints the tokens of `path` one per line (for golden tests). */
int cc_dump_tokens(const char *path, const cc_options *o, src_set *src,
                   arena *ar, FILE *out);

/* ---- shared between the passes ---- */

enum { ORIGIN_NONE = 0, ORIGIN_METHOD, ORIGIN_PATH, ORIGIN_QUERY, ORIGIN_HEADER };

/* The fields of Request (docs/language.md, "The request"), read as
 * `req.NAME`: check.c types them from cc_request_fields, translate.c
 * lowers each by its id. */
typedef enum req_field {
    RF_NONE = 0, RF_METHOD, RF_PATH, RF_QUERY, RF_CLIENT_IP, RF_RDNS, RF_RDNS_CHECKED,
    RF_SIGNATURE_STATUS, RF_SIGNATURE_AGENT, RF_SIGNATURE_KEYID
} req_field;
typedef struct req_field_desc {
    const char *name;
    req_field id;
    int type;   /* ty */
    int origin; /* ORIGIN_*: a field tests on which join its subject */
} req_field_desc;
extern const req_field_desc cc_request_fields[];
extern const unsigned cc_nrequest_fields;

typedef enum method_id {
    M_NONE = 0,
    /* str */
    M_LEN, M_LOWER, M_CONTAINS, M_STARTS_WITH, M_ENDS_WITH, M_EQUALS,
    M_CONTAINS_WORD, M_MATCHES, M_INDEX_OF, M_CAPTURE, M_TO_INT, M_TRIM,
    M_SUBSTR, M_TO_IP,
    /* ip */
    M_VALID, M_ASN, M_ASN_ORG, M_COUNTRY,
    /* Request */
    M_HEADER, M_HAS_HEADER, M_COOKIE, M_QUERY_PARAM,
    /* ip.net(n) and net(n4, n6) */
    M_NET,
    /* the state calls (check_state.c): count(), count_of(), score_add(),
     * score(), mark(), marked() */
    M_ST_COUNT, M_ST_COUNTED, M_ST_SCADD, M_ST_SCORE, M_ST_MARK, M_ST_MARKED,
    /* a call of a fn or filter (CALL with sym set) */
    M_FUNC
} method_id;

typedef enum sym_kind {
    SYM_CONST, SYM_FILTER, SYM_FN, SYM_IMPORT, SYM_LOCAL, SYM_PARAM
} sym_kind;

typedef struct module module;
typedef struct sym sym;

/* One call site in a function's body, for the recursion check. */
typedef struct call_edge {
    struct call_edge *next;
    sym *callee;
    ast *site;
} call_edge;

struct sym {
    struct sym *next; /* the next local of the same scope */
    sym_kind kind;
    const char *name;
    ast *decl;      /* CONST, FILTER, FN, LET, PARAM, IMPORT node */
    ty type;        /* FN: the return type */
    module *mod;    /* SYM_IMPORT: the imported module; others: owner */
    int origin;     /* SYM_LOCAL of type str */
    char *oname;
    int reg;        /* SYM_LOCAL, SYM_PARAM: register, set by codegen */
    int mut;        /* SYM_LOCAL: declared `let mut` */
    int used;       /* read somewhere (unused-name warnings) */
    /* SYM_FN, SYM_FILTER: */
    call_edge *calls; /* the functions and filters its body calls */
    int color;        /* recursion check: 0 new, 1 on the stack, 2 done */
    int depth;        /* the longest chain of calls from here, itself included */
    int func;         /* function index in the program, or -1 (codegen) */
    int decides;      /* SYM_FILTER: every path ends in accept or reject (no
                         `pass`, no falling off its end); in the main file,
                         such a filter is an entry point (codegen) */
};

struct module {
    module *next;    /* all modules of the compilation */
    uint32_t file;
    char *realpath;  /* identity, for cycles and sharing */
    ast *items;
    /* Consts, filters and import aliases, in declaration order, and an
     * index by name. Both malloc'd, freed by cc_compile. */
    strmap global_index; /* name -> index in global_vec */
    sym **global_vec;
    uint32_t nglobals, capglobals;
    int loading;     /* on the import stack right now */
    const module *importer;  /* first importer, for cycle chains */
    uint32_t import_off;     /* offset of that import statement */
};

/* A state name as the program first uses it (check_state.c): every use
 * of one name must agree on its kind, period and key type, since they
 * make the store's key (docs/state.md). */
typedef struct cc_state_name {
    struct cc_state_name *next;
    const char *name;
    int kind;          /* clf_state_kind */
    int keytype;       /* VM_KEY_* */
    uint32_t param;    /* seconds */
    const ast *first;  /* the call that used it first */
} cc_state_name;

typedef struct compilation {
    const cc_options *opts;
    src_set *src;
    arena *ar;
    module *modules; /* main module first */
    module *main;
    int testing;     /* compiling the main file's tests: `main` optional */
    cc_state_name *states; /* the state names used so far (arena) */
} compilation;

/* module.c: loads `path` and everything it imports. Returns 0 or -1. */
int mod_load_all(compilation *c, const char *path);
/* Reads a whole file into a malloc'd NUL-terminated buffer, enforcing the
 * source size limit; on error returns NULL and writes a message. */
char *mod_read_file(const char *path, uint64_t max, size_t *len, char *err, size_t errlen);

/* check.c: resolves and type-checks every module. Returns 0 or -1. */
int chk_program(compilation *c);
sym *chk_lookup_global(const module *m, const char *name);
/* Whether module m declares rewrite sets (check_rewrite.c). */
int chk_has_rewrites(const module *m);
/* The options of a checked rewrite set: its mode (0 leftmost_longest,
 * 1 replace_filter, 2 sub_filter: rw_mode's values) and max_match
 * (UINT32_MAX when not given: the engine's default). Returns 0, or -1
 * when they did not check. */
int chk_rewrite_options(const ast *set, int *mode, uint32_t *max_match);
/* The literal node a const-valued expression stands for (the literal
 * itself, or the value of the constant a NAME or MEMBER refers to). */
ast *chk_literal(ast *e);
/* The state slot a checked state call makes: its kind, key type, name,
 * period and amount (check_state.c; translate.c builds the slot table from it). */
void chk_state_slot(const ast *e, int *kind, int *keytype, const char **name,
                    uint32_t *param, int64_t *amount);
/* An expect-rate percentage ("0.1%", "95", "100%"; check_tests.c): 0 and
 * *out in 0..100, or -1 when it is not one. */
int chk_parse_rate(const char *s, uint32_t n, double *out);

/* codegen.c: lowers the checked program. Returns 0 or -1. With `tests`,
 * the program also holds every filter the main file's tests name, and
 * *tests receives them (cg_tests). */
typedef struct cg_test_expect {
    int verdict;          /* AST_V_* */
    const char *reason;   /* NULL: any reason */
    uint32_t reason_len;
    uint32_t func;        /* function index of the filter */
    const char *filter;   /* its name, for messages */
    ast *node;            /* the expect line */
    int rate;             /* expect-rate: AST_F_RATE_LE or _GE; 0: a plain expect */
    double percent;       /* expect-rate: the bound, 0..100 */
} cg_test_expect;

typedef struct cg_test {
    ast *node;            /* the TEST item: name, directives */
    cg_test_expect *expects;
    uint32_t nexpects;
} cg_test;

struct cg_tests {
    cg_test *tests;       /* malloc'd, with each expects array */
    uint32_t ntests;
};

int cg_program(compilation *c, cg_tests *tests, uint8_t **out, size_t *outlen);
void cg_tests_free(cg_tests *t);

#endif
