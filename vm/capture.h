/*
 * capture.h: the text of a regex capture group, for `s.capture(re, g)`.
 *
 * Hyperscan, which does every other match in the library, cannot capture,
 * so captures use PCRE2's backtracking matcher, under three rules:
 *
 * - it runs only after Hyperscan has proven that the regex matches the
 *   subject (the caller's duty), so it only has to find where;
 * - every match runs under limits (below) so that a pathological regex
 *   costs bounded memory and, measured on x86-64, 2 ms at most (capture.c
 *   lists what can still cost more); hitting a limit means "no capture",
 *   never an error;
 * - matching allocates nothing: all memory is prepared up front, by
 *   vm_capture_new (the compiled regex) and vm_capture_scratch_new (the
 *   per-thread matching state).
 *
 * Memory: every byte PCRE2 allocates goes through the vm_allocator given
 * to vm_capture_new / vm_capture_scratch_new (a PCRE2 general context
 * whose malloc/free call vm_malloc/vm_free). The one exception is JIT
 * machine code, which must be executable and comes from PCRE2's own
 * executable-memory allocator (mmap), as Hyperscan's memory comes from
 * Hyperscan's allocator. JIT matching uses PCRE2's default JIT stack:
 * 32 KiB of the calling thread's machine stack, not the heap.
 *
 * Limits, per vm_capture_match call (capture.c says why these values):
 * - a budget of VM_CAPTURE_MATCH_LIMIT steps for the whole call, over all
 *   start positions (PCRE2's own match limit restarts at each start
 *   position, so it alone would allow limit * (n + 1) steps). Each regex
 *   is compiled twice: plain, run first with VM_CAPTURE_MATCH_LIMIT /
 *   (n + 1) steps per start position; and with PCRE2_AUTO_CALLOUT, run
 *   only when the first pass hits its limit, with a callout before every
 *   item of the regex that charges a step, plus one per 8 bytes the match
 *   moved forward since the previous callout;
 * - depth limit VM_CAPTURE_DEPTH_LIMIT nested backtracking points
 *   (interpreter), lower when VM_CAPTURE_DEPTH_LIMIT frames of the
 *   scratch's biggest regex would pass VM_CAPTURE_FRAMES_MAX bytes;
 * - heap limit: the interpreter's backtracking frames live in one vector
 *   allocated by vm_capture_scratch_new, big enough for the depth limit
 *   with the scratch's largest frame, and never grown afterwards (the
 *   scratch's allocator refuses every request once it is primed, so the
 *   rule is enforced, not hoped for);
 * - JIT stack: when JIT matching runs out of its 32 KiB stack, the match
 *   is finished by the interpreter, under the same budget.
 *
 * Threads: a vm_capture is immutable once built and may be matched from
 * any number of threads at once; a vm_capture_scratch serves one thread
 * (or one classification context) at a time.
 */
#ifndef VM_CAPTURE_H
#define VM_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "alloc.h"

#include "visibility.h"

/* The budget of one vm_capture_match call on n bytes is
 * VM_CAPTURE_MATCH_LIMIT + VM_CAPTURE_STEPS_PER_BYTE * n steps: linear in
 * the value, so that a regex doing linear work still captures on a long
 * (padded) header, while superlinear work stops in time linear in n. */
#define VM_CAPTURE_MATCH_LIMIT 100000u
#define VM_CAPTURE_STEPS_PER_BYTE 16u
/* The JIT stack of a scratch (bytes, reserved by PCRE2's JIT allocator,
 * mmap, when the scratch is made): room for tens of thousands of
 * repetitions of a group, as a 64 KiB header can hold. */
#define VM_CAPTURE_JIT_STACK (1u << 20)
/* PCRE2 depth limit (nested backtracking points, interpreter only). */
#define VM_CAPTURE_DEPTH_LIMIT 1000u
/* The size the interpreter's frame vector is kept under by lowering the
 * depth limit, for scratches serving regexes with many groups (more than
 * 57 with PCRE2 10.42 on x86-64). */
#define VM_CAPTURE_FRAMES_MAX (1u << 20)
/* The most groups a capture regex may have (vm_capture_new refuses more)
 * and a scratch may serve: far more than a capture needs. Every group a
 * match goes through holds a backtracking frame until the match ends, so
 * the depth limit must stay well above the number of groups while the
 * frames grow by 16 bytes a group: with 100 groups and
 * VM_CAPTURE_FRAMES_MAX, the depth limit is 602. */
#define VM_CAPTURE_MAX_GROUPS 100u
/* Not a Hyperscan flag: a bit of vm_capture_new's hs_flags that skips JIT
 * compilation (for hosts that forbid executable memory, and for tests of
 * the interpreter path). Hyperscan's HS_FLAG_* bits are all far below. */
#define VM_CAPTURE_NO_JIT 0x80000000u

typedef struct vm_capture vm_capture; /* one compiled capture regex */

