/* evict.c: maxmemory policies (see evict.h).
 *
 * Approximated LRU/LFU, the way Redis does it in spirit: instead of keeping
 * every key in an exact LRU list (two pointers per key), each eviction
 * samples maxmemory-samples keys per database and scores them:
 *   LRU  score = idle time in ms (from the 1 s LRU clock)
 *   LFU  score = 255 - decayed log counter
 *   TTL  score = ULLONG_MAX - expire time (soonest to expire is best)
 * The best candidates seen so far are kept in a pool of EVICT_POOL_SIZE
 * entries, sorted by ascending score, that survives between evictions: a
 * good candidate found once stays a candidate, so with 5 samples the result
 * is close to exact LRU (see tests/integration/test_evict.py).  Pool keys
 * are private sds copies, never pointers into the keyspace, so a key deleted
 * meanwhile is just skipped.  Random policies pick uniformly per database.
 *
 * Freed memory is measured as the drop of used_memory around each delete.
 * With lazyfree-lazy-eviction the value is freed on the bio thread, so the
 * drop shows up later: every 16 evictions the loop rechecks used_memory, and
 * while lazy frees are pending an unmet target is not an OOM. */
#include "evict.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evloop.h"
#include "keyspace.h"
#include "lazyfree.h"
#include "notify.h"
#include "propagate.h"
#include "repl.h"
#include "ttl_index.h"
#include "util.h"

typedef struct pool_entry {
    unsigned long long score; /* higher = better to evict */
    sds key;                  /* our copy; NULL = empty slot */
    int dbid;
} pool_entry_t;

/* Invariant: the used slots are pool[0..count), score ascending. */
struct evict {
    pool_entry_t pool[EVICT_POOL_SIZE];
    int count;
    int next_db;             /* round robin start for random policies */
    bool resuming;           /* a call ran out of time: before-sleep goes on, a slice per loop */
    long long over_since_us; /* since when eviction has not got under the limit; 0 when it has */
    long long over_total_us; /* the finished such spells (INFO total_eviction_exceeded_time) */
};

/* How long one call may evict, from maxmemory-eviction-tenacity (0..100),
 * on Redis's scale: 50 us a step up to 10 (500 us, the default), then 15%
 * more a step (about two minutes at 99), and no limit at 100.  A call that
 * runs out of time lets its command run and leaves the rest to a slice
 * per event-loop round (evict_before_sleep), so one write never stalls the
 * server for long. */
static long long time_limit_us(long long tenacity) {
    if (tenacity <= 10) return 50 * tenacity;
    if (tenacity < 100) return (long long)(500.0 * pow(1.15, (double)(tenacity - 10)));
    return LLONG_MAX;
}

evict_t *evict_create(void) { return zcalloc(sizeof(evict_t)); }

static void pool_clear(evict_t *ev) {
    for (int i = 0; i < ev->count; i++) sds_free(ev->pool[i].key);
    ev->count = 0;
}

void evict_free(evict_t *ev) {
    if (!ev) return;
    pool_clear(ev);
    zfree(ev);
}

static bool policy_is_volatile(int policy) {
    return policy == MAXMEMORY_VOLATILE_LRU || policy == MAXMEMORY_VOLATILE_LFU ||
           policy == MAXMEMORY_VOLATILE_RANDOM || policy == MAXMEMORY_VOLATILE_TTL;
}

/* ---------------------------------------------------------------- pool */

static unsigned long long score_of(server_t *srv, const robj *val, long long expire_ms) {
    switch (srv->cfg.maxmemory_policy) {
        case MAXMEMORY_VOLATILE_TTL: return ULLONG_MAX - (unsigned long long)expire_ms;
        case MAXMEMORY_ALLKEYS_LFU:
        case MAXMEMORY_VOLATILE_LFU: return 255 - evict_lfu_counter(srv, val);
        default: return obj_idle_ms(val);
    }
}

/* Insert a candidate keeping the order; a candidate worse than every entry
 * of a full pool is dropped, else a full pool drops its worst entry. */
static void pool_insert(evict_t *ev, int dbid, sds key, unsigned long long score) {
    for (int i = 0; i < ev->count; i++)
        if (ev->pool[i].dbid == dbid && sds_cmp(ev->pool[i].key, key) == 0) return;
    int k = 0;
    while (k < ev->count && ev->pool[k].score < score) k++;
    if (ev->count == EVICT_POOL_SIZE) {
        if (k == 0) return;
        sds_free(ev->pool[0].key);
        memmove(&ev->pool[0], &ev->pool[1], sizeof(pool_entry_t) * (size_t)(k - 1));
        k--;
    } else {
        memmove(&ev->pool[k + 1], &ev->pool[k], sizeof(pool_entry_t) * (size_t)(ev->count - k));
        ev->count++;
    }
    ev->pool[k].score = score;
    ev->pool[k].key = sds_dup(key);
    ev->pool[k].dbid = dbid;
}

