/*
 * check_state.c: the state calls (docs/language.md, "State") and
 * ip.net():
 *
 *   count(NAME, KEY, WINDOW)          int   counts this request
 *   count_of(NAME, KEY, WINDOW)       int   reads only
 *   score_add(NAME, KEY, N, HALF_LIFE) int  adds N
 *   score(NAME, KEY, HALF_LIFE)       int   reads only
 *   mark(NAME, KEY, TTL)              bool  sets
 *   marked(NAME, KEY, TTL)            bool  tests
 *
 * NAME, N and the periods (seconds) are constants; KEY an ip, int or str.
 * One name means one entry kind, period and key type in the whole
 * program, because they make the store's key: a second use that differs
 * is an error with a note at the first.
 */
#include <string.h>

#include "check.h"
#include "store.h"

typedef struct state_builtin {
    const char *name;
    method_id id;
    int kind;
    int nargs;
    ty result;
} state_builtin;

static const state_builtin builtins[] = {
    {"count", M_ST_COUNT, CLF_STATE_COUNTER, 3, T_INT},
    {"count_of", M_ST_COUNTED, CLF_STATE_COUNTER, 3, T_INT},
    {"score_add", M_ST_SCADD, CLF_STATE_SCORE, 4, T_INT},
    {"score", M_ST_SCORE, CLF_STATE_SCORE, 3, T_INT},
    {"mark", M_ST_MARK, CLF_STATE_MARK, 3, T_BOOL},
    {"marked", M_ST_MARKED, CLF_STATE_MARK, 3, T_BOOL},
};

static const char *const kind_names[] = {"", "counter", "score", "mark"};
static const char *const period_names[] = {"", "window", "half-life", "time to live"};
static const uint32_t period_max[] = {0, VM_STATE_WINDOW_MAX, VM_STATE_HALF_LIFE_MAX,
                                      VM_STATE_TTL_MAX};
static const char *const key_names[] = {"", "ip", "int", "str"};

