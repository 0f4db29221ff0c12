/*
 * bench/lua/host.c: the C host of the Lua peer (bench/lua/peer.lua),
 * built twice from this one source: against Lua 5.4
 * (classify-bench-lua54) and against LuaJIT 2.1 (classify-bench-luajit).
 * Only the part of the Lua C API common to 5.1/LuaJIT and 5.4 is used.
 *
 *     classify-bench-lua54 REQUESTS.txt --script bench/lua/peer.lua
 *         --peerdata peerdata.txt --program ai_robots|default
 *         (--verdicts FILE | --time SECONDS [--threads N])
 *
 * Every request becomes a Lua table once, before any timing, as OpenResty
 * or HAProxy hand a script its request:
 *     {method = "GET", path = "/x", query = "a=1",
 *      h = {["user-agent"] = "...", ...}}     (header names lower-cased)
 * Then each classification is one lua_pcall of the function peer.lua's
 * load() returned, with that table; it returns "accept"|"reject" and a
 * reason or nil. Single-threaded (a lua_State is not shared).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "harness.h"

#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, i) lua_objlen((L), (i))
#endif

#ifdef LUA_JITLIBNAME /* lualib.h of LuaJIT */
#define PEER_NAME "luajit"
#define PEER_EXE "classify-bench-luajit"
#else
#define PEER_NAME "lua5.4"
#define PEER_EXE "classify-bench-lua54"
#endif

/* Stack slots kept for the whole run. */
enum { SLOT_FN = 1, SLOT_REQS = 2 };

typedef struct lua_peer {
    lua_State *L;
    const bh_workload *w;
    char *reason; /* the last reason, copied out of the Lua string */
    size_t cap;
} lua_peer;

