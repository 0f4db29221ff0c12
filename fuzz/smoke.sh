#!/bin/sh
# fuzz/smoke.sh: runs each fuzz target for a short time (default 20 s each),
# for CI. Prints TAP, one line per target with its fuzz/run.sh summary,
# then "fuzz smoke: N passed, N failed"; exits 1 if any target failed
# (the failing target's reproducers and log are named in the output).
#
#   fuzz/smoke.sh [SECONDS]
set -u
cd "$(dirname "$0")/.." || exit 2
seconds=${1:-20}
targets="source rules request serve rdns rewrite rwload sig logline spop state redis"
echo "1..12"
i=0 passed=0 failed=0
for t in $targets; do
    i=$((i + 1))
    out=$(FUZZ_QUIET=1 sh fuzz/run.sh "$t" "$seconds" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok $i - $(echo "$out" | grep "^fuzz_$t: " | head -n 1)"
    else
        failed=$((failed + 1))
        echo "not ok $i - fuzz_$t"
        echo "$out" | sed 's/^/# /'
    fi
done
echo "fuzz smoke: $passed passed, $failed failed"
[ $failed -eq 0 ]
