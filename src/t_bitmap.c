/* t_bitmap.c: bit commands on string values (SETBIT, GETBIT, BITCOUNT,
 * BITPOS, BITOP, BITFIELD, BITFIELD_RO).
 *
 * A bitmap is an ordinary string: bit 0 is the most significant bit of
 * byte 0.  Reads treat missing bytes as zeros; writes grow the string with
 * zeros first, never past proto-max-bulk-len (offsets are checked against
 * it before anything is allocated).  Argument checking follows Redis 7.0
 * step by step, including where it looks the key up before parsing the
 * rest (BITCOUNT), so errors match.  Callers: the command table. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "commands.h"
#include "keyspace.h"
#include "notify.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

#define ERR_BIT_OFFSET "bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "bit is not an integer or out of range"
#define ERR_BITFIELD_TYPE \
    "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

/* ------------------------------------------------------------ helpers */

/* Parse a bit offset.  With `hash`, "#n" means n * bits (BITFIELD's typed
 * offsets).  The byte the offset falls in must be below proto-max-bulk-len. */
static bool bit_offset_or_reply(client_t *c, robj *arg, bool hash, int bits, uint64_t *out) {
    const char *p = arg->ptr;
    size_t len = sds_len(arg->ptr);
    bool usehash = hash && len > 1 && p[0] == '#';
    long long v;
    if (!util_str2ll(p + usehash, len - usehash, &v)) goto err;
    if (usehash && __builtin_mul_overflow(v, (long long)bits, &v)) goto err;
    if (v < 0 || (v >> 3) >= c->srv->cfg.proto_max_bulk_len) goto err;
    *out = (uint64_t)v;
    return true;
err:
    reply_error(c, ERR_BIT_OFFSET);
    return false;
}

/* Bytes of a string value for reading (INT values are printed into buf). */
static const unsigned char *bytes_of(const robj *o, char *buf, size_t bufsize, size_t *len) {
    return (const unsigned char *)obj_string_view(o, buf, bufsize, len);
}

/* The string at argv[1] made writable and at least maxbit/8+1 bytes long,
 * created when missing.  NULL after a WRONGTYPE reply.  *grown tells
 * whether the key was created or extended (the write changed it even if no
 * bit flips), *created whether db_add made it (and so already signalled it
 * and counted one change).  Making an existing value private signals
 * nothing: a write that flips no bit is no change (Redis 7.0's dirty). */
static robj *writable_bitmap_or_reply(client_t *c, uint64_t maxbit, bool *grown, bool *created) {
    size_t need = (size_t)(maxbit >> 3) + 1;
    robj *key = c->argv[1];
    robj *o = db_lookup_write(c->db, key);
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return NULL;
    *created = o == NULL;
    if (!o) {
        o = obj_create_from_sds(sds_newlen(NULL, need));
        db_add(c->db, key, o);
        *grown = true;
        return o;
    }
    robj *w = db_unshare_string(c->db, key, o);
    size_t old = sds_len(w->ptr);
    w->ptr = sds_growzero(w->ptr, need);
    *grown = sds_len(w->ptr) != old;
    return w;
}

/* changes writes to key (at least one): signalled once, counted each, as
 * Redis's server.dirty += changes; a key db_add created is signalled and
 * counted once already. */
static void bitmap_changed(client_t *c, bool created, long long changes) {
    if (!created) db_signal_modified(c->db, c->argv[1]);
    c->srv->dirty += changes - 1;
    notify_keyspace_event(c->srv, NOTIFY_STRING, "setbit", c->argv[1], c->db->id);
}

static long long popcount(const unsigned char *p, size_t n) {
    long long total = 0;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        total += __builtin_popcountll(w);
        p += 8;
        n -= 8;
    }
    while (n--) total += __builtin_popcount(*p++);
    return total;
}

/* Resolve [start, end] (negative from the end) over a length of total
 * units, clamped as Redis does.  False when the range is empty. */
