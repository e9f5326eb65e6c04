/* defrag.c: active defragmentation (see defrag.h).
 *
 * A cycle starts when activedefrag is on, the allocator can advise moves
 * (zmalloc_has_defrag) and the cron's allocator sample shows
 *   frag% = (active / allocated - 1) * 100 > active-defrag-threshold-lower
 *   and active - allocated > active-defrag-ignore-bytes.
 * It then scans every database's keys table with a cursor (the only index
 * of the keys: expire times live in the entries), and for each key offers
 * to the allocator:
 *   - the value's robj (only if refcount is 1: a shared or otherwise
 *     referenced object cannot have its address changed),
 *   - the encoded data: listpacks, intsets, quicklist nodes and their
 *     listpacks, the table of a hashtable set/hash (its handle, its bucket
 *     arrays) and its entries (one block per member, or per field with its
 *     value),
 *     a stream's struct and node listpacks, a skiplist sorted set's
 *     struct, skiplist, header, member table (handle and bucket arrays)
 *     and every node with its member (zsl_defrag_node repoints the links; the member table's
 *     slot is the scan's),
 *   - the keyspace entry itself (db_entry.h: key, value pointer, expire),
 *     whose table slot the scan points at the new copy, as the index of
 *     keys with a TTL does when the db keeps one (ttl_index.h);
 *   - and, as the walk of a database starts, its keys table's bucket
 *     arrays.
 * Every move is zmalloc_defrag_move(): the allocator decides, we only fix
 * the pointers.  Raw sds strings are moved whole (sds_hdr_len gives the block
 * start).  DEBUG DEFRAG-PASS runs one pass with every block moved, so
 * tests see each pointer fixed whatever the allocator would decide.
 *
 * Budget: each cron tick may spend cpu% of the tick period, cpu% going from
 * active-defrag-cycle-min at the lower threshold to -cycle-max at the upper
 * one.  A collection with more than active-defrag-max-scan-fields entries
 * is remembered by name and its table scanned in later slices, so one key
 * never blows the budget.  The cycle ends when every table has been walked;
 * the next tick decides afresh whether another is needed.  A cycle flushes
 * the allocator's thread cache when it starts and ends: cached blocks
 * count as taken from their slabs, for the hints and for active. */
#include "defrag.h"

#include <string.h>

#include "evloop.h"
#include "keyspace.h"
#include "quicklist.h"
#include "stream.h"
#include "ttl_index.h"
#include "zset.h"
#include "util.h"

enum { PHASE_KEYS = 0,
       PHASE_EXPIRES = 1 };

struct defrag {
    bool running;
    int cpu_pct;          /* effort of the current cycle */
    int dbid, phase;      /* table being walked */
    unsigned long cursor; /* ht_scan cursor in that table */
    sds big_key;          /* collection done in slices, or NULL */
    int big_db;
    unsigned long big_cursor;
    long long cycle_start_ms;
    long long cycle_start_hits;  /* hits when the cycle began */
    long long idle_until_ms;     /* no new cycle before this (see cycle_stop) */
    long long tick_budget_us;    /* work left for this cron tick */
    evloop_timer_t *slice_timer; /* runs the rest of the tick's budget in slices */
    long long total_ms;          /* finished cycles */
    long long hits, misses, key_hits, key_misses;
    bool force; /* defrag_debug_pass: every offered block moves */
};

typedef struct scan_ctx {
    server_t *srv;
    defrag_t *df;
    db_t *db;
} scan_ctx_t;

defrag_t *defrag_create(void) { return zcalloc(sizeof(defrag_t)); }

void defrag_release_timer(defrag_t *df) {
    if (df && df->slice_timer) {
        evloop_timer_free(df->slice_timer);
        df->slice_timer = NULL;
    }
}

void defrag_free(defrag_t *df) {
    if (!df) return;
    defrag_release_timer(df);
    sds_free(df->big_key);
    zfree(df);
}

void defrag_reset_stats(defrag_t *df) {
    df->hits = df->misses = df->key_hits = df->key_misses = 0;
    df->total_ms = 0;
}

