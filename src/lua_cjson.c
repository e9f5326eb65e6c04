/* lua_cjson.c: the `cjson` library scripts expect (encode, decode, null,
 * new and the configuration functions), behaving as the lua-cjson 2.1.0
 * that Redis 7.0 bundles: the same output, defaults and error texts; written
 * here from its documented and observed behaviour.
 *
 * Encoding: nil and cjson.null are null; numbers "%.14g" (the precision is
 * configurable), NaN/Inf refused unless encode_invalid_numbers allows them;
 * strings escape '"', '\', '/', control characters and DEL; a table whose
 * keys are all integers >= 1 is an array (holes are null) unless too sparse
 * (max index > ratio * count and > safe: an error, or an object when
 * encode_sparse_array converts), any other table (the empty one included)
 * an object with string or number keys.  Decoding: RFC 8259 JSON plus what
 * lua-cjson accepts by default (hex, inf/nan, '+', leading zeros: whatever
 * strtod reads), null as cjson.null, \u escapes (surrogate pairs joined) to
 * UTF-8.  Nesting is limited both ways (default 1000, and always by the Lua
 * stack), with lua-cjson's messages.
 *
 * Untrusted input enters here from scripts, so beyond Redis:
 *   - the encoder's output buffer grows through the Lua allocator (counted
 *     in the script heap, bounded by its limit: "not enough memory"), every
 *     size is checked before it is added, and the buffer is freed on every
 *     path: the encoding runs under lua_pcall and l_encode frees it before
 *     passing the result or the error on;
 *   - the decoder builds only Lua values (strings through luaL_Buffer);
 *   - a long call gives the VM's hook a turn every HOOK_TURN_BYTES of output
 *     or input (hook_turn), so the busy-script machinery and SCRIPT KILL see
 *     it.  Every loop is bounded by the input (decode, table traversal) or
 *     produces output (encode), which the heap limit bounds.
 * Called from script_lua.c's library loader only. */
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "script_lua.h"

#define HOOK_TURN_BYTES ((size_t)1 << 20)
#define STACK_HEADROOM LUA_MINSTACK     /* slots for a token's luaL_Buffer, an error text */
#define ENC_MAX_OUTPUT (SIZE_MAX / 4)   /* below Lua's string limit; doubling cannot overflow */
#define ENC_STRING_CHUNK ((size_t)4096) /* input bytes escaped per reserve */
#define ENC_ESCAPE_MAX 6                /* bytes one input byte may become: \u00XX */

/* ------------------------------------------------------------ config */

/* One per cjson table (cjson.new() makes another), the upvalue of its
 * functions; the fields are lua-cjson's settings with its defaults. */
typedef struct cjson_cfg {
    int sparse_convert;  /* bool: an over-sparse array becomes an object */
    int sparse_ratio;    /* 0 disables the sparseness check */
    int sparse_safe;     /* indexes up to this are never "sparse" */
    int enc_max_depth;   /* tables */
    int dec_max_depth;   /* arrays and objects */
    int enc_precision;   /* significant digits, 1..14 */
    int enc_keep_buffer; /* bool, reported only: our buffer never outlives a call */
    int enc_invalid;     /* 0 refuse NaN/Inf, 1 write nan/inf/-inf, 2 write null */
    int dec_invalid;     /* bool: accept hex, inf/nan, '+', leading zeros */
} cjson_cfg;

static void cfg_defaults(cjson_cfg *c) {
    *c = (cjson_cfg){.sparse_convert = 0, .sparse_ratio = 2, .sparse_safe = 10, .enc_max_depth = 1000, .dec_max_depth = 1000, .enc_precision = 14, .enc_keep_buffer = 1, .enc_invalid = 0, .dec_invalid = 1};
}

