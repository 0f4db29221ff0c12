/*
 * ipdb.h: the IP databases behind ip.asn(), ip.asn_org() and ip.country()
 * (docs/language.md, "IP addresses"): MaxMind DB files read with
 * libmaxminddb, memory-mapped, opened by the host (clf_ipdb_open) and
 * shared by every program loaded with them. A lookup allocates nothing.
 */
#ifndef VM_IPDB_H
#define VM_IPDB_H

#include <stdint.h>

#include "visibility.h"
#include "classify.h"

/* The most databases one program reads (clf_options_add_ipdb). */
#define VM_MAX_IPDBS 4u

/* What the databases know about one address; strings point into a
 * database's memory map (valid while it is open) or are "". */
typedef struct vm_ipinfo {
    int64_t asn;          /* 0: unknown */
    const char *org;      /* autonomous_system_organization */
    uint32_t org_len;
    const char *country;  /* country.iso_code */
    uint32_t country_len;
} vm_ipinfo;

/* Looks the 16-byte address up (IPv4 as ::ffff:a.b.c.d) in dbs[0..n), the
 * first database that knows a field giving it. Never fails: what no
 * database knows (or a corrupt one cannot say) stays unknown. */
VM_INTERNAL void vm_ipdb_lookup(const clf_ipdb *const *dbs, unsigned n, const uint8_t addr[16],
                                vm_ipinfo *out);

#endif
