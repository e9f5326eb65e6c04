/* test_lua_vm.c: our patches to Lua 5.1.5 (deps/lua/patches), checked on
 * the VM directly, without the server:
 *   - read-only tables refuse every kind of store with one error text;
 *   - the parser keeps the chunk name on the stack while it runs, where
 *     the collector sees it (CVE-2025-49844), and compiles under a
 *     collector that runs at every allocation;
 *   - long bracket levels lex right (CVE-2025-46819);
 *   - unpack counts its range without overflow (CVE-2025-46817);
 *   - lua_interruptcheck lets the count hook stop a long C library call;
 *   - pattern recursion is bounded. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>

#include "test_help.h"

static lua_State *new_state(void) {
    lua_State *L = luaL_newstate();
    lua_pushcfunction(L, luaopen_base);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, luaopen_string);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, luaopen_table);
    lua_call(L, 0, 0);
    return L;
}

/* Run `code`; the error text, or "" when it ran.  The text lives in a
 * static buffer until the next call. */
static const char *run(lua_State *L, const char *code) {
    static char out[256];
    out[0] = '\0';
    if (luaL_loadstring(L, code) || lua_pcall(L, 0, 0, 0)) {
        snprintf(out, sizeof(out), "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return out;
}

static int test_readonly_refuses_every_store(void) {
    lua_State *L = new_state();
    run(L, "t = {a = 1} mt = {}");
    lua_getglobal(L, "t");
    lua_setreadonly(L, -1, 1);
    CHECK(lua_isreadonly(L, -1));
    lua_pop(L, 1);
    static const char *const stores[] = {"t.a = 2", "t.b = 1", "rawset(t, 'a', 2)", "table.insert(t, 1)",
                                         "setmetatable(t, mt)", "t[1] = 1", "rawset(t, 1, 1)", NULL};
    for (int i = 0; stores[i]; i++) CHECK(strstr(run(L, stores[i]), "Attempt to modify a readonly table"));
    CHECK(strcmp(run(L, "assert(t.a == 1 and t.b == nil and getmetatable(t) == nil)"), "") == 0);
    /* the seal is the table's, not its contents': a nested table is free */
    CHECK(strcmp(run(L, "local u = {} rawset(u, 1, 1) u.x = 2"), "") == 0);
    lua_getglobal(L, "t");
    lua_setreadonly(L, -1, 0);
    lua_pop(L, 1);
    CHECK(strcmp(run(L, "t.a = 3 assert(t.a == 3)"), "") == 0);
    lua_close(L);
    return 0;
}

static int test_parser_under_constant_collection(void) {
    lua_State *L = new_state();
    lua_gc(L, LUA_GCSETPAUSE, 1);
    lua_gc(L, LUA_GCSETSTEPMUL, 100000);
    char code[4096], name[64];
    size_t n = 0;
    n += (size_t)snprintf(code + n, sizeof(code) - n, "local t = {}\n");
    for (int i = 0; i < 100; i++) n += (size_t)snprintf(code + n, sizeof(code) - n, "t[%d] = 'x%d'\n", i, i);
    snprintf(code + n, sizeof(code) - n, "return #t\n");
    for (int i = 0; i < 200; i++) {
        /* a new name each time: its string exists only while parsing */
        snprintf(name, sizeof(name), "=chunk-%d-%s", i, "with-a-long-name-the-parser-must-keep");
        CHECK_EQ_INT(luaL_loadbuffer(L, code, strlen(code), name), 0);
        CHECK_EQ_INT(lua_pcall(L, 0, 1, 0), 0);
        CHECK_EQ_INT(lua_tointeger(L, -1), 99);
        lua_pop(L, 1);
    }
    lua_close(L);
    return 0;
}

/* A reader that hands the chunk over in two pieces and, on the second
 * call (made while the parser runs), looks for the chunk name among the
 * stack's values: the patch keeps it there, where the collector sees it. */
typedef struct {
    int calls;
    int name_on_stack;
} anchor_probe;

#define PROBE_NAME "=probe-chunk-name"

static const char *probe_reader(lua_State *L, void *ud, size_t *size) {
    anchor_probe *p = ud;
    static const char *const pieces[] = {"return ", "42", NULL};
    if (p->calls == 1) {
        for (int i = 1; i <= lua_gettop(L); i++)
            if (lua_type(L, i) == LUA_TSTRING && !strcmp(lua_tostring(L, i), PROBE_NAME))
                p->name_on_stack = 1;
    }
    const char *piece = pieces[p->calls < 2 ? p->calls : 2];
    p->calls++;
    *size = piece ? strlen(piece) : 0;
    return piece;
}

static int test_parser_anchors_chunk_name(void) {
    lua_State *L = new_state();
    anchor_probe p = {0, 0};
    CHECK_EQ_INT(lua_load(L, probe_reader, &p, PROBE_NAME), 0);
    CHECK(p.calls >= 2);
    CHECK(p.name_on_stack);
    CHECK_EQ_INT(lua_pcall(L, 0, 1, 0), 0);
    CHECK_EQ_INT(lua_tointeger(L, -1), 42);
    lua_close(L);
    return 0;
}

static int test_long_brackets(void) {
    lua_State *L = new_state();
    CHECK(strcmp(run(L, "local sep = string.rep('=', 100000) "
                        "local f = loadstring('return [' .. sep .. '[x]' .. sep .. ']') assert(f() == 'x')"),
                 "") == 0);
    CHECK(strcmp(run(L, "assert(loadstring('return [==[a]=]b]==]')() == 'a]=]b')"), "") == 0);
    CHECK(strstr(run(L, "return [==x"), "invalid long string delimiter"));
    CHECK(strstr(run(L, "return [=[x"), "unfinished long string"));
    CHECK(strcmp(run(L, "assert(loadstring('return {1}[1]') == nil)"), "") == 0);
    lua_close(L);
    return 0;
}

static int test_unpack_ranges(void) {
    lua_State *L = new_state();
    CHECK(strstr(run(L, "unpack({1,2,3}, -2, 2147483647)"), "too many results to unpack"));
    CHECK(strstr(run(L, "unpack({1,2,3}, -2147483648, 2147483647)"), "too many results to unpack"));
    CHECK(strcmp(run(L, "assert(select('#', unpack({1,2,3}, 2147483646, 2147483647)) == 2)"), "") == 0);
    CHECK(strcmp(run(L, "assert(select('#', unpack({1,2,3}, -1, 5)) == 7)"), "") == 0);
    CHECK(strcmp(run(L, "assert(select('#', unpack({1,2,3}, 1, -1)) == 0)"), "") == 0);
    lua_close(L);
    return 0;
}

static int hook_calls;
static void stopping_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    if (++hook_calls >= 3) luaL_error(L, "stopped by the hook");
}

static int test_interrupt_check_stops_c_loops(void) {
    lua_State *L = new_state();
    /* a count hook that would fire only after 10^9 VM instructions: what
     * stops these scripts is the library's own calls to the hook */
    lua_sethook(L, stopping_hook, LUA_MASKCOUNT, 1000000000);
    static const char *const slow[] = {"string.find(string.rep('a', 3000), '.-.-.-.-.-b')",
                                       "string.rep('ab', 2^29)", "table.insert({1}, -2147483640, 1)", NULL};
    for (int i = 0; slow[i]; i++) {
        hook_calls = 0;
        CHECK(strstr(run(L, slow[i]), "stopped by the hook"));
    }
    lua_sethook(L, NULL, 0, 0);
    CHECK(strcmp(run(L, "assert(string.rep('', 2^31 - 1) == '')"), "") == 0);
    lua_close(L);
    return 0;
}

static int test_pattern_depth(void) {
    lua_State *L = new_state();
    CHECK(strstr(run(L, "string.match(string.rep('a', 50000), string.rep('a?', 50000))"), "pattern too complex"));
    CHECK(strcmp(run(L, "assert(string.match(string.rep('a', 100), string.rep('a?', 100)) == string.rep('a', 100))"),
                 "") == 0);
    lua_close(L);
    return 0;
}

int main(void) {
    RUN_TEST(test_readonly_refuses_every_store);
    RUN_TEST(test_parser_under_constant_collection);
    RUN_TEST(test_parser_anchors_chunk_name);
    RUN_TEST(test_long_brackets);
    RUN_TEST(test_unpack_ranges);
    RUN_TEST(test_interrupt_check_stops_c_loops);
    RUN_TEST(test_pattern_depth);
    return TEST_REPORT("lua_vm");
}
