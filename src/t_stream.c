/* t_stream.c: the stream commands without consumer-group administration:
 * XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD and XREADGROUP
 * (reading, blocking, delivering to a group), plus the helpers shared with
 * t_stream_cg.c (ID parsing, range replies).
 *
 * Replies, errors and keyspace events follow Redis 7.0.15.  Blocking reads
 * go through blocking.c: the request is re-run restricted to the written
 * key, so "$" IDs are rewritten to the concrete last ID before blocking.
 * Callers: the command table (commands.c).  The data structure is stream.c;
 * nothing here touches listpacks directly. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "blocking.h"
#include "commands.h"
#include "keyspace.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "t_stream.h"
#include "util.h"

#define XREAD_BLOCKED_DEFAULT_COUNT 1000

/* The command's clock (cached per batch of commands, as Redis caches it
 * per command): IDs and delivery times of one pipeline share it. */
long long stream_now(client_t *c) { return c->srv->mstime; }

/* ------------------------------------------------------------ IDs and replies */

/* Redis's string2ull: a canonical signed number that is not negative, or
 * whatever strtoull accepts in full. */
static bool str_to_u64(const char *s, uint64_t *out) {
    long long ll;
    if (util_str2ll(s, strlen(s), &ll)) {
        if (ll < 0) return false;
        *out = (uint64_t)ll;
        return true;
    }
    if (*s == '\0') return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || *end != '\0') return false;
    *out = v;
    return true;
}

