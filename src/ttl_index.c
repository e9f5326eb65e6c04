/* ttl_index.c: the index of the keys with a TTL (see ttl_index.h).
 *
 * The index is a lib/hashtable whose entries are the keyspace entries'
 * pointers themselves (the pointer is the key: an update never reads the
 * entry, and an entry that moves is a delete of the old pointer and an
 * insert of the new one).  About 8.4 bytes per key with a TTL.
 *
 * When it exists (thresholds measured in docs/benchmarks-history.md,
 * "Keyspace, step 5": among 1M keys, without it, 1 in 8 keys with a TTL
 * collected a mass expiry 1 s later than with it, 1 in 16 2 s later and
 * spent 9 ms of cycle CPU per second with nothing to expire, against
 * 0.1; 1 in 32 and 1 in 64 6.7 s later and 11-20 ms/s):
 *   - built when the db holds at least TTL_INDEX_MIN_KEYS keys and at
 *     most one in TTL_INDEX_BUILD_RATIO has a TTL;
 *   - dropped when fewer than TTL_INDEX_MIN_KEYS / 2 keys are left or
 *     more than one in TTL_INDEX_DROP_RATIO has a TTL.
 * The gap between the two ratios is the hysteresis: a db near one
 * threshold does not build and drop in turn.  Below them the samplers
 * walk the keys table, where a sample costs at most the ratio's number of
 * entries read, and a key with a TTL costs only its 8 bytes.
 *
 * States:
 *   none      db->ttl_index == NULL;
 *   building  the index holds a subset of the entries with a TTL: those
 *             added or given a TTL since it was created, and those the
 *             build cursor has passed in the keys table (ht_scan: every
 *             entry present for the whole walk is seen).  Nobody samples
 *             it yet; the cron walks on (ttl_index_cron);
 *   ready     it holds exactly the entries with a TTL
 *             (ht_size == db->expires_count).
 * An index created over a db without keys with a TTL, or over a small
 * table (at most TTL_INDEX_SYNC_BUILD keys, under a millisecond), is
 * ready at once; the build walk is only for a db that crossed the
 * threshold by losing many keys with a TTL or by DEBUG TTL-INDEX. */
#include "ttl_index.h"

#include <stdio.h>

#include "util.h"
#include "zmalloc.h"

#define TTL_INDEX_MIN_KEYS 4096
#define TTL_INDEX_BUILD_RATIO 16 /* build when expires * 16 <= keys */
#define TTL_INDEX_DROP_RATIO 8   /* drop when expires * 8 > keys */
#define TTL_INDEX_SYNC_BUILD 8192

struct ttl_index {
    ht *t;               /* db_entry pointers, each with a TTL */
    bool building;       /* t may lack entries the cursor has not passed */
    size_t build_cursor; /* ht_scan cursor in db->keys while building */
};

/* entry_key NULL: the pointer is the key; key_eq NULL: pointers compared;
 * entry_free NULL: the keys table owns the entries. */
static const ht_type index_type = {NULL, ht_hash_pointer, NULL, NULL};

static void build_one(void *priv, void *entry) {
    if (db_entry_expire(entry) >= 0) ht_add(priv, entry);
}

/* Walk the keys table from the build cursor for up to budget_us (0: to
 * the end); the index is ready when the walk wrapped. */
static void build_walk(db_t *db, uint64_t budget_us) {
    struct ttl_index *ix = db->ttl_index;
    long long start = util_monotonic_us();
    for (;;) {
        for (int i = 0; i < 64; i++) {
            ix->build_cursor = ht_scan(db->keys, ix->build_cursor, build_one, ix->t);
            if (ix->build_cursor == 0) {
                ix->building = false;
                return;
            }
        }
        if (budget_us && (uint64_t)(util_monotonic_us() - start) >= budget_us) return;
    }
}

