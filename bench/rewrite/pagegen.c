/*
 * pagegen.c: the benchmark's pages and rule sets (pagegen.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagegen.h"

typedef struct gen {
    uint64_t s;
    uint8_t **buf;
    size_t *len, *cap;
    int minified;
} gen;

static uint64_t next(gen *g)
{
    /* xorshift64* (Vigna) */
    g->s ^= g->s >> 12;
    g->s ^= g->s << 25;
    g->s ^= g->s >> 27;
    return g->s * 2685821657736338717ull;
}

/* Draws are made one per statement, never two in the arguments of one
 * call: the order in which arguments are evaluated is unspecified (gcc
 * and clang differ), and the pages must be the same bytes whatever the
 * compiler. Where a call once took several draws, the locals are drawn in
 * the order gcc evaluated them (right to left), so the pages are those the
 * published figures were measured on. */
static uint32_t below(gen *g, uint32_t n) { return (uint32_t)(next(g) % n); }

static void put(gen *g, const char *p, size_t n)
{
    if (*g->len + n > *g->cap) {
        size_t c = *g->cap ? *g->cap : 1 << 17;
        while (c < *g->len + n) c *= 2;
        uint8_t *q = realloc(*g->buf, c);
        if (!q) {
            fprintf(stderr, "pagegen: out of memory\n");
            exit(1);
        }
        *g->buf = q;
        *g->cap = c;
    }
    memcpy(*g->buf + *g->len, p, n);
    *g->len += n;
}

static void out(gen *g, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void out(gen *g, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof tmp) n = sizeof tmp - 1;
    put(g, tmp, (size_t)n);
}

static void nl(gen *g)
{
    if (!g->minified) put(g, "\n", 1);
}

static const char *const words[] = {
    "the", "of", "and", "to", "in", "is", "for", "on", "with", "as", "new", "our", "free",
    "shipping", "return", "size", "color", "price", "sale", "best", "seller", "review",
    "customer", "cotton", "leather", "organic", "design", "style", "collection", "summer",
    "winter", "classic", "modern", "quality", "delivery", "order", "today", "limited",
    "edition", "available", "stock", "choose", "select", "premium", "comfort", "natural",
    "handmade", "guarantee", "secure", "checkout", "account", "wishlist", "compare"};
#define NWORDS (sizeof words / sizeof words[0])

static const char *const hosts[] = {"www", "cdn", "static", "img", "api"};

static void text(gen *g, uint32_t nwords)
{
    for (uint32_t i = 0; i < nwords; i++) {
        const char *w = words[below(g, NWORDS)];
        out(g, "%s%s", i ? " " : "", w);
    }
}

static void hexid(gen *g, char *o, int n)
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < n; i++) o[i] = hx[below(g, 16)];
    o[n] = 0;
}

