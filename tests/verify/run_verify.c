/*
 * run_verify.c: data-driven verifier tests (TAP), one file per rejection
 * class, in the manner of uBPF's tests/errors. Each CASE.vasm holds a
 * hand-written function and the exact message the loader must give:
 *
 *   # comment
 *   regs b b i s          register types (b bool, i int, s str, or a number)
 *   strs a b              string constants K0, K1, ... (after them: "main")
 *   header user-agent     one header slot (optional)
 *   subject path 2        a subject (method, path, query, header or value)
 *                         with N tests, each a pattern "tN"; repeatable
 *   LOADB 0 1             an instruction: A, then Bx for opcodes whose B is
 *   JMPF 0 1              wide (constants, immediates, jumps), else B and C
 *   raw 200 0 0 0 0       an instruction by its bytes: op zero A B C
 *   expect function 'main', offset 0 (JMPF): register 0 is read ...
 *   expect ok
 *
 * The program is serialized by the real writer (vm_write) and loaded by
 * clf_program_load, so the check is exactly what a host would see.
 *
 * usage: run_verify CASE.vasm...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

#define MAXI 256

typedef struct vcase {
    vm_insn code[MAXI];
    uint32_t n;
    uint8_t types[MAXI];
    uint32_t nregs;
    char strs[16][64];
    uint32_t nstrs;
    char header[64];
    vm_subject subj[8];
    uint32_t nsubj;
    char expect[512];
} vcase;

static int parse(const char *path, vcase *c, char *why, size_t whylen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whylen, "cannot open");
        return -1;
    }
    char line[1024];
    int lineno = 0;
    memset(c, 0, sizeof *c);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        char *p = line + strspn(line, " \t");
        if (!*p || *p == '#') continue;
        char word[32];
        int used = 0;
        if (sscanf(p, "%31s%n", word, &used) != 1) continue;
        char *rest = p + used + strspn(p + used, " \t");
        if (strcmp(word, "expect") == 0) {
            snprintf(c->expect, sizeof c->expect, "%s", rest);
        } else if (strcmp(word, "regs") == 0) {
            for (char *t = strtok(rest, " \t"); t && c->nregs < MAXI; t = strtok(NULL, " \t"))
                c->types[c->nregs++] = *t == 'b' ? VM_T_BOOL : *t == 'i' ? VM_T_INT
                                     : *t == 's' ? VM_T_STR : (uint8_t)atoi(t);
        } else if (strcmp(word, "strs") == 0) {
            for (char *t = strtok(rest, " \t"); t && c->nstrs < 16; t = strtok(NULL, " \t"))
                snprintf(c->strs[c->nstrs++], 64, "%s", t);
        } else if (strcmp(word, "subject") == 0) {
            static const char *const kinds[] = {"method", "path", "query", "header", "value"};
            char kind[16];
            unsigned nt;
            if (c->nsubj >= 8 || sscanf(rest, "%15s %u", kind, &nt) != 2 || nt == 0 || nt > 8) {
                snprintf(why, whylen, "line %d: subject KIND NTESTS", lineno);
                fclose(f);
                return -1;
            }
            vm_subject *S = &c->subj[c->nsubj++];
            memset(S, 0, sizeof *S);
            S->kind = 99;
            for (uint32_t k = 0; k < 5; k++)
                if (strcmp(kind, kinds[k]) == 0) S->kind = k;
            S->ntests = nt;
        } else if (strcmp(word, "header") == 0) {
            snprintf(c->header, sizeof c->header, "%s", rest);
        } else if (c->n >= MAXI) {
            snprintf(why, whylen, "line %d: too many instructions", lineno);
            fclose(f);
            return -1;
        } else if (strcmp(word, "raw") == 0) {
            unsigned op, z, a, b, cc;
            if (sscanf(rest, "%u %u %u %u %u", &op, &z, &a, &b, &cc) != 5) {
                snprintf(why, whylen, "line %d: raw needs 5 numbers", lineno);
                fclose(f);
                return -1;
            }
            c->code[c->n++] = (vm_insn){(uint8_t)op, (uint8_t)z, (uint16_t)a, (uint16_t)b, (uint16_t)cc};
        } else {
            int op = -1;
            for (int k = 0; k < VM_OP_COUNT; k++)
                if (strcmp(vm_opinfo_table[k].name, word) == 0) op = k;
            if (op < 0) {
                snprintf(why, whylen, "line %d: unknown opcode %s", lineno, word);
                fclose(f);
                return -1;
            }
            unsigned long v[3] = {0, 0, 0};
            int got = sscanf(rest, "%lu %lu %lu", &v[0], &v[1], &v[2]);
            (void)got;
            vm_insn in = {(uint8_t)op, 0, (uint16_t)v[0], 0, 0};
            if (vm_operand_is_wide((vm_operand)vm_opinfo_table[op].opnd[1])) {
                in.b = (uint16_t)(v[1] & 0xffff);
                in.c = (uint16_t)(v[1] >> 16);
            } else {
                in.b = (uint16_t)v[1];
                in.c = (uint16_t)v[2];
            }
            c->code[c->n++] = in;
        }
    }
    fclose(f);
    if (!c->expect[0]) {
        snprintf(why, whylen, "no `expect` line");
        return -1;
    }
    return 0;
}

/* Returns the loader's message, or "ok". */
static void load_case(const vcase *c, char *msg, size_t msglen)
{
    vm_const consts[96];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->nstrs; i++)
        consts[n++] = (vm_const){VM_K_STR, (uint32_t)strlen(c->strs[i]), c->strs[i], 0};
    uint32_t hdr_k = n;
    if (c->header[0]) consts[n++] = (vm_const){VM_K_STR, (uint32_t)strlen(c->header), c->header, 0};
    uint32_t name_k = n;
    consts[n++] = (vm_const){VM_K_STR, 4, "main", 0};
    consts[n++] = (vm_const){VM_K_INT, 0, NULL, 1234567890123};
    vm_func fn = {name_k, VM_FUNC_FILTER, 0, 0, c->nregs, c->n, (vm_insn *)c->code, (uint8_t *)c->types, NULL};
    clf_program p;
    memset(&p, 0, sizeof p);
    p.consts = consts;
    p.nconsts = n;
    p.funcs = &fn;
    p.nfuncs = 1;
    p.hdrs = &hdr_k;
    p.nhdrs = c->header[0] ? 1 : 0;
    /* Subjects: test t of each is the literal pattern "tN". */
    vm_subject subj[8];
    vm_pattern pats[64];
    static const char *const texts[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    uint32_t npat = 0;
    memcpy(subj, c->subj, sizeof subj);
    for (uint32_t s = 0; s < c->nsubj; s++)
        for (uint32_t t = 0; t < subj[s].ntests; t++) {
            consts[n] = (vm_const){VM_K_STR, 2, texts[t], 0};
            pats[npat++] = (vm_pattern){s, t, HS_FLAG_SINGLEMATCH, n++};
        }
    p.subjects = subj;
    p.nsubjects = c->nsubj;
    p.patterns = pats;
    p.npatterns = npat;
    p.nconsts = n;
    for (uint32_t s = 0; s < c->nsubj; s++) {
        long bad;
        char e[256];
        if (vm_subject_build(&p, s, &subj[s].db, &bad, e, sizeof e) != CLF_OK) {
            snprintf(msg, msglen, "(subject build failed: %s)", e);
            return;
        }
    }
    uint8_t *bytes;
    size_t len;
    char err[256];
    if (vm_write(&p, &bytes, &len, err, sizeof err) != CLF_OK) {
        snprintf(msg, msglen, "(writer failed: %s)", err);
        return;
    }
    clf_program *prog = NULL;
    clf_status st = clf_program_load(bytes, len, NULL, &prog, msg, msglen);
    free(bytes);
    for (uint32_t s = 0; s < c->nsubj; s++) hs_free_database(subj[s].db);
    if (st == CLF_OK) snprintf(msg, msglen, "ok");
    clf_program_free(prog);
}

int main(int argc, char **argv)
{
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        vcase c;
        char why[256] = "", got[512] = "";
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        if (parse(argv[i], &c, why, sizeof why) != 0) {
            printf("not ok %d - %s\n# bad test file: %s\n", i, name, why);
            failed++;
            continue;
        }
        load_case(&c, got, sizeof got);
        int ok = strcmp(got, c.expect) == 0;
        printf("%s %d - %s\n", ok ? "ok" : "not ok", i, name);
        if (!ok) {
            printf("# want: %s\n# got:  %s\n", c.expect, got);
            failed++;
        }
    }
    printf("1..%d\n", argc - 1);
    return failed != 0;
}
