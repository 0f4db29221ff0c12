/*
 * ipaddr.h: IP addresses and address ranges for the VM, and the rule that
 * derives a request's client address from the peer and the forwarding
 * headers.
 *
 * An address is 16 bytes in network order. IPv4 is stored as the
 * IPv4-mapped IPv6 address ::ffff:a.b.c.d (RFC 4291 section 2.5.5.2), so
 * one representation, one comparison and one range table serve both
 * families, and "::ffff:192.0.2.10" equals "192.0.2.10".
 *
 * Every function here is pure: no allocation, no output, no global state,
 * safe from any number of threads. Text arguments are (pointer, length)
 * and need not be NUL-terminated; nothing is read past s[n-1].
 */
#ifndef VM_IPADDR_H
#define VM_IPADDR_H

#include <stddef.h>
#include <stdint.h>

#include "visibility.h"

/* Longest text vm_ip_format writes, NUL included (INET6_ADDRSTRLEN). */
#define VM_IP_TEXT_MAX 46

/* An inclusive range of addresses: lo <= ip <= hi, compared as 128-bit
 * big-endian numbers. */
typedef struct vm_iprange {
    uint8_t lo[16], hi[16];
} vm_iprange;

/* Parses one address:
 *  - IPv4 dotted quad: exactly 4 decimal parts 0-255. A part with a
 *    leading zero ("01") is rejected, because inet_aton() and many
 *    proxies read it as octal and would disagree with us; so are empty
 *    parts, signs, spaces and the short forms "1.2.3" / "127.1".
 *  - IPv6 text per RFC 4291 section 2.2: 1-4 hex digits per group (any
 *    case), at most one "::", an embedded dotted quad as the last 32 bits
 *    ("::ffff:1.2.3.4", same rules as above). "::" stands for one or more
 *    zero groups, so with it at most 7 groups may be written.
 *  - IPv6 text in brackets, "[::1]" (the RFC 3986 IP-literal form). Only
 *    IPv6 text may be bracketed: "[192.0.2.1]" is rejected.
 * No zone ids ("fe80::1%eth0": RFC 6874 zones are meaningless for a remote
 * client), no ports, no surrounding spaces.
 * Returns 1 and fills out on success; 0 otherwise, with out all zero. */
VM_INTERNAL int vm_ip_parse(const char *s, size_t n, uint8_t out[16]);

/* Parses "ADDR" or "ADDR/LEN" into an inclusive range. ADDR is anything
 * vm_ip_parse accepts. LEN is decimal without sign or leading zero; it is
 * 0..32 when ADDR is written as a dotted quad (applied as 96+LEN in the
 * mapped space, so "0.0.0.0/0" covers all of IPv4 and nothing else) and
 * 0..128 when ADDR is IPv6 text (so "::ffff:0:0/96" is the same range).
 * Without LEN the range is the single address.
 * Host bits below the prefix ("10.1.2.3/8") are accepted and cleared: the
 * range is 10.0.0.0-10.255.255.255. People write a host with its netmask
 * in configuration, and the intent is clear (nginx allow/deny and
 * set_real_ip_from do the same).
 * Returns 1 on success, 0 on error (out is then all zero). */
VM_INTERNAL int vm_iprange_parse(const char *s, size_t n, vm_iprange *out);

/* Sorts r[0..n) by lo and merges ranges that overlap or are adjacent
 * (hi + 1 == lo) in place, so that vm_iprange_contains can binary-search
 * them. A range with lo > hi is empty and is dropped. In-place heapsort:
 * O(n log n), no allocation (qsort may allocate). Returns the new count;
 * r[0..count) is then sorted, disjoint and non-adjacent. */
VM_INTERNAL size_t vm_iprange_normalize(vm_iprange *r, size_t n);

/* Whether ip lies in one of r[0..n), which must be normalized
 * (vm_iprange_normalize). Binary search, O(log n). Returns 1 or 0. */
VM_INTERNAL int vm_iprange_contains(const vm_iprange *r, size_t n, const uint8_t ip[16]);

/* Writes the canonical text of ip, NUL-terminated, into buf:
 *  - an IPv4-mapped address as a plain dotted quad, "192.0.2.10" (not
 *    RFC 5952 section 5's "::ffff:192.0.2.10": an IPv4 client is shown
 *    as the IPv4 address it is);
 *  - anything else per RFC 5952 section 4: lower-case hex, no leading
 *    zeros, the longest run of two or more zero groups replaced by "::"
 *    (the first run on a tie), never "::" for a single zero group. Other
 *    IPv4-embedding forms ("::1.2.3.4", 64:ff9b::/96) are written in hex.
 * Returns the length of the full text (without the NUL). Like snprintf,
 * at most cap - 1 characters are written, always NUL-terminated when
 * cap > 0; a buf of VM_IP_TEXT_MAX bytes always suffices. */
VM_INTERNAL size_t vm_ip_format(const uint8_t ip[16], char *buf, size_t cap);

/* Derives the client address of a request. The rule is nginx's
 * real_ip_recursive / Caddy's trusted_proxies: only a trusted proxy may
 * speak for the client, and the header is read from the right, because
 * each proxy appends what it saw and only the hops we trust are honest.
 *  - peer unknown (peer_valid == 0): the client is unknown: returns 0.
 *  - peer not in trusted: the client is the peer (headers are ignored:
 *    anyone can send them).
 *  - peer trusted and X-Forwarded-For present (xff != NULL, even empty):
 *    its comma-separated elements are walked from the right; OWS (SP,
 *    HTAB) around each is trimmed and empty elements are skipped. A
 *    trusted address continues the walk to the left; the first element
 *    that is not a trusted address is the client: returned when it
 *    parses, and 0 (invalid) when it does not ("unknown", obfuscated
 *    RFC 7239 identifiers, garbage), which the program can test. When
 *    every element is trusted or empty, the client is the leftmost
 *    trusted element, or the peer when there was none.
 *    Elements may also be "[v6]", "[v6]:port" or "v4:port" (some proxies
 *    add the port); the port (decimal, 0-65535) is dropped.
 *  - else peer trusted and X-Real-IP present (xrip != NULL): its value,
 *    OWS trimmed, parsed with vm_ip_parse (0 when it does not parse).
 *  - else the peer.
 * trusted[0..ntrusted) must be normalized. When a request has several
 * X-Forwarded-For lines, the caller passes them joined with ", " in order
 * (RFC 9110 section 5.3), which keeps the right-to-left walk right.
 * Returns 1 and fills out, or 0 (client unknown or invalid; out zeroed). */
VM_INTERNAL int vm_client_ip(const uint8_t peer[16], int peer_valid,
                             const vm_iprange *trusted, size_t ntrusted,
                             const char *xff, size_t xff_len,
                             const char *xrip, size_t xrip_len, uint8_t out[16]);

#endif
