#!/usr/bin/env python3
"""HTTP Message Signatures (Web Bot Auth) end to end, TAP.

test_sig_e2e.py CLASSIFYC CLASSIFY_RUN CLASSIFY_SERVE CORPORA_DIR

- classify-run --keys --time on every Ed25519 request vector of the
  corpora's web-bot-auth/derived/vectors.jsonl (read in place; the
  vectors are skipped when the corpora are absent): each gets the
  status the file expects, and the Signature-Agent the key ring binds;
  --explain says why; the v1 vectors are expired at today's time.
- the command line: a malformed, missing or private key file is an error
  naming the file (exit 2); --time that is not a number.
- classify-serve --keys: a signed request is told from an unsigned and a
  forged one on a loopback port; a bad key file stops it at start-up.
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
import serve_common as sc  # noqa: E402

RULES = b'''filter main(req: Request) {
    let st = req.signature_status
    if st == "valid" && req.signature_agent == "https://signature-agent.test" { accept "agent" }
    if st == "valid" && req.signature_agent == "" { accept "key-only" }
    if st == "absent" { accept "unsigned" }
    if st == "invalid" { reject "invalid" }
    reject "other"
}
'''

ED25519_X = None  # the B.1.4 public key, read from the corpora


def run(argv, stdin=None):
    p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    return p


def http_request(msg, extra):
    """The raw request of a vector's message, with headers `extra`."""
    target = msg["target_uri"]
    host = target.split("://", 1)[1].split("/", 1)[0]
    path = "/" + target.split("://", 1)[1].split("/", 1)[1] if "/" in target.split("://", 1)[1] else "/"
    lines = ["%s %s HTTP/1.1" % (msg.get("method", "GET"), path), "Host: " + host]
    for k, v in extra.items():
        lines.append("%s: %s" % (k, v))
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def vector_headers(v):
    """The signature headers of a vector: its message's own, or (the
    derived negatives) rebuilt from its inputs and signature base."""
    h = dict(v["message"].get("headers") or {})
    h.setdefault("Signature-Input", v["signature_input"])
    h.setdefault("Signature", v["signature"])
    if "Signature-Agent" not in h:
        for line in v.get("signature_base", "").split("\n"):
            if line.startswith('"signature-agent"'):
                comp, _, value = line.partition(": ")
                if ";key=" in comp:
                    key = comp.split(';key="', 1)[1].rstrip('"')
                    h["Signature-Agent"] = "%s=%s" % (key, value)
                else:
                    h["Signature-Agent"] = value
    return h


def check_vectors(tap, cr, rules, tmp, wba):
    path = os.path.join(wba, "derived", "vectors.jsonl")
    keys = os.path.join(tmp, "keys.json")
    with open(os.path.join(wba, "cloudflare", "rfc9421-keys", "ed25519.json")) as f:
        jwk = json.load(f)
    with open(keys, "w") as f:  # the public half only: a directory has no "d"
        json.dump({"signature_agent": "https://signature-agent.test",
                   "keys": [{k: jwk[k] for k in ("kty", "crv", "x")}]}, f)
    rsa = os.path.join(tmp, "rsa.json")
    with open(os.path.join(wba, "cloudflare", "rfc9421-keys", "rsapss.json")) as f:
        k = json.load(f)
    with open(rsa, "w") as f:
        json.dump({"keys": [{n: k[n] for n in ("kty", "n", "e")}]}, f)
    n = 0
    with open(path) as f:
        vectors = [json.loads(line) for line in f if line.strip()]
    for v in vectors:
        msg = v["message"]
        if v["alg"] != "ed25519" or "target_uri" not in msg or "raw" in msg:
            continue  # responses; RFC 9421's own (no tag: unit tests)
        created = int(v["signature_input"].split("created=", 1)[1].split(";", 1)[0])
        req = os.path.join(tmp, v["id"] + ".http")
        with open(req, "wb") as out:
            out.write(http_request(msg, vector_headers(v)))
        # The key is the one the vector names: derived-neg-wrong-key names
        # the RSA-PSS key (a ring of it has no Ed25519 key: RSA is skipped).
        ring = keys if v["keyid"] in v["signature_input"] else rsa
        r = run([cr, rules, "--keys", ring, "--time", str(created + 1), "--request", req])
        got = r.stdout.decode().strip()
        covers_agent = "signature-agent" in v["signature_input"]
        want = ("accept agent" if covers_agent else "accept key-only") \
            if v["expected"] == "valid" else "reject invalid"
        tap.ok(r.returncode == 0 and got == want, "vector %s: %s" % (v["id"], want),
               "got %r (rc %d) %s" % (got, r.returncode, r.stderr.decode()))
        n += 1
    tap.ok(n >= 14, "%d Ed25519 request vectors run" % n)
    # The v1 vectors expired on 2025-01-01T01:00Z: today they are invalid.
    v1 = next(v for v in vectors if v["id"] == "cf-v1-3-okp-sig2")
    req = os.path.join(tmp, v1["id"] + ".http")
    r = run([cr, rules, "--keys", keys, "--explain", "--request", req])
    out = r.stdout.decode()
    tap.ok(out.startswith("reject invalid") and
           'req.signature_status = "invalid" (signature sig2: expired' in out,
           "--explain says a v1 vector has expired", out + r.stderr.decode())
    r = run([cr, rules, "--keys", keys, "--time", "1735689601", "--explain", "--request", req])
    out = r.stdout.decode()
    tap.ok(out.startswith("accept agent") and 'req.signature_agent = "https://signature-agent.test"'
           in out, "--explain names the agent of a valid one", out)
    # The same signature, with the key bound to another URL: not its owner.
    other = os.path.join(tmp, "other.json")
    with open(other, "w") as f:
        json.dump({"signature_agent": "https://someone-else.test",
                   "keys": [{k: jwk[k] for k in ("kty", "crv", "x")}]}, f)
    r = run([cr, rules, "--keys", other, "--time", "1735689601", "--explain", "--request", req])
    out = r.stdout.decode()
    tap.ok(out.startswith("reject invalid") and "is not published by" in out,
           "a key bound to another URL does not verify for this one", out)
    check_default_policy(tap, cr, tmp, v1, keys)
    return keys


