/* aof_encode.c: write commands as the AOF and the replicas receive them
 * (see aof.h).
 *
 * Two directions: the commands that rebuild one key (aof_emit_key, for a
 * rewrite's command base), and the translation of a command just run into
 * the command that replays the same effect later (aof_translate: relative
 * expiries made absolute, SET and RESTORE in Redis's logged forms).
 * Commands whose effect is not in their arguments (BLPOP, SPOP, GETDEL...)
 * are logged by their handlers as other commands instead
 * (persist_propagate_as).  Pure functions of the data; aof.c decides where
 * the bytes go. */
#include "aof.h"
#include "resp.h"
#include "t_hash.h"

#include <stdio.h>
#include <string.h>

#include "intset.h"
#include "keyspace.h"
#include "listpack.h"
#include "quicklist.h"
#include "util.h"
#include "zset.h"

#define AOF_BATCH 64 /* elements per RPUSH/SADD/ZADD/HSET in a rewrite */

/* Collects the arguments of one command (up to a batch of elements). */
typedef struct cmdbuf {
    const char *argv[2 + 2 * AOF_BATCH + 2];
    size_t lens[2 + 2 * AOF_BATCH + 2];
    char nums[AOF_BATCH][32]; /* formatted scores / integers */
    int argc, nnums, fixed;   /* fixed: the command name and key */
} cmdbuf_t;

static void cb_start(cmdbuf_t *cb, const char *name, sds key) {
    cb->argv[0] = name;
    cb->lens[0] = strlen(name);
    cb->argv[1] = key;
    cb->lens[1] = sds_len(key);
    cb->argc = cb->fixed = 2;
    cb->nnums = 0;
}

static void cb_arg(cmdbuf_t *cb, const char *s, size_t len) {
    cb->argv[cb->argc] = s;
    cb->lens[cb->argc++] = len;
}

static sds cb_flush(sds buf, cmdbuf_t *cb) {
    if (cb->argc > cb->fixed) buf = resp_cat_command(buf, cb->argc, cb->argv, cb->lens);
    cb->argc = cb->fixed;
    cb->nnums = 0;
    return buf;
}

static const char *cb_num(cmdbuf_t *cb, const char *s, size_t len, size_t *outlen) {
    char *slot = cb->nums[cb->nnums++];
    memcpy(slot, s, len);
    *outlen = len;
    return slot;
}

/* Elements of a listpack, in batches (strings point into the listpack, so
 * each batch is emitted before moving on). */
static sds emit_lp(sds buf, cmdbuf_t *cb, unsigned char *lp, int per) {
    int n = 0;
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p)) {
        char tmp[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, tmp);
        if (s == (const unsigned char *)tmp) s = (const unsigned char *)cb_num(cb, tmp, len, &len);
        cb_arg(cb, (const char *)s, len);
        if (++n % (AOF_BATCH * per) == 0 && n % per == 0) buf = cb_flush(buf, cb);
    }
    return cb_flush(buf, cb);
}

/* A hash, through t_hash.h: pairs appended to HSET, flushed in batches;
 * a hash whose fields may have TTLs as Redis 7.4 rewrites it, one HMSET
 * per field and an HPEXPIREAT after each field that has a TTL. */
struct hash_emit {
    sds buf;
    cmdbuf_t *cb;
    sds key;
    bool per_field;
    int n;
};

static void emit_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl) {
    struct hash_emit *e = arg;
    if (e->per_field) {
        cb_start(e->cb, "HMSET", e->key);
        cb_arg(e->cb, f, flen);
        cb_arg(e->cb, v, vlen);
        e->buf = cb_flush(e->buf, e->cb);
        if (ttl == HASH_TTL_NONE) return;
        char when[32];
        int wl = util_ll2str(when, sizeof(when), (long long)ttl);
        cb_start(e->cb, "HPEXPIREAT", e->key);
        cb_arg(e->cb, when, (size_t)wl);
        cb_arg(e->cb, "FIELDS", 6);
        cb_arg(e->cb, "1", 1);
        cb_arg(e->cb, f, flen);
        e->buf = cb_flush(e->buf, e->cb);
        return;
    }
    cb_arg(e->cb, f, flen);
    cb_arg(e->cb, v, vlen);
    if (++e->n % AOF_BATCH == 0) e->buf = cb_flush(e->buf, e->cb);
}

static sds emit_hash(sds buf, cmdbuf_t *cb, sds key, robj *h) {
    /* per field also for a listpackex: its integers are formatted into
     * buffers that the next pair reuses, so each pair is flushed at once */
    bool per_field = h->encoding != OBJ_ENCODING_HT || hash_min_ttl(h, false) != HASH_TTL_NONE;
    struct hash_emit e = {buf, cb, key, per_field, 0};
    if (!e.per_field) cb_start(cb, "HSET", key);
    hash_type_foreach(h, emit_pair, &e);
    return e.per_field ? e.buf : cb_flush(e.buf, cb);
}

