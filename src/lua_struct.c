/* lua_struct.c: the `struct` library scripts expect (pack, unpack, size),
 * with the format language of Roberto Ierusalimschy's struct module that
 * Redis bundles; written here from its documented behaviour.
 *
 * Format: '>' big endian, '<' little endian, '=' native, '!n' alignment
 * (n a power of two, default: no alignment), 'x' a zero pad byte,
 * 'b'/'B' char, 'h'/'H' short, 'l'/'L' long, 'T' size_t, 'i'/'I'[n] an
 * integer of n bytes (default int), 'f' float, 'd' double, 's' a
 * zero-terminated string, 'c'[n] n bytes (c0: the whole string when
 * packing, the previous number when unpacking), ' ' ignored.  unpack
 * returns the values and then the position after them.
 * Called from script_lua.c's library loader only. */
#include <lauxlib.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "script_lua.h"
#include "util.h"

#define MAX_INT_SIZE 8

typedef struct fmt_state {
    bool little;
    size_t align;
} fmt_state;

static size_t read_num(const char **f, size_t def) {
    if (!isdigit((unsigned char)**f)) return def;
    size_t n = 0;
    while (isdigit((unsigned char)**f) && n < 100000000) n = n * 10 + (size_t)(*(*f)++ - '0');
    return n;
}

/* The size of the next item; handles the modifiers in place (returns 0). */
static size_t opt_size(lua_State *L, char opt, const char **f) {
    switch (opt) {
        case 'B':
        case 'b': return 1;
        case 'H':
        case 'h': return sizeof(short);
        case 'L':
        case 'l': return sizeof(long);
        case 'T': return sizeof(size_t);
        case 'f': return sizeof(float);
        case 'd': return sizeof(double);
        case 'x': return 1;
        case 'c': return read_num(f, 1);
        case 'i':
        case 'I': {
            size_t sz = read_num(f, sizeof(int));
            if (sz > MAX_INT_SIZE) luaL_error(L, "integral size %d is larger than limit of %d", (int)sz, MAX_INT_SIZE);
            if (sz == 0) luaL_error(L, "integral size 0 is not allowed");
            return sz;
        }
        default: return 0;
    }
}

static size_t gap(size_t pos, size_t size, const fmt_state *st) {
    size_t a = size < st->align ? size : st->align;
    if (a <= 1 || (a & (a - 1))) return 0;
    return (a - (pos & (a - 1))) & (a - 1);
}

static bool control(lua_State *L, char opt, const char **f, fmt_state *st) {
    switch (opt) {
        case ' ': return true;
        case '>': st->little = false; return true;
        case '<': st->little = true; return true;
        case '=': st->little = true; return true; /* x86-64 */
        case '!': {
            size_t a = read_num(f, sizeof(double));
            if (a == 0 || (a & (a - 1))) luaL_error(L, "alignment %d is not a power of 2", (int)a);
            st->align = a;
            return true;
        }
        default: return false;
    }
}

static void put_int(luaL_Buffer *b, uint64_t v, bool little, size_t size) {
    char buf[MAX_INT_SIZE];
    for (size_t i = 0; i < size; i++) {
        buf[little ? i : size - 1 - i] = (char)(v & 0xff);
        v >>= 8;
    }
    luaL_addlstring(b, buf, size);
}

static void put_raw(luaL_Buffer *b, const void *p, size_t size, bool little) {
    char buf[8];
    memcpy(buf, p, size);
    if (!little) /* the host is little endian: reverse for big */
        for (size_t i = 0; i < size / 2; i++) {
            char t = buf[i];
            buf[i] = buf[size - 1 - i];
            buf[size - 1 - i] = t;
        }
    luaL_addlstring(b, buf, size);
}

