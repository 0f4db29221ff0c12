/*
 * matcher.c: which libhs this process runs (matcher.h).
 *
 * hs_version() is "MAJOR.MINOR.PATCH" and, in Hyperscan, a date. Intel's
 * last open-source Hyperscan is 5.4.2 and Vectorscan's first release
 * 5.4.6, so a version of 5.4.3 or later is Vectorscan: the rule meson.build
 * applies to the pkg-config version, here applied to the library loaded.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

static char version_text[48];
static pthread_once_t version_once = PTHREAD_ONCE_INIT;

static void version_text_init(void)
{
    const char *v = hs_version();
    if (!v) v = "";
    size_t n = strcspn(v, " \t");
    if (n >= sizeof version_text) n = sizeof version_text - 1;
    memcpy(version_text, v, n);
    /* The date, "YYYY-MM-DD", only when it is one: Vectorscan's " )" is not. */
    const char *d = v + n;
    while (*d == ' ' || *d == '\t') d++;
    size_t dn = strcspn(d, " \t");
    int is_date = dn == 10 && d[4] == '-' && d[7] == '-';
    for (size_t i = 0; is_date && i < dn; i++)
        if (i != 4 && i != 7 && !isdigit((unsigned char)d[i])) is_date = 0;
    if (is_date && n + 1 + dn < sizeof version_text) {
        version_text[n] = ' ';
        memcpy(version_text + n + 1, d, dn);
        n += 1 + dn;
    }
    version_text[n] = '\0';
}

const char *vm_matcher_version_text(void)
{
    pthread_once(&version_once, version_text_init);
    return version_text;
}