/* The volatile policies need keys with a TTL.  Where they are rare the
 * db keeps an index of them (ttl_index.h), sampled instead; elsewhere
 * they live in the keys table with the others: the samples are filtered,
 * and a db is sampled again, up to this many times per call. */
#define EVICT_VOLATILE_ROUNDS 16

static bool qualifies(const db_entry *e, bool volatile_only) { return !volatile_only || db_entry_expire(e) >= 0; }

static void pool_populate(server_t *srv, evict_t *ev, db_t *db, bool volatile_only) {
    void *samples[64];
    size_t want = (size_t)srv->cfg.maxmemory_samples, got = 0;
    if (want > 64) want = 64;
    ht *from = volatile_only ? ttl_index_table(db) : NULL;
    if (!from) from = db->keys;
    for (int round = 0; got < want && round < (volatile_only ? EVICT_VOLATILE_ROUNDS : 1); round++) {
        size_t n = ht_sample(from, samples, want);
        for (size_t i = 0; i < n; i++) {
            db_entry *e = samples[i];
            if (!qualifies(e, volatile_only)) continue;
            long long expire_ms = volatile_only ? db_entry_expire(e) : -1;
            robj view;
            pool_insert(ev, db->id, db_entry_key(e), score_of(srv, db_entry_val(e, &view), expire_ms));
            got++;
        }
    }
}

/* Keys that may be evicted in db under the policy's scope. */
static size_t candidates_in(const db_t *db, bool volatile_only) {
    return volatile_only ? db_expires_size(db) : db_size(db);
}

/* Take the best pool entry whose key still qualifies; the caller frees the
 * returned key.  NULL when the pool holds nothing usable. */
static sds pool_take_best(server_t *srv, evict_t *ev, bool volatile_only, int *dbid) {
    while (ev->count > 0) {
        pool_entry_t e = ev->pool[--ev->count];
        db_entry *de = db_find(&srv->dbs[e.dbid], e.key);
        if (de && qualifies(de, volatile_only)) {
            *dbid = e.dbid;
            return e.key;
        }
        sds_free(e.key);
    }
    return NULL;
}

/* ---------------------------------------------------------------- choice */

static sds pick_random(server_t *srv, evict_t *ev, bool volatile_only, int *dbid) {
    for (int i = 0; i < srv->dbnum; i++) {
        int id = (ev->next_db + i) % srv->dbnum;
        db_t *db = &srv->dbs[id];
        if (candidates_in(db, volatile_only) == 0) continue;
        /* Uniform among the keys, so uniform among those with a TTL after
         * rejecting the others; bounded for a db where they are rare. */
        ht *from = volatile_only ? ttl_index_table(db) : NULL;
        if (!from) from = db->keys;
        for (int tries = 0; tries < EVICT_VOLATILE_ROUNDS * 64; tries++) {
            void *e;
            if (!ht_random_entry(from, &e)) break;
            if (!qualifies(e, volatile_only)) continue;
            ev->next_db = (id + 1) % srv->dbnum;
            *dbid = id;
            return sds_dup(db_entry_key(e));
        }
    }
    return NULL;
}

static sds pick_sampled(server_t *srv, evict_t *ev, bool volatile_only, int *dbid) {
    /* Each pass adds samples of every db to the pool; a pass that finds
     * nothing usable (keys with a TTL too rare to be met) is retried a
     * bounded number of times, then this eviction gives up. */
    for (int pass = 0; pass < EVICT_VOLATILE_ROUNDS; pass++) {
        size_t candidates = 0;
        for (int i = 0; i < srv->dbnum; i++) {
            db_t *db = &srv->dbs[i];
            if (candidates_in(db, volatile_only) == 0) continue;
            candidates += candidates_in(db, volatile_only);
            pool_populate(srv, ev, db, volatile_only);
        }
        if (candidates == 0) break;
        sds key = pool_take_best(srv, ev, volatile_only, dbid);
        if (key) return key;
    }
    pool_clear(ev);
    return NULL;
}

/* The next key to evict under the current policy (caller frees), or NULL
 * if no key qualifies. */
static sds pick_victim(server_t *srv, evict_t *ev, int *dbid) {
    int policy = srv->cfg.maxmemory_policy;
    bool vol = policy_is_volatile(policy);
    if (policy == MAXMEMORY_ALLKEYS_RANDOM || policy == MAXMEMORY_VOLATILE_RANDOM)
        return pick_random(srv, ev, vol, dbid);
    return pick_sampled(srv, ev, vol, dbid);
}

