/* t_stream_cg.c: consumer-group commands of the stream type: XGROUP
 * (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP), XREADGROUP
 * (the reading itself is shared with XREAD in t_stream.c), XACK, XPENDING,
 * XCLAIM, XAUTOCLAIM and XINFO (STREAM [FULL], GROUPS, CONSUMERS, HELP).
 *
 * Replies, errors and keyspace events follow Redis 7.0.15, including
 * 7.0's entries-read / lag bookkeeping and XAUTOCLAIM's list of deleted
 * IDs.  Group state lives in stream.c's structures (stream.h); this file
 * only parses, checks and replies.  Callers: the command table. */
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "keyspace.h"
#include "notify.h"
#include "reply.h"
#include "t_stream.h"
#include "util.h"

/* Milliseconds from `since` to `now`.  Delivery and seen times come from
 * RESTORE payloads and RDB files too, where any 64-bit value passes (Redis
 * 7.0.15 takes a delivery time of -2^63 even under sanitize-dump-payload),
 * so the subtraction must not overflow: it wraps as two's complement, which
 * is what Redis's plain subtraction gives on every platform it runs on,
 * without the undefined behaviour. */
static long long elapsed_ms(long long now, long long since) {
    return (long long)((unsigned long long)now - (unsigned long long)since);
}

static void reply_nogroup_key(client_t *c, robj *key, robj *group) {
    reply_error(c, "NOGROUP No such key '%s' or consumer group '%s'", (char *)key->ptr, (char *)group->ptr);
}

/* The consumer, created (with its event) when missing; seen now. */
static stream_consumer_t *consumer_get(client_t *c, stream_cg_t *cg, robj *key, robj *name) {
    sds n = name->ptr;
    stream_consumer_t *cons = stream_consumer_lookup(cg, n, sds_len(n));
    long long now = stream_now(c);
    if (!cons) {
        cons = stream_consumer_create(cg, n, sds_len(n), now);
        c->srv->dirty++;
        notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-createconsumer", key, c->db->id);
    }
    cons->seen_time = now;
    return cons;
}

static void pel_remove(stream_cg_t *cg, const unsigned char *key16, stream_nack_t *nack) {
    rax_remove(cg->pel, key16, 16, NULL);
    rax_remove(nack->consumer->pel, key16, 16, NULL);
    stream_nack_free(nack);
}

static bool entry_exists(stream_t *s, const stream_id_t *id) {
    stream_iter_t it;
    stream_id_t got;
    int64_t nf;
    stream_iter_start(&it, s, id, id, false);
    bool ok = stream_iter_next(&it, &got, &nf);
    stream_iter_stop(&it);
    return ok;
}

/* Give nack (pending under key16) to consumer: delivery time and count. */
static void nack_move(stream_nack_t *nack, stream_consumer_t *consumer, const unsigned char *key16, long long now) {
    consumer->active_time = now; /* a claim makes it active (7.2) */
    if (nack->consumer != consumer) {
        if (nack->consumer) rax_remove(nack->consumer->pel, key16, 16, NULL);
        rax_insert(consumer->pel, key16, 16, nack, NULL);
        nack->consumer = consumer;
    }
}

/* ------------------------------------------------------------ XGROUP */

typedef struct xgroup_ctx {
    robj *o; /* the stream object or NULL */
    stream_t *s;
    stream_cg_t *cg;
} xgroup_ctx_t;

/* Common part of the subcommands taking <key> <group>: the key must exist
 * (except CREATE ... MKSTREAM), the group too for SETID and the consumer
 * subcommands. */
static bool xgroup_prelude_or_reply(client_t *c, xgroup_ctx_t *x, bool mkstream, bool create, bool need_group) {
    bool wrong;
    x->o = stream_lookup_or_reply(c, c->argv[2], true, &wrong);
    if (wrong) return false;
    x->s = x->o ? x->o->ptr : NULL;
    if (!x->s && !(create && mkstream)) {
        reply_error(c, "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the "
                       "MKSTREAM option to create an empty stream automatically.");
        return false;
    }
    sds g = c->argv[3]->ptr;
    x->cg = x->s ? stream_cg_lookup(x->s, g, sds_len(g)) : NULL;
    if (!x->cg && need_group) {
        reply_error(c, "NOGROUP No such consumer group '%s' for key name '%s'", g, (char *)c->argv[2]->ptr);
        return false;
    }
    return true;
}

static bool entries_read_or_reply(client_t *c, robj *arg, long long *v) {
    if (!cmd_get_ll_or_reply(c, arg, v, NULL)) return false;
    if (*v < 0 && *v != SCG_INVALID_ENTRIES_READ) {
        reply_error(c, "value for ENTRIESREAD must be positive or -1");
        return false;
    }
    return true;
}

/* XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n] */
static void cmd_xgroup_create(client_t *c) {
    bool mkstream = false;
    long long entries_read = SCG_INVALID_ENTRIES_READ;
    for (int i = 5; i < c->argc; i++) {
        if (!strcasecmp(c->argv[i]->ptr, "mkstream")) {
            mkstream = true;
        } else if (!strcasecmp(c->argv[i]->ptr, "entriesread") && i + 1 < c->argc) {
            if (!entries_read_or_reply(c, c->argv[++i], &entries_read)) return;
        } else {
            reply_subcommand_syntax_error(c);
            return;
        }
    }
    xgroup_ctx_t x;
    if (!xgroup_prelude_or_reply(c, &x, mkstream, true, false)) return;
    if (c->argc > 8) {
        reply_subcommand_syntax_error(c);
        return;
    }
    stream_id_t id;
    if (!strcmp(c->argv[4]->ptr, "$")) {
        if (x.s) id = x.s->last_id;
        else id.ms = id.seq = 0;
    } else if (!stream_parse_id_or_reply(c, c->argv[4], &id, 0, true, NULL)) {
        return;
    }
    if (!x.s) {
        x.o = stream_create_object();
        db_add(c->db, c->argv[2], x.o); /* takes o */
        x.s = x.o->ptr;
    }
    sds g = c->argv[3]->ptr;
    if (!stream_cg_create(x.s, g, sds_len(g), &id, entries_read)) {
        reply_error(c, "BUSYGROUP Consumer Group name already exists");
        return;
    }
    c->srv->stream_groups_seen = true; /* rdb_save.c: streams may need type 21 from now on */
    reply_ok(c);
    c->srv->dirty++;
    notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-create", c->argv[2], c->db->id);
}

/* XGROUP SETID key group id|$ [ENTRIESREAD n] */
static void cmd_xgroup_setid(client_t *c) {
    long long entries_read = SCG_INVALID_ENTRIES_READ;
    /* The options are checked before the key, as 7.0.15 does. */
    if ((c->argc != 5 && c->argc != 7) || (c->argc == 7 && strcasecmp(c->argv[5]->ptr, "entriesread"))) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 7 && !entries_read_or_reply(c, c->argv[6], &entries_read)) return;
    xgroup_ctx_t x;
    if (!xgroup_prelude_or_reply(c, &x, false, false, true)) return;
    stream_id_t id;
    if (!strcmp(c->argv[4]->ptr, "$")) id = x.s->last_id;
    else if (!stream_parse_id_or_reply(c, c->argv[4], &id, 0, false, NULL)) return;
    x.cg->last_id = id;
    x.cg->entries_read = entries_read;
    reply_ok(c);
    c->srv->dirty++;
    notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-setid", c->argv[2], c->db->id);
}

static void cmd_xgroup_destroy(client_t *c) {
    xgroup_ctx_t x;
    if (!xgroup_prelude_or_reply(c, &x, false, false, false)) return;
    if (!x.cg) {
        reply_ll(c, 0);
        return;
    }
    sds g = c->argv[3]->ptr;
    stream_cg_destroy(x.s, g, sds_len(g));
    reply_ll(c, 1);
    /* Readers blocked on this group re-run and get NOGROUP. */
    db_signal_modified(c->db, c->argv[2]);
    notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-destroy", c->argv[2], c->db->id);
}

static void cmd_xgroup_createconsumer(client_t *c) {
    xgroup_ctx_t x;
    if (!xgroup_prelude_or_reply(c, &x, false, false, true)) return;
    sds n = c->argv[4]->ptr;
    stream_consumer_t *cons = stream_consumer_create(x.cg, n, sds_len(n), stream_now(c));
    if (cons) {
        c->srv->dirty++;
        notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-createconsumer", c->argv[2], c->db->id);
    }
    reply_ll(c, cons ? 1 : 0);
}

static void cmd_xgroup_delconsumer(client_t *c) {
    xgroup_ctx_t x;
    if (!xgroup_prelude_or_reply(c, &x, false, false, true)) return;
    sds n = c->argv[4]->ptr;
    stream_consumer_t *cons = stream_consumer_lookup(x.cg, n, sds_len(n));
    long long pending = 0;
    if (cons) {
        pending = (long long)stream_consumer_delete(x.cg, cons);
        c->srv->dirty++;
        notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-delconsumer", c->argv[2], c->db->id);
    }
    reply_ll(c, pending);
}