static const state_builtin *builtin(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

int chk_is_state_call(checker *ck, const ast *e)
{
    (void)ck;
    return e->kind == AST_CALL && !e->a && builtin(e->str) != NULL;
}

static int valid_name(const ast *lit)
{
    if (lit->slen < 1 || lit->slen > VM_STATE_NAME_MAX) return 0;
    for (uint32_t i = 0; i < lit->slen; i++) {
        char c = lit->str[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
    }
    return 1;
}

/* A constant int argument in [lo, hi]: its value, or -1 (reported). */
static int64_t const_int(checker *ck, ast *arg, const char *what, const char *call, int64_t lo,
                         int64_t hi, const char *unit)
{
    ty t = chk_expr(ck, arg);
    if (t == T_ERROR) return -1;
    ast *lit = chk_literal(arg);
    if (t != T_INT || !lit || lit->kind != AST_INT) {
        ERR(ck, arg, "the %s of '%s' must be an int constant%s", what, call, unit);
        return -1;
    }
    if (lit->ival < lo || lit->ival > hi) {
        ERR(ck, arg, "the %s of '%s' must be %lld to %lld%s, not %lld", what, call,
            (long long)lo, (long long)hi, unit, (long long)lit->ival);
        return -1;
    }
    return lit->ival;
}

/* The use of `name` agrees with its first (or is the first). */
static void check_consistent(checker *ck, ast *e, const ast *name, int kind, int keytype,
                             uint32_t param)
{
    compilation *c = ck->c;
    for (cc_state_name *s = c->states; s; s = s->next) {
        if (strlen(s->name) != name->slen || memcmp(s->name, name->str, name->slen) != 0)
            continue;
        diag *d = NULL;
        if (s->kind != kind)
            d = ERR(ck, name, "'%s' is a %s, not a %s: a state name has one kind", s->name,
                    kind_names[s->kind], kind_names[kind]);
        else if (s->param != param)
            d = ERR(ck, e, "%s '%s' has a %s of %u s, not %u: a name has one", kind_names[kind],
                    s->name, period_names[kind], s->param, param);
        else if (s->keytype != keytype)
            d = ERR(ck, e, "%s '%s' is keyed by %s, not %s: a name has one key type",
                    kind_names[kind], s->name, key_names[s->keytype], key_names[keytype]);
        if (d) src_note(c->src, d, s->first->file, s->first->off, "'%s' is first used here",
                        s->name);
        return;
    }
    cc_state_name *s = arena_alloc(c->ar, sizeof *s);
    char *n = arena_alloc(c->ar, name->slen + 1);
    if (!s || !n) return; /* the arena reports it */
    memcpy(n, name->str, name->slen);
    n[name->slen] = 0;
    *s = (cc_state_name){c->states, n, kind, keytype, param, e};
    c->states = s;
}

ty chk_state_call(checker *ck, ast *e)
{
    const state_builtin *b = builtin(e->str);
    int nargs = 0;
    for (ast *a = e->b; a; a = a->next) nargs++;
    if (nargs != b->nargs) {
        ERR(ck, e, "'%s' takes %d arguments (%s), got %d", b->name, b->nargs,
            b->nargs == 4 ? "name, key, amount, half-life" : b->kind == CLF_STATE_COUNTER
                ? "name, key, window" : b->kind == CLF_STATE_SCORE ? "name, key, half-life"
                : "name, key, time to live", nargs);
        for (ast *a = e->b; a; a = a->next) chk_expr(ck, a);
        return T_ERROR;
    }
    e->method = b->id;
    int bad = 0;
    ast *name = e->b, *key = name->next, *amount = b->nargs == 4 ? key->next : NULL;
    ast *period = amount ? amount->next : key->next;
    ty nt = chk_expr(ck, name);
    ast *lit = chk_literal(name);
    if (nt != T_ERROR && (nt != T_STR || !lit || lit->kind != AST_STR)) {
        ERR(ck, name, "the name of '%s' must be a str constant", b->name);
        bad = 1;
    } else if (nt != T_ERROR && !valid_name(lit)) {
        ERR(ck, name, "a state name is 1 to %d of a-z, 0-9 and _, not \"%.*s\"",
            VM_STATE_NAME_MAX, (int)(lit->slen > 40 ? 40 : lit->slen), lit->str);
        bad = 1;
    }
    if (nt == T_ERROR) bad = 1;
    ty kt = chk_expr(ck, key);
    int keytype = kt == T_IP ? VM_KEY_IP : kt == T_INT ? VM_KEY_INT : kt == T_STR ? VM_KEY_STR : 0;
    if (kt != T_ERROR && !keytype) {
        ERR(ck, key, "the key of '%s' is an ip, an int or a str, not %s", b->name,
            chk_type_names[kt]);
        bad = 1;
    }
    if (kt == T_ERROR) bad = 1;
    if (amount && const_int(ck, amount, "amount", b->name, 1, VM_STATE_AMOUNT_MAX, "") < 0)
        bad = 1;
    int64_t p = const_int(ck, period, period_names[b->kind], b->name, 1,
                          period_max[b->kind], " seconds");
    if (p < 0) bad = 1;
    if (!bad) check_consistent(ck, e, lit, b->kind, keytype, (uint32_t)p);
    return b->result;
}

ty chk_ip_net(checker *ck, ast *e)
{
    int nargs = 0;
    for (ast *a = e->b; a; a = a->next) nargs++;
    if (nargs != 1 && nargs != 2) {
        ERR(ck, e, "'net' takes a prefix length, or one for IPv4 and one for IPv6, got %d "
                   "arguments", nargs);
        for (ast *a = e->b; a; a = a->next) chk_expr(ck, a);
        return T_ERROR;
    }
    e->method = M_NET;
    if (nargs == 1) {
        const_int(ck, e->b, "prefix length", "net", 0, 128, "");
    } else {
        const_int(ck, e->b, "IPv4 prefix length", "net", 0, 32, "");
        const_int(ck, e->b->next, "IPv6 prefix length", "net", 0, 128, "");
    }
    return T_IP;
}

void chk_state_slot(const ast *e, int *kind, int *keytype, const char **name, uint32_t *param,
                    int64_t *amount)
{
    const state_builtin *b = builtin(e->str);
    ast *nm = e->b, *key = nm->next, *am = b->nargs == 4 ? key->next : NULL;
    ast *period = am ? am->next : key->next;
    const ast *lit = chk_literal(nm);
    *kind = b->kind;
    *keytype = key->type == T_IP ? VM_KEY_IP : key->type == T_INT ? VM_KEY_INT : VM_KEY_STR;
    *name = lit->str;
    *param = (uint32_t)chk_literal(period)->ival;
    *amount = am ? chk_literal(am)->ival : 0;
}
