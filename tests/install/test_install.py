#!/usr/bin/env python3
"""`meson install` delivers a usable package (TAP).

usage: test_install.py BUILD_DIR SOURCE_ROOT [SANITIZERS]

Installs into a temporary DESTDIR, checks the installed files, builds
examples/embed.c against the installed header and library through
pkg-config, and classifies with a program compiled by the installed
classifyc from the installed standard library.
"""
import os
import shutil
import subprocess
import sys
import tempfile

build, root = (os.path.abspath(a) for a in sys.argv[1:3])
# In a sanitized build the library needs the sanitizer runtime: link it too.
sanitize = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] not in ("", "none") else None
results = []


def check(name, cond, detail=""):
    results.append((bool(cond), name, detail))


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, timeout=300, **kw)


with tempfile.TemporaryDirectory() as dest:
    p = sh(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"])
    check("meson install succeeds", p.returncode == 0, p.stderr)
    files = {}
    for d, _, fs in os.walk(dest):
        for f in fs:
            files[f] = os.path.join(d, f)
    for f in ("classifyc", "classify-run", "classify.h", "libclassify.pc", "ai_robots.clf"):
        check("installs " + f, f in files)
    lib = [f for f in files if f.startswith("libclassify.so")]
    check("installs libclassify.so", lib, sorted(files))
    check("installs no internal header", "program.h" not in files and "compile.h" not in files)

    pcdir = os.path.dirname(files.get("libclassify.pc", dest))
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir, PKG_CONFIG_SYSROOT_DIR=dest)
    flags = sh(["pkg-config", "--cflags", "--libs", "libclassify"], env=env)
    check("pkg-config knows libclassify", flags.returncode == 0, flags.stderr)
    exe = os.path.join(dest, "embed")
    cc = shutil.which(os.environ.get("CC", "cc")) or "cc"
    p = sh([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", os.path.join(root, "examples", "embed.c"),
            "-o", exe] + flags.stdout.decode().split() +
           (["-fsanitize=" + sanitize] if sanitize else []))
    check("examples/embed.c builds against the installed library", p.returncode == 0, p.stderr)

    libdir = os.path.dirname(files[lib[0]]) if lib else dest
    stdlib = os.path.dirname(files.get("ai_robots.clf", dest))
    rules = os.path.join(dest, "rules.bin")
    p = sh([files.get("classifyc", "classifyc"), "--stdlib", stdlib,
            os.path.join(root, "examples", "main.clf"), "-o", rules],
           env=dict(os.environ, LD_LIBRARY_PATH=libdir))
    check("installed classifyc compiles examples/main.clf with the installed stdlib",
          p.returncode == 0, p.stderr)
    p = sh([files.get("classifyc", "classifyc"), "--help"])
    check("classifyc's default stdlib is PREFIX/share/libclassify/stdlib",
          stdlib[len(dest):].encode() in p.stdout, p.stdout)
    run_env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    p = sh([exe, rules, "/", "Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)"], env=run_env)
    check("embed rejects GPTBot", p.stdout == b"reject ai-robots-txt\n", p.stdout + p.stderr)
    p = sh([exe, rules, "/", "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0; SLCC1; .NET CLR 2.0.50727)"],
           env=run_env)
    check("embed accepts IE with SLCC1", p.stdout == b"accept\n", p.stdout + p.stderr)
    p = sh([exe, rules, "/wp-admin/", "Mozilla/5.0"], env=run_env)
    check("embed rejects a probe", p.stdout == b"reject probe\n", p.stdout + p.stderr)
    p = sh([files.get("classify-run", "classify-run"), rules, "--ua-file", "-"], input=b"CCBot/2.0 (https://commoncrawl.org/faq/)\n",
           env=run_env)
    check("installed classify-run runs", p.stdout.startswith(b"reject ai-robots-txt\t"), p.stdout + p.stderr)

    # clf-import: the installed script finds its installed package (docs/importers.md)
    check("installs clf-import", "clf-import" in files and os.access(files.get("clf-import", dest), os.X_OK))
    p = sh([files.get("clf-import", "clf-import"), "robots-txt", "-"],
           input=b"User-agent: InstallBot\nDisallow: /\n", env=dict(os.environ, PYTHONPATH=""))
    check("installed clf-import converts a robots.txt", p.returncode == 0 and b'"InstallBot",' in p.stdout,
          p.stdout + p.stderr)
    check("installed clf-import uses the installed package",
          p.returncode == 0 and os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(files.get("clf-import", dest))),
                                                            "share", "libclassify", "python", "clf_import", "main.py")))

    # The nginx module, when this build has it (docs/nginx.md, "Building and
    # installing"): its run path names the installed library, the
    # modules-available snippet the installed module, and the stock nginx
    # loads it (not in a sanitizer build: nginx would need the sanitizer's
    # runtime preloaded, which tests/nginx does).
    if os.path.exists(os.path.join(build, "nginx", "ngx_http_classify_module.so")):
        mod = files.get("ngx_http_classify_module.so")
        check("installs the nginx module in LIBDIR/nginx/modules",
              mod is not None and os.path.dirname(mod) == os.path.join(libdir, "nginx", "modules"),
              mod)
        snippet = files.get("mod-http-classify.conf")
        text = open(snippet).read() if snippet else ""
        check("installs modules-available/mod-http-classify.conf with the installed path",
              snippet is not None and mod is not None and
              text == "load_module %s;\n" % mod[len(dest):], text)
        p = sh(["readelf", "-d", mod or dest])
        check("the installed module's run path is the installed LIBDIR",
              ("Library runpath: [%s]" % libdir[len(dest):]).encode() in p.stdout, p.stdout)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if mod and not sanitize and os.path.exists(nginx):
            conf = os.path.join(dest, "nginx-load.conf")
            with open(conf, "w") as f:
                f.write("load_module %s;\npid %s/nginx.pid;\nevents {}\n" % (mod, dest))
            p = sh([nginx, "-t", "-p", dest, "-c", conf, "-e", os.path.join(dest, "nginx-error.log")],
                   env=dict(os.environ, LD_LIBRARY_PATH=libdir))
            check("the stock nginx loads the installed module", p.returncode == 0, p.stderr)

# Regression (issue 12, bug 10): the build tree's copy of clf-import
# found no package (ModuleNotFoundError); it runs the source tree's.
p = sh([os.path.join(build, "tools", "clf-import"), "robots-txt", "-"],
       input=b"User-agent: BuildTreeBot\nDisallow: /\n", env=dict(os.environ, PYTHONPATH=""),
       cwd="/")
check("the build tree's clf-import runs", p.returncode == 0 and b'"BuildTreeBot",' in p.stdout,
      p.stdout + p.stderr)
check("the build tree's clf-import is not installed",
      "clf-import.installed" not in files)

print("1..%d" % len(results))
for i, (ok, name, detail) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
    if not ok:
        for line in str(detail).splitlines()[:20]:
            print("# " + line)
sys.exit(0 if all(r[0] for r in results) else 1)