static void cmd_xgroup_help(client_t *c) {
    static const char *help[] = {
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        NULL,
    };
    reply_help(c, "XGROUP", help);
}

/* ------------------------------------------------------------ XACK */

static void cmd_xack(client_t *c) {
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], false, &wrong);
    if (wrong) return;
    sds g = c->argv[2]->ptr;
    stream_cg_t *cg = o ? stream_cg_lookup(o->ptr, g, sds_len(g)) : NULL;
    if (!cg) {
        reply_ll(c, 0);
        return;
    }
    int n = c->argc - 3;
    stream_id_t *ids = zmalloc(sizeof(*ids) * (size_t)n);
    for (int j = 0; j < n; j++) {
        if (!stream_parse_id_or_reply(c, c->argv[j + 3], &ids[j], 0, true, NULL)) {
            zfree(ids);
            return;
        }
    }
    long long acked = 0;
    for (int j = 0; j < n; j++) {
        unsigned char buf[16];
        void *v;
        stream_id_encode(buf, &ids[j]);
        if (!rax_find(cg->pel, buf, 16, &v)) continue;
        pel_remove(cg, buf, v);
        acked++;
        c->srv->dirty++;
    }
    zfree(ids);
    reply_ll(c, acked);
}

/* ------------------------------------------------------------ XPENDING */

static void xpending_summary(client_t *c, stream_cg_t *cg) {
    reply_array_len(c, 4);
    reply_ll(c, (long long)rax_size(cg->pel));
    if (rax_size(cg->pel) == 0) {
        reply_null(c);
        reply_null(c);
        reply_null_array(c);
        return;
    }
    rax_iter_t ri;
    stream_id_t id;
    rax_iter_start(&ri, cg->pel);
    rax_seek(&ri, "^", NULL, 0);
    stream_id_decode(ri.key, &id);
    stream_reply_id(c, &id);
    rax_seek(&ri, "$", NULL, 0);
    stream_id_decode(ri.key, &id);
    stream_reply_id(c, &id);
    rax_iter_stop(&ri);
    rax_iter_start(&ri, cg->consumers);
    void *slot = reply_deferred_len(c);
    long n = 0;
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        stream_consumer_t *cons = ri.data;
        if (rax_size(cons->pel) == 0) continue;
        reply_array_len(c, 2);
        reply_bulk(c, (const char *)ri.key, ri.key_len);
        reply_bulk_ll(c, (long long)rax_size(cons->pel));
        n++;
    }
    rax_iter_stop(&ri);
    reply_set_deferred_array_len(c, slot, n);
}

