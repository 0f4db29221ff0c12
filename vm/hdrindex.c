/*
 * hdrindex.c: builds the header index that hdrindex.h looks names up in.
 */
#include "hdrindex.h"

/* The header index: slots inserted in order, so that a repeated name
 * finds its first slot, as the linear scan does. A rules file is input:
 * when the table would be large (more header slots than any real program
 * inspects) or a probe long (names crafted to collide, or one name in
 * many slots), there is no index and vm_hdr_slot compares with every
 * slot, so that loading stays linear in the file. */
#define VM_HDR_INDEX_MAX_SLOTS 4096
#define VM_HDR_INDEX_MAX_PROBE 32

clf_status vm_hdr_index_build(clf_program *p)
{
    uint32_t n = p->nhdrs;
    if (n == 0 || n > VM_HDR_INDEX_MAX_SLOTS) return CLF_OK;
    uint32_t size = 8;
    while (size < 4 * n) size *= 2;
    uint32_t *index = vm_calloc(&p->opts.alloc, size, sizeof *index);
    if (!index) return CLF_E_NOMEM;
    uint64_t lens = 0;
    for (uint32_t i = 0; i < n; i++) {
        const vm_const *k = &p->consts[p->hdrs[i]];
        lens |= vm_hdr_len_bit(k->len);
        uint32_t at = vm_hdr_hash(k->str, k->len) & (size - 1), probe = 0;
        while (index[at]) {
            if (++probe == VM_HDR_INDEX_MAX_PROBE) {
                vm_free(&p->opts.alloc, index);
                return CLF_OK;
            }
            at = (at + 1) & (size - 1);
        }
        index[at] = i + 1;
    }
    p->hdr_index = index;
    p->hdr_mask = size - 1;
    p->hdr_lens = lens;
    return CLF_OK;
}
