/* t_zset.c: sorted-set commands (ZADD ... ZSCAN) on top of zset.c.
 *
 * Argument checking follows Redis 7.0 step by step (options, then ranges,
 * then the key lookup), so a malformed command gets the same error as with
 * Redis.  Scores are replied with reply_double (%.17g; RESP3 doubles);
 * WITHSCORES pairs are flat in RESP2 and [member, score] arrays in RESP3.
 * The blocking BZPOP* commands live with the blocking machinery, not here.
 * Writes publish Redis 7.0's keyspace events (notify.h), "del" last when
 * a key goes.  Callers: the command table (commands.c). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "keyspace.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "scan.h"
#include "t_set.h"
#include "util.h"
#include "zmalloc.h"
#include "zset.h"

#define ERR_MINMAX "min or max is not a float"
#define ERR_LEX "min or max not valid string range item"

const obj_type_ops_t zset_type_ops = {zset_free_value, zset_mem_usage};

static zset_limits_t zset_limits(const client_t *c) {
    zset_limits_t l = {c->srv->cfg.zset_max_listpack_entries, c->srv->cfg.zset_max_listpack_value};
    return l;
}

static bool get_score_or_reply(client_t *c, robj *arg, double *out, const char *msg) {
    if (!obj_get_double(arg, out)) {
        reply_error(c, "%s", msg ? msg : RL_ERR_NOT_FLOAT);
        return false;
    }
    return true;
}

/* After removals from the zset o at key: publish `event` (NULL: nothing
 * changed), then delete the key when empty and publish "del" after it, as
 * Redis orders them; else signal the change. */
static void zset_after_write(client_t *c, robj *key, robj *o, const char *event) {
    if (event) notify_keyspace_event(c->srv, NOTIFY_ZSET, event, key, c->db->id);
    if (zset_length(o) == 0) {
        db_delete(c->db, key);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
    } else if (event) {
        db_signal_modified(c->db, key);
    }
}

/* A STORE command's destination: store dst there (taking it) and publish
 * `event`, or, for an empty result, delete dstkey and publish "del" if
 * something was there. */
static void zset_store(client_t *c, robj *dstkey, robj *dst, const char *event) {
    if (zset_length(dst)) {
        db_set_key(c->db, dstkey, dst, false);
        notify_keyspace_event(c->srv, NOTIFY_ZSET, event, dstkey, c->db->id);
        return;
    }
    obj_decref(dst);
    if (db_delete(c->db, dstkey)) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", dstkey, c->db->id);
}

/* ------------------------------------------------------------ ZADD / ZINCRBY */

static void zadd_generic(client_t *c, int in) {
    int idx = 2;
    bool ch = false;
    for (; idx < c->argc; idx++) {
        const char *opt = c->argv[idx]->ptr;
        if (!strcasecmp(opt, "nx")) in |= ZADD_IN_NX;
        else if (!strcasecmp(opt, "xx")) in |= ZADD_IN_XX;
        else if (!strcasecmp(opt, "ch")) ch = true;
        else if (!strcasecmp(opt, "incr")) in |= ZADD_IN_INCR;
        else if (!strcasecmp(opt, "gt")) in |= ZADD_IN_GT;
        else if (!strcasecmp(opt, "lt")) in |= ZADD_IN_LT;
        else break;
    }
    int elements = c->argc - idx;
    if (elements % 2 || !elements) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    elements /= 2;
    if ((in & ZADD_IN_NX) && (in & ZADD_IN_XX)) {
        reply_error(c, "XX and NX options at the same time are not compatible");
        return;
    }
    if (((in & ZADD_IN_NX) && (in & (ZADD_IN_GT | ZADD_IN_LT))) || ((in & ZADD_IN_GT) && (in & ZADD_IN_LT))) {
        reply_error(c, "GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    bool incr = in & ZADD_IN_INCR;
    if (incr && elements > 1) {
        reply_error(c, "INCR option supports a single increment-element pair");
        return;
    }
    /* All scores are checked before anything changes. */
    double *scores = zmalloc(sizeof(double) * (size_t)elements);
    for (int j = 0; j < elements; j++)
        if (!get_score_or_reply(c, c->argv[idx + 2 * j], &scores[j], NULL)) goto done;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, true, &wrongtype);
    if (wrongtype) goto done;
    zset_limits_t l = zset_limits(c);
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    if (!o) {
        if (in & ZADD_IN_XX) goto reply;
        /* Redis 7.0 picks the encoding from the first member only. */
        bool big = l.max_entries == 0 || (long long)sds_len(c->argv[idx + 1]->ptr) > l.max_value;
        o = big ? zset_create_skiplist() : zset_create_listpack();
        db_add(c->db, c->argv[1], o);
    }
    for (int j = 0; j < elements; j++) {
        sds m = c->argv[idx + 2 * j + 1]->ptr;
        int out;
        double newscore = scores[j];
        if (!zset_add(o, &l, scores[j], m, sds_len(m), in, &out, &newscore)) {
            reply_error(c, "resulting score is not a number (NaN)");
            goto done;
        }
        added += (out & ZADD_OUT_ADDED) != 0;
        updated += (out & ZADD_OUT_UPDATED) != 0;
        processed += !(out & ZADD_OUT_NOP);
        score = newscore;
    }
    if (added + updated) {
        db_signal_modified(c->db, c->argv[1]);
        notify_keyspace_event(c->srv, NOTIFY_ZSET, incr ? "zincr" : "zadd", c->argv[1], c->db->id);
    }
reply:
    if (incr) {
        if (processed) reply_double(c, score);
        else reply_null(c);
    } else {
        reply_ll(c, ch ? added + updated : added);
    }
done:
    zfree(scores);
}

static void cmd_zadd(client_t *c) { zadd_generic(c, 0); }

static void cmd_zincrby(client_t *c) {
    /* ZINCRBY key incr member is ZADD key INCR incr member. */
    double by;
    if (!get_score_or_reply(c, c->argv[2], &by, NULL)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, true, &wrongtype);
    if (wrongtype) return;
    zset_limits_t l = zset_limits(c);
    sds m = c->argv[3]->ptr;
    if (!o) {
        bool big = l.max_entries == 0 || (long long)sds_len(m) > l.max_value;
        o = big ? zset_create_skiplist() : zset_create_listpack();
        db_add(c->db, c->argv[1], o);
    }
    int out;
    double newscore = by;
    if (!zset_add(o, &l, by, m, sds_len(m), ZADD_IN_INCR, &out, &newscore)) {
        reply_error(c, "resulting score is not a number (NaN)");
        return;
    }
    db_signal_modified(c->db, c->argv[1]);
    /* An increment that leaves the score as it was publishes nothing. */
    if (out & (ZADD_OUT_ADDED | ZADD_OUT_UPDATED))
        notify_keyspace_event(c->srv, NOTIFY_ZSET, "zincr", c->argv[1], c->db->id);
    reply_double(c, newscore);
}

/* ------------------------------------------------------------ single members */

static void cmd_zrem(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, true, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    long long removed = 0;
    for (int j = 2; j < c->argc && zset_length(o) > 0; j++)
        removed += zset_delete(o, c->argv[j]->ptr, sds_len(c->argv[j]->ptr));
    zset_after_write(c, c->argv[1], o, removed > 0 ? "zrem" : NULL);
    reply_ll(c, removed);
}

static void cmd_zscore(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    double s;
    if (o && zset_score(o, c->argv[2]->ptr, sds_len(c->argv[2]->ptr), &s)) reply_double(c, s);
    else reply_null(c);
}

static void cmd_zmscore(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double s;
        if (o && zset_score(o, c->argv[j]->ptr, sds_len(c->argv[j]->ptr), &s)) reply_double(c, s);
        else reply_null(c);
    }
}