static bool clamp_range(long long *start, long long *end, long long total) {
    if (*start < 0) *start += total;
    if (*end < 0) *end += total;
    if (*start < 0) *start = 0;
    if (*end < 0) *end = 0;
    if (*end >= total) *end = total - 1;
    return *start <= *end;
}

static bool parse_unit_or_reply(client_t *c, robj *arg, bool *isbit) {
    if (!strcasecmp(arg->ptr, "bit")) *isbit = true;
    else if (!strcasecmp(arg->ptr, "byte")) *isbit = false;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return false;
    }
    return true;
}

static inline int bit_at(const unsigned char *p, uint64_t i) { return (p[i >> 3] >> (7 - (i & 7))) & 1; }

/* ------------------------------------------------------------ SETBIT / GETBIT */

static void cmd_setbit(client_t *c) {
    uint64_t off;
    long long on;
    if (!bit_offset_or_reply(c, c->argv[2], false, 0, &off)) return;
    if (!cmd_get_ll_or_reply(c, c->argv[3], &on, ERR_BIT_VALUE)) return;
    if (on & ~1LL) {
        reply_error(c, ERR_BIT_VALUE);
        return;
    }
    bool grown, created;
    robj *o = writable_bitmap_or_reply(c, off, &grown, &created);
    if (!o) return;
    unsigned char *p = (unsigned char *)o->ptr + (off >> 3);
    int shift = 7 - (int)(off & 7);
    int old = (*p >> shift) & 1;
    *p = (unsigned char)((*p & ~(1 << shift)) | (on << shift));
    if (grown || old != on) bitmap_changed(c, created, 1);
    reply_ll(c, old);
}

static void cmd_getbit(client_t *c) {
    uint64_t off;
    if (!bit_offset_or_reply(c, c->argv[2], false, 0, &off)) return;
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    char buf[32];
    size_t len;
    const unsigned char *p = bytes_of(o, buf, sizeof(buf), &len);
    reply_ll(c, (off >> 3) < len ? bit_at(p, off) : 0);
}

/* ------------------------------------------------------------ BITCOUNT */

static void cmd_bitcount(client_t *c) {
    /* Redis 7.4 parses the arguments before it looks the key up (7.0 the
     * other way round: a missing key answered 0 whatever followed). */
    if (c->argc != 2 && c->argc != 4 && c->argc != 5) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    long long start = 0, end = -1;
    bool isbit = false;
    if (c->argc >= 4) {
        if (!cmd_get_ll_or_reply(c, c->argv[2], &start, NULL) || !cmd_get_ll_or_reply(c, c->argv[3], &end, NULL))
            return;
        if (c->argc == 5 && !parse_unit_or_reply(c, c->argv[4], &isbit)) return;
    }
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    char buf[32];
    size_t len;
    const unsigned char *p = bytes_of(o, buf, sizeof(buf), &len);
    if (c->argc == 2) {
        reply_ll(c, popcount(p, len));
        return;
    }
    if (start < 0 && end < 0 && start > end) {
        reply_ll(c, 0);
        return;
    }
    long long total = isbit ? (long long)len * 8 : (long long)len;
    if (!clamp_range(&start, &end, total)) {
        reply_ll(c, 0);
        return;
    }
    if (!isbit) {
        reply_ll(c, popcount(p + start, (size_t)(end - start + 1)));
        return;
    }
    /* Whole bytes from start/8 to end/8, minus the bits outside the range
     * in the first and the last byte. */
    long long sb = start >> 3, eb = end >> 3;
    long long n = popcount(p + sb, (size_t)(eb - sb + 1));
    unsigned head = (0xFFu << (8 - (start & 7))) & 0xFF; /* bits before start */
    unsigned tail = (1u << (7 - (end & 7))) - 1;         /* bits after end */
    n -= __builtin_popcount(p[sb] & head) + __builtin_popcount(p[eb] & tail);
    reply_ll(c, n);
}

