/*
 * capture.c: capture groups with PCRE2, under a budget, without
 * allocating while matching (capture.h).
 *
 * Why a budget of our own. PCRE2's match limit counts again from zero at
 * every start position (pcre2api: "For patterns that are not anchored,
 * the count restarts from zero for each position in the subject string";
 * measured: the JIT does the same), so it bounds a call only by
 * limit * (n + 1). That is seconds on one header value, and not only for
 * a pathological regex: /(\w+)x/ on 64 KiB of letters ending in "-ax"
 * (which does match) rescans the letters from each start position,
 * O(n^2). So each regex is compiled twice:
 *
 * - `fast`: plain. Run first, with a per-position match limit of
 *   VM_CAPTURE_MATCH_LIMIT / (n + 1), so the whole call stays within
 *   VM_CAPTURE_MATCH_LIMIT steps; skipped when that would leave fewer
 *   than FAST_MIN_STEPS per position (n above about 6,000).
 * - `safe`: the same regex with PCRE2_AUTO_CALLOUT, so that a callout
 *   runs before every item of the regex; the callout charges a step, plus
 *   one per SCAN_BYTES_PER_STEP bytes the match moved forward since the
 *   previous callout (a repeat that scans a long run is one item), and
 *   abandons the match when the charges for the call pass
 *   VM_CAPTURE_MATCH_LIMIT. Run only when the fast pass hit its limit or
 *   overflowed the JIT stack. Auto-callouts make PCRE2 2 to 15 times
 *   slower (measured with JIT on user-agent captures), hence the fast
 *   pass for the common case.
 *
 * The limits (capture.h):
 * - VM_CAPTURE_MATCH_LIMIT 100000: a capture runs on a field Hyperscan
 *   has already matched, where an ordinary regex needs tens to a few
 *   thousand steps (480 callouts for /(\w+)\/(\d+)\.(\d+)\S* Safari/ on
 *   a 130-byte user agent), so 100,000 leaves room for long values yet
 *   stops a runaway quickly: measured on x86-64, 100,000 callouts take
 *   0.5-1 ms with JIT and 1-2 ms in the interpreter, 100,000 fast steps
 *   0.25 ms with JIT and 2.5 ms in the interpreter. Not a strict time
 *   bound: one item between two callouts (a fixed repeat that fails
 *   after scanning) may still cost up to n.
 * - VM_CAPTURE_DEPTH_LIMIT 1000 nested backtracking points (interpreter):
 *   each group the match is inside and each repetition of a group holds
 *   one to three (/^(?:(a)|b)*c/ matches up to 331 repetitions), more
 *   than a header needs, while the frame vector stays at about 126 KiB
 *   + 16 KiB per group. Past 57 groups that would pass
 *   VM_CAPTURE_FRAMES_MAX (1 MiB), so the scratch gets a lower depth
 *   limit instead (602 for VM_CAPTURE_MAX_GROUPS).
 * - heap limit: exactly the frame vector primed at scratch creation,
 *   (VM_CAPTURE_DEPTH_LIMIT + FRAME_SLACK) frames of the largest frame
 *   the scratch serves (PCRE2_INFO_FRAMESIZE: 128 bytes + 16 per group on
 *   x86-64), so that the depth limit, not the heap, stops a deep match.
 *
 * Never allocating. PCRE2 10.41 and later keep the interpreter's frame
 * vector in the match data: allocated by a first match, doubled when a
 * match needs more (up to the heap limit), kept for the next match.
 * vm_capture_scratch_new runs a match that reaches the depth limit with a
 * regex of max_groups groups, so the vector is as big as any served regex
 * can use before the depth limit stops it; then it closes the scratch's
 * allocator, so that any request PCRE2 might still make returns NULL
 * (PCRE2_ERROR_NOMEMORY: "no capture") and the host's allocator is never
 * called from vm_capture_match. The JIT allocates nothing when matching
 * (its stack is 32 KiB of the machine stack).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <hs.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "capture.h"

/* Frames beyond the depth limit that the primed vector holds: PCRE2 sets
 * up the frame the limit refuses, and checks for room a frame ahead. */