/* XPENDING key group [[IDLE min-idle] start end count [consumer]] */
static void cmd_xpending(client_t *c) {
    bool summary = c->argc == 3;
    robj *consumer_name = NULL;
    stream_id_t start, end;
    long long count = 0, minidle = 0;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    if (c->argc >= 6) {
        int si = 3;
        if (!strcasecmp(c->argv[3]->ptr, "idle")) {
            if (!cmd_get_ll_or_reply(c, c->argv[4], &minidle, NULL)) return;
            if (c->argc < 8) {
                reply_error(c, RL_ERR_SYNTAX);
                return;
            }
            si += 2;
        }
        if (!cmd_get_ll_or_reply(c, c->argv[si + 2], &count, NULL)) return;
        if (count < 0) count = 0;
        bool sx, ex;
        if (!stream_parse_interval_id_or_reply(c, c->argv[si], &start, &sx, 0)) return;
        if (sx && !stream_id_incr(&start)) {
            reply_error(c, "invalid start ID for the interval");
            return;
        }
        if (!stream_parse_interval_id_or_reply(c, c->argv[si + 1], &end, &ex, UINT64_MAX)) return;
        if (ex && !stream_id_decr(&end)) {
            reply_error(c, "invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc) consumer_name = c->argv[si + 3];
    }
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!db_check_type_or_reply(c, o, OBJ_STREAM)) return;
    sds g = c->argv[2]->ptr;
    stream_cg_t *cg = o ? stream_cg_lookup(o->ptr, g, sds_len(g)) : NULL;
    if (!cg) {
        reply_nogroup_key(c, c->argv[1], c->argv[2]);
        return;
    }
    if (summary) {
        xpending_summary(c, cg);
        return;
    }
    rax_t *pel = cg->pel;
    if (consumer_name) {
        sds n = consumer_name->ptr;
        stream_consumer_t *cons = stream_consumer_lookup(cg, n, sds_len(n));
        if (!cons) {
            reply_empty_array(c);
            return;
        }
        pel = cons->pel;
    }
    unsigned char sk[16], ek[16];
    stream_id_encode(sk, &start);
    stream_id_encode(ek, &end);
    long long now = stream_now(c);
    rax_iter_t ri;
    rax_iter_start(&ri, pel);
    void *slot = reply_deferred_len(c);
    long n = 0;
    for (bool ok = count && rax_seek(&ri, ">=", sk, 16); ok && count && memcmp(ri.key, ek, 16) <= 0;
         ok = rax_next(&ri)) {
        stream_nack_t *nack = ri.data;
        long long idle = elapsed_ms(now, nack->delivery_time);
        if (minidle && idle < minidle) continue;
        n++;
        count--;
        stream_id_t id;
        stream_id_decode(ri.key, &id);
        reply_array_len(c, 4);
        stream_reply_id(c, &id);
        reply_bulk(c, nack->consumer->name, sds_len(nack->consumer->name));
        reply_ll(c, idle < 0 ? 0 : idle);
        reply_ll(c, (long long)nack->delivery_count);
    }
    rax_iter_stop(&ri);
    reply_set_deferred_array_len(c, slot, n);
}

/* ------------------------------------------------------------ XCLAIM */

typedef struct claim_opts {
    long long minidle;
    long long retrycount;   /* -1: not given */
    long long deliverytime; /* -1: not given */
    bool force, justid;
    stream_id_t last_id;
} claim_opts_t;

/* Parse the options after the IDs (argv[first..]); replies on error. */
static bool xclaim_opts_or_reply(client_t *c, int first, claim_opts_t *o, long long now) {
    for (int j = first; j < c->argc; j++) {
        bool more = j + 1 < c->argc;
        const char *opt = c->argv[j]->ptr;
        if (!strcasecmp(opt, "force")) {
            o->force = true;
        } else if (!strcasecmp(opt, "justid")) {
            o->justid = true;
        } else if (!strcasecmp(opt, "idle") && more) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &o->deliverytime, "Invalid IDLE option argument for XCLAIM"))
                return false;
            o->deliverytime = elapsed_ms(now, o->deliverytime); /* IDLE of +-2^63 wraps, as in Redis */
        } else if (!strcasecmp(opt, "time") && more) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &o->deliverytime, "Invalid TIME option argument for XCLAIM"))
                return false;
        } else if (!strcasecmp(opt, "retrycount") && more) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &o->retrycount, "Invalid RETRYCOUNT option argument for XCLAIM"))
                return false;
        } else if (!strcasecmp(opt, "lastid") && more) {
            if (!stream_parse_id_or_reply(c, c->argv[++j], &o->last_id, 0, true, NULL)) return false;
        } else {
            reply_error(c, "Unrecognized XCLAIM option '%s'", opt);
            return false;
        }
    }
    return true;
}

/* XCLAIM key group consumer min-idle-time id ... [IDLE ms] [TIME ms]
 *        [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id] */