/* ------------------------------------------------------------ BITPOS */

/* First bit equal to `bit` in bit positions [from, to], or -1. */
static long long find_bit(const unsigned char *p, uint64_t from, uint64_t to, int bit) {
    uint64_t i = from;
    unsigned char skip = bit ? 0x00 : 0xFF; /* bytes that cannot hold a match */
    while (i <= to) {
        if ((i & 7) == 0 && i + 7 <= to) {
            /* Whole bytes: skip 8 at a time, words where possible. */
            while (i + 64 <= to + 1) {
                uint64_t w;
                memcpy(&w, p + (i >> 3), 8);
                if (w != (bit ? 0 : UINT64_MAX)) break;
                i += 64;
            }
            while (i + 7 <= to && p[i >> 3] == skip) i += 8;
            if (i > to) break;
        }
        if (bit_at(p, i) == bit) return (long long)i;
        i++;
    }
    return -1;
}

static void cmd_bitpos(client_t *c) {
    long long bit;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &bit, NULL)) return;
    if (bit != 0 && bit != 1) {
        reply_error(c, "The bit argument must be 1 or 0.");
        return;
    }
    /* Redis 7.4 parses the range before it looks the key up. */
    if (c->argc > 6) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    long long start = 0, end = 0;
    bool isbit = false, end_given = false;
    if (c->argc >= 4) {
        if (!cmd_get_ll_or_reply(c, c->argv[3], &start, NULL)) return;
        if (c->argc == 6 && !parse_unit_or_reply(c, c->argv[5], &isbit)) return;
        if (c->argc >= 5) {
            if (!cmd_get_ll_or_reply(c, c->argv[4], &end, NULL)) return;
            end_given = true;
        }
    }
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        /* A missing key is an endless run of zeros. */
        reply_ll(c, bit ? -1 : 0);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    char buf[32];
    size_t len;
    const unsigned char *p = bytes_of(o, buf, sizeof(buf), &len);
    if (!end_given) end = isbit ? (long long)len * 8 + 7 : (long long)len - 1;
    long long total = isbit ? (long long)len * 8 : (long long)len;
    if (!clamp_range(&start, &end, total)) {
        reply_ll(c, -1); /* an empty range holds neither a 0 nor a 1 */
        return;
    }
    uint64_t from = isbit ? (uint64_t)start : (uint64_t)start * 8;
    uint64_t to = isbit ? (uint64_t)end : (uint64_t)end * 8 + 7;
    long long pos = find_bit(p, from, to, (int)bit);
    /* Looking for a 0 past an open-ended range: the string continues with
     * zeros, so the answer is the first bit after it. */
    if (pos < 0 && bit == 0 && !end_given) pos = (long long)to + 1;
    reply_ll(c, pos);
}

/* ------------------------------------------------------------ BITOP */

enum { BITOP_AND,
       BITOP_OR,
       BITOP_XOR,
       BITOP_NOT };