#define FRAME_SLACK 4
/* The safe pass charges a step per this many bytes scanned: a callout
 * costs several times what a byte of a repeat does, and a linear regex
 * over a whole 64 KiB header value then spends 8,192 steps scanning,
 * well inside the budget. */
#define SCAN_BYTES_PER_STEP 8
/* The least depth limit, for scratches whose frames are so big that
 * VM_CAPTURE_DEPTH_LIMIT of them would pass VM_CAPTURE_FRAMES_MAX (PCRE2
 * itself starts with room for 10 frames). */
#define MIN_DEPTH 16
/* The fast pass runs when each start position gets at least this many
 * steps of the budget. */
#define FAST_MIN_STEPS 16

/* The allocator PCRE2 sees: the host's, until `closed` is set; then it
 * refuses (and counts) every request. */
typedef struct cap_mem {
    vm_allocator al;
    int closed;
    uint64_t refused;
} cap_mem;

static void *cap_malloc(PCRE2_SIZE n, void *ud)
{
    cap_mem *m = ud;
    if (m->closed) {
        m->refused++;
        return NULL;
    }
    return vm_malloc(&m->al, n);
}

static void cap_free(void *p, void *ud)
{
    cap_mem *m = ud;
    vm_free(&m->al, p);
}

struct vm_capture {
    cap_mem mem;      /* PCRE2's memory_data for both codes */
    pcre2_code *fast; /* plain */
    pcre2_code *safe; /* with PCRE2_AUTO_CALLOUT */
    uint32_t ngroups;
    int jit;
};

struct vm_capture_scratch {
    cap_mem mem; /* PCRE2's memory_data for the contexts and match data */
    pcre2_general_context *gctx;
    pcre2_match_context *fast; /* match limit set per call */
    pcre2_match_context *safe; /* with the charging callout */
    pcre2_match_data *md;
    pcre2_jit_stack *jit_stack; /* VM_CAPTURE_JIT_STACK bytes, or NULL without JIT */
    uint32_t max_groups;
    /* The safe pass's charges for the current call: callouts, bytes
     * scanned forward, and where the match was at the last callout. */
    uint64_t callouts, scanned;
    size_t last_pos;
    uint64_t budget; /* steps this call may spend (budget_for) */
};

static void set_err(char *err, size_t errlen, const char *msg, long off)
{
    if (!err || !errlen) return;
    if (off < 0) snprintf(err, errlen, "%s", msg);
    else snprintf(err, errlen, "%s at offset %ld", msg, off);
}

static uint32_t pcre2_options(uint32_t hs_flags)
{
    uint32_t o = PCRE2_NEVER_BACKSLASH_C;
    if (hs_flags & HS_FLAG_CASELESS) o |= PCRE2_CASELESS;
    if (hs_flags & HS_FLAG_DOTALL) o |= PCRE2_DOTALL;
    if (hs_flags & HS_FLAG_MULTILINE) o |= PCRE2_MULTILINE;
    if (hs_flags & HS_FLAG_UTF8) o |= PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (hs_flags & HS_FLAG_UCP) o |= PCRE2_UCP;
    return o;
}

