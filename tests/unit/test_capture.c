/*
 * test_capture.c: vm/capture.c, capture groups with PCRE2.
 *
 * Most tests run twice, with JIT (when PCRE2 has it) and with the
 * interpreter (VM_CAPTURE_NO_JIT), since a capture may take either path.
 * Subjects are heap copies of exactly their length, so an ASan build
 * catches a read past subj[n-1]. Every allocation goes through a counting
 * allocator, so the tests can check that matching allocates nothing and
 * that everything allocated is freed.
 */
#include <criterion/criterion.h>
#include <hs.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "capture.h"

/* ---- a counting allocator ---------------------------------------------- */

typedef struct counter {
    long allocs, frees;
    long long live;  /* bytes allocated and not freed */
    long fail_at;    /* the allocation number that fails, or -1 */
} counter;

typedef struct block {
    size_t size;
    max_align_t align;
} block;

static void *count_alloc(void *ud, size_t n)
{
    counter *c = ud;
    if (c->fail_at >= 0 && c->allocs == c->fail_at) {
        c->fail_at = -2; /* fail once */
        return NULL;
    }
    block *b = malloc(sizeof *b + n);
    if (!b) return NULL;
    b->size = n;
    c->allocs++;
    c->live += (long long)n;
    return b + 1;
}

static void count_free(void *ud, void *p)
{
    counter *c = ud;
    block *b = (block *)p - 1;
    c->frees++;
    c->live -= (long long)b->size;
    free(b);
}

static counter cnt;
static vm_allocator counting = {count_alloc, count_free, &cnt};

static void reset_counter(void)
{
    memset(&cnt, 0, sizeof cnt);
    cnt.fail_at = -1;
}

/* ---- helpers ------------------------------------------------------------ */

static const uint32_t modes[2] = {0, VM_CAPTURE_NO_JIT};

static vm_capture *re(const char *expr, uint32_t flags)
{
    vm_capture *c = NULL;
    char err[256];
    clf_status st = vm_capture_new(expr, strlen(expr), flags, &counting, &c, err, sizeof err);
    cr_assert_eq(st, CLF_OK, "/%s/ did not compile: %s", expr, err);
    cr_assert(c);
    return c;
}

static vm_capture_scratch *scratch(uint32_t max_groups)
{
    vm_capture_scratch *s = NULL;
    cr_assert_eq(vm_capture_scratch_new(max_groups, &counting, &s), CLF_OK);
    cr_assert(s);
    return s;
}

/* A heap copy of subj[0..n) without a NUL after it. */
static char *exact(const char *subj, size_t n)
{
    char *p = malloc(n ? n : 1);
    cr_assert(p);
    if (n) memcpy(p, subj, n);
    return p;
}

/* The result of one capture: ok (1/0) and the text, as a NUL-terminated
 * copy (group text may hold NULs: len says how much). */
typedef struct result {
    int ok;
    size_t len;
    size_t off; /* where the slice starts in the subject */
    char text[256];
} result;

static result cap_n(const vm_capture *c, vm_capture_scratch *s, const char *subj, size_t n,
                    uint32_t group)
{
    result r = {0};
    char *copy = exact(subj, n);
    const char *p = "sentinel";
    size_t pn = 12345;
    r.ok = vm_capture_match(c, s, copy, n, group, &p, &pn);
    cr_assert(p, "p must never be NULL");
    if (r.ok) {
        cr_assert(p >= copy && p + pn <= copy + n, "the capture is not a slice of the subject");
        r.off = (size_t)(p - copy);
    } else {
        cr_assert_str_eq(p, "", "no capture must give \"\"");
        cr_assert_eq(pn, 0);
    }
    r.len = pn;
    cr_assert_lt(pn, sizeof r.text);
    memcpy(r.text, p, pn);
    r.text[pn] = '\0';
    free(copy);
    return r;
}

static result cap(const vm_capture *c, vm_capture_scratch *s, const char *subj, uint32_t group)
{
    return cap_n(c, s, subj, strlen(subj), group);
}

#define ASSERT_CAP(c, s, subj, group, want)                                                  \
    do {                                                                                     \
        result r_ = cap((c), (s), (subj), (group));                                          \
        cr_assert_eq(r_.ok, 1, "group %u of \"%s\": no capture, want \"%s\"", (unsigned)(group), \
                     (subj), (want));                                                        \
        cr_assert_str_eq(r_.text, (want), "group %u of \"%s\"", (unsigned)(group), (subj));   \
    } while (0)