static int lua_classify(void *state, const bh_request *r, bh_verdict *out)
{
    lua_peer *p = state;
    lua_State *L = p->L;
    size_t i = (size_t)(r - p->w->req);
    lua_pushvalue(L, SLOT_FN);
    lua_rawgeti(L, SLOT_REQS, (int)i + 1);
    if (lua_pcall(L, 1, 2, 0) != 0) {
        fprintf(stderr, "bench: lua: %s\n", lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    size_t vlen = 0;
    const char *v = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &vlen) : NULL;
    if (v && vlen == 6 && memcmp(v, "reject", 6) == 0)
        out->reject = 1;
    else if (v && vlen == 6 && memcmp(v, "accept", 6) == 0)
        out->reject = 0;
    else {
        fprintf(stderr, "bench: lua: classify returned no \"accept\" or \"reject\"\n");
        lua_pop(L, 2);
        return -1;
    }
    out->reason = NULL;
    out->rlen = 0;
    if (lua_type(L, -1) == LUA_TSTRING) {
        size_t rlen;
        const char *s = lua_tolstring(L, -1, &rlen);
        if (rlen + 1 > p->cap) {
            p->cap = rlen + 64;
            p->reason = realloc(p->reason, p->cap);
            if (!p->reason) die("out of memory");
        }
        memcpy(p->reason, s, rlen);
        p->reason[rlen] = '\0';
        out->reason = p->reason;
        out->rlen = rlen;
    } else if (!lua_isnil(L, -1)) {
        fprintf(stderr, "bench: lua: the reason is neither a string nor nil\n");
        lua_pop(L, 2);
        return -1;
    }
    lua_pop(L, 2);
    return 0;
}

/* Pushes the request table of r. */
static void push_request(lua_State *L, const bh_request *r, char **nbuf, size_t *ncap)
{
    lua_createtable(L, 0, 4);
    lua_pushlstring(L, r->method, r->mlen);
    lua_setfield(L, -2, "method");
    lua_pushlstring(L, r->path, r->plen);
    lua_setfield(L, -2, "path");
    lua_pushlstring(L, r->query, r->qlen);
    lua_setfield(L, -2, "query");
    lua_createtable(L, 0, (int)r->nh);
    for (size_t k = 0; k < r->nh; k++) {
        const bh_header *hd = &r->h[k];
        if (hd->nlen > *ncap) {
            *ncap = hd->nlen + 64;
            *nbuf = realloc(*nbuf, *ncap);
            if (!*nbuf) die("out of memory");
        }
        for (size_t j = 0; j < hd->nlen; j++)
            (*nbuf)[j] = (char)tolower((unsigned char)hd->name[j]);
        lua_pushlstring(L, *nbuf, hd->nlen);
        lua_rawget(L, -2);
        int seen = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (seen) continue; /* the first value, as bh_header_get */
        lua_pushlstring(L, *nbuf, hd->nlen);
        lua_pushlstring(L, hd->value, hd->vlen);
        lua_rawset(L, -3);
    }
    lua_setfield(L, -2, "h");
}

static void usage(void)
{
    fprintf(stderr,
            "usage: %s REQUESTS.txt --script peer.lua --peerdata peerdata.txt\n"
            "           --program ai_robots|default (--verdicts FILE | --time SECONDS [--threads N] |\n"
            "           --stats)\n",
            PEER_EXE);
    exit(2);
}

int main(int argc, char **argv)
{
    bench_prog = PEER_EXE;
    if (argc < 2 || argv[1][0] == '-') usage();
    const char *script = NULL, *peerdata = NULL, *program = NULL;
    int first = 2;
    while (first + 1 < argc) {
        if (strcmp(argv[first], "--script") == 0)
            script = argv[first + 1];
        else if (strcmp(argv[first], "--peerdata") == 0)
            peerdata = argv[first + 1];
        else if (strcmp(argv[first], "--program") == 0)
            program = argv[first + 1];
        else
            break;
        first += 2;
    }
    if (!script || !peerdata || !program) usage();
    if (strcmp(program, "ai_robots") != 0 && strcmp(program, "default") != 0)
        die("--program: want ai_robots or default, not '%s'", program);

    bh_workload w;
    bh_workload_load(argv[1], &w);

    /* The rules' compile time: the script's load() reading the peer data
     * and building its lists (the interpreter's start is not counted). */
    lua_State *L = luaL_newstate();
    if (!L) die("lua: cannot create a state");
    luaL_openlibs(L);
    /* peer = dofile(script); classify = peer.load(peerdata, program) */
    if (luaL_loadfile(L, script) != 0 || lua_pcall(L, 0, 1, 0) != 0)
        die("lua: %s", lua_tostring(L, -1));
    if (!lua_istable(L, -1)) die("lua: %s does not return a table", script);
    lua_getfield(L, -1, "load");
    if (lua_type(L, -1) != LUA_TFUNCTION)
        die("lua: %s: the table it returns has no function 'load'", script);
    lua_remove(L, -2);
    lua_pushstring(L, peerdata);
    lua_pushstring(L, program);
    bh_compile_begin();
    if (lua_pcall(L, 2, 1, 0) != 0) die("lua: %s", lua_tostring(L, -1));
    bh_compile_end();
    if (lua_type(L, -1) != LUA_TFUNCTION) die("lua: load() did not return a function");
    /* stack: [1] classify */

    lua_createtable(L, (int)w.n, 0); /* [2] the requests */
    char *nbuf = NULL;
    size_t ncap = 0;
    for (size_t i = 0; i < w.n; i++) {
        push_request(L, &w.req[i], &nbuf, &ncap);
        lua_rawseti(L, SLOT_REQS, (int)i + 1);
    }
    free(nbuf);
    if (lua_rawlen(L, SLOT_REQS) != w.n) die("lua: the request array is short");
    lua_gc(L, LUA_GCCOLLECT, 0);

    lua_peer p = {.L = L, .w = &w};
    bh_method m = {.name = PEER_NAME, .classify = lua_classify, .state = &p, .clone = NULL};
    int rc = bh_main(&m, &w, argc, argv, first);
    lua_close(L);
    free(p.reason);
    bh_workload_free(&w);
    return rc;
}