clf_status vm_capture_new(const char *expr, size_t len, uint32_t hs_flags,
                          const vm_allocator *al, vm_capture **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return CLF_E_INVALID;
    *out = NULL;
    if (!expr) {
        if (len) return CLF_E_INVALID;
        expr = "";
    }
    vm_capture *c = vm_calloc(al, 1, sizeof *c);
    if (!c) {
        set_err(err, errlen, "out of memory", -1);
        return CLF_E_NOMEM;
    }
    if (al) c->mem.al = *al;

    clf_status st = CLF_E_NOMEM;
    pcre2_general_context *gctx = pcre2_general_context_create(cap_malloc, cap_free, &c->mem);
    pcre2_compile_context *cctx = gctx ? pcre2_compile_context_create(gctx) : NULL;
    if (!cctx) {
        set_err(err, errlen, "out of memory", -1);
        goto fail;
    }
    pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);

    uint32_t opts = pcre2_options(hs_flags);
    int code;
    PCRE2_SIZE off;
    c->fast = pcre2_compile((PCRE2_SPTR)expr, len, opts, &code, &off, cctx);
    if (c->fast)
        c->safe = pcre2_compile((PCRE2_SPTR)expr, len, opts | PCRE2_AUTO_CALLOUT, &code, &off,
                                cctx);
    if (!c->safe) {
        if (code == PCRE2_ERROR_HEAP_FAILED) {
            set_err(err, errlen, "out of memory", -1);
        } else {
            PCRE2_UCHAR msg[256];
            if (pcre2_get_error_message(code, msg, sizeof msg) < 0)
                snprintf((char *)msg, sizeof msg, "PCRE2 error %d", code);
            st = CLF_E_FORMAT;
            set_err(err, errlen, (const char *)msg, off > LONG_MAX ? LONG_MAX : (long)off);
        }
        goto fail;
    }
    pcre2_pattern_info(c->fast, PCRE2_INFO_CAPTURECOUNT, &c->ngroups);
    if (c->ngroups > VM_CAPTURE_MAX_GROUPS) {
        if (err && errlen)
            snprintf(err, errlen, "the regex has %u capture groups, more than %u", c->ngroups,
                     VM_CAPTURE_MAX_GROUPS);
        st = CLF_E_FORMAT;
        goto fail;
    }

    uint32_t have_jit = 0;
    if (!(hs_flags & VM_CAPTURE_NO_JIT) && pcre2_config(PCRE2_CONFIG_JIT, &have_jit) == 0 &&
        have_jit) {
        /* Either may fail on its own (no executable memory): each then
         * runs in the interpreter. */
        int a = pcre2_jit_compile(c->fast, PCRE2_JIT_COMPLETE);
        int b = pcre2_jit_compile(c->safe, PCRE2_JIT_COMPLETE);
        c->jit = a == 0 && b == 0;
    }

    pcre2_compile_context_free(cctx);
    pcre2_general_context_free(gctx);
    *out = c;
    return CLF_OK;

fail:
    pcre2_compile_context_free(cctx);
    pcre2_general_context_free(gctx);
    vm_capture_free(c);
    return st;
}

void vm_capture_free(vm_capture *c)
{
    if (!c) return;
    pcre2_code_free(c->fast);
    pcre2_code_free(c->safe);
    vm_allocator al = c->mem.al;
    vm_free(&al, c);
}

uint32_t vm_capture_ngroups(const vm_capture *c)
{
    return c ? c->ngroups : 0;
}

int vm_capture_jit(const vm_capture *c)
{
    return c ? c->jit : 0;
}

long vm_capture_group_number(const vm_capture *c, const char *name, size_t name_len)
{
    if (!c || (!name && name_len)) return -1;
    uint32_t count = 0, esize = 0;
    PCRE2_SPTR table = NULL;
    if (pcre2_pattern_info(c->fast, PCRE2_INFO_NAMECOUNT, &count) != 0 ||
        pcre2_pattern_info(c->fast, PCRE2_INFO_NAMEENTRYSIZE, &esize) != 0 ||
        pcre2_pattern_info(c->fast, PCRE2_INFO_NAMETABLE, &table) != 0 || !table)
        return -1;
    /* Each entry: the group number (2 bytes, most significant first), the
     * name, a NUL, padding to esize. Names are unique (no PCRE2_DUPNAMES). */
    if (esize < 3 || name_len > esize - 3) return -1;
    for (uint32_t i = 0; i < count; i++) {
        PCRE2_SPTR e = table + (size_t)i * esize;
        if ((name_len == 0 || memcmp(e + 2, name, name_len) == 0) && e[2 + name_len] == 0)
            return (long)((uint32_t)e[0] << 8 | e[1]);
    }
    return -1;
}

/* The safe pass's callout, before every item of the regex: charges a step
 * for itself and one per SCAN_BYTES_PER_STEP bytes the match moved
 * forward since the previous callout, and abandons the match once the
 * call has spent its budget. */
static int charge(pcre2_callout_block *cb, void *ud)
{
    vm_capture_scratch *s = ud;
    size_t pos = cb->current_position;
    if (pos > s->last_pos) s->scanned += pos - s->last_pos;
    s->last_pos = pos;
    s->callouts++;
    return s->callouts + s->scanned / SCAN_BYTES_PER_STEP > s->budget ? PCRE2_ERROR_CALLOUT : 0;
}

