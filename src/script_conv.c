/* script_conv.c: RESP <-> Lua conversions, as Redis 7.0 does them.
 *
 * Reply -> Lua (what redis.call returns; the reply is read back from the
 * fake client's output buffer):
 *   integer -> number          bulk -> string      null bulk/array -> false
 *   array -> table 1..n        status -> {ok=s}    error -> {err=s}
 *   RESP3 (redis.setresp(3)): map -> {map={k=v}}, set -> {set={e=true}},
 *   null -> nil, boolean -> boolean, double -> {double=n},
 *   big number -> {big_number=s}, verbatim -> {verbatim_string={format, string}}
 * Lua -> reply (what a script returns):
 *   string -> bulk, number -> integer (truncated), nil -> null,
 *   boolean -> :1 / null under RESP2 scripts, #t/#f under RESP3 ones,
 *   table with err -> error, ok -> status, double, big_number,
 *   verbatim_string, map, set, otherwise an array up to the first nil.
 * Nesting is bounded by Lua's stack (lua_checkstack), which is how Redis
 * reports "reached lua stack limit" for absurdly deep tables; so C recursion
 * stays shallow.  Called by script_lua.c only. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "script_lua.h"
#include "util.h"

#define MAX_DEPTH 1000 /* a command reply is never nested this deep */

/* ------------------------------------------------------- reply -> Lua */

static const char *line_end(const char *p, const char *end) {
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr || cr + 1 >= end || cr[1] != '\n') return NULL;
    return cr;
}

static void set_field_str(lua_State *L, const char *field, const char *p, size_t len) {
    lua_newtable(L);
    lua_pushstring(L, field);
    lua_pushlstring(L, p, len);
    lua_rawset(L, -3);
}

static const char *push_aggregate(lua_State *L, char type, long long n, const char *p, const char *end, int depth) {
    if (n < 0 || n > (long long)(end - p)) return NULL; /* each element takes >= 1 byte */
    if (type == '%' || type == '~') {
        lua_newtable(L);
        lua_pushstring(L, type == '%' ? "map" : "set");
        lua_createtable(L, 0, (int)n);
        for (long long i = 0; i < n; i++) {
            if (!(p = sconv_push_reply(L, p, end, depth + 1))) return NULL;
            if (type == '%') {
                if (!(p = sconv_push_reply(L, p, end, depth + 1))) return NULL;
            } else {
                lua_pushboolean(L, 1);
            }
            lua_rawset(L, -3);
        }
        lua_rawset(L, -3);
        return p;
    }
    lua_createtable(L, (int)n, 0);
    for (long long i = 0; i < n; i++) {
        if (!(p = sconv_push_reply(L, p, end, depth + 1))) return NULL;
        lua_rawseti(L, -2, (int)i + 1);
    }
    return p;
}

const char *sconv_push_reply(lua_State *L, const char *p, const char *end, int depth) {
    if (p >= end || depth > MAX_DEPTH || !lua_checkstack(L, 6)) return NULL;
    const char *le = line_end(p, end);
    if (!le) return NULL;
    char type = *p;
    const char *s = p + 1, *next = le + 2;
    size_t slen = (size_t)(le - s);
    long long n = 0;
    switch (type) {
        case '+':
            set_field_str(L, "ok", s, slen);
            return next;
        case '-': /* counted in errorstats when the command replied it */
            set_field_str(L, "err", s, slen);
            lua_pushliteral(L, SCONV_NOTED);
            lua_pushboolean(L, 1);
            lua_rawset(L, -3);
            return next;
        case ':':
            lua_pushnumber(L, (lua_Number)strtoll(s, NULL, 10));
            return next;
        case '_':
            lua_pushnil(L);
            return next;
        case '#':
            lua_pushboolean(L, slen > 0 && s[0] == 't');
            return next;
        case ',': {
            char buf[64];
            size_t l = slen < sizeof(buf) - 1 ? slen : sizeof(buf) - 1;
            memcpy(buf, s, l);
            buf[l] = '\0';
            lua_newtable(L);
            lua_pushliteral(L, "double");
            lua_pushnumber(L, strtod(buf, NULL));
            lua_rawset(L, -3);
            return next;
        }
        case '(':
            set_field_str(L, "big_number", s, slen);
            return next;
        case '$':
        case '=':
            n = strtoll(s, NULL, 10);
            if (n < 0) {
                lua_pushboolean(L, 0);
                return next;
            }
            if (n > (long long)(end - next) - 2) return NULL;
            if (type == '$') {
                lua_pushlstring(L, next, (size_t)n);
            } else {
                /* "fmt:payload": the first three bytes name the format */
                if (n < 4) return NULL;
                lua_newtable(L);
                lua_pushliteral(L, "verbatim_string");
                lua_newtable(L);
                lua_pushliteral(L, "format");
                lua_pushlstring(L, next, 3);
                lua_rawset(L, -3);
                lua_pushliteral(L, "string");
                lua_pushlstring(L, next + 4, (size_t)n - 4);
                lua_rawset(L, -3);
                lua_rawset(L, -3);
            }
            return next + n + 2;
        case '*':
        case '>':
        case '%':
        case '~':
            n = strtoll(s, NULL, 10);
            if (n < 0) {
                lua_pushboolean(L, 0);
                return next;
            }
            return push_aggregate(L, type == '>' ? '*' : type, n, next, end, depth);
        case '|': {
            /* Attributes carry metadata the script never sees: skip them. */
            n = strtoll(s, NULL, 10);
            const char *q = push_aggregate(L, '%', n, next, end, depth);
            if (!q) return NULL;
            lua_pop(L, 1);
            return sconv_push_reply(L, q, end, depth);
        }
        default:
            return NULL;
    }
}