/* ---------------------------------------------------------------- main */

/* Memory that eviction cannot win back and must not chase (Redis's
 * "not counted for evict"): the replication backlog and the replicas'
 * output buffers; counting them would evict the dataset to make room for
 * the very stream that carries the evictions. */
static size_t counted_memory(const server_t *srv) {
    size_t used = zmalloc_used_memory();
    size_t skip = repl_backlog_memory(srv) + repl_replica_buffers_memory(srv);
    return used > skip ? used - skip : 0;
}

static bool over_limit(const server_t *srv) { return counted_memory(srv) > (size_t)srv->cfg.maxmemory; }

enum { EVICT_OK,
       EVICT_RUNNING,
       EVICT_FAIL };

static int perform(server_t *srv) {
    if (srv->cfg.maxmemory <= 0 || !over_limit(srv)) return EVICT_OK;
    /* repl.h: a replica holds what its master holds (replica-ignore-maxmemory) */
    if (repl_is_replica(srv) && srv->cfg.replica_ignore_maxmemory) return EVICT_OK;
    if (srv->cfg.maxmemory_policy == MAXMEMORY_NOEVICTION) return EVICT_FAIL;
    evict_t *ev = srv->evict;
    long long limit_us = time_limit_us(srv->cfg.maxmemory_eviction_tenacity);
    size_t to_free = counted_memory(srv) - (size_t)srv->cfg.maxmemory, freed = 0;
    bool lazy = srv->cfg.lazyfree_lazy_eviction;
    long long start = util_ustime();
    unsigned long evicted = 0;
    /* The target is measured again when reached: memory other than the
     * victims' (the pool's copies, notifications) moves meanwhile. */
    while (freed < to_free || (!lazy && over_limit(srv))) {
        int dbid = 0;
        sds key = pick_victim(srv, ev, &dbid);
        if (!key) break;
        size_t before = zmalloc_used_memory();
        robj k = {.type = OBJ_STRING, .encoding = OBJ_ENCODING_RAW, .refcount = 1, .ptr = key};
        db_delete_lazy(&srv->dbs[dbid], &k, lazy);
        propagate_del(srv, dbid, &k, lazy); /* replicas and the AOF drop it too */
        size_t after = zmalloc_used_memory();
        notify_keyspace_event(srv, NOTIFY_EVICTED, "evicted", &k, dbid); /* notify.c */
        sds_free(key);
        if (before > after) freed += before - after;
        srv->stats.evictedkeys++;
        evicted++;
        /* Lazily freed values come back later: look at the real figure. */
        if (lazy && evicted % 16 == 0 && !over_limit(srv)) break;
        if (evicted % 16 == 0 && util_ustime() - start > limit_us) return EVICT_RUNNING;
    }
    if (freed >= to_free || !over_limit(srv)) return EVICT_OK;
    /* Nothing left to evict: only pending lazy frees can still help. */
    if (lazyfree_pending_objects(srv->lazyfree) > 0) return EVICT_RUNNING;
    return EVICT_FAIL;
}

/* Run an eviction and keep its timer and its over-the-limit clock. */
static int perform_and_account(server_t *srv) {
    evict_t *ev = srv->evict;
    int rc = perform(srv);
    if (rc == EVICT_OK) {
        if (ev->over_since_us) ev->over_total_us += util_ustime() - ev->over_since_us;
        ev->over_since_us = 0;
    } else if (!ev->over_since_us) {
        ev->over_since_us = util_ustime();
    }
    /* Another slice in the next loop round, without sleeping (an evloop
     * timer waits 1 ms or more), after the clients ready meanwhile. */
    ev->resuming = rc == EVICT_RUNNING;
    if (ev->resuming) evloop_request_next_round(srv->loop);
    return rc;
}

void evict_before_sleep(server_t *srv) {
    if (srv->evict->resuming) perform_and_account(srv);
}

bool evict_perform(server_t *srv) { return perform_and_account(srv) != EVICT_FAIL; }

long long evict_exceeded_total_ms(const server_t *srv) {
    const evict_t *ev = srv->evict;
    long long us = ev->over_total_us + (ev->over_since_us ? util_ustime() - ev->over_since_us : 0);
    return us / 1000;
}

long long evict_exceeded_current_ms(const server_t *srv) {
    const evict_t *ev = srv->evict;
    return ev->over_since_us ? (util_ustime() - ev->over_since_us) / 1000 : 0;
}

void evict_reset_stats(server_t *srv) {
    evict_t *ev = srv->evict;
    ev->over_total_us = 0;
    if (ev->over_since_us) ev->over_since_us = util_ustime();
}
