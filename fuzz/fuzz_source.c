/*
 * fuzz_source.c: .clf source text through the whole compiler.
 *
 * The input is a main module, optionally followed by a second module:
 *
 *     <main.clf bytes>
 *     //--- lib.clf
 *     <lib.clf bytes>
 *
 * (the separator is the line "//--- lib.clf", a comment, so a seed reads
 * as one valid file). The main module may `import "lib.clf"` (alias `lib`
 * or `as NAME`), and lib.clf may import main.clf back (a cycle). The
 * compiler reads files by path (cc_compile has no in-memory entry), so
 * both are written to a private directory made once per process with
 * mkdtemp under $TMPDIR; no -I directories, no $CLASSIFY_PATH and no
 * stdlib are searched. (A relative import such as "../x.clf" or an
 * absolute one is resolved like any other: it names a file outside that
 * directory, which normally does not exist.)
 *
 * Each input runs through:
 *   - cc_dump_tokens and cc_dump_ast (the lexer and parser alone, as the
 *     golden tests use them), output to /dev/null;
 *   - cc_compile (modules, checker, code generator, Hyperscan builds,
 *     serializer); diagnostics are printed to /dev/null (line/column
 *     computation on arbitrary bytes);
 *   - when it compiles: clf_program_load must accept the result (a
 *     compiler bug otherwise), then the disassembler and the fixed
 *     requests (fuzz_common.c).
 * Inputs over 64 KiB are skipped.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "fuzz_common.h"

#define FUZZ_MAX_INPUT (64 * 1024)
static const char lib_mark[] = "\n//--- lib.clf\n";

static char dir[PATH_MAX - 16]; /* room for "/main.clf" in the paths */
static char main_path[PATH_MAX];
static char lib_path[PATH_MAX];
static FILE *devnull;

static void cleanup(void)
{
    if (!dir[0]) return;
    unlink(main_path);
    unlink(lib_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    if (snprintf(dir, sizeof dir, "%s/clf-fuzz-source-XXXXXX", tmp) >= (int)sizeof dir ||
        !mkdtemp(dir)) {
        perror("fuzz_source: mkdtemp");
        exit(1);
    }
    snprintf(main_path, sizeof main_path, "%s/main.clf", dir);
    snprintf(lib_path, sizeof lib_path, "%s/lib.clf", dir);
    devnull = fopen("/dev/null", "w");
    if (!devnull) {
        perror("fuzz_source: /dev/null");
        exit(1);
    }
    atexit(cleanup);
    return 0;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        exit(1); /* the machine, not the compiler: stop the run */
    }
}

static size_t find(const uint8_t *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(hay + i, needle, m) == 0) return i;
    return n;
}

typedef int (*dump_fn)(const char *, const cc_options *, src_set *, arena *, FILE *);

static void dump(dump_fn fn, const cc_options *o)
{
    arena ar = {0};
    src_set src = {.ar = &ar};
    int rc = fn(main_path, o, &src, &ar, devnull);
    if (rc) src_print(&src, devnull);
    src_free(&src);
    arena_free(&ar);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT) return 0;
    if (!dir[0]) LLVMFuzzerInitialize(NULL, NULL);

    size_t ml = sizeof lib_mark - 1;
    size_t cut = find(data, size, lib_mark, ml);
    if (cut < size) {
        write_file(main_path, data, cut + 1); /* keep the newline */
        write_file(lib_path, data + cut + ml, size - cut - ml);
    } else {
        write_file(main_path, data, size);
        unlink(lib_path);
    }

    cc_options o;
    cc_options_init(&o); /* the defaults classifyc uses, then no search path */
    o.include_dirs = NULL;
    o.ninclude = 0;
    o.env_path = NULL;
    o.stdlib_dir = NULL;

    dump(cc_dump_tokens, &o);
    dump(cc_dump_ast, &o);

    arena ar = {0};
    src_set src = {.ar = &ar};
    uint8_t *bin = NULL;
    size_t len = 0;
    int rc = cc_compile(main_path, &o, &src, &ar, NULL, &bin, &len);
    if (rc != 0) {
        if (ar.failed) goto done; /* out of memory: nothing to check */
        if (src.nerrors == 0) FUZZ_FAIL("cc_compile failed without a diagnostic");
        if (bin) FUZZ_FAIL("cc_compile failed but returned a program");
        src_print(&src, fuzz_verbose() ? stderr : devnull);
    } else {
        if (fuzz_verbose()) fprintf(stderr, "fuzz: compiled, %zu bytes\n", len);
        if (src.nerrors) FUZZ_FAIL("cc_compile succeeded with %u errors", src.nerrors);
        if (!bin || len == 0) FUZZ_FAIL("cc_compile succeeded without a program");
        clf_program *prog = NULL;
        char err[CLF_ERRMSG_SIZE] = "";
        clf_status st = clf_program_load(bin, len, NULL, &prog, err, sizeof err);
        if (st == CLF_E_NOMEM) goto done;
        if (st != CLF_OK)
            FUZZ_FAIL("the compiled program does not load: %d (%s): %s", st,
                      clf_strerror(st), err);
        fuzz_disassemble(prog);
        fuzz_classify_fixed(prog, 1);
        clf_program_free(prog);
    }
done:
    free(bin);
    src_free(&src);
    arena_free(&ar);
    return 0;
}
