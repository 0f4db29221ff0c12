/*
 * disasm.c: the disassembler, driven entirely by opcodes.def (operand
 * kinds, and each opcode's synopsis with the operands put in, as
 * SQLite's EXPLAIN prints its opcodes' synopses), so a new opcode needs
 * no change here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ipaddr.h"
#include "program.h"
#include "rw_build.h"

static const char *const subject_kinds[VM_SUBJ_KIND_COUNT] = {
    "method", "path", "query", "header", "value"};

/* Appends a constant, quoted and escaped, at most ~48 bytes of it. */
static size_t quote(char *d, size_t cap, const vm_const *k)
{
    size_t o = 0;
    if (k->kind == VM_K_INT)
        return (size_t)snprintf(d, cap, "%" PRId64, k->i);
    o += (size_t)snprintf(d + o, cap - o, "\"");
    for (uint32_t i = 0; i < k->len && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)k->str[i];
        if (i == 48) { o += (size_t)snprintf(d + o, cap - o, "..."); break; }
        if (c == '"' || c == '\\') o += (size_t)snprintf(d + o, cap - o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) o += (size_t)snprintf(d + o, cap - o, "\\x%02x", c);
        else d[o++] = (char)c;
    }
    o += (size_t)snprintf(d + o, cap - o, "\"");
    return o;
}

/* pre + bytes + post, bytes that would garble a terminal as \xHH, cut
 * after 120 bytes with "...". */
static void escaped(char *d, size_t cap, const char *pre, const char *s, size_t n,
                    const char *post)
{
    size_t o = (size_t)snprintf(d, cap, "%s", pre);
    for (size_t c = 0; c < n && o + 12 < cap; c++) {
        unsigned char ch = (unsigned char)s[c];
        if (c == 120) { o += (size_t)snprintf(d + o, cap - o, "..."); break; }
        if (ch < 0x20 || ch >= 0x7f) o += (size_t)snprintf(d + o, cap - o, "\\x%02x", ch);
        else d[o++] = (char)ch;
    }
    snprintf(d + o, cap - o, "%s", post);
}

static void subject_text(const clf_program *p, uint32_t s, char *d, size_t cap)
{
    const vm_subject *S = &p->subjects[s];
    if (S->kind == VM_SUBJ_HEADER)
        snprintf(d, cap, "header %s", p->consts[p->hdrs[S->hdr]].str);
    else
        snprintf(d, cap, "%s", subject_kinds[S->kind]);
}

/* The synopsis of `in` with its operands' values in place of R[A], K[Bx],
 * sBx, Bx, B and C ("R[A] := R[B] + R[C]" -> "R3 := R1 + R2"). */
static size_t synopsis(const vm_insn *in, const vm_opinfo *oi, char *d, size_t cap)
{
    size_t o = 0;
    const char *s = oi->synopsis;
    uint32_t bx = VM_BX(*in);
    while (*s && o + 16 < cap) {
        char prev = s == oi->synopsis ? ' ' : s[-1];
        int word_start = !((prev >= 'A' && prev <= 'Z') || (prev >= 'a' && prev <= 'z'));
        if ((s[0] == 'R' || s[0] == 'K') && s[1] == '[') { /* R[A], R[C+1], K[Bx] */
            const char *e = strchr(s, ']');
            if (e) {
                char which = s[2];
                uint32_t v = which == 'A' ? in->a : which == 'B' ? (s[3] == 'x' ? bx : in->b) : in->c;
                int plus = e - s > 4 && s[3] == '+' ? atoi(s + 4) : 0;
                if (s[0] == 'K' && oi->opnd[1] == VM_OPND_KR && v == VM_NO_REASON)
                    o += (size_t)snprintf(d + o, cap - o, "(none)");
                else
                    o += (size_t)snprintf(d + o, cap - o, "%c%u", s[0], v + (uint32_t)plus);
                s = e + 1;
                continue;
            }
        }
        if (word_start && strncmp(s, "sBx", 3) == 0) {
            o += (size_t)snprintf(d + o, cap - o, "%d", (int32_t)bx);
            s += 3;
            continue;
        }
        if (word_start && strncmp(s, "Bx", 2) == 0) {
            o += (size_t)snprintf(d + o, cap - o, "%u", bx);
            s += 2;
            continue;
        }
        int alone = word_start && !((s[1] >= 'A' && s[1] <= 'Z') || (s[1] >= 'a' && s[1] <= 'z') ||
                                    s[1] == '[');
        if (alone && (s[0] == 'B' || s[0] == 'C')) {
            o += (size_t)snprintf(d + o, cap - o, "%u", s[0] == 'B' ? in->b : in->c);
            s++;
            continue;
        }
        d[o++] = *s++;
    }
    d[o] = 0;
    return o;
}

