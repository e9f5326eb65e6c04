/* rdb_save.c: the RDB writer (see rdb.h).
 *
 * Only types that Redis 7.0 (RDB version 10) loads are written: strings
 * (type 0; integers in 8/16/32-bit form, LZF above 20 bytes when
 * compressing); the compact encodings as the blobs Redis itself writes,
 * since our listpack and intset layouts are Redis's (hash listpack 16, zset
 * listpack 17, lists as QUICKLIST_2 of listpack nodes 18, intset 11), so
 * loading adopts them without rebuilding; listpack sets as plain sets (2:
 * their own type 20 is newer than version 10); the dict and skiplist
 * encodings as plain field/value lists (4), member lists (2) and members
 * with binary scores (5); streams as 19 (rdb_stream.c).  Newer types only
 * where 7.0's would lose data, and the file or payload then says the
 * version that has them: 21 for streams whose consumers have active times
 * (version 11, Redis 7.2), 24/25 for hashes with field TTLs (version 12,
 * Redis 7.4); in such a file every stream is a 21, as Redis 7.2+ writes
 * them.  Called from persist.c in the main process (SAVE,
 * SHUTDOWN) or in a forked child (BGSAVE); it only reads the dataset and
 * never allocates on the dataset's behalf. */
#include "rdb.h"
#include "durability_hooks.h"

#include <endian.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keyspace.h"
#include "t_hash.h"
#include "intset.h"
#include "listpack.h"
#include "lzf.h"
#include "quicklist.h"
#include "rdb_stream.h"
#include "repl.h"
#include "util.h"
#include "zset.h"

#define RDB_LZF_MIN 20 /* shorter strings are never compressed */

static void put_u8(rio_t *r, unsigned v) {
    unsigned char b = (unsigned char)v;
    rio_write(r, &b, 1);
}

static void put_len(rio_t *r, uint64_t len) {
    unsigned char b[9];
    if (len < (1 << 6)) {
        b[0] = (unsigned char)len;
        rio_write(r, b, 1);
    } else if (len < (1 << 14)) {
        b[0] = (unsigned char)((RDB_14BITLEN << 6) | (len >> 8));
        b[1] = (unsigned char)(len & 0xff);
        rio_write(r, b, 2);
    } else if (len <= UINT32_MAX) {
        uint32_t be = htobe32((uint32_t)len);
        b[0] = RDB_32BITLEN;
        memcpy(b + 1, &be, 4);
        rio_write(r, b, 5);
    } else {
        uint64_t be = htobe64(len);
        b[0] = RDB_64BITLEN;
        memcpy(b + 1, &be, 8);
        rio_write(r, b, 9);
    }
}

/* Integer form of a string, when it is one that reads back identically
 * and fits 32 bits; returns the bytes written to b (0 = not possible). */
static size_t encode_int(const char *s, size_t len, unsigned char *b) {
    long long v;
    if (len == 0 || len > 11 || !util_str2ll(s, len, &v)) return 0;
    if (v >= INT8_MIN && v <= INT8_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT8;
        b[1] = (unsigned char)(int8_t)v;
        return 2;
    }
    if (v >= INT16_MIN && v <= INT16_MAX) {
        uint16_t le = htole16((uint16_t)(int16_t)v);
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT16;
        memcpy(b + 1, &le, 2);
        return 3;
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
        uint32_t le = htole32((uint32_t)(int32_t)v);
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT32;
        memcpy(b + 1, &le, 4);
        return 5;
    }
    return 0;
}

/* LZF form: [11 000011][compressed len][original len][bytes].  Only used
 * when it saves at least 4 bytes. */
static bool put_lzf(rio_t *r, const char *s, size_t len) {
    size_t cap = len - 4;
    unsigned char *out = zmalloc(cap);
    size_t clen = lzf_compress(s, len, out, cap);
    if (clen > 0) {
        put_u8(r, (RDB_ENCVAL << 6) | RDB_ENC_LZF);
        put_len(r, clen);
        put_len(r, len);
        rio_write(r, out, clen);
    }
    zfree(out);
    return clen > 0;
}

static void put_string(rio_t *r, const char *s, size_t len, bool compress) {
    unsigned char b[5];
    size_t n = encode_int(s, len, b);
    if (n) {
        rio_write(r, b, n);
        return;
    }
    if (compress && len > RDB_LZF_MIN && put_lzf(r, s, len)) return;
    put_len(r, len);
    rio_write(r, s, len);
}