#define ASSERT_NOCAP(c, s, subj, group)                                                      \
    do {                                                                                     \
        result r_ = cap((c), (s), (subj), (group));                                          \
        cr_assert_eq(r_.ok, 0, "group %u of \"%s\": got \"%s\", want no capture",            \
                     (unsigned)(group), (subj), r_.text);                                    \
    } while (0)

static const char UA[] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
                         "(KHTML, like Gecko) Chrome/120.0.6099.130 Safari/537.36";

/* ---- values ------------------------------------------------------------- */

Test(capture, numbered_groups)
{
    reset_counter();
    vm_capture_scratch *s = scratch(4);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("Chrome\\/(\\d+)\\.(\\d+)", modes[m]);
        cr_assert_eq(vm_capture_ngroups(c), 2);
        ASSERT_CAP(c, s, UA, 1, "120");
        ASSERT_CAP(c, s, UA, 2, "0");
        ASSERT_CAP(c, s, UA, 0, "Chrome/120.0");
        result r = cap(c, s, UA, 1);
        cr_assert_eq(r.off, (size_t)(strstr(UA, "Chrome/") - UA) + 7);
        /* A group the regex does not have. */
        ASSERT_NOCAP(c, s, UA, 3);
        vm_capture_free(c);

        c = re("^(\\S+) \\(([^;)]+);", modes[m]);
        ASSERT_CAP(c, s, UA, 1, "Mozilla/5.0");
        ASSERT_CAP(c, s, UA, 2, "Windows NT 10.0");
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
    cr_assert_eq(cnt.frees, cnt.allocs);
}

Test(capture, group_zero_and_leftmost_match)
{
    reset_counter();
    vm_capture_scratch *s = scratch(2);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("b+", modes[m]);
        cr_assert_eq(vm_capture_ngroups(c), 0);
        result r = cap(c, s, "aabbbcbb", 0);
        cr_assert_eq(r.ok, 1);
        cr_assert_str_eq(r.text, "bbb");
        cr_assert_eq(r.off, 2);
        ASSERT_NOCAP(c, s, "aabbbcbb", 1);
        vm_capture_free(c);

        /* Leftmost, then PCRE's first alternative: not longest. */
        c = re("(\\d+)", modes[m]);
        ASSERT_CAP(c, s, "ab12cd34567", 1, "12");
        vm_capture_free(c);
        c = re("(a|ab)(c|bcd)", modes[m]);
        ASSERT_CAP(c, s, "xabcd", 0, "abcd");
        ASSERT_CAP(c, s, "xabcd", 1, "a"); /* not "ab" */
        ASSERT_CAP(c, s, "xabcd", 2, "bcd");
        vm_capture_free(c);
        /* Greedy and lazy repeats. */
        c = re("\\((.*)\\)", modes[m]);
        ASSERT_CAP(c, s, "(a) (b)", 1, "a) (b");
        vm_capture_free(c);
        c = re("\\((.*?)\\)", modes[m]);
        ASSERT_CAP(c, s, "(a) (b)", 1, "a");
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

Test(capture, named_groups)
{
    reset_counter();
    vm_capture_scratch *s = scratch(3);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("(?<major>\\d+)\\.(?P<minor>\\d+)(?:\\.(\\d+))?", modes[m]);
        cr_assert_eq(vm_capture_ngroups(c), 3);
        cr_assert_eq(vm_capture_group_number(c, "major", 5), 1);
        cr_assert_eq(vm_capture_group_number(c, "minor", 5), 2);
        /* The name is (pointer, length): no NUL needed, none read past. */
        cr_assert_eq(vm_capture_group_number(c, "majorXYZ", 5), 1);
        cr_assert_eq(vm_capture_group_number(c, "maj", 3), -1);
        cr_assert_eq(vm_capture_group_number(c, "majors", 6), -1);
        cr_assert_eq(vm_capture_group_number(c, "Major", 5), -1);
        cr_assert_eq(vm_capture_group_number(c, "", 0), -1);
        cr_assert_eq(vm_capture_group_number(c, "a-very-long-name-longer-than-any-entry", 38), -1);
        cr_assert_eq(vm_capture_group_number(c, "mi\0or", 5), -1);
        long g = vm_capture_group_number(c, "minor", 5);
        ASSERT_CAP(c, s, "Version 10.42 here", (uint32_t)g, "42");
        ASSERT_CAP(c, s, "Version 10.42 here", 1, "10");
        ASSERT_CAP(c, s, "v1.2.3", 3, "3");
        vm_capture_free(c);

        c = re("(\\d+)", modes[m]);
        cr_assert_eq(vm_capture_group_number(c, "x", 1), -1);
        vm_capture_free(c);
    }
    cr_assert_eq(vm_capture_group_number(NULL, "x", 1), -1);
    vm_capture_scratch_free(s);
}