void defrag_get_stats(server_t *srv, defrag_stats_t *out) {
    defrag_t *df = srv->defrag;
    out->hits = df->hits;
    out->misses = df->misses;
    out->key_hits = df->key_hits;
    out->key_misses = df->key_misses;
    out->current_time_ms = df->running ? srv->mstime - df->cycle_start_ms : 0;
    out->total_time_ms = df->total_ms + out->current_time_ms;
    out->running_cpu_pct = df->running ? df->cpu_pct : 0;
}

/* ---------------------------------------------------------------- moves */

/* A move whatever the allocator thinks (defrag_debug_pass). */
static void *forced_move(void *p) {
    size_t size = zmalloc_size(p);
    void *n = zmalloc(size);
    memcpy(n, p, size);
    zfree(p);
    return n;
}

/* Offer one block; the new address, or NULL if it stays. */
static void *offer(defrag_t *df, void *p) {
    void *n = df->force ? forced_move(p) : zmalloc_defrag_move(p);
    if (n) df->hits++;
    else df->misses++;
    return n;
}

static void defrag_quicklist(defrag_t *df, robj *o) {
    quicklist *ql = offer(df, o->ptr);
    if (ql) o->ptr = ql;
    else ql = o->ptr;
    for (ql_node_t *node = ql->head; node; node = node->next) {
        unsigned char *lp = offer(df, node->lp);
        if (lp) node->lp = lp;
        ql_node_t *moved = offer(df, node);
        if (!moved) continue;
        /* The neighbours (or the list ends) pointed at the old node. */
        if (moved->prev) moved->prev->next = moved;
        else ql->head = moved;
        if (moved->next) moved->next->prev = moved;
        else ql->tail = moved;
        node = moved;
    }
}

/* Any block, through offer (zskiplist's and the bucket arrays' callback). */
static void *move_block_cb(void *priv, void *block) { return offer(priv, block); }

/* An entry of a hashtable set or hash (a member sds, or a field sds with
 * its value behind it in the same block): the block moves whole. */
static void *move_member_cb(void *priv, void *entry) {
    size_t h = sds_hdr_len(entry);
    char *n = offer(priv, (char *)entry - h);
    return n ? n + h : NULL;
}

/* A collection with more entries than active-defrag-max-scan-fields is
 * left for later slices (big_key_step) when none is pending: true then. */
static bool defer_big(scan_ctx_t *cx, const ht *t, sds key) {
    defrag_t *df = cx->df;
    if ((long long)ht_size(t) <= cx->srv->cfg.active_defrag_max_scan_fields || df->big_key) return false;
    df->big_key = sds_dup(key);
    df->big_db = cx->db->id;
    df->big_cursor = 0;
    return true;
}

/* A hashtable set or hash: its table handle now, its entries now if few,
 * else in later slices (big_key). */
static void defrag_table(scan_ctx_t *cx, robj *o, sds key) {
    defrag_t *df = cx->df;
    ht *t = offer(df, o->ptr);
    if (t) o->ptr = t;
    else t = o->ptr;
    ht_defrag_tables(t, move_block_cb, df);
    if (defer_big(cx, t, key)) return;
    size_t cursor = 0;
    do cursor = ht_scan_defrag(t, cursor, move_member_cb, df);
    while (cursor);
}


typedef struct zset_ctx {
    defrag_t *df;
    zskiplist *zsl;
} zset_ctx_t;

/* A skiplist node found in the member table: the node and its member move
 * (zsl_defrag_node fixes the links), the scan stores the node's new
 * address in the table. */
static void *move_zset_node_cb(void *priv, void *node) {
    zset_ctx_t *z = priv;
    return zsl_defrag_node(z->zsl, node, move_block_cb, z->df);
}

/* A skiplist sorted set: the zset_t, the skiplist struct, its header node
 * and the member table's handle now; the nodes (walked through the member
 * table, whose scan cursor resumes across slices) now if few, else in
 * later slices (big_key). */