/* A listpack or intset as one string (LZF-compressed when that pays), the
 * way Redis writes its compact encodings: loading takes it as it is. */
static void put_blob(rio_t *r, const void *blob, size_t len, bool compress) {
    if (compress && len > RDB_LZF_MIN && put_lzf(r, blob, len)) return;
    put_len(r, len);
    rio_write(r, blob, len);
}

/* Lent to rdb_stream.c (rdb_stream.h). */
/* What the stream codec (rdb_stream.c) writes with. */
static void out_string(rio_t *r, const void *s, size_t len, bool compress) { put_string(r, s, len, compress); }
static const rdb_out_ops_t stream_out = {.len = put_len, .string = out_string};

static void put_ll_string(rio_t *r, long long v) {
    char buf[LP_INTBUF_SIZE];
    int n = util_ll2str(buf, sizeof(buf), v);
    put_string(r, buf, (size_t)n, false);
}

static void put_obj_string(rio_t *r, const robj *o, bool compress) {
    char buf[LP_INTBUF_SIZE];
    size_t len;
    const char *s = obj_string_view(o, buf, sizeof(buf), &len);
    put_string(r, s, len, compress);
}

static void put_lp_entries(rio_t *r, unsigned char *lp, bool compress) {
    char buf[LP_INTBUF_SIZE];
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p)) {
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, buf);
        put_string(r, (const char *)s, len, compress);
    }
}

struct pair_sink {
    rio_t *r;
    bool compress;
};

static void put_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl) {
    (void)ttl;
    struct pair_sink *s = arg;
    put_string(s->r, f, flen, s->compress);
    put_string(s->r, v, vlen, s->compress);
}

static void put_ms(rio_t *r, uint64_t ms) {
    uint64_t le = htole64(ms);
    rio_write(r, &le, 8);
}

/* Type 24's field: its TTL relative to the hash's earliest (plus one; 0
 * for none), then field and value. */
struct ttl_pair_sink {
    rio_t *r;
    bool compress;
    uint64_t min;
};

static void put_ttl_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl) {
    struct ttl_pair_sink *s = arg;
    put_len(s->r, ttl == HASH_TTL_NONE ? 0 : ttl - s->min + 1);
    put_string(s->r, f, flen, s->compress);
    put_string(s->r, v, vlen, s->compress);
}

/* Lists as QUICKLIST_2: every node a packed listpack (a listpack-encoded
 * list is a quicklist of one node in the file, as Redis 7.0 has no other
 * list type). */
static void put_list(rio_t *r, robj *o, bool compress) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        put_len(r, 1);
        put_len(r, RDB_QL_PACKED);
        put_blob(r, o->ptr, lp_bytes(o->ptr), compress);
        return;
    }
    quicklist *ql = o->ptr;
    put_len(r, ql->len);
    for (ql_node_t *n = ql->head; n; n = n->next) {
        unsigned char *lp = ql_node_listpack(ql, n); /* list-compress-depth: raw for the file */
        put_len(r, RDB_QL_PACKED);
        put_blob(r, lp, lp_bytes(lp), compress);
    }
}

/* Listpack sets are written as plain sets: their RDB type (20) is newer
 * than version 10, which Redis 7.0 would refuse. */
static void put_set(rio_t *r, robj *o, bool compress) {
    if (o->encoding == OBJ_ENCODING_INTSET) {
        put_blob(r, o->ptr, intset_blob_len(o->ptr), compress);
    } else if (o->encoding == OBJ_ENCODING_LISTPACK) {
        put_len(r, lp_length(o->ptr));
        put_lp_entries(r, o->ptr, compress);
    } else {
        put_len(r, ht_size((ht *)o->ptr));
        ht_iter it;
        void *k;
        ht_iter_init(&it, o->ptr, false); /* members are the entries (t_set.c) */
        while (ht_next(&it, &k)) put_string(r, k, sds_len(k), compress);
        ht_iter_release(&it);
    }
}

static void put_zset(rio_t *r, robj *o, bool compress) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        put_blob(r, o->ptr, lp_bytes(o->ptr), compress);
        return;
    }
    put_len(r, zset_length(o));
    zset_cursor_t cur;
    for (zset_cursor_at_rank(&cur, o, 0, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t len;
        const char *m = zset_cursor_member(&cur, &len);
        double score = zset_cursor_score(&cur);
        put_string(r, m, len, compress);
        uint64_t bits;
        memcpy(&bits, &score, 8);
        bits = htole64(bits);
        rio_write(r, &bits, 8);
    }
}