Test(capture, unset_and_empty_groups)
{
    reset_counter();
    vm_capture_scratch *s = scratch(2);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("a(b)?c", modes[m]);
        ASSERT_NOCAP(c, s, "xacx", 1); /* the group did not take part */
        ASSERT_CAP(c, s, "xacx", 0, "ac");
        ASSERT_CAP(c, s, "xabcx", 1, "b");
        vm_capture_free(c);

        c = re("(x)|(y)", modes[m]);
        ASSERT_NOCAP(c, s, "-y-", 1);
        ASSERT_CAP(c, s, "-y-", 2, "y");
        vm_capture_free(c);

        /* A group that matched the empty string took part: 1, length 0. */
        c = re("a(b*)c", modes[m]);
        result r = cap(c, s, "zac", 1);
        cr_assert_eq(r.ok, 1);
        cr_assert_eq(r.len, 0);
        cr_assert_eq(r.off, 2);
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

Test(capture, no_match)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("Chrome\\/(\\d+)", modes[m]);
        ASSERT_NOCAP(c, s, "curl/8.5.0", 1);
        ASSERT_NOCAP(c, s, "curl/8.5.0", 0);
        ASSERT_NOCAP(c, s, "", 1);
        /* NULL subject of length 0 is the empty subject. */
        const char *p = "x";
        size_t pn = 7;
        cr_assert_eq(vm_capture_match(c, s, NULL, 0, 1, &p, &pn), 0);
        cr_assert_str_eq(p, "");
        cr_assert_eq(pn, 0);
        vm_capture_free(c);

        c = re("(a*)", modes[m]);
        cr_assert_eq(vm_capture_match(c, s, NULL, 0, 1, &p, &pn), 1);
        cr_assert_eq(pn, 0);
        /* p and pn may be NULL. */
        cr_assert_eq(vm_capture_match(c, s, "aa", 2, 1, NULL, NULL), 1);
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

/* ---- flags -------------------------------------------------------------- */

Test(capture, caseless)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("chrome\\/(\\d+)", modes[m]);
        ASSERT_NOCAP(c, s, "CHROME/99", 1);
        vm_capture_free(c);
        c = re("chrome\\/(\\d+)", modes[m] | HS_FLAG_CASELESS);
        ASSERT_CAP(c, s, "CHROME/99", 1, "99");
        ASSERT_CAP(c, s, "ChRoMe/7", 1, "7");
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

Test(capture, dotall)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("a(.+)b", modes[m]);
        ASSERT_NOCAP(c, s, "a\nx\nb", 1);
        ASSERT_CAP(c, s, "a\nxa-b", 1, "-"); /* the match starts after the newline */
        vm_capture_free(c);
        c = re("a(.+)b", modes[m] | HS_FLAG_DOTALL);
        ASSERT_CAP(c, s, "a\nx\nb", 1, "\nx\n");
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

Test(capture, multiline)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    const char *text = "first line\nsecond\nthird one";
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("^(\\w+)$", modes[m]);
        ASSERT_NOCAP(c, s, text, 1);
        ASSERT_CAP(c, s, "solo\n", 1, "solo"); /* $ before a final newline */
        vm_capture_free(c);
        c = re("^(\\w+)$", modes[m] | HS_FLAG_MULTILINE);
        ASSERT_CAP(c, s, text, 1, "second");
        vm_capture_free(c);
        /* \A and \z ignore the flag. */
        c = re("\\A(\\w+)", modes[m] | HS_FLAG_MULTILINE);
        ASSERT_CAP(c, s, text, 1, "first");
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

Test(capture, utf8_flag)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("x(.)y", modes[m]);
        ASSERT_NOCAP(c, s, "x\xc3\xa9y", 1); /* two bytes: '.' takes one */
        vm_capture_free(c);
        c = re("x(.)y", modes[m] | HS_FLAG_UTF8);
        ASSERT_CAP(c, s, "x\xc3\xa9y", 1, "\xc3\xa9");
        /* Invalid UTF-8 in the subject does not stop a match elsewhere. */
        ASSERT_CAP(c, s, "\xff\xfe x\xc3\xa9y", 1, "\xc3\xa9");
        vm_capture_free(c);
    }
    vm_capture_scratch_free(s);
}

