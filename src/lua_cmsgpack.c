/* lua_cmsgpack.c: the `cmsgpack` library scripts expect: pack(...),
 * unpack(s), unpack_one(s [, offset]), unpack_limit(s, limit [, offset]),
 * MessagePack encodings chosen as Redis's bundled module chooses them.
 *
 * Encoding: nil c0, booleans c2/c3; a number equal to an int64 is the
 * smallest integer form (fixint, cc/cd/ce/cf, e0.., d0/d1/d2/d3), other
 * numbers float32 (ca) when that is exact, else float64 (cb); strings
 * fixstr/d9/da/db; a table whose keys are exactly 1..n (n > 0, or empty)
 * is an array (9x/dc/dd), any other a map (8x/de/df).  Nesting deeper
 * than 16 tables encodes nil, so a self-referencing table terminates.
 * Decoding accepts every MessagePack type (bin as strings, ext skipped as
 * nil); truncated or invalid input raises an error, never reads past
 * the string.  Called from script_lua.c's library loader only. */
#include <lauxlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "script_lua.h"
#include "zmalloc.h"

#define MAX_NESTING 16

/* ------------------------------------------------------------ encode */

/* The output grows in a zmalloc'd buffer owned by a userdata with __gc:
 * luaL_Buffer keeps its pieces on the Lua stack, which the recursive
 * encoder also uses, and a Lua error half-way must not leak. */
typedef struct mpbuf {
    lua_State *L;
    char *p;
    size_t len, cap;
} mpbuf;

static int mpbuf_gc(lua_State *L) {
    mpbuf *b = lua_touserdata(L, 1);
    zfree(b->p);
    b->p = NULL;
    return 0;
}

static void mp_add(mpbuf *b, const void *p, size_t n) {
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len < n) {
            if (cap > ((size_t)1 << 40)) luaL_error(b->L, "cmsgpack: output too large");
            cap *= 2;
        }
        char *np = ztryrealloc(b->p, cap);
        if (!np) luaL_error(b->L, "not enough memory");
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void mp_addc(mpbuf *b, char ch) { mp_add(b, &ch, 1); }

static void put_be(mpbuf *b, unsigned char tag, uint64_t v, int bytes) {
    char buf[9];
    buf[0] = (char)tag;
    for (int i = 0; i < bytes; i++) buf[1 + i] = (char)(v >> (8 * (bytes - 1 - i)));
    mp_add(b, buf, (size_t)bytes + 1);
}

static void enc_int(mpbuf *b, int64_t v) {
    if (v >= 0) {
        if (v <= 127) mp_addc(b, (char)v);
        else if (v <= 0xff) put_be(b, 0xcc, (uint64_t)v, 1);
        else if (v <= 0xffff) put_be(b, 0xcd, (uint64_t)v, 2);
        else if (v <= 0xffffffffLL) put_be(b, 0xce, (uint64_t)v, 4);
        else put_be(b, 0xcf, (uint64_t)v, 8);
    } else {
        if (v >= -32) mp_addc(b, (char)(0xe0 | (v + 32)));
        else if (v >= -128) put_be(b, 0xd0, (uint64_t)v & 0xff, 1);
        else if (v >= -32768) put_be(b, 0xd1, (uint64_t)v & 0xffff, 2);
        else if (v >= -2147483648LL) put_be(b, 0xd2, (uint64_t)v & 0xffffffffu, 4);
        else put_be(b, 0xd3, (uint64_t)v, 8);
    }
}

static void enc_number(mpbuf *b, lua_Number n) {
    if (n == floor(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0) {
        enc_int(b, (int64_t)n);
        return;
    }
    float f = (float)n;
    if ((double)f == n) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(b, 0xca, u, 4);
    } else {
        uint64_t u;
        double d = n;
        memcpy(&u, &d, 8);
        put_be(b, 0xcb, u, 8);
    }
}

static void enc_len(mpbuf *b, size_t len, unsigned fix, unsigned fixmax, unsigned t8, unsigned t16, unsigned t32) {
    if (len < fixmax) mp_addc(b, (char)(fix | len));
    else if (t8 && len <= 0xff) put_be(b, (unsigned char)t8, len, 1);
    else if (len <= 0xffff) put_be(b, (unsigned char)t16, len, 2);
    else put_be(b, (unsigned char)t32, len, 4);
}

/* Array iff the keys are exactly 1..n; *n gets the count. */
static bool table_is_array(lua_State *L, size_t *n) {
    size_t count = 0;
    lua_Number max = 0;
    lua_pushnil(L);
    bool array = true;
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        count++;
        if (lua_type(L, -1) == LUA_TNUMBER) {
            lua_Number k = lua_tonumber(L, -1);
            if (k > 0 && k == floor(k)) {
                if (k > max) max = k;
                continue;
            }
        }
        array = false;
    }
    *n = count;
    return array && max == (lua_Number)count;
}

