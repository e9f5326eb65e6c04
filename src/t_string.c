/* t_string.c: string commands (GET, SET and its options, counters, ranges).
 *
 * Values are stored compactly through obj_try_encoding (int, embstr, raw).
 * Commands that modify a value in place (APPEND, SETRANGE) first make it an
 * unshared raw string. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "commands.h"
#include "keyspace.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "util.h"

#define SET_NX (1 << 0)
#define SET_XX (1 << 1)
#define SET_GET (1 << 2)
#define SET_EX (1 << 3)
#define SET_PX (1 << 4)
#define SET_EXAT (1 << 5)
#define SET_PXAT (1 << 6)
#define SET_KEEPTTL (1 << 7)
#define SET_PERSIST (1 << 8)
#define SET_EXPIRE_MASK (SET_EX | SET_PX | SET_EXAT | SET_PXAT)
#define TTL_GROUP (SET_EXPIRE_MASK | SET_KEEPTTL | SET_PERSIST)

/* The string must not grow past proto-max-bulk-len: base + add bytes, with
 * both non-negative, compared without computing a sum that could overflow
 * (SETRANGE's offset comes from the client and can be LLONG_MAX). */
static bool check_length_or_reply(client_t *c, long long base, long long add) {
    long long max = c->srv->cfg.proto_max_bulk_len;
    if (add > max || base > max - add) {
        reply_error(c, "string exceeds maximum allowed size (proto-max-bulk-len)");
        return false;
    }
    return true;
}

/* Parse SET/GETEX options from argv[first..].  is_getex allows PERSIST
 * and forbids NX/XX/GET/KEEPTTL.  Returns false after replying. */
static bool parse_set_options(client_t *c, int first, bool is_getex, int *flags, robj **expire) {
    *flags = 0;
    *expire = NULL;
    for (int j = first; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        bool has_next = j + 1 < c->argc;
        int f = 0;
        if (!is_getex && !strcasecmp(a, "nx")) f = SET_NX;
        else if (!is_getex && !strcasecmp(a, "xx")) f = SET_XX;
        else if (!is_getex && !strcasecmp(a, "get")) f = SET_GET;
        else if (!is_getex && !strcasecmp(a, "keepttl")) f = SET_KEEPTTL;
        else if (is_getex && !strcasecmp(a, "persist")) f = SET_PERSIST;
        else if (!strcasecmp(a, "ex") && has_next) f = SET_EX;
        else if (!strcasecmp(a, "px") && has_next) f = SET_PX;
        else if (!strcasecmp(a, "exat") && has_next) f = SET_EXAT;
        else if (!strcasecmp(a, "pxat") && has_next) f = SET_PXAT;
        else goto syntax;
        /* Repeating an option is allowed (the last value wins, as in Redis);
         * only two different options of one group conflict. */
        if ((f & (SET_NX | SET_XX)) && (*flags & (SET_NX | SET_XX) & ~f)) goto syntax;
        if ((f & TTL_GROUP) && (*flags & TTL_GROUP & ~f)) goto syntax;
        if (f & SET_EXPIRE_MASK) *expire = c->argv[++j];
        *flags |= f;
    }
    return true;
syntax:
    reply_error(c, RL_ERR_SYNTAX);
    return false;
}

/* Absolute expire time in ms from an EX/PX/EXAT/PXAT argument. */
static bool expire_ms_or_reply(client_t *c, robj *arg, int flags, const char *cmdname, long long *when) {
    long long v;
    if (!cmd_get_ll_or_reply(c, arg, &v, NULL)) return false;
    bool seconds = flags & (SET_EX | SET_EXAT);
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) goto invalid;
    if (seconds) v *= 1000;
    if (flags & (SET_EX | SET_PX)) {
        if (v > LLONG_MAX - c->srv->mstime) goto invalid;
        v += c->srv->mstime;
    }
    *when = v;
    return true;
invalid:
    reply_error(c, "invalid expire time in '%s' command", cmdname);
    return false;
}

/* Reply with the string at key: null if missing, WRONGTYPE if not a string.
 * Returns false when it replied with an error. */