/* The steps a call on n bytes may spend: a fixed allowance plus a linear
 * share, so that a regex doing linear work over a long value (a repeated
 * group over a padded header) still captures, while superlinear work is
 * cut off after time linear in n (capture.h). */
static uint64_t budget_for(size_t n)
{
    return VM_CAPTURE_MATCH_LIMIT + (uint64_t)VM_CAPTURE_STEPS_PER_BYTE * n;
}

/* Sets the limits and grows the scratch's frame vector to what the depth
 * limit lets a regex of max_groups groups use: matches
 * "()" x max_groups "(?:a|b)*c" against a run of 'a's longer than the
 * depth limit, without the optimizations that would see that no 'c' is
 * there, so that each repetition of the group nests a backtracking point
 * until the depth limit stops the match. The heap limit comes from that
 * regex's frame size, which depends only on the number of groups.
 * Returns CLF_OK or CLF_E_NOMEM. */
static clf_status prime(vm_capture_scratch *s)
{
    static const char tail[] = "(?:a|b)*c";
    size_t plen = 2 * (size_t)s->max_groups + sizeof tail - 1;
    size_t n = 2 * (size_t)VM_CAPTURE_DEPTH_LIMIT + 16;
    char *pat = vm_malloc(&s->mem.al, plen);
    char *subj = vm_malloc(&s->mem.al, n);
    pcre2_compile_context *cctx = pcre2_compile_context_create(s->gctx);
    pcre2_code *code = NULL;
    clf_status st = CLF_E_NOMEM;
    if (!pat || !subj || !cctx) goto done;
    for (uint32_t i = 0; i < s->max_groups; i++) memcpy(pat + 2 * (size_t)i, "()", 2);
    memcpy(pat + 2 * (size_t)s->max_groups, tail, sizeof tail - 1);
    memset(subj, 'a', n);
    int ec;
    PCRE2_SIZE eo;
    code = pcre2_compile((PCRE2_SPTR)pat, plen,
                         PCRE2_NO_START_OPTIMIZE | PCRE2_NO_AUTO_POSSESS |
                             PCRE2_NO_DOTSTAR_ANCHOR,
                         &ec, &eo, cctx);
    size_t frame = 0;
    if (!code || pcre2_pattern_info(code, PCRE2_INFO_FRAMESIZE, &frame) != 0) goto done;
    /* Many groups make big frames: then fewer of them, down to MIN_DEPTH. */
    size_t depth = VM_CAPTURE_DEPTH_LIMIT;
    if ((depth + FRAME_SLACK) * frame > VM_CAPTURE_FRAMES_MAX) {
        depth = VM_CAPTURE_FRAMES_MAX / frame;
        depth = depth > MIN_DEPTH + FRAME_SLACK ? depth - FRAME_SLACK : MIN_DEPTH;
    }
    size_t heap_kib = ((depth + FRAME_SLACK) * frame + 1023) / 1024;
    pcre2_match_context *m[2] = {s->fast, s->safe};
    for (int i = 0; i < 2; i++) {
        pcre2_set_match_limit(m[i], VM_CAPTURE_MATCH_LIMIT);
        pcre2_set_depth_limit(m[i], (uint32_t)depth);
        pcre2_set_heap_limit(m[i], (uint32_t)heap_kib);
    }
    pcre2_set_callout(s->safe, charge, s);
    int rc = pcre2_match(code, (PCRE2_SPTR)subj, n, 0, PCRE2_ANCHORED, s->md, s->fast);
    /* PCRE2_ERROR_DEPTHLIMIT is the expected result; PCRE2_ERROR_HEAPLIMIT
     * would leave the vector at the heap limit, as good. */
    if (rc != PCRE2_ERROR_NOMEMORY) st = CLF_OK;
done:
    pcre2_code_free(code);
    pcre2_compile_context_free(cctx);
    vm_free(&s->mem.al, pat);
    vm_free(&s->mem.al, subj);
    return st;
}