/* A hashtable set: its entries are the member strings (t_set.c). */
static sds emit_set_ht(sds buf, cmdbuf_t *cb, ht *t) {
    ht_iter it;
    void *k;
    int n = 0;
    ht_iter_init(&it, t, false);
    while (ht_next(&it, &k)) {
        cb_arg(cb, k, sds_len(k));
        if (++n % AOF_BATCH == 0) buf = cb_flush(buf, cb);
    }
    ht_iter_release(&it);
    return cb_flush(buf, cb);
}

static sds emit_intset(sds buf, cmdbuf_t *cb, const intset *is) {
    for (uint32_t i = 0; i < intset_len(is); i++) {
        int64_t v;
        char tmp[32];
        intset_get(is, i, &v);
        int n = util_ll2str(tmp, sizeof(tmp), v);
        size_t len;
        const char *s = cb_num(cb, tmp, (size_t)n, &len);
        cb_arg(cb, s, len);
        if ((i + 1) % AOF_BATCH == 0) buf = cb_flush(buf, cb);
    }
    return cb_flush(buf, cb);
}

static sds emit_zset(sds buf, cmdbuf_t *cb, robj *o) {
    zset_cursor_t cur;
    int n = 0;
    /* Members of a listpack zset point into the cursor's buffer for integer
     * members, so each pair is copied into the number slots when needed. */
    sds *keep = zmalloc(sizeof(sds) * AOF_BATCH);
    int nkeep = 0;
    for (zset_cursor_at_rank(&cur, o, 0, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t mlen, slen;
        const char *m = zset_cursor_member(&cur, &mlen);
        char tmp[64];
        int sl = util_d2str(tmp, sizeof(tmp), zset_cursor_score(&cur));
        const char *sc = cb_num(cb, tmp, (size_t)sl, &slen);
        keep[nkeep] = sds_newlen(m, mlen);
        cb_arg(cb, sc, slen);
        cb_arg(cb, keep[nkeep], mlen);
        nkeep++;
        if (++n % AOF_BATCH == 0) {
            buf = cb_flush(buf, cb);
            for (int i = 0; i < nkeep; i++) sds_free(keep[i]);
            nkeep = 0;
        }
    }
    buf = cb_flush(buf, cb);
    for (int i = 0; i < nkeep; i++) sds_free(keep[i]);
    zfree(keep);
    return buf;
}

sds aof_emit_key(sds buf, sds key, robj *val, long long expire_ms) {
    cmdbuf_t *cb = zmalloc(sizeof(*cb));
    switch (val->type) {
        case OBJ_STRING: {
            char tmp[LP_INTBUF_SIZE];
            size_t len;
            const char *s = obj_string_view(val, tmp, sizeof(tmp), &len);
            cb_start(cb, "SET", key);
            cb_arg(cb, s, len);
            buf = cb_flush(buf, cb);
            break;
        }
        case OBJ_LIST:
            cb_start(cb, "RPUSH", key);
            if (val->encoding == OBJ_ENCODING_LISTPACK) {
                buf = emit_lp(buf, cb, val->ptr, 1);
            } else {
                quicklist *ql = val->ptr;
                for (ql_node_t *n = ql->head; n; n = n->next) buf = emit_lp(buf, cb, ql_node_listpack(ql, n), 1);
            }
            break;
        case OBJ_SET:
            cb_start(cb, "SADD", key);
            if (val->encoding == OBJ_ENCODING_INTSET) buf = emit_intset(buf, cb, val->ptr);
            else if (val->encoding == OBJ_ENCODING_LISTPACK) buf = emit_lp(buf, cb, val->ptr, 1);
            else buf = emit_set_ht(buf, cb, val->ptr);
            break;
        case OBJ_ZSET:
            cb_start(cb, "ZADD", key);
            buf = emit_zset(buf, cb, val);
            break;
        case OBJ_HASH:
            if (val->encoding == OBJ_ENCODING_LISTPACK) {
                cb_start(cb, "HSET", key);
                buf = emit_lp(buf, cb, val->ptr, 2);
            } else {
                buf = emit_hash(buf, cb, key, val);
            }
            break;
        case OBJ_STREAM:
            buf = stream_aof_emit(buf, key, val); /* stream_aof.c */
            break;
    }
    if (expire_ms >= 0) {
        char tmp[32];
        int n = util_ll2str(tmp, sizeof(tmp), expire_ms);
        cb_start(cb, "PEXPIREAT", key);
        cb_arg(cb, tmp, (size_t)n);
        buf = cb_flush(buf, cb);
    }
    zfree(cb);
    return buf;
}

/* --------------------------------------------------------------- feeding */

static bool is_cmd(robj *a, const char *name) { return obj_is_sds_encoded(a) && !strcasecmp(a->ptr, name); }

static sds cat_argv(sds buf, robj **argv, int argc, int skip_from, int skip_n, const char *extra, long long extra_v) {
    const char *av[argc + 2];
    size_t lens[argc + 2];
    char tmp[32];
    char(*ints)[LP_INTBUF_SIZE] = zmalloc((size_t)argc * LP_INTBUF_SIZE);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i >= skip_from && i < skip_from + skip_n) continue;
        /* Handlers may have re-encoded an argument as an integer. */
        av[n] = obj_string_view(argv[i], ints[i], LP_INTBUF_SIZE, &lens[n]);
        n++;
    }
    if (extra) {
        av[n] = extra;
        lens[n++] = strlen(extra);
        int l = util_ll2str(tmp, sizeof(tmp), extra_v);
        av[n] = tmp;
        lens[n++] = (size_t)l;
    }
    buf = resp_cat_command(buf, n, av, lens);
    zfree(ints);
    return buf;
}

