/*
 * verify.c: the bytecode verifier. A program that passes cannot read or
 * write outside its registers, constants, header slots, subjects or scan
 * bits, cannot read a register before writing it, cannot see a value of
 * the wrong type, and terminates, whatever the request.
 *
 * Rules, per function:
 *   - every opcode exists and its spare byte is 0;
 *   - every operand is of the kind opcodes.def gives it: registers in
 *     range and of the stated type, constants of the right kind, fields,
 *     header slots, subjects and tests in range, unused operands 0;
 *   - jumps go forward and land inside the function;
 *   - the last instruction is ACCEPT or REJECT, so control cannot run off
 *     the end;
 *   - on every path, each register is written before it is read.
 * Because all jumps go forward, one pass in program order is a complete
 * data-flow analysis: when we reach an instruction, every path into it has
 * been seen. The state at a jump target is the intersection of the states
 * of the jumps into it and of the fall-through.
 */
#include <stdlib.h>
#include <string.h>

#include "program.h"

typedef struct verifier {
    const clf_program *p;
    const vm_func *f;
    uint32_t fi, pc;
    char *err;
    size_t errlen;
} verifier;

#define VFAIL(v, ...)                                                       \
    do {                                                                   \
        char msg_[160];                                                    \
        vm_errf(msg_, sizeof msg_, __VA_ARGS__);                           \
        vm_errf((v)->err, (v)->errlen, "function '%s', offset %u (%s): %s", \
                (v)->p->consts[(v)->f->name].str, (v)->pc,                 \
                (v)->f->code[(v)->pc].op < VM_OP_COUNT                     \
                    ? vm_opinfo_table[(v)->f->code[(v)->pc].op].name       \
                    : "?",                                                 \
                msg_);                                                     \
        return CLF_E_VERIFY;                                               \
    } while (0)

static const char *const type_names[] = {"?", "bool", "int", "str"};

static int bit(const uint64_t *s, uint32_t r) { return (int)(s[r / 64] >> (r % 64) & 1); }

/* Checks one operand; `defined` is the set of registers written on every
 * path to this instruction. */
static clf_status check_operand(verifier *v, int which, vm_operand k,
                                uint32_t val, const uint64_t *defined)
{
    const clf_program *p = v->p;
    const vm_insn *in = &v->f->code[v->pc];
    static const char names[] = "ABC";
    vm_type t = vm_operand_regtype(k);
    if (t) {
        if (val >= v->f->nregs)
            VFAIL(v, "register operand %c = %u is out of range (%u registers)",
                  names[which], val, v->f->nregs);
        if (v->f->regtypes[val] != t)
            VFAIL(v, "operand %c: register %u holds %s, expected %s", names[which], val,
                  type_names[v->f->regtypes[val] <= 3 ? v->f->regtypes[val] : 0],
                  type_names[t]);
        if (!vm_operand_writes(k) && defined && !bit(defined, val))
            VFAIL(v, "register %u is read before it is written on some path", val);
        return CLF_OK;
    }
    switch (k) {
    case VM_OPND_NONE:
        if (val != 0) VFAIL(v, "unused operand %c is %u, not 0", names[which], val);
        break;
    case VM_OPND_KS:
    case VM_OPND_KI:
        if (val >= p->nconsts || p->consts[val].kind != (k == VM_OPND_KS ? VM_K_STR : VM_K_INT))
            VFAIL(v, "constant %u is not a%s constant", val, k == VM_OPND_KS ? " string" : "n integer");
        break;
    case VM_OPND_KR:
        if (val != VM_NO_REASON && (val >= p->nconsts || p->consts[val].kind != VM_K_STR))
            VFAIL(v, "reason %u is not a string constant", val);
        break;
    case VM_OPND_IMM:
        break;
    case VM_OPND_FLD:
        if (val >= VM_FIELD_COUNT) VFAIL(v, "request field %u does not exist", val);
        break;
    case VM_OPND_HDR:
        if (val >= p->nhdrs) VFAIL(v, "header slot %u is out of range (%u slots)", val, p->nhdrs);
        break;
    case VM_OPND_SUBJ:
        if (val >= p->nsubjects) VFAIL(v, "subject %u is out of range (%u subjects)", val, p->nsubjects);
        if ((in->op == OP_SCAND) != (p->subjects[val].kind == VM_SUBJ_DYNAMIC))
            VFAIL(v, "subject %u is of the wrong kind for this opcode", val);
        break;
    case VM_OPND_TEST:
        /* The subject is operand B, already checked. */
        if (val >= p->subjects[in->b].ntests)
            VFAIL(v, "test %u is out of range (subject %u has %u tests)", val, in->b,
                  p->subjects[in->b].ntests);
        break;
    case VM_OPND_JMP:
        if ((uint64_t)v->pc + 1 + val >= v->f->ninsns)
            VFAIL(v, "jump target %llu is outside the function (%u instructions)",
                  (unsigned long long)v->pc + 1 + val, v->f->ninsns);
        break;
    default:
        VFAIL(v, "bad operand kind");
    }
    return CLF_OK;
}

