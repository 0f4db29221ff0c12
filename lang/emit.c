/*
 * emit.c: the code generator's emit layer (cg.h): constants, header
 * slots, registers, instructions and jump lists, and a function's state
 * from its first instruction to the vm_func the program keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "cg.h"

int cg_grow(cg *g, void **p, uint32_t *cap, uint32_t need, size_t each)
{
    if (need <= *cap) return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * each);
    if (!q) {
        g->failed = 1;
        return -1;
    }
    *p = q;
    *cap = c;
    return 0;
}

uint32_t cg_kstr(cg *g, const char *s, uint32_t len)
{
    uint32_t k = strmap_get(&g->P.kstr, s, len);
    if (k != STRMAP_NONE) return k;
    if (GROW(g, g->P.consts, g->P.capconsts, g->P.nconsts + 1)) return 0;
    char *d = arena_strndup(g->c->ar, s, len);
    if (!d || strmap_put(&g->P.kstr, d, len, g->P.nconsts)) {
        g->failed = 1;
        return 0;
    }
    g->P.consts[g->P.nconsts] = (vm_const){VM_K_STR, len, d, 0};
    return g->P.nconsts++;
}

uint32_t cg_kint(cg *g, int64_t v)
{
    for (uint32_t i = 0; i < g->P.nconsts; i++)
        if (g->P.consts[i].kind == VM_K_INT && g->P.consts[i].i == v) return i;
    if (GROW(g, g->P.consts, g->P.capconsts, g->P.nconsts + 1)) return 0;
    g->P.consts[g->P.nconsts] = (vm_const){VM_K_INT, 0, NULL, v};
    return g->P.nconsts++;
}

uint32_t cg_header_slot(cg *g, const char *lname)
{
    uint32_t k = cg_kstr(g, lname, (uint32_t)strlen(lname));
    for (uint32_t i = 0; i < g->P.nhdrs; i++)
        if (g->P.hdrs[i] == k) return i;
    if (GROW(g, g->P.hdrs, g->P.caphdrs, g->P.nhdrs + 1)) return 0;
    g->P.hdrs[g->P.nhdrs] = k;
    return g->P.nhdrs++;
}

static vm_pos position(cg *g, const ast *n)
{
    src_file *f = &g->c->src->files[n->file];
    uint32_t line, col;
    src_linecol(f, n->off, &line, &col);
    if (n->file != g->P.pos_file) { /* the file name's constant, cached */
        g->P.pos_file = n->file;
        g->P.pos_file_k = cg_kstr(g, f->path, (uint32_t)strlen(f->path));
    }
    return (vm_pos){g->P.pos_file_k, line, col};
}

uint32_t cg_emit(cg *g, vm_opcode op, uint32_t a, uint32_t b, uint32_t c)
{
    if (GROW(g, g->F->code, g->F->capinsns, g->F->ninsns + 1)) return 0;
    if (GROW(g, g->F->pos, g->F->cappos, g->F->ninsns + 1)) return 0;
    g->F->code[g->F->ninsns] = (vm_insn){(uint8_t)op, 0, (uint16_t)a, (uint16_t)b, (uint16_t)c};
    g->F->pos[g->F->ninsns] = position(g, g->at);
    return g->F->ninsns++;
}

uint32_t cg_emit_bx(cg *g, vm_opcode op, uint32_t a, uint32_t bx)
{
    return cg_emit(g, op, a, bx & 0xffff, bx >> 16);
}

int cg_new_reg_raw(cg *g, vm_type t)
{
    unsigned max = g->c->opts->max_registers ? g->c->opts->max_registers : 65535;
    if (g->F->nregs >= max) {
        if (!g->P.regs_reported) {
            src_error(g->c->src, g->at->file, g->at->off,
                      "'%s' needs more than %u registers (classifyc --max-registers)",
                      g->F->sym ? g->F->sym->name : "?", max);
            g->P.regs_reported = 1;
        }
        return 0;
    }
    if (GROW(g, g->F->regtypes, g->F->capregs, g->F->nregs + 1)) return 0;
    g->F->regtypes[g->F->nregs] = (uint8_t)t;
    return (int)g->F->nregs++;
}