static cjson_cfg *cfg_of(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

/* A long-running C call gives the VM's count hook a turn (our Lua's
 * lua_interruptcheck, deps/lua patch 0003), as if the script had run its
 * instructions: the busy check can then answer other clients -BUSY and
 * raise SCRIPT KILL's error here. */
static void hook_turn(lua_State *L) { lua_interruptcheck(L); }

/* ------------------------------------------------------------ encode */

/* The output buffer, allocated with the state's own allocator.  Invariant:
 * len <= cap <= ENC_MAX_OUTPUT; buf is NULL when cap is 0.  Owned by
 * l_encode's frame, which frees it whatever happens. */
typedef struct enc_state {
    lua_State *L;
    const cjson_cfg *cfg;
    lua_Alloc alloc;
    void *alloc_ud;
    char *buf;
    size_t len, cap;   /* bytes */
    size_t since_turn; /* bytes written since the hook's last turn */
    bool own_error;    /* the error is ours: l_encode adds the caller's position */
} enc_state;

/* Raise one of lua-cjson's encoding errors.  It is raised inside the
 * protected call, where the caller's position is not reachable; l_encode
 * prefixes it (own_error), as luaL_error in the caller's frame would. */
static void enc_fail(enc_state *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lua_pushvfstring(e->L, fmt, ap);
    va_end(ap);
    e->own_error = true;
    lua_error(e->L);
}

/* Make room for n more bytes (may move buf). */
static void enc_reserve(enc_state *e, size_t n) {
    if (e->cap - e->len >= n) return;
    if (n > ENC_MAX_OUTPUT - e->len) enc_fail(e, "Cannot serialise, output too large");
    size_t want = e->len + n;
    size_t cap = e->cap ? e->cap : 256;
    while (cap < want) cap = cap <= ENC_MAX_OUTPUT / 2 ? cap * 2 : ENC_MAX_OUTPUT;
    char *p = e->alloc(e->alloc_ud, e->buf, e->cap, cap);
    if (!p) { /* over the script heap's limit: Lua's own text for it */
        lua_pushliteral(e->L, "not enough memory");
        lua_error(e->L);
    }
    e->buf = p;
    e->cap = cap;
}

static void enc_release(enc_state *e) {
    if (e->buf) e->alloc(e->alloc_ud, e->buf, e->cap, 0);
    e->buf = NULL;
    e->len = e->cap = 0;
}

/* Count n bytes written; every HOOK_TURN_BYTES the hook gets a turn. */
static void enc_wrote(enc_state *e, size_t n) {
    e->since_turn += n;
    if (e->since_turn < HOOK_TURN_BYTES) return;
    e->since_turn = 0;
    hook_turn(e->L);
}

static void enc_put(enc_state *e, const char *p, size_t n) {
    enc_reserve(e, n);
    memcpy(e->buf + e->len, p, n);
    e->len += n;
    enc_wrote(e, n);
}

#define enc_lit(e, s) enc_put((e), (s), sizeof(s) - 1)

/* The JSON form of byte c into out (ENC_ESCAPE_MAX bytes); returns its
 * length.  lua-cjson escapes '/' and DEL too, and leaves bytes >= 0x80 as
 * they are (the input is not checked as UTF-8). */
static size_t escape_byte(unsigned char c, char *out) {
    static const char hex[] = "0123456789abcdef";
    const char *two = NULL;
    switch (c) {
        case '"': two = "\\\""; break;
        case '\\': two = "\\\\"; break;
        case '/': two = "\\/"; break;
        case '\b': two = "\\b"; break;
        case '\f': two = "\\f"; break;
        case '\n': two = "\\n"; break;
        case '\r': two = "\\r"; break;
        case '\t': two = "\\t"; break;
        default: break;
    }
    if (two) {
        memcpy(out, two, 2);
        return 2;
    }
    if (c >= 0x20 && c != 0x7f) {
        out[0] = (char)c;
        return 1;
    }
    memcpy(out, "\\u00", 4);
    out[4] = hex[c >> 4];
    out[5] = hex[c & 15];
    return 6;
}

/* A string in quotes, escaped ENC_STRING_CHUNK input bytes at a time: the
 * room reserved for a chunk is bounded (never len * 6, which could
 * overflow), and the hook gets its turns in a long string too. */
static void enc_string(enc_state *e, const char *s, size_t len) {
    enc_lit(e, "\"");
    for (size_t i = 0; i < len;) {
        size_t chunk = len - i < ENC_STRING_CHUNK ? len - i : ENC_STRING_CHUNK;
        enc_reserve(e, chunk * ENC_ESCAPE_MAX);
        char *out = e->buf + e->len;
        for (size_t j = 0; j < chunk; j++) out += escape_byte((unsigned char)s[i + j], out);
        size_t wrote = (size_t)(out - (e->buf + e->len));
        e->len += wrote;
        enc_wrote(e, wrote);
        i += chunk;
    }
    enc_lit(e, "\"");
}

static void enc_number(enc_state *e, lua_Number num) {
    if (isnan(num) || isinf(num)) {
        if (e->cfg->enc_invalid == 0) enc_fail(e, "Cannot serialise number: must not be NaN or Inf");
        if (e->cfg->enc_invalid == 2) {
            enc_lit(e, "null");
            return;
        }
        if (isnan(num)) { /* printf may say "-nan"; lua-cjson always writes nan */
            enc_lit(e, "nan");
            return;
        }
    }
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.*g", e->cfg->enc_precision, (double)num);
    enc_put(e, buf, (size_t)n);
}

static void enc_value(enc_state *e, int idx, int depth);

/* An integer key as lua-cjson holds it, in a C int: on x86-64 a key past
 * INT_MAX converts to INT_MIN, which makes the table an object (Redis
 * encodes {[2^31] = 1} as {"2147483648":1}); computed here without the
 * undefined conversion. */
static int key_as_int(double k) { return k < 2147483648.0 ? (int)k : INT32_MIN; }

/* The length of the table at idx if it is an array (all keys integers
 * >= 1: its largest key), 0 when empty, <= 0 for an object (see
 * key_as_int).  Too sparse an array is an error, or an object when the
 * config converts it.  The arithmetic is lua-cjson's, in 32-bit ints. */
static int array_length(enc_state *e, int idx) {
    lua_State *L = e->L;
    int max = 0, items = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        double k = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumber(L, -1) : 0;
        if (!(k >= 1 && floor(k) == k)) {
            lua_pop(L, 1);
            return -1;
        }
        if (k > max) max = key_as_int(k);
        items = (int)((unsigned)items + 1u);
        enc_wrote(e, 1); /* no output, but a long traversal still yields */
    }
    const cjson_cfg *c = e->cfg;
    int limit = (int)((unsigned)items * (unsigned)c->sparse_ratio); /* wraps as lua-cjson's */
    if (c->sparse_ratio > 0 && max > limit && max > c->sparse_safe) {
        if (!c->sparse_convert) enc_fail(e, "Cannot serialise table: excessively sparse array");
        return -1;
    }
    return max;
}

