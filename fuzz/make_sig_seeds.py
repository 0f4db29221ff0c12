#!/usr/bin/env python3
"""Writes fuzz_sig's seeds (fuzz/corpus/sig/) : requests signed with the
key fuzz_sig.c derives (crypto_sign_seed_keypair of the bytes 0..31),
valid and tampered, and a few key sets and structured fields.

    python3 fuzz/make_sig_seeds.py fuzz/corpus/sig

Signs with the system's libsodium through ctypes (the project's own
dependency), over bases written out as RFC 9421 section 2.5 has them.
"""

import base64
import ctypes
import ctypes.util
import os
import sys

sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
assert sodium.sodium_init() >= 0


def keypair():
    pk = ctypes.create_string_buffer(32)
    sk = ctypes.create_string_buffer(64)
    sodium.crypto_sign_seed_keypair(pk, sk, bytes(range(32)))
    return pk.raw, sk.raw


def sign(sk, msg):
    sig = ctypes.create_string_buffer(64)
    sodium.crypto_sign_detached(sig, None, msg, ctypes.c_ulonglong(len(msg)), sk)
    return base64.b64encode(sig.raw).decode()


def thumbprint(pk):
    import hashlib
    x = base64.urlsafe_b64encode(pk).rstrip(b"=").decode()
    j = '{"crv":"Ed25519","kty":"OKP","x":"%s"}' % x
    return x, base64.urlsafe_b64encode(hashlib.sha256(j.encode()).digest()).rstrip(b"=").decode()


def main(out):
    pk, sk = keypair()
    x, kid = thumbprint(pk)
    os.makedirs(out, exist_ok=True)
    comps = '("@authority" "@method" "@path" "@query-param";name="a" "signature-agent";key="sig1")'
    params = ';created=1700000000;expires=1700003600;keyid="%s";tag="web-bot-auth"' % kid
    base = ('"@authority": example.com\n"@method": GET\n"@path": /p\n'
            '"@query-param";name="a": b%%20c\n'
            '"signature-agent";key="sig1": "https://agent.test"\n'
            '"@signature-params": %s%s' % (comps, params))
    sig = sign(sk, base.encode())
    req = ("GET /p?a=b+c&d=e\nHost: example.com\nSignature-Input: sig1=%s%s\n"
           "Signature: sig1=:%s:\nSignature-Agent: sig1=\"https://agent.test\"\n@time 1700000100\n"
           % (comps, params, sig))
    seeds = {
        "valid.txt": req,
        "expired.txt": req.replace("@time 1700000100", "@time 1800000000"),
        "tampered-host.txt": req.replace("Host: example.com", "Host: example.org"),
        "two-signatures.txt": req.replace("Signature-Input: sig1=", "Signature-Input: sig0=();tag=\"x\", sig1="),
        "legacy-agent.txt": req.replace('Signature-Agent: sig1="https://agent.test"',
                                        'Signature-Agent: "https://agent.test"'),
        "absent.txt": "GET /\nHost: example.com\n",
        "fields.txt": ("GET /\nX-Dict: a=1, b=?0;p=\"q\", c=(1 2.5 \"s\" tok :YWJj:);x\n"
                       "X-Item: \"https://A.test:443/x/../y?q#f\"\n"),
        "jwks.txt": '{"signature_agent":"https://agent.test","keys":[{"kty":"OKP","crv":"Ed25519",'
                    '"x":"%s","use":"sig","nbf":1,"exp":2000000000}]}' % x,
    }
    for name, text in seeds.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/sig")
