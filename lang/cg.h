/*
 * cg.h: the code generator's state and the interface between its files
 * (not part of the compiler's interface, which is cg_program in
 * compile.h). Split as Lua splits lcode.c from lparser.c:
 *
 *   emit.c           the emit layer: constants, header slots, registers,
 *                    instructions, jump lists
 *   lower.c          pattern lowering: subjects, tests and their patterns,
 *                    IP sets; which tests merge, which runs get a guard
 *   lower_capture.c  captures: PCRE2 checks the regex and its group
 *   lower_rewrite.c  rewrite sets, built by the rewrite engine
 *   translate.c      the checked AST to instructions: expressions,
 *                    conditions, statements, calls and inlining
 *   codegen.c        the driver: which functions, the tests, the
 *                    Hyperscan databases, the rules file
 *
 * State comes in two parts, as Lua's global state and FuncState: a
 * cg_prog for the whole program (what every function adds to) and a
 * cg_func for the function being generated, made fresh for each one.
 */
#ifndef LANG_CG_H
#define LANG_CG_H

#include "compile.h"
#include "program.h"
#include "strmap.h"

/* A list of jumps to be pointed at one place once it is known. */
typedef struct jlist {
    uint32_t *at;
    uint32_t n, cap;
} jlist;

/* The key a test is shared under: the same method on the same literal
 * node of one subject is one test, wherever it is written. Merged tests
 * are keyed by their first operand (or statement) with a sentinel
 * method: method ids are never negative. */
enum { TEST_KEY_MERGED_OR = -1, TEST_KEY_CHAIN_GUARD = -2 };

typedef struct cg_test_key {
    uint32_t subject;
    int method;       /* a method_id, or a TEST_KEY_* sentinel */
    const ast *lit;   /* the set, regex or string literal, or the first operand */
    uint32_t test;
} cg_test_key;

/* The whole program being built. */
typedef struct cg_prog {
    vm_const *consts;
    uint32_t nconsts, capconsts;
    strmap kstr; /* string constant -> index */
    vm_func *funcs;
    uint32_t nfuncs;
    uint32_t *hdrs;
    uint32_t nhdrs, caphdrs;
    vm_subject *subjects;
    uint32_t nsubjects, capsubjects;
    vm_pattern *patterns;
    uint32_t npatterns, cappatterns, cappnode;
    const ast **pattern_node; /* the literal each pattern came from */
    cg_test_key *tests;
    uint32_t ntests, captests;
    vm_iprange *ranges;
    uint32_t nranges, capranges;
    vm_ipset *ipsets;
    uint32_t nipsets, capipsets;
    const ast **ipset_node;
    uint32_t capipnode;
    int64_t *ints;
    uint32_t nints, capints;
    vm_intset *intsets;
    uint32_t nintsets, capintsets;
    const ast **intset_node;
    uint32_t capintnode;
    vm_capt *capts;
    uint32_t ncapts, capcapts;
    vm_rewrite *rewrites;
    uint32_t nrewrites, caprewrites;
    vm_slot *slots;
    uint32_t nslots, capslots;
    /* Functions still to generate, in index order. */
    sym **queue;
    uint32_t nqueue, capqueue;
    uint32_t func_base; /* 1 when a stub entry is function 0, else 0 */
    int regs_reported, patterns_reported; /* each limit's error, once */
    uint32_t pos_file, pos_file_k; /* file of the last position, its constant */
} cg_prog;

/* A call whose callee's body is generated in place of OP_CALL/OP_CALLF
 * (translate.c, gen_inline): where its `return` puts the value and what
 * its `return`s and `pass`es jump to (the end of the inlined body). */
typedef struct cg_inline {
    int result; /* fn: the register of the value; filter: -1 */
    jlist *exits;
} cg_inline;

/* The function being generated. */
typedef struct cg_func {
    const sym *sym; /* its fn or filter (NULL for the tests' stub entry) */
    vm_insn *code;
    vm_pos *pos;
    uint32_t ninsns, capinsns, cappos;
    uint8_t *regtypes;
    uint32_t nregs, capregs;
    /* Temporaries: registers allocated for the statement being generated,
     * returned to a per-type free list when it is done. A register keeps
     * one type for the whole function (the verifier checks that), so reuse
     * is by type. */
    uint32_t *temps;
    uint32_t ntemps, captemps;
    uint32_t *freeregs[VM_T_MAX + 1];
    uint32_t nfree[VM_T_MAX + 1], capfree[VM_T_MAX + 1];
    uint32_t label; /* the last position a jump was patched to go to */
    /* The call being inlined, innermost, or NULL, and how deep. */
    cg_inline *inl;
    uint32_t inline_depth;
} cg_func;

typedef struct cg {
    compilation *c;
    int failed;    /* out of memory */
    cg_prog P;
    cg_func *F;    /* the function being generated */
    const ast *at; /* node whose position new instructions get */
} cg;

/* ---- emit.c ---- */

/* Grows *p (of *cap elements of `each` bytes) to hold `need`; returns 0,
 * or -1 and sets g->failed. */