clf_status vm_capture_scratch_new(uint32_t max_groups, const vm_allocator *al,
                                  vm_capture_scratch **out)
{
    if (!out) return CLF_E_INVALID;
    *out = NULL;
    if (max_groups > VM_CAPTURE_MAX_GROUPS) return CLF_E_INVALID;
    vm_capture_scratch *s = vm_calloc(al, 1, sizeof *s);
    if (!s) return CLF_E_NOMEM;
    if (al) s->mem.al = *al;
    s->max_groups = max_groups;
    s->gctx = pcre2_general_context_create(cap_malloc, cap_free, &s->mem);
    if (s->gctx) {
        s->fast = pcre2_match_context_create(s->gctx);
        s->safe = pcre2_match_context_create(s->gctx);
        s->md = pcre2_match_data_create(max_groups + 1, s->gctx);
        /* A repeated group keeps a JIT stack frame per repetition: PCRE2's
         * default 32 KiB on the machine stack lets a few hundred through,
         * so a padded header could push a capture out to "" (and a rule
         * to fail open). NULL when PCRE2 has no JIT (the interpreter runs,
         * within its depth limit), or out of memory. */
        s->jit_stack = pcre2_jit_stack_create(32 * 1024, VM_CAPTURE_JIT_STACK, s->gctx);
        if (s->jit_stack && s->fast && s->safe) {
            pcre2_jit_stack_assign(s->fast, NULL, s->jit_stack);
            pcre2_jit_stack_assign(s->safe, NULL, s->jit_stack);
        }
    }
    uint32_t has_jit = 0;
    pcre2_config(PCRE2_CONFIG_JIT, &has_jit);
    if (!s->fast || !s->safe || !s->md || (has_jit && !s->jit_stack) || prime(s) != CLF_OK) {
        vm_capture_scratch_free(s);
        return CLF_E_NOMEM;
    }
    s->mem.closed = 1;
    *out = s;
    return CLF_OK;
}

void vm_capture_scratch_free(vm_capture_scratch *s)
{
    if (!s) return;
    pcre2_match_data_free(s->md); /* frees the frame vector too */
    pcre2_match_context_free(s->fast);
    pcre2_match_context_free(s->safe);
    if (s->jit_stack) pcre2_jit_stack_free(s->jit_stack);
    pcre2_general_context_free(s->gctx);
    vm_allocator al = s->mem.al;
    vm_free(&al, s);
}

uint64_t vm_capture_scratch_refused(const vm_capture_scratch *s)
{
    return s ? s->mem.refused : 0;
}

int vm_capture_match(const vm_capture *c, vm_capture_scratch *s, const char *subj, size_t n,
                     uint32_t group, const char **p, size_t *pn)
{
    if (p) *p = "";
    if (pn) *pn = 0;
    if (!c || !s || group > c->ngroups || c->ngroups > s->max_groups) return 0;
    if (!subj) {
        if (n) return 0;
        subj = "";
    }
    PCRE2_SPTR sp = (PCRE2_SPTR)subj;
    int rc = PCRE2_ERROR_MATCHLIMIT;
    s->budget = budget_for(n);
    uint64_t per_pos = s->budget / ((uint64_t)n + 1);
    if (per_pos > UINT32_MAX) per_pos = UINT32_MAX;
    if (per_pos >= FAST_MIN_STEPS) {
        pcre2_set_match_limit(s->fast, (uint32_t)per_pos); /* a store: no allocation */
        rc = pcre2_match(c->fast, sp, n, 0, 0, s->md, s->fast);
    }
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) {
        s->callouts = s->scanned = 0;
        s->last_pos = 0;
        rc = pcre2_match(c->safe, sp, n, 0, 0, s->md, s->safe);
        /* The interpreter keeps its frames in the primed vector; the
         * budget already spent still counts. */
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
            rc = pcre2_match(c->safe, sp, n, 0, PCRE2_NO_JIT, s->md, s->safe);
    }
    /* rc > 0: one more than the highest group set (0 would mean that the
     * ovector is too small, which max_groups rules out). */
    if (rc <= 0 || group >= (uint32_t)rc) return 0;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
    PCRE2_SIZE a = ov[2 * group], b = ov[2 * group + 1];
    if (a == PCRE2_UNSET || b < a || b > n) return 0; /* b < a: \K in a lookahead */
    if (p) *p = subj + a;
    if (pn) *pn = b - a;
    return 1;
}
