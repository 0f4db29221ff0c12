/*
 * matcher.c: which libhs this process runs (matcher.h).
 *
 * hs_version() is "MAJOR.MINOR.PATCH" and, in Hyperscan, a date. Intel's
 * last open-source Hyperscan is 5.4.2 and Vectorscan's first release
 * 5.4.6, so a version of 5.4.3 or later is Vectorscan: the rule meson.build
 * applies to the pkg-config version, here applied to the library loaded.
 */
#include <stdio.h>

#include "matcher.h"

#define VERSION(ma, mi, pa) ((uint32_t)(ma) << 16 | (uint32_t)(mi) << 8 | (uint32_t)(pa))
#define FIRST_VECTORSCAN VERSION(5, 4, 3)

vm_matcher vm_matcher_this(void)
{
    unsigned ma = 0, mi = 0, pa = 0;
    const char *v = hs_version();
    if (!v || sscanf(v, "%u.%u.%u", &ma, &mi, &pa) != 3 || ma > 255 || mi > 255 || pa > 255) {
        /* not a version this code knows how to read: the headers' */
        ma = HS_MAJOR;
        mi = HS_MINOR;
        pa = HS_PATCH;
    }
    vm_matcher m = {VM_MATCHER_HYPERSCAN, VERSION(ma, mi, pa)};
    if (m.version >= FIRST_VECTORSCAN) m.lib = VM_MATCHER_VECTORSCAN;
    return m;
}

const char *vm_matcher_name(uint32_t lib)
{
    return lib == VM_MATCHER_HYPERSCAN ? "Hyperscan" : lib == VM_MATCHER_VECTORSCAN ? "Vectorscan" : NULL;
}