static void cmd_zcard(client_t *c) {
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (!wrongtype) reply_ll(c, o ? (long long)zset_length(o) : 0);
}

/* ZRANK/ZREVRANK key member [WITHSCORE] (Redis 7.2): the rank, or with
 * WITHSCORE the rank and the score, null (an array null) when absent. */
static void zrank_generic(client_t *c, bool rev) {
    if (c->argc > 4) {
        reply_error_arity(c);
        return;
    }
    bool withscore = c->argc == 4;
    if (withscore && strcasecmp(c->argv[3]->ptr, "withscore")) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    sds m = c->argv[2]->ptr;
    long r = o ? zset_rank(o, m, sds_len(m), rev) : -1;
    double score = 0;
    if (r < 0) {
        if (withscore) reply_null_array(c);
        else reply_null(c);
        return;
    }
    if (withscore) {
        zset_score(o, m, sds_len(m), &score);
        reply_array_len(c, 2);
    }
    reply_ll(c, r);
    if (withscore) reply_double(c, score);
}

static void cmd_zrank(client_t *c) { zrank_generic(c, false); }
static void cmd_zrevrank(client_t *c) { zrank_generic(c, true); }

/* ------------------------------------------------------------ ZCOUNT / ZLEXCOUNT */

/* Members from the cursor onwards that pass inside(); the cursor starts at
 * the first member of the range, so the walk stops at the first miss. */
typedef bool zset_inside_fn(zset_cursor_t *cur, const void *range);

static bool inside_score(zset_cursor_t *cur, const void *range) {
    return zsl_value_lte_max(zset_cursor_score(cur), range);
}

static bool inside_lex(zset_cursor_t *cur, const void *range) {
    size_t len;
    const char *m = zset_cursor_member(cur, &len);
    return zsl_lex_lte_max(m, len, range);
}

static unsigned long count_from(zset_cursor_t *cur, zset_inside_fn *inside, const void *range) {
    robj *o = cur->o;
    if (!zset_cursor_valid(cur)) return 0;
    if (o->encoding == OBJ_ENCODING_SKIPLIST) {
        /* Ranks of the first and last members in range: O(log n). */
        zset_t *zs = o->ptr;
        zsl_node_t *first = cur->node;
        zsl_node_t *last = inside == inside_score ? zsl_last_in_range(zs->zsl, range)
                                                  : zsl_last_in_lex_range(zs->zsl, range);
        if (!last) return 0;
        unsigned long a = zsl_get_rank(zs->zsl, first->score, first->ele);
        unsigned long b = zsl_get_rank(zs->zsl, last->score, last->ele);
        return b >= a ? b - a + 1 : 0;
    }
    unsigned long n = 0;
    for (; zset_cursor_valid(cur) && inside(cur, range); zset_cursor_next(cur)) n++;
    return n;
}