static void defrag_zset(scan_ctx_t *cx, robj *o, sds key) {
    defrag_t *df = cx->df;
    zset_t *zs = offer(df, o->ptr);
    if (zs) o->ptr = zs;
    else zs = o->ptr;
    zskiplist *zsl = offer(df, zs->zsl);
    if (zsl) zs->zsl = zsl;
    zsl_defrag_header(zs->zsl, move_block_cb, df);
    ht *t = offer(df, zs->members);
    if (t) zs->members = t;
    ht_defrag_tables(zs->members, move_block_cb, df);
    if (defer_big(cx, zs->members, key)) return;
    zset_ctx_t z = {df, zs->zsl};
    size_t cursor = 0;
    do cursor = ht_scan_defrag(zs->members, cursor, move_zset_node_cb, &z);
    while (cursor);
}

/* A stream: its struct and every node's listpack (the tree's own nodes
 * and the consumer groups stay where they are). */
static void defrag_stream(defrag_t *df, robj *o) {
    stream_t *s = offer(df, o->ptr);
    if (s) o->ptr = s;
    else s = o->ptr;
    rax_iter_t ri;
    rax_iter_start(&ri, s->rax);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        void *lp = offer(df, ri.data);
        if (lp) rax_iter_set(&ri, lp);
    }
    rax_iter_stop(&ri);
}

static void defrag_encoded(scan_ctx_t *cx, robj *o, sds key) {
    defrag_t *df = cx->df;
    void *p;
    switch (o->encoding) {
        case OBJ_ENCODING_LISTPACK:
        case OBJ_ENCODING_LISTPACK_EX: /* a hash with field TTLs: one listpack too */
        case OBJ_ENCODING_INTSET:
            if ((p = offer(df, o->ptr))) o->ptr = p;
            break;
        case OBJ_ENCODING_QUICKLIST:
            defrag_quicklist(df, o);
            break;
        case OBJ_ENCODING_STREAM:
            defrag_stream(df, o);
            break;
        case OBJ_ENCODING_HT:
            if (o->type == OBJ_HASH || o->type == OBJ_SET) defrag_table(cx, o, key);
            break;
        case OBJ_ENCODING_SKIPLIST:
            if (o->type == OBJ_ZSET) defrag_zset(cx, o, key);
            break;
        case OBJ_ENCODING_RAW:
            if (o->type == OBJ_STRING) {
                size_t h = sds_hdr_len(o->ptr);
                if ((p = offer(df, (char *)o->ptr - h))) o->ptr = (char *)p + h;
            }
            break;
        default: /* int, embstr (moved with the robj) */
            break;
    }
}

/* The value of a key: the robj, then what it points to.  Returns the
 * object's (maybe new) address. */
static robj *defrag_value(scan_ctx_t *cx, robj *o, sds key) {
    if (o->refcount != 1) return o;
    bool emb = o->encoding == OBJ_ENCODING_EMBSTR;
    size_t emb_off = emb ? (size_t)((char *)o->ptr - (char *)o) : 0;
    robj *n = offer(cx->df, o);
    if (n) {
        if (emb) n->ptr = (char *)n + emb_off; /* the string lives inside the robj */
        o = n;
    }
    defrag_encoded(cx, o, key);
    return o;
}

/* A keyspace entry (db_entry.h): its value, then the entry itself; the
 * keys table, the only place that points at it, stores the new address
 * (ht_scan_defrag). */
static void *key_entry_cb(void *priv, void *p) {
    scan_ctx_t *cx = priv;
    defrag_t *df = cx->df;
    long long hits_before = df->hits;
    db_entry *e = p;
    if (!db_entry_is_embedded(e)) { /* an embedded value moves with e */
        db_entry_ptr *pe = (db_entry_ptr *)e;
        robj *val = defrag_value(cx, db_entry_val(e, NULL), db_entry_key(e));
        pe->tagged_val = (uintptr_t)val | 1;
    }
    db_entry *moved = offer(df, e); /* nothing inside it points into it */
    /* the index of keys with a TTL points at it (ttl_index.h) */
    if (moved && db_entry_expire(moved) >= 0) ttl_index_moved(cx->db, e, moved);
    if (df->hits > hits_before) df->key_hits++;
    else df->key_misses++;
    return moved;
}

/* ---------------------------------------------------------------- cycle */