static void enc_array(enc_state *e, int t, int n, int depth) {
    enc_lit(e, "[");
    for (int i = 1; i <= n; i++) {
        if (i > 1) enc_lit(e, ",");
        lua_rawgeti(e->L, t, i);
        enc_value(e, lua_gettop(e->L), depth);
        lua_pop(e->L, 1);
    }
    enc_lit(e, "]");
}

static void enc_key(enc_state *e, int k) {
    lua_State *L = e->L;
    switch (lua_type(L, k)) {
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring(L, k, &len); /* a string already: lua_next is safe */
            enc_string(e, s, len);
            break;
        }
        case LUA_TNUMBER:
            enc_lit(e, "\"");
            enc_number(e, lua_tonumber(L, k));
            enc_lit(e, "\"");
            break;
        default: enc_fail(e, "Cannot serialise %s: table key must be a number or string", luaL_typename(L, k));
    }
}

static void enc_object(enc_state *e, int t, int depth) {
    lua_State *L = e->L;
    bool first = true;
    enc_lit(e, "{");
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (!first) enc_lit(e, ",");
        first = false;
        enc_key(e, lua_gettop(L) - 1);
        enc_lit(e, ":");
        enc_value(e, lua_gettop(L), depth);
        lua_pop(L, 1);
    }
    enc_lit(e, "}");
}

