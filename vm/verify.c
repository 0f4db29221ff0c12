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
 *   - the last instruction is ACCEPT, REJECT, RET (a fn) or PASS (a
 *     filter), so control cannot run off the end; RET only in a fn, PASS
 *     only in a filter that is not an entry (VM_FUNC_ENTRY: `main` and
 *     the other filters a host may run for a verdict), ACCEPT and REJECT
 *     only in filters; an entry is a filter;
 *   - calls name a function of the right kind with arguments of its
 *     parameter types, and a fn's result lands in a register of its type;
 *   - on every path, each register is written before it is read (a fn's
 *     parameters are written on entry).
 * Then, for the whole program, the call graph must be acyclic and at
 * most VM_MAX_CALL_DEPTH deep, so that every run terminates and the
 * register stack of the deepest chain (prog->stack_regs) is known.
 * Because all jumps go forward, one pass in program order is a complete
 * data-flow analysis: when we reach an instruction, every path into it has
 * been seen. The state at a jump target is the intersection of the states
 * of the jumps into it and of the fall-through.
 */
#include <stdlib.h>
#include <string.h>

#include "bitset.h"
#include "program.h"
#include "store.h"

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

static const char *const type_names[] = {"?", "bool", "int", "str", "ip"};


/* Checks one operand; `defined` is the set of registers written on every
 * path to this instruction. */
