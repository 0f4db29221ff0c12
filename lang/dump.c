/*
 * dump.c: a compiled rules file loaded back with the loader and verifier
 * hosts use (classifyc's last check before it writes the file: a compiler
 * bug must not produce a file that fails to load), and its disassembly
 * with the source lines above their code (classifyc --dump).
 */
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "program.h"

typedef struct dump_ctx {
    const src_set *src;
    FILE *out;
} dump_ctx;

static void write_text(void *ud, const char *text, size_t len)
{
    fwrite(text, 1, len, ((const dump_ctx *)ud)->out);
}

/* Prints source line `line` of `file` as a comment above its code. */
static void print_source(void *ud, const char *file, uint32_t line)
{
    const dump_ctx *d = ud;
    for (uint32_t i = 0; i < d->src->nfiles; i++) {
        const src_file *f = &d->src->files[i];
        if (strcmp(f->path, file) != 0) continue;
        uint32_t l = 1;
        size_t s = 0;
        while (s < f->len && l < line) {
            if (f->text[s++] == '\n') l++;
        }
        size_t e = s;
        while (e < f->len && f->text[e] != '\n') e++;
        while (s < e && (f->text[s] == ' ' || f->text[s] == '\t')) s++;
        fprintf(d->out, "       ; %s:%u: %.*s\n", file, line, (int)(e - s), f->text + s);
        return;
    }
}

int cc_load_back(const uint8_t *bin, size_t len, const src_set *src, FILE *dump, char *err,
                 size_t errlen)
{
    clf_program *prog = NULL;
    if (vm_load(bin, len, &vm_default_options, &prog, err, errlen) != CLF_OK) return -1;
    if (dump) {
        dump_ctx d = {src, dump};
        vm_disassemble(prog, write_text, print_source, &d);
    }
    vm_program_free(prog);
    return 0;
}
