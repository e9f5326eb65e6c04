/* hash_ttl.c: hash field expiry (Redis 7.4): the commands that set, read
 * and remove a field's TTL (HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT,
 * HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST), Redis 8.0's HGETDEL,
 * HGETEX and HSETEX, and the active expiry of fields that expire.c's
 * cycle calls.
 *
 * Where TTLs live is t_hash.c's business (t_hash.h): a listpackex keeps
 * fields in TTL order, a hashtable keeps 8 bytes in each timed field's
 * block and a lower bound of the soonest TTL.  Lazy expiry (a command
 * reading a field past its TTL) is t_hash.c's too.  Here, besides the
 * commands: each db keeps the names of its hashes that may hold timed
 * fields (keyspace.h: db_track_field_ttl); the cycle walks that set with
 * a cursor, expires the due fields of each hash it meets (an HDEL each to
 * the AOF and replicas, one hexpired event per hash, del when the hash
 * empties), and drops names whose hash has no timed field left.
 *
 * Propagation follows Redis 7.4: H(P)EXPIRE(AT) as HPEXPIREAT with the
 * absolute time and only the fields it changed; a time already past
 * deletes the fields and logs HDELs; HPERSIST as itself. */
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "hash_ttl.h"

#include "commands.h"
#include "keyspace.h"
#include "notify.h"
#include "reply.h"
#include "t_hash.h"
#include "util.h"
#include "zmalloc.h"

#define ERR_FIELDS_MISSING "Mandatory argument FIELDS is missing or not at the right position"
#define ERR_NUMFIELDS_MATCH "The `numfields` parameter must match the number of arguments"
#define ERR_NUMFIELDS_POSITIVE "Number of fields must be a positive integer"
#define ERR_NUMFIELDS_GT0 "Parameter `numFields` should be greater than 0"

/* "invalid expire time in 'hexpire' command": the name as the table has it. */
static void reply_bad_expire(client_t *c) {
    char name[32];
    size_t i = 0;
    for (const char *p = c->argv[0]->ptr; *p && i < sizeof(name) - 1; p++) name[i++] = (char)tolower((unsigned char)*p);
    name[i] = '\0';
    reply_error(c, "invalid expire time in '%s' command", name);
}

/* Per-field reply codes (Redis 7.4). */
#define HFE_NO_FIELD -2
#define HFE_NO_TTL -1
#define HFE_COND_NOT_MET 0
#define HFE_OK 1
#define HFE_DELETED 2

enum { COND_NONE,
       COND_NX,
       COND_XX,
       COND_GT,
       COND_LT };

/* "FIELDS numfields f1 ... fn" at argv[at]: the count checked against the
 * arguments left (times per field) as Redis checks it. */
static bool fields_arg_or_reply(client_t *c, int at, int per_field, const char *count_err, long long *n) {
    if (at + 1 >= c->argc || strcasecmp(c->argv[at]->ptr, "FIELDS")) {
        reply_error(c, ERR_FIELDS_MISSING);
        return false;
    }
    if (!cmd_get_range_or_reply(c, c->argv[at + 1], 1, LONG_MAX, n, count_err)) return false;
    if (*n > (c->argc - at - 2) / per_field || *n * per_field != c->argc - at - 2) {
        reply_error(c, ERR_NUMFIELDS_MATCH);
        return false;
    }
    return true;
}

static robj *name_obj(const char *s) { return obj_create_string(s, strlen(s)); }

/* The command's own argv never reaches the AOF or the replicas: what it
 * did is logged instead, through the keyspace's propagation hook. */
static void no_log(client_t *c) { c->flags |= CLIENT_PREVENT_PROP; }
static void log_cmd(client_t *c, robj **argv, int argc) { c->srv->keyspace_hooks->propagate(c->db, argv, argc); }

/* After fields of key were deleted by a TTL already past: the key goes
 * when they were its last fields; the events Redis 7.4 sends. */
static void finish_deleted(client_t *c, robj *key, robj *h) {
    if (hash_type_len(h) == 0) {
        db_delete(c->db, key);
        notify_keyspace_event(c->srv, NOTIFY_HASH, "hdel", key, c->db->id);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
    } else {
        notify_keyspace_event(c->srv, NOTIFY_HASH, "hdel", key, c->db->id);
    }
    db_signal_modified(c->db, key);
}