static void insn_text(const clf_program *p, const vm_func *f, uint32_t pc, char *d, size_t cap)
{
    const vm_insn *in = &f->code[pc];
    const vm_opinfo *oi = &vm_opinfo_table[in->op];
    size_t o = (size_t)snprintf(d, cap, "%5u  %-7s", pc, oi->name);
    char note[200] = "";
    size_t no = 0;
    int wide = vm_operand_is_wide((vm_operand)oi->opnd[1]);
    uint32_t vals[3] = {in->a, wide ? VM_BX(*in) : in->b, in->c};
    for (int k = 0; k < 3; k++) {
        vm_operand kind = (vm_operand)oi->opnd[k];
        uint32_t v = vals[k];
        if (kind == VM_OPND_NONE) continue;
        switch (kind) {
        case VM_OPND_KS: case VM_OPND_KI:
            o += (size_t)snprintf(d + o, cap - o, " K%u", v);
            no += quote(note + no, sizeof note - no, &p->consts[v]);
            break;
        case VM_OPND_KR:
            if (v == VM_NO_REASON) o += (size_t)snprintf(d + o, cap - o, " -");
            else {
                o += (size_t)snprintf(d + o, cap - o, " K%u", v);
                no += quote(note + no, sizeof note - no, &p->consts[v]);
            }
            break;
        case VM_OPND_IMM: o += (size_t)snprintf(d + o, cap - o, " %d", (int32_t)v); break;
        case VM_OPND_FLD:
            o += (size_t)snprintf(d + o, cap - o, " %u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%s", vm_field_names[v]);
            break;
        case VM_OPND_HDR:
            o += (size_t)snprintf(d + o, cap - o, " H%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%s%s", no ? " " : "",
                                   p->consts[p->hdrs[v]].str);
            break;
        case VM_OPND_KIP: {
            char ip[VM_IP_TEXT_MAX];
            vm_ip_format((const uint8_t *)p->consts[v].str, ip, sizeof ip);
            o += (size_t)snprintf(d + o, cap - o, " K%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%s", ip);
            break;
        }
        case VM_OPND_FUNC:
            o += (size_t)snprintf(d + o, cap - o, " F%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%s", p->consts[p->funcs[v].name].str);
            break;
        case VM_OPND_IPSET:
            o += (size_t)snprintf(d + o, cap - o, " P%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%u range%s", p->ipsets[v].count,
                                   p->ipsets[v].count == 1 ? "" : "s");
            break;
        case VM_OPND_INTSET:
            o += (size_t)snprintf(d + o, cap - o, " N%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%u integer%s", p->intsets[v].count,
                                   p->intsets[v].count == 1 ? "" : "s");
            break;
        case VM_OPND_CAPT: {
            const vm_capt *c = &p->capts[v];
            o += (size_t)snprintf(d + o, cap - o, " C%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "group %u of /%.60s/", c->group,
                                   p->consts[c->expr].str);
            break;
        }
        case VM_OPND_SUBJ: {
            char s[96];
            subject_text(p, v, s, sizeof s);
            o += (size_t)snprintf(d + o, cap - o, " S%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%s", s);
            break;
        }
        case VM_OPND_TEST: o += (size_t)snprintf(d + o, cap - o, " T%u", v); break;
        case VM_OPND_SLOT: {
            const vm_slot *S = &p->slots[v];
            o += (size_t)snprintf(d + o, cap - o, " Z%u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "%s%s/%us", no ? " " : "",
                                   p->consts[S->name].str, S->param);
            if (S->amount)
                no += (size_t)snprintf(note + no, sizeof note - no, " +%lld", (long long)S->amount);
            break;
        }
        case VM_OPND_JMP:
            o += (size_t)snprintf(d + o, cap - o, " %u", v);
            no += (size_t)snprintf(note + no, sizeof note - no, "to %u", pc + 1 + v);
            break;
        default: o += (size_t)snprintf(d + o, cap - o, " R%u", v); break;
        }
        if (no >= sizeof note) no = sizeof note - 1;
        if (o >= cap) o = cap - 1;
    }
    char syn[160];
    synopsis(in, oi, syn, sizeof syn);
    o += (size_t)snprintf(d + o, cap - o, "%*s; %s", o < 34 ? (int)(34 - o) : 1, "", syn);
    if (o < cap && no) snprintf(d + o, cap - o, "  [%s]", note);
}