Test(capture, nul_bytes)
{
    reset_counter();
    vm_capture_scratch *s = scratch(2);
    static const char subj[] = "ab\0cd\0eef\0";
    size_t n = sizeof subj - 1; /* 10 bytes, 3 NULs */
    for (int m = 0; m < 2; m++) {
        vm_capture *c = re("d\\x00(e+)", modes[m]);
        result r = cap_n(c, s, subj, n, 1);
        cr_assert_eq(r.ok, 1);
        cr_assert_eq(r.len, 2);
        cr_assert_eq(r.off, 6);
        cr_assert_str_eq(r.text, "ee");
        vm_capture_free(c);

        /* A group spanning NULs: the length says how much. */
        c = re("b(.+)f", modes[m]);
        r = cap_n(c, s, subj, n, 1);
        cr_assert_eq(r.ok, 1);
        cr_assert_eq(r.len, 6);
        cr_assert_eq(memcmp(r.text, "\0cd\0ee", 6), 0);
        /* The subject ends at n, not at the first NUL. */
        r = cap_n(c, s, subj, 2, 1);
        cr_assert_eq(r.ok, 0);
        vm_capture_free(c);

        /* The regex is (pointer, length): a NUL in it is a character, and
         * bytes after len are not part of it. */
        vm_capture *d = NULL;
        char err[128];
        cr_assert_eq(vm_capture_new("(\\d+)XYZ", 5, modes[m], &counting, &d, err, sizeof err),
                     CLF_OK);
        ASSERT_CAP(d, s, "v12XY", 1, "12");
        vm_capture_free(d);
        cr_assert_eq(vm_capture_new("c\0(d)", 5, modes[m], &counting, &d, err, sizeof err),
                     CLF_OK);
        r = cap_n(d, s, "xc\0d", 4, 1);
        cr_assert_eq(r.ok, 1);
        cr_assert_str_eq(r.text, "d");
        vm_capture_free(d);
    }
    vm_capture_scratch_free(s);
}

/* ---- errors ------------------------------------------------------------- */

Test(capture, invalid_regex)
{
    reset_counter();
    vm_capture *c = (vm_capture *)&c;
    char err[256];
    cr_assert_eq(vm_capture_new("(abc", 4, 0, &counting, &c, err, sizeof err), CLF_E_FORMAT);
    cr_assert_null(c);
    cr_assert(strstr(err, "missing closing parenthesis"), "err: %s", err);
    cr_assert(strstr(err, "at offset 4"), "err: %s", err);

    cr_assert_eq(vm_capture_new("a{3,1}", 6, 0, &counting, &c, err, sizeof err), CLF_E_FORMAT);
    cr_assert(strstr(err, "out of order"), "err: %s", err);
    cr_assert(strstr(err, "at offset 5"), "err: %s", err);

    cr_assert_eq(vm_capture_new("[z-a]", 5, 0, &counting, &c, err, sizeof err), CLF_E_FORMAT);
    cr_assert(strstr(err, "range out of order"), "err: %s", err);

    /* Too many groups. */
    char many[2 * (VM_CAPTURE_MAX_GROUPS + 1) + 1];
    for (unsigned i = 0; i <= VM_CAPTURE_MAX_GROUPS; i++) memcpy(many + 2 * i, "()", 2);
    size_t mn = 2 * (VM_CAPTURE_MAX_GROUPS + 1);
    cr_assert_eq(vm_capture_new(many, mn, 0, &counting, &c, err, sizeof err), CLF_E_FORMAT);
    cr_assert(strstr(err, "101 capture groups, more than 100"), "err: %s", err);
    cr_assert_eq(vm_capture_new(many, mn - 2, 0, &counting, &c, err, sizeof err), CLF_OK);
    cr_assert_eq(vm_capture_ngroups(c), VM_CAPTURE_MAX_GROUPS);
    vm_capture_free(c);

    /* A tiny error buffer is truncated, NULL is fine. */
    char tiny[8];
    cr_assert_eq(vm_capture_new("(", 1, 0, &counting, &c, tiny, sizeof tiny), CLF_E_FORMAT);
    cr_assert_eq(strlen(tiny), 7);
    cr_assert_eq(vm_capture_new("(", 1, 0, &counting, &c, NULL, 0), CLF_E_FORMAT);

    /* Misuse. */
    cr_assert_eq(vm_capture_new("a", 1, 0, &counting, NULL, err, sizeof err), CLF_E_INVALID);
    cr_assert_eq(vm_capture_new(NULL, 3, 0, &counting, &c, err, sizeof err), CLF_E_INVALID);
    vm_capture_scratch *s = (vm_capture_scratch *)&s;
    cr_assert_eq(vm_capture_scratch_new(VM_CAPTURE_MAX_GROUPS + 1, &counting, &s),
                 CLF_E_INVALID);
    cr_assert_null(s);
    cr_assert_eq(vm_capture_scratch_new(1, &counting, NULL), CLF_E_INVALID);
    vm_capture_free(NULL);
    vm_capture_scratch_free(NULL);
    cr_assert_eq(cnt.frees, cnt.allocs);
    cr_assert_eq(cnt.live, 0);
}