static void cmd_bitop(client_t *c) {
    const char *name = c->argv[1]->ptr;
    int op;
    if (!strcasecmp(name, "and")) op = BITOP_AND;
    else if (!strcasecmp(name, "or")) op = BITOP_OR;
    else if (!strcasecmp(name, "xor")) op = BITOP_XOR;
    else if (!strcasecmp(name, "not")) op = BITOP_NOT;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && c->argc != 4) {
        reply_error(c, "BITOP NOT must be called with a single source key.");
        return;
    }
    int n = c->argc - 3;
    const unsigned char **src = zcalloc(sizeof(*src) * (size_t)n);
    size_t *lens = zcalloc(sizeof(*lens) * (size_t)n);
    char(*bufs)[32] = zmalloc(sizeof(*bufs) * (size_t)n);
    size_t maxlen = 0;
    for (int j = 0; j < n; j++) {
        robj *o = db_lookup_read(c->db, c->argv[j + 3], LOOKUP_NONE);
        if (!o) continue; /* a missing key is an empty string */
        if (!db_check_type_or_reply(c, o, OBJ_STRING)) goto done;
        src[j] = bytes_of(o, bufs[j], sizeof(bufs[j]), &lens[j]);
        if (lens[j] > maxlen) maxlen = lens[j];
    }
    robj *dst = c->argv[2];
    if (maxlen) {
        sds res = sds_newlen(NULL, maxlen);
        unsigned char *r = (unsigned char *)res;
        for (size_t i = 0; i < maxlen; i++) {
            unsigned char v = i < lens[0] ? src[0][i] : 0;
            if (op == BITOP_NOT) v = (unsigned char)~v;
            for (int j = 1; j < n; j++) {
                unsigned char b = i < lens[j] ? src[j][i] : 0;
                if (op == BITOP_AND) v &= b;
                else if (op == BITOP_OR) v |= b;
                else v ^= b;
            }
            r[i] = v;
        }
        /* The result may alias a source (BITOP AND a a b): it is built in
         * its own buffer before the destination is replaced. */
        db_set_key(c->db, dst, obj_create_from_sds(res), false);
        notify_keyspace_event(c->srv, NOTIFY_STRING, "set", dst, c->db->id);
    } else if (db_delete(c->db, dst)) {
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", dst, c->db->id);
    }
    reply_ll(c, (long long)maxlen);
done:
    zfree(src);
    zfree(lens);
    zfree(bufs);
}

/* ------------------------------------------------------------ BITFIELD */

enum { BF_GET,
       BF_SET,
       BF_INCRBY };
enum { BF_WRAP,
       BF_SAT,
       BF_FAIL };

typedef struct bf_op {
    uint64_t offset; /* bits */
    long long value; /* SET value or INCRBY increment */
    int opcode;      /* BF_* */
    int overflow;    /* BF_WRAP, BF_SAT, BF_FAIL as in force for this op */
    int bits;        /* 1..64 signed, 1..63 unsigned */
    bool sign;
} bf_op_t;

static uint64_t bf_get_raw(const unsigned char *p, uint64_t off, int bits) {
    uint64_t v = 0;
    for (int i = 0; i < bits; i++) v = (v << 1) | (uint64_t)bit_at(p, off + (uint64_t)i);
    return v;
}

static void bf_set_raw(unsigned char *p, uint64_t off, int bits, uint64_t v) {
    for (int i = 0; i < bits; i++) {
        uint64_t pos = off + (uint64_t)i;
        int b = (int)((v >> (bits - 1 - i)) & 1);
        int shift = 7 - (int)(pos & 7);
        p[pos >> 3] = (unsigned char)((p[pos >> 3] & ~(1 << shift)) | (b << shift));
    }
}

/* The low `bits` of v as a two's complement number. */
static long long bf_sign_extend(uint64_t v, int bits) {
    if (bits == 64) return (long long)v;
    v &= (1ULL << bits) - 1;
    if (v & (1ULL << (bits - 1))) v |= ~0ULL << bits;
    return (long long)v;
}

/* value + incr for a signed field of `bits`: true when it overflows, with
 * *res set to what WRAP or SAT store (FAIL stores nothing). */
static bool bf_signed_add(long long value, long long incr, int bits, int mode, long long *res) {
    __int128 max = bits == 64 ? (__int128)INT64_MAX : (((__int128)1 << (bits - 1)) - 1);
    __int128 min = -max - 1;
    __int128 sum = (__int128)value + incr;
    if (sum >= min && sum <= max) {
        *res = (long long)sum;
        return false;
    }
    if (mode == BF_SAT) *res = sum > max ? (long long)max : (long long)min;
    else *res = bf_sign_extend((uint64_t)value + (uint64_t)incr, bits);
    return true;
}

/* Same for an unsigned field: value is the field (or a SET value taken as
 * unsigned, so negative SET values are above the maximum). */
