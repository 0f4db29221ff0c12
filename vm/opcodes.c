/* opcodes.c: tables generated from opcodes.def. */
#include "opcodes.h"

const char *const vm_field_names[VM_FIELD_COUNT] = {"method", "path", "query", "rdns"};

const vm_opinfo vm_opinfo_table[VM_OP_COUNT] = {
#define OP(name, a, b, c, flags, synopsis, explain) \
    {#name, {VM_OPND_##a, VM_OPND_##b, VM_OPND_##c}, (flags), synopsis, explain},
#include "opcodes.def"
#undef OP
};

int vm_operand_is_wide(vm_operand k)
{
    return k == VM_OPND_KS || k == VM_OPND_KI || k == VM_OPND_KR || k == VM_OPND_KIP ||
           k == VM_OPND_IMM || k == VM_OPND_JMP;
}

vm_type vm_operand_regtype(vm_operand k)
{
    switch (k) {
    case VM_OPND_WB: case VM_OPND_RB: return VM_T_BOOL;
    case VM_OPND_WI: case VM_OPND_RI: return VM_T_INT;
    case VM_OPND_WS: case VM_OPND_RS: return VM_T_STR;
    case VM_OPND_WP: case VM_OPND_RP: return VM_T_IP;
    default: return (vm_type)0;
    }
}

vm_opcode vm_op_move(vm_type t)
{
    for (int op = 0; op < VM_OP_COUNT; op++)
        if ((vm_opinfo_table[op].flags & VM_OPF_MOVE) &&
            vm_operand_regtype((vm_operand)vm_opinfo_table[op].opnd[0]) == t)
            return (vm_opcode)op;
    return VM_OP_COUNT; /* no such type: the verifier would refuse it */
}

int vm_operand_writes(vm_operand k)
{
    return k == VM_OPND_WB || k == VM_OPND_WI || k == VM_OPND_WS || k == VM_OPND_WP ||
           k == VM_OPND_WANY;
}