bool stream_parse_id(robj *o, stream_id_t *id, uint64_t missing_seq, bool strict, bool *seq_given) {
    char tmp[32];
    size_t len;
    const char *p = obj_string_view(o, tmp, sizeof(tmp), &len);
    char buf[128];
    if (len > sizeof(buf) - 1) return false;
    memcpy(buf, p, len);
    buf[len] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') return false;
    if (seq_given) *seq_given = true;
    if (buf[0] == '-' && buf[1] == '\0') {
        id->ms = id->seq = 0;
        return true;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        id->ms = id->seq = UINT64_MAX;
        return true;
    }
    char *dash = strchr(buf, '-');
    if (dash) *dash = '\0';
    uint64_t ms, seq;
    if (!str_to_u64(buf, &ms)) return false;
    if (dash) {
        if (seq_given && dash[1] == '*' && dash[2] == '\0') {
            seq = 0;
            *seq_given = false;
        } else if (!str_to_u64(dash + 1, &seq)) {
            return false;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return true;
}

bool stream_parse_id_or_reply(client_t *c, robj *o, stream_id_t *id, uint64_t missing_seq, bool strict,
                              bool *seq_given) {
    if (stream_parse_id(o, id, missing_seq, strict, seq_given)) return true;
    reply_error(c, STREAM_ERR_INVALID_ID);
    return false;
}

bool stream_parse_interval_id_or_reply(client_t *c, robj *o, stream_id_t *id, bool *exclude, uint64_t missing_seq) {
    sds s = o->ptr;
    size_t len = sds_len(s);
    *exclude = len > 1 && s[0] == '(';
    if (!*exclude) return stream_parse_id_or_reply(c, o, id, missing_seq, false, NULL);
    robj *t = obj_create_string(s + 1, len - 1);
    bool ok = stream_parse_id_or_reply(c, t, id, missing_seq, true, NULL);
    obj_decref(t);
    return ok;
}

void stream_reply_id(client_t *c, const stream_id_t *id) {
    char buf[STREAM_ID_STR_MAX];
    size_t n = stream_id_format(buf, id);
    reply_bulk(c, buf, n);
}

robj *stream_id_object(const stream_id_t *id) {
    char buf[STREAM_ID_STR_MAX];
    size_t n = stream_id_format(buf, id);
    return obj_create_string(buf, n);
}

void stream_rewrite_arg(client_t *c, int i, robj *o) {
    obj_decref(c->argv[i]);
    c->argv[i] = o;
}

robj *stream_lookup_or_reply(client_t *c, robj *key, bool write, bool *wrongtype) {
    return db_lookup_typed_or_reply(c, key, OBJ_STREAM, write, wrongtype);
}

/* ------------------------------------------------------------ propagation */

static robj *cstr_obj(const char *s) { return obj_create_string(s, strlen(s)); }

static void propagate_take(client_t *c, robj **argv, int argc) {
    persist_propagate(c, argv, argc);
    for (int i = 0; i < argc; i++) obj_decref(argv[i]);
}

void stream_propagate_claim(client_t *c, const stream_prop_t *p, stream_cg_t *cg, const stream_id_t *id,
                            const stream_nack_t *nack) {
    if (!persist_propagation_on(c)) {
        persist_propagate(c, NULL, 0); /* nothing to log: the command itself stays out too */
        return;
    }
    robj *argv[14];
    obj_incref(p->key);
    obj_incref(p->group);
    argv[0] = cstr_obj("XCLAIM");
    argv[1] = p->key;
    argv[2] = p->group;
    argv[3] = obj_create_string(nack->consumer->name, sds_len(nack->consumer->name));
    argv[4] = cstr_obj("0");
    argv[5] = stream_id_object(id);
    argv[6] = cstr_obj("TIME");
    argv[7] = obj_create_from_sds(sds_fromll(nack->delivery_time));
    argv[8] = cstr_obj("RETRYCOUNT");
    argv[9] = obj_create_from_sds(sds_fromll((long long)nack->delivery_count));
    argv[10] = cstr_obj("FORCE");
    argv[11] = cstr_obj("JUSTID");
    argv[12] = cstr_obj("LASTID");
    argv[13] = stream_id_object(&cg->last_id);
    propagate_take(c, argv, 14);
}

void stream_propagate_setid(client_t *c, const stream_prop_t *p, stream_cg_t *cg) {
    if (!persist_propagation_on(c)) {
        persist_propagate(c, NULL, 0); /* nothing to log: the command itself stays out too */
        return;
    }
    robj *argv[7];
    obj_incref(p->key);
    obj_incref(p->group);
    argv[0] = cstr_obj("XGROUP");
    argv[1] = cstr_obj("SETID");
    argv[2] = p->key;
    argv[3] = p->group;
    argv[4] = stream_id_object(&cg->last_id);
    argv[5] = cstr_obj("ENTRIESREAD");
    argv[6] = obj_create_from_sds(sds_fromll(cg->entries_read));
    propagate_take(c, argv, 7);
}

void stream_propagate_createconsumer(client_t *c, const stream_prop_t *p, robj *consumer) {
    if (!persist_propagation_on(c)) {
        persist_propagate(c, NULL, 0); /* nothing to log: the command itself stays out too */
        return;
    }
    robj *argv[5];
    obj_incref(p->key);
    obj_incref(p->group);
    obj_incref(consumer);
    argv[0] = cstr_obj("XGROUP");
    argv[1] = cstr_obj("CREATECONSUMER");
    argv[2] = p->key;
    argv[3] = p->group;
    argv[4] = consumer;
    propagate_take(c, argv, 5);
}

/* Add id to the group's and consumer's PELs (or move it to this consumer). */
static stream_nack_t *deliver_to_consumer(stream_cg_t *group, stream_consumer_t *consumer, const stream_id_t *id, long long now) {
    unsigned char buf[16];
    consumer->active_time = now; /* a delivery makes it active (7.2) */
    stream_id_encode(buf, id);
    stream_nack_t *nack = stream_nack_new(consumer, now);
    if (rax_try_insert(group->pel, buf, 16, nack)) {
        rax_insert(consumer->pel, buf, 16, nack, NULL);
        return nack;
    }
    stream_nack_free(nack);
    void *v;
    rax_find(group->pel, buf, 16, &v);
    nack = v;
    rax_remove(nack->consumer->pel, buf, 16, NULL);
    nack->consumer = consumer;
    nack->delivery_time = now;
    nack->delivery_count = 1;
    rax_insert(consumer->pel, buf, 16, nack, NULL);
    return nack;
}

static size_t reply_from_consumer_pel(client_t *c, stream_t *s, const stream_id_t *start, const stream_id_t *end,
                                      size_t count, stream_cg_t *group, stream_consumer_t *consumer,
                                      const stream_prop_t *prop) {
    unsigned char startkey[16], endkey[16];
    stream_id_encode(startkey, start);
    if (end) stream_id_encode(endkey, end);
    size_t n = 0;
    void *slot = reply_deferred_len(c);
    rax_iter_t ri;
    rax_iter_start(&ri, consumer->pel);
    long long now = stream_now(c);
    for (bool ok = rax_seek(&ri, ">=", startkey, 16); ok && (!count || n < count); ok = rax_next(&ri)) {
        if (end && memcmp(ri.key, endkey, 16) > 0) break;
        stream_id_t id;
        stream_id_decode(ri.key, &id);
        if (!stream_reply_entry(c, s, &id)) {
            /* Acknowledge-pending but deleted: the ID with a null body. */
            reply_array_len(c, 2);
            stream_reply_id(c, &id);
            reply_null_array(c);
        } else {
            stream_nack_t *nack = ri.data;
            nack->delivery_time = now;
            nack->delivery_count++;
            if (prop) stream_propagate_claim(c, prop, group, &id, nack);
        }
        n++;
    }
    rax_iter_stop(&ri);
    reply_set_deferred_array_len(c, slot, (long)n);
    return n;
}

static void reply_current_entry(client_t *c, stream_iter_t *it, const stream_id_t *id, int64_t nfields) {
    reply_array_len(c, 2);
    stream_reply_id(c, id);
    reply_array_len(c, (long)nfields * 2);
    while (nfields--) {
        const unsigned char *f, *v;
        size_t fl, vl;
        stream_iter_field(it, &f, &fl, &v, &vl);
        reply_bulk(c, (const char *)f, fl);
        reply_bulk(c, (const char *)v, vl);
    }
}

bool stream_reply_entry(client_t *c, stream_t *s, const stream_id_t *id) {
    stream_iter_t it;
    stream_id_t got;
    int64_t nf;
    stream_iter_start(&it, s, id, id, false);
    bool ok = stream_iter_next(&it, &got, &nf);
    if (ok) reply_current_entry(c, &it, &got, nf);
    stream_iter_stop(&it);
    return ok;
}

size_t stream_reply_range(client_t *c, stream_t *s, const stream_id_t *start, const stream_id_t *end, size_t count,
                          bool rev, stream_cg_t *group, stream_consumer_t *consumer, int flags,
                          const stream_prop_t *prop) {
    if (group && (flags & STREAM_RWR_HISTORY))
        return reply_from_consumer_pel(c, s, start, end, count, group, consumer, prop);
    bool moved = false;
    void *slot = (flags & STREAM_RWR_RAWENTRIES) ? NULL : reply_deferred_len(c);
    stream_iter_t it;
    stream_id_t id;
    int64_t nf;
    size_t n = 0;
    long long now = group ? stream_now(c) : 0;
    stream_iter_start(&it, s, start, end, rev);
    while (stream_iter_next(&it, &id, &nf)) {
        if (group && stream_id_cmp(&id, &group->last_id) > 0) {
            if (group->entries_read != SCG_INVALID_ENTRIES_READ && !stream_range_has_tombstones(s, &id, NULL))
                group->entries_read++;
            else if (s->entries_added)
                group->entries_read = stream_estimate_distance(s, &id);
            group->last_id = id;
            moved = true;
        }
        reply_current_entry(c, &it, &id, nf);
        if (group && !(flags & STREAM_RWR_NOACK)) {
            stream_nack_t *nack = deliver_to_consumer(group, consumer, &id, now);
            if (prop) stream_propagate_claim(c, prop, group, &id, nack);
        }
        n++;
        if (count && n == count) break;
    }
    stream_iter_stop(&it);
    if (prop && moved) stream_propagate_setid(c, prop, group);
    if (slot) reply_set_deferred_array_len(c, slot, (long)n);
    return n;
}

/* ------------------------------------------------------------ XADD / XTRIM arguments */

typedef struct trim_args {
    stream_id_t id; /* XADD: explicit ID */
    bool id_given, seq_given;
    bool no_mkstream;
    int strategy;     /* STREAM_TRIM_* */
    int strategy_arg; /* argv index of the threshold */
    bool approx;
    long long limit;
    long long maxlen;
    stream_id_t minid;
} trim_args_t;

/* Parse [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT n]] (and, for
 * XADD, the ID).  Returns the index of the ID (XADD) or argc, -1 after an
 * error reply. */
static int parse_add_trim_args_or_reply(client_t *c, trim_args_t *a, bool xadd) {
    int i = xadd ? 2 : 2;
    bool limit_given = false;
    memset(a, 0, sizeof(*a));
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const char *opt = c->argv[i]->ptr;
        if (xadd && opt[0] == '*' && opt[1] == '\0') {
            break;
        } else if ((!strcasecmp(opt, "maxlen") || !strcasecmp(opt, "minid")) && more) {
            bool maxlen = !strcasecmp(opt, "maxlen");
            if (a->strategy != STREAM_TRIM_NONE) {
                reply_error(c, "syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->approx = false;
            const char *next = c->argv[i + 1]->ptr;
            if (more >= 2 && next[0] == '~' && next[1] == '\0') {
                a->approx = true;
                i++;
            } else if (more >= 2 && next[0] == '=' && next[1] == '\0') {
                i++;
            }
            if (maxlen) {
                if (!cmd_get_ll_or_reply(c, c->argv[i + 1], &a->maxlen, NULL)) return -1;
                if (a->maxlen < 0) {
                    reply_error(c, "The MAXLEN argument must be >= 0.");
                    return -1;
                }
            } else if (!stream_parse_id_or_reply(c, c->argv[i + 1], &a->minid, 0, true, NULL)) {
                return -1;
            }
            i++;
            a->strategy = maxlen ? STREAM_TRIM_MAXLEN : STREAM_TRIM_MINID;
            a->strategy_arg = i;
        } else if (!strcasecmp(opt, "limit") && more) {
            if (!cmd_get_ll_or_reply(c, c->argv[i + 1], &a->limit, NULL)) return -1;
            if (a->limit < 0) {
                reply_error(c, "The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = true;
            i++;
        } else if (xadd && !strcasecmp(opt, "nomkstream")) {
            a->no_mkstream = true;
        } else if (xadd) {
            if (!stream_parse_id_or_reply(c, c->argv[i], &a->id, 0, true, &a->seq_given)) return -1;
            a->id_given = true;
            break;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return -1;
        }
    }
    if (a->limit && a->strategy == STREAM_TRIM_NONE) {
        reply_error(c, "syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->strategy == STREAM_TRIM_NONE) {
        reply_error(c, "syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (c->fd == -1) {
        a->limit = 0; /* replaying the AOF: the threshold was made exact */
    } else if (limit_given) {
        if (!a->approx) {
            reply_error(c, "syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else if (a->approx) {
        a->limit = 100 * c->srv->cfg.stream_node_max_entries;
        if (a->limit <= 0 || a->limit > 10000) a->limit = 10000;
    } else {
        a->limit = 0;
    }
    return i;
}

/* After an approximate trim, log an exact one: "~" becomes "=" and the
 * threshold the reached length / first ID, so a replay trims the same. */
static void rewrite_trim_for_aof(client_t *c, stream_t *s, const trim_args_t *a) {
    stream_rewrite_arg(c, a->strategy_arg - 1, obj_create_string("=", 1));
    robj *v;
    if (a->strategy == STREAM_TRIM_MAXLEN) {
        v = obj_create_from_sds(sds_fromll((long long)s->length));
    } else {
        /* Emptied: the highest ID, so the replay empties it too. */
        stream_id_t first = {UINT64_MAX, UINT64_MAX};
        stream_edge_id(s, true, &first);
        v = stream_id_object(&first);
    }
    stream_rewrite_arg(c, a->strategy_arg, v);
}

static int64_t trim_with(stream_t *s, const trim_args_t *a) {
    return stream_trim(s, a->strategy, a->maxlen, &a->minid, a->approx, a->limit);
}

static stream_limits_t node_limits(client_t *c) {
    stream_limits_t l = {c->srv->cfg.stream_node_max_bytes, c->srv->cfg.stream_node_max_entries};
    return l;
}

/* ------------------------------------------------------------ commands */

/* XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT n]] *|id field value ... */
static void cmd_xadd(client_t *c) {
    trim_args_t a;
    int i = parse_add_trim_args_or_reply(c, &a, true);
    if (i < 0) return;
    int field_pos = i + 1;
    if (c->argc - field_pos < 2 || (c->argc - field_pos) % 2 == 1) {
        reply_error_arity(c);
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(c, "The ID specified in XADD must be greater than 0-0");
        return;
    }
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], true, &wrong);
    if (wrong) return;
    if (!o) {
        if (a.no_mkstream) {
            reply_null(c);
            return;
        }
        o = stream_create_object();
        db_add(c->db, c->argv[1], o); /* takes o */
    }
    stream_t *s = o->ptr;
    if (s->last_id.ms == UINT64_MAX && s->last_id.seq == UINT64_MAX) {
        reply_error(c, "The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    stream_id_t id;
    stream_limits_t lim = node_limits(c);
    int rc = stream_append(s, &lim, c->argv + field_pos, (c->argc - field_pos) / 2, &id, a.id_given ? &a.id : NULL,
                           a.seq_given, stream_now(c));
    if (rc != 0) {
        if (rc == -1) reply_error(c, "The ID specified in XADD is equal or smaller than the target stream top item");
        else reply_error(c, "Elements are too large to be stored");
        return;
    }
    char idbuf[STREAM_ID_STR_MAX];
    size_t idlen = stream_id_format(idbuf, &id); /* once, for the reply and the AOF */
    reply_bulk(c, idbuf, idlen);
    notify_keyspace_event(c->srv, NOTIFY_STREAM, "xadd", c->argv[1], c->db->id);
    if (a.strategy != STREAM_TRIM_NONE) {
        if (trim_with(s, &a)) notify_keyspace_event(c->srv, NOTIFY_STREAM, "xtrim", c->argv[1], c->db->id);
        if (a.approx) rewrite_trim_for_aof(c, s, &a);
    }
    if (!a.id_given || !a.seq_given) stream_rewrite_arg(c, i, obj_create_string(idbuf, idlen));
    db_signal_modified(c->db, c->argv[1]); /* wakes blocked readers */
}

/* XRANGE / XREVRANGE key start end [COUNT n] */
static void range_generic(client_t *c, bool rev) {
    robj *startarg = rev ? c->argv[3] : c->argv[2];
    robj *endarg = rev ? c->argv[2] : c->argv[3];
    stream_id_t start, end;
    bool sx, ex;
    long long count = -1;
    if (!stream_parse_interval_id_or_reply(c, startarg, &start, &sx, 0)) return;
    if (sx && !stream_id_incr(&start)) {
        reply_error(c, "invalid start ID for the interval");
        return;
    }
    if (!stream_parse_interval_id_or_reply(c, endarg, &end, &ex, UINT64_MAX)) return;
    if (ex && !stream_id_decr(&end)) {
        reply_error(c, "invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (!strcasecmp(c->argv[j]->ptr, "count") && j + 1 < c->argc) {
            if (!cmd_get_ll_or_reply(c, c->argv[j + 1], &count, NULL)) return;
            if (count < 0) count = 0;
            j++;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], false, &wrong);
    if (wrong) return;
    if (!o) {
        reply_empty_array(c);
        return;
    }
    if (count == 0) {
        reply_null_array(c);
        return;
    }
    stream_reply_range(c, o->ptr, &start, &end, count == -1 ? 0 : (size_t)count, rev, NULL, NULL, 0, NULL);
}

static void cmd_xrange(client_t *c) { range_generic(c, false); }
static void cmd_xrevrange(client_t *c) { range_generic(c, true); }

static void cmd_xlen(client_t *c) {
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], false, &wrong);
    if (wrong) return;
    reply_ll(c, o ? (long long)((stream_t *)o->ptr)->length : 0);
}

/* XDEL key id [id ...] */
static void cmd_xdel(client_t *c) {
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], true, &wrong);
    if (wrong) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    stream_t *s = o->ptr;
    int n = c->argc - 2;
    stream_id_t *ids = zmalloc(sizeof(*ids) * (size_t)n);
    for (int j = 0; j < n; j++) {
        if (!stream_parse_id_or_reply(c, c->argv[j + 2], &ids[j], 0, true, NULL)) {
            zfree(ids);
            return;
        }
    }
    long long deleted = 0;
    bool first_entry = false;
    for (int j = 0; j < n; j++) {
        if (!stream_delete(s, &ids[j])) continue;
        if (stream_id_cmp(&ids[j], &s->first_id) == 0) first_entry = true;
        if (stream_id_cmp(&ids[j], &s->max_deleted_entry_id) > 0) s->max_deleted_entry_id = ids[j];
        deleted++;
    }
    zfree(ids);
    if (deleted) {
        if (s->length == 0) s->first_id.ms = s->first_id.seq = 0;
        else if (first_entry) stream_edge_id(s, true, &s->first_id);
        db_signal_modified(c->db, c->argv[1]);
        notify_keyspace_event(c->srv, NOTIFY_STREAM, "xdel", c->argv[1], c->db->id);
        c->srv->dirty += deleted - 1;
    }
    reply_ll(c, deleted);
}

/* XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT n] */
static void cmd_xtrim(client_t *c) {
    trim_args_t a;
    if (parse_add_trim_args_or_reply(c, &a, false) < 0) return; /* before the key, as 7.0.15 */
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], true, &wrong);
    if (wrong) return;
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    stream_t *s = o->ptr;
    int64_t deleted = trim_with(s, &a);
    if (deleted) {
        notify_keyspace_event(c->srv, NOTIFY_STREAM, "xtrim", c->argv[1], c->db->id);
        if (a.approx) rewrite_trim_for_aof(c, s, &a);
        db_signal_modified(c->db, c->argv[1]);
        c->srv->dirty += deleted - 1;
    }
    reply_ll(c, deleted);
}

/* XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id] */
static void cmd_xsetid(client_t *c) {
    stream_id_t id, maxdel = {0, 0};
    long long entries_added = -1;
    if (!stream_parse_id_or_reply(c, c->argv[2], &id, 0, true, NULL)) return;
    for (int i = 3; i < c->argc; i += 2) {
        bool more = i + 1 < c->argc;
        const char *opt = c->argv[i]->ptr;
        if (!strcasecmp(opt, "entriesadded") && more) {
            if (!cmd_get_ll_or_reply(c, c->argv[i + 1], &entries_added, NULL)) return;
            if (entries_added < 0) {
                reply_error(c, "entries_added must be positive");
                return;
            }
        } else if (!strcasecmp(opt, "maxdeletedid") && more) {
            if (!stream_parse_id_or_reply(c, c->argv[i + 1], &maxdel, 0, true, NULL)) return;
            if (stream_id_cmp(&id, &maxdel) < 0) {
                reply_error(c, "The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    bool wrong;
    robj *o = stream_lookup_or_reply(c, c->argv[1], true, &wrong);
    if (wrong) return;
    if (!o) {
        reply_error(c, RL_ERR_NO_KEY);
        return;
    }
    stream_t *s = o->ptr;
    if (s->length > 0) {
        stream_id_t top;
        stream_edge_id(s, false, &top);
        if (stream_id_cmp(&id, &top) < 0) {
            reply_error(c, "The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (entries_added != -1 && s->length > (uint64_t)entries_added) {
            reply_error(c, "The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    s->last_id = id;
    if (entries_added != -1) s->entries_added = (uint64_t)entries_added;
    if (maxdel.ms || maxdel.seq) s->max_deleted_entry_id = maxdel;
    reply_ok(c);
    db_signal_modified(c->db, c->argv[1]);
    notify_keyspace_event(c->srv, NOTIFY_STREAM, "xsetid", c->argv[1], c->db->id);
}

/* ------------------------------------------------------------ XREAD / XREADGROUP */

/* BLOCK's argument: milliseconds, absolute deadline out (0 = forever). */
static bool block_timeout_or_reply(client_t *c, robj *arg, long long *when) {
    long long ms;
    if (!cmd_get_ll_or_reply(c, arg, &ms, "timeout is not an integer or out of range")) return false;
    if (ms < 0) {
        reply_error(c, "timeout is negative");
        return false;
    }
    if (ms > 0) {
        long long now = util_mstime();
        if (ms > LLONG_MAX - now) {
            reply_error(c, "timeout is out of range");
            return false;
        }
        ms += now;
    }
    *when = ms;
    return true;
}

typedef struct read_args {
    long long timeout; /* -1: no BLOCK */
    long long count;
    int streams_arg, nstreams;
    bool noack;
    robj *group, *consumer;
} read_args_t;

static bool parse_read_args_or_reply(client_t *c, bool xgroup, read_args_t *a) {
    memset(a, 0, sizeof(*a));
    a->timeout = -1;
    const char *name = xgroup ? "xreadgroup" : "xread";
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const char *o = c->argv[i]->ptr;
        if (!strcasecmp(o, "block") && more) {
            /* From a script BLOCK does not block (Redis 7.2+; 7.0 refused it):
             * blocking_allowed() is false there, so nothing served is a null. */
            i++;
            if (!block_timeout_or_reply(c, c->argv[i], &a->timeout)) return false;
        } else if (!strcasecmp(o, "count") && more) {
            i++;
            if (!cmd_get_ll_or_reply(c, c->argv[i], &a->count, NULL)) return false;
            if (a->count < 0) a->count = 0;
        } else if (!strcasecmp(o, "streams") && more) {
            a->streams_arg = i + 1;
            int n = c->argc - a->streams_arg;
            if (n % 2 != 0) {
                reply_error(c,
                            "Unbalanced '%s' list of streams: for each stream key an ID or '%c' must be specified.",
                            name, xgroup ? '>' : '$');
                return false;
            }
            a->nstreams = n / 2;
            break;
        } else if (!strcasecmp(o, "group") && more >= 2) {
            if (!xgroup) {
                reply_error(c, "The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            a->group = c->argv[i + 1];
            a->consumer = c->argv[i + 2];
            i += 2;
        } else if (!strcasecmp(o, "noack")) {
            if (!xgroup) {
                reply_error(c, "The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            a->noack = true;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    if (a->streams_arg == 0) {
        reply_error(c, RL_ERR_SYNTAX);
        return false;
    }
    if (xgroup && !a->group) {
        reply_error(c, "Missing GROUP option for XREADGROUP");
        return false;
    }
    return true;
}

/* Resolve every stream's ID and group; false after an error reply. */
static bool resolve_read_ids_or_reply(client_t *c, const read_args_t *a, stream_id_t *ids, stream_cg_t **groups) {
    bool xgroup = a->group != NULL;
    for (int k = 0; k < a->nstreams; k++) {
        robj *key = c->argv[a->streams_arg + k];
        robj *idarg = c->argv[a->streams_arg + a->nstreams + k];
        robj *o = db_lookup_read(c->db, key, LOOKUP_NONE);
        if (!db_check_type_or_reply(c, o, OBJ_STREAM)) return false;
        if (xgroup) {
            stream_cg_t *g = o ? stream_cg_lookup(o->ptr, a->group->ptr, sds_len(a->group->ptr)) : NULL;
            if (!g) {
                reply_error(c, "NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option",
                            (char *)key->ptr, (char *)a->group->ptr);
                return false;
            }
            groups[k] = g;
        }
        const char *s = idarg->ptr;
        if (!strcmp(s, "$")) {
            if (xgroup) {
                reply_error(c, "The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
                               "of this consumer by specifying a proper ID, or use the > ID to get new messages. "
                               "The $ ID would just return an empty result set.");
                return false;
            }
            if (o) ids[k] = ((stream_t *)o->ptr)->last_id;
            else ids[k].ms = ids[k].seq = 0;
        } else if (!strcmp(s, "+")) { /* Redis 7.4: the last entry (from just below the last ID) */
            if (xgroup) {
                reply_error(c, "The + ID is meaningless in the context of XREADGROUP: you want to read the history "
                               "of this consumer by specifying a proper ID, or use the > ID to get new messages. "
                               "The + ID would just return an empty result set.");
                return false;
            }
            if (o) {
                ids[k] = ((stream_t *)o->ptr)->last_id;
                if (!stream_id_decr(&ids[k])) {
                    reply_error(c, "the stream last element ID is 0-0");
                    return false;
                }
            } else {
                ids[k].ms = ids[k].seq = 0;
            }
        } else if (!strcmp(s, ">")) {
            if (!xgroup) {
                reply_error(c, "The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
                               "<consumer> option.");
                return false;
            }
            ids[k].ms = ids[k].seq = UINT64_MAX;
        } else if (!stream_parse_id_or_reply(c, idarg, &ids[k], 0, true, NULL)) {
            return false;
        }
    }
    return true;
}

/* Serve stream k if it has something for us; returns whether it replied. */
static bool serve_one(client_t *c, const read_args_t *a, int k, stream_id_t *gt, stream_cg_t *group, size_t count,
                      long *served, void **slot) {
    robj *key = c->argv[a->streams_arg + k];
    robj *o = db_lookup_read(c->db, key, LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
    if (!o || o->type != OBJ_STREAM) return false;
    stream_prop_t prop = {key, a->group};
    stream_t *s = o->ptr;
    bool sync = false, history = false, created = false;
    stream_consumer_t *consumer = NULL;
    if (group) {
        /* The consumer comes into being, and is seen, even when nothing is
         * served (Redis 7.2+; 7.0 waited for a first entry). */
        sds cname = a->consumer->ptr;
        consumer = stream_consumer_lookup(group, cname, sds_len(cname));
        if (!consumer) {
            consumer = stream_consumer_create(group, cname, sds_len(cname), stream_now(c));
            notify_keyspace_event(c->srv, NOTIFY_STREAM, "xgroup-createconsumer", key, c->db->id);
            created = true;
            c->srv->dirty++;
        }
        consumer->seen_time = stream_now(c);
        if (gt->ms != UINT64_MAX || gt->seq != UINT64_MAX) {
            sync = history = true;
        } else if (s->length) {
            stream_id_t maxid;
            stream_edge_id(s, false, &maxid);
            if (stream_id_cmp(&maxid, &group->last_id) > 0) {
                sync = true;
                *gt = group->last_id;
            }
        }
    } else if (s->length) {
        stream_id_t maxid;
        stream_edge_id(s, false, &maxid);
        if (stream_id_cmp(&maxid, gt) > 0) sync = true;
    }
    /* A new consumer is logged as XGROUP CREATECONSUMER only when no
     * XCLAIM will bring it into being on a replica: with NOACK (as Redis
     * does), and when nothing new is served (Redis 7.4 logs nothing
     * there, and its replicas lack the consumer). */
    if (created && (a->noack || !sync || history)) stream_propagate_createconsumer(c, &prop, a->consumer);
    if (!sync) return false;
    if (++*served == 1) *slot = reply_deferred_len(c);
    stream_id_t start = *gt;
    stream_id_incr(&start);
    if (c->resp == 2) reply_array_len(c, 2);
    reply_bulk_obj(c, key);
    int flags = (a->noack ? STREAM_RWR_NOACK : 0) | (history ? STREAM_RWR_HISTORY : 0);
    stream_reply_range(c, s, &start, NULL, count, false, group, consumer, flags, group ? &prop : NULL);
    if (group) c->srv->dirty++;
    return true;
}

/* A blocked XREAD/XREADGROUP re-run because `ready` was written: serve it
 * from that stream alone, keep waiting, or (XREADGROUP) fail when the key
 * or the group went away, with Redis 7.0's texts. */
static void rerun_ready(client_t *c, const read_args_t *a, robj *ready, bool xgroup) {
    int k = 0;
    while (k < a->nstreams && sds_cmp(c->argv[a->streams_arg + k]->ptr, ready->ptr) != 0) k++;
    robj *o = db_lookup_read(c->db, ready, LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
    if (k == a->nstreams || !o || o->type != OBJ_STREAM) {
        if (xgroup) reply_error(c, "UNBLOCKED the stream key no longer exists");
        else blocking_block(c, 0, 0, OBJ_STREAM, 0, BLOCK_REPLY_NULL_ARRAY); /* keep waiting */
        return;
    }
    stream_cg_t *group = NULL;
    if (xgroup) {
        group = stream_cg_lookup(o->ptr, a->group->ptr, sds_len(a->group->ptr));
        if (!group) {
            reply_error(c, "NOGROUP the consumer group this client was blocked on no longer exists");
            return;
        }
    }
    stream_id_t id = {UINT64_MAX, UINT64_MAX};
    robj *idarg = c->argv[a->streams_arg + a->nstreams + k];
    if (strcmp(idarg->ptr, ">") != 0 && !stream_parse_id(idarg, &id, 0, true, NULL)) id.ms = id.seq = 0;
    size_t count = a->count ? (size_t)a->count : XREAD_BLOCKED_DEFAULT_COUNT;
    long served = 0;
    void *slot = NULL;
    serve_one(c, a, k, &id, group, count, &served, &slot);
    if (!served) {
        blocking_block(c, 0, 0, OBJ_STREAM, 0, BLOCK_REPLY_NULL_ARRAY);
        return;
    }
    if (c->resp == 2) reply_set_deferred_array_len(c, slot, served);
    else reply_set_deferred_map_len(c, slot, served);
}

void stream_read_command(client_t *c, bool xgroup) {
    read_args_t a;
    if (!parse_read_args_or_reply(c, xgroup, &a)) return;
    robj *ready = blocking_ready_key(c);
    if (ready) {
        rerun_ready(c, &a, ready, xgroup);
        return;
    }
    stream_id_t ids_static[8];
    stream_cg_t *groups_static[8];
    stream_id_t *ids = a.nstreams > 8 ? zmalloc(sizeof(*ids) * (size_t)a.nstreams) : ids_static;
    stream_cg_t **groups = a.nstreams > 8 ? zmalloc(sizeof(*groups) * (size_t)a.nstreams) : groups_static;
    if (!resolve_read_ids_or_reply(c, &a, ids, xgroup ? groups : NULL)) goto done;
    size_t count = (size_t)a.count;
    long served = 0;
    void *slot = NULL;
    for (int k = 0; k < a.nstreams; k++) serve_one(c, &a, k, &ids[k], xgroup ? groups[k] : NULL, count, &served, &slot);
    if (served) {
        if (c->resp == 2) reply_set_deferred_array_len(c, slot, served);
        else reply_set_deferred_map_len(c, slot, served);
        goto done;
    }
    if (a.timeout != -1) {
        if (!blocking_allowed(c)) {
            reply_null_array(c);
            goto done;
        }
        /* A re-run keeps the resolved IDs: "$" becomes the last ID now, "+" the ID below it. */
        for (int k = 0; k < a.nstreams; k++) {
            int idx = a.streams_arg + a.nstreams + k;
            const char *id = c->argv[idx]->ptr;
            if (!strcmp(id, "$") || !strcmp(id, "+")) stream_rewrite_arg(c, idx, stream_id_object(&ids[k]));
        }
        blocking_block(c, a.streams_arg, a.nstreams, OBJ_STREAM, a.timeout, BLOCK_REPLY_NULL_ARRAY);
        goto done;
    }
    reply_null_array(c);
done:
    if (ids != ids_static) zfree(ids);
    if (groups != groups_static) zfree(groups);
}

static void cmd_xread(client_t *c) { stream_read_command(c, false); }

command_t stream_commands[] = {
    {"xadd", cmd_xadd, -5, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "stream", "Appends a new entry to a stream", "5.0.0", NULL},
    {"xrange", cmd_xrange, -4, CMD_READONLY, 1, 1, 1, "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0", NULL},
    {"xrevrange", cmd_xrevrange, -4, CMD_READONLY, 1, 1, 1, "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "5.0.0", NULL},
    {"xlen", cmd_xlen, 2, CMD_READONLY | CMD_FAST, 1, 1, 1, "stream", "Return the number of entries in a stream", "5.0.0", NULL},
    {"xdel", cmd_xdel, -3, CMD_WRITE | CMD_FAST, 1, 1, 1, "stream", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "5.0.0", NULL},
    {"xtrim", cmd_xtrim, -4, CMD_WRITE, 1, 1, 1, "stream", "Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", NULL},
    {"xsetid", cmd_xsetid, -3, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "stream", "An internal command for replicating stream values", "5.0.0", NULL},
    {"xread", cmd_xread, -4, CMD_READONLY | CMD_BLOCKING, 0, 0, 0, "stream", "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "5.0.0", NULL},
    {0},
};