static void put_hash(rio_t *r, robj *o, bool compress) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        put_blob(r, o->ptr, lp_bytes(o->ptr), compress);
    } else if (o->encoding == OBJ_ENCODING_LISTPACK_EX) { /* type 25 */
        put_ms(r, hash_min_ttl(o, true));
        unsigned char *lp = hash_type_lp(o);
        put_blob(r, lp, lp_bytes(lp), compress);
    } else if (hash_min_ttl(o, false) != HASH_TTL_NONE) { /* type 24 */
        struct ttl_pair_sink sink = {r, compress, hash_min_ttl(o, true)};
        put_ms(r, sink.min);
        put_len(r, hash_type_len(o));
        hash_type_foreach(o, put_ttl_pair, &sink);
    } else {
        struct pair_sink sink = {r, compress};
        put_len(r, hash_type_len(o));
        hash_type_foreach(o, put_pair, &sink); /* t_hash.c owns the encoding */
    }
}

static int rdb_hash_type(robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) return RDB_TYPE_HASH_LISTPACK;
    if (o->encoding == OBJ_ENCODING_LISTPACK_EX) return RDB_TYPE_HASH_LISTPACK_EX;
    return hash_min_ttl(o, false) != HASH_TTL_NONE ? RDB_TYPE_HASH_METADATA : RDB_TYPE_HASH;
}

int rdb_value_version(robj *val) {
    if (val->type == OBJ_HASH && hash_has_field_ttl(val)) return RDB_VERSION_HFE;
    if (val->type == OBJ_STREAM && rdb_stream_needs_v3(val)) return RDB_VERSION_STREAM3;
    return RDB_VERSION;
}

/* version: the file's or payload's (streams are 21 from version 11 on). */
static int rdb_type_of(robj *o, int version) {
    switch (o->type) {
        case OBJ_STRING: return RDB_TYPE_STRING;
        case OBJ_LIST: return RDB_TYPE_LIST_QUICKLIST_2;
        case OBJ_SET: return o->encoding == OBJ_ENCODING_INTSET ? RDB_TYPE_SET_INTSET : RDB_TYPE_SET;
        case OBJ_ZSET: return o->encoding == OBJ_ENCODING_LISTPACK ? RDB_TYPE_ZSET_LISTPACK : RDB_TYPE_ZSET_2;
        case OBJ_HASH: return rdb_hash_type(o);
        case OBJ_STREAM:
            return version >= RDB_VERSION_STREAM3 ? RDB_TYPE_STREAM_LISTPACKS_3 : RDB_TYPE_STREAM_LISTPACKS_2;
    }
    return -1;
}

static void put_value(rio_t *r, robj *val, bool compress, int version) {
    switch (val->type) {
        case OBJ_STRING: put_obj_string(r, val, compress); break;
        case OBJ_LIST: put_list(r, val, compress); break;
        case OBJ_SET: put_set(r, val, compress); break;
        case OBJ_ZSET: put_zset(r, val, compress); break;
        case OBJ_HASH: put_hash(r, val, compress); break;
        case OBJ_STREAM: /* rdb_stream.c */
            rdb_stream_save(r, &stream_out, val, compress, version >= RDB_VERSION_STREAM3);
            break;
    }
}

static void put_key(rio_t *r, sds key, robj *val, long long expire, bool compress, int version) {
    if (expire >= 0) {
        uint64_t le = htole64((uint64_t)expire);
        put_u8(r, RDB_OPCODE_EXPIRETIME_MS);
        rio_write(r, &le, 8);
    }
    put_u8(r, (unsigned)rdb_type_of(val, version));
    put_string(r, key, sds_len(key), compress);
    put_value(r, val, compress, version);
}

void rdb_write_value(rio_t *r, robj *val, bool compress) {
    int version = rdb_value_version(val);
    put_u8(r, (unsigned)rdb_type_of(val, version));
    put_value(r, val, compress, version);
}

static void put_aux(rio_t *r, const char *name, const char *value) {
    put_u8(r, RDB_OPCODE_AUX);
    put_string(r, name, strlen(name), false);
    put_string(r, value, strlen(value), false);
}

static void put_aux_ll(rio_t *r, const char *name, long long v) {
    put_u8(r, RDB_OPCODE_AUX);
    put_string(r, name, strlen(name), false);
    put_ll_string(r, v);
}

