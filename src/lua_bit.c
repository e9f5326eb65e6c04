/* lua_bit.c: the `bit` library scripts expect (tobit, tohex, bnot, band,
 * bor, bxor, lshift, rshift, arshift, rol, ror, bswap), behaving as the
 * LuaBitOp 1.0.2 module Redis 7.0 bundles; written here from its
 * documented behaviour.
 *
 * Every argument becomes a 32-bit integer the way LuaBitOp does it: the
 * number plus 2^52 + 2^51 puts the integer part, rounded to nearest even,
 * in the low 32 bits of the double's mantissa, so out-of-range values wrap
 * modulo 2^32 and the results agree bit for bit with Redis on any input
 * (NaN and infinities included).  Results are returned as signed 32-bit
 * numbers.  Shift and rotate counts use their low 5 bits.
 *
 * tohex(x [, n]) writes the |n| low hex digits of x (n < 0: upper case;
 * default 8, at most 8).  n = INT32_MIN has no positive counterpart in 32
 * bits; it means 8 upper-case digits as in Redis's fixed module (the stock
 * module negated it and overflowed its buffer, CVE-2024-31449).  The
 * digits go to a fixed 8-byte buffer whose bound the count is clamped to
 * before any write.
 * Called from script_lua.c's library loader only. */
#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

#include "script_lua.h"

typedef uint32_t ubits;
typedef int32_t sbits;

/* Argument idx as 32 bits.  A value Lua cannot read as a number is an
 * error; lua_tonumber gives 0 for it, whose bits are 0, so only a zero
 * result needs the (slower) type check, as in LuaBitOp. */
static ubits bit_arg(lua_State *L, int idx) {
    double n = (double)lua_tonumber(L, idx) + 6755399441055744.0; /* 2^52 + 2^51 */
    uint64_t raw;
    memcpy(&raw, &n, sizeof(raw));
    ubits b = (ubits)raw; /* the low word: the integer part, mod 2^32 */
    if (b == 0 && !lua_isnumber(L, idx)) luaL_typerror(L, idx, "number");
    return b;
}

static int push_bits(lua_State *L, ubits b) {
    lua_pushnumber(L, (lua_Number)(sbits)b);
    return 1;
}

static int l_tobit(lua_State *L) { return push_bits(L, bit_arg(L, 1)); }
static int l_bnot(lua_State *L) { return push_bits(L, ~bit_arg(L, 1)); }

/* band/bor/bxor take one or more arguments: the first is read first,
 * the others from the last down, so a bad argument is reported with the
 * same number as in Redis. */
#define BIT_FOLD(name, op)                                          \
    static int name(lua_State *L) {                                 \
        ubits b = bit_arg(L, 1);                                    \
        for (int i = lua_gettop(L); i > 1; i--) b op bit_arg(L, i); \
        return push_bits(L, b);                                     \
    }
BIT_FOLD(l_band, &=)
BIT_FOLD(l_bor, |=)
BIT_FOLD(l_bxor, ^=)

/* The value and the count (low 5 bits) of a shift or a rotation. */
static ubits shift_args(lua_State *L, unsigned *count) {
    ubits b = bit_arg(L, 1);
    *count = bit_arg(L, 2) & 31;
    return b;
}

static int l_lshift(lua_State *L) {
    unsigned n;
    ubits b = shift_args(L, &n);
    return push_bits(L, b << n);
}

static int l_rshift(lua_State *L) {
    unsigned n;
    ubits b = shift_args(L, &n);
    return push_bits(L, b >> n);
}

static int l_arshift(lua_State *L) {
    unsigned n;
    ubits b = shift_args(L, &n);
    return push_bits(L, (ubits)((sbits)b >> n)); /* gcc: arithmetic shift */
}

/* Rotations: the "& 31" keeps a count of 0 from shifting by 32 (undefined
 * in C); rotating by 0 is the value itself either way. */
static int l_rol(lua_State *L) {
    unsigned n;
    ubits b = shift_args(L, &n);
    return push_bits(L, (b << n) | (b >> ((32 - n) & 31)));
}

static int l_ror(lua_State *L) {
    unsigned n;
    ubits b = shift_args(L, &n);
    return push_bits(L, (b >> n) | (b << ((32 - n) & 31)));
}

static int l_bswap(lua_State *L) {
    ubits b = bit_arg(L, 1);
    return push_bits(L, (b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24));
}

/* The number of digits tohex writes: |n| capped at 8, where INT32_MIN
 * (whose negation does not fit) counts as -8; *upper says n < 0. */
static int hex_digits(sbits n, bool *upper) {
    *upper = n < 0;
    if (n == INT32_MIN) return 8;
    if (n < 0) n = -n;
    return n > 8 ? 8 : (int)n;
}

static int l_tohex(lua_State *L) {
    ubits b = bit_arg(L, 1);
    sbits n = lua_isnone(L, 2) ? 8 : (sbits)bit_arg(L, 2);
    bool upper;
    int ndigits = hex_digits(n, &upper);
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char buf[8];
    for (int i = ndigits - 1; i >= 0; i--) {
        buf[i] = digits[b & 15];
        b >>= 4;
    }
    lua_pushlstring(L, buf, (size_t)ndigits);
    return 1;
}

int slua_open_bit(lua_State *L) {
    static const luaL_Reg fns[] = {{"tobit", l_tobit}, {"bnot", l_bnot}, {"band", l_band}, {"bor", l_bor}, {"bxor", l_bxor}, {"lshift", l_lshift}, {"rshift", l_rshift}, {"arshift", l_arshift}, {"rol", l_rol}, {"ror", l_ror}, {"bswap", l_bswap}, {"tohex", l_tohex}, {NULL, NULL}};
    luaL_register(L, "bit", fns);
    return 1;
}