/* Log one HDEL of field f of key (a TTL set in the past deletes it). */
static void log_hdel(client_t *c, robj *key, robj *field) {
    robj *argv[3] = {name_obj("HDEL"), key, field};
    log_cmd(c, argv, 3);
    obj_decref(argv[0]);
}

/* ------------------------------------------------------------ HEXPIRE */

/* One field's new TTL under cond; the reply code. */
static int set_one_ttl(client_t *c, robj *key, robj *h, robj *field, uint64_t when, int cond, bool past) {
    sds f = field->ptr;
    uint64_t cur;
    if (!hash_field_ttl(h, f, sds_len(f), &cur)) return HFE_NO_FIELD;
    if (cur == HASH_TTL_NONE) {
        if (cond == COND_XX || cond == COND_GT) return HFE_COND_NOT_MET;
    } else if (cond == COND_NX || (cond == COND_GT && cur >= when) || (cond == COND_LT && cur <= when)) {
        return HFE_COND_NOT_MET;
    }
    if (past) {
        hash_field_delete(h, f, sds_len(f));
        log_hdel(c, key, field);
        c->srv->stats.expired_subkeys++;
        return HFE_DELETED;
    }
    hash_field_set_ttl(h, f, sds_len(f), when);
    return HFE_OK;
}

/* Whether a TTL at `when` has already passed for a write on this server
 * (Redis's checkAlreadyExpired: never while loading or on a replica). */
static bool already_past(client_t *c, uint64_t when) {
    return (long long)when <= c->srv->mstime && !c->srv->loading && c->srv->keyspace_hooks->keys_expire_locally(c->srv);
}

static void hexpire_generic(client_t *c, long long base_ms, bool seconds) {
    robj *key = c->argv[1];
    bool wrongtype;
    robj *h = db_lookup_typed_or_reply(c, key, OBJ_HASH, true, &wrongtype);
    if (wrongtype) return;
    long long v;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &v, NULL)) return;
    if (v < 0) {
        reply_error(c, "invalid expire time, must be >= 0");
        return;
    }
    if (seconds) {
        if (v > (long long)(HASH_TTL_MAX / 1000)) {
            reply_bad_expire(c);
            return;
        }
        v *= 1000;
    }
    if (v > (long long)HASH_TTL_MAX - base_ms) {
        reply_bad_expire(c);
        return;
    }
    uint64_t when = (uint64_t)(v + base_ms);
    int at = 3, cond = COND_NONE;
    const char *opt = c->argv[3]->ptr;
    if (!strcasecmp(opt, "nx")) cond = COND_NX;
    else if (!strcasecmp(opt, "xx")) cond = COND_XX;
    else if (!strcasecmp(opt, "gt")) cond = COND_GT;
    else if (!strcasecmp(opt, "lt")) cond = COND_LT;
    if (cond != COND_NONE) at++;
    long long n;
    if (!fields_arg_or_reply(c, at, 1, ERR_NUMFIELDS_GT0, &n)) return;
    reply_array_len(c, n);
    if (!h) {
        for (long long i = 0; i < n; i++) reply_ll(c, HFE_NO_FIELD);
        return;
    }
    no_log(c);
    bool past = already_past(c, when);
    /* [HPEXPIREAT, key, ms, FIELDS, count, the fields set...] */
    robj **set = zmalloc(sizeof(robj *) * (size_t)(n + 5));
    int nset = 0, ndel = 0;
    for (long long i = 0; i < n; i++) {
        robj *field = c->argv[at + 2 + i];
        int code = hash_type_len(h) ? set_one_ttl(c, key, h, field, when, cond, past) : HFE_NO_FIELD;
        reply_ll(c, code);
        if (code == HFE_OK) set[5 + nset++] = field;
        ndel += code == HFE_DELETED;
    }
    c->srv->dirty += nset + ndel;
    bool gone = ndel && hash_type_len(h) == 0;
    if (ndel) finish_deleted(c, key, h);
    if (nset && !gone) {
        db_track_field_ttl(c->db, key->ptr);
        if (!ndel) {
            db_signal_modified(c->db, key);
            notify_keyspace_event(c->srv, NOTIFY_HASH, "hexpire", key, c->db->id);
        }
        set[0] = name_obj("HPEXPIREAT");
        set[1] = key;
        set[2] = obj_create_from_ll((long long)when);
        set[3] = name_obj("FIELDS");
        set[4] = obj_create_from_ll(nset);
        log_cmd(c, set, 5 + nset);
        obj_decref(set[0]);
        obj_decref(set[2]);
        obj_decref(set[3]);
        obj_decref(set[4]);
    }
    zfree(set);
}