static void cmd_xclaim(client_t *c) {
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], false, &wrong);
    if (wrong) return;
    sds g = c->argv[2]->ptr;
    stream_cg_t *cg = o ? stream_cg_lookup(o->ptr, g, sds_len(g)) : NULL;
    if (!cg) {
        reply_nogroup_key(c, c->argv[1], c->argv[2]);
        return;
    }
    claim_opts_t op = {0, -1, -1, false, false, {0, 0}};
    if (!cmd_get_ll_or_reply(c, c->argv[4], &op.minidle, "Invalid min-idle-time argument for XCLAIM")) return;
    if (op.minidle < 0) op.minidle = 0;
    int nids = c->argc - 5;
    stream_id_t *ids = zmalloc(sizeof(*ids) * (size_t)(nids > 0 ? nids : 1));
    int j;
    for (j = 5; j < c->argc; j++) {
        if (!stream_parse_id(c->argv[j], &ids[j - 5], 0, true, NULL)) break; /* options follow */
    }
    int last_id_arg = j - 1;
    long long now = stream_now(c);
    if (!xclaim_opts_or_reply(c, j, &op, now)) {
        zfree(ids);
        return;
    }
    stream_t *s = o->ptr;
    stream_prop_t prop = {c->argv[1], c->argv[2]};
    bool setid = false; /* LASTID moved the group: logged unless an XCLAIM carries it */
    if (stream_id_cmp(&op.last_id, &cg->last_id) > 0) {
        cg->last_id = op.last_id;
        setid = true;
        c->srv->dirty++;
    }
    if (op.deliverytime != -1) {
        if (op.deliverytime < 0 || op.deliverytime > now) op.deliverytime = now;
    } else {
        op.deliverytime = now;
    }
    /* Created and seen even when nothing is claimed (Redis 7.2+). */
    stream_consumer_t *consumer = consumer_get(c, cg, c->argv[1], c->argv[3]);
    void *slot = reply_deferred_len(c);
    long n = 0;
    for (j = 5; j <= last_id_arg; j++) {
        stream_id_t id = ids[j - 5];
        unsigned char buf[16];
        stream_id_encode(buf, &id);
        void *v = NULL;
        stream_nack_t *nack = rax_find(cg->pel, buf, 16, &v) ? v : NULL;
        if (!entry_exists(s, &id)) {
            if (nack) {
                stream_propagate_claim(c, &prop, cg, &id, nack); /* replayed, it drops the entry too */
                setid = false;
                pel_remove(cg, buf, nack); /* the entry is gone: so is its claim */
                c->srv->dirty++;
            }
            continue;
        }
        if (op.force && !nack) {
            nack = stream_nack_new(NULL, now);
            rax_insert(cg->pel, buf, 16, nack, NULL);
        }
        if (!nack) continue;
        if (nack->consumer && op.minidle && elapsed_ms(now, nack->delivery_time) < op.minidle) continue;
        nack->delivery_time = op.deliverytime;
        if (op.retrycount >= 0) nack->delivery_count = (uint64_t)op.retrycount;
        else if (!op.justid) nack->delivery_count++;
        nack_move(nack, consumer, buf, now);
        if (op.justid) stream_reply_id(c, &id);
        else stream_reply_entry(c, s, &id);
        n++;
        stream_propagate_claim(c, &prop, cg, &id, nack);
        setid = false;
        c->srv->dirty++;
    }
    if (setid) stream_propagate_setid(c, &prop, cg);
    reply_set_deferred_array_len(c, slot, n);
    zfree(ids);
}

/* ------------------------------------------------------------ XAUTOCLAIM */

/* A growable array of IDs (the entries claimed and the ones found deleted). */
typedef struct idvec {
    stream_id_t *v;
    size_t n, cap;
} idvec_t;

static void idvec_push(idvec_t *a, const stream_id_t *id) {
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = zrealloc(a->v, sizeof(*a->v) * a->cap);
    }
    a->v[a->n++] = *id;
}

/* XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID] */
static void cmd_xautoclaim(client_t *c) {
    long long minidle, count = 100;
    const long long attempts_factor = 10;
    stream_id_t start;
    bool sx, justid = false;
    if (!cmd_get_ll_or_reply(c, c->argv[4], &minidle, "Invalid min-idle-time argument for XAUTOCLAIM")) return;
    if (minidle < 0) minidle = 0;
    if (!stream_parse_interval_id_or_reply(c, c->argv[5], &start, &sx, 0)) return;
    if (sx && !stream_id_incr(&start)) {
        reply_error(c, "invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        bool more = j + 1 < c->argc;
        if (!strcasecmp(c->argv[j]->ptr, "count") && more) {
            long long maxc = LONG_MAX / 16;
            if (!cmd_get_range_or_reply(c, c->argv[++j], 1, maxc, &count, "COUNT must be > 0")) return;
        } else if (!strcasecmp(c->argv[j]->ptr, "justid")) {
            justid = true;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], false, &wrong);
    if (wrong) return;
    sds g = c->argv[2]->ptr;
    stream_cg_t *cg = o ? stream_cg_lookup(o->ptr, g, sds_len(g)) : NULL;
    if (!cg) {
        reply_nogroup_key(c, c->argv[1], c->argv[2]);
        return;
    }
    stream_t *s = o->ptr;
    idvec_t claimed = {0}, deleted = {0};
    stream_prop_t prop = {c->argv[1], c->argv[2]};
    stream_consumer_t *consumer = consumer_get(c, cg, c->argv[1], c->argv[3]); /* even claiming nothing (7.2+) */
    long long attempts = count * attempts_factor;
    long long now = stream_now(c);
    unsigned char key[16];
    stream_id_encode(key, &start);
    rax_iter_t ri;
    rax_iter_start(&ri, cg->pel);
    /* "fresh": positioned on an element not yet handed out (after a seek). */
    bool ok = rax_seek(&ri, ">=", key, 16), fresh = true;
#define NEXT() (fresh ? (fresh = false, ok) : (ok = rax_next(&ri)))
    while (attempts-- && count && NEXT()) {
        stream_nack_t *nack = ri.data;
        stream_id_t id;
        stream_id_decode(ri.key, &id);
        memcpy(key, ri.key, 16);
        if (!entry_exists(s, &id)) {
            stream_propagate_claim(c, &prop, cg, &id, nack);
            pel_remove(cg, key, nack);
            c->srv->dirty++;
            idvec_push(&deleted, &id);
            ok = rax_seek(&ri, ">=", key, 16);
            fresh = true;
            count--;
            continue;
        }
        if (minidle && elapsed_ms(now, nack->delivery_time) < minidle) continue;
        nack->delivery_time = now;
        if (!justid) nack->delivery_count++;
        nack_move(nack, consumer, key, now);
        stream_propagate_claim(c, &prop, cg, &id, nack);
        idvec_push(&claimed, &id);
        count--;
        c->srv->dirty++;
    }
    stream_id_t cursor = {0, 0};
    if (NEXT()) stream_id_decode(ri.key, &cursor);
#undef NEXT
    rax_iter_stop(&ri);
    reply_array_len(c, 3);
    stream_reply_id(c, &cursor);
    reply_array_len(c, (long)claimed.n);
    for (size_t i = 0; i < claimed.n; i++) {
        if (justid) stream_reply_id(c, &claimed.v[i]);
        else stream_reply_entry(c, s, &claimed.v[i]);
    }
    reply_array_len(c, (long)deleted.n);
    for (size_t i = 0; i < deleted.n; i++) stream_reply_id(c, &deleted.v[i]);
    zfree(claimed.v);
    zfree(deleted.v);
}

/* ------------------------------------------------------------ XINFO */

/* A group's lag (entries added minus entries read), or null when 7.0
 * cannot tell (a tombstone after the group's position, no counter). */
static void reply_cg_lag(client_t *c, stream_t *s, stream_cg_t *cg) {
    if (!s->entries_added) {
        reply_ll(c, 0);
        return;
    }
    if (cg->entries_read != SCG_INVALID_ENTRIES_READ && !stream_range_has_tombstones(s, &cg->last_id, NULL)) {
        reply_ll(c, (long long)s->entries_added - cg->entries_read);
        return;
    }
    long long read = stream_estimate_distance(s, &cg->last_id);
    if (read != SCG_INVALID_ENTRIES_READ) reply_ll(c, (long long)s->entries_added - read);
    else reply_null(c);
}

static void reply_entries_read(client_t *c, stream_cg_t *cg) {
    if (cg->entries_read != SCG_INVALID_ENTRIES_READ) reply_ll(c, cg->entries_read);
    else reply_null(c);
}

static stream_t *xinfo_stream_or_reply(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[2], LOOKUP_NONE);
    if (!o) {
        reply_error(c, RL_ERR_NO_KEY);
        return NULL;
    }
    if (!db_check_type_or_reply(c, o, OBJ_STREAM)) return NULL;
    return o->ptr;
}

static void cmd_xinfo_consumers(client_t *c) {
    stream_t *s = xinfo_stream_or_reply(c);
    if (!s) return;
    sds g = c->argv[3]->ptr;
    stream_cg_t *cg = stream_cg_lookup(s, g, sds_len(g));
    if (!cg) {
        reply_error(c, "NOGROUP No such consumer group '%s' for key name '%s'", g, (char *)c->argv[2]->ptr);
        return;
    }
    reply_array_len(c, (long)rax_size(cg->consumers));
    long long now = stream_now(c);
    rax_iter_t ri;
    rax_iter_start(&ri, cg->consumers);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        stream_consumer_t *cons = ri.data;
        long long idle = elapsed_ms(now, cons->seen_time);
        reply_map_len(c, 4);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, cons->name, sds_len(cons->name));
        reply_bulk_cstr(c, "pending");
        reply_ll(c, (long long)rax_size(cons->pel));
        reply_bulk_cstr(c, "idle");
        reply_ll(c, idle < 0 ? 0 : idle);
        reply_bulk_cstr(c, "inactive"); /* 7.2: since its last delivery or claim, -1 never */
        reply_ll(c, cons->active_time == -1 ? -1 : now - cons->active_time);
    }
    rax_iter_stop(&ri);
}

static void cmd_xinfo_groups(client_t *c) {
    stream_t *s = xinfo_stream_or_reply(c);
    if (!s) return;
    if (!s->cgroups) {
        reply_empty_array(c);
        return;
    }
    reply_array_len(c, (long)rax_size(s->cgroups));
    rax_iter_t ri;
    rax_iter_start(&ri, s->cgroups);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        stream_cg_t *cg = ri.data;
        reply_map_len(c, 6);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, (const char *)ri.key, ri.key_len);
        reply_bulk_cstr(c, "consumers");
        reply_ll(c, (long long)rax_size(cg->consumers));
        reply_bulk_cstr(c, "pending");
        reply_ll(c, (long long)rax_size(cg->pel));
        reply_bulk_cstr(c, "last-delivered-id");
        stream_reply_id(c, &cg->last_id);
        reply_bulk_cstr(c, "entries-read");
        reply_entries_read(c, cg);
        reply_bulk_cstr(c, "lag");
        reply_cg_lag(c, s, cg);
    }
    rax_iter_stop(&ri);
}

