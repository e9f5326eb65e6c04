/* fuzz_lua.c: libFuzzer target for the scripting sandbox: the Lua state
 * EVAL runs scripts in (script_lua.c over our patched Lua, deps/lua), with
 * every library a script can reach.
 *
 * The first byte picks what the rest is:
 *   even: a Lua program, compiled as EVAL compiles a script and run;
 *   odd:  one call of one library function (string.*, table.*, math.*,
 *         bit.*, cjson.*, cmsgpack.*, struct.*, redis.*, the base
 *         functions), the function and its arguments decoded from the
 *         bytes: numbers at the edges (INT_MIN, 2^53, inf, NaN...), strings
 *         cut from the input, nested tables.
 * A run is stopped after a budget of VM instructions or of time by a count
 * hook, the hook SCRIPT KILL relies on, which the library loops also call
 * (so a slow C call is cut short as on the server).  The Lua heap is bounded as on a
 * server with maxmemory 64mb.  Any crash, sanitizer report or leak is a
 * finding; errors raised by scripts are the normal outcome.  No run
 * context: redis.call answers its "only inside a script" error. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "hooks.h"
#include "script_lua.h"
#include "server.h"

#define HOOK_EVERY 1000
#define BUDGET_HOOKS 2000     /* two million instructions per input */
#define BUDGET_NS 500000000LL /* and half a second: the library loops call the hook too, less often */
#define MAX_FUNCS 512

static server_t srv;
static lua_State *L;
static int nfuncs;
static int hooks_left;
static long long deadline_ns;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The count hook as the server's busy check uses it: every input gets an
 * instruction budget and a time budget, and is stopped with an error past
 * either (a pattern that backtracks for minutes is the server's SCRIPT
 * KILL case, not a finding). */
static void budget_hook(lua_State *l, lua_Debug *ar) {
    (void)ar;
    if (--hooks_left <= 0 || now_ns() > deadline_ns) luaL_error(l, "fuzz: budget spent");
}

/* Every function reachable from the globals, one level into tables, kept
 * in the registry's array "fuzz_funcs" in a fixed (sorted by name) order. */
static int by_name(lua_State *l) {
    lua_getfield(l, 1, "n");
    lua_getfield(l, 2, "n");
    lua_pushboolean(l, strcmp(lua_tostring(l, -2), lua_tostring(l, -1)) < 0);
    return 1;
}

static void add_func(const char *lib, const char *name, int fidx, int list) {
    if (nfuncs >= MAX_FUNCS) return;
    lua_newtable(L);
    lua_pushfstring(L, "%s.%s", lib, name);
    lua_setfield(L, -2, "n");
    lua_pushvalue(L, fidx);
    lua_setfield(L, -2, "f");
    lua_rawseti(L, list, ++nfuncs);
}

static void collect_functions(void) {
    lua_newtable(L);
    int list = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, LUA_GLOBALSINDEX)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_isfunction(L, -1)) {
            add_func("_G", lua_tostring(L, -2), lua_gettop(L), list);
        } else if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
            const char *lib = lua_tostring(L, -2);
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                if (lua_type(L, -2) == LUA_TSTRING && lua_isfunction(L, -1))
                    add_func(lib, lua_tostring(L, -2), lua_gettop(L), list);
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, list);
    lua_pushcfunction(L, by_name);
    lua_call(L, 2, 0);
    lua_pop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, "fuzz_funcs");
}

static void setup(void) {
    if (L) return;
    config_init_defaults(&srv.cfg);
    srv.cfg.maxmemory = 64 << 20;
    hooks_register(&srv);
    L = slua_new(&srv, NULL);
    collect_functions();
}

/* The input as a stream of bytes; past its end it reads zeros. */
typedef struct {
    const uint8_t *p, *end;
} input_t;

static unsigned byte_of(input_t *in) { return in->p < in->end ? *in->p++ : 0; }