static void cmd_hexpire(client_t *c) { hexpire_generic(c, c->srv->mstime, true); }
static void cmd_hpexpire(client_t *c) { hexpire_generic(c, c->srv->mstime, false); }
static void cmd_hexpireat(client_t *c) { hexpire_generic(c, 0, true); }
static void cmd_hpexpireat(client_t *c) { hexpire_generic(c, 0, false); }

/* ------------------------------------------------------------ HTTL */

static void httl_generic(client_t *c, long long base_ms, bool seconds) {
    bool wrongtype;
    robj *h = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, false, &wrongtype);
    if (wrongtype) return;
    long long n;
    if (!fields_arg_or_reply(c, 2, 1, ERR_NUMFIELDS_POSITIVE, &n)) return;
    reply_array_len(c, n);
    for (long long i = 0; i < n; i++) {
        sds f = c->argv[4 + i]->ptr;
        uint64_t ttl;
        if (!h || !hash_field_ttl(h, f, sds_len(f), &ttl)) {
            reply_ll(c, HFE_NO_FIELD);
        } else if (ttl == HASH_TTL_NONE) {
            reply_ll(c, HFE_NO_TTL);
        } else if ((long long)ttl < c->srv->mstime) {
            reply_ll(c, HFE_NO_FIELD);
        } else if (seconds) {
            reply_ll(c, ((long long)ttl + 999 - base_ms) / 1000);
        } else {
            reply_ll(c, (long long)ttl - base_ms);
        }
    }
}

static void cmd_httl(client_t *c) { httl_generic(c, c->srv->mstime, true); }
static void cmd_hpttl(client_t *c) { httl_generic(c, c->srv->mstime, false); }
static void cmd_hexpiretime(client_t *c) { httl_generic(c, 0, true); }
static void cmd_hpexpiretime(client_t *c) { httl_generic(c, 0, false); }

/* ------------------------------------------------------------ HPERSIST */

static void cmd_hpersist(client_t *c) {
    bool wrongtype;
    robj *h = db_lookup_typed_or_reply(c, c->argv[1], OBJ_HASH, true, &wrongtype);
    if (wrongtype) return;
    long long n;
    if (!fields_arg_or_reply(c, 2, 1, ERR_NUMFIELDS_POSITIVE, &n)) return;
    reply_array_len(c, n);
    bool changed = false;
    for (long long i = 0; i < n; i++) {
        sds f = c->argv[4 + i]->ptr;
        uint64_t ttl;
        if (!h || !hash_field_ttl(h, f, sds_len(f), &ttl)) {
            reply_ll(c, HFE_NO_FIELD);
        } else if (ttl == HASH_TTL_NONE) {
            reply_ll(c, HFE_NO_TTL);
        } else if ((long long)ttl < c->srv->mstime) {
            reply_ll(c, HFE_NO_FIELD); /* expired: as if absent */
        } else {
            hash_field_set_ttl(h, f, sds_len(f), HASH_TTL_NONE);
            reply_ll(c, HFE_OK);
            changed = true;
        }
    }
    if (changed) {
        notify_keyspace_event(c->srv, NOTIFY_HASH, "hpersist", c->argv[1], c->db->id);
        db_signal_modified(c->db, c->argv[1]);
        c->srv->dirty++;
    }
}

/* ------------------------------------------------------------ Redis 8.0 */