static int l_pack(lua_State *L) {
    const char *f = luaL_checkstring(L, 1);
    fmt_state st = {true, 1};
    luaL_Buffer b;
    int arg = 2;
    size_t pos = 0;
    luaL_buffinit(L, &b);
    while (*f) {
        char opt = *f++;
        if (control(L, opt, &f, &st)) continue;
        size_t size = opt_size(L, opt, &f);
        size_t g = gap(pos, size, &st);
        pos += g;
        while (g-- > 0) luaL_addchar(&b, '\0');
        switch (opt) {
            case 'b':
            case 'B':
            case 'h':
            case 'H':
            case 'l':
            case 'L':
            case 'T':
            case 'i':
            case 'I': {
                lua_Number n = luaL_checknumber(L, arg++);
                /* [0, 2^64) as unsigned, anything else as signed (wraps) */
                uint64_t v = n >= 0 && n < 18446744073709551616.0 ? (uint64_t)n : (uint64_t)util_d2ll_trunc(n);
                put_int(&b, v, st.little, size);
                break;
            }
            case 'x':
                luaL_addchar(&b, '\0');
                break;
            case 'f': {
                float v = (float)luaL_checknumber(L, arg++);
                put_raw(&b, &v, size, st.little);
                break;
            }
            case 'd': {
                double v = (double)luaL_checknumber(L, arg++);
                put_raw(&b, &v, size, st.little);
                break;
            }
            case 'c':
            case 's': {
                size_t l;
                const char *s = luaL_checklstring(L, arg++, &l);
                if (opt == 'c' && size == 0) size = l;
                if (opt == 'c') {
                    luaL_argcheck(L, l >= size, arg - 1, "string too short");
                    luaL_addlstring(&b, s, size);
                } else {
                    luaL_addlstring(&b, s, l);
                    luaL_addchar(&b, '\0');
                    size = l + 1;
                }
                break;
            }
            default:
                return luaL_error(L, "invalid format option '%c'", opt);
        }
        pos += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static uint64_t get_uint(const char *p, bool little, size_t size) {
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++) v = (v << 8) | (unsigned char)p[little ? size - 1 - i : i];
    return v;
}

static int l_unpack(lua_State *L) {
    size_t ld;
    const char *f = luaL_checkstring(L, 1);
    const char *data = luaL_checklstring(L, 2, &ld);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, init > 0, 3, "offset must be 1 or greater");
    size_t pos = (size_t)init - 1;
    fmt_state st = {true, 1};
    int n = 0;
    while (*f) {
        char opt = *f++;
        if (control(L, opt, &f, &st)) continue;
        size_t size = opt_size(L, opt, &f);
        pos += gap(pos, size, &st);
        luaL_argcheck(L, pos <= ld && size <= ld - pos, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
            case 'b':
            case 'B':
            case 'h':
            case 'H':
            case 'l':
            case 'L':
            case 'T':
            case 'i':
            case 'I': {
                uint64_t v = get_uint(data + pos, st.little, size);
                bool issigned = islower((unsigned char)opt);
                if (issigned && size < 8 && (v >> (size * 8 - 1)) & 1) v |= ~0ULL << (size * 8);
                lua_pushnumber(L, issigned ? (lua_Number)(int64_t)v : (lua_Number)v);
                n++;
                break;
            }
            case 'x':
                break;
            case 'f': {
                float v;
                char buf[4];
                for (size_t i = 0; i < 4; i++) buf[i] = data[pos + (st.little ? i : 3 - i)];
                memcpy(&v, buf, 4);
                lua_pushnumber(L, v);
                n++;
                break;
            }
            case 'd': {
                double v;
                char buf[8];
                for (size_t i = 0; i < 8; i++) buf[i] = data[pos + (st.little ? i : 7 - i)];
                memcpy(&v, buf, 8);
                lua_pushnumber(L, v);
                n++;
                break;
            }
            case 'c':
                if (size == 0) {
                    if (n == 0 || !lua_isnumber(L, -1)) return luaL_error(L, "format 'c0' needs a previous size");
                    lua_Number want = lua_tonumber(L, -1); /* negative or huge: too short */
                    luaL_argcheck(L, want >= 0 && want <= (lua_Number)(ld - pos), 2, "data string too short");
                    size = (size_t)want;
                    lua_pop(L, 1);
                    n--;
                }
                lua_pushlstring(L, data + pos, size);
                n++;
                break;
            case 's': {
                const char *e = memchr(data + pos, '\0', ld - pos);
                if (!e) return luaL_error(L, "unfinished string in data");
                size = (size_t)(e - (data + pos)) + 1;
                lua_pushlstring(L, data + pos, size - 1);
                n++;
                break;
            }
            default:
                return luaL_error(L, "invalid format option '%c'", opt);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return n + 1;
}

static int l_size(lua_State *L) {
    const char *f = luaL_checkstring(L, 1);
    fmt_state st = {true, 1};
    size_t pos = 0;
    while (*f) {
        char opt = *f++;
        if (control(L, opt, &f, &st)) continue;
        size_t size = opt_size(L, opt, &f);
        pos += gap(pos, size, &st);
        if (opt == 's') return luaL_argerror(L, 1, "options 's' has no fixed size");
        if (opt == 'c' && size == 0) return luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!size && opt != 'x') return luaL_error(L, "invalid format option '%c'", opt);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int slua_open_struct(lua_State *L) {
    static const luaL_Reg fns[] = {{"pack", l_pack}, {"unpack", l_unpack}, {"size", l_size}, {NULL, NULL}};
    luaL_register(L, "struct", fns);
    return 1;
}