static void head(gen *g, uint32_t index)
{
    char h[17];
    out(g, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    nl(g);
    out(g, "<title>Product %u - Origin Site Shop</title>", index);
    nl(g);
    out(g, "<link rel=\"canonical\" href=\"https://www.origin-site.example/p/%u\">", index);
    nl(g);
    for (int i = 0; i < 4; i++) {
        hexid(g, h, 8);
        uint32_t word = below(g, NWORDS), host = below(g, 2);
        out(g, "<link rel=\"stylesheet\" href=\"https://%s.origin-site.example/css/%s.%s.css\">",
            hosts[1 + host], words[word], h);
        nl(g);
    }
    for (int i = 0; i < 5; i++) {
        hexid(g, h, 12);
        out(g, "<script src=\"https://cdn.origin-site.example/js/chunk-%s.js\" defer></script>", h);
        nl(g);
    }
    out(g, "<script async src=\"https://www.googletagmanager.com/gtag/js?id=G-ORIGIN1234\"></script>");
    nl(g);
    out(g, "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
           "gtag('js',new Date());gtag('config','UA-12345678-1');gtag('config','G-ORIGIN1234');"
           "</script>");
    nl(g);
    out(g, "<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime()"
           ",event:'gtm.js'});})(window,document,'script','dataLayer','GTM-ORIG42');</script>");
    nl(g);
    out(g, "<script>!function(f,b,e,v,n,t,s){}(window,document,'script');fbq('init','1234567890123456');"
           "fbq('track','PageView');</script>");
    nl(g);
    out(g, "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":"
           "\"Product\",\"name\":\"Item %u\",\"url\":\"https://www.origin-site.example/p/%u\","
           "\"image\":\"https://img.origin-site.example/p/%u/main.jpg\",\"brand\":\"Origin Site\"}"
           "</script>",
        index, index, index);
    nl(g);
    out(g, "<style>");
    for (int i = 0; i < 30; i++) {
        unsigned color = (unsigned)(next(g) & 0xffffff);
        uint32_t m2 = below(g, 40), m1 = below(g, 40), bg = below(g, 200), cls = below(g, 1000);
        out(g, ".c%u{background:url(https://static.origin-site.example/img/bg%u.png) no-repeat;"
               "margin:%upx %upx;color:#%06x}",
            cls, bg, m1, m2, color);
        nl(g);
    }
    out(g, "</style></head>");
    nl(g);
}

static void link_to(gen *g)
{
    uint32_t k = below(g, 10);
    if (k < 6) {
        uint32_t n = below(g, 100000), w2 = below(g, NWORDS), w1 = below(g, NWORDS);
        out(g, "<a href=\"https://www.origin-site.example/%s/%s-%u\">", words[w1], words[w2], n);
    } else if (k < 9) {
        uint32_t item = below(g, 10000), shop = below(g, PAGEGEN_DOMAINS);
        out(g, "<a href=\"https://shop-%u.example.com/item/%u\" rel=\"nofollow\">", shop, item);
    } else
        out(g, "<a href=\"/%s?ref=origin-site.example&amp;utm_source=newsletter\">",
            words[below(g, NWORDS)]);
    text(g, 1 + below(g, 3));
    out(g, "</a>");
}

static void body(gen *g)
{
    out(g, "<body class=\"page\"><header><nav><ul>");
    nl(g);
    for (int i = 0; i < 25; i++) {
        out(g, "<li class=\"nav-item\">");
        link_to(g);
        out(g, "</li>");
        nl(g);
    }
    out(g, "</ul></nav></header><main>");
    nl(g);
    for (int a = 0; a < 14; a++) {
        out(g, "<article data-track=\"art-%u\"><h2>", below(g, 100000));
        text(g, 3 + below(g, 5));
        out(g, "</h2>");
        nl(g);
        for (int p = 0; p < 4; p++) {
            out(g, "<p>");
            for (int s = 0; s < 6; s++) {
                text(g, 8 + below(g, 12));
                out(g, ". ");
                if (below(g, 4) == 0) link_to(g);
            }
            out(g, "</p>");
            nl(g);
        }
        if (below(g, 3) == 0) {
            out(g, "<!-- ");
            text(g, 5);
            out(g, " -->");
            nl(g);
        }
        out(g, "</article>");
        nl(g);
    }
    for (int c = 0; c < 24; c++) {
        uint32_t id = below(g, 1000000);
        uint32_t w2 = below(g, NWORDS), w1 = below(g, NWORDS);
        out(g, "<div class=\"card\" data-sku=\"SKU-%u\"><img src=\"https://img.origin-site.example/p/%u/%s.jpg\" "
               "srcset=\"https://img.origin-site.example/p/%u/%s@2x.jpg 2x\" alt=\"",
            id, id, words[w1], id, words[w2]);
        text(g, 3);
        uint32_t cents = below(g, 100), dollars = below(g, 500);
        out(g, "\"><span class=\"price\">$%u.%02u</span>", dollars, cents);
        link_to(g);
        out(g, "</div>");
        nl(g);
    }
    out(g, "</main><footer><p>&copy; Origin Site Inc. Contact: support@origin-site.example</p>");
    nl(g);
    out(g, "<img src=\"https://www.facebook.com/tr?id=1234567890123456&ev=PageView&noscript=1\" "
           "height=\"1\" width=\"1\"></footer></body></html>");
    nl(g);
}

void pagegen_page(uint64_t seed, uint32_t index, uint8_t **buf, size_t *len, size_t *cap)
{
    gen g = {seed * 0x9e3779b97f4a7c15ull + index * 0xbf58476d1ce4e5b9ull + 1, buf, len, cap, 0};
    for (int i = 0; i < 4; i++) next(&g);
    g.minified = below(&g, 8) == 0;
    head(&g, index);
    body(&g);
}

/* ---- rule sets ------------------------------------------------------------ */

static const char *const lit_fixed[][2] = {
    {"www.origin-site.example", "www.clone-site.example"},
    {"cdn.origin-site.example", "cdn.clone-site.example"},
    {"static.origin-site.example", "static.clone-site.example"},
    {"img.origin-site.example", "img.clone-site.example"},
    {"UA-12345678-1", "UA-87654321-1"},
    {"G-ORIGIN1234", "G-CLONE56789"},
    {"GTM-ORIG42", "GTM-CLON77"},
    {"1234567890123456", "6543210987654321"},
    {"Origin Site", "Clone Site"},
    {"support@origin-site.example", "help@clone-site.example"},
};
#define NLIT_FIXED (sizeof lit_fixed / sizeof lit_fixed[0])

static const char *const re_fixed[][2] = {
    {"https?://(www|cdn|static|img)\\.origin-site\\.example/", "https://$1.clone-site.example/"},
    {"UA-\\d+-\\d+", "UA-87654321-1"},
    {"G-[A-Z0-9]{10}", "G-CLONE56789"},
    {"GTM-[A-Z0-9]{4,8}", "GTM-CLON77"},
    {"fbq\\('init','\\d+'\\)", "fbq('init','6543210987654321')"},
    {"<!--([^-]|-[^-])*-->", ""},
    {"data-track=\"[^\"]*\"", ""},
    {"utm_source=[a-z]+", "utm_source=clone"},
    {"ref=origin-site\\.example", "ref=clone-site.example"},
    {"\"brand\":\"[^\"]*\"", "\"brand\":\"Clone Site\""},
};
#define NRE_FIXED (sizeof re_fixed / sizeof re_fixed[0])

static char *dup_printf(const char *fmt, unsigned v)
{
    char tmp[256];
    snprintf(tmp, sizeof tmp, fmt, v, v);
    return strdup(tmp);
}

pagegen_rule *pagegen_rules(const char *kind, uint32_t n)
{
    int re = strcmp(kind, "re") == 0;
    if (!re && strcmp(kind, "lit") != 0) return NULL;
    pagegen_rule *r = calloc(n ? n : 1, sizeof *r);
    if (!r) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        r[i].regex = re;
        if (!re && i < NLIT_FIXED) {
            r[i].pattern = strdup(lit_fixed[i][0]);
            r[i].replacement = strdup(lit_fixed[i][1]);
        } else if (re && i < NRE_FIXED) {
            r[i].pattern = strdup(re_fixed[i][0]);
            r[i].replacement = strdup(re_fixed[i][1]);
        } else if (!re) {
            unsigned k = (unsigned)(i - NLIT_FIXED);
            r[i].pattern = dup_printf("shop-%u.example.com", k);
            r[i].replacement = dup_printf("mirror-%u.example.net", k);
        } else {
            unsigned k = (unsigned)(i - NRE_FIXED);
            r[i].pattern = dup_printf("https://shop-%u\\.example\\.com/item/(\\d+)", k);
            r[i].replacement = dup_printf("https://mirror-%u.example.net/i/$1", k);
        }
        if (!r[i].pattern || !r[i].replacement) {
            pagegen_free_rules(r, i + 1);
            return NULL;
        }
    }
    return r;
}

void pagegen_free_rules(pagegen_rule *r, uint32_t n)
{
    if (!r) return;
    for (uint32_t i = 0; i < n; i++) {
        free((void *)r[i].pattern);
        free((void *)r[i].replacement);
    }
    free(r);
}