Test(capture, scratch_too_small_for_regex)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    vm_capture *c = re("(a)(b)", 0);
    ASSERT_NOCAP(c, s, "ab", 1);
    ASSERT_NOCAP(c, s, "ab", 0);
    vm_capture_free(c);
    vm_capture_scratch_free(s);
    s = scratch(0);
    c = re("a+", 0);
    ASSERT_CAP(c, s, "baab", 0, "aa");
    vm_capture_free(c);
    vm_capture_scratch_free(s);
}

Test(capture, default_allocator)
{
    /* al == NULL: malloc/free. */
    vm_capture *c = NULL;
    vm_capture_scratch *s = NULL;
    cr_assert_eq(vm_capture_new("(\\d+)", 5, 0, NULL, &c, NULL, 0), CLF_OK);
    cr_assert_eq(vm_capture_scratch_new(1, NULL, &s), CLF_OK);
    const char *p;
    size_t pn;
    cr_assert_eq(vm_capture_match(c, s, "ab42", 4, 1, &p, &pn), 1);
    cr_assert_eq(pn, 2);
    cr_assert_eq(memcmp(p, "42", 2), 0);
    vm_capture_scratch_free(s);
    vm_capture_free(c);
}

/* ---- limits ------------------------------------------------------------- */

/* A subject of `run` copies of `fill` followed by `tail`, malloc'd. */
static char *run_of(char fill, size_t run, const char *tail, size_t *n)
{
    size_t tl = strlen(tail);
    char *b = malloc(run + tl);
    cr_assert(b);
    memset(b, fill, run);
    memcpy(b + run, tail, tl);
    *n = run + tl;
    return b;
}

/* Matching after a limit was hit still works. */
static void still_works(vm_capture_scratch *s, uint32_t mode)
{
    vm_capture *c = re("Chrome\\/(\\d+)", mode);
    ASSERT_CAP(c, s, UA, 1, "120");
    vm_capture_free(c);
}

/* The classic exponential regexes end, with no capture (these subjects
 * have no match) or the right one. The timeout only guards against a
 * hang; without the step budget the last ones take minutes. */
Test(capture, pathological_regexes_end, .timeout = 60)
{
    reset_counter();
    vm_capture_scratch *s = scratch(2);
    for (int m = 0; m < 2; m++) {
        size_t n;
        char *subj = run_of('a', 40, "b", &n);
        const char *exprs[] = {"(a+)+$", "(a|aa)+$", "(a*)*$", "((a+)*)+c"};
        for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
            vm_capture *c = re(exprs[i], modes[m]);
            const char *p = "x";
            size_t pn = 1;
            cr_assert_eq(vm_capture_match(c, s, subj, n, 1, &p, &pn), 0, "%s", exprs[i]);
            cr_assert_str_eq(p, "");
            cr_assert_eq(pn, 0);
            vm_capture_free(c);
        }
        free(subj);
        still_works(s, modes[m]);
    }
    cr_assert_eq(vm_capture_scratch_refused(s), 0);
    vm_capture_scratch_free(s);
    cr_assert_eq(cnt.frees, cnt.allocs);
}

/* Regexes that do match, but only after backtracking that PCRE2's own
 * limit (which restarts at every start position) would let run for
 * seconds: each gives no capture or the right one. */
