#!/bin/sh
# fuzz/run.sh: runs one libFuzzer target for a given time (fuzz/README.md).
#
#   fuzz/run.sh TARGET [SECONDS] [LIBFUZZER_OPTION...]
#
# TARGET is source, rules, request, serve, rdns, rewrite, rwload, sig, logline, spop, state or redis (fuzz_source etc.
# also accepted);
# SECONDS defaults to 60. Extra arguments go to libFuzzer (e.g. -jobs=2,
# -only_ascii=1, -seed=1).
#
# What it does:
#   1. builds the target in FUZZ_BUILD_DIR (default build-fuzz): clang,
#      ASan+UBSan, libFuzzer coverage; configures it the first time, through
#      ./run.sh if `meson setup` fails (./run.sh installs the missing Debian
#      packages, clang included);
#   2. copies the seeds fuzz/corpus/TARGET/ (for serve also
#      fuzz/corpus/request/) into the scratch corpus
#      FUZZ_BUILD_DIR/fuzz-work/TARGET/corpus/ (kept between runs, so a run
#      continues from what earlier ones found; fuzz/corpus/ is never
#      written); for rules it also compiles fresh seeds with this build's
#      classifyc (fuzz/make_rules_seeds.py);
#   3. runs the target for SECONDS with the dictionary fuzz/TARGET.dict
#      (for serve, fuzz/request.dict followed by fuzz/serve.dict),
#      logging to FUZZ_BUILD_DIR/fuzz-work/TARGET/runs/STAMP/log, where
#      crash-*, leak-*, timeout-* and oom-* reproducers are also written;
#   4. prints a summary; exits 1 if the target crashed, leaked, timed out
#      (FUZZ_TIMEOUT seconds per input, default 30) or ran out of memory
#      (FUZZ_RSS_MB, default 2048), printing the reproducer's path.
#
# FUZZ_QUIET=1 keeps libFuzzer's output in the log only (fuzz/smoke.sh).
set -eu

cd "$(dirname "$0")/.."
B=${FUZZ_BUILD_DIR:-build-fuzz}
FUZZ_MESON_OPTS="-Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fno-sanitize-recover=undefined"

usage() {
    echo "usage: fuzz/run.sh source|rules|request|serve|rdns|rewrite|rwload|sig|logline|spop|state|redis [SECONDS] [LIBFUZZER_OPTION...]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
t=${1#fuzz_}
shift
case "$t" in source|rules|request|serve|rdns|rewrite|rwload|sig|logline|spop|state|redis) ;; *) usage ;; esac
seconds=60
if [ $# -ge 1 ]; then
    case "$1" in
        ''|*[!0-9]*) ;;
        *) seconds=$1; shift ;;
    esac
fi

# --- 1. build ---------------------------------------------------------------
if [ ! -f "$B/build.ninja" ]; then
    echo "fuzz/run.sh: setting up $B (clang, ASan+UBSan, libFuzzer)" >&2
    # shellcheck disable=SC2086
    if ! CC=clang meson setup "$B" $FUZZ_MESON_OPTS >&2; then
        # Probably a fresh machine: ./run.sh installs what is missing
        # (clang too), configures and builds everything.
        echo "fuzz/run.sh: meson setup failed; trying through ./run.sh" >&2
        EXTRA_PACKAGES=clang CC=clang BUILD_DIR="$B" MESON_OPTS="$FUZZ_MESON_OPTS" \
            ./run.sh demo >/dev/null
    fi
fi
if ! grep -q "fuzz/fuzz_$t:" "$B/build.ninja"; then
    echo "fuzz/run.sh: $B is not configured with -Dfuzz=true; use another" \
         "FUZZ_BUILD_DIR or: meson configure $B $FUZZ_MESON_OPTS" >&2
    exit 2
fi
ninja -C "$B" "fuzz/fuzz_$t" cli/classifyc >&2

# --- 2. corpus --------------------------------------------------------------
work="$B/fuzz-work/$t"
run="$work/runs/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$work/corpus" "$run"
cp fuzz/corpus/"$t"/* "$work/corpus/"
dict="fuzz/$t.dict"
if [ "$t" = rules ]; then
    python3 fuzz/make_rules_seeds.py "$B/cli/classifyc" "$work/corpus" >/dev/null
elif [ "$t" = serve ]; then
    # classify-serve parses requests too: the request seeds and tokens
    cp fuzz/corpus/request/* "$work/corpus/"
    dict="$work/serve.dict"
    cat fuzz/request.dict fuzz/serve.dict >"$dict"
fi

# --- 3. run -----------------------------------------------------------------
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
set -- -max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-30}" \
    -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -dict="$dict" \
    -artifact_prefix="$run/" -print_final_stats=1 "$@" "$work/corpus"
echo "fuzz/run.sh: $B/fuzz/fuzz_$t $*" >"$run/log"
if [ "${FUZZ_QUIET:-}" ]; then
    rc=0
    "$B/fuzz/fuzz_$t" "$@" >>"$run/log" 2>&1 || rc=$?
else
    echo "fuzz/run.sh: fuzz_$t for ${seconds}s, log $run/log" >&2
    { rc=0; "$B/fuzz/fuzz_$t" "$@" 2>&1 || rc=$?; echo "$rc" >"$run/rc"; } | tee -a "$run/log" >&2
    rc=$(cat "$run/rc")
fi

# --- 4. summary -------------------------------------------------------------
statval() { sed -n "s/^stat::$1: *//p" "$run/log" | tail -n 1; }
last=$(grep -E '^#[0-9]+' "$run/log" | tail -n 1 | sed 's/^#\([0-9]*\)[[:space:]]*[A-Z]*[[:space:]]*//')
execs=$(statval number_of_executed_units)
speed=$(statval average_exec_per_sec)
rss=$(statval peak_rss_mb)
repro=$(find "$run" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
                                -o -name 'oom-*' -o -name 'slow-unit-*' \) | sort)
bad=$(echo "$repro" | grep -v '/slow-unit-' || true)
took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$run/log" | tail -n 1)
summary="fuzz_$t: ${took:-?}s of ${seconds}s, ${execs:-?} execs (${speed:-?}/s), peak RSS ${rss:-?} MB; ${last:-no stats}"
if [ "$rc" -eq 0 ] && [ -z "$bad" ]; then
    echo "$summary"
    for f in $repro; do echo "fuzz_$t: slow input (not a failure): $f"; done
    exit 0
fi
echo "$summary"
echo "fuzz_$t: FAILED (libFuzzer exit status $rc); log: $run/log"
grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: |.*runtime error:)' "$run/log" | head -n 5 | sed "s/^/fuzz_$t:   /"
for f in $bad; do
    echo "fuzz_$t: reproducer: $f"
    echo "fuzz_$t:   replay:   $B/fuzz/fuzz_$t $f"
done
exit 1
