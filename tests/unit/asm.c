/* asm.c: see asm.h. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "asm.h"
#include "write.h"

uint8_t *asm_bytes(const asm_spec *s, size_t *len)
{
    vm_const consts[64];
    uint32_t n = 0;
    cr_assert(s->nstrs + 3 < 64);
    for (uint32_t i = 0; i < s->nstrs; i++)
        consts[n++] = (vm_const){VM_K_STR, (uint32_t)strlen(s->strs[i]), s->strs[i], 0};
    uint32_t hdr_k = n;
    if (s->header) consts[n++] = (vm_const){VM_K_STR, (uint32_t)strlen(s->header), s->header, 0};
    uint32_t name_k = n;
    consts[n++] = (vm_const){VM_K_STR, 4, "main", 0};
    consts[n++] = (vm_const){VM_K_INT, 0, NULL, INT64_C(1) << 40};

    uint32_t nregs = (uint32_t)strlen(s->regtypes);
    uint8_t types[256];
    for (uint32_t r = 0; r < nregs; r++) {
        char c = s->regtypes[r];
        types[r] = c == 'b' ? VM_T_BOOL : c == 'i' ? VM_T_INT : c == 's' ? VM_T_STR : (uint8_t)c;
    }
    vm_func f = {name_k, VM_FUNC_FILTER, 0, 0, nregs, s->ninsns, (vm_insn *)s->code, types, NULL,
                 VM_FUNC_ENTRY};
    clf_program p = {0};
    p.consts = consts;
    p.nconsts = n;
    p.funcs = &f;
    p.nfuncs = 1;
    p.hdrs = &hdr_k;
    p.nhdrs = s->header ? 1 : 0;
    uint8_t *out = NULL;
    char err[256];
    cr_assert_eq(cc_write(&p, &out, len, err, sizeof err), CLF_OK, "%s", err);
    return out;
}