static bool get_generic(client_t *c, robj *key) {
    robj *o = db_lookup_read(c->db, key, LOOKUP_NONE);
    if (!o) {
        reply_null(c);
        return true;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return false;
    reply_bulk_obj(c, o);
    return true;
}

static void set_generic(client_t *c, int flags, robj *key, robj *val, long long when) {
    if (flags & SET_GET) {
        if (!get_generic(c, key)) return;
    }
    if (flags & (SET_NX | SET_XX | SET_GET | SET_KEEPTTL)) {
        bool found = db_lookup_write(c->db, key) != NULL;
        if (((flags & SET_NX) && found) || ((flags & SET_XX) && !found)) {
            if (!(flags & SET_GET)) reply_null(c);
            return;
        }
        obj_incref(val);
        db_set_key(c->db, key, val, flags & SET_KEEPTTL);
    } else {
        obj_incref(val);
        db_lookup_and_set_key(c->db, key, val); /* the same, with one hash of the key */
    }
    if (when > 0) db_set_expire(c->db, key, when);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "set", key, c->db->id);
    if (when > 0) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "expire", key, c->db->id);
    if (!(flags & SET_GET)) reply_ok(c);
}

static void cmd_set(client_t *c) {
    int flags;
    robj *expire;
    long long when = 0;
    if (!parse_set_options(c, 3, false, &flags, &expire)) return;
    if (expire && !expire_ms_or_reply(c, expire, flags, "set", &when)) return;
    c->argv[2] = obj_try_encoding(c->argv[2]);
    set_generic(c, flags, c->argv[1], c->argv[2], when);
}

static void cmd_setnx(client_t *c) {
    if (db_lookup_write(c->db, c->argv[1])) {
        reply_ll(c, 0);
        return;
    }
    c->argv[2] = obj_try_encoding(c->argv[2]);
    obj_incref(c->argv[2]);
    db_add(c->db, c->argv[1], c->argv[2]);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "set", c->argv[1], c->db->id);
    reply_ll(c, 1);
}

static void setex_generic(client_t *c, int unit_flag, const char *name) {
    long long when;
    if (!expire_ms_or_reply(c, c->argv[2], unit_flag, name, &when)) return;
    c->argv[3] = obj_try_encoding(c->argv[3]);
    set_generic(c, 0, c->argv[1], c->argv[3], when);
}

static void cmd_setex(client_t *c) { setex_generic(c, SET_EX, "setex"); }
static void cmd_psetex(client_t *c) { setex_generic(c, SET_PX, "psetex"); }

static void cmd_get(client_t *c) { get_generic(c, c->argv[1]); }

static void cmd_getset(client_t *c) {
    c->argv[2] = obj_try_encoding(c->argv[2]);
    set_generic(c, SET_GET, c->argv[1], c->argv[2], 0);
}

static void cmd_getdel(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_null(c);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    reply_bulk_obj(c, o);
    bool lazy = c->srv->cfg.lazyfree_lazy_user_del; /* freed as DEL would free it */
    db_delete_lazy(c->db, c->argv[1], lazy);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", c->argv[1], c->db->id);
    persist_propagate_as(c, lazy ? "UNLINK" : "DEL", &c->argv[1], 1); /* as Redis logs it */
}

static void cmd_getex(client_t *c) {
    int flags;
    robj *expire;
    long long when = 0;
    if (!parse_set_options(c, 2, true, &flags, &expire)) return;
    /* Redis looks the key up before validating the time: a missing key
     * answers null even when the expire argument is bad. */
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_null(c);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    if (expire && !expire_ms_or_reply(c, expire, flags, "getex", &when)) return;
    reply_bulk_obj(c, o);
    if (when && when <= c->srv->mstime) {
        db_delete(c->db, c->argv[1]);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", c->argv[1], c->db->id);
    } else if (when) {
        db_set_expire(c->db, c->argv[1], when);
        db_signal_modified(c->db, c->argv[1]);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "expire", c->argv[1], c->db->id);
    } else if (flags & SET_PERSIST) {
        if (db_remove_expire(c->db, c->argv[1])) {
            db_signal_modified(c->db, c->argv[1]);
            notify_keyspace_event(c->srv, NOTIFY_GENERIC, "persist", c->argv[1], c->db->id);
        }
    }
}

static void cmd_mget(client_t *c) {
    reply_array_len(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        robj *o = db_lookup_read(c->db, c->argv[j], LOOKUP_NONE);
        if (!o || o->type != OBJ_STRING) reply_null(c);
        else reply_bulk_obj(c, o);
    }
}

