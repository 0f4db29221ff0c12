#!/bin/sh
# The library probes behind docs/classify-serve.md, "Why libuv + llhttp":
# nginx `return 200`, libuv + llhttp and libmicrohttpd each answer 200 "ok"
# on loopback, one worker each, measured by the same wrk command in one run.
#   sh bench/serve/probes/run.sh [SECONDS]
# Needs: nginx wrk libuv1-dev libmicrohttpd-dev node-llhttp (apt-get).
set -eu
secs=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'kill $pids 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
L=/usr/share/llhttp
gcc -O2 -o "$tmp/uv_hello" "$here/uv_hello.c" $L/llhttp.c $L/api.c $L/http.c \
    -I/usr/share/include/llhttp -luv -w
gcc -O2 -o "$tmp/mhd_hello" "$here/mhd_hello.c" -lmicrohttpd
mkdir -p "$tmp/nginx/logs"
cat > "$tmp/nginx/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $tmp/nginx/nginx.pid; error_log $tmp/nginx/logs/error.log;
events { worker_connections 1024; }
http { access_log off; server { listen 127.0.0.1:18590; location / { return 200 "ok"; } } }
CONF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/logs/error.log" & pids="$!"
"$tmp/mhd_hello" 18591 & pids="$pids $!"
"$tmp/uv_hello" 18592 & pids="$pids $!"
sleep 1
for p in 18590:nginx-return-200 18592:libuv+llhttp 18591:libmicrohttpd; do
    port=${p%%:*}
    wrk -t1 -c50 -d1s "http://127.0.0.1:$port/" >/dev/null   # warm-up
    echo "${p#*:}:"
    wrk -t1 -c50 -d"${secs}s" --latency "http://127.0.0.1:$port/" |
        grep -E 'Requests/sec|^ +(50|99)%|errors'
done