/* One slice of the pending big collection; false when there is none. */
static bool big_key_step(server_t *srv, defrag_t *df) {
    if (!df->big_key) return false;
    db_t *db = &srv->dbs[df->big_db];
    db_entry *de = db_find(db, df->big_key);
    robj view;
    robj *o = de ? db_entry_val(de, &view) : NULL;
    if (o && o->encoding == OBJ_ENCODING_HT && (o->type == OBJ_HASH || o->type == OBJ_SET)) {
        for (int i = 0; i < 16; i++) {
            df->big_cursor = ht_scan_defrag(o->ptr, df->big_cursor, move_member_cb, df);
            if (df->big_cursor == 0) break;
        }
        if (df->big_cursor != 0) return true;
    } else if (o && o->encoding == OBJ_ENCODING_SKIPLIST && o->type == OBJ_ZSET) {
        zset_t *zs = o->ptr;
        zset_ctx_t z = {df, zs->zsl};
        for (int i = 0; i < 16; i++) {
            df->big_cursor = ht_scan_defrag(zs->members, df->big_cursor, move_zset_node_cb, &z);
            if (df->big_cursor == 0) break;
        }
        if (df->big_cursor != 0) return true;
    }
    sds_free(df->big_key); /* finished, deleted or changed type */
    df->big_key = NULL;
    return true;
}

/* One scan step of the current table; false when the whole keyspace has
 * been walked (end of cycle). */
static bool keyspace_step(server_t *srv, defrag_t *df) {
    while (df->dbid < srv->dbnum) {
        db_t *db = &srv->dbs[df->dbid];
        scan_ctx_t cx = {srv, df, db};
        if (df->cursor == 0) ht_defrag_tables(db->keys, move_block_cb, df); /* the walk starts */
        df->cursor = ht_scan_defrag(db->keys, df->cursor, key_entry_cb, &cx);
        if (df->cursor != 0) return true;
        df->phase = PHASE_KEYS;
        df->dbid++;
    }
    return false;
}

long long defrag_debug_pass(server_t *srv) {
    defrag_t *df = srv->defrag;
    if (df->running) return -1;
    long long hits = df->hits;
    df->force = true;
    df->dbid = 0;
    df->phase = PHASE_KEYS;
    df->cursor = 0;
    while (big_key_step(srv, df) || keyspace_step(srv, df)) {
    }
    while (big_key_step(srv, df)) { /* deferred by the last db's last step */
    }
    df->force = false;
    return df->hits - hits;
}

/* cpu% for a fragmentation of pct percent: linear between the thresholds. */
static int effort_for(const rl_config_t *cfg, double pct) {
    long long lo = cfg->active_defrag_threshold_lower, hi = cfg->active_defrag_threshold_upper;
    long long cmin = cfg->active_defrag_cycle_min, cmax = cfg->active_defrag_cycle_max;
    if (cmax < cmin) cmax = cmin;
    if (pct <= (double)lo) return (int)cmin;
    if (hi <= lo || pct >= (double)hi) return (int)cmax;
    return (int)(cmin + (long long)((pct - (double)lo) * (double)(cmax - cmin) / (double)(hi - lo)));
}

/* A full pass that moved (almost) nothing means the remaining
 * fragmentation is not movable (or not worth it): rather than starting the
 * next pass at once and burning the CPU budget forever, wait 30 s. */
#define DEFRAG_FRUITLESS_HITS 16
#define DEFRAG_IDLE_MS 30000

static void cycle_stop(server_t *srv, defrag_t *df, bool completed) {
    if (!df->running) return;
    /* The cycle's own frees bypass the cache; blocks clients freed into
     * it go back now, so the slabs they empty stop counting as active
     * before the next sample (ebbmalloc: test_defrag's heap settles at
     * 1.07, where it stopped at 1.19 with those blocks cached). */
    zmalloc_flush_thread_cache();
    if (completed && df->hits - df->cycle_start_hits < DEFRAG_FRUITLESS_HITS)
        df->idle_until_ms = srv->mstime + DEFRAG_IDLE_MS;
    df->total_ms += srv->mstime - df->cycle_start_ms;
    df->tick_budget_us = 0;
    df->running = false;
    df->cpu_pct = 0;
}

