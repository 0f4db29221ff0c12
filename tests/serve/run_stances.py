#!/usr/bin/env python3
"""The three stances of examples/stances/ behind real proxies (TAP).

    python3 run_stances.py CLASSIFYC CLASSIFY_SERVE SOURCE_ROOT

For each stance, compiles its examples/stances/NAME/site.clf, starts
classify-serve with it, a site backend and (maze) a maze backend on
loopback ports, and the proxy with the stance's own config, which is used
as it is apart from the addresses (example.com, :80, classify:42069,
classify:42070, backend:8080, maze:42169):

  default  Caddy forward_auth (examples/stances/default/Caddyfile)
  strict   nginx auth_request (examples/stances/strict/nginx.conf)
  maze     Caddy pass-through with routing by reason
           (examples/stances/maze/Caddyfile)

then sends the same clients through each (from 127.0.0.2, so that
classify-serve, trusting only the proxy at 127.0.0.1, sees the client's
address) and checks where each request ends: the site (the backend got it),
the maze (the maze backend got it, with the kind in X-Maze-Kind), or a 403
with the reason in X-Classify-Reason. A proxy that is not installed is
reported as skipped.

Over plain HTTP the proxies say `X-Forwarded-Proto: http` (Caddy always,
the strict nginx.conf by its proxy_set_header), so the browser-header checks
are skipped, as for a real plain-HTTP site: maze:fake-browser is not
reached here (stdlib/maze.clf's tests cover it).
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import (BOT_UA, BROWSER_UA, Backend, Proc, Tap, compile_rules,  # noqa: E402
                          free_port, request, start_serve, substitute, wait_port)

CLIENT = "127.0.0.2"
# What Chrome 124 sends on a navigation besides Host and User-Agent.
BROWSER_HEADERS = [
    ("sec-ch-ua", '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"'),
    ("sec-ch-ua-mobile", "?0"), ("sec-ch-ua-platform", '"Linux"'),
    ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
    ("Accept-Language", "en-US,en;q=0.9"), ("Sec-Fetch-Site", "none"), ("Sec-Fetch-Mode", "navigate"),
    ("Sec-Fetch-User", "?1"), ("Sec-Fetch-Dest", "document")]
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
CLAUDEBOT = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"

SITE, MAZE = "site", "maze"
# (name, path, User-Agent or None, headers, {stance: SITE | MAZE | (403, reason) | (MAZE, kind)})
CLIENTS = [
    ("Chrome with its headers", "/blog/post", BROWSER_UA, BROWSER_HEADERS,
     {"default": SITE, "strict": SITE, "maze": SITE}),
    ("ClaudeBot (Anthropic's list is trimmed: not forged outside it)", "/blog/post", CLAUDEBOT, [],
     {"default": (403, "ai-robots-txt:scrapes-data-to-train-anthropic-s-ai"),
      "strict": (403, "ai-robots-txt:scrapes-data-to-train-anthropic-s-ai"),
      "maze": (MAZE, "maze:ai-crawler")}),
    ("GPTBot from outside OpenAI's ranges (forged)", "/blog/post", BOT_UA, [],
     {"default": (403, "forged:gptbot"), "strict": (403, "forged:gptbot"), "maze": (403, None)}),
    ("GPTBot reading robots.txt", "/robots.txt", BOT_UA, [],
     {"default": SITE, "strict": SITE, "maze": SITE}),
    ("curl", "/", "curl/8.5.0", [],
     {"default": SITE, "strict": (403, "crawler:http-library"), "maze": (MAZE, "maze:scraper-library")}),
    ("AhrefsBot", "/", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", [],
     {"default": (403, "crawler:seo"), "strict": (403, "crawler:seo"), "maze": (MAZE, "maze:crawler")}),
    ("Googlebot from the client's own address (forged)", "/", GOOGLEBOT, [],
     {"default": (403, "forged:googlebot"), "strict": (403, "forged:googlebot"), "maze": (403, None)}),
    ("Miniflux, a feed reader", "/feed.xml", "Mozilla/5.0 (compatible; Miniflux/2.0.12; +https://miniflux.app)", [],
     {"default": SITE, "strict": SITE, "maze": SITE}),
    ("Discord's link preview", "/blog/post", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", [],
     {"default": SITE, "strict": (403, "crawler:social-preview"), "maze": SITE}),
    ("git clone", "/code/site.git/info/refs?service=git-upload-pack", "git/2.43.0", [],
     {"default": SITE, "strict": SITE, "maze": SITE}),
    ("the site's own probe", "/", "ExampleCorp-Probe/2.1", [],
     {"default": SITE, "strict": SITE, "maze": SITE}),
    ("no User-Agent", "/", None, [],
     {"default": (403, "no-user-agent"), "strict": (403, "no-user-agent"), "maze": (MAZE, "maze:no-user-agent")}),
]


def read_example(root, stance, name):
    with open(os.path.join(root, "examples", "stances", stance, name)) as f:
        return f.read()


def caddy_proc(tmp, stance, site):
    caddy = shutil.which("caddy")
    if caddy is None:
        return None
    d = tempfile.mkdtemp(prefix="caddy-%s-" % stance, dir=tmp)
    conf = "{\n\tadmin off\n\tauto_https off\n\tstorage file_system %s/data\n}\n%s" % (d, site)
    with open(os.path.join(d, "Caddyfile"), "w") as f:
        f.write(conf)
    env = dict(os.environ, HOME=d, XDG_DATA_HOME=d + "/data", XDG_CONFIG_HOME=d + "/config", GOMAXPROCS="2")
    return Proc([caddy, "run", "--config", os.path.join(d, "Caddyfile"), "--adapter", "caddyfile"],
                os.path.join(d, "caddy.log"), env=env)


def nginx_proc(tmp, stance, server):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        return None
    d = tempfile.mkdtemp(prefix="nginx-%s-" % stance, dir=tmp)
    os.makedirs(os.path.join(d, "logs"))
    conf = ("worker_processes 1;\ndaemon off;\npid %s/nginx.pid;\nerror_log %s/logs/error.log;\n"
            "events { worker_connections 256; }\nhttp {\naccess_log off;\nclient_body_temp_path %s/tmp;\n"
            "proxy_temp_path %s/tmp;\n%s}\n" % (d, d, d, d, server))
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(conf)
    return Proc([nginx, "-p", d, "-c", os.path.join(d, "nginx.conf"), "-e", os.path.join(d, "logs", "error.log")],
                os.path.join(d, "nginx.out"))


def start_proxy(root, tmp, stance, ports, site, maze):
    """(Proc, port) of the stance's proxy with its own config, or None."""
    port = free_port()
    addresses = {"example.com": "http://127.0.0.1:%d" % port, "listen 80;": "listen 127.0.0.1:%d;" % port,
                 "classify:42069": "127.0.0.1:%d" % ports["pass"], "classify:42070": "127.0.0.1:%d" % ports["auth"],
                 "backend:8080": "127.0.0.1:%d" % site.port, "maze:42169": "127.0.0.1:%d" % maze.port}
    if stance == "strict":
        p = nginx_proc(tmp, stance, substitute(read_example(root, stance, "nginx.conf"), addresses))
    else:
        p = caddy_proc(tmp, stance, substitute(read_example(root, stance, "Caddyfile"), addresses))
    return None if p is None else (p, port)


