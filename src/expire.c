/* expire.c: active expiry.
 *
 * Lazy expiry (keyspace.c) only deletes keys that are touched; keys nobody
 * reads again would stay forever.  So each cron tick samples keys with a TTL
 * from each database and deletes the expired ones:
 *   - per db, sample up to 20 keys with a TTL (x active-expire-effort)
 *     with a scan cursor that resumes where the last tick stopped.  Where
 *     keys with a TTL are rare, the db keeps an index of them
 *     (ttl_index.h) and the cursor walks it; elsewhere it walks the keys
 *     table (the TTL lives in the key's entry) and steps over the keys
 *     without one: then the db is small or at least one key in 16 has a
 *     TTL, and a round visits at most 20 buckets per wanted sample;
 *   - if more than 10% of a sample was expired, the db probably holds many
 *     more: sample it again;
 *   - stop when the time budget is spent: 25% of one cron period (25 ms at
 *     hz 10), so expiry never takes more than a quarter of the CPU.
 * The running average TTL for INFO keyspace is updated from the samples.
 *
 * A replica runs none of this (its master's DELs expire its keys), except
 * for the keys its own clients gave a TTL on a writable replica (Redis's
 * expireSlaveKeys): replica_cycle walks their names (keyspace.h), deletes
 * the expired ones and forgets the names of keys gone or without a TTL;
 * it stops after 3 keys still to live, or after 1 ms. */
#include "expire.h"

#include "hash_ttl.h"
#include "keyspace.h"
#include "latency.h"
#include "pause.h"
#include "repl.h"
#include "ttl_index.h"
#include "util.h"

#define EXPIRE_KEYS_PER_LOOP 20
#define EXPIRE_ACCEPTABLE_STALE 10 /* percent */
#define EXPIRE_CPU_PERCENT 25

typedef struct sample_ctx {
    db_t *db;
    long long now;
    long sampled, expired;
    long long ttl_sum;
    long ttl_n;
    sds *doomed;
    int ndoomed;
} sample_ctx;

static void sample_one(void *priv, void *entry) {
    sample_ctx *s = priv;
    long long when = db_entry_expire(entry);
    if (when < 0) return; /* no TTL: not a sample */
    s->sampled++;
    if (when <= s->now) {
        if (s->ndoomed < EXPIRE_KEYS_PER_LOOP * 40)
            s->doomed[s->ndoomed++] = sds_dup(db_entry_key(entry));
    } else {
        s->ttl_sum += when - s->now;
        s->ttl_n++;
    }
}

/* One sampling round on db; returns the percentage found expired. */
static long expire_round(server_t *srv, db_t *db, long per_loop) {
    sds doomed[EXPIRE_KEYS_PER_LOOP * 40];
    sample_ctx s = {db, srv->mstime, 0, 0, 0, 0, doomed, 0};
    int buckets = 0;
    /* The index of the keys with a TTL when the db keeps one (they are
     * rare: ttl_index.h), else the keys table, skipping the others. */
    ht *table = ttl_index_table(db);
    if (!table) table = db->keys;
    /* Visit buckets until enough keys were seen (bounded for sparse tables). */
    do {
        db->expire_cursor = ht_scan(table, db->expire_cursor, sample_one, &s);
        buckets++;
    } while (db->expire_cursor && s.sampled < per_loop && buckets < per_loop * 20);
    for (int i = 0; i < s.ndoomed; i++) {
        robj key = {OBJ_STRING, OBJ_ENCODING_RAW, 0, 1, doomed[i]};
        if (db_expire_if_needed(db, &key)) s.expired++;
        sds_free(doomed[i]);
    }
    if (s.ttl_n) {
        long long avg = s.ttl_sum / s.ttl_n;
        db->avg_ttl = db->avg_ttl ? (db->avg_ttl / 50) * 49 + avg / 50 : avg;
    }
    return s.sampled ? s.expired * 100 / s.sampled : 0;
}

#define REPLICA_CYCLE_LIVE_MAX 3 /* keys found still to live: enough for this tick */
#define REPLICA_CYCLE_US 1000

typedef struct names_ctx {
    sds *names;
    int n, cap;
} names_ctx;

static void collect_name(void *priv, void *name) {
    names_ctx *x = priv;
    if (x->n < x->cap) x->names[x->n++] = sds_dup(name);
}

/* One pass over a db's tracked names; false once the tick has done enough. */
static bool replica_cycle_db(server_t *srv, db_t *db, long long start, int *live) {
    sds names[64];
    do {
        names_ctx x = {names, 0, 64};
        db->own_cursor = ht_scan(db->replica_ttl_keys, db->own_cursor, collect_name, &x);
        bool wrapped = db->own_cursor == 0;
        for (int i = 0; i < x.n; i++) {
            robj key = {OBJ_STRING, OBJ_ENCODING_RAW, 0, 1, names[i]};
            long long when = db_get_expire(db, &key);
            if (when >= 0 && when > srv->mstime) (*live)++;
            else if (when < 0 || db_expire_own_key(db, &key)) db_untrack_replica_ttl_key(db, names[i]);
            sds_free(names[i]);
        }
        if (*live > REPLICA_CYCLE_LIVE_MAX || util_monotonic_us() - start > REPLICA_CYCLE_US) return false;
        if (wrapped) return true;
    } while (db->replica_ttl_keys);
    return true;
}

static void replica_cycle(server_t *srv) {
    long long start = util_monotonic_us();
    int live = 0;
    for (int i = 0; i < srv->dbnum; i++)
        if (srv->dbs[i].replica_ttl_keys && !replica_cycle_db(srv, &srv->dbs[i], start, &live)) break;
}

void expire_active_cycle(server_t *srv) {
    if (pause_active(srv)) return;        /* pause.c: the dataset holds still */
    if (!repl_keys_expire_locally(srv)) { /* repl.h: a replica waits for its master's DEL */
        replica_cycle(srv);
        return;
    }
    long effort = srv->cfg.active_expire_effort - 1;
    long per_loop = EXPIRE_KEYS_PER_LOOP + EXPIRE_KEYS_PER_LOOP / 4 * effort;
    long long budget_us = 1000000LL * EXPIRE_CPU_PERCENT / 100 / srv->hz;
    long long start = util_monotonic_us();
    for (int i = 0; i < srv->dbnum; i++) {
        db_t *db = &srv->dbs[i];
        while (db_expires_size(db) > 0) {
            long stale = expire_round(srv, db, per_loop);
            if (stale <= EXPIRE_ACCEPTABLE_STALE) break;
            if (util_monotonic_us() - start > budget_us) break;
        }
        if (util_monotonic_us() - start > budget_us) break;
    }
    /* hash_ttl.c: then hash fields past their TTL, in what is left */
    if (util_monotonic_us() - start < budget_us) hash_ttl_active_expire(srv, start + budget_us);
    long long elapsed = util_monotonic_us() - start;
    srv->stats.expire_cycle_cpu_us += elapsed;
    /* latency.c: LATENCY LATEST's "expire-cycle", as Redis records it */
    latency_add_sample_if_needed(srv, "expire-cycle", elapsed / 1000);
}