/* A table at nesting level depth (the outermost is 1).  Each level holds
 * up to 2 stack slots, so lua_checkstack bounds the C recursion whatever
 * encode_max_depth says. */
static void enc_table(enc_state *e, int t, int depth) {
    if (depth > e->cfg->enc_max_depth || !lua_checkstack(e->L, 3)) enc_fail(e, "Cannot serialise, excessive nesting (%d)", depth);
    int n = array_length(e, t);
    if (n > 0) enc_array(e, t, n, depth);
    else enc_object(e, t, depth);
}

/* The value at stack index idx (absolute), inside depth tables. */
static void enc_value(enc_state *e, int idx, int depth) {
    lua_State *L = e->L;
    switch (lua_type(L, idx)) {
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring(L, idx, &len);
            enc_string(e, s, len);
            break;
        }
        case LUA_TNUMBER: enc_number(e, lua_tonumber(L, idx)); break;
        case LUA_TBOOLEAN:
            if (lua_toboolean(L, idx)) enc_lit(e, "true");
            else enc_lit(e, "false");
            break;
        case LUA_TTABLE: enc_table(e, idx, depth + 1); break;
        case LUA_TNIL: enc_lit(e, "null"); break;
        case LUA_TLIGHTUSERDATA:
            if (lua_touserdata(L, idx) == NULL) { /* cjson.null */
                enc_lit(e, "null");
                break;
            }
            /* fallthrough */
        default: enc_fail(e, "Cannot serialise %s: type not supported", luaL_typename(L, idx));
    }
}

/* Under l_encode's lua_pcall: (state, value) -> the JSON text. */
static int encode_protected(lua_State *L) {
    enc_state *e = lua_touserdata(L, 1);
    enc_value(e, 2, 0);
    lua_pushlstring(L, e->buf, e->len);
    return 1;
}

static int l_encode(lua_State *L) {
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    enc_state e = {.L = L, .cfg = cfg_of(L)};
    e.alloc = lua_getallocf(L, &e.alloc_ud);
    lua_pushcfunction(L, encode_protected);
    lua_pushlightuserdata(L, &e);
    lua_pushvalue(L, 1);
    int rc = lua_pcall(L, 2, 1, 0);
    enc_release(&e);
    if (rc == 0) return 1;
    if (e.own_error) { /* the position a luaL_error here would have given */
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L); /* a memory error, or the hook's, passes unchanged */
}

/* ------------------------------------------------------------ decode */

typedef enum tok_type {
    T_OBJ_BEGIN,
    T_OBJ_END,
    T_ARR_BEGIN,
    T_ARR_END,
    T_STRING, /* its value is pushed on the Lua stack */
    T_NUMBER,
    T_BOOLEAN,
    T_NULL,
    T_COLON,
    T_COMMA,
    T_END,
    T_ERROR /* err says what */
} tok_type;