static void mset_generic(client_t *c, bool nx) {
    if (c->argc % 2 == 0) {
        reply_error_arity(c);
        return;
    }
    if (nx) {
        for (int j = 1; j < c->argc; j += 2) {
            if (db_lookup_write(c->db, c->argv[j])) {
                reply_ll(c, 0);
                return;
            }
        }
    }
    for (int j = 1; j < c->argc; j += 2) {
        c->argv[j + 1] = obj_try_encoding(c->argv[j + 1]);
        obj_incref(c->argv[j + 1]);
        db_set_key(c->db, c->argv[j], c->argv[j + 1], false);
        notify_keyspace_event(c->srv, NOTIFY_STRING, "set", c->argv[j], c->db->id);
    }
    if (nx) reply_ll(c, 1);
    else reply_ok(c);
}

static void cmd_mset(client_t *c) { mset_generic(c, false); }
static void cmd_msetnx(client_t *c) { mset_generic(c, true); }

static void cmd_strlen(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    reply_ll(c, o ? (long long)obj_string_len(o) : 0);
}

static void cmd_append(client_t *c) {
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!o) {
        c->argv[2] = obj_try_encoding(c->argv[2]);
        obj_incref(c->argv[2]);
        db_add(c->db, c->argv[1], c->argv[2]);
        notify_keyspace_event(c->srv, NOTIFY_STRING, "append", c->argv[1], c->db->id);
        reply_ll(c, (long long)obj_string_len(c->argv[2]));
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    size_t add = sds_len(c->argv[2]->ptr);
    if (!check_length_or_reply(c, (long long)obj_string_len(o), (long long)add)) return;
    bool replaced;
    robj *w = obj_unshare_string(o, &replaced);
    w->ptr = sds_catlen(w->ptr, c->argv[2]->ptr, add);
    if (replaced) db_overwrite(c->db, c->argv[1], w);
    else db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "append", c->argv[1], c->db->id);
    reply_ll(c, (long long)sds_len(w->ptr));
}

static void incr_generic(client_t *c, long long incr) {
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    long long v = 0;
    if (o && !cmd_get_ll_or_reply(c, o, &v, NULL)) return;
    if ((incr < 0 && v < 0 && incr < LLONG_MIN - v) || (incr > 0 && v > 0 && incr > LLONG_MAX - v)) {
        reply_error(c, RL_ERR_OVERFLOW);
        return;
    }
    v += incr;
    robj *n = obj_create_from_ll(v);
    if (o) db_overwrite(c->db, c->argv[1], n);
    else db_add(c->db, c->argv[1], n);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "incrby", c->argv[1], c->db->id);
    reply_ll(c, v);
}

static void cmd_incr(client_t *c) { incr_generic(c, 1); }
static void cmd_decr(client_t *c) { incr_generic(c, -1); }

static void cmd_incrby(client_t *c) {
    long long by;
    if (cmd_get_ll_or_reply(c, c->argv[2], &by, NULL)) incr_generic(c, by);
}

static void cmd_decrby(client_t *c) {
    long long by;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &by, NULL)) return;
    if (by == LLONG_MIN) {
        reply_error(c, "decrement would overflow");
        return;
    }
    incr_generic(c, -by);
}

static void cmd_incrbyfloat(client_t *c) {
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    long double v = 0, by;
    if ((o && !obj_get_long_double(o, &v)) || !obj_get_long_double(c->argv[2], &by)) {
        reply_error(c, RL_ERR_NOT_FLOAT);
        return;
    }
    v += by;
    if (isnan(v) || isinf(v)) {
        reply_error(c, "increment would produce NaN or Infinity");
        return;
    }
    /* Room for the widest long double in %.17Lf (about 4950 digits). */
    char buf[5 * 1024];
    int len = util_ld2str(buf, sizeof(buf), v);
    robj *n = obj_create_string(buf, (size_t)len);
    if (o) db_overwrite(c->db, c->argv[1], n);
    else db_add(c->db, c->argv[1], n);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "incrbyfloat", c->argv[1], c->db->id);
    reply_bulk(c, buf, (size_t)len);
    /* Logged as the value it set (SET key value KEEPTTL), as Redis does, so
     * that a replica on another platform cannot round differently. */
    if (persist_propagation_on(c)) {
        robj *args[3] = {c->argv[1], obj_create_string(buf, (size_t)len), obj_create_string("KEEPTTL", 7)};
        persist_propagate_as(c, "SET", args, 3);
        obj_decref(args[1]);
        obj_decref(args[2]);
    }
}