static void put_db(rio_t *r, db_t *db, bool compress, long long key_delay_us, int version) {
    put_u8(r, RDB_OPCODE_SELECTDB);
    put_len(r, (uint64_t)db->id);
    put_u8(r, RDB_OPCODE_RESIZEDB);
    put_len(r, db_size(db));
    put_len(r, db_expires_size(db));
    ht_iter it;
    void *p;
    ht_iter_init(&it, db->keys, false);
    /* One entry ahead: the next entry is fetched while this key is written
     * (the first touch of each key was a third of a dump's cycles, a cache
     * miss per key). */
    bool more = ht_next(&it, &p);
    while (more && !rio_error(r)) {
        db_entry *de = p;
        more = ht_next(&it, &p);
        if (more) __builtin_prefetch(p);
        robj view;
        put_key(r, db_entry_key(de), db_entry_val(de, &view), db_entry_expire(de), compress, version);
        if (key_delay_us > 0) usleep((useconds_t)key_delay_us);
    }
    ht_iter_release(&it);
}

struct function_sink {
    rio_t *r;
    bool compress;
};

static void put_function(void *arg, const char *code, size_t len) {
    struct function_sink *sink = arg;
    put_u8(sink->r, RDB_OPCODE_FUNCTION2);
    put_string(sink->r, code, len, sink->compress);
}

/* The version a dataset's file says: the newest any of its values needs
 * (rdb_value_version).  Hashes with field TTLs are tracked per db; streams
 * needing type 21 are looked for by a pass over the keys, made only when
 * no such hash settled it and a consumer group ever existed here
 * (srv->stream_groups_seen): a pointer chase per key, a SAVE of 1.3M
 * small keys took 0.17 s with it and 0.14 s without. */
static int dataset_version(server_t *srv, bool functions_only) {
    for (int i = 0; i < srv->dbnum; i++)
        if (db_field_ttl_keys(&srv->dbs[i])) return RDB_VERSION_HFE;
    if (functions_only || !srv->stream_groups_seen) return RDB_VERSION;
    for (int i = 0; i < srv->dbnum; i++) {
        ht_iter it;
        void *p;
        bool v3 = false, more;
        ht_iter_init(&it, srv->dbs[i].keys, false);
        more = ht_next(&it, &p);
        while (more && !v3) {
            db_entry *de = p;
            more = ht_next(&it, &p);
            if (more) __builtin_prefetch(p);        /* one entry ahead, as put_db */
            if (db_entry_is_embedded(de)) continue; /* a string */
            robj view, *val = db_entry_val(de, &view);
            v3 = val->type == OBJ_STREAM && rdb_stream_needs_v3(val);
        }
        ht_iter_release(&it);
        if (v3) return RDB_VERSION_STREAM3;
    }
    return RDB_VERSION;
}

int rdb_write_dataset(server_t *srv, rio_t *r, const rdb_save_opts_t *opts) {
    char magic[16];
    int version = dataset_version(srv, opts->functions_only);
    snprintf(magic, sizeof(magic), "REDIS%04d", version);
    rio_write(r, magic, 9);
    put_aux(r, "redis-ver", RL_REDIS_COMPAT_VERSION);
    put_aux_ll(r, "redis-bits", (long long)sizeof(void *) * 8);
    put_aux_ll(r, "ctime", (long long)time(NULL));
    put_aux_ll(r, "used-mem", (long long)zmalloc_used_memory());
    /* repl.h: our place in the replication history, where Redis 7.0 puts
     * it (a restart continues it; an AOF preamble does not carry it). */
    rdb_repl_info_t ri;
    if (!opts->aof_base && repl_rdb_save_info(srv, &ri)) {
        put_aux_ll(r, "repl-stream-db", ri.stream_db);
        put_aux(r, "repl-id", ri.id);
        put_aux_ll(r, "repl-offset", ri.offset);
    }
    put_aux_ll(r, "aof-base", opts->aof_base ? 1 : 0);
    /* Function libraries (function.c) before the keys, as Redis 7.0 writes them. */
    struct function_sink sink = {r, opts->compress};
    srv->durability_hooks->foreach_function(srv, put_function, &sink); /* function.c */
    for (int i = 0; i < srv->dbnum && !rio_error(r) && !opts->functions_only; i++)
        if (db_size(&srv->dbs[i])) put_db(r, &srv->dbs[i], opts->compress, opts->key_delay_us, version);
    put_u8(r, RDB_OPCODE_EOF);
    uint64_t crc = opts->checksum ? htole64(r->crc) : 0;
    rio_write(r, &crc, 8);
    return rio_flush(r);
}
