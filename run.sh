#!/bin/sh
# run.sh: the project's two entry points, each doing its own set-up on a
# fresh Debian 12 machine (installs missing packages, configures, builds).
#
#   ./run.sh demo    compile the bundled default rules (examples/main.clf)
#                    and classify the bundled example requests; then the
#                    faked-browser example: its tests, its requests, and
#                    --explain for one of them
#   ./run.sh test    run the whole test suite; the last line reads
#                    "N passed, N failed, N skipped"
#   ./run.sh bench   the benchmark suite: libclassify against RE2, Rust regex,
#                    Go regexp, PCRE2 (a loop and alternations), Lua 5.4 and
#                    LuaJIT on the same checks, the Hyperscan floor, compile
#                    and load time, memory, scaling plots
#                    (bench/README.md, docs/performance.md)
#   ./run.sh bench redos
#                    the linear-time benchmark on ReDoS attack strings
#                    (bench/redos/README.md)
#   ./run.sh accuracy
#                    the accuracy report on the real corpora (docs/accuracy.md)
#   ./run.sh bench serve
#                    the classify-serve load test with wrk (bench/serve/README.md)
#   ./run.sh bench nginx
#                    the nginx module against nginx's own regex configuration
#                    and auth_request, and its body rewriter against
#                    sub_filter and subs_filter, with wrk (bench/nginx/README.md)
#   ./run.sh bench rewrite
#                    the rewrite engine against nginx sub_filter and subs_filter,
#                    sed, Python re and Rust regex / aho-corasick on the same
#                    pages and rules, and its memory per stream (bench/rewrite/README.md)
#   ./run.sh bench sig [ROUNDS [PER_ROUND]]
#                    what verifying a Web Bot Auth signature costs per request,
#                    beside libsodium's Ed25519 check alone (docs/signatures.md)
#   ./run.sh bench replay
#                    classify-run --log throughput on a generated nginx combined
#                    log (plain, gzip'd), a Caddy JSON log, and --json
#                    (bench/replay/run.py, docs/performance.md)
#
# Environment: BUILD_DIR (default build), CORPORA (default ../shared/corpora),
# MESON_OPTS (extra `meson setup` options for a new build directory), CC.
set -eu

cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-build}

# Debian packages the build and the tests need (README.md says why).
PACKAGES="gcc meson ninja-build pkg-config re2c lemon libhyperscan-dev
libxxhash-dev node-llhttp libcriterion-dev libpcre2-dev python3 python3-yaml
libuv1-dev libc-ares-dev libhiredis-dev libmaxminddb-dev liblua5.4-dev libluajit-5.1-dev libsodium-dev
libjansson-dev zlib1g-dev
${EXTRA_PACKAGES:-}"
# The proxies that classify-serve's integration tests (test) and its load
# test (bench, which also needs wrk) put in front of it, only run, never
# linked; nginx-dev, to build the nginx module for Debian's nginx; and
# dnsmasq-base, the DNS server (binary only, no service) that the reverse-DNS
# test starts on a loopback port; redis-server, which the shared-state test
# (tests/serve/run_redis.py) starts on a loopback port (its service is not
# started: the policy below).
PROXY_PACKAGES="caddy nginx haproxy nginx-dev dnsmasq-base redis-server"
# The rewrite benchmark's peers (./run.sh bench rewrite only): the
# subs_filter nginx module, and Debian's Rust toolchain and crates, from
# which bench/rewrite/run.py builds the Rust peer offline.
REWRITE_PEER_PACKAGES="libnginx-mod-http-subs-filter cargo rustc librust-regex-dev
librust-aho-corasick-dev"
# The classification benchmark's peers in other languages (./run.sh bench):
# RE2 and a C++ compiler for bench/peers/re2, Debian's Rust toolchain and
# crates for bench/peers/rust, Debian's Go for bench/peers/go.
CLASSIFY_PEER_PACKAGES="g++ libre2-dev cargo rustc librust-regex-dev librust-aho-corasick-dev
golang-go"

ensure_packages() {
    missing=""
    for p in $PACKAGES; do
        dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    echo "run.sh: installing:$missing" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    # caddy, nginx, haproxy and redis-server are only run by the tests, on their own
    # loopback ports: deny their packages' service starts while installing
    # (policy-rc.d exit 101), unless the machine already has a policy.
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
        $SUDO chmod 755 "$policy"
    fi
    rc=0
    # shellcheck disable=SC2086
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2 || rc=$?
    [ -z "$policy" ] || $SUDO rm -f "$policy"
    return $rc
}

build() {
    ensure_packages
    if [ ! -f "$BUILD_DIR/build.ninja" ]; then
        # shellcheck disable=SC2086
        meson setup "$BUILD_DIR" ${CORPORA:+-Dcorpora="$CORPORA"} ${MESON_OPTS:-} >&2
    elif [ -n "${CORPORA:-}" ]; then
        meson configure "$BUILD_DIR" -Dcorpora="$CORPORA" >&2
    fi
    ninja -C "$BUILD_DIR" >&2
}