static clf_status verify_func(verifier *v)
{
    const vm_func *f = v->f;
    size_t words = ((size_t)f->nregs + 63) / 64 + 1;
    clf_status st = CLF_OK;

    for (uint32_t r = 0; r < f->nregs; r++)
        if (f->regtypes[r] < VM_T_BOOL || f->regtypes[r] > VM_T_STR) {
            v->pc = 0;
            VFAIL(v, "register %u has unknown type %u", r, f->regtypes[r]);
        }
    uint8_t last = f->code[f->ninsns - 1].op;
    if (last != OP_ACCEPT && last != OP_REJECT) {
        v->pc = f->ninsns - 1;
        VFAIL(v, "the function does not end with accept or reject");
    }

    /* Give each jump target a state slot. */
    const vm_allocator *al = &v->p->opts.alloc;
    uint32_t *slot = vm_calloc(al, f->ninsns, sizeof *slot);
    uint32_t ntargets = 0;
    if (!slot) goto nomem;
    for (uint32_t i = 0; i < f->ninsns; i++) slot[i] = UINT32_MAX;
    for (uint32_t i = 0; i < f->ninsns; i++) {
        const vm_insn *in = &f->code[i];
        if (in->op < VM_OP_COUNT && vm_opinfo_table[in->op].opnd[1] == VM_OPND_JMP) {
            uint64_t t = (uint64_t)i + 1 + VM_BX(*in);
            if (t < f->ninsns && slot[t] == UINT32_MAX) slot[t] = ntargets++;
        }
    }
    /* Each target: `words` words of bits, the last one a "reached" flag. */
    if (ntargets && words > (SIZE_MAX / 8) / ntargets) goto nomem;
    uint64_t *tstate = vm_malloc(al, (size_t)ntargets * words * 8);
    uint64_t *cur = vm_malloc(al, words * 8);
    if (!tstate || !cur) {
        vm_free(al, tstate);
        vm_free(al, cur);
        goto nomem;
    }
    for (size_t i = 0; i < (size_t)ntargets * words; i++)
        tstate[i] = (i % words == words - 1) ? 0 : ~UINT64_C(0);

    int reach = 1; /* reachable by falling through from the previous insn */
    memset(cur, 0, words * 8);
    for (uint32_t pc = 0; pc < f->ninsns && !st; pc++) {
        v->pc = pc;
        const vm_insn *in = &f->code[pc];
        if (slot[pc] != UINT32_MAX) {
            uint64_t *ts = tstate + (size_t)slot[pc] * words;
            if (ts[words - 1]) { /* some jump reaches here */
                for (size_t w = 0; w + 1 < words; w++) cur[w] = reach ? cur[w] & ts[w] : ts[w];
                reach = 1;
            }
        }
        if (!reach) /* unreachable: never runs, so any read is safe */
            memset(cur, 0xff, words * 8);
        if (in->op >= VM_OP_COUNT) {
            vm_errf(v->err, v->errlen, "function '%s', offset %u: unknown opcode %u",
                    v->p->consts[f->name].str, pc, in->op);
            st = CLF_E_VERIFY;
            break;
        }
        const vm_opinfo *oi = &vm_opinfo_table[in->op];
        if (in->zero != 0) {
            vm_errf(v->err, v->errlen, "function '%s', offset %u (%s): reserved byte is %u, not 0",
                    v->p->consts[f->name].str, pc, oi->name, in->zero);
            st = CLF_E_VERIFY;
            break;
        }
        /* Reads first (A may be read, B/C are), then the write. */
        int wide = vm_operand_is_wide((vm_operand)oi->opnd[1]);
        uint32_t vals[3] = {in->a, wide ? VM_BX(*in) : in->b, in->c};
        for (int k = 0; k < 3 && !st; k++) {
            if (k == 2 && wide) break;
            if (!vm_operand_writes((vm_operand)oi->opnd[k]))
                st = check_operand(v, k, (vm_operand)oi->opnd[k], vals[k], cur);
        }
        for (int k = 0; k < 3 && !st; k++)
            if (vm_operand_writes((vm_operand)oi->opnd[k])) {
                st = check_operand(v, k, (vm_operand)oi->opnd[k], vals[k], NULL);
                if (!st) cur[vals[k] / 64] |= UINT64_C(1) << (vals[k] % 64);
            }
        if (st) break;
        if (oi->opnd[1] == VM_OPND_JMP && reach) {
            uint64_t *ts = tstate + (size_t)slot[pc + 1 + VM_BX(*in)] * words;
            for (size_t w = 0; w + 1 < words; w++) ts[w] &= cur[w];
            ts[words - 1] = 1;
        }
        if (in->op == OP_JMP || in->op == OP_ACCEPT || in->op == OP_REJECT) reach = 0;
    }
    vm_free(al, slot);
    vm_free(al, tstate);
    vm_free(al, cur);
    return st;
nomem:
    vm_free(al, slot);
    vm_errf(v->err, v->errlen, "out of memory while verifying function '%s'",
            v->p->consts[f->name].str);
    return CLF_E_NOMEM;
}

clf_status vm_verify(const clf_program *p, char *err, size_t errlen)
{
    verifier v = {.p = p, .err = err, .errlen = errlen};
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        v.f = &p->funcs[f];
        v.fi = f;
        clf_status st = verify_func(&v);
        if (st) return st;
    }
    return CLF_OK;
}