#define DEFRAG_SLICE_US 1000

/* Work for up to one slice of the tick's remaining budget. */
static void run_slice(server_t *srv, defrag_t *df) {
    long long limit = df->tick_budget_us < DEFRAG_SLICE_US ? df->tick_budget_us : DEFRAG_SLICE_US;
    long long start = util_ustime(), used = 0;
    for (unsigned long steps = 1;; steps++) {
        if (!big_key_step(srv, df) && !keyspace_step(srv, df)) {
            cycle_stop(srv, df, true);
            return;
        }
        if (steps % 8 == 0 && (used = util_ustime() - start) >= limit) break;
    }
    df->tick_budget_us -= used;
}

static void slice_cb(void *arg) {
    server_t *srv = arg;
    defrag_t *df = srv->defrag;
    if (!df->running || df->tick_budget_us <= 0) return;
    if (!srv->cfg.activedefrag) return;
    run_slice(srv, df);
}

/* The waste below which no cycle starts: active-defrag-ignore-bytes
 * (Redis's 100mb), or active-defrag-ignore-percent of used_memory if that
 * is less, but never under DEFRAG_FLOOR_MIN.  An absolute floor suits a
 * 50 GB instance and fails every small one: 99 MB of waste on 173 MB of
 * data (a ratio of 1.6) stayed under 100mb for good (issue 49). */
#define DEFRAG_FLOOR_MIN (1024 * 1024)
static long long ignore_floor(const server_t *srv) {
    long long floor = srv->cfg.active_defrag_ignore_bytes;
    if (srv->cfg.active_defrag_ignore_percent <= 0) return floor;
    long long scaled = (long long)(srv->mem.zmalloc_used / 100) * srv->cfg.active_defrag_ignore_percent;
    if (scaled < DEFRAG_FLOOR_MIN) scaled = DEFRAG_FLOOR_MIN;
    return scaled < floor ? scaled : floor;
}

void defrag_cron(server_t *srv) {
    defrag_t *df = srv->defrag;
    if (!srv->cfg.activedefrag || !zmalloc_has_defrag()) {
        cycle_stop(srv, df, false);
        defrag_release_timer(df);
        return;
    }
    size_t allocated = srv->mem.alloc.allocated, active = srv->mem.alloc.active;
    if (allocated == 0 || active < allocated) {
        if (!df->running) return;
        active = allocated;
    }
    double pct = ((double)active / (double)allocated - 1.0) * 100.0;
    if (!df->running) {
        defrag_release_timer(df); /* idle: no timer ticking for nothing */
        if (pct <= (double)srv->cfg.active_defrag_threshold_lower ||
            (long long)(active - allocated) <= ignore_floor(srv))
            return;
        if (srv->mstime < df->idle_until_ms) return;
        /* Blocks in the thread cache still count as taken from their
         * slabs: flushed first, the allocator judges each slab by the
         * blocks really in use (test_defrag's data set: 50k misses where
         * there were 90k, for the same hits). */
        zmalloc_flush_thread_cache();
        df->running = true;
        df->cycle_start_hits = df->hits;
        df->dbid = 0;
        df->phase = PHASE_KEYS;
        df->cursor = 0;
        df->cycle_start_ms = srv->mstime;
        df->cpu_pct = 0;
    }
    /* Effort only grows within a cycle, as the first reading was the
     * reason to start. */
    int cpu = effort_for(&srv->cfg, pct);
    if (cpu > df->cpu_pct) df->cpu_pct = cpu;
    /* The tick's share of CPU is spent in slices of at most 1 ms, spread
     * over the tick by a timer, so a read waits at most one slice (one
     * stretch of 25 ms at hz 10 made p99 latency 15x its normal value). */
    df->tick_budget_us = 1000000 / srv->hz * df->cpu_pct / 100;
    run_slice(srv, df);
    if (df->running && df->tick_budget_us > 0) {
        long interval = (long)(DEFRAG_SLICE_US * 100 / df->cpu_pct);
        if (!df->slice_timer) df->slice_timer = evloop_timer_add(srv->loop, interval, slice_cb, srv);
        else evloop_timer_set_interval(df->slice_timer, interval);
    }
}