Test(capture, budget_covers_all_start_positions, .timeout = 60)
{
    reset_counter();
    vm_capture_scratch *s = scratch(2);
    for (int m = 0; m < 2; m++) {
        size_t n;
        /* Exponential at each of 10,000 start positions; the only match
         * is the last 15 'a's and the 'b'. */
        char *subj = run_of('a', 10000, "b", &n);
        vm_capture *c = re("((?:a|a){15})[bc]", modes[m]);
        const char *p;
        size_t pn;
        int ok = vm_capture_match(c, s, subj, n, 1, &p, &pn);
        cr_assert(ok == 0 || (pn == 15 && p == subj + n - 16));
        cr_assert(ok || pn == 0);
        vm_capture_free(c);
        free(subj);

        /* An ordinary regex, quadratic here: \w+ rescans the letters from
         * every start position before the "ax" at the end matches. */
        subj = run_of('a', 65536, "-ax", &n);
        c = re("(\\w+)x", modes[m]);
        ok = vm_capture_match(c, s, subj, n, 1, &p, &pn);
        cr_assert(ok == 0 || (pn == 1 && p == subj + n - 2));
        /* The same regex on a short value is captured. */
        ASSERT_CAP(c, s, "aaaa-ax", 1, "a");
        vm_capture_free(c);
        free(subj);
        still_works(s, modes[m]);
    }
    cr_assert_eq(vm_capture_scratch_refused(s), 0);
    vm_capture_scratch_free(s);
}

/* Linear regexes capture across long values (the budget charges scanning
 * by the byte only lightly). */
Test(capture, long_subjects)
{
    reset_counter();
    vm_capture_scratch *s = scratch(2);
    for (int m = 0; m < 2; m++) {
        size_t n;
        char *subj = run_of('a', 60000, "=1; b=2", &n);
        vm_capture *c = re("^([^=]*)=(\\d+)", modes[m]);
        const char *p;
        size_t pn;
        cr_assert_eq(vm_capture_match(c, s, subj, n, 1, &p, &pn), 1);
        cr_assert_eq(pn, 60000);
        cr_assert_eq(p, subj);
        cr_assert_eq(vm_capture_match(c, s, subj, n, 2, &p, &pn), 1);
        cr_assert_eq(pn, 1);
        cr_assert_eq(*p, '1');
        vm_capture_free(c);
        c = re("b=(\\d+)", modes[m]);
        cr_assert_eq(vm_capture_match(c, s, subj, n, 1, &p, &pn), 1);
        cr_assert_eq(*p, '2');
        vm_capture_free(c);
        free(subj);
    }
    vm_capture_scratch_free(s);
}

/* Deep backtracking in the interpreter: within the depth limit it
 * captures, past it it gives no capture; neither allocates. */
Test(capture, depth_limit)
{
    reset_counter();
    vm_capture_scratch *s = scratch(3);
    vm_capture *c = re("^(?:(a)|b)*c", VM_CAPTURE_NO_JIT);
    size_t n;
    char *subj = run_of('a', 300, "c", &n);
    long a0 = cnt.allocs;
    const char *p;
    size_t pn;
    cr_assert_eq(vm_capture_match(c, s, subj, n, 0, &p, &pn), 1);
    cr_assert_eq(pn, 301);
    cr_assert_eq(vm_capture_match(c, s, subj, n, 1, &p, &pn), 1);
    cr_assert_eq(p, subj + 299);
    free(subj);
    subj = run_of('a', 5000, "c", &n);
    cr_assert_eq(vm_capture_match(c, s, subj, n, 0, &p, &pn), 0);
    free(subj);
    cr_assert_eq(cnt.allocs, a0);
    cr_assert_eq(vm_capture_scratch_refused(s), 0);
    /* Same with all 3 groups in the regex: the biggest frames. */
    vm_capture_free(c);
    c = re("^(x?)(y?)(?:(a)|b)*c", VM_CAPTURE_NO_JIT);
    a0 = cnt.allocs;
    subj = run_of('a', 300, "c", &n);
    cr_assert_eq(vm_capture_match(c, s, subj, n, 3, &p, &pn), 1);
    free(subj);
    cr_assert_eq(cnt.allocs, a0);
    cr_assert_eq(vm_capture_scratch_refused(s), 0);
    vm_capture_free(c);
    vm_capture_scratch_free(s);
}

/* ---- memory ------------------------------------------------------------- */

