#!/bin/bash
# configure-nginx.sh NGINX_SRC MODULE_DIR OUTDIR SCRATCH
#
# Runs nginx's own ./configure from Debian's nginx-dev tree (NGINX_SRC,
# /usr/share/nginx/src) with the flags Debian's nginx was built with
# (NGINX_SRC/conf_flags, which declares the bash array NGX_CONF_FLAGS), as
# Debian's dh_nginx builds its libnginx-mod-* packages, and copies out what
# a binary-compatible dynamic module needs: ngx_auto_config.h and
# ngx_auto_headers.h (the feature macros that make up the module signature
# nginx checks in load_module) and the module list
# ngx_http_classify_module_modules.c. NGINX_SRC is only read: configure
# runs in SCRATCH, in a tree of symbolic links, since it writes a Makefile
# where it runs. Its output goes to SCRATCH/configure.log, shown on failure.
set -eu

src=$1 mod=$2
out=$(cd "$3" && pwd)
rm -rf "$4"
mkdir -p "$4/tree"
scratch=$(cd "$4" && pwd)

for f in auto configure src conf_flags; do
    ln -s "$src/$f" "$scratch/tree/$f"
done
cd "$scratch/tree"
# shellcheck disable=SC1091
. ./conf_flags
if ! ./configure "${NGX_CONF_FLAGS[@]}" --add-dynamic-module="$mod" \
        --builddir="$scratch/objs" > "$scratch/configure.log" 2>&1; then
    cat "$scratch/configure.log" >&2
    echo "configure-nginx.sh: nginx's configure failed (above)" >&2
    exit 1
fi
cp "$scratch/objs/ngx_auto_config.h" "$scratch/objs/ngx_auto_headers.h" \
   "$scratch/objs/ngx_http_classify_module_modules.c" "$out/"
