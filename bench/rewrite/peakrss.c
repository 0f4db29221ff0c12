/* peakrss.c: see peakrss.h. */
#include <stdio.h>
#include <sys/resource.h>

#include "peakrss.h"

long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        long kib = -1;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
        fclose(f);
        if (kib >= 0) return kib;
    }
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}