static void create(db_t *db) {
    struct ttl_index *ix = zcalloc(sizeof(*ix));
    ix->t = ht_create(&index_type);
    db->ttl_index = ix;
    if (db->expires_count == 0) return; /* empty is exact */
    ix->building = true;
    if (ht_size(db->keys) <= TTL_INDEX_SYNC_BUILD) build_walk(db, 0);
}

void ttl_index_release(db_t *db) {
    struct ttl_index *ix = db->ttl_index;
    if (!ix) return;
    ht_release(ix->t); /* the bucket arrays only: no entry_free */
    zfree(ix);
    db->ttl_index = NULL;
}

/* Whether db should have an index, given whether it has one now. */
static bool wanted(const db_t *db, bool have) {
    int mode = db->srv->ttl_index_mode;
    if (mode != TTL_INDEX_AUTO) return mode == TTL_INDEX_ALWAYS;
    size_t keys = ht_size(db->keys), ttl = db->expires_count;
    if (have) return keys >= TTL_INDEX_MIN_KEYS / 2 && ttl * TTL_INDEX_DROP_RATIO <= keys;
    return keys >= TTL_INDEX_MIN_KEYS && ttl * TTL_INDEX_BUILD_RATIO <= keys;
}

void ttl_index_check(db_t *db) {
    bool have = db->ttl_index != NULL;
    if (wanted(db, have) == have) return;
    if (have) ttl_index_release(db);
    else create(db);
}

void ttl_index_add(db_t *db, db_entry *e) {
    if (db->ttl_index) ht_add(db->ttl_index->t, e); /* building: may be there already */
    ttl_index_check(db);
}

void ttl_index_remove(db_t *db, const db_entry *e) {
    if (db->ttl_index) ht_delete(db->ttl_index->t, e); /* building: may be absent */
}

void ttl_index_moved(db_t *db, const db_entry *old, db_entry *e) {
    struct ttl_index *ix = db->ttl_index;
    /* Absent while building: the walk will meet e in old's table slot. */
    if (ix && ht_delete(ix->t, old)) ht_add(ix->t, e);
}

void ttl_index_cron(db_t *db, uint64_t budget_us) {
    if (db->ttl_index && db->ttl_index->building) build_walk(db, budget_us);
}

ht *ttl_index_table(const db_t *db) {
    struct ttl_index *ix = db->ttl_index;
    return ix && !ix->building ? ix->t : NULL;
}

size_t ttl_index_mem(const db_t *db) {
    struct ttl_index *ix = db->ttl_index;
    return ix ? ht_mem_usage(ix->t) + zmalloc_size(ix) : 0;
}

void ttl_index_set_mode(server_t *srv, int mode) {
    srv->ttl_index_mode = mode;
    for (int i = 0; i < srv->dbnum; i++) ttl_index_check(&srv->dbs[i]);
}

/* Every indexed pointer is the entry the keys table holds under its key,
 * with a TTL (a stale pointer fails here, or under ASan); a ready index
 * has as many as the db counts, so it holds them all. */
static bool consistent(db_t *db) {
    struct ttl_index *ix = db->ttl_index;
    ht_iter it;
    void *p;
    size_t n = 0;
    bool ok = true;
    ht_iter_init(&it, ix->t, false);
    while (ok && ht_next(&it, &p)) {
        void *found;
        ok = ht_find(db->keys, db_entry_key(p), &found) && found == p && db_entry_expire(p) >= 0;
        n++;
    }
    ht_iter_release(&it);
    return ok && (ix->building ? n <= db->expires_count : n == db->expires_count);
}

void ttl_index_describe(db_t *db, char *buf, size_t len) {
    static const char *modes[] = {"auto", "always", "never"};
    struct ttl_index *ix = db->ttl_index;
    const char *state = !ix ? "none" : ix->building ? "building"
                                                    : "ready";
    snprintf(buf, len, "mode:%s state:%s entries:%zu expires:%zu keys:%zu consistent:%s",
             modes[db->srv->ttl_index_mode], state, ix ? ht_size(ix->t) : 0, db->expires_count,
             ht_size(db->keys), !ix || consistent(db) ? "yes" : "no");
}