/* Compiles `expr` (len bytes, need not be NUL-terminated; Hyperscan's
 * syntax, which PCRE2 accepts) with the HS_FLAG_* bits of <hs.h> in
 * hs_flags: HS_FLAG_CASELESS, HS_FLAG_DOTALL and HS_FLAG_MULTILINE map to
 * PCRE2_CASELESS, PCRE2_DOTALL and PCRE2_MULTILINE; HS_FLAG_UTF8 to
 * PCRE2_UTF with PCRE2_MATCH_INVALID_UTF (an invalid subject does not
 * fail the match) and HS_FLAG_UCP to PCRE2_UCP, so that PCRE2 reads the
 * regex as Hyperscan does; other HS_FLAG_* bits do not affect where or
 * what a match is and are ignored. The newline is LF. Uses JIT
 * (PCRE2_JIT_COMPLETE) when PCRE2 has it, unless VM_CAPTURE_NO_JIT is set;
 * when JIT compilation fails, silently uses the interpreter.
 * `al` may be NULL (malloc/free); it is copied.
 * Returns CLF_OK and stores the regex in *out; CLF_E_NOMEM; CLF_E_FORMAT
 * when PCRE2 refuses the regex (err gets "MESSAGE at offset N", the
 * offset in bytes into expr), or when it has more than
 * VM_CAPTURE_MAX_GROUPS groups; CLF_E_INVALID when out is NULL or expr is
 * NULL with len > 0. *out is NULL on failure and nothing is leaked. */
VM_INTERNAL clf_status vm_capture_new(const char *expr, size_t len, uint32_t hs_flags,
                                      const vm_allocator *al, vm_capture **out,
                                      char *err, size_t errlen);

/* Frees a regex, with the allocator given to vm_capture_new. NULL-safe. */
VM_INTERNAL void vm_capture_free(vm_capture *c);

/* The number of capturing groups (PCRE2_INFO_CAPTURECOUNT), group 0 not
 * counted. */
VM_INTERNAL uint32_t vm_capture_ngroups(const vm_capture *c);

/* The number of the group named name[0..name_len) (need not be
 * NUL-terminated), or -1 when the regex has no group of that name. */
VM_INTERNAL long vm_capture_group_number(const vm_capture *c, const char *name,
                                         size_t name_len);

/* 1 when the regex was JIT-compiled, 0 when it runs in the interpreter. */
VM_INTERNAL int vm_capture_jit(const vm_capture *c);

typedef struct vm_capture_scratch vm_capture_scratch; /* per thread / per context */

/* Creates matching state able to serve any vm_capture with at most
 * max_groups groups: a PCRE2 match data with room for max_groups + 1
 * pairs, match contexts holding the limits above (one for each pass, the
 * second with the budget's callout), and the interpreter's
 * backtracking frame vector, allocated now at the size the depth limit
 * needs (PCRE2 allocates it on first use and keeps it in the match data;
 * it is primed here by a match that reaches the depth limit). The vector
 * is (depth limit + 4) frames of a regex with max_groups groups, with
 * PCRE2 10.42 on x86-64 128 bytes + 16 per group: 126 KiB for 0 groups,
 * 251 KiB for 8, 377 KiB for 16, 1 MiB from 58 on (the depth limit goes
 * down instead: 602 for VM_CAPTURE_MAX_GROUPS). Priming briefly needs up
 * to 1.7 times that. `al` may be NULL (malloc/free); it is copied.
 * Returns CLF_OK and stores it in *out; CLF_E_NOMEM (nothing leaked);
 * CLF_E_INVALID when out is NULL or max_groups > VM_CAPTURE_MAX_GROUPS. */
VM_INTERNAL clf_status vm_capture_scratch_new(uint32_t max_groups, const vm_allocator *al,
                                              vm_capture_scratch **out);

/* Frees matching state, with the allocator given to
 * vm_capture_scratch_new. NULL-safe. */
VM_INTERNAL void vm_capture_scratch_free(vm_capture_scratch *s);

/* How many allocations PCRE2 asked s for after vm_capture_scratch_new
 * (each refused, its match ending as "no capture"): 0 unless a PCRE2
 * version manages its frame vector differently than capture.c expects.
 * For tests and diagnostics. */
VM_INTERNAL uint64_t vm_capture_scratch_refused(const vm_capture_scratch *s);

/* Finds the leftmost match of c in subj[0..n) (bytes, NULs allowed; subj
 * may be NULL when n is 0) and returns group `group` (0: the whole match)
 * as a slice of subj in *p, *pn. Returns 1 when the group took part in the
 * match; 0 when there is no match, the group did not take part or does
 * not exist, c has more groups than s can serve, or a limit was hit: then
 * *p = "" and *pn = 0. p and pn may be NULL. Never allocates and never
 * fails otherwise. */
VM_INTERNAL int vm_capture_match(const vm_capture *c, vm_capture_scratch *s,
                                 const char *subj, size_t n, uint32_t group,
                                 const char **p, size_t *pn);

#endif
