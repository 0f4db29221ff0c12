/*
 * test_verify.c: one case per verifier rejection class. Each assembles a
 * program that breaks exactly one rule and asserts the verifier's message,
 * which names the function and the instruction offset.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "asm.h"

static const char *const STRS[] = {"a", "b"};

static void expect(const vm_insn *code, uint32_t n, const char *types, const char *header,
                   const char *want)
{
    asm_spec sp = {code, n, types, STRS, 2, header};
    size_t len;
    uint8_t *b = asm_bytes(&sp, &len);
    clf_program *p = NULL;
    char err[CLF_ERRMSG_SIZE];
    clf_status st = clf_program_load(b, len, NULL, &p, err, sizeof err);
    free(b);
    if (!want) {
        cr_assert_eq(st, CLF_OK, "%s", err);
        clf_program_free(p);
        return;
    }
    cr_assert_eq(st, CLF_E_VERIFY, "expected a verifier error, got %d (%s)", st, err);
    cr_assert_str_eq(err, want);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

Test(verify, accepts_minimal)
{
    const vm_insn c[] = {IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "", NULL, NULL);
}

Test(verify, unknown_opcode)
{
    const vm_insn c[] = {{200, 0, 0, 0, 0}, IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "b", NULL, "function 'main', offset 0: unknown opcode 200");
}

Test(verify, reserved_byte)
{
    const vm_insn c[] = {{OP_LOADB, 1, 0, 1, 0}, IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "b", NULL, "function 'main', offset 0 (LOADB): reserved byte is 1, not 0");
}

Test(verify, register_out_of_range)
{
    const vm_insn c[] = {IBX(LOADB, 5, 1), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "b", NULL,
           "function 'main', offset 0 (LOADB): register operand A = 5 is out of range (1 registers)");
}

Test(verify, register_type_mismatch)
{
    const vm_insn c[] = {IBX(LOADI, 0, 1), IBX(JMPF, 0, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "i", NULL,
           "function 'main', offset 1 (JMPF): operand A: register 0 holds int, expected bool");
}

Test(verify, unknown_register_type)
{
    const vm_insn c[] = {IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "\x09", NULL, "function 'main', offset 0 (ACCEPT): register 0 has unknown type 9");
}

Test(verify, read_before_write)
{
    const vm_insn c[] = {IBX(JMPF, 0, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "b", NULL,
           "function 'main', offset 0 (JMPF): register 0 is read before it is written on some path");
}

Test(verify, read_before_write_on_one_path)
{
    /* R1 is written only when R0 is true, then read after the join. */
    const vm_insn c[] = {
        IBX(LOADB, 0, 1),
        IBX(JMPF, 0, 1),
        IBX(LOADB, 1, 1),
        IBX(JMPF, 1, 0),
        IBX(ACCEPT, 0, VM_NO_REASON),
    };
    expect(c, N(c), "bb", NULL,
           "function 'main', offset 3 (JMPF): register 1 is read before it is written on some path");
}

Test(verify, written_on_both_paths_is_fine)
{
    const vm_insn c[] = {
        IBX(LOADB, 0, 1), IBX(JMPF, 0, 2), IBX(LOADB, 1, 1), IBX(JMP, 0, 1),
        IBX(LOADB, 1, 0), IBX(JMPF, 1, 0), IBX(ACCEPT, 0, VM_NO_REASON),
    };
    expect(c, N(c), "bb", NULL, NULL);
}

Test(verify, constant_index_and_kind)
{
    const vm_insn c[] = {IBX(LOADK, 0, 77), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "s", NULL, "function 'main', offset 0 (LOADK): constant 77 is not a string constant");
    const vm_insn d[] = {IBX(LOADKI, 0, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(d, N(d), "i", NULL, "function 'main', offset 0 (LOADKI): constant 0 is not an integer constant");
    const vm_insn e[] = {IBX(REJECT, 0, 99)};
    expect(e, N(e), "", NULL, "function 'main', offset 0 (REJECT): reason 99 is not a string constant");
}

Test(verify, field_header_subject_ranges)
{
    const vm_insn f[] = {I(FIELD, 0, 3, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(f, N(f), "s", NULL, "function 'main', offset 0 (FIELD): request field 3 does not exist");
    const vm_insn h[] = {I(HEADER, 0, 1, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(h, N(h), "s", "user-agent",
           "function 'main', offset 0 (HEADER): header slot 1 is out of range (1 slots)");
    const vm_insn s[] = {I(SCANF, 0, 0, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(s, N(s), "b", NULL,
           "function 'main', offset 0 (SCANF): subject 0 is out of range (0 subjects)");
}

Test(verify, unused_operand_not_zero)
{
    const vm_insn c[] = {I(NOT, 0, 1, 5), IBX(LOADB, 1, 0), IBX(ACCEPT, 0, VM_NO_REASON)};
    (void)c;
    const vm_insn d[] = {IBX(LOADB, 1, 0), I(NOT, 0, 1, 5), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(d, N(d), "bb", NULL, "function 'main', offset 1 (NOT): unused operand C is 5, not 0");
}

Test(verify, jump_outside_function)
{
    const vm_insn c[] = {IBX(JMP, 0, 5), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "", NULL,
           "function 'main', offset 0 (JMP): jump target 6 is outside the function (2 instructions)");
    /* A jump to just past the end would run off it. */
    const vm_insn d[] = {IBX(JMP, 0, 1), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(d, N(d), "", NULL,
           "function 'main', offset 0 (JMP): jump target 2 is outside the function (2 instructions)");
}

Test(verify, backward_jump_is_impossible_to_encode)
{
    /* Offsets are unsigned: 0xffffffff is a forward jump far out of range,
     * never a jump back. */
    const vm_insn c[] = {IBX(JMP, 0, 0xffffffffu), IBX(ACCEPT, 0, VM_NO_REASON)};
    expect(c, N(c), "", NULL,
           "function 'main', offset 0 (JMP): jump target 4294967296 is outside the function (2 instructions)");
}

Test(verify, must_end_in_terminal)
{
    const vm_insn c[] = {IBX(LOADB, 0, 1)};
    expect(c, N(c), "b", NULL,
           "function 'main', offset 0 (LOADB): the function does not end with accept or reject");
}
