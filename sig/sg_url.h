/*
 * sg_url.h: the identifier of a Signature-Agent URL. Web Bot Auth
 * (draft-meunier-webbotauth-httpsig-protocol, "Key Distribution and
 * Discovery") keys key material on the pair (URL, key) and compares URLs
 * "after normalization as described in Section 6.2.2 of URI and Section
 * 6.2.3 of URI", "with any query and fragment discarded". This is that
 * normalization, for https URLs (the only scheme the draft allows):
 *
 *   - scheme and host to lower case (6.2.2.1);
 *   - percent-encodings with upper-case hex digits, and those of
 *     unreserved characters decoded (6.2.2.1, 6.2.2.2);
 *   - dot segments removed from the path (6.2.2.3, RFC 3986 5.2.4);
 *   - the default port (443) and an empty port dropped (6.2.3);
 *   - query and fragment dropped;
 *   - a path of "/" alone dropped, so that an origin reads as RFC 6454
 *     section 6.2 serializes it, which is what a `directory` member
 *     carries and rules compare with (6.2.3 makes "" and "/" the same).
 *
 *   "HTTPS://Signature-Agent.TEST:443/"     -> "https://signature-agent.test"
 *   "https://a.test/keys/../jwks.json?x=1"  -> "https://a.test/jwks.json"
 *
 * Refused (returns -1): another scheme, no host, a '%' without two hex
 * digits after it (not a URI, RFC 3986 section 2.1), userinfo ("u@host":
 * nothing legitimate needs it and it makes URLs that look alike), a port
 * that is not decimal, bytes outside printable ASCII, a result over cap.
 * Pure; no allocation.
 */
#ifndef SG_URL_H
#define SG_URL_H

#include <stddef.h>

/* Normalizes url[0..n) into out[0..cap) (never longer than the input).
 * Returns the length, or -1. Sets *origin (when not NULL) to 1 when the
 * path is empty or "/": the URL names an origin, which a `directory`
 * member must (draft, "type directory"). */
long sg_url_norm(const char *url, size_t n, char *out, size_t cap, int *origin);

#endif