static bool bf_unsigned_add(uint64_t value, long long incr, int bits, int mode, uint64_t *res) {
    uint64_t max = (1ULL << bits) - 1; /* bits <= 63 */
    __int128 sum = (__int128)value + incr;
    if (sum >= 0 && sum <= (__int128)max) {
        *res = (uint64_t)sum;
        return false;
    }
    if (mode == BF_SAT) *res = sum > (__int128)max ? max : 0;
    else *res = (value + (uint64_t)incr) & max;
    return true;
}

static bool bf_type_or_reply(client_t *c, robj *arg, bool *sign, int *bits) {
    const char *p = arg->ptr;
    long long n;
    if (p[0] == 'i') *sign = true;
    else if (p[0] == 'u') *sign = false;
    else goto err;
    if (!util_str2ll(p + 1, strlen(p + 1), &n) || n < 1 || n > (*sign ? 64 : 63)) goto err;
    *bits = (int)n;
    return true;
err:
    reply_error(c, ERR_BITFIELD_TYPE);
    return false;
}

/* Parse every operation before touching the key.  NULL after replying. */
static bf_op_t *bf_parse_or_reply(client_t *c, int *nops, bool *readonly, uint64_t *maxbit) {
    bf_op_t *ops = zmalloc(sizeof(*ops) * (size_t)(c->argc / 2 + 1));
    int n = 0, mode = BF_WRAP;
    *readonly = true;
    *maxbit = 0;
    for (int j = 2; j < c->argc; j++) {
        int rem = c->argc - j - 1;
        const char *sub = c->argv[j]->ptr;
        int opcode;
        if (!strcasecmp(sub, "get") && rem >= 2) opcode = BF_GET;
        else if (!strcasecmp(sub, "set") && rem >= 3) opcode = BF_SET;
        else if (!strcasecmp(sub, "incrby") && rem >= 3) opcode = BF_INCRBY;
        else if (!strcasecmp(sub, "overflow") && rem >= 1) {
            const char *m = c->argv[++j]->ptr;
            if (!strcasecmp(m, "wrap")) mode = BF_WRAP;
            else if (!strcasecmp(m, "sat")) mode = BF_SAT;
            else if (!strcasecmp(m, "fail")) mode = BF_FAIL;
            else {
                reply_error(c, "Invalid OVERFLOW type specified");
                goto err;
            }
            continue;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            goto err;
        }
        bf_op_t *op = &ops[n];
        op->opcode = opcode;
        op->overflow = mode;
        op->value = 0;
        if (!bf_type_or_reply(c, c->argv[j + 1], &op->sign, &op->bits)) goto err;
        if (!bit_offset_or_reply(c, c->argv[j + 2], true, op->bits, &op->offset)) goto err;
        if (opcode != BF_GET) {
            *readonly = false;
            uint64_t last = op->offset + (uint64_t)op->bits - 1;
            if (last > *maxbit) *maxbit = last;
            if (!cmd_get_ll_or_reply(c, c->argv[j + 3], &op->value, NULL)) goto err;
        }
        n++;
        j += opcode == BF_GET ? 2 : 3;
    }
    *nops = n;
    return ops;
err:
    zfree(ops);
    return NULL;
}

/* One SET or INCRBY on the writable string o; replies its result.  True
 * when the field's value changed. */
