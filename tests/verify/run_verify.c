/*
 * run_verify.c: data-driven verifier and loader tests (TAP), one file per
 * rejection class, in the manner of uBPF's tests/errors. Each CASE.vasm
 * holds hand-written functions and the exact message the loader must give:
 *
 *   # comment
 *   func NAME KIND NPARAMS RET  starts a function: KIND filter, fn or a
 *                         number; RET b, i, s, p or a number (0 for a
 *                         filter). Lines before the first `func` belong
 *                         to an implicit `func main filter 0 0`.
 *   regs b b i s p        this function's register types (b bool, i int,
 *                         s str, p ip, or a number); parameters first
 *   chain N [NREGS]       N more functions `cK fn 1 i`, each with NREGS
 *                         int registers (default 2): cK calls c(K+1) with
 *                         R0 and returns the result, the last returns R0
 *   entry N               the entry function (default 0)
 *   flags N               this function's flags (VM_FUNC_ENTRY 1, VM_FUNC_ROOT
 *                         2); default: VM_FUNC_ENTRY for the entry function,
 *                         0 for the others
 *   strs a ip:192.0.2.1   string constants K0, K1, ...; ip:ADDR is the 16
 *                         bytes of an address (IPv4-mapped for IPv4)
 *   header user-agent     a header slot (repeatable: slots 0, 1, ...)
 *   subject path 2        a subject (method, path, query, header or value)
 *                         with N tests, each a pattern "tN"; repeatable
 *   ipset 10.0.0.0/8 A-B  an IP set: its ranges, CIDR or LOW-HIGH, in the
 *                         order given (not sorted or merged); repeatable
 *   ipsetraw FIRST COUNT  an IP set over ranges already listed
 *   slot KIND KEY NAME PERIOD AMOUNT  a state slot: kind 1 counter, 2 score,
 *                         3 mark; key type 1 ip, 2 int, 3 str; NAME the
 *                         index of a string constant (`strs`); repeatable
 *   capture S T F G RE    a capture: subject S, test T, flags F (numeric
 *                         Hyperscan flags), group G, regex RE (rest of line)
 *   limit registers N     load with CLF_LIMIT_REGISTERS N
 *   LOADB 0 1             an instruction: A, then Bx for opcodes whose B is
 *   JMPF 0 1              wide (constants, immediates, jumps), else B and C
 *   raw 200 0 0 0 0       an instruction by its bytes: op zero A B C
 *   status format         the status the load must return: ok, verify,
 *                         format, limit (default: ok for `expect ok`, else
 *                         verify)
 *   expect function 'main', offset 0 (JMPF): register 0 is read ...
 *   expect ok
 *
 * Constants after the `strs`: the header names, the function names, one
 * integer constant, the patterns "tN", the capture regexes.
 *
 * The program is serialized by the real writer (cc_write) and loaded by
 * clf_program_load, so the check is exactly what a host would see.
 *
 * usage: run_verify CASE.vasm...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "write.h"

#define MAXI 256   /* instructions per function */
#define MAXR 256   /* registers per function */
#define MAXF 512   /* functions */
#define MAXK 1024  /* constants */

typedef struct vfunc {
    char name[32];
    uint8_t kind, nparams, ret;
    int flags_given;
    uint8_t flags;
    vm_insn code[MAXI];
    uint32_t n;
    uint8_t types[MAXR];
    uint32_t nregs;
} vfunc;

typedef struct vcase {
    vfunc funcs[MAXF];
    uint32_t nfuncs, entry;
    char strs[16][64];
    uint32_t strlens[16];
    uint32_t nstrs;
    char headers[4][64];
    uint32_t nheaders;
    vm_subject subj[8];
    uint32_t nsubj;
    vm_iprange ranges[64];
    uint32_t nranges;
    vm_ipset ipsets[16];
    uint32_t nipsets;
    vm_slot slots[8];
    uint32_t nslots;
    vm_capt capts[8];
    char capt_re[8][128];
    uint32_t ncapts;
    uint64_t max_registers; /* 0: default */
    int status;             /* expected; 1: not given */
    char expect[512];
} vcase;

static uint8_t type_of(const char *t)
{
    return *t == 'b' ? VM_T_BOOL : *t == 'i' ? VM_T_INT : *t == 's' ? VM_T_STR
         : *t == 'p' ? VM_T_IP : (uint8_t)atoi(t);
}

/* The function instructions and registers go to, made on first use. */
static vfunc *cur_func(vcase *c)
{
    if (c->nfuncs == 0) {
        vfunc *f = &c->funcs[c->nfuncs++];
        snprintf(f->name, sizeof f->name, "main");
        f->kind = VM_FUNC_FILTER;
    }
    return &c->funcs[c->nfuncs - 1];
}