def check_default_policy(tap, cr, tmp, v, keys):
    """stdlib/default.clf accepts a valid signature as "verified:signature"
    (with --explain showing the evidence); a tampered copy is not."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    classifyc = os.path.join(os.path.dirname(os.path.abspath(cr)), "classifyc")
    bin_path = os.path.join(tmp, "default.bin")
    r = run([classifyc, "-I", os.path.join(root, "stdlib"), "--stdlib", "/nonexistent",
             os.path.join(root, "stdlib", "default.clf"), "-o", bin_path])
    if not tap.ok(r.returncode == 0, "default.clf compiles", r.stderr.decode()):
        return
    agent_ua = {"User-Agent": "ExampleAgent/1.0 (+https://signature-agent.test)"}
    good = os.path.join(tmp, "default-good.http")
    with open(good, "wb") as f:
        f.write(http_request(v["message"], dict(agent_ua, **vector_headers(v))))
    r = run([cr, bin_path, "--keys", keys, "--time", "1735689601", "--explain", "--request", good])
    out = r.stdout.decode()
    tap.ok(out.startswith("accept verified:signature") and
           'req.signature_status = "valid"' in out,
           "default.clf: a validly signed agent is accepted as verified:signature, and "
           "--explain shows the status", out[:1500] + r.stderr.decode())
    h = vector_headers(v)
    h["Signature-Agent"] = '"https://someone-else.test"'  # covered by the signature
    bad = os.path.join(tmp, "default-tampered.http")
    with open(bad, "wb") as f:
        f.write(http_request(v["message"], dict(agent_ua, **h)))
    r = run([cr, bin_path, "--keys", keys, "--time", "1735689601", "--request", bad])
    got = r.stdout.decode().strip()
    tap.ok(r.returncode == 0 and got and not got.startswith("accept verified:signature"),
           "default.clf: the same request with a tampered Signature-Agent is not verified "
           "(%s)" % got, r.stderr.decode())


def check_command_line(tap, cr, rules, tmp):
    req = os.path.join(tmp, "plain.http")
    with open(req, "wb") as f:
        f.write(b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n")
    r = run([cr, rules, "--request", req])
    tap.ok(r.stdout == b"accept unsigned\n", "no signature headers: absent", r.stdout)
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "short"}]}')
    r = run([cr, rules, "--keys", bad, "--request", req])
    err = r.stderr.decode()
    tap.ok(r.returncode == 2 and r.stdout == b"" and bad + ": key 0:" in err,
           "a malformed key file is an error naming the file and the key", err)
    priv = os.path.join(tmp, "private.json")
    with open(priv, "w") as f:
        f.write('{"keys": [{"kty": "OKP", "crv": "Ed25519", '
                '"x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs", '
                '"d": "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}]}')
    r = run([cr, rules, "--keys", priv, "--request", req])
    tap.ok(r.returncode == 2 and b"private key" in r.stderr, "a private key is refused", r.stderr)
    r = run([cr, rules, "--keys", os.path.join(tmp, "missing.json"), "--request", req])
    tap.ok(r.returncode == 2 and b"missing.json: No such file" in r.stderr,
           "a missing key file is an error", r.stderr)
    with open(os.path.join(tmp, "garbage.json"), "w") as f:
        f.write("{not json")
    r = run([cr, rules, "--keys", os.path.join(tmp, "garbage.json"), "--request", req])
    tap.ok(r.returncode == 2 and b"garbage.json: not JSON" in r.stderr and b"line 1" in r.stderr,
           "JSON that does not parse: line and column", r.stderr)
    r = run([cr, rules, "--time", "soon", "--request", req])
    tap.ok(r.returncode == 2 and b"--time: 'soon'" in r.stderr, "--time needs seconds", r.stderr)
    # Garbage signature headers never crash: invalid.
    for name, value in [("Signature-Input", "sig1=(" * 200), ("Signature", ":" * 5000),
                        ("Signature-Input", 'a=("@authority");created=1;keyid="x";tag="web-bot-auth"')]:
        with open(req, "wb") as f:
            f.write(("GET / HTTP/1.1\r\nHost: a.test\r\n%s: %s\r\n\r\n" % (name, value)).encode())
        r = run([cr, rules, "--request", req])
        tap.ok(r.returncode == 0 and r.stdout == b"reject invalid\n",
               "a malformed %s is invalid" % name, r.stdout + r.stderr)


def check_serve(tap, serve, rules, keys, tmp, wba):
    with open(os.path.join(wba, "cloudflare", "web_bot_auth_architecture_v2.json")) as f:
        v = json.load(f)[3]  # Ed25519, covers its Signature-Agent, expires in 2124
    port = sc.free_port()
    p = sc.start_serve(serve, [rules, "--listen", "127.0.0.1:%d" % port, "--keys", keys], tmp)
    try:
        if not tap.ok(sc.wait_port(port, proc=p.p), "classify-serve --keys starts", p.output()):
            return
        base = ("GET /path/to/resource HTTP/1.1\r\nHost: example.com\r\n"
                "Signature-Input: %s\r\nSignature: %s\r\nSignature-Agent: %s\r\n"
                "Connection: close\r\n\r\n")
        for name, req, want in [
                ("signed", base % (v["signature_input"], v["signature"], v["signature_agent"]),
                 "agent"),
                ("forged agent", base % (v["signature_input"], v["signature"],
                                         'agent2="https://evil.test"'), "invalid"),
                ("unsigned", "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n",
                 "unsigned")]:
            c = sc.Conn(port)
            c.sendall(req.encode())
            resp = sc.read_response(c)
            c.close()
            tap.eq(resp.header("x-classify-reason"), want, "classify-serve: %s request" % name)
    finally:
        p.stop()
    bad = os.path.join(tmp, "bad-serve.json")
    with open(bad, "w") as f:
        f.write('{"keys": 1}')
    r = run([serve, rules, "--listen", "127.0.0.1:%d" % sc.free_port(), "--keys", bad, "--check"])
    tap.ok(r.returncode != 0 and b"bad-serve.json: not a JWK Set" in r.stderr + r.stdout,
           "classify-serve refuses a bad key file at start-up", r.stderr + r.stdout)


def main(argv):
    classifyc, cr, serve, corpora = argv[1:5]
    tap = sc.Tap()
    wba = os.path.join(corpora, "web-bot-auth")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "sig.clf")
        rules = os.path.join(tmp, "sig.bin")
        with open(src, "wb") as f:
            f.write(RULES)
        r = run([classifyc, src, "-o", rules])
        if tap.ok(r.returncode == 0, "classifyc compiles the signature rules", r.stderr):
            check_command_line(tap, cr, rules, tmp)
            if os.path.isdir(wba):
                keys = check_vectors(tap, cr, rules, tmp, wba)
                check_serve(tap, serve, rules, keys, tmp, wba)
            else:
                tap.skip("Web Bot Auth vectors", "corpora not found at " + wba)
    tap.done()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
