/*
 * asm.h: hand-assembled programs for VM and verifier tests. A test lists
 * instructions, register types and string constants; asm_bytes() turns
 * them into a rules file through the real writer (cc_write), so the bytes
 * are exactly what the loader sees from classifyc.
 */
#ifndef TESTS_ASM_H
#define TESTS_ASM_H

#include "program.h"

#define I(op, a, b, c) ((vm_insn){OP_##op, 0, (a), (b), (c)})
#define IBX(op, a, bx) ((vm_insn){OP_##op, 0, (a), (uint16_t)((bx) & 0xffff), (uint16_t)((uint32_t)(bx) >> 16)})

typedef struct asm_spec {
    const vm_insn *code;
    uint32_t ninsns;
    const char *regtypes; /* one char per register: b, i, s (or other bytes, raw) */
    const char *const *strs; /* string constants K0.. */
    uint32_t nstrs;
    const char *header; /* one header slot when non-NULL: its name is K[nstrs] */
} asm_spec;

/* Returns the rules-file bytes (malloc'd). */
uint8_t *asm_bytes(const asm_spec *s, size_t *len);

#endif