/* Up to count (0 = all) entries of a PEL: [id, consumer?, time, count]. */
static void reply_pel(client_t *c, rax_t *pel, long long count, bool with_consumer) {
    void *slot = reply_deferred_len(c);
    long n = 0;
    rax_iter_t ri;
    rax_iter_start(&ri, pel);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok && (!count || n < count); ok = rax_next(&ri)) {
        stream_nack_t *nack = ri.data;
        stream_id_t id;
        stream_id_decode(ri.key, &id);
        reply_array_len(c, with_consumer ? 4 : 3);
        stream_reply_id(c, &id);
        if (with_consumer) reply_bulk(c, nack->consumer->name, sds_len(nack->consumer->name));
        reply_ll(c, nack->delivery_time);
        reply_ll(c, (long long)nack->delivery_count);
        n++;
    }
    rax_iter_stop(&ri);
    reply_set_deferred_array_len(c, slot, n);
}

static void xinfo_full_groups(client_t *c, stream_t *s, long long count) {
    if (!s->cgroups) {
        reply_empty_array(c);
        return;
    }
    reply_array_len(c, (long)rax_size(s->cgroups));
    rax_iter_t gi;
    rax_iter_start(&gi, s->cgroups);
    for (bool ok = rax_seek(&gi, "^", NULL, 0); ok; ok = rax_next(&gi)) {
        stream_cg_t *cg = gi.data;
        reply_map_len(c, 7);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, (const char *)gi.key, gi.key_len);
        reply_bulk_cstr(c, "last-delivered-id");
        stream_reply_id(c, &cg->last_id);
        reply_bulk_cstr(c, "entries-read");
        reply_entries_read(c, cg);
        reply_bulk_cstr(c, "lag");
        reply_cg_lag(c, s, cg);
        reply_bulk_cstr(c, "pel-count");
        reply_ll(c, (long long)rax_size(cg->pel));
        reply_bulk_cstr(c, "pending");
        reply_pel(c, cg->pel, count, true);
        reply_bulk_cstr(c, "consumers");
        reply_array_len(c, (long)rax_size(cg->consumers));
        rax_iter_t ci;
        rax_iter_start(&ci, cg->consumers);
        for (bool ok2 = rax_seek(&ci, "^", NULL, 0); ok2; ok2 = rax_next(&ci)) {
            stream_consumer_t *cons = ci.data;
            reply_map_len(c, 5);
            reply_bulk_cstr(c, "name");
            reply_bulk(c, cons->name, sds_len(cons->name));
            reply_bulk_cstr(c, "seen-time");
            reply_ll(c, cons->seen_time);
            reply_bulk_cstr(c, "active-time");
            reply_ll(c, cons->active_time);
            reply_bulk_cstr(c, "pel-count");
            reply_ll(c, (long long)rax_size(cons->pel));
            reply_bulk_cstr(c, "pending");
            reply_pel(c, cons->pel, count, false);
        }
        rax_iter_stop(&ci);
    }
    rax_iter_stop(&gi);
}