/* The program's rewrite sets (docs/rewrite.md), one line per rule, the
 * source line above the rule as above instructions. */
static void disassemble_rewrites(const clf_program *p, clf_write_fn write, vm_source_fn source,
                                 void *ud)
{
    char line[512];
    for (uint32_t s = 0; s < p->nrewrites; s++) {
        const rw_set *set = p->rewrites[s].set;
        uint32_t n = rw_set_nrules(set);
        int len = snprintf(line, sizeof line,
                           "%srewrite W%u %s: %s, max_match %u, %u rule%s, hold-back %" PRIu64
                           " bytes\n", s || p->nfuncs ? "\n" : "", s, p->consts[p->rewrites[s].name].str,
                           rw_mode_name(rw_set_mode(set)), rw_set_max_match(set), n,
                           n == 1 ? "" : "s", rw_set_holdback(set));
        write(ud, line, (size_t)len);
        for (uint32_t i = 0; i < n; i++) {
            rw_rule_info r;
            if (rw_set_rule_info(set, i, &r) != 0) break;
            /* The position's file is a constant index (lang/lower_rewrite.c),
             * but the stored form does not promise it: check. */
            if (source && r.pos.file < p->nconsts && p->consts[r.pos.file].kind == VM_K_STR)
                source(ud, p->consts[r.pos.file].str, r.pos.line);
            char pat[160], tpl[160], width[48];
            if (r.kind == RW_REGEX)
                escaped(pat, sizeof pat, "/", (const char *)r.pattern, r.pattern_len, "/");
            else
                escaped(pat, sizeof pat, "\"", (const char *)r.pattern, r.pattern_len, "\"");
            escaped(tpl, sizeof tpl, "\"", (const char *)r.replacement, r.replacement_len, "\"");
            if (r.min_width == r.max_width)
                snprintf(width, sizeof width, "%u bytes", r.min_width);
            else if (r.max_width == UINT32_MAX)
                snprintf(width, sizeof width, "%u.. bytes", r.min_width);
            else
                snprintf(width, sizeof width, "%u..%u bytes", r.min_width, r.max_width);
            len = snprintf(line, sizeof line, "  W%u.%u %s %s%s%s%s%s => %s: %s%s\n", s, i,
                           r.kind == RW_REGEX ? "regex" : "literal", pat,
                           r.flags & RW_CASELESS ? "i" : "",
                           r.flags & RW_DOTALL ? "s" : "", r.flags & RW_MULTILINE ? "m" : "",
                           r.flags & RW_ONCE ? " once" : "", tpl, width,
                           r.captures ? ", captures" : "");
            write(ud, line, (size_t)(len < (int)sizeof line ? len : (int)sizeof line - 1));
        }
    }
}

