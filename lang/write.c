/*
 * write.c: serializes a compiled program into the rules-file format of
 * vm/format.h, the compiler's last stage (write.h). Not part of the
 * runtime library: vm/load.c reads what this writes, and classifyc loads
 * what it wrote with that very loader before renaming it into place.
 */
#include <stdio.h>
#include <xxhash.h>

#include "bytes.h"
#include "format.h"
#include "program.h"
#include "rw_build.h"
#include "write.h"

static void put_section(vm_buf *out, uint32_t id, const vm_buf *sec,
                        size_t table_at)
{
    vm_buf_align8(out);
    size_t off = out->len;
    vm_buf_put(out, sec->data, sec->len);
    if (out->failed) return;
    uint8_t *e = out->data + table_at + (size_t)(id - 1) * VM_SECENTRY_LEN;
    vm_wr32(e, id);
    vm_wr32(e + 4, 0);
    vm_wr64(e + 8, off);
    vm_wr64(e + 16, sec->len);
}

static void enc_consts(vm_buf *b, const clf_program *p)
{
    vm_buf_u32(b, p->nconsts);
    vm_buf_u32(b, 0);
    uint64_t soff = 0;
    for (uint32_t i = 0; i < p->nconsts; i++) {
        const vm_const *k = &p->consts[i];
        vm_buf_u32(b, k->kind);
        vm_buf_u32(b, k->kind == VM_K_STR ? k->len : 0);
        if (k->kind == VM_K_STR) {
            vm_buf_u64(b, soff);
            soff += (uint64_t)k->len + 1;
        } else {
            vm_buf_u64(b, (uint64_t)k->i);
        }
    }
    for (uint32_t i = 0; i < p->nconsts; i++) {
        const vm_const *k = &p->consts[i];
        if (k->kind != VM_K_STR) continue;
        vm_buf_put(b, k->str, k->len);
        vm_buf_put(b, "", 1);
    }
}

static void enc_funcs(vm_buf *fn, vm_buf *code, vm_buf *types, vm_buf *pos,
                      const clf_program *p)
{
    vm_buf_u32(fn, p->nfuncs);
    vm_buf_u32(fn, p->entry);
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        const vm_func *F = &p->funcs[f];
        vm_buf_u32(fn, F->name);
        vm_buf_u32(fn, F->nregs);
        vm_buf_u32(fn, F->ninsns);
        vm_buf_u32(fn, (uint32_t)F->kind | (uint32_t)F->nparams << 8 | (uint32_t)F->ret << 16 |
                           (uint32_t)F->flags << 24);
        for (uint32_t i = 0; i < F->ninsns; i++) {
            uint8_t *q = vm_buf_grow(code, 8);
            if (q) {
                q[0] = F->code[i].op;
                q[1] = F->code[i].zero; /* 0 from the compiler */
                q[2] = (uint8_t)F->code[i].a; q[3] = (uint8_t)(F->code[i].a >> 8);
                q[4] = (uint8_t)F->code[i].b; q[5] = (uint8_t)(F->code[i].b >> 8);
                q[6] = (uint8_t)F->code[i].c; q[7] = (uint8_t)(F->code[i].c >> 8);
            }
            vm_buf_u32(pos, F->pos ? F->pos[i].file : VM_NO_REASON);
            vm_buf_u32(pos, F->pos ? F->pos[i].line : 0);
            vm_buf_u32(pos, F->pos ? F->pos[i].col : 0);
        }
        vm_buf_put(types, F->regtypes, F->nregs);
    }
}