#define BAD(...)                                      \
    do {                                              \
        int o_ = snprintf(why, whylen, "line %d: ", lineno); \
        snprintf(why + o_, whylen - (size_t)o_, __VA_ARGS__); \
        fclose(f);                                    \
        return -1;                                    \
    } while (0)

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
    c->status = 1;
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
        } else if (strcmp(word, "status") == 0) {
            static const struct { const char *name; int st; } sts[] = {
                {"ok", CLF_OK}, {"verify", CLF_E_VERIFY}, {"format", CLF_E_FORMAT},
                {"limit", CLF_E_LIMIT}};
            c->status = 1;
            for (size_t k = 0; k < sizeof sts / sizeof sts[0]; k++)
                if (strcmp(rest, sts[k].name) == 0) c->status = sts[k].st;
            if (c->status == 1) BAD("unknown status %s", rest);
        } else if (strcmp(word, "func") == 0) {
            char name[32], kind[16], ret[16];
            unsigned np;
            if (c->nfuncs >= MAXF || sscanf(rest, "%31s %15s %u %15s", name, kind, &np, ret) != 4)
                BAD("func NAME KIND NPARAMS RET");
            vfunc *fn = &c->funcs[c->nfuncs++];
            snprintf(fn->name, sizeof fn->name, "%s", name);
            fn->kind = strcmp(kind, "filter") == 0 ? VM_FUNC_FILTER
                     : strcmp(kind, "fn") == 0    ? VM_FUNC_FN
                                                  : (uint8_t)atoi(kind);
            fn->nparams = (uint8_t)np;
            fn->ret = type_of(ret);
        } else if (strcmp(word, "chain") == 0) {
            unsigned n, nregs = 2;
            if (sscanf(rest, "%u %u", &n, &nregs) < 1 || c->nfuncs + n > MAXF || nregs < 2 ||
                nregs > MAXR)
                BAD("chain N [NREGS]");
            uint32_t first = c->nfuncs;
            for (uint32_t k = 0; k < n; k++) {
                vfunc *fn = &c->funcs[c->nfuncs++];
                snprintf(fn->name, sizeof fn->name, "c%u", k);
                fn->kind = VM_FUNC_FN;
                fn->nparams = 1;
                fn->ret = VM_T_INT;
                fn->nregs = nregs;
                for (uint32_t r = 0; r < nregs; r++) fn->types[r] = VM_T_INT;
                if (k + 1 < n) {
                    fn->code[fn->n++] = (vm_insn){OP_CALL, 0, 1, (uint16_t)(first + k + 1), 0};
                    fn->code[fn->n++] = (vm_insn){OP_RET, 0, 1, 0, 0};
                } else {
                    fn->code[fn->n++] = (vm_insn){OP_RET, 0, 0, 0, 0};
                }
            }
        } else if (strcmp(word, "entry") == 0) {
            c->entry = (uint32_t)strtoul(rest, NULL, 10);
        } else if (strcmp(word, "flags") == 0) {
            vfunc *fn = cur_func(c);
            fn->flags = (uint8_t)strtoul(rest, NULL, 10);
            fn->flags_given = 1;
        } else if (strcmp(word, "regs") == 0) {
            vfunc *fn = cur_func(c);
            for (char *t = strtok(rest, " \t"); t && fn->nregs < MAXR; t = strtok(NULL, " \t"))
                fn->types[fn->nregs++] = type_of(t);
        } else if (strcmp(word, "strs") == 0) {
            for (char *t = strtok(rest, " \t"); t && c->nstrs < 16; t = strtok(NULL, " \t")) {
                if (strncmp(t, "ip:", 3) == 0) {
                    if (!vm_ip_parse(t + 3, strlen(t + 3), (uint8_t *)c->strs[c->nstrs]))
                        BAD("bad address %s", t + 3);
                    c->strlens[c->nstrs++] = 16;
                } else {
                    snprintf(c->strs[c->nstrs], 64, "%s", t);
                    c->strlens[c->nstrs] = (uint32_t)strlen(c->strs[c->nstrs]);
                    c->nstrs++;
                }
            }
        } else if (strcmp(word, "subject") == 0) {
            static const char *const kinds[] = {"method", "path", "query", "header", "value"};
            char kind[16];
            unsigned nt;
            if (c->nsubj >= 8 || sscanf(rest, "%15s %u", kind, &nt) != 2 || nt == 0 || nt > 8)
                BAD("subject KIND NTESTS");
            vm_subject *S = &c->subj[c->nsubj++];
            memset(S, 0, sizeof *S);
            S->kind = 99;
            for (uint32_t k = 0; k < 5; k++)
                if (strcmp(kind, kinds[k]) == 0) S->kind = k;
            S->ntests = nt;
        } else if (strcmp(word, "header") == 0) {
            if (c->nheaders >= 4) BAD("too many headers");
            snprintf(c->headers[c->nheaders++], 64, "%s", rest);
        } else if (strcmp(word, "slot") == 0) {
            if (c->nslots >= 8) BAD("too many slots");
            vm_slot *S = &c->slots[c->nslots++];
            long long am;
            if (sscanf(rest, "%u %u %u %u %lld", &S->kind, &S->keytype, &S->name, &S->param, &am) != 5)
                BAD("slot KIND KEYTYPE NAME PERIOD AMOUNT");
            S->amount = am;
        } else if (strcmp(word, "ipset") == 0 || strcmp(word, "ipsetraw") == 0) {
            if (c->nipsets >= 16) BAD("too many IP sets");
            vm_ipset *S = &c->ipsets[c->nipsets++];
            if (word[5] == 'r') {
                if (sscanf(rest, "%u %u", &S->first, &S->count) != 2) BAD("ipsetraw FIRST COUNT");
                continue;
            }
            S->first = c->nranges;
            for (char *t = strtok(rest, " \t"); t; t = strtok(NULL, " \t")) {
                if (c->nranges >= 64) BAD("too many ranges");
                vm_iprange *r = &c->ranges[c->nranges++];
                char *dash = strchr(t, '-');
                if (dash ? !vm_ip_parse(t, (size_t)(dash - t), r->lo) ||
                               !vm_ip_parse(dash + 1, strlen(dash + 1), r->hi)
                         : !vm_iprange_parse(t, strlen(t), r))
                    BAD("bad range %s", t);
                S->count++;
            }
        } else if (strcmp(word, "capture") == 0) {
            unsigned s, t, fl, g;
            int at = 0;
            if (c->ncapts >= 8 || sscanf(rest, "%u %u %u %u %n", &s, &t, &fl, &g, &at) != 4 || !at)
                BAD("capture SUBJECT TEST FLAGS GROUP REGEX");
            c->capts[c->ncapts] = (vm_capt){s, t, fl, 0, g, NULL};
            snprintf(c->capt_re[c->ncapts++], 128, "%s", rest + at);
        } else if (strcmp(word, "limit") == 0) {
            unsigned long long v;
            if (sscanf(rest, "registers %llu", &v) != 1) BAD("limit registers N");
            c->max_registers = v;
        } else if (cur_func(c)->n >= MAXI) {
            BAD("too many instructions");
        } else if (strcmp(word, "raw") == 0) {
            unsigned op, z, a, b, cc;
            if (sscanf(rest, "%u %u %u %u %u", &op, &z, &a, &b, &cc) != 5) BAD("raw needs 5 numbers");
            vfunc *fn = cur_func(c);
            fn->code[fn->n++] = (vm_insn){(uint8_t)op, (uint8_t)z, (uint16_t)a, (uint16_t)b, (uint16_t)cc};
        } else {
            int op = -1;
            for (int k = 0; k < VM_OP_COUNT; k++)
                if (strcmp(vm_opinfo_table[k].name, word) == 0) op = k;
            if (op < 0) BAD("unknown opcode %s", word);
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
            vfunc *fn = cur_func(c);
            fn->code[fn->n++] = in;
        }
    }
    fclose(f);
    if (!c->expect[0]) {
        snprintf(why, whylen, "no `expect` line");
        return -1;
    }
    if (c->status == 1) c->status = strcmp(c->expect, "ok") == 0 ? CLF_OK : CLF_E_VERIFY;
    cur_func(c); /* a file with no function at all still has main */
    return 0;
}

