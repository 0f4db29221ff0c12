/*
 * rw-pagegen: writes the rewrite benchmark's pages (pagegen.h) to files,
 * so that peers (nginx sub_filter, subs_filter, sed, Python, Rust) read
 * the same bytes, and the rule sets as tab-separated lines.
 *
 *   rw-pagegen pages DIR [--pages N] [--seed S]   DIR/page-0000.html ...
 *   rw-pagegen rules KIND N                       PATTERN<TAB>REPLACEMENT<TAB>lit|re
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagegen.h"
#include "util.h"

int main(int argc, char **argv)
{
    bench_prog = "rw-pagegen";
    if (argc >= 3 && !strcmp(argv[1], "pages")) {
        uint32_t n = 64;
        uint64_t seed = 20240611;
        for (int i = 3; i < argc; i += 2) {
            if (i + 1 == argc) die("%s needs a value", argv[i]);
            if (!strcmp(argv[i], "--pages")) n = (uint32_t)num_arg("--pages", argv[i + 1], 1, 100000);
            else if (!strcmp(argv[i], "--seed")) seed = num_arg("--seed", argv[i + 1], 0, UINT64_MAX);
            else die("unknown option %s", argv[i]);
        }
        uint8_t *buf = NULL;
        size_t len = 0, cap = 0;
        for (uint32_t i = 0; i < n; i++) {
            len = 0;
            pagegen_page(seed, i, &buf, &len, &cap);
            char path[4096];
            snprintf(path, sizeof path, "%s/page-%04u.html", argv[2], i);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) die("cannot write %s", path);
        }
        free(buf);
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "rules")) {
        uint32_t n = (uint32_t)num_arg("N", argv[3], 1, 100000);
        pagegen_rule *r = pagegen_rules(argv[2], n);
        if (!r) die("unknown rule set %s", argv[2]);
        for (uint32_t i = 0; i < n; i++)
            printf("%s\t%s\t%s\n", r[i].pattern, r[i].replacement, r[i].regex ? "re" : "lit");
        pagegen_free_rules(r, n);
        return 0;
    }
    fprintf(stderr, "usage: rw-pagegen pages DIR [--pages N] [--seed S] | rw-pagegen rules lit|re N\n");
    return 2;
}
