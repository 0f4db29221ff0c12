/*
 * size_arg.c: cm_parse_bytes (size_arg.h).
 */
#include "size_arg.h"

#include <string.h>

int cm_parse_bytes(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > (UINT64_C(1) << 50)) return -1;
    }
    if (i == 0) return -1;
    static const struct { const char *a, *b; unsigned shift; } units[] = {
        {"", "", 0}, {"K", "KiB", 10}, {"M", "MiB", 20}, {"G", "GiB", 30}, {"T", "TiB", 40}};
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
        if (strcmp(s + i, units[k].a) == 0 || strcmp(s + i, units[k].b) == 0) {
            if (v > (UINT64_C(1) << (50 - units[k].shift))) return -1;
            *out = v << units[k].shift;
            return 0;
        }
    return -1;
}