static void enc_value(lua_State *L, mpbuf *b, int level);

static void enc_table(lua_State *L, mpbuf *b, int level) {
    size_t n;
    luaL_checkstack(L, 4, "cmsgpack: stack overflow");
    if (table_is_array(L, &n)) {
        enc_len(b, n, 0x90, 16, 0, 0xdc, 0xdd);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (int)i);
            enc_value(L, b, level + 1);
        }
        return;
    }
    enc_len(b, n, 0x80, 16, 0, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        enc_value(L, b, level + 1); /* key */
        enc_value(L, b, level + 1); /* value */
    }
}

/* Encodes and pops the value at the top.  The buffer sits below it on the
 * stack, so luaL_Buffer's own pushes are balanced before each add. */
static void enc_value(lua_State *L, mpbuf *b, int level) {
    switch (lua_type(L, -1)) {
        case LUA_TBOOLEAN:
            mp_addc(b, lua_toboolean(L, -1) ? (char)0xc3 : (char)0xc2);
            break;
        case LUA_TNUMBER:
            enc_number(b, lua_tonumber(L, -1));
            break;
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            enc_len(b, len, 0xa0, 32, 0xd9, 0xda, 0xdb);
            mp_add(b, s, len);
            break;
        }
        case LUA_TTABLE:
            if (level < MAX_NESTING) enc_table(L, b, level);
            else mp_addc(b, (char)0xc0);
            break;
        default:
            mp_addc(b, (char)0xc0);
            break;
    }
    lua_pop(L, 1);
}

