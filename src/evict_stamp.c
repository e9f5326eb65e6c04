/* evict_stamp.c: the access stamps the maxmemory policies read (see
 * evict_stamp.h).
 *
 * Kept apart from evict.c: keyspace.c stamps every value it stores or
 * looks up, while evict.c deletes keys through keyspace.c; with the stamps
 * here the keyspace depends only on this small file, below it, and the
 * eviction loop sits above the keyspace. */
#include "evict_stamp.h"

#include <stdlib.h>

bool evict_policy_is_lfu(int policy) {
    return policy == MAXMEMORY_ALLKEYS_LFU || policy == MAXMEMORY_VOLATILE_LFU;
}

/* ---------------------------------------------------------------- LFU */

static unsigned lfu_minutes(const server_t *srv) { return (unsigned)(srv->mstime / 60000) & 0xffff; }

/* Minutes since the stamp's time, across the 16-bit wrap. */
static unsigned lfu_elapsed(const server_t *srv, unsigned stamp_min) {
    unsigned now = lfu_minutes(srv);
    return now >= stamp_min ? now - stamp_min : 0x10000 - stamp_min + now;
}

unsigned evict_lfu_counter(server_t *srv, const robj *val) {
    unsigned counter = val->lru & 0xff;
    long long period = srv->cfg.lfu_decay_time;
    if (period <= 0) return counter;
    unsigned long decay = lfu_elapsed(srv, val->lru >> 8) / (unsigned long)period;
    return decay >= counter ? 0 : counter - (unsigned)decay;
}

/* Logarithmic increment: the chance to count one more access falls as
 * 1 / ((counter - LFU_INIT_VAL) * lfu-log-factor + 1), so 255 stands for
 * about a million hits with the default factor of 10. */
static unsigned lfu_log_incr(const server_t *srv, unsigned counter) {
    if (counter >= 255) return 255;
    double base = counter > LFU_INIT_VAL ? (double)(counter - LFU_INIT_VAL) : 0.0;
    double p = 1.0 / (base * (double)srv->cfg.lfu_log_factor + 1.0);
    double r = (double)random() / ((double)RAND_MAX + 1.0);
    return r < p ? counter + 1 : counter;
}

static bool stampable(const robj *val) { return val->refcount != OBJ_SHARED_REFCOUNT; }

void evict_touch(server_t *srv, robj *val) {
    if (!stampable(val)) return;
    if (evict_policy_is_lfu(srv->cfg.maxmemory_policy)) {
        unsigned counter = lfu_log_incr(srv, evict_lfu_counter(srv, val));
        val->lru = (lfu_minutes(srv) << 8) | counter;
    } else {
        val->lru = obj_lru_clock();
    }
}

void evict_stamp_new(server_t *srv, robj *val) {
    if (!stampable(val) || !evict_policy_is_lfu(srv->cfg.maxmemory_policy)) return;
    val->lru = (lfu_minutes(srv) << 8) | LFU_INIT_VAL;
}

void evict_stamp_replace(server_t *srv, robj *val, const robj *old) {
    if (!stampable(val)) return;
    if (evict_policy_is_lfu(srv->cfg.maxmemory_policy) && stampable(old)) val->lru = old->lru;
    else evict_stamp_new(srv, val);
}

void evict_stamp_restore(server_t *srv, robj *val, long long lfu_freq, long long lru_idle_s) {
    if (!stampable(val)) return;
    bool lfu = evict_policy_is_lfu(srv->cfg.maxmemory_policy);
    if (lfu && lfu_freq >= 0) {
        val->lru = (lfu_minutes(srv) << 8) | (unsigned)(lfu_freq & 0xff);
    } else if (!lfu && lru_idle_s >= 0) {
        /* One LRU tick is a second; an idle time older than the clock's
         * range lands half a wrap back, so it still reads as very idle. */
        long long now = obj_lru_clock(), stamp = now - lru_idle_s;
        if (stamp < 0) stamp = (now + LRU_CLOCK_MAX / 2) % LRU_CLOCK_MAX;
        val->lru = (unsigned)stamp;
    }
}