def check_client(t, stance, port, site, maze, client):
    name, path, ua, headers, want = client
    want = want[stance]
    n_site, n_maze = len(site.seen), len(maze.seen)
    r = request(port, path, ua=ua, headers=headers, source=CLIENT)
    got_site, got_maze = site.seen[n_site:], maze.seen[n_maze:]
    label = "%s: %s" % (stance, name)
    diag = "status %s, reason %r, site got %d, maze got %d\n%r" % (
        r.status, r.header("x-classify-reason"), len(got_site), len(got_maze), r)
    if want == SITE:
        t.ok(r.status == 200 and len(got_site) == 1 and not got_maze and r.body.startswith(b"backend page"),
             "%s: the site" % label, diag)
    elif want[0] == MAZE:
        kind = got_maze[0][2].get("X-Maze-Kind") if got_maze else None
        t.ok(r.status == 200 and len(got_maze) == 1 and not got_site and kind == want[1],
             "%s: the maze, as %s" % (label, want[1]), diag + "\nX-Maze-Kind %r" % kind)
    else:
        status, reason = want
        ok = r.status == status and not got_site and not got_maze
        if reason is not None:
            ok = ok and r.header("x-classify-reason") == reason
        t.ok(ok, "%s: %d%s" % (label, status, " " + reason if reason else ""), diag)


def main():
    classifyc, serve, root = sys.argv[1:4]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="classify-stances-")
    site, maze = Backend(), Backend()
    try:
        for stance in ("default", "strict", "maze"):
            rules = os.path.join(tmp, stance + ".bin")
            compile_rules(classifyc, root, os.path.join(root, "examples", "stances", stance, "site.clf"), rules)
            ports = {k: free_port() for k in ("pass", "auth", "admin")}
            listener = {"default": ["--listen-auth", "caddy=127.0.0.1:%d" % ports["auth"]],
                        "strict": ["--listen-auth", "nginx=127.0.0.1:%d" % ports["auth"]],
                        "maze": ["--listen", "127.0.0.1:%d" % ports["pass"]]}[stance]
            sp = start_serve(serve, [rules, "--listen-admin", "127.0.0.1:%d" % ports["admin"],
                                     "--trust-proxy", "127.0.0.1", "--threads", "1"] + listener,
                             tmp, "serve-" + stance, admin_port=ports["admin"])
            try:
                started = start_proxy(root, tmp, stance, ports, site, maze)
                proxy_name = "nginx" if stance == "strict" else "caddy"
                if started is None:
                    t.skip("%s behind %s: every client" % (stance, proxy_name), "%s is not installed" % proxy_name)
                    continue
                p, port = started
                try:
                    if t.ok(wait_port(port, proc=p.p), "%s: %s starts with the example's config" % (stance, proxy_name),
                            p.output()):
                        for client in CLIENTS:
                            check_client(t, stance, port, site, maze, client)
                finally:
                    p.stop(timeout=10)
            finally:
                sp.stop(timeout=10)
    finally:
        site.stop()
        maze.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    t.done()


if __name__ == "__main__":
    main()