void vm_disassemble(const clf_program *p, clf_write_fn write, vm_source_fn source, void *ud)
{
    char line[512];
    for (uint32_t f = 0; f < p->nfuncs; f++) {
        const vm_func *F = &p->funcs[f];
        static const char *const rets[] = {"", "bool", "int", "str", "ip"};
        int n = F->kind == VM_FUNC_FN
                    ? snprintf(line, sizeof line, "%sfn F%u %s: %u params -> %s, %u registers, "
                               "%u instructions\n", f ? "\n" : "", f, p->consts[F->name].str,
                               F->nparams, rets[F->ret <= VM_T_MAX ? F->ret : 0], F->nregs, F->ninsns)
                    : snprintf(line, sizeof line, "%sfilter F%u %s%s: %u registers, %u instructions\n",
                               f ? "\n" : "", f, p->consts[F->name].str,
                               F->flags & VM_FUNC_ENTRY ? " (entry)" : "", F->nregs, F->ninsns);
        write(ud, line, (size_t)n);
        uint32_t last_line = 0, last_file = VM_NO_REASON - 1;
        for (uint32_t pc = 0; pc < F->ninsns; pc++) {
            const vm_pos *ps = &F->pos[pc];
            if (source && ps->file != VM_NO_REASON &&
                (ps->line != last_line || ps->file != last_file)) {
                source(ud, p->consts[ps->file].str, ps->line);
                last_line = ps->line;
                last_file = ps->file;
            }
            insn_text(p, F, pc, line, sizeof line - 1);
            size_t len = strlen(line);
            line[len++] = '\n';
            write(ud, line, len);
        }
    }
    if (p->nsubjects) write(ud, "\n", 1);
    for (uint32_t s = 0; s < p->nsubjects; s++) {
        char subj[96];
        subject_text(p, s, subj, sizeof subj);
        int n = snprintf(line, sizeof line, "subject S%u (%s): %u tests\n", s, subj,
                         p->subjects[s].ntests);
        write(ud, line, (size_t)n);
        for (uint32_t i = 0; i < p->npatterns; i++) {
            const vm_pattern *q = &p->patterns[i];
            if (q->subject != s) continue;
            /* The method and its literal or regex, then the Hyperscan
             * expression lowered from them (vm/patterns.c). */
            const vm_const *k = &p->consts[q->value];
            char what[80], expr[200];
            if (q->kind == VM_PAT_REGEX) {
                escaped(what, sizeof what, "matches(/", k->str, k->len, "/)");
            } else {
                char lit[64];
                vm_const quoted = *k;
                quote(lit, sizeof lit, &quoted);
                snprintf(what, sizeof what, "%s(%s)", vm_pattern_kind_names[q->kind], lit);
            }
            expr[0] = 0;
            if (q->kind != VM_PAT_REGEX) { /* a regex is its own expression */
                char *buf = vm_malloc(&p->opts.alloc, VM_PATTERN_EXPR_BYTES(k->len));
                const char *e = buf ? vm_pattern_expr(q, k, buf) : "?";
                escaped(expr, sizeof expr, "  /", e, strlen(e), "/");
                vm_free(&p->opts.alloc, buf);
            }
            n = snprintf(line, sizeof line, "  T%u %s%s%s%s%s\n", q->test, what,
                         q->flags & HS_FLAG_CASELESS ? " caseless" : "",
                         q->flags & HS_FLAG_DOTALL ? " dotall" : "",
                         q->flags & HS_FLAG_MULTILINE ? " multiline" : "", expr);
            write(ud, line, (size_t)n);
        }
    }
    disassemble_rewrites(p, write, source, ud);
}