static void cmd_getrange(client_t *c) {
    long long start, end;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &start, NULL) || !cmd_get_ll_or_reply(c, c->argv[3], &end, NULL)) return;
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_bulk(c, "", 0);
        return;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    char buf[32];
    size_t len;
    const char *s = obj_string_view(o, buf, sizeof(buf), &len);
    long long slen = (long long)len;
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        return;
    }
    if (start < 0) start += slen;
    if (end < 0) end += slen;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= slen) end = slen - 1;
    if (start > end || slen == 0) {
        reply_bulk(c, "", 0);
        return;
    }
    reply_bulk(c, s + start, (size_t)(end - start + 1));
}

static void cmd_setrange(client_t *c) {
    long long offset;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &offset, NULL)) return;
    if (offset < 0) {
        reply_error(c, "offset is out of range");
        return;
    }
    sds val = c->argv[3]->ptr;
    size_t vlen = sds_len(val);
    robj *o = db_lookup_write(c->db, c->argv[1]);
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return;
    size_t cur = o ? obj_string_len(o) : 0;
    if (vlen == 0) {
        reply_ll(c, (long long)cur); /* nothing to write: no key is created */
        return;
    }
    if (!check_length_or_reply(c, offset, (long long)vlen)) return;
    robj *w;
    if (!o) {
        w = obj_create_from_sds(sds_empty());
        db_add(c->db, c->argv[1], w);
    } else {
        bool replaced;
        w = obj_unshare_string(o, &replaced);
        if (replaced) db_overwrite(c->db, c->argv[1], w);
        else db_signal_modified(c->db, c->argv[1]);
    }
    w->ptr = sds_growzero(w->ptr, (size_t)offset + vlen);
    memcpy((char *)w->ptr + offset, val, vlen);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "setrange", c->argv[1], c->db->id);
    reply_ll(c, (long long)sds_len(w->ptr));
}

command_t string_commands[] = {
    {"get", cmd_get, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "string", "Get the value of a key", "1.0.0", NULL},
    {"set", cmd_set, -3, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "Set the string value of a key", "1.0.0", NULL},
    {"setnx", cmd_setnx, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Set the value of a key, only if the key does not exist", "1.0.0", NULL},
    {"setex", cmd_setex, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "Set the value and expiration of a key", "2.0.0", NULL},
    {"psetex", cmd_psetex, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "Set the value and expiration in milliseconds of a key", "2.6.0", NULL},
    {"getset", cmd_getset, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Set the string value of a key and return its old value", "1.0.0", NULL},
    {"getdel", cmd_getdel, 2, CMD_WRITE | CMD_FAST, 1, 1, 1, "string", "Get the value of a key and delete the key", "6.2.0", NULL},
    {"getex", cmd_getex, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, "string", "Get the value of a key and optionally set its expiration", "6.2.0", NULL},
    {"mget", cmd_mget, -2, CMD_READONLY | CMD_FAST, 1, -1, 1, "string", "Get the values of all the given keys", "1.0.0", NULL},
    {"mset", cmd_mset, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 2, "string", "Set multiple keys to multiple values", "1.0.1", NULL},
    {"msetnx", cmd_msetnx, -3, CMD_WRITE | CMD_DENYOOM, 1, -1, 2, "string", "Set multiple keys to multiple values, only if none of the keys exist", "1.0.1", NULL},
    {"append", cmd_append, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Append a value to a key", "2.0.0", NULL},
    {"strlen", cmd_strlen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "string", "Get the length of the value stored in a key", "2.2.0", NULL},
    {"incr", cmd_incr, 2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Increment the integer value of a key by one", "1.0.0", NULL},
    {"decr", cmd_decr, 2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Decrement the integer value of a key by one", "1.0.0", NULL},
    {"incrby", cmd_incrby, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Increment the integer value of a key by the given amount", "1.0.0", NULL},
    {"decrby", cmd_decrby, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Decrement the integer value of a key by the given number", "1.0.0", NULL},
    {"incrbyfloat", cmd_incrbyfloat, 3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "string", "Increment the float value of a key by the given amount", "2.6.0", NULL},
    {"getrange", cmd_getrange, 4, CMD_READONLY, 1, 1, 1, "string", "Get a substring of the string stored at a key", "2.4.0", NULL},
    {"substr", cmd_getrange, 4, CMD_READONLY, 1, 1, 1, "string", "Get a substring of the string stored at a key", "1.0.0", NULL},
    {"setrange", cmd_setrange, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "string", "Overwrite part of a string at key starting at the specified offset", "2.2.0", NULL},
    {0},
};