static clf_status check_operand(verifier *v, int which, vm_operand k,
                                uint32_t val, const uint64_t *defined)
{
    const clf_program *p = v->p;
    const vm_insn *in = &v->f->code[v->pc];
    static const char names[] = "ABC";
    vm_type t = vm_operand_regtype(k);
    if (k == VM_OPND_WANY) t = (vm_type)p->funcs[in->b].ret; /* B was checked first */
    if (k == VM_OPND_RANY) t = (vm_type)v->f->ret;
    if (k == VM_OPND_RKEY) { /* the slot, operand B, was checked first */
        uint32_t kt = p->slots[in->b].keytype;
        t = kt == VM_KEY_IP ? VM_T_IP : kt == VM_KEY_INT ? VM_T_INT : VM_T_STR;
    }
    if (t || k == VM_OPND_WANY || k == VM_OPND_RANY) {
        if (val >= v->f->nregs)
            VFAIL(v, "register operand %c = %u is out of range (%u registers)",
                  names[which], val, v->f->nregs);
        if (v->f->regtypes[val] != t)
            VFAIL(v, "operand %c: register %u holds %s, expected %s", names[which], val,
                  type_names[v->f->regtypes[val] <= VM_T_MAX ? v->f->regtypes[val] : 0],
                  type_names[t]);
        if (!vm_operand_writes(k) && defined && !vm_bit_test(defined, val))
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
    case VM_OPND_KIP:
        if (val >= p->nconsts || p->consts[val].kind != VM_K_STR || p->consts[val].len != 16)
            VFAIL(v, "constant %u is not a 16-byte IP address", val);
        break;
    case VM_OPND_FUNC: {
        if (val >= p->nfuncs) VFAIL(v, "function %u is out of range (%u functions)", val, p->nfuncs);
        /* A call with a result (A of kind WANY: CALL) runs a fn, one
         * without (CALLF) a filter. */
        int want = vm_opinfo_table[in->op].opnd[0] == VM_OPND_WANY ? VM_FUNC_FN : VM_FUNC_FILTER;
        if (p->funcs[val].kind != want)
            VFAIL(v, "function %u is a %s, not a %s", val,
                  p->funcs[val].kind == VM_FUNC_FN ? "fn" : "filter",
                  want == VM_FUNC_FN ? "fn" : "filter");
        break;
    }
    case VM_OPND_ARGS: {
        const vm_func *g = &p->funcs[in->b]; /* B was checked first */
        if (g->nparams == 0) {
            if (val != 0) VFAIL(v, "argument base %u for a function without parameters", val);
            break;
        }
        if ((uint64_t)val + g->nparams > v->f->nregs)
            VFAIL(v, "arguments %u..%u are out of range (%u registers)", val,
                  val + g->nparams - 1, v->f->nregs);
        for (uint32_t i = 0; i < g->nparams; i++) {
            if (v->f->regtypes[val + i] != g->regtypes[i])
                VFAIL(v, "argument %u (register %u) holds %s, the parameter is %s", i, val + i,
                      type_names[v->f->regtypes[val + i] <= VM_T_MAX ? v->f->regtypes[val + i] : 0],
                      type_names[g->regtypes[i] <= VM_T_MAX ? g->regtypes[i] : 0]);
            if (defined && !vm_bit_test(defined, val + i))
                VFAIL(v, "register %u is read before it is written on some path", val + i);
        }
        break;
    }
    case VM_OPND_IPSET:
        if (val >= p->nipsets) VFAIL(v, "IP set %u is out of range (%u sets)", val, p->nipsets);
        break;
    case VM_OPND_INTSET:
        if (val >= p->nintsets)
            VFAIL(v, "int set %u is out of range (%u sets)", val, p->nintsets);
        break;
    case VM_OPND_SLOT: {
        if (val >= p->nslots) VFAIL(v, "state slot %u is out of range (%u slots)", val, p->nslots);
        /* Each state opcode works on one kind of entry, and only
         * score_add adds (an amount the loader bounded). */
        vm_opcode op = (vm_opcode)in->op;
        uint32_t want = op == OP_STCOUNT || op == OP_STCOUNTED ? CLF_STATE_COUNTER
                        : op == OP_STSCADD || op == OP_STSCORE ? CLF_STATE_SCORE
                                                               : CLF_STATE_MARK;
        if (p->slots[val].kind != want)
            VFAIL(v, "state slot %u is of the wrong kind for this opcode", val);
        if ((op == OP_STSCADD) != (p->slots[val].amount > 0))
            VFAIL(v, "state slot %u: only score_add has an amount, and it has one", val);
        break;
    }
    case VM_OPND_CAPT:
        if (val >= p->ncapts) VFAIL(v, "capture %u is out of range (%u captures)", val, p->ncapts);
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
        /* A test operand C (SCANF) reads a request subject's scan; a
         * value in C (SCAND) is scanned against a dynamic subject. */
        if ((vm_opinfo_table[in->op].opnd[2] != VM_OPND_TEST) !=
            (p->subjects[val].kind == VM_SUBJ_DYNAMIC))
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

/* An opcode's name in lower case ("pass"), for messages. */
static const char *lower_name(const vm_opinfo *oi, char *buf, size_t cap)
{
    size_t i = 0;
    for (; oi->name[i] && i + 1 < cap; i++)
        buf[i] = (char)(oi->name[i] >= 'A' && oi->name[i] <= 'Z' ? oi->name[i] + 32 : oi->name[i]);
    buf[i] = 0;
    return buf;
}

static clf_status verify_func(verifier *v)
{
    const vm_func *f = v->f;
    char name[16];
    size_t words = VM_BITSET_WORDS(f->nregs) + 1;
    clf_status st = CLF_OK;

    for (uint32_t r = 0; r < f->nregs; r++)
        if (f->regtypes[r] < VM_T_BOOL || f->regtypes[r] > VM_T_MAX) {
            v->pc = 0;
            VFAIL(v, "register %u has unknown type %u", r, f->regtypes[r]);
        }
    uint8_t last = f->code[f->ninsns - 1].op;
    if (last >= VM_OP_COUNT || !(vm_opinfo_table[last].flags & VM_OPF_END)) {
        v->pc = f->ninsns - 1;
        VFAIL(v, "the function does not end with accept, reject, ret or pass");
    }
    for (uint32_t pc = 0; pc < f->ninsns; pc++) {
        uint8_t op = f->code[pc].op;
        v->pc = pc;
        if (op >= VM_OP_COUNT) continue; /* reported in order below */
        const vm_opinfo *oi = &vm_opinfo_table[op];
        if ((oi->flags & VM_OPF_FN) && f->kind != VM_FUNC_FN)
            VFAIL(v, "%s in a filter", lower_name(oi, name, sizeof name));
        if ((oi->flags & VM_OPF_FILTER) && f->kind != VM_FUNC_FILTER)
            VFAIL(v, "%s in a fn", lower_name(oi, name, sizeof name));
        /* Harmless, but the language forbids it: a fn computes, a filter decides. */
        if ((oi->flags & VM_OPF_VERDICT) && f->kind != VM_FUNC_FILTER)
            VFAIL(v, "a verdict in a fn");
        if ((oi->flags & VM_OPF_NOENTRY) && (f->flags & VM_FUNC_ENTRY))
            VFAIL(v, "%s in an entry filter", lower_name(oi, name, sizeof name));
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
    for (uint32_t r = 0; r < f->nparams; r++) vm_bit_set(cur, r);
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
                if (!st) vm_bit_set(cur, vals[k]);
            }
        if (st) break;
        if (oi->opnd[1] == VM_OPND_JMP && reach) {
            uint64_t *ts = tstate + (size_t)slot[pc + 1 + VM_BX(*in)] * words;
            for (size_t w = 0; w + 1 < words; w++) ts[w] &= cur[w];
            ts[words - 1] = 1;
        }
        if (oi->flags & (VM_OPF_END | VM_OPF_GOTO)) reach = 0;
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

/* The call graph: acyclic, at most VM_MAX_CALL_DEPTH deep. An iterative
 * depth-first search computes, per function, the registers of its deepest
 * call chain (its own plus its deepest callee's) and that chain's length. */
static clf_status check_calls(verifier *v, clf_program *p)
{
    const vm_allocator *al = &p->opts.alloc;
    uint32_t n = p->nfuncs;
    uint8_t *color = vm_calloc(al, n, 1);
    uint64_t *stack = vm_calloc(al, n, sizeof *stack);
    uint32_t *depth = vm_calloc(al, n, sizeof *depth);
    uint32_t *work = vm_calloc(al, (size_t)n + 1, sizeof *work); /* function */
    uint32_t *at = vm_calloc(al, (size_t)n + 1, sizeof *at);     /* its next pc */
    clf_status st = CLF_OK;
    if (!color || !stack || !depth || !work || !at) {
        vm_errf(v->err, v->errlen, "out of memory while verifying calls");
        st = CLF_E_NOMEM;
        goto done;
    }
    for (uint32_t root = 0; root < n && !st; root++) {
        if (color[root]) continue;
        uint32_t sp = 0;
        work[sp] = root;
        at[sp++] = 0;
        color[root] = 1;
        while (sp && !st) {
            uint32_t fi = work[sp - 1];
            const vm_func *f = &p->funcs[fi];
            uint32_t pc = at[sp - 1];
            while (pc < f->ninsns && !(vm_opinfo_table[f->code[pc].op].flags & VM_OPF_CALL)) pc++;
            if (pc == f->ninsns) { /* done: fold the callees' results */
                uint64_t deepest = 0;
                uint32_t d = 0;
                for (uint32_t i = 0; i < f->ninsns; i++)
                    if (vm_opinfo_table[f->code[i].op].flags & VM_OPF_CALL) {
                        uint32_t g = f->code[i].b;
                        if (stack[g] > deepest) deepest = stack[g];
                        if (depth[g] > d) d = depth[g];
                    }
                stack[fi] = f->nregs + deepest;
                depth[fi] = d + 1;
                color[fi] = 2;
                sp--;
                if (depth[fi] > VM_MAX_CALL_DEPTH) {
                    vm_errf(v->err, v->errlen, "function '%s': calls nest %u deep, more than %d",
                            p->consts[f->name].str, depth[fi], VM_MAX_CALL_DEPTH);
                    st = CLF_E_VERIFY;
                }
                continue;
            }
            at[sp - 1] = pc + 1;
            uint32_t g = f->code[pc].b;
            if (color[g] == 1) {
                vm_errf(v->err, v->errlen, "function '%s', offset %u (%s): the call graph has a "
                        "cycle through '%s'", p->consts[f->name].str, pc,
                        vm_opinfo_table[f->code[pc].op].name, p->consts[p->funcs[g].name].str);
                st = CLF_E_VERIFY;
            } else if (color[g] == 0) {
                color[g] = 1;
                work[sp] = g;
                at[sp++] = 0;
            }
        }
    }
    for (uint32_t i = 0; i < n && !st; i++) {
        if (stack[i] > p->stack_regs) p->stack_regs = (uint32_t)(stack[i] > UINT32_MAX ? UINT32_MAX : stack[i]);
        if (depth[i] > p->max_depth) p->max_depth = depth[i];
    }
    if (!st && p->stack_regs > p->opts.registers) {
        vm_errf(v->err, v->errlen, "the deepest chain of calls uses %u registers, over the "
                "limit of %llu (CLF_LIMIT_REGISTERS)", p->stack_regs,
                (unsigned long long)p->opts.registers);
        st = CLF_E_LIMIT;
    }
done:
    vm_free(al, color);
    vm_free(al, stack);
    vm_free(al, depth);
    vm_free(al, work);
    vm_free(al, at);
    return st;
}

clf_status vm_verify(clf_program *p, char *err, size_t errlen)
{
    verifier v = {.p = p, .err = err, .errlen = errlen};
    for (uint32_t f = 0; f < p->nfuncs; f++)
        if ((p->funcs[f].flags & VM_FUNC_ENTRY) && p->funcs[f].kind != VM_FUNC_FILTER) {
            vm_errf(err, errlen, "the entry function '%s' is not a filter",
                    p->consts[p->funcs[f].name].str);
            return CLF_E_VERIFY;
        }
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        v.f = &p->funcs[f];
        v.fi = f;
        clf_status st = verify_func(&v);
        if (st) return st;
    }
    return check_calls(&v, p);
}