/* After vm_capture_scratch_new, matching allocates nothing, whatever the
 * path (JIT, interpreter, fast or budgeted pass, limits hit); everything
 * new and scratch_new allocated is freed by the frees. */
Test(capture, matching_never_allocates, .timeout = 120)
{
    reset_counter();
    static const char *exprs[] = {
        "Chrome\\/(\\d+)\\.(\\d+)", "(?<os>Windows|Mac OS X|Linux)", "\\((.*?)\\)",
        "(?:(\\w+)\\s)+Gecko",      "^(?:(a)|b)*c",                   "(a+)+$",
        "(\\w+)x",                  "x(.)y",
    };
    enum { NE = sizeof exprs / sizeof *exprs };
    vm_capture *c[2][NE];
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < NE; i++) c[m][i] = re(exprs[i], modes[m] | (i == 7 ? HS_FLAG_UTF8 : 0));
    vm_capture_scratch *s = scratch(2);
    long allocs = cnt.allocs, frees = cnt.frees;
    cr_assert_gt(allocs, 0);
    cr_assert_gt(cnt.live, 100 * 1024, "the frame vector is allocated up front");

    size_t nlong;
    char *aaa = run_of('a', 2000, "c", &nlong);
    char *word = run_of('a', 3000, "-ax", &nlong);
    const char *subjects[] = {UA, "", "x\xc3\xa9y \xff", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"};
    int hits = 0;
    for (int k = 0; k < 1000; k++) {
        int m = k & 1, i = (k >> 1) % NE;
        const char *subj;
        size_t n;
        switch (k % 6) {
        case 4: subj = aaa; n = 2001; break;
        case 5: subj = word; n = 3003; break;
        default:
            subj = subjects[k % 4];
            n = strlen(subj);
            break;
        }
        const char *p;
        size_t pn;
        hits += vm_capture_match(c[m][i], s, subj, n, (uint32_t)(k % 3), &p, &pn);
    }
    cr_assert_gt(hits, 0);
    cr_assert_eq(cnt.allocs, allocs, "matching allocated %ld times", cnt.allocs - allocs);
    cr_assert_eq(cnt.frees, frees, "matching freed %ld times", cnt.frees - frees);
    cr_assert_eq(vm_capture_scratch_refused(s), 0);
    free(aaa);
    free(word);

    vm_capture_scratch_free(s);
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < NE; i++) vm_capture_free(c[m][i]);
    cr_assert_eq(cnt.frees, cnt.allocs);
    cr_assert_eq(cnt.live, 0);
}

/* Every allocation failure is reported as CLF_E_NOMEM (or, for the JIT's
 * own bookkeeping, leaves an interpreted regex) and leaks nothing. */
Test(capture, allocation_failures)
{
    int nomem = 0;
    for (long k = 0;; k++) {
        reset_counter();
        cnt.fail_at = k;
        vm_capture *c = NULL;
        char err[128];
        clf_status st = vm_capture_new("Chrome\\/(\\d+)", 13, 0, &counting, &c, err, sizeof err);
        int failed = cnt.fail_at == -2;
        cnt.fail_at = -1;
        if (st == CLF_OK) {
            vm_capture_scratch *s = scratch(1);
            ASSERT_CAP(c, s, UA, 1, "120");
            vm_capture_scratch_free(s);
            vm_capture_free(c);
        } else {
            cr_assert_eq(st, CLF_E_NOMEM, "allocation %ld: %d %s", k, st, err);
            cr_assert_str_eq(err, "out of memory");
            cr_assert_null(c);
            nomem++;
        }
        cr_assert_eq(cnt.frees, cnt.allocs, "allocation %ld: leak", k);
        if (!failed) break; /* every allocation has failed once */
    }
    cr_assert_gt(nomem, 0);
    for (long k = 0;; k++) {
        reset_counter();
        cnt.fail_at = k;
        vm_capture_scratch *s = (vm_capture_scratch *)&s;
        clf_status st = vm_capture_scratch_new(4, &counting, &s);
        int failed = cnt.fail_at == -2;
        if (failed) {
            cr_assert_eq(st, CLF_E_NOMEM, "allocation %ld", k);
            cr_assert_null(s);
        } else {
            cr_assert_eq(st, CLF_OK);
            vm_capture_scratch_free(s);
        }
        cr_assert_eq(cnt.frees, cnt.allocs, "allocation %ld: leak", k);
        cr_assert_eq(cnt.live, 0);
        if (!failed) break;
    }
}

/* ---- JIT and threads ---------------------------------------------------- */