/* Returns the loader's status, with its message (or "ok") in msg. */
static clf_status load_case(const vcase *c, char *msg, size_t msglen)
{
    static vm_const consts[MAXK];
    static vm_func funcs[MAXF];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->nstrs; i++)
        consts[n++] = (vm_const){VM_K_STR, c->strlens[i], c->strs[i], 0};
    uint32_t hdr_k[4];
    for (uint32_t i = 0; i < c->nheaders; i++) {
        hdr_k[i] = n;
        consts[n++] = (vm_const){VM_K_STR, (uint32_t)strlen(c->headers[i]), c->headers[i], 0};
    }
    for (uint32_t i = 0; i < c->nfuncs; i++) {
        const vfunc *F = &c->funcs[i];
        consts[n] = (vm_const){VM_K_STR, (uint32_t)strlen(F->name), F->name, 0};
        funcs[i] = (vm_func){n++, F->kind, F->nparams, F->ret, F->nregs, F->n,
                             (vm_insn *)F->code, (uint8_t *)F->types, NULL,
                             F->flags_given ? F->flags : i == c->entry ? VM_FUNC_ENTRY : 0};
    }
    consts[n++] = (vm_const){VM_K_INT, 0, NULL, 1234567890123};
    clf_program p;
    memset(&p, 0, sizeof p);
    p.consts = consts;
    p.funcs = funcs;
    p.nfuncs = c->nfuncs;
    p.entry = c->entry;
    p.hdrs = hdr_k;
    p.nhdrs = c->nheaders;
    /* Subjects: test t of each is the literal pattern "tN". */
    vm_subject subj[8];
    vm_pattern pats[64];
    static const char *const texts[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"};
    uint32_t npat = 0;
    memcpy(subj, c->subj, sizeof subj);
    for (uint32_t s = 0; s < c->nsubj; s++)
        for (uint32_t t = 0; t < subj[s].ntests; t++) {
            consts[n] = (vm_const){VM_K_STR, 2, texts[t], 0};
            pats[npat++] = (vm_pattern){s, t, VM_PAT_CONTAINS, 0, n++};
        }
    vm_capt capts[8];
    for (uint32_t i = 0; i < c->ncapts; i++) {
        capts[i] = c->capts[i];
        capts[i].expr = n;
        consts[n++] = (vm_const){VM_K_STR, (uint32_t)strlen(c->capt_re[i]), c->capt_re[i], 0};
    }
    p.subjects = subj;
    p.nsubjects = c->nsubj;
    p.patterns = pats;
    p.npatterns = npat;
    p.nconsts = n;
    p.ranges = (vm_iprange *)c->ranges;
    p.nranges = c->nranges;
    p.ipsets = (vm_ipset *)c->ipsets;
    p.nipsets = c->nipsets;
    p.slots = (vm_slot *)c->slots;
    p.nslots = c->nslots;
    p.capts = capts;
    p.ncapts = c->ncapts;
    for (uint32_t s = 0; s < c->nsubj; s++) {
        long bad;
        char e[256];
        if (vm_subject_build(&p, s, &subj[s].db, &bad, e, sizeof e) != CLF_OK) {
            snprintf(msg, msglen, "(subject build failed: %s)", e);
            return CLF_E_BACKEND;
        }
    }
    uint8_t *bytes;
    size_t len;
    char err[256];
    clf_status st = cc_write(&p, &bytes, &len, err, sizeof err);
    for (uint32_t s = 0; s < c->nsubj; s++) hs_free_database(subj[s].db);
    if (st != CLF_OK) {
        snprintf(msg, msglen, "(writer failed: %s)", err);
        return st;
    }
    clf_options *o = NULL;
    if (clf_options_new(&o) != CLF_OK ||
        (c->max_registers && clf_options_set_limit(o, CLF_LIMIT_REGISTERS, c->max_registers))) {
        snprintf(msg, msglen, "(options failed)");
        free(bytes);
        clf_options_free(o);
        return CLF_E_INVALID;
    }
    clf_program *prog = NULL;
    st = clf_program_load(bytes, len, o, &prog, msg, msglen);
    clf_options_free(o);
    free(bytes);
    if (st == CLF_OK) {
        snprintf(msg, msglen, "ok");
        /* A program that loads must also run: one context, one request. */
        clf_ctx *ctx = NULL;
        clf_verdict v;
        if (clf_ctx_new(prog, &ctx, NULL, 0) != CLF_OK) {
            snprintf(msg, msglen, "(loaded, but clf_ctx_new failed)");
        } else {
            clf_ctx_set_peer(ctx, "192.0.2.1", 9);
            clf_status es = clf_eval(ctx, &v);
            if (es != CLF_OK)
                snprintf(msg, msglen, "(loaded, but clf_eval returned %d: %s)", es,
                         clf_ctx_errmsg(ctx));
        }
        clf_ctx_free(ctx);
    } else if (prog) {
        snprintf(msg, msglen, "(a failed load left *out set)");
    }
    clf_program_free(prog);
    return st;
}

int main(int argc, char **argv)
{
    int failed = 0;
    static vcase c;
    for (int i = 1; i < argc; i++) {
        char why[256] = "", got[512] = "";
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        if (parse(argv[i], &c, why, sizeof why) != 0) {
            printf("not ok %d - %s\n# bad test file: %s\n", i, name, why);
            failed++;
            continue;
        }
        clf_status st = load_case(&c, got, sizeof got);
        int ok = strcmp(got, c.expect) == 0 && (int)st == c.status;
        printf("%s %d - %s\n", ok ? "ok" : "not ok", i, name);
        if (!ok) {
            printf("# want: %s (status %d)\n# got:  %s (status %d)\n", c.expect, c.status, got, st);
            failed++;
        }
    }
    printf("1..%d\n", argc - 1);
    return failed != 0;
}
