/*
 * pagegen.h: reproducible, real-looking HTML pages for the rewrite
 * benchmark (bench/rewrite/README.md), and the rule sets that rewrite
 * them as a mirror site would.
 *
 * A page is generated from (seed, index) alone with a xorshift64*
 * generator, so every run and every peer (nginx sub_filter, subs_filter,
 * sed, Python, Rust: the later phase) reads the same bytes: `rw-pagegen`
 * writes them to files. A page is about 100 KB: a head with stylesheet
 * and script links to the origin's hosts (www, cdn, static, img), inline
 * analytics (gtag with UA-/G- ids, a GTM container, a Facebook pixel),
 * JSON-LD, inline CSS with url(...) references, then a body of navigation
 * lists, articles (paragraphs of common words), product cards with
 * images, links to the origin and to a few of the other shop domains,
 * comments, a footer. One page in eight is minified (no line breaks), as
 * bundlers emit it.
 */
#ifndef PAGEGEN_H
#define PAGEGEN_H

#include <stddef.h>
#include <stdint.h>

/* The number of other shop domains the pages link to (shop-N.example). */
#define PAGEGEN_DOMAINS 2000

/* Appends page `index` of `seed` to a growable buffer (*buf, *len,
 * *cap; realloc'd). */
void pagegen_page(uint64_t seed, uint32_t index, uint8_t **buf, size_t *len, size_t *cap);

/* One rule of a benchmark set: strings owned by a static table or by the
 * generator's arena (valid until pagegen_free_rules). */
typedef struct pagegen_rule {
    int regex;
    const char *pattern;
    const char *replacement;
    int caseless;
} pagegen_rule;

/* The rule sets: "lit" with n literals (1, 10, 100, 1000: the origin's
 * hosts first, then analytics ids, then shop domains; all occur in the
 * pages) or "re" with n regexes (10, 100). Returns a malloc'd array of n
 * rules (free with pagegen_free_rules), or NULL for an unknown kind. */
pagegen_rule *pagegen_rules(const char *kind, uint32_t n);
void pagegen_free_rules(pagegen_rule *r, uint32_t n);

#endif