Test(capture, jit_when_available)
{
    reset_counter();
    uint32_t have = 0;
    cr_assert_eq(pcre2_config(PCRE2_CONFIG_JIT, &have), 0);
    vm_capture *c = re("(\\d+)", 0);
    vm_capture *d = re("(\\d+)", VM_CAPTURE_NO_JIT);
    cr_log_info("PCRE2 JIT %s", vm_capture_jit(c) ? "active" : "not active");
    if (have) {
        /* JIT can still be refused at run time (no executable memory):
         * then the interpreter, silently. */
        cr_log_info("PCRE2 was built with JIT");
    } else {
        cr_assert_eq(vm_capture_jit(c), 0);
    }
    cr_assert_eq(vm_capture_jit(d), 0);
    cr_assert_eq(vm_capture_jit(NULL), 0);
    cr_assert_eq(vm_capture_ngroups(NULL), 0);
    vm_capture_free(c);
    vm_capture_free(d);
}

typedef struct worker {
    const vm_capture *c;
    int ok;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    vm_capture_scratch *s = NULL;
    if (vm_capture_scratch_new(2, NULL, &s) != CLF_OK) return NULL;
    w->ok = 1;
    for (int i = 0; i < 2000; i++) {
        char subj[64];
        int len = snprintf(subj, sizeof subj, "x Chrome/%d.%d y", i, i % 7);
        const char *p;
        size_t pn;
        char want[16];
        int wl = snprintf(want, sizeof want, "%d", i);
        if (vm_capture_match(w->c, s, subj, (size_t)len, 1, &p, &pn) != 1 || pn != (size_t)wl ||
            memcmp(p, want, pn) != 0)
            w->ok = 0;
    }
    vm_capture_scratch_free(s);
    return NULL;
}

/* One regex, matched from several threads at once, each with its own
 * scratch. */
Test(capture, shared_between_threads)
{
    for (int m = 0; m < 2; m++) {
        vm_capture *c = NULL;
        const char *expr = "Chrome\\/(\\d+)\\.(\\d+)";
        cr_assert_eq(vm_capture_new(expr, strlen(expr), modes[m], NULL, &c, NULL, 0), CLF_OK);
        pthread_t t[4];
        worker w[4];
        for (int i = 0; i < 4; i++) {
            w[i] = (worker){c, 0};
            cr_assert_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            cr_assert(w[i].ok, "thread %d", i);
        }
        vm_capture_free(c);
    }
}

/* Regression (found by attacking the language): a capture whose regex
 * repeats a group over the padded part of a header gave "" once the
 * repetitions outgrew PCRE2's default 32 KiB JIT stack, and a fake-Chrome
 * rule let the request through. With the scratch's 1 MiB JIT stack and a
 * budget linear in the value, 15,000 repetitions (60 KiB) still capture. */
Test(capture, repeated_group_over_a_padded_value, .timeout = 60)
{
    reset_counter();
    vm_capture_scratch *s = scratch(1);
    vm_capture *c = re("^Mozilla\\/5\\.0 \\((?:[^;)]+;? ?)+\\) (?:\\S+ )*Chrome\\/(\\d+)\\.", 0);
    if (!vm_capture_jit(c)) { /* the interpreter keeps its depth limit */
        vm_capture_free(c);
        vm_capture_scratch_free(s);
        cr_skip_test("PCRE2 has no JIT here");
    }
    static const char head[] = "Mozilla/5.0 (X11; Linux x86_64) ", tail[] = "Chrome/58.0.1 Safari/537.36";
    size_t reps = 15000, n = sizeof head - 1 + reps * 4 + sizeof tail - 1;
    char *subj = malloc(n);
    cr_assert_not_null(subj);
    memcpy(subj, head, sizeof head - 1);
    for (size_t i = 0; i < reps; i++) memcpy(subj + sizeof head - 1 + i * 4, "a/1 ", 4);
    memcpy(subj + n - (sizeof tail - 1), tail, sizeof tail - 1);
    const char *p;
    size_t pn;
    cr_assert_eq(vm_capture_match(c, s, subj, n, 1, &p, &pn), 1);
    cr_assert_eq(pn, 2);
    cr_assert_eq(memcmp(p, "58", 2), 0);
    free(subj);
    vm_capture_free(c);
    cr_assert_eq(vm_capture_scratch_refused(s), 0);
    vm_capture_scratch_free(s);
}