int cg_new_reg(cg *g, vm_type t)
{
    int r;
    if (g->F->nfree[t]) r = (int)g->F->freeregs[t][--g->F->nfree[t]];
    else r = cg_new_reg_raw(g, t);
    if (GROW(g, g->F->temps, g->F->captemps, g->F->ntemps + 1)) return r;
    g->F->temps[g->F->ntemps++] = (uint32_t)r;
    return r;
}

/* Returns the temporaries allocated since `mark` to the free lists,
 * except `keep` (a value that outlives the statement, or -1). */
void cg_release_temps(cg *g, uint32_t mark, int keep)
{
    for (uint32_t i = mark; i < g->F->ntemps; i++) {
        uint32_t r = g->F->temps[i];
        if ((int)r == keep) continue;
        uint8_t t = g->F->regtypes[r];
        if (GROW(g, g->F->freeregs[t], g->F->capfree[t], g->F->nfree[t] + 1)) continue;
        g->F->freeregs[t][g->F->nfree[t]++] = r;
    }
    g->F->ntemps = mark;
}

void cg_jl_add(cg *g, jlist *l, uint32_t at)
{
    if (GROW(g, l->at, l->cap, l->n + 1)) return;
    l->at[l->n++] = at;
}

/* Points every jump in `l` at the next instruction to be emitted. */
void cg_jl_patch_here(cg *g, jlist *l)
{
    if (l->n) g->F->label = g->F->ninsns;
    for (uint32_t i = 0; i < l->n; i++) {
        vm_insn *in = &g->F->code[l->at[i]];
        uint32_t off = g->F->ninsns - l->at[i] - 1;
        in->b = (uint16_t)(off & 0xffff);
        in->c = (uint16_t)(off >> 16);
    }
    free(l->at);
    *l = (jlist){0};
}

/* The function index of `f`, queueing it for generation on first use. */
uint32_t cg_func_index(cg *g, sym *f)
{
    if (f->func >= 0) return (uint32_t)f->func;
    if (GROW(g, g->P.queue, g->P.capqueue, g->P.nqueue + 1)) return 0;
    f->func = (int)(g->P.func_base + g->P.nqueue);
    g->P.queue[g->P.nqueue++] = f;
    return (uint32_t)f->func;
}

vm_type cg_vm_type(ty t)
{
    switch (t) {
    case T_BOOL: return VM_T_BOOL;
    case T_INT: return VM_T_INT;
    case T_IP: return VM_T_IP;
    default: return VM_T_STR;
    }
}

void cg_emit_move(cg *g, uint32_t dst, uint32_t src)
{
    /* The opcode table knows the move of each type. */
    cg_emit(g, vm_op_move((vm_type)g->F->regtypes[src]), dst, src, 0);
}

void cg_func_begin(cg *g, cg_func *F, const sym *f, const ast *at)
{
    memset(F, 0, sizeof *F);
    F->sym = f;
    g->F = F;
    g->at = at;
}

/* Appends a finished function to the program, which then owns its code. */
static void add_function(cg *g, const vm_func *fn)
{
    vm_func *fs = realloc(g->P.funcs, (g->P.nfuncs + 1) * sizeof *fs);
    if (!fs) {
        g->failed = 1;
        free(fn->code);
        free(fn->pos);
        free(fn->regtypes);
        return;
    }
    g->P.funcs = fs;
    g->P.funcs[g->P.nfuncs++] = *fn;
}

void cg_func_end(cg *g, vm_func *fn)
{
    cg_func *F = g->F;
    fn->nregs = F->nregs;
    fn->ninsns = F->ninsns;
    fn->code = F->code;
    fn->regtypes = F->regtypes;
    fn->pos = F->pos;
    add_function(g, fn);
    free(F->temps);
    for (int t = 0; t <= VM_T_MAX; t++) free(F->freeregs[t]);
    g->F = NULL;
}