static const double edge_numbers[] = {0, -0.0, 1, -1, 0.5, 2147483647.0,
                                      -2147483648.0, 2147483648.0, 4294967296.0, 9007199254740992.0, 1e15,
                                      -1e15, 1e308, -1e308, 1e-308, 3.5, 100,
                                      -100, 65535, 1e300, -2147483649.0};

static void push_number(input_t *in) {
    unsigned b = byte_of(in);
    if (b < 200) {
        lua_pushnumber(L, edge_numbers[b % (sizeof(edge_numbers) / sizeof(edge_numbers[0]))]);
    } else if (b < 220) {
        lua_pushnumber(L, b < 210 ? INFINITY : -INFINITY);
    } else if (b < 230) {
        lua_pushnumber(L, NAN);
    } else {
        double d = 0;
        unsigned char raw[sizeof(d)];
        for (size_t i = 0; i < sizeof(raw); i++) raw[i] = (unsigned char)byte_of(in);
        memcpy(&d, raw, sizeof(d));
        lua_pushnumber(L, d);
    }
}

static void push_string(input_t *in) {
    size_t len = byte_of(in);
    if (len == 255) len = byte_of(in) * 64u; /* now and then a longer one */
    size_t left = (size_t)(in->end - in->p);
    if (len > left) len = left;
    lua_pushlstring(L, (const char *)in->p, len);
    in->p += len;
}

static void push_value(input_t *in, int depth);

static void push_table(input_t *in, int depth) {
    unsigned n = byte_of(in) % 8;
    lua_createtable(L, (int)n, 0);
    for (unsigned i = 1; i <= n; i++) {
        if (byte_of(in) & 1) {
            push_value(in, depth + 1);
            lua_rawseti(L, -2, (int)i);
        } else {
            push_string(in);
            push_value(in, depth + 1);
            lua_rawset(L, -3);
        }
    }
}

static void push_value(input_t *in, int depth) {
    lua_checkstack(L, 8);
    switch (byte_of(in) % (depth < 4 ? 6 : 5)) {
        case 0: lua_pushnil(L); break;
        case 1: lua_pushboolean(L, byte_of(in) & 1); break;
        case 2: push_number(in); break;
        case 3:
        case 4: push_string(in); break;
        default: push_table(in, depth); break;
    }
}

static void run_protected(int nargs) {
    hooks_left = BUDGET_HOOKS;
    deadline_ns = now_ns() + BUDGET_NS;
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, HOOK_EVERY);
    slua_pcall(L, nargs, 0, 0);
    lua_sethook(L, NULL, 0, 0);
}

static void fuzz_program(const uint8_t *data, size_t size) {
    sds err = slua_compile(L, (const char *)data, size, "@user_script");
    if (err) {
        sds_free(err);
        return;
    }
    run_protected(0);
}

static void fuzz_library_call(const uint8_t *data, size_t size) {
    input_t in = {data, data + size};
    lua_getfield(L, LUA_REGISTRYINDEX, "fuzz_funcs");
    unsigned which = (byte_of(&in) << 8 | byte_of(&in)) % (unsigned)nfuncs;
    lua_rawgeti(L, -1, (int)which + 1);
    lua_getfield(L, -1, "f");
    lua_replace(L, 1);
    lua_settop(L, 1);
    int nargs = (int)(byte_of(&in) % 6);
    for (int i = 0; i < nargs; i++) push_value(&in, 0);
    run_protected(nargs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static unsigned runs;
    setup();
    if (size == 0) return 0;
    lua_settop(L, 0);
    if (data[0] % 2 == 0) fuzz_program(data + 1, size - 1);
    else fuzz_library_call(data + 1, size - 1);
    lua_settop(L, 0);
    lua_gc(L, LUA_GCRESTART, 0); /* a script may have stopped the collector */
    if (++runs % 256 == 0) lua_gc(L, LUA_GCCOLLECT, 0);
    return 0;
}
