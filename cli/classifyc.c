/*
 * classifyc: compiles a .clf rules file into a rules file for libclassify.
 *
 * Exit status: 0 success, 1 the source has errors (printed as
 * file:line:col: error: ...) or a test failed (--test), 2 usage or I/O
 * errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "atomic_write.h"
#include "classify.h"
#include "compile.h"
#include "dump.h"
#include "lint.h"
#include "test_run.h"

#ifndef CLF_STDLIB_DIR
#define CLF_STDLIB_DIR "/usr/local/share/libclassify/stdlib"
#endif

static const char usage[] =
    "usage: classifyc [options] FILE.clf\n"
    "       (FILE.clf may be - for standard input; then -o is required)\n"
    "\n"
    "Compiles FILE.clf and the modules it imports into one self-contained\n"
    "rules file for libclassify and classify-run.\n"
    "\n"
    "options:\n"
    "  -o FILE        write the rules file to FILE (default: FILE.clf with\n"
    "                 .bin in place of .clf); written atomically, and not at\n"
    "                 all when compilation fails\n"
    "  -I DIR         search DIR for imported modules; repeatable, searched\n"
    "                 in order before $CLASSIFY_PATH and the installed stdlib\n"
    "  --check        check the source (types, patterns) and write nothing\n"
    "  --test         run the `test` blocks of FILE.clf and print a pass/fail\n"
    "                 line for each and a summary; writes nothing (FILE.clf\n"
    "                 need not have a main filter)\n"
    "  --dump         print the bytecode and patterns, with source lines\n"
    "  --no-inline    keep every call to a fn or filter a call, so that\n"
    "                 classify-run --explain shows calls, returns and depth\n"
    "                 (by default small ones are inlined: faster)\n"
    "  --ast          print the syntax tree of FILE.clf (compiler debugging)\n"
    "  --tokens       print the tokens of FILE.clf (compiler debugging)\n"
    "  --max-source-bytes N\n"
    "                 refuse source files larger than N bytes (default 16 MiB)\n"
    "  --max-nesting N\n"
    "                 refuse brackets, blocks or runs of '!' nested deeper than\n"
    "                 N (default 100)\n"
    "  --max-patterns N\n"
    "                 refuse programs with more than N Hyperscan patterns\n"
    "                 (default 100000)\n"
    "  --max-registers N\n"
    "                 refuse a filter or fn needing more than N registers\n"
    "                 (default and ceiling 65535)\n"
    "  --ua-corpus FILE\n"
    "                 hold the User-Agent patterns of FILE.clf against the\n"
    "                 User-Agents of FILE (one per line, as classify-run\n"
    "                 --ua-file reads): warn about a spelling no client uses\n"
    "                 but one does ignoring case, and about short tokens\n"
    "                 found inside longer words; repeatable\n"
    "  --max-data-age DAYS\n"
    "                 warn about a package whose data (its `// data-date:`\n"
    "                 header line, which generated packages carry) is older\n"
    "                 than DAYS; today is $SOURCE_DATE_EPOCH when set\n"
    "  --stdlib DIR   use DIR as the standard library directory\n"
    "                 (default " CLF_STDLIB_DIR ")\n"
    "  -h, --help     show this help\n"
    "  --version      show the version\n"
    "\n"
    "environment:\n"
    "  CLASSIFY_PATH  colon-separated module directories, searched after -I\n"
    "\n"
    "exit status: 0 success, 1 errors in the source or a failed test,\n"
    "2 usage or I/O error\n";

/* True when `path` names the same file as one of the compilation's
 * sources (so -o would destroy the input). */