/* A value as a reply from a view (integers formatted into buf). */
static void reply_field(client_t *c, robj *h, sds f) {
    char buf[32];
    size_t len;
    const char *v = h ? hash_type_get(h, f, sds_len(f), &len, buf) : NULL;
    if (v) reply_bulk(c, v, len);
    else reply_null(c);
}

/* HGETDEL key FIELDS n f...: the values, then the fields deleted. */
static void cmd_hgetdel(client_t *c) {
    bool wrongtype;
    robj *key = c->argv[1];
    robj *h = db_lookup_typed_or_reply(c, key, OBJ_HASH, true, &wrongtype);
    if (wrongtype) return;
    long long n;
    if (!fields_arg_or_reply(c, 2, 1, ERR_NUMFIELDS_POSITIVE, &n)) return;
    reply_array_len(c, n);
    robj **del = zmalloc(sizeof(robj *) * (size_t)(n + 2));
    int ndel = 0;
    no_log(c);
    for (long long i = 0; i < n; i++) {
        robj *field = c->argv[4 + i];
        sds f = field->ptr;
        reply_field(c, h, f);
        if (h && hash_field_delete(h, f, sds_len(f))) {
            del[2 + ndel++] = field;
            if (hash_type_len(h) == 0) {
                for (long long j = i + 1; j < n; j++) reply_null(c);
                break;
            }
        }
    }
    if (ndel) {
        c->srv->dirty += ndel;
        finish_deleted(c, key, h);
        del[0] = name_obj("HDEL");
        del[1] = key;
        log_cmd(c, del, 2 + ndel);
        obj_decref(del[0]);
    }
    zfree(del);
}

/* EX/PX/EXAT/PXAT <t> (and PERSIST, KEEPTTL where allowed) at argv[*j]:
 * the absolute time in *when; false after replying. */
#define TTL_OPT_NONE 0
#define TTL_OPT_AT 1
#define TTL_OPT_PERSIST 2
#define TTL_OPT_KEEP 3
static bool ttl_opt_or_reply(client_t *c, int *j, int *kind, uint64_t *when, bool allow_persist, bool allow_keep) {
    const char *o = c->argv[*j]->ptr;
    bool ex = !strcasecmp(o, "ex"), px = !strcasecmp(o, "px"), exat = !strcasecmp(o, "exat"),
         pxat = !strcasecmp(o, "pxat");
    if (*kind != TTL_OPT_NONE) {
        reply_error(c, RL_ERR_SYNTAX);
        return false;
    }
    if (allow_persist && !strcasecmp(o, "persist")) {
        *kind = TTL_OPT_PERSIST;
        return true;
    }
    if (allow_keep && !strcasecmp(o, "keepttl")) {
        *kind = TTL_OPT_KEEP;
        return true;
    }
    if (!(ex || px || exat || pxat) || *j + 1 >= c->argc) {
        reply_error(c, RL_ERR_SYNTAX);
        return false;
    }
    long long v;
    if (!cmd_get_ll_or_reply(c, c->argv[++*j], &v, NULL)) return false;
    long long base = ex || px ? c->srv->mstime : 0;
    if (v <= 0 || ((ex || exat) && v > (long long)(HASH_TTL_MAX / 1000))) {
        reply_bad_expire(c);
        return false;
    }
    if (ex || exat) v *= 1000;
    if (v > (long long)HASH_TTL_MAX - base) {
        reply_bad_expire(c);
        return false;
    }
    *when = (uint64_t)(v + base);
    *kind = TTL_OPT_AT;
    return true;
}

/* Log "HPEXPIREAT key when FIELDS n f..." or "HPERSIST key FIELDS n f...". */
static void log_ttl_change(client_t *c, robj *key, bool persist, uint64_t when, robj **fields, int n) {
    robj **argv = zmalloc(sizeof(robj *) * (size_t)(n + 4));
    int a = 0;
    argv[a++] = key;
    if (!persist) argv[a++] = obj_create_from_ll((long long)when);
    argv[a++] = name_obj("FIELDS");
    argv[a++] = obj_create_from_ll(n);
    for (int i = 0; i < n; i++) argv[a++] = fields[i];
    robj *name = name_obj(persist ? "HPERSIST" : "HPEXPIREAT");
    robj **full = zmalloc(sizeof(robj *) * (size_t)(a + 1));
    full[0] = name;
    memcpy(full + 1, argv, sizeof(robj *) * (size_t)a);
    log_cmd(c, full, a + 1);
    obj_decref(name);
    for (int i = 1; i < (persist ? 3 : 4); i++) obj_decref(argv[i]);
    zfree(full);
    zfree(argv);
}