static int l_pack(lua_State *L) {
    int argc = lua_gettop(L);
    if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    mpbuf *b = lua_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    b->L = L;
    lua_newtable(L);
    lua_pushcfunction(L, mpbuf_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    for (int i = 1; i <= argc; i++) {
        lua_pushvalue(L, i);
        enc_value(L, b, 0);
    }
    lua_pushlstring(L, b->p ? b->p : "", b->len);
    return 1;
}

/* ------------------------------------------------------------ decode */

typedef struct cursor {
    const unsigned char *p;
    size_t len, pos;
    const char *err;
} cursor;

static bool need(cursor *c, size_t n) {
    if (c->len - c->pos < n) {
        c->err = "Missing bytes in input.";
        return false;
    }
    return true;
}

static uint64_t get_be(cursor *c, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = (v << 8) | c->p[c->pos++];
    return v;
}

static bool dec_value(lua_State *L, cursor *c, int depth);

static bool dec_array(lua_State *L, cursor *c, uint64_t n, bool map, int depth) {
    /* every element takes at least one byte: bound n by the input left */
    if (n > c->len - c->pos) {
        c->err = "Missing bytes in input.";
        return false;
    }
    lua_createtable(L, map ? 0 : (int)n, map ? (int)n : 0);
    for (uint64_t i = 0; i < n; i++) {
        if (map) {
            if (!dec_value(L, c, depth + 1) || !dec_value(L, c, depth + 1)) return false;
            if (lua_isnil(L, -2)) lua_pop(L, 2); /* a nil key cannot be stored */
            else lua_settable(L, -3);
        } else {
            if (!dec_value(L, c, depth + 1)) return false;
            lua_rawseti(L, -2, (int)i + 1);
        }
    }
    return true;
}

static bool dec_str(lua_State *L, cursor *c, uint64_t n) {
    if (!need(c, (size_t)n) || n > c->len) return false;
    lua_pushlstring(L, (const char *)c->p + c->pos, (size_t)n);
    c->pos += (size_t)n;
    return true;
}

static bool dec_value(lua_State *L, cursor *c, int depth) {
    if (depth > 1000 || !lua_checkstack(L, 4)) {
        c->err = "Nested too deep.";
        return false;
    }
    if (!need(c, 1)) return false;
    unsigned t = c->p[c->pos++];
    if (t <= 0x7f) {
        lua_pushnumber(L, t);
        return true;
    }
    if (t >= 0xe0) {
        lua_pushnumber(L, (int)t - 256);
        return true;
    }
    if ((t & 0xe0) == 0xa0) return dec_str(L, c, t & 0x1f);
    if ((t & 0xf0) == 0x90) return dec_array(L, c, t & 0x0f, false, depth);
    if ((t & 0xf0) == 0x80) return dec_array(L, c, t & 0x0f, true, depth);
    static const int ext_fixed[] = {1, 2, 4, 8, 16};
    switch (t) {
        case 0xc0: lua_pushnil(L); return true;
        case 0xc2: lua_pushboolean(L, 0); return true;
        case 0xc3: lua_pushboolean(L, 1); return true;
        case 0xca: {
            if (!need(c, 4)) return false;
            uint32_t u = (uint32_t)get_be(c, 4);
            float f;
            memcpy(&f, &u, 4);
            lua_pushnumber(L, f);
            return true;
        }
        case 0xcb: {
            if (!need(c, 8)) return false;
            uint64_t u = get_be(c, 8);
            double d;
            memcpy(&d, &u, 8);
            lua_pushnumber(L, d);
            return true;
        }
        case 0xcc:
        case 0xcd:
        case 0xce:
        case 0xcf: {
            int bytes = 1 << (t - 0xcc);
            if (!need(c, (size_t)bytes)) return false;
            lua_pushnumber(L, (lua_Number)get_be(c, bytes));
            return true;
        }
        case 0xd0:
        case 0xd1:
        case 0xd2:
        case 0xd3: {
            int bytes = 1 << (t - 0xd0);
            if (!need(c, (size_t)bytes)) return false;
            uint64_t v = get_be(c, bytes);
            if (bytes < 8 && (v >> (bytes * 8 - 1)) & 1) v |= ~0ULL << (bytes * 8);
            lua_pushnumber(L, (lua_Number)(int64_t)v);
            return true;
        }
        case 0xd9:
        case 0xc4:
            if (!need(c, 1)) return false;
            return dec_str(L, c, get_be(c, 1));
        case 0xda:
        case 0xc5:
            if (!need(c, 2)) return false;
            return dec_str(L, c, get_be(c, 2));
        case 0xdb:
        case 0xc6:
            if (!need(c, 4)) return false;
            return dec_str(L, c, get_be(c, 4));
        case 0xdc:
        case 0xde:
            if (!need(c, 2)) return false;
            return dec_array(L, c, get_be(c, 2), t == 0xde, depth);
        case 0xdd:
        case 0xdf:
            if (!need(c, 4)) return false;
            return dec_array(L, c, get_be(c, 4), t == 0xdf, depth);
        case 0xd4:
        case 0xd5:
        case 0xd6:
        case 0xd7:
        case 0xd8: {
            size_t n = (size_t)ext_fixed[t - 0xd4] + 1;
            if (!need(c, n)) return false;
            c->pos += n;
            lua_pushnil(L);
            return true;
        }
        case 0xc7:
        case 0xc8:
        case 0xc9: {
            int bytes = 1 << (t - 0xc7);
            if (!need(c, (size_t)bytes)) return false;
            uint64_t n = get_be(c, bytes) + 1;
            if (!need(c, (size_t)n) || n > c->len) return false;
            c->pos += (size_t)n;
            lua_pushnil(L);
            return true;
        }
        default:
            c->err = "Bad data format in input.";
            return false;
    }
}

/* Decode up to `limit` values (0: all) from `offset`; with `with_offset`
 * the next offset (or -1 at the end) comes first, as unpack_one and
 * unpack_limit return it. */
static int unpack_generic(lua_State *L, long limit, long offset, bool with_offset) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    if (offset < 0 || (size_t)offset > len) return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset, (int)len);
    cursor c = {(const unsigned char *)s, len, (size_t)offset, NULL};
    int base = lua_gettop(L);
    if (with_offset) lua_pushnil(L); /* slot for the offset */
    int n = 0;
    while (c.pos < c.len && (limit <= 0 || n < limit)) {
        if (!dec_value(L, &c, 0)) return luaL_error(L, "%s", c.err ? c.err : "Bad data format in input.");
        n++;
    }
    if (with_offset) {
        lua_pushnumber(L, c.pos < c.len ? (lua_Number)c.pos : -1);
        lua_replace(L, base + 1);
        return n + 1;
    }
    return n;
}

static int l_unpack(lua_State *L) { return unpack_generic(L, 0, 0, false); }
static int l_unpack_one(lua_State *L) { return unpack_generic(L, 1, (long)luaL_optinteger(L, 2, 0), true); }
static int l_unpack_limit(lua_State *L) {
    return unpack_generic(L, (long)luaL_checkinteger(L, 2), (long)luaL_optinteger(L, 3, 0), true);
}

int slua_open_cmsgpack(lua_State *L) {
    static const luaL_Reg fns[] = {{"pack", l_pack}, {"unpack", l_unpack}, {"unpack_one", l_unpack_one}, {"unpack_limit", l_unpack_limit}, {NULL, NULL}};
    luaL_register(L, "cmsgpack", fns);
    /* The metadata fields Redis 7.0's bundled library reports, so that a
     * script reading (or listing) them sees the same values. */
    static const char *const meta[][2] = {{"_NAME", "cmsgpack"},
                                          {"_VERSION", "lua-cmsgpack 0.4.0"},
                                          {"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"},
                                          {"_DESCRIPTION", "MessagePack C implementation for Lua"}};
    for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
        lua_pushstring(L, meta[i][1]);
        lua_setfield(L, -2, meta[i][0]);
    }
    return 1;
}
