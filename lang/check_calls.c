/*
 * check_calls.c: the call graph. Every call site was recorded while
 * checking bodies (sym.calls); here an iterative depth-first search
 * reports each cycle with its chain and each chain longer than the VM
 * allows, so that every classification is bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "program.h" /* VM_MAX_CALL_DEPTH */

/* Reports every cycle of calls once, with the chain, by an iterative
 * depth-first search (a program may chain many functions). */
void chk_recursion(checker *ck)
{
    typedef struct frame { sym *f; call_edge *next; ast *site; } frame;
    size_t cap = 64, n = 0;
    frame *st = malloc(cap * sizeof *st);
    if (!st) {
        src_error(ck->c->src, UINT32_MAX, 0, "out of memory");
        return;
    }
    for (module *m = ck->c->modules; m; m = m->next)
        for (uint32_t g = 0; g < m->nglobals; g++) {
            sym *root = m->global_vec[g];
            if ((root->kind != SYM_FN && root->kind != SYM_FILTER) || root->color) continue;
            root->color = 1;
            st[n++] = (frame){root, root->calls, NULL};
            while (n) {
                frame *top = &st[n - 1];
                call_edge *e = top->next;
                if (!e) {
                    /* Every callee is done now (or on the stack: a cycle,
                     * reported). The verifier refuses chains deeper than
                     * VM_MAX_CALL_DEPTH: say so here, once per chain, at
                     * the function where it passes the limit. */
                    int d = 0;
                    for (call_edge *c = top->f->calls; c; c = c->next)
                        if (c->callee->color == 2 && c->callee->depth > d) d = c->callee->depth;
                    top->f->depth = d + 1;
                    if (top->f->depth == VM_MAX_CALL_DEPTH + 1)
                        ERR(ck, top->f->decl, "calls nest %d deep from '%s', more than %d",
                            top->f->depth, top->f->name, VM_MAX_CALL_DEPTH);
                    top->f->color = 2;
                    n--;
                    continue;
                }
                top->next = e->next;
                if (e->callee->color == 1) {
                    /* The chain runs from the callee's frame to here. */
                    size_t k = n;
                    while (k > 0 && st[k - 1].f != e->callee) k--;
                    char chain[512];
                    size_t o = 0;
                    for (size_t j = k - 1; j < n && o < sizeof chain; j++)
                        o += (size_t)snprintf(chain + o, sizeof chain - o, "%s -> ", st[j].f->name);
                    if (o < sizeof chain)
                        snprintf(chain + o, sizeof chain - o, "%s", e->callee->name);
                    diag *d = ERR(ck, e->site, "recursive call: %s (recursion is not allowed, so "
                                               "that every classification is bounded)", chain);
                    for (size_t j = k; j < n; j++)
                        if (st[j].site)
                            src_note(ck->c->src, d, st[j].site->file, st[j].site->off,
                                     "'%s' calls '%s' here", st[j - 1].f->name, st[j].f->name);
                    continue;
                }
                if (e->callee->color == 2) continue;
                if (n == cap) {
                    frame *ns = realloc(st, cap * 2 * sizeof *st);
                    if (!ns) {
                        free(st);
                        src_error(ck->c->src, UINT32_MAX, 0, "out of memory");
                        return;
                    }
                    st = ns;
                    cap *= 2;
                }
                e->callee->color = 1;
                st[n++] = (frame){e->callee, e->callee->calls, e->site};
            }
        }
    free(st);
}