/* ------------------------------------------------------- Lua -> reply */

/* t[field] if it has the wanted type (left on the stack), else nothing. */
static bool get_field(lua_State *L, const char *field, int type) {
    lua_pushstring(L, field);
    lua_rawget(L, -2);
    if (lua_type(L, -1) == type) return true;
    lua_pop(L, 1);
    return false;
}

static sds clean_line(const char *p, size_t len) {
    sds s = sds_newlen(p, len);
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n') s[i] = ' ';
    return s;
}

static void reply_map_or_set(client_t *c, lua_State *L, int script_resp, int depth, bool map) {
    /* stack: ..., outer, inner */
    long n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        n++;
        lua_pop(L, 1);
    }
    if (map) reply_map_len(c, n);
    else reply_set_len(c, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2); /* key copy: the reply must not convert the iteration key */
        sconv_reply_value(c, L, script_resp, depth + 1);
        if (map) sconv_reply_value(c, L, script_resp, depth + 1);
        else lua_pop(L, 1);
    }
}

/* {format=f, string=s} on top: a verbatim string (a bulk to RESP2
 * clients); false, and nothing replied, unless both are strings. */
static bool reply_verbatim_table(client_t *c, lua_State *L) {
    if (!get_field(L, "format", LUA_TSTRING)) return false;
    size_t flen, len;
    const char *f = lua_tolstring(L, -1, &flen);
    char ext[4] = "   "; /* the format is three characters on the wire */
    memcpy(ext, f, flen < 3 ? flen : 3);
    lua_pop(L, 1);
    if (!get_field(L, "string", LUA_TSTRING)) return false;
    const char *s = lua_tolstring(L, -1, &len);
    reply_verbatim(c, s, len, ext);
    lua_pop(L, 1);
    return true;
}

bool sconv_error_noted(lua_State *L) {
    lua_pushliteral(L, SCONV_NOTED);
    lua_rawget(L, -2);
    bool noted = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return noted;
}

static void reply_table(client_t *c, lua_State *L, int script_resp, int depth) {
    if (get_field(L, "err", LUA_TSTRING)) {
        size_t len;
        const char *m = lua_tolstring(L, -1, &len);
        sds s = clean_line(m, len);
        lua_pop(L, 1);
        if (sconv_error_noted(L)) reply_error_raw_noted(c, s, sds_len(s));
        else reply_error_raw(c, s, sds_len(s));
        sds_free(s);
        return;
    }
    if (get_field(L, "ok", LUA_TSTRING)) {
        size_t len;
        const char *m = lua_tolstring(L, -1, &len);
        sds s = clean_line(m, len);
        reply_simple(c, s);
        sds_free(s);
        lua_pop(L, 1);
        return;
    }
    if (get_field(L, "double", LUA_TNUMBER)) {
        reply_double(c, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return;
    }
    if (get_field(L, "big_number", LUA_TSTRING)) {
        size_t len;
        const char *m = lua_tolstring(L, -1, &len);
        sds s = clean_line(m, len);
        reply_big_number(c, s, sds_len(s));
        sds_free(s);
        lua_pop(L, 1);
        return;
    }
    if (get_field(L, "verbatim_string", LUA_TTABLE)) {
        bool done = reply_verbatim_table(c, L);
        lua_pop(L, 1);
        if (done) return;
    }
    if (get_field(L, "map", LUA_TTABLE)) {
        reply_map_or_set(c, L, script_resp, depth, true);
        lua_pop(L, 1);
        return;
    }
    if (get_field(L, "set", LUA_TTABLE)) {
        reply_map_or_set(c, L, script_resp, depth, false);
        lua_pop(L, 1);
        return;
    }
    long n = 0;
    for (;;) {
        lua_rawgeti(L, -1, (int)n + 1);
        bool end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end) break;
        n++;
    }
    reply_array_len(c, n);
    for (long i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, (int)i);
        sconv_reply_value(c, L, script_resp, depth + 1);
    }
}

/* Pops the value. */
void sconv_reply_value(client_t *c, lua_State *L, int script_resp, int depth) {
    if (!lua_checkstack(L, 4)) {
        reply_error(c, "reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    switch (lua_type(L, -1)) {
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            reply_bulk(c, s, len);
            break;
        }
        case LUA_TBOOLEAN:
            if (script_resp == 2) {
                if (lua_toboolean(L, -1)) reply_ll(c, 1);
                else reply_null(c);
            } else {
                reply_bool(c, lua_toboolean(L, -1));
            }
            break;
        case LUA_TNUMBER:
            reply_ll(c, util_d2ll_trunc(lua_tonumber(L, -1)));
            break;
        case LUA_TTABLE:
            reply_table(c, L, script_resp, depth);
            break;
        default:
            reply_null(c);
            break;
    }
    lua_pop(L, 1);
}