static int is_a_source(const src_set *src, const char *path)
{
    struct stat out;
    if (stat(path, &out) != 0) return 0;
    for (uint32_t i = 0; i < src->nfiles; i++) {
        struct stat in;
        if (strcmp(src->files[i].path, "-") != 0 && stat(src->files[i].path, &in) == 0 &&
            in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return 1;
    }
    return 0;
}

/* The numeric limit options, each with its ceiling. */
typedef struct limit_opt {
    const char *name;
    unsigned long long ceiling;
    uint64_t *(*u64)(cc_options *o);
    unsigned *(*uns)(cc_options *o);
} limit_opt;

static uint64_t *source_bytes(cc_options *o) { return &o->max_source_bytes; }
static unsigned *nesting(cc_options *o) { return &o->max_nesting; }
static unsigned *patterns(cc_options *o) { return &o->max_patterns; }
static unsigned *registers(cc_options *o) { return &o->max_registers; }

static const limit_opt limit_opts[] = {
    {"--max-source-bytes", UINT64_MAX, source_bytes, NULL},
    {"--max-nesting", UINT32_MAX, NULL, nesting},
    {"--max-patterns", UINT32_MAX, NULL, patterns},
    {"--max-registers", 65535, NULL, registers},
};

static const limit_opt *find_limit(const char *arg)
{
    for (size_t i = 0; i < sizeof limit_opts / sizeof limit_opts[0]; i++)
        if (strcmp(arg, limit_opts[i].name) == 0) return &limit_opts[i];
    return NULL;
}

static char *default_output(const char *in)
{
    size_t n = strlen(in);
    char *o = malloc(n + 5);
    if (!o) return NULL;
    if (n > 4 && strcmp(in + n - 4, ".clf") == 0) n -= 4;
    memcpy(o, in, n);
    strcpy(o + n, ".bin");
    return o;
}

int main(int argc, char **argv)
{
    const char *input = NULL, *output = NULL;
    const char **incs = calloc((size_t)argc, sizeof *incs);
    size_t ninc = 0;
    int check = 0, dump = 0, ast = 0, tokens = 0, test = 0;
    const limit_opt *lim;
    lint_corpus corpus = {0};
    cc_options o;
    cc_options_init(&o);
    o.stdlib_dir = CLF_STDLIB_DIR;
    o.env_path = getenv("CLASSIFY_PATH");
    /* "today" for --max-data-age: SOURCE_DATE_EPOCH (reproducible-builds.org)
     * makes it reproducible, as tests need */
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    o.now = sde && *sde ? (int64_t)strtoll(sde, NULL, 10) : (int64_t)time(NULL);
    if (!incs) return 2;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            free(incs);
            lint_corpus_free(&corpus);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("classifyc %s (rules-file format %u, %s %s)\n", CLF_VERSION_STRING,
                   clf_format_version(), clf_matcher_name(), clf_matcher_version());
            free(incs);
            lint_corpus_free(&corpus);
            return 0;
        } else if (strcmp(a, "-o") == 0 && has_next) {
            output = argv[++i];
        } else if (strcmp(a, "-I") == 0 && has_next) {
            incs[ninc++] = argv[++i];
        } else if (strncmp(a, "-I", 2) == 0 && a[2]) {
            incs[ninc++] = a + 2;
        } else if (strcmp(a, "--stdlib") == 0 && has_next) {
            o.stdlib_dir = argv[++i];
        } else if (strcmp(a, "--max-data-age") == 0 && has_next) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || v == 0 || v > 36500 || argv[i][0] == '-') {
                fprintf(stderr, "classifyc: --max-data-age needs a number of days from 1 to "
                                "36500\n");
                free(incs);
                lint_corpus_free(&corpus);
                return 2;
            }
            o.max_data_age = (unsigned)v;
        } else if (strcmp(a, "--ua-corpus") == 0 && has_next) {
            char err[256];
            const char *f = argv[++i];
            if (lint_corpus_add(&corpus, f, UINT64_C(1) << 30, err, sizeof err) != 0) {
                fprintf(stderr, "classifyc: --ua-corpus %s: %s\n", f, err);
                free(incs);
                lint_corpus_free(&corpus);
                return 2;
            }
            o.lint_corpus = &corpus;
        } else if ((lim = find_limit(a)) && has_next) {
            char *end;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || v == 0 || v > lim->ceiling || argv[i][0] == '-') {
                fprintf(stderr, "classifyc: %s needs a number from 1 to %llu\n", a,
                        lim->ceiling);
                free(incs);
                lint_corpus_free(&corpus);
                return 2;
            }
            if (lim->u64) *lim->u64(&o) = v;
            else *lim->uns(&o) = (unsigned)v;
        } else if (strcmp(a, "--check") == 0) {
            check = 1;
        } else if (strcmp(a, "--test") == 0) {
            test = 1;
        } else if (strcmp(a, "--no-inline") == 0) {
            o.no_inline = 1;
        } else if (strcmp(a, "--dump") == 0) {
            dump = 1;
        } else if (strcmp(a, "--ast") == 0) {
            ast = 1;
        } else if (strcmp(a, "--tokens") == 0) {
            tokens = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "classifyc: unknown option or missing argument: %s\n"
                            "try 'classifyc --help'\n", a);
            free(incs);
            lint_corpus_free(&corpus);
            return 2;
        } else if (!input) {
            input = a;
        } else {
            fprintf(stderr, "classifyc: only one input file may be given (got %s and %s)\n",
                    input, a);
            free(incs);
            lint_corpus_free(&corpus);
            return 2;
        }
    }
    if (!input) {
        fputs("classifyc: no input file\ntry 'classifyc --help'\n", stderr);
        free(incs);
        lint_corpus_free(&corpus);
        return 2;
    }
    if (strcmp(input, "-") == 0 && !output && !check && !dump && !ast && !tokens) {
        fputs("classifyc: reading the source from standard input: give -o FILE\n", stderr);
        free(incs);
        lint_corpus_free(&corpus);
        return 2;
    }
    o.include_dirs = incs;
    o.ninclude = ninc;

    arena ar = {0};
    src_set src = {.ar = &ar};
    uint8_t *bin = NULL;
    size_t len = 0;
    cg_tests tests = {0};
    int rc;
    if (tokens)
        rc = cc_dump_tokens(input, &o, &src, &ar, stdout) ? 1 : 0;
    else if (ast)
        rc = cc_dump_ast(input, &o, &src, &ar, stdout) ? 1 : 0;
    else
        rc = cc_compile(input, &o, &src, &ar, test ? &tests : NULL, &bin, &len) ? 1 : 0;
    /* Warnings are printed even when compilation succeeds. */
    if (src.first) src_print(&src, stderr);
    if (rc) {
        /* A file that cannot be read is an I/O error, not a source error. */
        if (src.first && src.first->file == UINT32_MAX && src.nfiles == 0) rc = 2;
        fprintf(stderr, "classifyc: %u error%s\n", src.nerrors, src.nerrors == 1 ? "" : "s");
    }
    if (rc == 0 && test) {
        if (tests.ntests == 0) {
            fprintf(stderr, "classifyc: %s has no test blocks\n", input);
            rc = 1;
        } else {
            rc = cc_run_tests(&src, &tests, bin, len, stdout);
        }
        free(bin);
        bin = NULL;
    }
    cg_tests_free(&tests);
    if (rc == 0 && bin) {
        /* Load what we wrote with the loader and verifier hosts use: a
         * compiler bug must not produce a file that fails to load. */
        char err[CLF_ERRMSG_SIZE];
        if (cc_load_back(bin, len, &src, dump ? stdout : NULL, err, sizeof err) != 0) {
            fprintf(stderr, "classifyc: internal error: the compiled program does not load: %s\n", err);
            rc = 2;
        }
        int write_file = rc == 0 && !check && (!dump || output);
        if (write_file) {
            char *out = output ? NULL : default_output(input);
            const char *target = output ? output : out;
            if (target && is_a_source(&src, target)) {
                fprintf(stderr, "classifyc: refusing to overwrite %s: it is a source file of "
                                "this compilation\n", target);
                rc = 2;
            } else if (!target || atomic_write(target, bin, len, err, sizeof err)) {
                fprintf(stderr, "classifyc: %s\n", target ? err : "out of memory");
                rc = 2;
            }
            free(out);
        }
    }
    free(bin);
    src_free(&src);
    arena_free(&ar);
    free(incs);
    lint_corpus_free(&corpus);
    /* --dump, --ast and --tokens write to stdout: a full disk or a closed
     * pipe must not pass for success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "classifyc: cannot write standard output\n");
        return 2;
    }
    return rc;
}