/* HGETEX key [EX|PX|EXAT|PXAT t | PERSIST] FIELDS n f...: the values, and
 * the existing fields' TTLs set or removed (a time already past deletes
 * them). */
static void cmd_hgetex(client_t *c) {
    robj *key = c->argv[1];
    int j = 2, kind = TTL_OPT_NONE;
    uint64_t when = 0;
    while (j < c->argc && strcasecmp(c->argv[j]->ptr, "FIELDS")) {
        if (!ttl_opt_or_reply(c, &j, &kind, &when, true, false)) return;
        j++;
    }
    long long n;
    if (!fields_arg_or_reply(c, j, 1, ERR_NUMFIELDS_POSITIVE, &n)) return;
    bool wrongtype;
    robj *h = db_lookup_typed_or_reply(c, key, OBJ_HASH, kind != TTL_OPT_NONE, &wrongtype);
    if (wrongtype) return;
    reply_array_len(c, n);
    no_log(c);
    bool past = kind == TTL_OPT_AT && already_past(c, when);
    robj **changed = zmalloc(sizeof(robj *) * (size_t)n);
    int nch = 0, ndel = 0;
    for (long long i = 0; i < n; i++) {
        robj *field = c->argv[j + 2 + i];
        sds f = field->ptr;
        reply_field(c, h && hash_type_len(h) ? h : NULL, f);
        uint64_t ttl;
        if (!h || !hash_type_len(h) || kind == TTL_OPT_NONE || !hash_field_ttl(h, f, sds_len(f), &ttl)) continue;
        if ((long long)ttl < c->srv->mstime && ttl != HASH_TTL_NONE) continue; /* expired: absent */
        if (kind == TTL_OPT_PERSIST) {
            if (ttl == HASH_TTL_NONE) continue;
            hash_field_set_ttl(h, f, sds_len(f), HASH_TTL_NONE);
            changed[nch++] = field;
        } else if (past) {
            hash_field_delete(h, f, sds_len(f));
            log_hdel(c, key, field);
            ndel++;
        } else {
            hash_field_set_ttl(h, f, sds_len(f), when);
            changed[nch++] = field;
        }
    }
    if (nch) {
        c->srv->dirty += nch;
        log_ttl_change(c, key, kind == TTL_OPT_PERSIST, when, changed, nch);
        if (kind == TTL_OPT_AT) db_track_field_ttl(c->db, key->ptr);
        notify_keyspace_event(c->srv, NOTIFY_HASH, kind == TTL_OPT_PERSIST ? "hpersist" : "hexpire", key, c->db->id);
        db_signal_modified(c->db, key);
    }
    if (ndel) {
        c->srv->dirty += ndel;
        c->srv->stats.expired_subkeys += ndel;
        finish_deleted(c, key, h);
    }
    zfree(changed);
}

/* HSETEX key [FNX|FXX] [EX|PX|EXAT|PXAT t | KEEPTTL] FIELDS n f v ...:
 * 1 when every field was set, 0 when the condition held none back. */