static bool bf_write(client_t *c, robj *o, const bf_op_t *op) {
    unsigned char *p = (unsigned char *)o->ptr;
    uint64_t raw = bf_get_raw(p, op->offset, op->bits);
    bool overflow;
    long long reply;
    uint64_t store;
    if (op->sign) {
        long long old = bf_sign_extend(raw, op->bits), nv;
        if (op->opcode == BF_INCRBY) {
            overflow = bf_signed_add(old, op->value, op->bits, op->overflow, &nv);
            reply = nv;
        } else {
            overflow = bf_signed_add(op->value, 0, op->bits, op->overflow, &nv);
            reply = old;
        }
        store = (uint64_t)nv;
    } else {
        uint64_t nv;
        if (op->opcode == BF_INCRBY) {
            overflow = bf_unsigned_add(raw, op->value, op->bits, op->overflow, &nv);
            reply = (long long)nv;
        } else {
            overflow = bf_unsigned_add((uint64_t)op->value, 0, op->bits, op->overflow, &nv);
            reply = (long long)raw;
        }
        store = nv;
    }
    if (overflow && op->overflow == BF_FAIL) {
        reply_null(c);
        return false;
    }
    reply_ll(c, reply);
    uint64_t mask = op->bits == 64 ? UINT64_MAX : (1ULL << op->bits) - 1;
    bf_set_raw(p, op->offset, op->bits, store & mask);
    return (store & mask) != raw;
}

static void bf_read(client_t *c, robj *o, const bf_op_t *op) {
    /* Up to 9 bytes around the field, zero-padded past the string. */
    unsigned char win[9] = {0};
    if (o) {
        char buf[32];
        size_t len;
        const unsigned char *p = bytes_of(o, buf, sizeof(buf), &len);
        uint64_t byte = op->offset >> 3;
        for (uint64_t i = 0; i < 9 && byte + i < len; i++) win[i] = p[byte + i];
    }
    uint64_t raw = bf_get_raw(win, op->offset & 7, op->bits);
    reply_ll(c, op->sign ? bf_sign_extend(raw, op->bits) : (long long)raw);
}

static void bitfield_generic(client_t *c, bool ro_command) {
    int nops;
    bool readonly;
    uint64_t maxbit;
    bf_op_t *ops = bf_parse_or_reply(c, &nops, &readonly, &maxbit);
    if (!ops) return;
    robj *o;
    bool grown = false, created = false;
    if (readonly) {
        o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
        if (o && !db_check_type_or_reply(c, o, OBJ_STRING)) goto done;
    } else {
        if (ro_command) {
            reply_error(c, "BITFIELD_RO only supports the GET subcommand");
            goto done;
        }
        o = writable_bitmap_or_reply(c, maxbit, &grown, &created);
        if (!o) goto done;
    }
    reply_array_len(c, nops);
    long long changes = 0;
    for (int j = 0; j < nops; j++) {
        if (ops[j].opcode == BF_GET) bf_read(c, o, &ops[j]);
        else if (bf_write(c, o, &ops[j]) || grown) changes++;
    }
    if (changes) bitmap_changed(c, created, changes);
done:
    zfree(ops);
}

static void cmd_bitfield(client_t *c) { bitfield_generic(c, false); }
static void cmd_bitfield_ro(client_t *c) { bitfield_generic(c, true); }

command_t bitmap_commands[] = {
    {"setbit", cmd_setbit, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "bitmap", "Sets or clears the bit at offset in the string value stored at key", "2.2.0", NULL},
    {"getbit", cmd_getbit, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "bitmap", "Returns the bit value at offset in the string value stored at key", "2.2.0", NULL},
    {"bitcount", cmd_bitcount, -2, CMD_READONLY, 1, 1, 1, "bitmap", "Count set bits in a string", "2.6.0", NULL},
    {"bitpos", cmd_bitpos, -3, CMD_READONLY, 1, 1, 1, "bitmap", "Find first bit set or clear in a string", "2.8.7", NULL},
    {"bitop", cmd_bitop, -4, CMD_WRITE | CMD_DENYOOM, 2, -1, 1, "bitmap", "Perform bitwise operations between strings", "2.6.0", NULL},
    {"bitfield", cmd_bitfield, -2, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "bitmap", "Perform arbitrary bitfield integer operations on strings", "3.2.0", NULL},
    {"bitfield_ro", cmd_bitfield_ro, -2, CMD_READONLY | CMD_FAST, 1, 1, 1, "bitmap", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0", NULL},
    {0},
};