/* How lua-cjson names a token it did not expect. */
static const char *const tok_names[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_ERROR"};

typedef struct token {
    tok_type type;
    size_t index; /* 0-based offset reported in errors (+1) */
    lua_Number num;
    bool boolean;
    const char *err;
} token;

/* The input is a Lua string: s[len] is '\0', which ends it as lua-cjson's
 * NUL-terminated scan does (an embedded NUL ends the document). */
typedef struct dec_state {
    lua_State *L;
    const cjson_cfg *cfg;
    const char *s;
    size_t len, pos; /* bytes */
    int depth;
    size_t next_turn; /* pos at which the hook gets its next turn */
} dec_state;

static void set_error(token *t, size_t index, const char *err) {
    t->type = T_ERROR;
    t->index = index;
    t->err = err;
}

/* "Expected <what> but found <token> at character <n>". */
static void dec_fail(dec_state *d, const char *what, const token *t) {
    const char *found = t->type == T_ERROR ? t->err : tok_names[t->type];
    char at[24];
    snprintf(at, sizeof(at), "%zu", t->index + 1);
    luaL_error(d->L, "Expected %s but found %s at character %s", what, found, at);
}

/* Enter an array or object needing `slots` stack slots: the depth limit,
 * and the Lua stack's, which also bounds the C recursion. */
static void dec_descend(dec_state *d, int slots) {
    d->depth++;
    if (d->depth <= d->cfg->dec_max_depth && lua_checkstack(d->L, slots + STACK_HEADROOM)) return;
    char at[24];
    snprintf(at, sizeof(at), "%zu", d->pos);
    luaL_error(d->L, "Found too many nested data structures (%d) at character %s", d->depth, at);
}

/* Numbers lua-cjson calls invalid JSON: a leading '+', hex, a leading
 * zero followed by a digit, inf and nan (any case). */
static bool nonstandard_number(const char *p) {
    if (*p == '+') return true;
    if (*p == '-') p++;
    if (*p == '0') return (p[1] | 0x20) == 'x' || (p[1] >= '0' && p[1] <= '9');
    return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
}

/* A number as strtod reads it (what lua-cjson accepts, hex and inf/nan
 * included); the text stops at the terminating NUL at the latest. */
static void tok_number(dec_state *d, token *t) {
    const char *start = d->s + d->pos;
    char *end;
    double v = strtod(start, &end);
    if (end == start) {
        set_error(t, d->pos, "invalid number");
        return;
    }
    t->type = T_NUMBER;
    t->num = (lua_Number)v;
    d->pos += (size_t)(end - start);
}

static int hex4(const char *s, size_t len, size_t at) {
    if (at > len || len - at < 4) return -1;
    int v = 0;
    for (size_t i = at; i < at + 4; i++) {
        char c = s[i];
        int digit = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                                                            : -1;
        if (digit < 0) return -1;
        v = v * 16 + digit;
    }
    return v;
}

static size_t utf8_put(unsigned cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The \u escape at s[at] ('\\') as UTF-8 into out (4 bytes); a high
 * surrogate must be followed by a \u low surrogate, and a low one cannot
 * stand alone.  Returns the bytes written and sets *used, 0 if invalid. */
static size_t unicode_escape(const char *s, size_t len, size_t at, char *out, size_t *used) {
    int hi = hex4(s, len, at + 2);
    if (hi < 0 || (hi >= 0xdc00 && hi <= 0xdfff)) return 0;
    *used = 6;
    if (hi < 0xd800 || hi > 0xdbff) return utf8_put((unsigned)hi, out);
    if (len - at < 8 || s[at + 6] != '\\' || s[at + 7] != 'u') return 0;
    int lo = hex4(s, len, at + 8);
    if (lo < 0xdc00 || lo > 0xdfff) return 0;
    *used = 12;
    return utf8_put(0x10000 + (((unsigned)hi - 0xd800) << 10) + ((unsigned)lo - 0xdc00), out);
}

/* The escape at s[at] ('\\') into out; sets *used.  Returns the bytes
 * written, or 0 with *err set. */
static size_t escape_seq(const char *s, size_t len, size_t at, char *out, size_t *used, const char **err) {
    char c = at + 1 < len ? s[at + 1] : '\0';
    *used = 2;
    switch (c) {
        case '"':
        case '\\':
        case '/': out[0] = c; return 1;
        case 'b': out[0] = '\b'; return 1;
        case 'f': out[0] = '\f'; return 1;
        case 'n': out[0] = '\n'; return 1;
        case 'r': out[0] = '\r'; return 1;
        case 't': out[0] = '\t'; return 1;
        case 'u': {
            size_t n = unicode_escape(s, len, at, out, used);
            if (!n) *err = "invalid unicode escape code";
            return n;
        }
        default: *err = "invalid escape code"; return 0;
    }
}

static bool plain_string_byte(char c) { return c != '"' && c != '\\' && c != '\0'; }

static void buf_add(luaL_Buffer *b, const char *p, size_t n) {
    if (n <= LUAL_BUFFERSIZE) {
        luaL_addlstring(b, p, n);
        return;
    }
    lua_pushlstring(b->L, p, n); /* a long run in one piece */
    luaL_addvalue(b);
}

/* The rest of a string with escapes, from s[i]: built in a luaL_Buffer
 * (pushed on success; on an error the partial result is dropped). */
static void tok_string_escaped(dec_state *d, token *t, size_t i) {
    luaL_Buffer b;
    luaL_buffinit(d->L, &b);
    const char *err = NULL;
    t->type = T_STRING;
    for (;;) {
        size_t run = i;
        while (run < d->len && plain_string_byte(d->s[run])) run++;
        buf_add(&b, d->s + i, run - i);
        if (run >= d->next_turn) {
            hook_turn(d->L);
            d->next_turn = run + HOOK_TURN_BYTES;
        }
        i = run;
        if (i >= d->len || d->s[i] == '\0') {
            set_error(t, i, "unexpected end of string");
            break;
        }
        if (d->s[i] == '"') break;
        char out[4];
        size_t used = 0, n = escape_seq(d->s, d->len, i, out, &used, &err);
        if (!n) {
            set_error(t, i, err);
            break;
        }
        luaL_addlstring(&b, out, n);
        i += used;
    }
    luaL_pushresult(&b);
    if (t->type == T_ERROR) {
        lua_pop(d->L, 1);
        return;
    }
    d->pos = i + 1;
}

/* A string token (d->pos at its quote): its value is pushed.  Without
 * escapes, straight from the input. */
static void tok_string(dec_state *d, token *t) {
    size_t start = d->pos + 1, i = start;
    while (i < d->len && plain_string_byte(d->s[i])) i++;
    if (i < d->len && d->s[i] == '"') {
        lua_pushlstring(d->L, d->s + start, i - start);
        t->type = T_STRING;
        d->pos = i + 1;
        return;
    }
    tok_string_escaped(d, t, start);
}

static bool match_word(dec_state *d, const char *w, size_t n) {
    return d->len - d->pos >= n && memcmp(d->s + d->pos, w, n) == 0;
}

/* Anything else: true/false/null, or a nonstandard number if allowed. */
static void tok_word(dec_state *d, token *t) {
    if (match_word(d, "true", 4) || match_word(d, "false", 5)) {
        t->type = T_BOOLEAN;
        t->boolean = d->s[d->pos] == 't';
        d->pos += t->boolean ? 4 : 5;
    } else if (match_word(d, "null", 4)) {
        t->type = T_NULL;
        d->pos += 4;
    } else if (d->cfg->dec_invalid && nonstandard_number(d->s + d->pos)) {
        tok_number(d, t);
    } else {
        set_error(t, d->pos, "invalid token");
    }
}

static bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void next_token(dec_state *d, token *t) {
    if (d->pos >= d->next_turn) {
        hook_turn(d->L);
        d->next_turn = d->pos + HOOK_TURN_BYTES;
    }
    while (d->pos < d->len && is_json_space(d->s[d->pos])) d->pos++;
    t->index = d->pos;
    t->err = NULL;
    char c = d->pos < d->len ? d->s[d->pos] : '\0';
    static const char single[] = "{}[]:,";
    static const tok_type single_type[] = {T_OBJ_BEGIN, T_OBJ_END, T_ARR_BEGIN, T_ARR_END, T_COLON, T_COMMA};
    const char *one = c ? strchr(single, c) : NULL;
    if (c == '\0') {
        t->type = T_END;
    } else if (one) {
        t->type = single_type[one - single];
        d->pos++;
    } else if (c == '"') {
        tok_string(d, t);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (!d->cfg->dec_invalid && nonstandard_number(d->s + d->pos)) set_error(t, d->pos, "invalid number");
        else tok_number(d, t);
    } else {
        tok_word(d, t);
    }
}

static void parse_value(dec_state *d, const token *t);

static void parse_object(dec_state *d) {
    token t;
    dec_descend(d, 3);
    lua_newtable(d->L);
    next_token(d, &t);
    if (t.type == T_OBJ_END) {
        d->depth--;
        return;
    }
    for (;;) {
        if (t.type != T_STRING) dec_fail(d, "object key string", &t);
        next_token(d, &t);
        if (t.type != T_COLON) dec_fail(d, "colon", &t);
        next_token(d, &t);
        parse_value(d, &t);
        lua_rawset(d->L, -3);
        next_token(d, &t);
        if (t.type == T_OBJ_END) break;
        if (t.type != T_COMMA) dec_fail(d, "comma or object end", &t);
        next_token(d, &t);
    }
    d->depth--;
}

static void parse_array(dec_state *d) {
    token t;
    dec_descend(d, 2);
    lua_newtable(d->L);
    next_token(d, &t);
    if (t.type == T_ARR_END) {
        d->depth--;
        return;
    }
    for (double i = 1;; i++) {
        parse_value(d, &t);
        if (i <= INT32_MAX) {
            lua_rawseti(d->L, -2, (int)i);
        } else {
            lua_pushnumber(d->L, (lua_Number)i);
            lua_insert(d->L, -2);
            lua_rawset(d->L, -3);
        }
        next_token(d, &t);
        if (t.type == T_ARR_END) break;
        if (t.type != T_COMMA) dec_fail(d, "comma or array end", &t);
        next_token(d, &t);
    }
    d->depth--;
}

/* Push the value token t starts (a string's is on the stack already). */
static void parse_value(dec_state *d, const token *t) {
    switch (t->type) {
        case T_STRING: break;
        case T_NUMBER: lua_pushnumber(d->L, t->num); break;
        case T_BOOLEAN: lua_pushboolean(d->L, t->boolean); break;
        case T_NULL: lua_pushlightuserdata(d->L, NULL); break;
        case T_OBJ_BEGIN: parse_object(d); break;
        case T_ARR_BEGIN: parse_array(d); break;
        default: dec_fail(d, "value", t);
    }
}

static int l_decode(lua_State *L) {
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    dec_state d = {.L = L, .cfg = cfg_of(L), .next_turn = HOOK_TURN_BYTES};
    d.s = luaL_checklstring(L, 1, &d.len);
    /* A NUL among the first two bytes: UTF-16/32 text, as lua-cjson says */
    if (d.len >= 2 && (!d.s[0] || !d.s[1])) return luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
    token t;
    next_token(&d, &t);
    parse_value(&d, &t);
    next_token(&d, &t);
    if (t.type != T_END) dec_fail(&d, "the end", &t);
    return 1;
}

/* ------------------------------------------------------------ settings */

/* lua-cjson's setting functions take up to n arguments (nil or absent:
 * unchanged) and return the settings' values. */
static void setting_args(lua_State *L, int n) {
    luaL_argcheck(L, lua_gettop(L) <= n, n + 1, "found too many arguments");
    lua_settop(L, n);
}

/* An integer setting.  As lua-cjson does, the value is taken as a C int
 * and a value out of range is blamed on argument #1 whatever its place. */
static void int_setting(lua_State *L, int idx, int *setting, int min, int max) {
    if (!lua_isnil(L, idx)) {
        int v = (int)luaL_checkinteger(L, idx);
        if (v < min || v > max) {
            char msg[64];
            snprintf(msg, sizeof(msg), "expected integer between %d and %d", min, max);
            luaL_argerror(L, 1, msg);
        }
        *setting = v;
    }
    lua_pushinteger(L, *setting);
}

/* An option setting: a boolean (false 0, true 1) or one of the names;
 * reported as a boolean when 0 or 1, else by its name. */
static void enum_setting(lua_State *L, int idx, int *setting, const char *const names[]) {
    if (!lua_isnil(L, idx)) {
        if (lua_isboolean(L, idx)) *setting = lua_toboolean(L, idx);
        else *setting = luaL_checkoption(L, idx, NULL, names);
    }
    if (*setting <= 1) lua_pushboolean(L, *setting);
    else lua_pushstring(L, names[*setting]);
}

static const char *const onoff[] = {"off", "on", NULL};

static int l_encode_sparse_array(lua_State *L) {
    cjson_cfg *c = cfg_of(L);
    setting_args(L, 3);
    enum_setting(L, 1, &c->sparse_convert, onoff);
    int_setting(L, 2, &c->sparse_ratio, 0, INT32_MAX);
    int_setting(L, 3, &c->sparse_safe, 0, INT32_MAX);
    return 3;
}

static int l_encode_max_depth(lua_State *L) {
    setting_args(L, 1);
    int_setting(L, 1, &cfg_of(L)->enc_max_depth, 1, INT32_MAX);
    return 1;
}

static int l_decode_max_depth(lua_State *L) {
    setting_args(L, 1);
    int_setting(L, 1, &cfg_of(L)->dec_max_depth, 1, INT32_MAX);
    return 1;
}

static int l_encode_number_precision(lua_State *L) {
    setting_args(L, 1);
    int_setting(L, 1, &cfg_of(L)->enc_precision, 1, 14);
    return 1;
}

static int l_encode_keep_buffer(lua_State *L) {
    setting_args(L, 1);
    enum_setting(L, 1, &cfg_of(L)->enc_keep_buffer, onoff);
    return 1;
}

static int l_encode_invalid_numbers(lua_State *L) {
    static const char *const names[] = {"off", "on", "null", NULL};
    setting_args(L, 1);
    enum_setting(L, 1, &cfg_of(L)->enc_invalid, names);
    return 1;
}

static int l_decode_invalid_numbers(lua_State *L) {
    setting_args(L, 1);
    enum_setting(L, 1, &cfg_of(L)->dec_invalid, onoff);
    return 1;
}

/* ------------------------------------------------------------ the table */

static void push_instance(lua_State *L);

/* cjson.new(): another cjson table with settings of its own. */
static int l_new(lua_State *L) {
    push_instance(L);
    return 1;
}

/* A cjson table: each function gets the new settings as its upvalue. */
static void push_instance(lua_State *L) {
    static const luaL_Reg fns[] = {{"encode", l_encode}, {"decode", l_decode}, {"encode_sparse_array", l_encode_sparse_array}, {"encode_max_depth", l_encode_max_depth}, {"decode_max_depth", l_decode_max_depth}, {"encode_number_precision", l_encode_number_precision}, {"encode_keep_buffer", l_encode_keep_buffer}, {"encode_invalid_numbers", l_encode_invalid_numbers}, {"decode_invalid_numbers", l_decode_invalid_numbers}, {"new", l_new}, {NULL, NULL}};
    lua_newtable(L);
    cfg_defaults(lua_newuserdata(L, sizeof(cjson_cfg)));
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushvalue(L, -1);
        lua_pushcclosure(L, f->func, 1);
        lua_setfield(L, -3, f->name);
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushliteral(L, "cjson");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "2.1.0"); /* the version Redis 7.0 reports */
    lua_setfield(L, -2, "_VERSION");
}

int slua_open_cjson(lua_State *L) {
    push_instance(L);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "cjson");
    return 1;
}