static void cmd_hsetex(client_t *c) {
    robj *key = c->argv[1];
    int j = 2, kind = TTL_OPT_NONE, cond = 0; /* 1: FNX, 2: FXX */
    uint64_t when = 0;
    while (j < c->argc && strcasecmp(c->argv[j]->ptr, "FIELDS")) {
        const char *o = c->argv[j]->ptr;
        if (!strcasecmp(o, "fnx") || !strcasecmp(o, "fxx")) {
            if (cond) {
                reply_error(c, RL_ERR_SYNTAX);
                return;
            }
            cond = !strcasecmp(o, "fnx") ? 1 : 2;
        } else if (!ttl_opt_or_reply(c, &j, &kind, &when, false, true)) {
            return;
        }
        j++;
    }
    long long n;
    if (!fields_arg_or_reply(c, j, 2, ERR_NUMFIELDS_POSITIVE, &n)) return;
    bool wrongtype;
    robj *h = db_lookup_typed_or_reply(c, key, OBJ_HASH, true, &wrongtype);
    if (wrongtype) return;
    int first = j + 2;
    for (long long i = 0; cond && i < n; i++) {
        sds f = c->argv[first + 2 * i]->ptr;
        uint64_t ttl;
        bool exists = h && hash_field_ttl(h, f, sds_len(f), &ttl) && !((long long)ttl < c->srv->mstime && ttl);
        if ((cond == 1 && exists) || (cond == 2 && !exists)) {
            reply_ll(c, 0);
            return;
        }
    }
    /* The values as HSET sets them (t_hash.c: conversions, the hset
     * event), logged as that HSET; then the TTLs, logged as HPEXPIREAT. */
    no_log(c);
    uint64_t *keep = kind == TTL_OPT_KEEP ? zmalloc(sizeof(uint64_t) * (size_t)n) : NULL;
    for (long long i = 0; keep && i < n; i++) {
        sds f = c->argv[first + 2 * i]->ptr;
        if (!h || !hash_field_ttl(h, f, sds_len(f), &keep[i])) keep[i] = HASH_TTL_NONE;
    }
    h = hash_type_set_pairs(c, key, c->argv + first, (int)n);
    c->srv->dirty += n;
    robj **argv = zmalloc(sizeof(robj *) * (size_t)(2 + 2 * n));
    argv[0] = name_obj("HSET");
    argv[1] = key;
    memcpy(argv + 2, c->argv + first, sizeof(robj *) * (size_t)(2 * n));
    log_cmd(c, argv, (int)(2 + 2 * n));
    robj **fields = zmalloc(sizeof(robj *) * (size_t)n);
    for (long long i = 0; i < n; i++) fields[i] = c->argv[first + 2 * i];
    bool past = kind == TTL_OPT_AT && already_past(c, when);
    if (kind == TTL_OPT_KEEP) {
        for (long long i = 0; i < n; i++) {
            if (keep[i] == HASH_TTL_NONE) continue;
            hash_field_set_ttl(h, fields[i]->ptr, sds_len(fields[i]->ptr), keep[i]);
            log_ttl_change(c, key, false, keep[i], &fields[i], 1);
        }
    } else if (kind == TTL_OPT_AT && !past) {
        for (long long i = 0; i < n; i++) hash_field_set_ttl(h, fields[i]->ptr, sds_len(fields[i]->ptr), when);
        db_track_field_ttl(c->db, key->ptr);
        log_ttl_change(c, key, false, when, fields, (int)n);
        notify_keyspace_event(c->srv, NOTIFY_HASH, "hexpire", key, c->db->id);
    } else if (past) {
        for (long long i = 0; i < n; i++)
            if (hash_field_delete(h, fields[i]->ptr, sds_len(fields[i]->ptr))) log_hdel(c, key, fields[i]);
        c->srv->stats.expired_subkeys += n;
        finish_deleted(c, key, h);
    }
    zfree(keep);
    zfree(fields);
    obj_decref(argv[0]);
    zfree(argv);
    reply_ll(c, 1);
}

/* ------------------------------------------------------------ active expiry */

#define HFE_KEYS_PER_ROUND 20
#define HFE_FIELDS_PER_ROUND 1000

typedef struct hfe_sample {
    sds keys[HFE_KEYS_PER_ROUND];
    int n;
} hfe_sample_t;

static void hfe_collect(void *priv, void *entry) {
    hfe_sample_t *s = priv;
    if (s->n < HFE_KEYS_PER_ROUND) s->keys[s->n++] = sds_dup(entry);
}

/* One hash: its due fields, a slice at most; false when the name must go
 * (no such hash any more, or no timed field left). */