demo() {
    build
    out="$BUILD_DIR/demo"
    mkdir -p "$out"
    "$BUILD_DIR/cli/classifyc" -I stdlib examples/main.clf -o "$out/rules.bin"
    echo "compiled examples/main.clf -> $out/rules.bin ($(wc -c < "$out/rules.bin") bytes)"
    "$BUILD_DIR/cli/classify-run" "$out/rules.bin" --request examples/requests/*.http
    echo
    echo "faked-browser checks composed from packages (examples/faked_browser.clf):"
    "$BUILD_DIR/cli/classifyc" -I stdlib --test examples/faked_browser.clf
    "$BUILD_DIR/cli/classifyc" -I stdlib examples/faked_browser.clf -o "$out/faked_browser.bin"
    "$BUILD_DIR/cli/classify-run" "$out/faked_browser.bin" --request examples/browser-requests/*.http
    echo
    echo "why examples/browser-requests/03-copied-chrome-ua.http is rejected (--explain):"
    "$BUILD_DIR/cli/classify-run" "$out/faked_browser.bin" --explain \
        --request examples/browser-requests/03-copied-chrome-ua.http
}

# A build directory configured before nginx-dev was installed has no nginx
# module: look for it again (nginx/meson.build).
find_nginx_module() {
    if [ -f /usr/share/nginx/src/configure ] &&
       ! grep -q ngx_http_classify_module "$BUILD_DIR/build.ninja"; then
        meson setup --reconfigure "$BUILD_DIR" >&2
        ninja -C "$BUILD_DIR" >&2
    fi
}

test_suite() {
    PACKAGES="$PACKAGES $PROXY_PACKAGES"
    build
    find_nginx_module
    rc=0
    meson test -C "$BUILD_DIR" --num-processes 1 --print-errorlogs "$@" || rc=$?
    python3 tests/summarize.py "$BUILD_DIR/meson-logs/testlog.json"
    return $rc
}

case "${1:-}" in
    demo) demo ;;
    test) shift; test_suite "$@" ;;
    bench)
        PACKAGES="$PACKAGES $PROXY_PACKAGES wrk gnuplot-nox"
        if [ -z "${2:-}" ] || [ "${2#-}" != "$2" ]; then
            PACKAGES="$PACKAGES $CLASSIFY_PEER_PACKAGES"
        fi
        if [ "${2:-}" = rewrite ]; then
            PACKAGES="$PACKAGES $REWRITE_PEER_PACKAGES"
        elif [ "${2:-}" = nginx ]; then
            # subs_filter: a peer of the nginx module's body rewriter
            # (bench/nginx/README.md)
            PACKAGES="$PACKAGES libnginx-mod-http-subs-filter"
        fi
        build
        # A build directory configured before the Lua or RE2 packages were
        # installed has no Lua or RE2 peers: look for them again.
        if [ ! -x "$BUILD_DIR/bench/lua/classify-bench-luajit" ] ||
           { [ -f /usr/include/re2/set.h ] && [ ! -x "$BUILD_DIR/bench/peers/classify-bench-re2" ]; }; then
            meson setup --reconfigure "$BUILD_DIR" >&2
            ninja -C "$BUILD_DIR" >&2
        fi
        shift
        if [ "${1:-}" = redos ]; then
            shift
            exec python3 bench/redos/run.py "$BUILD_DIR" "$@"
        fi
        if [ "${1:-}" = serve ]; then
            shift
            find_nginx_module  # the whole-server rows (bench/serve/stacks.py)
            exec python3 bench/serve/run.py "$BUILD_DIR" ${CORPORA:+--corpora "$CORPORA"} "$@"
        fi
        if [ "${1:-}" = nginx ]; then
            shift
            find_nginx_module
            exec python3 bench/nginx/run.py "$BUILD_DIR" ${CORPORA:+--corpora "$CORPORA"} "$@"
        fi
        if [ "${1:-}" = rewrite ]; then
            shift
            exec python3 bench/rewrite/run.py "$BUILD_DIR" "$@"
        fi
        if [ "${1:-}" = sig ]; then
            shift
            exec "$BUILD_DIR/bench/sig/sig-bench" "$@"
        fi
        if [ "${1:-}" = replay ]; then
            shift
            exec python3 bench/replay/run.py "$BUILD_DIR" ${CORPORA:+--corpora "$CORPORA"} "$@"
        fi
        exec python3 bench/run.py "$BUILD_DIR" "$@" ;;
    accuracy) build; shift; exec python3 tools/accuracy.py "$BUILD_DIR" ${CORPORA:+--corpora "$CORPORA"} "$@" ;;  # docs/accuracy.md
    *) echo "usage: ./run.sh demo | test | accuracy | bench [redos | serve | nginx | rewrite | sig | replay]" >&2; exit 2 ;;
esac