static void cmd_zcount(client_t *c) {
    zsl_range_t r;
    if (!zsl_parse_range(c->argv[2]->ptr, c->argv[3]->ptr, &r)) {
        reply_error(c, ERR_MINMAX);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    zset_cursor_t cur;
    zset_cursor_in_range(&cur, o, &r, false);
    reply_ll(c, (long long)count_from(&cur, inside_score, &r));
}

static void cmd_zlexcount(client_t *c) {
    zsl_lex_range_t r;
    sds a = c->argv[2]->ptr, b = c->argv[3]->ptr;
    if (!zsl_parse_lex_range(a, sds_len(a), b, sds_len(b), &r)) {
        reply_error(c, ERR_LEX);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (!wrongtype) {
        if (!o) {
            reply_ll(c, 0);
        } else {
            zset_cursor_t cur;
            zset_cursor_in_lex(&cur, o, &r, false);
            reply_ll(c, (long long)count_from(&cur, inside_lex, &r));
        }
    }
    zsl_free_lex_range(&r);
}

/* ------------------------------------------------------------ range results */

/* Where a range's members go: to the client (with or without scores) or
 * into a new zset stored at dstkey (ZRANGESTORE). */
typedef struct zrange_out {
    client_t *c;
    robj *dstkey; /* NULL: reply to the client */
    robj *dst;    /* the zset being built when storing */
    bool withscores;
    void *slot; /* deferred reply length, when unknown */
    long count;
    zset_limits_t lim;
} zrange_out_t;

/* length < 0: unknown yet (a deferred length is used). */
static void zout_begin(zrange_out_t *out, long length) {
    out->count = 0;
    out->slot = NULL;
    if (out->dstkey) {
        out->dst = length >= 0 && length > out->lim.max_entries ? zset_create_skiplist() : zset_create_listpack();
        return;
    }
    if (length < 0) out->slot = reply_deferred_len(out->c);
    else reply_array_len(out->c, out->withscores && out->c->resp == 2 ? length * 2 : length);
}

static void zout_emit(zrange_out_t *out, const char *m, size_t len, double score) {
    out->count++;
    if (out->dstkey) {
        int flags;
        zset_add(out->dst, &out->lim, score, m, len, 0, &flags, NULL);
        return;
    }
    client_t *c = out->c;
    if (out->withscores && c->resp > 2) reply_array_len(c, 2);
    reply_bulk(c, m, len);
    if (out->withscores) reply_double(c, score);
}

static void zout_finish(zrange_out_t *out) {
    client_t *c = out->c;
    if (!out->dstkey) {
        if (out->slot)
            reply_set_deferred_array_len(c, out->slot, out->withscores && c->resp == 2 ? out->count * 2 : out->count);
        return;
    }
    zset_store(c, out->dstkey, out->dst, "zrangestore"); /* only ZRANGESTORE has a dstkey here */
    reply_ll(c, out->count);
}

static void range_by_rank(zrange_out_t *out, robj *o, long long start, long long end, bool rev) {
    long long llen = (long long)zset_length(o);
    if (start < 0) start += llen;
    if (end < 0) end += llen;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        zout_begin(out, 0);
        zout_finish(out);
        return;
    }
    if (end >= llen) end = llen - 1;
    long n = (long)(end - start + 1);
    zout_begin(out, n);
    zset_cursor_t cur;
    zset_cursor_at_rank(&cur, o, (unsigned long)start, rev);
    for (; n-- && zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t len;
        const char *m = zset_cursor_member(&cur, &len);
        zout_emit(out, m, len, zset_cursor_score(&cur));
    }
    zout_finish(out);
}

/* BYSCORE and BYLEX share the walk: position, skip offset, emit up to
 * limit members while still inside the far end of the range.  A negative
 * offset yields nothing and a negative limit means no limit, as in Redis. */
static void range_walk(zrange_out_t *out, robj *o, zset_cursor_t *cur, bool lex, const void *range,
                       long long offset, long long limit) {
    if (offset > 0 && (unsigned long long)offset >= zset_length(o)) {
        zout_begin(out, 0);
        zout_finish(out);
        return;
    }
    zout_begin(out, -1);
    if (offset < 0) {
        zout_finish(out);
        return;
    }
    while (zset_cursor_valid(cur) && offset--) zset_cursor_next(cur);
    if (limit < 0) limit = -1; /* any negative count means all; -1 never reaches 0 (nor overflows) */
    for (; zset_cursor_valid(cur) && limit != 0; zset_cursor_next(cur), limit--) {
        size_t len;
        const char *m = zset_cursor_member(cur, &len);
        double s = zset_cursor_score(cur);
        bool in;
        if (lex) in = cur->rev ? zsl_lex_gte_min(m, len, range) : zsl_lex_lte_max(m, len, range);
        else in = cur->rev ? zsl_value_gte_min(s, range) : zsl_value_lte_max(s, range);
        if (!in) break;
        zout_emit(out, m, len, s);
    }
    zout_finish(out);
}

enum { ZR_AUTO,
       ZR_RANK,
       ZR_SCORE,
       ZR_LEX };
enum { ZD_AUTO,
       ZD_FWD,
       ZD_REV };

/* Every ZRANGE flavour.  argv[first] is the source key, then min and max,
 * then options; dstkey set for ZRANGESTORE. */
static void zrange_generic(client_t *c, int first, robj *dstkey, int type, int dir) {
    long long start = 0, end = 0, offset = 0, limit = -1;
    bool withscores = false, has_limit = false;
    for (int j = first + 3; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        int left = c->argc - j - 1;
        if (!dstkey && !strcasecmp(a, "withscores")) {
            withscores = true;
        } else if (!strcasecmp(a, "limit") && left >= 2) {
            if (!cmd_get_ll_or_reply(c, c->argv[j + 1], &offset, NULL) ||
                !cmd_get_ll_or_reply(c, c->argv[j + 2], &limit, NULL))
                return;
            has_limit = true;
            j += 2;
        } else if (dir == ZD_AUTO && !strcasecmp(a, "rev")) {
            dir = ZD_REV;
        } else if (type == ZR_AUTO && !strcasecmp(a, "bylex")) {
            type = ZR_LEX;
        } else if (type == ZR_AUTO && !strcasecmp(a, "byscore")) {
            type = ZR_SCORE;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    if (dir == ZD_AUTO) dir = ZD_FWD;
    if (type == ZR_AUTO) type = ZR_RANK;
    if (has_limit && limit != -1 && type == ZR_RANK) {
        reply_error(c, "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == ZR_LEX) {
        reply_error(c, "syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    bool rev = dir == ZD_REV;
    int minidx = first + 1, maxidx = first + 2;
    if (rev && type != ZR_RANK) { /* given as max, min */
        minidx = first + 2;
        maxidx = first + 1;
    }
    zsl_range_t range;
    zsl_lex_range_t lex;
    if (type == ZR_RANK) {
        if (!cmd_get_ll_or_reply(c, c->argv[minidx], &start, NULL) || !cmd_get_ll_or_reply(c, c->argv[maxidx], &end, NULL))
            return;
    } else if (type == ZR_SCORE) {
        if (!zsl_parse_range(c->argv[minidx]->ptr, c->argv[maxidx]->ptr, &range)) {
            reply_error(c, ERR_MINMAX);
            return;
        }
    } else {
        sds a = c->argv[minidx]->ptr, b = c->argv[maxidx]->ptr;
        if (!zsl_parse_lex_range(a, sds_len(a), b, sds_len(b), &lex)) {
            reply_error(c, ERR_LEX);
            return;
        }
    }
    zrange_out_t out = {c, dstkey, NULL, withscores || dstkey, NULL, 0, zset_limits(c)};
    robj *o = db_lookup_read(c->db, c->argv[first], LOOKUP_NONE);
    if (!o) {
        if (dstkey) {
            zout_begin(&out, -1);
            zout_finish(&out);
        } else {
            reply_empty_array(c);
        }
    } else if (db_check_type_or_reply(c, o, OBJ_ZSET)) {
        zset_cursor_t cur;
        if (type == ZR_RANK) {
            range_by_rank(&out, o, start, end, rev);
        } else if (type == ZR_SCORE) {
            zset_cursor_in_range(&cur, o, &range, rev);
            range_walk(&out, o, &cur, false, &range, offset, limit);
        } else {
            zset_cursor_in_lex(&cur, o, &lex, rev);
            range_walk(&out, o, &cur, true, &lex, offset, limit);
        }
    }
    if (type == ZR_LEX) zsl_free_lex_range(&lex);
}

static void cmd_zrange(client_t *c) { zrange_generic(c, 1, NULL, ZR_AUTO, ZD_AUTO); }
static void cmd_zrangestore(client_t *c) { zrange_generic(c, 2, c->argv[1], ZR_AUTO, ZD_AUTO); }
static void cmd_zrevrange(client_t *c) { zrange_generic(c, 1, NULL, ZR_RANK, ZD_REV); }
static void cmd_zrangebyscore(client_t *c) { zrange_generic(c, 1, NULL, ZR_SCORE, ZD_FWD); }
static void cmd_zrevrangebyscore(client_t *c) { zrange_generic(c, 1, NULL, ZR_SCORE, ZD_REV); }
static void cmd_zrangebylex(client_t *c) { zrange_generic(c, 1, NULL, ZR_LEX, ZD_FWD); }
static void cmd_zrevrangebylex(client_t *c) { zrange_generic(c, 1, NULL, ZR_LEX, ZD_REV); }

/* ------------------------------------------------------------ ZREMRANGEBY* */

static void zremrange_generic(client_t *c, int type) {
    long long start = 0, end = 0;
    zsl_range_t range;
    zsl_lex_range_t lex;
    if (type == ZR_RANK) {
        if (!cmd_get_ll_or_reply(c, c->argv[2], &start, NULL) || !cmd_get_ll_or_reply(c, c->argv[3], &end, NULL)) return;
    } else if (type == ZR_SCORE) {
        if (!zsl_parse_range(c->argv[2]->ptr, c->argv[3]->ptr, &range)) {
            reply_error(c, ERR_MINMAX);
            return;
        }
    } else {
        sds a = c->argv[2]->ptr, b = c->argv[3]->ptr;
        if (!zsl_parse_lex_range(a, sds_len(a), b, sds_len(b), &lex)) {
            reply_error(c, ERR_LEX);
            return;
        }
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, true, &wrongtype);
    unsigned long removed = 0;
    if (wrongtype) goto done;
    if (!o) {
        reply_ll(c, 0);
        goto done;
    }
    if (type == ZR_RANK) {
        long long llen = (long long)zset_length(o);
        if (start < 0) start += llen;
        if (end < 0) end += llen;
        if (start < 0) start = 0;
        if (start > end || start >= llen) {
            reply_ll(c, 0);
            goto done;
        }
        if (end >= llen) end = llen - 1;
        removed = zset_delete_range_by_rank(o, (unsigned long)start, (unsigned long)end);
    } else if (type == ZR_SCORE) {
        removed = zset_delete_range_by_score(o, &range);
    } else {
        removed = zset_delete_range_by_lex(o, &lex);
    }
    static const char *const events[] = {[ZR_RANK] = "zremrangebyrank", [ZR_SCORE] = "zremrangebyscore", [ZR_LEX] = "zremrangebylex"};
    zset_after_write(c, c->argv[1], o, removed > 0 ? events[type] : NULL);
    reply_ll(c, (long long)removed);
done:
    if (type == ZR_LEX) zsl_free_lex_range(&lex);
}

static void cmd_zremrangebyrank(client_t *c) { zremrange_generic(c, ZR_RANK); }
static void cmd_zremrangebyscore(client_t *c) { zremrange_generic(c, ZR_SCORE); }
static void cmd_zremrangebylex(client_t *c) { zremrange_generic(c, ZR_LEX); }

/* ------------------------------------------------------------ pops */

/* Pop up to count members (count -1: one, flat reply) from the first
 * non-empty zset among keys.  emitkey: ZMPOP's [key, [[m, s] ...]] shape. */
static void zpop_generic(client_t *c, robj **keys, int nkeys, bool max, bool emitkey, long long count,
                         bool nested, bool null_when_empty) {
    robj *o = NULL, *key = NULL;
    for (int i = 0; i < nkeys && !o; i++) {
        key = keys[i];
        o = db_lookup_write(c->db, key);
        if (o && !db_check_type_or_reply(c, o, OBJ_ZSET)) return;
    }
    if (!o) {
        if (null_when_empty) reply_null_array(c);
        else reply_empty_array(c);
        return;
    }
    if (count == 0) {
        reply_empty_array(c);
        return;
    }
    if (count == -1) count = 1;
    long long llen = (long long)zset_length(o);
    long n = (long)(count > llen ? llen : count);
    if (emitkey) {
        reply_array_len(c, 2);
        reply_bulk(c, key->ptr, sds_len(key->ptr));
        reply_array_len(c, n);
    } else {
        reply_array_len(c, nested ? n : n * 2);
    }
    for (long i = 0; i < n; i++) {
        zset_cursor_t cur;
        zset_cursor_at_rank(&cur, o, 0, max);
        size_t len;
        const char *m = zset_cursor_member(&cur, &len);
        sds copy = sds_newlen(m, len);
        double s = zset_cursor_score(&cur);
        zset_delete(o, copy, len);
        if (nested) reply_array_len(c, 2);
        reply_bulk_sds_take(c, copy);
        reply_double(c, s);
    }
    /* ZMPOP is logged as the pop it did, as Redis 7.0 logs it */
    if (emitkey) persist_propagate_pop(c, max ? "ZPOPMAX" : "ZPOPMIN", key, n);
    zset_after_write(c, key, o, max ? "zpopmax" : "zpopmin");
}

static void zpopminmax(client_t *c, bool max) {
    if (c->argc > 3) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    long long count = -1;
    if (c->argc == 3 && !cmd_get_range_or_reply(c, c->argv[2], 0, LLONG_MAX, &count, RL_ERR_POSITIVE)) return;
    zpop_generic(c, &c->argv[1], 1, max, false, count, c->resp > 2 && count != -1, false);
}

static void cmd_zpopmin(client_t *c) { zpopminmax(c, false); }
static void cmd_zpopmax(client_t *c) { zpopminmax(c, true); }

static void cmd_zmpop(client_t *c) {
    long long numkeys, count = -1;
    if (!cmd_get_range_or_reply(c, c->argv[1], 1, LONG_MAX, &numkeys, "numkeys should be greater than 0")) return;
    long long where_idx = 1 + numkeys + 1;
    if (where_idx >= c->argc) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool max;
    if (!strcasecmp(c->argv[where_idx]->ptr, "min")) max = false;
    else if (!strcasecmp(c->argv[where_idx]->ptr, "max")) max = true;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    for (long long j = where_idx + 1; j < c->argc; j++) {
        if (count == -1 && !strcasecmp(c->argv[j]->ptr, "count") && j + 1 < c->argc) {
            if (!cmd_get_range_or_reply(c, c->argv[++j], 1, LONG_MAX, &count, "count should be greater than 0")) return;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    if (count == -1) count = 1;
    zpop_generic(c, &c->argv[2], (int)numkeys, max, true, count, true, true);
}

/* ------------------------------------------------------------ ZRANDMEMBER */

static void reply_member_score(client_t *c, zset_cursor_t *cur, bool withscores) {
    size_t len;
    const char *m = zset_cursor_member(cur, &len);
    if (withscores && c->resp > 2) reply_array_len(c, 2);
    reply_bulk(c, m, len);
    if (withscores) reply_double(c, zset_cursor_score(cur));
}

static void zrandmember_with_count(client_t *c) {
    long long l;
    if (!cmd_get_range_or_reply(c, c->argv[2], -LONG_MAX, LONG_MAX, &l, NULL)) return;
    bool withscores = false;
    if (c->argc > 4 || (c->argc == 4 && strcasecmp(c->argv[3]->ptr, "withscores"))) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    if (c->argc == 4) {
        withscores = true;
        if (l < -LONG_MAX / 2 || l > LONG_MAX / 2) {
            reply_error(c, "value is out of range");
            return;
        }
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    if (!o || l == 0) {
        reply_empty_array(c);
        return;
    }
    unsigned long size = zset_length(o);
    bool repeat = l < 0;
    unsigned long count = (unsigned long)(repeat ? -l : l);
    if (!repeat && count > size) count = size;
    reply_array_len(c, (long)(withscores && c->resp == 2 ? count * 2 : count));
    zset_cursor_t cur;
    if (repeat) {
        while (count--) {
            zset_cursor_at_rank(&cur, o, util_random_below(size), false);
            reply_member_score(c, &cur, withscores);
        }
        return;
    }
    /* Selection sampling over the rank order: exactly count distinct. */
    unsigned long left = size;
    for (zset_cursor_at_rank(&cur, o, 0, false); count && zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        if (util_random_below(left--) < count) {
            reply_member_score(c, &cur, withscores);
            count--;
        }
    }
}

static void cmd_zrandmember(client_t *c) {
    if (c->argc >= 3) {
        zrandmember_with_count(c);
        return;
    }
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        reply_null(c);
        return;
    }
    zset_cursor_t cur;
    zset_cursor_at_rank(&cur, o, util_random_below(zset_length(o)), false);
    reply_member_score(c, &cur, false);
}

/* ------------------------------------------------------------ ZUNION / ZINTER / ZDIFF */

enum { ZOP_UNION,
       ZOP_INTER,
       ZOP_DIFF };
enum { AGG_SUM,
       AGG_MIN,
       AGG_MAX };

typedef struct zop_src {
    robj *o; /* zset, set, or NULL (missing = empty) */
    double weight;
} zop_src_t;

static unsigned long src_size(const zop_src_t *s) {
    if (!s->o) return 0;
    return s->o->type == OBJ_ZSET ? zset_length(s->o) : set_type_size(s->o);
}

static bool src_score(const zop_src_t *s, const char *m, size_t len, double *score) {
    if (!s->o) return false;
    if (s->o->type == OBJ_SET) {
        *score = 1.0;
        return set_type_is_member(s->o, m, len);
    }
    return zset_score(s->o, m, len, score);
}

static void aggregate(double *target, double v, int agg) {
    if (agg == AGG_SUM) {
        *target += v;
        if (isnan(*target)) *target = 0.0; /* inf + -inf counts as 0 */
    } else if (agg == AGG_MIN) {
        if (v < *target) *target = v;
    } else if (v > *target) {
        *target = v;
    }
}

/* The accumulating result: a skiplist zset; maxlen/totlen decide whether it
 * can become a listpack at the end. */
typedef struct zop_acc {
    robj *dst;
    zset_limits_t none; /* limits that never convert while building */
    size_t maxlen, totlen;
    int agg;
    double weight;         /* of the source being read */
    const zop_src_t *srcs; /* ZINTER/ZDIFF: every source */
    int nsrc, op;
} zop_acc_t;

/* Visit (member, score) of one source: its zset members or set members. */
typedef void zop_visit_fn(zop_acc_t *acc, const char *m, size_t len, double score);

typedef struct {
    zop_acc_t *acc;
    zop_visit_fn *fn;
} set_visit_ctx;

static void set_visit(void *arg, const char *s, size_t len) {
    set_visit_ctx *v = arg;
    v->fn(v->acc, s, len, 1.0);
}

static void src_foreach(const zop_src_t *s, zop_acc_t *acc, zop_visit_fn *fn) {
    if (!s->o) return;
    if (s->o->type == OBJ_SET) {
        set_visit_ctx v = {acc, fn};
        set_type_foreach(s->o, set_visit, &v);
        return;
    }
    /* The result is always a fresh object, never one of the sources, so
     * walking a source while the result grows is safe. */
    zset_cursor_t cur;
    for (zset_cursor_at_rank(&cur, s->o, 0, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t len;
        const char *m = zset_cursor_member(&cur, &len);
        fn(acc, m, len, zset_cursor_score(&cur));
    }
}

static void acc_insert(zop_acc_t *acc, const char *m, size_t len, double score) {
    int out;
    zset_add(acc->dst, &acc->none, score, m, len, 0, &out, NULL);
    if (len > acc->maxlen) acc->maxlen = len;
    acc->totlen += len;
}

static void visit_union(zop_acc_t *acc, const char *m, size_t len, double score) {
    double v = acc->weight * score, cur;
    if (isnan(v)) v = 0;
    if (zset_score(acc->dst, m, len, &cur)) {
        aggregate(&cur, v, acc->agg);
        int out;
        zset_add(acc->dst, &acc->none, cur, m, len, ZADD_IN_XX, &out, NULL);
    } else {
        acc_insert(acc, m, len, v);
    }
}

static void visit_inter(zop_acc_t *acc, const char *m, size_t len, double score) {
    double v = acc->srcs[0].weight * score;
    if (isnan(v)) v = 0;
    for (int j = 1; j < acc->nsrc; j++) {
        double s;
        if (acc->srcs[j].o == acc->srcs[0].o) s = score;
        else if (!src_score(&acc->srcs[j], m, len, &s)) return;
        aggregate(&v, s * acc->srcs[j].weight, acc->agg);
    }
    acc_insert(acc, m, len, v);
}

static void visit_diff(zop_acc_t *acc, const char *m, size_t len, double score) {
    for (int j = 1; j < acc->nsrc; j++) {
        double s;
        if (acc->srcs[j].o == acc->srcs[0].o || src_score(&acc->srcs[j], m, len, &s)) return;
    }
    acc_insert(acc, m, len, score);
}

/* Stable sort by ascending size, as Redis 7.0 does for union and
 * intersection: the order in which floating-point sums are taken must
 * match, or the last digit of a score can differ. */
static void sort_sources(zop_src_t *s, int n) {
    for (int i = 1; i < n; i++) {
        zop_src_t x = s[i];
        int j = i - 1;
        while (j >= 0 && src_size(&s[j]) > src_size(&x)) {
            s[j + 1] = s[j];
            j--;
        }
        s[j + 1] = x;
    }
}

/* ZUNION/ZINTER/ZDIFF[STORE]: argv[numkeys_idx] is numkeys; dstkey set for
 * the STORE forms. */
static void zop_generic(client_t *c, int numkeys_idx, robj *dstkey, int op) {
    long long setnum;
    if (!cmd_get_ll_or_reply(c, c->argv[numkeys_idx], &setnum, NULL)) return;
    if (setnum < 1) {
        reply_error(c, "at least 1 input key is needed for '%s' command", c->cmd->fullname);
        return;
    }
    if (setnum > c->argc - (numkeys_idx + 1)) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    int n = (int)setnum, j = numkeys_idx + 1;
    zop_src_t *src = zmalloc(sizeof(zop_src_t) * (size_t)n);
    for (int i = 0; i < n; i++, j++) {
        robj *o = dstkey ? db_lookup_write(c->db, c->argv[j]) : db_lookup_read(c->db, c->argv[j], LOOKUP_NONE);
        if (o && o->type != OBJ_ZSET && o->type != OBJ_SET) {
            reply_error(c, RL_ERR_WRONGTYPE);
            goto done;
        }
        src[i].o = o;
        src[i].weight = 1.0;
    }
    int agg = AGG_SUM;
    bool withscores = false;
    while (j < c->argc) {
        int remaining = c->argc - j;
        const char *a = c->argv[j]->ptr;
        if (op != ZOP_DIFF && remaining >= n + 1 && !strcasecmp(a, "weights")) {
            j++;
            for (int i = 0; i < n; i++, j++)
                if (!get_score_or_reply(c, c->argv[j], &src[i].weight, "weight value is not a float")) goto done;
        } else if (op != ZOP_DIFF && remaining >= 2 && !strcasecmp(a, "aggregate")) {
            const char *v = c->argv[j + 1]->ptr;
            if (!strcasecmp(v, "sum")) agg = AGG_SUM;
            else if (!strcasecmp(v, "min")) agg = AGG_MIN;
            else if (!strcasecmp(v, "max")) agg = AGG_MAX;
            else {
                reply_error(c, RL_ERR_SYNTAX);
                goto done;
            }
            j += 2;
        } else if (!dstkey && !strcasecmp(a, "withscores")) {
            withscores = true;
            j++;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            goto done;
        }
    }
    zop_acc_t acc = {zset_create_skiplist(), {LLONG_MAX, LLONG_MAX}, 0, 0, agg, 1.0, src, n, op};
    if (op == ZOP_UNION) {
        sort_sources(src, n);
        for (int i = 0; i < n; i++) {
            acc.weight = src[i].weight;
            src_foreach(&src[i], &acc, visit_union);
        }
    } else {
        if (op == ZOP_INTER) sort_sources(src, n);
        bool empty = op == ZOP_INTER ? src_size(&src[0]) == 0 : !src[0].o;
        if (!empty) src_foreach(&src[0], &acc, op == ZOP_INTER ? visit_inter : visit_diff);
    }
    if (dstkey) {
        long long len = (long long)zset_length(acc.dst);
        if (len) {
            zset_limits_t l = zset_limits(c);
            zset_convert_to_listpack_if_fits(acc.dst, &l, acc.maxlen, acc.totlen);
        }
        static const char *const events[] = {[ZOP_UNION] = "zunionstore", [ZOP_INTER] = "zinterstore", [ZOP_DIFF] = "zdiffstore"};
        zset_store(c, dstkey, acc.dst, events[op]);
        reply_ll(c, len);
        goto done;
    }
    zrange_out_t out = {c, NULL, NULL, withscores, NULL, 0, zset_limits(c)};
    range_by_rank(&out, acc.dst, 0, -1, false);
    obj_decref(acc.dst);
done:
    zfree(src);
}

/* ZINTERCARD numkeys key ... [LIMIT n]: the size of the intersection,
 * counting stops at n (0 = no limit). */
static void cmd_zintercard(client_t *c) {
    long long setnum, limit = 0;
    if (!cmd_get_ll_or_reply(c, c->argv[1], &setnum, NULL)) return;
    if (setnum < 1) {
        reply_error(c, "at least 1 input key is needed for '%s' command", c->cmd->fullname);
        return;
    }
    if (setnum > c->argc - 2) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    int n = (int)setnum, j = 2;
    zop_src_t *src = zmalloc(sizeof(zop_src_t) * (size_t)n);
    for (int i = 0; i < n; i++, j++) {
        robj *o = db_lookup_read(c->db, c->argv[j], LOOKUP_NONE);
        if (o && o->type != OBJ_ZSET && o->type != OBJ_SET) {
            reply_error(c, RL_ERR_WRONGTYPE);
            goto done;
        }
        src[i] = (zop_src_t){o, 1.0};
    }
    while (j < c->argc) {
        if (c->argc - j >= 2 && !strcasecmp(c->argv[j]->ptr, "limit")) {
            if (!cmd_get_range_or_reply(c, c->argv[j + 1], 0, LONG_MAX, &limit, "LIMIT can't be negative")) goto done;
            j += 2;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            goto done;
        }
    }
    sort_sources(src, n);
    long long count = 0;
    if (src[0].o && src_size(&src[0])) {
        /* The accumulator only collects the members; its scores are unused. */
        zop_acc_t acc = {zset_create_skiplist(), {LLONG_MAX, LLONG_MAX}, 0, 0, AGG_SUM, 1.0, src, n, ZOP_INTER};
        src_foreach(&src[0], &acc, visit_inter);
        count = (long long)zset_length(acc.dst);
        obj_decref(acc.dst);
    }
    reply_ll(c, limit && count > limit ? limit : count);
done:
    zfree(src);
}

static void cmd_zunion(client_t *c) { zop_generic(c, 1, NULL, ZOP_UNION); }
static void cmd_zinter(client_t *c) { zop_generic(c, 1, NULL, ZOP_INTER); }
static void cmd_zdiff(client_t *c) { zop_generic(c, 1, NULL, ZOP_DIFF); }
static void cmd_zunionstore(client_t *c) { zop_generic(c, 2, c->argv[1], ZOP_UNION); }
static void cmd_zinterstore(client_t *c) { zop_generic(c, 2, c->argv[1], ZOP_INTER); }
static void cmd_zdiffstore(client_t *c) { zop_generic(c, 2, c->argv[1], ZOP_DIFF); }

/* ------------------------------------------------------------ ZSCAN */

/* Scores in ZSCAN are bulk strings in every protocol, as in Redis. */
static void reply_score_bulk(client_t *c, double score) {
    char buf[64];
    int n = util_d2str(buf, sizeof(buf), score);
    reply_bulk(c, buf, (size_t)n);
}

/* A listpack walk for ZSCAN: the cursor moves on at the next call, so the
 * member named last (possibly in the cursor's integer buffer) stays valid
 * while it is matched and replied. */
typedef struct zscan_walk {
    zset_cursor_t cur;
    bool started;
} zscan_walk_t;

static bool zscan_next(void *state, const char **s, size_t *len) {
    zscan_walk_t *w = state;
    if (w->started) zset_cursor_next(&w->cur);
    w->started = true;
    if (!zset_cursor_valid(&w->cur)) return false;
    *s = zset_cursor_member(&w->cur, len);
    return true;
}

static long zscan_emit(client_t *c, void *state, dict_entry *de, const char *m, size_t len) {
    (void)de; /* compact source only */
    reply_bulk(c, m, len);
    /* From the double, not the stored text: the listpack keeps the shortest
     * form (0.1), Redis 7.0 replies %.17g in both encodings. */
    reply_score_bulk(c, zset_cursor_score(&((zscan_walk_t *)state)->cur));
    return 2;
}

/* Skiplist encoding: the member table's entries are the skiplist nodes. */
static sds zscan_node_member(void *node) { return ((zsl_node_t *)node)->ele; }
static long zscan_emit_node(client_t *c, void *node) {
    zsl_node_t *n = node;
    reply_bulk(c, n->ele, sds_len(n->ele));
    reply_score_bulk(c, n->score);
    return 2;
}

static void cmd_zscan(client_t *c) {
    scan_args_t a;
    if (!scan_args_parse_or_reply(c, 2, 0, &a)) return;
    bool wrongtype;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &wrongtype);
    if (wrongtype) return;
    if (!o) {
        scan_reply_empty(c);
        return;
    }
    zscan_walk_t w = {.started = false};
    scan_source_t src = {.next = zscan_next, .emit = zscan_emit, .state = &w};
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        zset_cursor_at_rank(&w.cur, o, 0, false);
    } else {
        src.t = ((zset_t *)o->ptr)->members;
        src.t_name = zscan_node_member;
        src.t_emit = zscan_emit_node;
    }
    scan_reply(c, &a, &src);
}

command_t zset_commands[] = {
    {"zadd", cmd_zadd, -4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "sorted_set", "Add one or more members to a sorted set, or update its score if it already exists", "1.2.0", NULL},
    {"zincrby", cmd_zincrby, 4, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "sorted_set", "Increment the score of a member in a sorted set", "1.2.0", NULL},
    {"zrem", cmd_zrem, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "sorted_set", "Remove one or more members from a sorted set", "1.2.0", NULL},
    {"zscore", cmd_zscore, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Get the score associated with the given member in a sorted set", "1.2.0", NULL},
    {"zmscore", cmd_zmscore, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Get the score associated with the given members in a sorted set", "6.2.0", NULL},
    {"zcard", cmd_zcard, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Get the number of members in a sorted set", "1.2.0", NULL},
    {"zcount", cmd_zcount, 4, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Count the members in a sorted set with scores within the given values", "2.0.0", NULL},
    {"zlexcount", cmd_zlexcount, 4, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Count the number of members in a sorted set between a given lexicographical range", "2.8.9", NULL},
    {"zrange", cmd_zrange, -4, CMD_READONLY, 1, 1, 1, "sorted_set", "Return a range of members in a sorted set", "1.2.0", NULL},
    {"zrangestore", cmd_zrangestore, -5, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, "sorted_set", "Store a range of members from sorted set into another key", "6.2.0", NULL},
    {"zrangebyscore", cmd_zrangebyscore, -4, CMD_READONLY, 1, 1, 1, "sorted_set", "Return a range of members in a sorted set, by score", "1.0.5", NULL},
    {"zrevrangebyscore", cmd_zrevrangebyscore, -4, CMD_READONLY, 1, 1, 1, "sorted_set", "Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0", NULL},
    {"zrangebylex", cmd_zrangebylex, -4, CMD_READONLY, 1, 1, 1, "sorted_set", "Return a range of members in a sorted set, by lexicographical range", "2.8.9", NULL},
    {"zrevrangebylex", cmd_zrevrangebylex, -4, CMD_READONLY, 1, 1, 1, "sorted_set", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9", NULL},
    {"zrevrange", cmd_zrevrange, -4, CMD_READONLY, 1, 1, 1, "sorted_set", "Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0", NULL},
    {"zrank", cmd_zrank, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Determine the index of a member in a sorted set", "2.0.0", NULL},
    {"zrevrank", cmd_zrevrank, -3, CMD_READONLY | CMD_FAST, 1, 1, 1, "sorted_set", "Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0", NULL},
    {"zpopmin", cmd_zpopmin, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, "sorted_set", "Remove and return members with the lowest scores in a sorted set", "5.0.0", NULL},
    {"zpopmax", cmd_zpopmax, -2, CMD_WRITE | CMD_FAST, 1, 1, 1, "sorted_set", "Remove and return members with the highest scores in a sorted set", "5.0.0", NULL},
    {"zmpop", cmd_zmpop, -4, CMD_WRITE, 0, 0, 0, "sorted_set", "Remove and return members with scores in a sorted set", "7.0.0", NULL},
    {"zrandmember", cmd_zrandmember, -2, CMD_READONLY, 1, 1, 1, "sorted_set", "Get one or multiple random elements from a sorted set", "6.2.0", NULL},
    {"zunionstore", cmd_zunionstore, -4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "sorted_set", "Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", NULL},
    {"zinterstore", cmd_zinterstore, -4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "sorted_set", "Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", NULL},
    {"zdiffstore", cmd_zdiffstore, -4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "sorted_set", "Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0", NULL},
    {"zunion", cmd_zunion, -3, CMD_READONLY, 0, 0, 0, "sorted_set", "Add multiple sorted sets", "6.2.0", NULL},
    {"zintercard", cmd_zintercard, -3, CMD_READONLY, 0, 0, 0, "sorted_set", "Intersect multiple sorted sets and return the cardinality of the result", "7.0.0", NULL},
    {"zinter", cmd_zinter, -3, CMD_READONLY, 0, 0, 0, "sorted_set", "Intersect multiple sorted sets", "6.2.0", NULL},
    {"zdiff", cmd_zdiff, -3, CMD_READONLY, 0, 0, 0, "sorted_set", "Subtract multiple sorted sets", "6.2.0", NULL},
    {"zremrangebyrank", cmd_zremrangebyrank, 4, CMD_WRITE, 1, 1, 1, "sorted_set", "Remove all members in a sorted set within the given indexes", "2.0.0", NULL},
    {"zremrangebyscore", cmd_zremrangebyscore, 4, CMD_WRITE, 1, 1, 1, "sorted_set", "Remove all members in a sorted set within the given scores", "1.2.0", NULL},
    {"zremrangebylex", cmd_zremrangebylex, 4, CMD_WRITE, 1, 1, 1, "sorted_set", "Remove all members in a sorted set between the given lexicographical range", "2.8.9", NULL},
    {"zscan", cmd_zscan, -3, CMD_READONLY, 1, 1, 1, "sorted_set", "Incrementally iterate sorted sets elements and associated scores", "2.8.0", NULL},
    {0},
};