clf_status cc_write(const clf_program *p, uint8_t **out, size_t *outlen,
                    char *err, size_t errlen)
{
    vm_buf sec[VM_SEC_COUNT + 1];
    vm_buf file = {0};
    clf_status st = CLF_OK;
    memset(sec, 0, sizeof sec);
    *out = NULL;
    *outlen = 0;

    enc_consts(&sec[VM_SEC_CONST], p);
    enc_funcs(&sec[VM_SEC_FUNC], &sec[VM_SEC_CODE], &sec[VM_SEC_TYPES],
              &sec[VM_SEC_POS], p);

    vm_buf_u32(&sec[VM_SEC_HDRS], p->nhdrs);
    for (uint32_t i = 0; i < p->nhdrs; i++) vm_buf_u32(&sec[VM_SEC_HDRS], p->hdrs[i]);

    vm_buf_u32(&sec[VM_SEC_SUBJ], p->nsubjects);
    for (uint32_t i = 0; i < p->nsubjects; i++) {
        vm_buf_u32(&sec[VM_SEC_SUBJ], p->subjects[i].kind);
        vm_buf_u32(&sec[VM_SEC_SUBJ], p->subjects[i].hdr);
        vm_buf_u32(&sec[VM_SEC_SUBJ], p->subjects[i].ntests);
        vm_buf_u32(&sec[VM_SEC_SUBJ], 0);
    }

    vm_buf_u32(&sec[VM_SEC_PAT], p->npatterns);
    for (uint32_t i = 0; i < p->npatterns; i++) {
        const vm_pattern *q = &p->patterns[i];
        vm_buf_u32(&sec[VM_SEC_PAT], q->subject);
        vm_buf_u32(&sec[VM_SEC_PAT], q->test);
        vm_buf_u32(&sec[VM_SEC_PAT], q->kind);
        vm_buf_u32(&sec[VM_SEC_PAT], q->flags);
        vm_buf_u32(&sec[VM_SEC_PAT], q->value);
        vm_buf_u32(&sec[VM_SEC_PAT], 0);
    }

    vm_buf *ips = &sec[VM_SEC_IPSET];
    vm_buf_u32(ips, p->nipsets);
    vm_buf_u32(ips, p->nranges);
    for (uint32_t i = 0; i < p->nipsets; i++) {
        vm_buf_u32(ips, p->ipsets[i].first);
        vm_buf_u32(ips, p->ipsets[i].count);
    }
    for (uint32_t i = 0; i < p->nranges; i++) {
        vm_buf_put(ips, p->ranges[i].lo, 16);
        vm_buf_put(ips, p->ranges[i].hi, 16);
    }

    vm_buf *is = &sec[VM_SEC_INTSET];
    vm_buf_u32(is, p->nintsets);
    vm_buf_u32(is, p->nints);
    for (uint32_t i = 0; i < p->nintsets; i++) {
        vm_buf_u32(is, p->intsets[i].first);
        vm_buf_u32(is, p->intsets[i].count);
    }
    for (uint32_t i = 0; i < p->nints; i++) vm_buf_u64(is, (uint64_t)p->ints[i]);

    vm_buf *sl = &sec[VM_SEC_STATE];
    vm_buf_u32(sl, p->nslots);
    vm_buf_u32(sl, 0);
    for (uint32_t i = 0; i < p->nslots; i++) {
        vm_buf_u32(sl, p->slots[i].kind);
        vm_buf_u32(sl, p->slots[i].keytype);
        vm_buf_u32(sl, p->slots[i].name);
        vm_buf_u32(sl, p->slots[i].param);
        vm_buf_u64(sl, (uint64_t)p->slots[i].amount);
    }

    vm_buf *cap = &sec[VM_SEC_CAPT];
    vm_buf_u32(cap, p->ncapts);
    vm_buf_u32(cap, 0);
    for (uint32_t i = 0; i < p->ncapts; i++) {
        const vm_capt *c = &p->capts[i];
        vm_buf_u32(cap, c->subject);
        vm_buf_u32(cap, c->test);
        vm_buf_u32(cap, c->flags);
        vm_buf_u32(cap, c->expr);
        vm_buf_u32(cap, c->group);
        vm_buf_u32(cap, 0);
    }

    /* Hyperscan databases: an offset table, then the serialized blobs. */
    vm_buf *db = &sec[VM_SEC_HSDB];
    size_t table = (size_t)p->nsubjects * 16;
    if (table && vm_buf_grow(db, table)) memset(db->data, 0, table);
    for (uint32_t i = 0; i < p->nsubjects && !db->failed; i++) {
        char *blob = NULL;
        size_t blen = 0;
        if (hs_serialize_database(p->subjects[i].db, &blob, &blen) != HS_SUCCESS) {
            vm_errf(err, errlen, "cannot serialize the Hyperscan database of subject %u", i);
            st = CLF_E_BACKEND;
            goto done;
        }
        vm_buf_align8(db);
        if (!db->failed) {
            vm_wr64(db->data + (size_t)i * 16, db->len);
            vm_wr64(db->data + (size_t)i * 16 + 8, blen);
        }
        vm_buf_put(db, blob, blen);
        free(blob); /* hs_serialize_database allocates with malloc */
    }

    /* Rewrite sets: an offset table, then each set's stored form. */
    vm_buf *rw = &sec[VM_SEC_REWRITE];
    vm_buf_u32(rw, p->nrewrites);
    vm_buf_u32(rw, 0);
    size_t rwtable = rw->len;
    if (p->nrewrites && vm_buf_grow(rw, (size_t)p->nrewrites * 24))
        memset(rw->data + rwtable, 0, (size_t)p->nrewrites * 24);
    for (uint32_t i = 0; i < p->nrewrites && !rw->failed; i++) {
        vm_buf_align8(rw);
        size_t at = rw->len;
        if (rw_set_serialize(p->rewrites[i].set, rw) != RW_OK && !rw->failed) {
            vm_errf(err, errlen, "cannot store rewrite set '%s'",
                    p->consts[p->rewrites[i].name].str);
            st = CLF_E_BACKEND;
            goto done;
        }
        if (rw->failed) break;
        uint8_t *e = rw->data + rwtable + (size_t)i * 24;
        vm_wr32(e, p->rewrites[i].name);
        vm_wr32(e + 4, 0);
        vm_wr64(e + 8, at);
        vm_wr64(e + 16, rw->len - at);
    }

    /* Which libhs built the databases above: another one rebuilds them. */
    vm_matcher m = vm_matcher_this();
    vm_buf_u32(&sec[VM_SEC_MATCHER], m.lib);
    vm_buf_u32(&sec[VM_SEC_MATCHER], m.version);

    uint8_t *h = vm_buf_grow(&file, VM_HEADER_LEN + VM_SEC_COUNT * VM_SECENTRY_LEN);
    if (h) {
        memset(h, 0, VM_HEADER_LEN + VM_SEC_COUNT * VM_SECENTRY_LEN);
        memcpy(h, VM_MAGIC, VM_MAGIC_LEN);
        vm_wr32(h + 8, VM_FORMAT_VERSION);
        vm_wr32(h + 12, VM_SEC_COUNT);
    }
    for (uint32_t id = 1; id <= VM_SEC_COUNT; id++)
        put_section(&file, id, &sec[id], VM_HEADER_LEN);
    vm_buf_align8(&file);
    size_t total = file.len + VM_TRAILER_LEN;
    if (!file.failed) vm_wr64(file.data + 16, total);
    if (!file.failed) {
        uint64_t sum = XXH3_64bits(file.data, file.len);
        vm_buf_u64(&file, sum);
    }
    for (uint32_t id = 1; id <= VM_SEC_COUNT; id++)
        if (sec[id].failed) file.failed = 1;
    if (file.failed) {
        vm_errf(err, errlen, "out of memory while writing the rules file");
        st = CLF_E_NOMEM;
        goto done;
    }
    *out = file.data;
    *outlen = file.len;
    file.data = NULL;
done:
    for (uint32_t id = 0; id <= VM_SEC_COUNT; id++) free(sec[id].data);
    free(file.data);
    return st;
}