int cg_grow(cg *g, void **p, uint32_t *cap, uint32_t need, size_t each);
#define GROW(g, arr, cap, need) cg_grow((g), (void **)&(arr), &(cap), (need), sizeof *(arr))

/* The index of a string or integer constant, added on first use. */
uint32_t cg_kstr(cg *g, const char *s, uint32_t len);
uint32_t cg_kint(cg *g, int64_t v);
/* The header slot of a lower-case header name, added on first use. */
uint32_t cg_header_slot(cg *g, const char *lname);
/* Appends an instruction at g->at's position; returns its index. */
uint32_t cg_emit(cg *g, vm_opcode op, uint32_t a, uint32_t b, uint32_t c);
uint32_t cg_emit_bx(cg *g, vm_opcode op, uint32_t a, uint32_t bx);
/* Emits R[dst] := R[src] with the move opcode of their type. */
void cg_emit_move(cg *g, uint32_t dst, uint32_t src);
/* A temporary register of type t (reused once its statement is done),
 * and a register of its own (a local, a parameter, an argument). */
int cg_new_reg(cg *g, vm_type t);
int cg_new_reg_raw(cg *g, vm_type t);
/* Returns the temporaries allocated since `mark` to the free lists,
 * except `keep` (a value that outlives the statement, or -1). */
void cg_release_temps(cg *g, uint32_t mark, int keep);
void cg_jl_add(cg *g, jlist *l, uint32_t at);
/* Points every jump in `l` at the next instruction to be emitted. */
void cg_jl_patch_here(cg *g, jlist *l);
/* The function index of `f`, queueing it for generation on first use. */
uint32_t cg_func_index(cg *g, sym *f);
/* The register type of a language type. */
vm_type cg_vm_type(ty t);
/* Starts a function: F (the caller's, zeroed here) becomes g->F, for
 * fn or filter f (NULL for a stub), positions from `at`. */
void cg_func_begin(cg *g, cg_func *F, const sym *f, const ast *at);
/* Ends g->F: its code, registers and positions go into `fn` (whose name,
 * kind, parameters and result the caller set), which the program keeps. */
void cg_func_end(cg *g, vm_func *fn);

/* ---- lower.c ---- */

/* The subject for a value of the given origin; dynamic values (origin
 * NONE) always get a new one. */
uint32_t cg_subject(cg *g, int origin, const char *oname);
/* Hyperscan's flags for a regex literal's i, s, m. */
uint32_t cg_hs_flags(const ast *re);
/* Returns the test answering `method(lit)` on `subject`, adding it and
 * its patterns on first use. */
uint32_t cg_test_for(cg *g, uint32_t subject, int method, const ast *lit);
/* The IP set of an IPSET literal: its ranges sorted and merged. */
uint32_t cg_ipset(cg *g, const ast *lit);
/* The int set of an INTSET literal: its values sorted, duplicates dropped. */
uint32_t cg_intset(cg *g, const ast *lit);
/* When `e` is a scan of a request field by a literal (what a string test
 * compiles to OP_SCANF), returns its receiver and sets *method and *lit;
 * otherwise NULL. */
ast *cg_field_scan(ast *e, int *method, ast **lit);
/* Two receivers read the same request field. */
int cg_same_field(const ast *a, const ast *b);
/* The operands of a chain of ||, left to right, into ops[] (up to max);
 * returns how many there are. */
uint32_t cg_or_operands(ast *e, ast **ops, uint32_t n, uint32_t max);
/* When condition `e` is true only if a field scan is, because it is one
 * or an || of several on the same request field, returns that field's
 * receiver (else NULL). */
ast *cg_cond_field(ast *e);
/* Test merging: the one test that answers the field scans ops[0..n) of
 * one field (an || run), or cond_field() condition `e`; stores the
 * subject in *s. */
uint32_t cg_merged_test(cg *g, ast *const *ops, uint32_t n, uint32_t *s);
uint32_t cg_merged_cond_test(cg *g, ast *e, uint32_t *s);
/* Chain guards: when `first` begins a long enough run (lower.c) of
 * `if FIELD-SCAN { ... }` on one field, returns 1, sets *end to the
 * statement after the run (NULL at the end of the block) and *test and
 * *s to the test that holds when any of the run's conditions may; else
 * returns 0. */
int cg_guard_run(cg *g, ast *first, ast **end, uint32_t *test, uint32_t *s);

/* ---- lower_capture.c ---- */

/* A capture of `re`'s group `grp` proven by test t of subject s (PCRE2
 * checks the regex and the group now). Returns its index, or -1 (an
 * error was reported). */
long cg_capture(cg *g, uint32_t s, uint32_t t, const ast *re, const ast *grp);

/* ---- lower_rewrite.c ---- */

/* Builds the main file's rewrite sets into g->P.rewrites, reporting every
 * problem of every rule at its place. */
void cg_rewrites(cg *g);

/* ---- translate.c ---- */

/* Generates fn or filter `f` into a new function of the program. */
void cg_translate_function(cg *g, sym *f);

#endif
