/*
 * opcodes.h: the VM instruction set, generated from opcodes.def.
 *
 * An instruction is 8 bytes: opcode, a zero byte, and three 16-bit
 * operands A, B, C. Some opcodes read B and C together as one 32-bit
 * operand Bx = B | C << 16 (constant indices, jump offsets, immediates).
 */
#ifndef VM_OPCODES_H
#define VM_OPCODES_H

#include <stdint.h>

typedef enum vm_opcode {
#define OP(name, a, b, c, flags, synopsis, explain) OP_##name,
#include "opcodes.def"
#undef OP
    VM_OP_COUNT
} vm_opcode;

_Static_assert(VM_OP_COUNT <= 256, "an opcode must fit in one byte");

/* What an operand is; see opcodes.def for the meaning of each kind. */
typedef enum vm_operand {
    VM_OPND_NONE = 0,
    VM_OPND_WB, VM_OPND_WI, VM_OPND_WS, VM_OPND_WP, /* register written */
    VM_OPND_RB, VM_OPND_RI, VM_OPND_RS, VM_OPND_RP, /* register read */
    VM_OPND_WANY, /* register written, of the called function's return type */
    VM_OPND_RANY, /* register read, of this function's return type */
    VM_OPND_KS, VM_OPND_KI, VM_OPND_KR, VM_OPND_KIP, /* constants (Bx) */
    VM_OPND_IMM,                        /* signed immediate (Bx) */
    VM_OPND_FLD, VM_OPND_HDR, VM_OPND_SUBJ, VM_OPND_TEST,
    VM_OPND_FUNC, VM_OPND_ARGS, VM_OPND_IPSET, VM_OPND_INTSET, VM_OPND_CAPT,
    VM_OPND_JMP,                        /* forward offset (Bx) */
    VM_OPND_SLOT,                       /* state slot index */
    VM_OPND_RKEY                        /* register read, of slot B's key type */
} vm_operand;

/* Register types, as stored per register in the rules file. An ip is
 * held like a str: 16 bytes (IPv4 as IPv4-mapped IPv6), or 0 bytes for
 * an address that did not parse. */
typedef enum vm_type { VM_T_BOOL = 1, VM_T_INT = 2, VM_T_STR = 3, VM_T_IP = 4 } vm_type;
#define VM_T_MAX VM_T_IP

/* Function kinds: a filter decides (or passes), a fn returns a value. */
enum { VM_FUNC_FILTER = 0, VM_FUNC_FN = 1 };

/* Function flags (vm_func.flags). An entry is a filter of the compiled
 * file that decides on every path, so a host may run it for a verdict
 * (clf_eval_filter); `main` is always one. ROOT: declared in the compiled
 * file (not an import), so that clf_program_find_filter can say why a
 * filter of that file is not an entry. */
enum { VM_FUNC_ENTRY = 1, VM_FUNC_ROOT = 2 };

typedef struct vm_insn {
    uint8_t op;
    uint8_t zero; /* must be 0: keeps the format open for later flags */
    uint16_t a, b, c;
} vm_insn;

#define VM_BX(in) ((uint32_t)(in).b | ((uint32_t)(in).c << 16))
#define VM_SBX(in) ((int32_t)VM_BX(in))
#define VM_NO_REASON UINT32_C(0xffffffff)

/* Request fields addressed by OP_FIELD (and the subject kinds below). */
enum { VM_FIELD_METHOD = 0, VM_FIELD_PATH = 1, VM_FIELD_QUERY = 2,
       VM_FIELD_RDNS = 3, /* clf_ctx_set_rdns: not a pattern subject */
       VM_FIELD_COUNT = 4 };
/* Their names in --dump and --explain ("method", ...: opcodes.c). */
extern const char *const vm_field_names[VM_FIELD_COUNT];

/* Opcode flags (the FLAGS column of opcodes.def, which says what each
 * means and who reads it). */
enum {
    VM_OPF_END = 1 << 0,
    VM_OPF_GOTO = 1 << 1,
    VM_OPF_BRANCH = 1 << 2,
    VM_OPF_CALL = 1 << 3,
    VM_OPF_FN = 1 << 4,
    VM_OPF_FILTER = 1 << 5,
    VM_OPF_NOENTRY = 1 << 6,
    VM_OPF_CMP = 1 << 7,
    VM_OPF_VERDICT = 1 << 8,
    VM_OPF_IFFALSE = 1 << 9,
    VM_OPF_MOVE = 1 << 10
};

/* Control leaves the instruction other than by falling through to the
 * next one (explain tells these before they run). */
#define VM_OPF_CONTROL (VM_OPF_END | VM_OPF_GOTO | VM_OPF_BRANCH | VM_OPF_CALL)

typedef struct vm_opinfo {
    const char *name;
    uint8_t opnd[3]; /* vm_operand of A, B, C */
    uint16_t flags;  /* VM_OPF_* */
    const char *synopsis; /* the register transfer (classifyc --dump) */
    const char *explain;  /* the explain step's template ("" for none) */
} vm_opinfo;

extern const vm_opinfo vm_opinfo_table[VM_OP_COUNT];

/* True when operand kind k occupies B and C together. */
int vm_operand_is_wide(vm_operand k);
/* The register type an operand kind reads or writes, or 0. */
vm_type vm_operand_regtype(vm_operand k);
/* True for register operands that are written. */
int vm_operand_writes(vm_operand k);
/* The MOVE opcode for registers of type t (from the table). */
vm_opcode vm_op_move(vm_type t);

#endif