/* XINFO STREAM key [FULL [COUNT n]] */
static void cmd_xinfo_stream(client_t *c) {
    bool full = false;
    long long count = 10;
    stream_t *s = xinfo_stream_or_reply(c); /* the key is checked first, as in Redis */
    if (!s) return;
    if (c->argc > 3) {
        if ((c->argc != 4 && c->argc != 6) || strcasecmp(c->argv[3]->ptr, "full")) {
            reply_subcommand_syntax_error(c);
            return;
        }
        full = true;
        if (c->argc == 6) {
            if (strcasecmp(c->argv[4]->ptr, "count")) {
                reply_subcommand_syntax_error(c);
                return;
            }
            if (!cmd_get_ll_or_reply(c, c->argv[5], &count, NULL)) return;
            if (count < 0) count = 10;
        }
    }
    reply_map_len(c, full ? 9 : 10);
    reply_bulk_cstr(c, "length");
    reply_ll(c, (long long)s->length);
    reply_bulk_cstr(c, "radix-tree-keys");
    reply_ll(c, (long long)rax_size(s->rax));
    reply_bulk_cstr(c, "radix-tree-nodes");
    reply_ll(c, (long long)rax_branch_node_count(s->rax));
    reply_bulk_cstr(c, "last-generated-id");
    stream_reply_id(c, &s->last_id);
    reply_bulk_cstr(c, "max-deleted-entry-id");
    stream_reply_id(c, &s->max_deleted_entry_id);
    reply_bulk_cstr(c, "entries-added");
    reply_ll(c, (long long)s->entries_added);
    reply_bulk_cstr(c, "recorded-first-entry-id");
    stream_reply_id(c, &s->first_id);
    if (!full) {
        reply_bulk_cstr(c, "groups");
        reply_ll(c, s->cgroups ? (long long)rax_size(s->cgroups) : 0);
        stream_id_t lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        reply_bulk_cstr(c, "first-entry");
        if (!stream_reply_range(c, s, &lo, &hi, 1, false, NULL, NULL, STREAM_RWR_RAWENTRIES, NULL)) reply_null(c);
        reply_bulk_cstr(c, "last-entry");
        if (!stream_reply_range(c, s, &lo, &hi, 1, true, NULL, NULL, STREAM_RWR_RAWENTRIES, NULL)) reply_null(c);
        return;
    }
    reply_bulk_cstr(c, "entries");
    stream_reply_range(c, s, NULL, NULL, (size_t)count, false, NULL, NULL, 0, NULL);
    reply_bulk_cstr(c, "groups");
    xinfo_full_groups(c, s, count);
}

static void cmd_xinfo_help(client_t *c) {
    static const char *help[] = {
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        NULL,
    };
    reply_help(c, "XINFO", help);
}

/* ------------------------------------------------------------ table */

static void cmd_xreadgroup(client_t *c) { stream_read_command(c, true); }

static command_t xgroup_subcommands[] = {
    {"create", cmd_xgroup_create, -5, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, "stream", "Create a consumer group.", "5.0.0", NULL},
    {"setid", cmd_xgroup_setid, -5, CMD_WRITE, 2, 2, 1, "stream", "Set a consumer group to an arbitrary last delivered ID value.", "5.0.0", NULL},
    {"destroy", cmd_xgroup_destroy, 4, CMD_WRITE, 2, 2, 1, "stream", "Destroy a consumer group.", "5.0.0", NULL},
    {"createconsumer", cmd_xgroup_createconsumer, 5, CMD_WRITE | CMD_DENYOOM, 2, 2, 1, "stream", "Create a consumer in a consumer group.", "6.2.0", NULL},
    {"delconsumer", cmd_xgroup_delconsumer, 5, CMD_WRITE, 2, 2, 1, "stream", "Delete a consumer from a consumer group.", "5.0.0", NULL},
    {"help", cmd_xgroup_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "stream", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {0},
};

static command_t xinfo_subcommands[] = {
    {"consumers", cmd_xinfo_consumers, 4, CMD_READONLY, 2, 2, 1, "stream", "List the consumers in a consumer group", "5.0.0", NULL},
    {"groups", cmd_xinfo_groups, 3, CMD_READONLY, 2, 2, 1, "stream", "List the consumer groups of a stream", "5.0.0", NULL},
    {"stream", cmd_xinfo_stream, -3, CMD_READONLY, 2, 2, 1, "stream", "Get information about a stream", "5.0.0", NULL},
    {"help", cmd_xinfo_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "stream", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {0},
};

command_t stream_cg_commands[] = {
    {"xgroup", NULL, -2, 0, 0, 0, 0, "stream", "A container for consumer groups commands", "5.0.0", xgroup_subcommands},
    {"xinfo", NULL, -2, 0, 0, 0, 0, "stream", "A container for stream introspection commands", "5.0.0", xinfo_subcommands},
    {"xreadgroup", cmd_xreadgroup, -7, CMD_WRITE | CMD_BLOCKING, 0, 0, 0, "stream", "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "5.0.0", NULL},
    {"xack", cmd_xack, -4, CMD_WRITE | CMD_FAST, 1, 1, 1, "stream", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "5.0.0", NULL},
    {"xpending", cmd_xpending, -3, CMD_READONLY, 1, 1, 1, "stream", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "5.0.0", NULL},
    {"xclaim", cmd_xclaim, -6, CMD_WRITE | CMD_FAST, 1, 1, 1, "stream", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "5.0.0", NULL},
    {"xautoclaim", cmd_xautoclaim, -6, CMD_WRITE | CMD_FAST, 1, 1, 1, "stream", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "6.2.0", NULL},
    {0},
};