static bool expire_hash(db_t *db, sds name, long long now, size_t *budget, bool *more) {
    db_entry *e = db_find(db, name);
    if (!e) return false;
    robj *h = db_value_of(db, e);
    if (h->type != OBJ_HASH || !hash_has_field_ttl(h)) return false;
    uint64_t min = hash_min_ttl(h, false);
    if (min == HASH_TTL_NONE) return false;
    if ((long long)min > now) return true;
    robj key = {OBJ_STRING, OBJ_ENCODING_RAW, 0, 1, name};
    bool left;
    size_t n = hash_expire_due(db, &key, h, now, *budget, &left);
    *budget -= n < *budget ? n : *budget;
    *more |= left;
    if (n) {
        notify_keyspace_event(db->srv, NOTIFY_HASH, "hexpired", &key, db->id);
        if (hash_type_len(h) == 0) {
            db_delete(db, &key);
            notify_keyspace_event(db->srv, NOTIFY_GENERIC, "del", &key, db->id);
            db_signal_modified(db, &key);
            return false;
        }
        db_signal_modified(db, &key);
    }
    return hash_min_ttl(h, false) != HASH_TTL_NONE || left;
}

long long hash_ttl_active_expire(server_t *srv, long long deadline_us) {
    long long done = 0;
    for (int i = 0; i < srv->dbnum; i++) {
        db_t *db = &srv->dbs[i];
        int rounds = 0;
        while (db_field_ttl_keys(db) && util_monotonic_us() < deadline_us) {
            hfe_sample_t s = {.n = 0};
            size_t visited = 0;
            do {
                db->hfe_cursor = ht_scan(db_field_ttl_keys(db), db->hfe_cursor, hfe_collect, &s);
            } while (db->hfe_cursor && s.n < HFE_KEYS_PER_ROUND && ++visited < HFE_KEYS_PER_ROUND * 4);
            size_t budget = HFE_FIELDS_PER_ROUND, before = HFE_FIELDS_PER_ROUND;
            bool more = false;
            for (int k = 0; k < s.n; k++) {
                if (budget && !expire_hash(db, s.keys[k], srv->mstime, &budget, &more))
                    db_untrack_field_ttl(db, s.keys[k]);
                sds_free(s.keys[k]);
            }
            done += (long long)(before - budget);
            /* Go on while this round found work, as key expiry does. */
            if (!more && before - budget == 0 && db->hfe_cursor == 0) break;
            if (!more && before - budget == 0 && ++rounds > 16) break;
        }
    }
    return done;
}

command_t hash_ttl_commands[] = {
    {"hexpire", cmd_hexpire, -6, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set expiry for hash field using relative time to expire (seconds)", "7.4.0", NULL},
    {"hpexpire", cmd_hpexpire, -6, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set expiry for hash field using relative time to expire (milliseconds)", "7.4.0", NULL},
    {"hexpireat", cmd_hexpireat, -6, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set expiry for hash field using an absolute Unix timestamp (seconds)", "7.4.0", NULL},
    {"hpexpireat", cmd_hpexpireat, -6, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", "7.4.0", NULL},
    {"httl", cmd_httl, -5, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Returns the TTL in seconds of a hash field.", "7.4.0", NULL},
    {"hpttl", cmd_hpttl, -5, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Returns the TTL in milliseconds of a hash field.", "7.4.0", NULL},
    {"hexpiretime", cmd_hexpiretime, -5, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", "7.4.0", NULL},
    {"hpexpiretime", cmd_hpexpiretime, -5, CMD_READONLY | CMD_FAST, 1, 1, 1, "hash", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", "7.4.0", NULL},
    {"hpersist", cmd_hpersist, -5, CMD_WRITE | CMD_FAST, 1, 1, 1, "hash", "Removes the expiration time for each specified field", "7.4.0", NULL},
    {"hgetdel", cmd_hgetdel, -5, CMD_WRITE | CMD_FAST, 1, 1, 1, "hash", "Returns the value of a field and deletes it from the hash.", "8.0.0", NULL},
    {"hgetex", cmd_hgetex, -5, CMD_WRITE | CMD_FAST, 1, 1, 1, "hash", "Get the value of one or more fields of a given hash key, and optionally set their expiration time or time-to-live (TTL).", "8.0.0", NULL},
    {"hsetex", cmd_hsetex, -6, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hash", "Set the value of one or more fields of a given hash key, and optionally set their expiration time.", "8.0.0", NULL},
    {0},
};