static sds cat_simple(sds buf, const char *cmd, robj *key, const char *arg) {
    char kbuf[LP_INTBUF_SIZE];
    size_t klen;
    const char *k = obj_string_view(key, kbuf, sizeof(kbuf), &klen);
    const char *av[3] = {cmd, k, arg};
    size_t lens[3] = {strlen(cmd), klen, arg ? strlen(arg) : 0};
    return resp_cat_command(buf, arg ? 3 : 2, av, lens);
}

/* `SET key value [PXAT when]` (when < 0: no PXAT): SETEX, PSETEX, GETSET
 * and SET with an expiry as Redis logs them. */
static sds cat_as_set(sds buf, robj *key, robj *val, long long when) {
    sds name = sds_new("SET");
    robj set = {.type = OBJ_STRING, .ptr = name};
    robj *av[3] = {&set, key, val};
    buf = cat_argv(buf, av, 3, 0, 0, when >= 0 ? "PXAT" : NULL, when);
    sds_free(name);
    return buf;
}

/* SET in the form Redis 7.0 logs: with an expiry, `SET key value PXAT
 * ms` alone (NX, XX, GET and the relative time dropped: the SET happened);
 * without one, the command less its GET options (a reply nobody reads). */
static sds cat_set(sds buf, db_t *db, robj **argv, int argc) {
    bool expiry = false;
    robj *kept[argc];
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *o = i >= 3 && obj_is_sds_encoded(argv[i]) ? argv[i]->ptr : "";
        if (!strcasecmp(o, "get")) continue;
        if (i + 1 < argc &&
            (!strcasecmp(o, "ex") || !strcasecmp(o, "px") || !strcasecmp(o, "exat") || !strcasecmp(o, "pxat")))
            expiry = true;
        kept[n++] = argv[i];
    }
    long long when = expiry ? db_get_expire(db, argv[1]) : -1;
    if (when >= 0) return cat_as_set(buf, argv[1], argv[2], when);
    return cat_argv(buf, kept, n, 0, 0, NULL, 0);
}

/* RESTORE as Redis logs it: a relative TTL made absolute (the time in
 * place of the TTL, ABSTTL added) so it does not restart when the log is
 * replayed; DEL when the key was born expired. */
static sds cat_restore(sds buf, db_t *db, robj **argv, int argc) {
    if (!db_find(db, argv[1]->ptr)) return cat_simple(buf, "DEL", argv[1], NULL);
    long long when = db_get_expire(db, argv[1]);
    bool absttl = false;
    for (int i = 4; i < argc; i++)
        if (obj_is_sds_encoded(argv[i]) && !strcasecmp(argv[i]->ptr, "absttl")) absttl = true;
    if (when < 0 || absttl) return cat_argv(buf, argv, argc, 0, 0, NULL, 0);
    robj *av[argc + 1];
    memcpy(av, argv, sizeof(robj *) * (size_t)argc);
    av[2] = obj_create_from_ll(when);
    av[argc] = obj_create_string("ABSTTL", 6);
    buf = cat_argv(buf, av, argc + 1, 0, 0, NULL, 0);
    obj_decref(av[2]);
    obj_decref(av[argc]);
    return buf;
}

static sds translate(sds buf, db_t *db, robj **argv, int argc) {
    robj *cmd = argv[0];
    if (argc >= 3 && (is_cmd(cmd, "expire") || is_cmd(cmd, "pexpire") || is_cmd(cmd, "expireat") ||
                      is_cmd(cmd, "pexpireat") || is_cmd(cmd, "getex"))) {
        long long when = db_get_expire(db, argv[1]);
        if (!db_find(db, argv[1]->ptr)) return cat_simple(buf, "DEL", argv[1], NULL);
        if (when < 0) return cat_simple(buf, "PERSIST", argv[1], NULL);
        char tmp[32];
        util_ll2str(tmp, sizeof(tmp), when);
        return cat_simple(buf, "PEXPIREAT", argv[1], tmp);
    }
    if (argc == 4 && (is_cmd(cmd, "setex") || is_cmd(cmd, "psetex")))
        return cat_as_set(buf, argv[1], argv[3], db_get_expire(db, argv[1]));
    if (argc >= 4 && is_cmd(cmd, "set")) return cat_set(buf, db, argv, argc);
    if (argc == 3 && is_cmd(cmd, "getset")) return cat_as_set(buf, argv[1], argv[2], -1);
    if (argc >= 4 && is_cmd(cmd, "restore")) return cat_restore(buf, db, argv, argc);
    return cat_argv(buf, argv, argc, 0, 0, NULL, 0);
}

sds aof_translate(server_t *srv, sds buf, int dbid, robj **argv, int argc) {
    return translate(buf, &srv->dbs[dbid], argv, argc);
}
