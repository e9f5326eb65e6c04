/* hashtable.c: open addressing over 64-byte buckets (see hashtable.h).
 *
 * Bucket layout (one cache line):
 *     meta      1 byte    bit 0: everfull (an insert once passed this bucket
 *                         because it was full, so a probe must go on)
 *     hbits     9 bytes   the top 8 bits of each slot's hash: a lookup reads
 *                         an entry only when its byte matches (1 in 256 false)
 *     ptrs     54 bytes   nine entry pointers of 48 bits; 0 = empty slot
 *
 * Probing: an entry goes to the first bucket with a free slot, starting at
 * its home bucket (hash & mask) and walking forward (wrapping); each full
 * bucket passed gets the everfull mark.  A lookup walks the same way and
 * stops after the first bucket without the mark.  Deletion only clears the
 * slot (no entry ever moves within a table, which is what makes safe
 * iteration and SCAN simple); marks stay until the next resize, and a table
 * whose marks cover most buckets is rebuilt at the same size.
 *
 * Sizes: 2^exp buckets, 9 slots each.  A table grows (doubling) past 90%
 * of its slots and shrinks below 1/8, both to about 45%; 1M entries fit in
 * 2^17 buckets (8 MB, 8.4 bytes per entry).
 *
 * Resizing is incremental, as in dict.c: a second table receives new
 * entries, and every lookup, insert or delete (and the cron, through
 * ht_rehash_us) moves one bucket of the old one, so no single call pays for
 * a whole resize.  While both tables exist a lookup probes both.
 *
 * SCAN: the cursor counts home buckets in reverse-binary order (the idea of
 * Redis's dict scan): from a cursor, the step visits the home bucket in
 * the smaller table and every bucket of the larger table whose low bits
 * equal it, and reports the entries whose home is the visited bucket,
 * walking the probe chain to find displaced ones.  Because the reversed
 * increment only ever advances the high bits, a bucket index covered before
 * a grow or shrink stays covered after it. */
#include "hashtable.h"

#include <stdlib.h>
#include <string.h>

#include "rl_assert.h"
#include "util.h"
#include "zmalloc.h"

struct ht_bucket {
    uint8_t meta;
    uint8_t hbits[HT_BUCKET_SLOTS];
    uint8_t ptrs[HT_BUCKET_SLOTS * 6];
};
static_assert(sizeof(struct ht_bucket) == HT_BUCKET_BYTES, "a bucket is one cache line");

#define META_EVERFULL 1
#define MAX_FILL_PCT 90         /* grow past this share of the slots */
#define MIN_FILL_DIV 8          /* shrink below 1/8 of the slots */
#define TARGET_FILL_PCT 45      /* a resize aims at about this fill */
#define EVERFULL_REBUILD_PCT 80 /* rebuild at the same size past this share of marked buckets */
#define EMPTY_VISITS 10         /* empty buckets a rehash step may skip */

static inline size_t nbuckets(int8_t exp) { return exp < 0 ? 0 : (size_t)1 << exp; }
static inline size_t bmask(int8_t exp) { return exp < 0 ? 0 : ((size_t)1 << exp) - 1; }
static inline size_t slots_of(int8_t exp) { return nbuckets(exp) * HT_BUCKET_SLOTS; }

/* ------------------------------------------------------------ slot access */

static inline void *slot_get(const ht_bucket *b, int s) {
    const uint8_t *p = b->ptrs + 6 * s;
    uint64_t v = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
                 (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40;
    return (void *)(uintptr_t)v;
}

static inline void slot_set(ht_bucket *b, int s, const void *entry) {
    uint64_t v = (uint64_t)(uintptr_t)entry;
    /* The packing loses bits 48-63: refuse an address it cannot hold. */
    if (v >> 48) rl_assert_fail("entry address below 2^48", __FILE__, __LINE__);
    uint8_t *p = b->ptrs + 6 * s;
    for (int i = 0; i < 6; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void slot_clear(ht_bucket *b, int s) {
    memset(b->ptrs + 6 * s, 0, 6);
    b->hbits[s] = 0;
}

static inline bool bucket_empty(const ht_bucket *b) {
    for (int s = 0; s < HT_BUCKET_SLOTS; s++)
        if (slot_get(b, s)) return false;
    return true;
}

/* ---------------------------------------------------------------- hashing */

static inline const void *key_of(const ht *t, const void *entry) {
    return t->type->entry_key ? t->type->entry_key(entry) : entry;
}

static inline uint64_t hash_entry(const ht *t, const void *entry) { return t->type->hash(key_of(t, entry)); }

static inline bool keys_equal(const ht *t, const void *a, const void *b) {
    return t->type->key_eq ? t->type->key_eq(a, b) : a == b;
}

static inline uint8_t hash_byte(uint64_t h) { return (uint8_t)(h >> 56); }

/* ---------------------------------------------------------------- tables */

ht *ht_create(const ht_type *type) {
    ht *t = zcalloc(sizeof(*t));
    t->type = type;
    t->exp[0] = t->exp[1] = -1;
    t->rehash_idx = -1;
    return t;
}

ht *ht_with_meta(ht *t, const ht_type *type, size_t bytes) {
    ht *n = zrealloc(t, sizeof(*n) + bytes);
    memset(n + 1, 0, bytes);
    n->type = type;
    return n;
}

static ht_bucket *alloc_table(int8_t exp) { return zcalloc(nbuckets(exp) * sizeof(ht_bucket)); }

/* The smallest exponent whose table holds n entries at fill pct. */
static int8_t exp_for(size_t n, unsigned pct) {
    int8_t e = 0;
    while (slots_of(e) * pct / 100 < n && e < 62) e++;
    return e;
}

bool ht_is_resizing(const ht *t) { return t->rehash_idx >= 0; }

size_t ht_buckets(const ht *t) { return nbuckets(t->exp[0]) + nbuckets(t->exp[1]); }

uint64_t ht_hash_pointer(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

size_t ht_lut_bytes(const ht *t) {
    size_t n = 0;
    for (int i = 0; i < 2; i++)
        if (t->tables[i]) n += zmalloc_size(t->tables[i]);
    return n;
}

size_t ht_mem_usage(const ht *t) { return zmalloc_size(t) + ht_lut_bytes(t); }

size_t ht_rehashing_bytes(const ht *t) { return ht_is_resizing(t) && t->tables[0] ? zmalloc_size(t->tables[0]) : 0; }

size_t ht_mem_usage_sampled(ht *t, size_t samples, size_t (*entry_bytes)(const void *entry)) {
    size_t n = ht_mem_usage(t), seen = 0, bytes = 0;
    ht_iter it;
    void *e;
    ht_iter_init(&it, t, false);
    while ((samples == 0 || seen < samples) && ht_next(&it, &e)) {
        bytes += entry_bytes(e);
        seen++;
    }
    ht_iter_release(&it);
    return seen ? n + (size_t)((double)bytes / (double)seen * (double)ht_size(t)) : n;
}

static void free_entries(ht *t, int ti) {
    if (!t->tables[ti]) return;
    if (t->type->entry_free) {
        size_t n = nbuckets(t->exp[ti]);
        for (size_t i = 0; i < n && t->used[ti]; i++) {
            ht_bucket *b = &t->tables[ti][i];
            for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
                void *e = slot_get(b, s);
                if (e) {
                    t->type->entry_free(e);
                    t->used[ti]--;
                }
            }
        }
    }
    zfree(t->tables[ti]);
    t->tables[ti] = NULL;
    t->exp[ti] = -1;
    t->used[ti] = t->everfull[ti] = 0;
}

void ht_empty(ht *t) {
    free_entries(t, 0);
    free_entries(t, 1);
    t->rehash_idx = -1;
}

void ht_release(ht *t) {
    if (!t) return;
    ht_empty(t);
    zfree(t);
}

/* ---------------------------------------------------------------- probing */

/* Find key in table ti: true with the bucket and slot. */
static bool find_in(ht *t, int ti, uint64_t h, const void *key, size_t *bi, int *si) {
    if (!t->used[ti]) return false;
    size_t mask = bmask(t->exp[ti]), idx = h & mask;
    uint8_t hb = hash_byte(h);
    for (size_t n = 0; n <= mask; n++) {
        ht_bucket *b = &t->tables[ti][idx];
        for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
            if (b->hbits[s] != hb) continue;
            void *e = slot_get(b, s);
            if (e && keys_equal(t, key, key_of(t, e))) {
                *bi = idx;
                *si = s;
                return true;
            }
        }
        if (!(b->meta & META_EVERFULL)) return false;
        idx = (idx + 1) & mask;
    }
    return false;
}

/* Where an entry with hash h would go in table ti: the first free slot on
 * its probe path.  The table must have one (fill stays below 100%). */
static void free_slot_in(ht *t, int ti, uint64_t h, ht_position *pos) {
    size_t mask = bmask(t->exp[ti]), idx = h & mask;
    for (size_t n = 0; n <= mask; n++) {
        ht_bucket *b = &t->tables[ti][idx];
        for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
            if (!slot_get(b, s)) {
                pos->table = ti;
                pos->bucket = idx;
                pos->slot = s;
                pos->home = h & mask;
                pos->hbyte = hash_byte(h);
                return;
            }
        }
        idx = (idx + 1) & mask;
    }
    rl_assert_fail("hash table has a free slot", __FILE__, __LINE__);
}

/* Store entry at pos, marking every bucket its probe passed. */
static void store_at(ht *t, const ht_position *pos, void *entry) {
    size_t mask = bmask(t->exp[pos->table]);
    ht_bucket *tab = t->tables[pos->table];
    for (size_t idx = pos->home; idx != pos->bucket; idx = (idx + 1) & mask) {
        if (!(tab[idx].meta & META_EVERFULL)) {
            tab[idx].meta |= META_EVERFULL;
            t->everfull[pos->table]++;
        }
    }
    slot_set(&tab[pos->bucket], pos->slot, entry);
    tab[pos->bucket].hbits[pos->slot] = pos->hbyte;
    t->used[pos->table]++;
}

/* --------------------------------------------------------------- resizing */

static void finish_resize(ht *t) {
    zfree(t->tables[0]);
    t->tables[0] = t->tables[1];
    t->exp[0] = t->exp[1];
    t->used[0] = t->used[1];
    t->everfull[0] = t->everfull[1];
    t->tables[1] = NULL;
    t->exp[1] = -1;
    t->used[1] = t->everfull[1] = 0;
    t->rehash_idx = -1;
}

/* Begin moving to a table of 2^exp buckets (maybe the same size, to drop
 * the everfull marks).  With no entries the new table simply replaces the
 * old one. */
static void start_resize(ht *t, int8_t exp) {
    rl_assert(!ht_is_resizing(t));
    if (t->used[0] == 0) {
        zfree(t->tables[0]);
        t->tables[0] = alloc_table(exp);
        t->exp[0] = exp;
        t->everfull[0] = 0;
        return;
    }
    t->tables[1] = alloc_table(exp);
    t->exp[1] = exp;
    t->rehash_idx = 0;
}

/* Move the entries of one non-empty bucket of the old table (skipping up
 * to EMPTY_VISITS empty ones); true while the resize goes on. */
static bool rehash_step(ht *t) {
    if (!ht_is_resizing(t)) return false;
    size_t n0 = nbuckets(t->exp[0]);
    int empty = EMPTY_VISITS;
    while ((size_t)t->rehash_idx < n0 && t->used[0]) {
        ht_bucket *b = &t->tables[0][t->rehash_idx];
        t->rehash_idx++;
        bool moved = false;
        for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
            void *e = slot_get(b, s);
            if (!e) continue;
            ht_position pos;
            free_slot_in(t, 1, hash_entry(t, e), &pos);
            store_at(t, &pos, e);
            slot_clear(b, s);
            t->used[0]--;
            moved = true;
        }
        if (moved || --empty == 0) break;
    }
    if (t->used[0] == 0 || (size_t)t->rehash_idx >= n0) {
        rl_assert(t->used[0] == 0);
        finish_resize(t);
        return false;
    }
    return true;
}

static void maybe_step(ht *t) {
    if (t->pause_rehash == 0) rehash_step(t);
}

void ht_rehash_steps(ht *t, size_t buckets) {
    while (buckets-- && t->pause_rehash == 0 && rehash_step(t)) {
    }
}

bool ht_rehash_us(ht *t, uint64_t us) {
    if (t->pause_rehash) return ht_is_resizing(t);
    long long start = util_monotonic_us();
    while (ht_is_resizing(t)) {
        ht_rehash_steps(t, 100);
        if ((uint64_t)(util_monotonic_us() - start) >= us) break;
    }
    return ht_is_resizing(t);
}

/* Finish the ongoing resize at once: only when a second one must start
 * and the first is not paused (rare: a shrink overtaken by inserts). */
static void complete_resize(ht *t) {
    while (ht_is_resizing(t)) rehash_step(t);
}

/* Make room for one more entry before an insert. */
static void ensure_room(ht *t) {
    if (t->exp[0] < 0) {
        t->tables[0] = alloc_table(0);
        t->exp[0] = 0;
        return;
    }
    int ti = ht_is_resizing(t) ? 1 : 0;
    size_t used = ht_size(t) + 1;
    if (t->used[ti] + 1 <= slots_of(t->exp[ti]) * MAX_FILL_PCT / 100) {
        /* Room, but a table whose probe marks cover most buckets gets
         * rebuilt: deletions never clear the marks. */
        if (ti == 0 && t->pause_rehash == 0 &&
            t->everfull[0] * 100 > nbuckets(t->exp[0]) * EVERFULL_REBUILD_PCT && t->exp[0] > 0)
            start_resize(t, t->exp[0]);
        return;
    }
    if (ti == 1) {
        if (t->pause_rehash) {
            /* A safe iterator holds the old table in place: fill the new
             * one further rather than start a third. */
            rl_assert(t->used[1] + 1 < slots_of(t->exp[1]));
            return;
        }
        complete_resize(t);
    }
    /* Doubling: the grown table is about 45% full. */
    int8_t e = (int8_t)(t->exp[0] + 1);
    if (exp_for(used, MAX_FILL_PCT) > e) e = exp_for(used, MAX_FILL_PCT);
    start_resize(t, e);
}

bool ht_expand(ht *t, size_t n) {
    int8_t e = exp_for(n, MAX_FILL_PCT);
    if (e <= t->exp[0] || ht_is_resizing(t)) return false;
    start_resize(t, e);
    return true;
}

void ht_shrink_if_needed(ht *t) {
    if (ht_is_resizing(t) || t->pause_shrink || t->pause_rehash || t->exp[0] <= 0) return;
    if (t->used[0] * MIN_FILL_DIV >= slots_of(t->exp[0])) return;
    int8_t e = exp_for(t->used[0], TARGET_FILL_PCT);
    if (e < t->exp[0]) start_resize(t, e);
}

void ht_pause_shrink(ht *t) { t->pause_shrink++; }
void ht_resume_shrink(ht *t) {
    t->pause_shrink--;
    if (!t->pause_shrink) ht_shrink_if_needed(t);
}

/* ------------------------------------------------------------------- API */

bool ht_find(ht *t, const void *key, void **found) {
    if (ht_size(t) == 0) return false;
    maybe_step(t);
    uint64_t h = t->type->hash(key);
    size_t bi;
    int si;
    for (int ti = 0; ti < 2; ti++) {
        if (find_in(t, ti, h, key, &bi, &si)) {
            if (found) *found = slot_get(&t->tables[ti][bi], si);
            return true;
        }
    }
    return false;
}

bool ht_find_position_for_insert(ht *t, const void *key, ht_position *pos, void **existing) {
    maybe_step(t);
    uint64_t h = t->type->hash(key);
    size_t bi;
    int si;
    for (int ti = 0; ti < 2; ti++) {
        if (find_in(t, ti, h, key, &bi, &si)) {
            if (existing) *existing = slot_get(&t->tables[ti][bi], si);
            return false;
        }
    }
    ensure_room(t);
    free_slot_in(t, ht_is_resizing(t) ? 1 : 0, h, pos);
    return true;
}

void ht_insert_at_position(ht *t, const ht_position *pos, void *entry) {
    rl_assert(entry != NULL);
    store_at(t, pos, entry);
}

bool ht_add(ht *t, void *entry) {
    ht_position pos;
    if (!ht_find_position_for_insert(t, key_of(t, entry), &pos, NULL)) return false;
    store_at(t, &pos, entry);
    return true;
}

bool ht_pop(ht *t, const void *key, void **popped) {
    if (ht_size(t) == 0) return false;
    maybe_step(t);
    uint64_t h = t->type->hash(key);
    size_t bi;
    int si;
    for (int ti = 0; ti < 2; ti++) {
        if (!find_in(t, ti, h, key, &bi, &si)) continue;
        ht_bucket *b = &t->tables[ti][bi];
        if (popped) *popped = slot_get(b, si);
        slot_clear(b, si);
        t->used[ti]--;
        ht_shrink_if_needed(t);
        return true;
    }
    return false;
}

bool ht_delete(ht *t, const void *key) {
    void *e;
    if (!ht_pop(t, key, &e)) return false;
    if (t->type->entry_free) t->type->entry_free(e);
    return true;
}

bool ht_replace_entry(ht *t, const void *old_entry, void *new_entry) {
    uint64_t h = hash_entry(t, new_entry); /* old_entry may be freed already */
    for (int ti = 0; ti < 2; ti++) {
        if (!t->used[ti]) continue;
        size_t mask = bmask(t->exp[ti]), idx = h & mask;
        for (size_t n = 0; n <= mask; n++) {
            ht_bucket *b = &t->tables[ti][idx];
            for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
                if (slot_get(b, s) == old_entry) {
                    slot_set(b, s, new_entry);
                    return true;
                }
            }
            if (!(b->meta & META_EVERFULL)) break;
            idx = (idx + 1) & mask;
        }
    }
    return false;
}

/* -------------------------------------------------------------- iterating */

void ht_iter_init(ht_iter *it, ht *t, bool safe) {
    it->t = t;
    it->safe = safe;
    it->table = 0;
    it->bucket = 0;
    it->slot = 0;
    if (safe) t->pause_rehash++;
}

bool ht_next(ht_iter *it, void **entry) {
    ht *t = it->t;
    while (it->table < 2) {
        size_t n = nbuckets(t->exp[it->table]);
        while (it->bucket < n) {
            ht_bucket *b = &t->tables[it->table][it->bucket];
            while (it->slot < HT_BUCKET_SLOTS) {
                void *e = slot_get(b, it->slot++);
                if (e) {
                    *entry = e;
                    return true;
                }
            }
            it->bucket++;
            it->slot = 0;
        }
        it->table++;
        it->bucket = 0;
        it->slot = 0;
    }
    return false;
}

void ht_iter_release(ht_iter *it) {
    if (it->safe) {
        it->t->pause_rehash--;
        it->safe = false;
    }
}

/* --------------------------------------------------------------- sampling */

static uint64_t rand64(void) { return (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^ (uint64_t)random(); }

bool ht_random_entry(ht *t, void **entry) {
    if (ht_size(t) == 0) return false;
    maybe_step(t);
    size_t s0 = slots_of(t->exp[0]), total = s0 + slots_of(t->exp[1]);
    /* Uniform: pick a slot among all, retry when empty.  The fill stays
     * above 1/8 in steady state, so few tries are needed; a long run of
     * misses (a table just emptied) falls back to sampling. */
    for (int tries = 0; tries < 1000; tries++) {
        size_t r = (size_t)(rand64() % total);
        int ti = r < s0 ? 0 : 1;
        if (ti == 1) r -= s0;
        void *e = slot_get(&t->tables[ti][r / HT_BUCKET_SLOTS], (int)(r % HT_BUCKET_SLOTS));
        if (e) {
            *entry = e;
            return true;
        }
    }
    return ht_sample(t, entry, 1) == 1;
}

size_t ht_sample(ht *t, void **out, size_t count) {
    if (ht_size(t) == 0 || count == 0) return 0;
    maybe_step(t);
    /* Choose a table in proportion to its entries, then walk its buckets
     * from a random one. */
    int ti = (size_t)(rand64() % ht_size(t)) < t->used[0] ? 0 : 1;
    size_t n = nbuckets(t->exp[ti]), mask = n - 1, idx = (size_t)rand64() & mask, got = 0;
    for (size_t visited = 0; visited < n && got < count; visited++) {
        ht_bucket *b = &t->tables[ti][idx];
        for (int s = 0; s < HT_BUCKET_SLOTS && got < count; s++) {
            void *e = slot_get(b, s);
            if (e) out[got++] = e;
        }
        idx = (idx + 1) & mask;
    }
    return got;
}

/* ------------------------------------------------------------------- scan */

static inline size_t rev_bits(size_t v) {
    size_t r = 0;
    for (unsigned i = 0; i < sizeof(v) * 8; i++) {
        r = (r << 1) | (v & 1);
        v >>= 1;
    }
    return r;
}

/* The reverse-binary increment: add one at the top of the masked bits. */
static inline size_t next_cursor(size_t v, size_t mask) {
    v |= ~mask;
    v = rev_bits(v);
    v++;
    return rev_bits(v);
}

/* Report the entries of table ti whose home bucket is home: those in home
 * itself and those displaced along its probe chain. */
static void scan_home(ht *t, int ti, size_t home, ht_scan_fn *fn, ht_defrag_fn *dfn, void *privdata) {
    if (!t->used[ti]) return;
    size_t mask = bmask(t->exp[ti]), idx = home;
    ht_bucket *tab = t->tables[ti];
    /* Entries land in home from an earlier home only through a marked
     * predecessor; without one, home's entries need no hashing. */
    bool mixed = mask != 0 && (tab[(home - 1) & mask].meta & META_EVERFULL);
    for (size_t n = 0; n <= mask; n++) {
        ht_bucket *b = &tab[idx];
        for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
            void *e = slot_get(b, s);
            if (!e) continue;
            if ((mixed || idx != home) && (hash_entry(t, e) & mask) != home) continue;
            if (fn) fn(privdata, e);
            else {
                void *moved = dfn(privdata, e);
                if (moved) slot_set(b, s, moved);
            }
        }
        if (!(b->meta & META_EVERFULL) || mask == 0) break;
        idx = (idx + 1) & mask;
    }
}

static size_t scan_generic(ht *t, size_t cursor, ht_scan_fn *fn, ht_defrag_fn *dfn, void *privdata) {
    if (ht_size(t) == 0) return 0;
    t->pause_rehash++; /* a callback must not modify the table; be sure nothing moves */
    if (!ht_is_resizing(t)) {
        size_t m0 = bmask(t->exp[0]);
        scan_home(t, 0, cursor & m0, fn, dfn, privdata);
        cursor = next_cursor(cursor, m0);
    } else {
        int small = t->exp[0] <= t->exp[1] ? 0 : 1, large = 1 - small;
        size_t ms = bmask(t->exp[small]), ml = bmask(t->exp[large]);
        scan_home(t, small, cursor & ms, fn, dfn, privdata);
        /* Every bucket of the larger table that expands the small one. */
        do {
            scan_home(t, large, cursor & ml, fn, dfn, privdata);
            cursor = next_cursor(cursor, ml);
        } while (cursor & (ms ^ ml));
    }
    t->pause_rehash--;
    return cursor;
}

size_t ht_scan(ht *t, size_t cursor, ht_scan_fn *fn, void *privdata) {
    return scan_generic(t, cursor, fn, NULL, privdata);
}

size_t ht_scan_defrag(ht *t, size_t cursor, ht_defrag_fn *fn, void *privdata) {
    return scan_generic(t, cursor, NULL, fn, privdata);
}

void ht_defrag_tables(ht *t, ht_defrag_fn *fn, void *privdata) {
    for (int i = 0; i < 2; i++) {
        if (!t->tables[i]) continue;
        void *moved = fn(privdata, t->tables[i]);
        if (moved) t->tables[i] = moved;
    }
}

/* ------------------------------------------------------------- validation */

static bool validate_table(ht *t, int ti) {
    size_t n = nbuckets(t->exp[ti]), mask = bmask(t->exp[ti]), used = 0, marks = 0;
    for (size_t i = 0; i < n; i++) {
        ht_bucket *b = &t->tables[ti][i];
        if (b->meta & META_EVERFULL) marks++;
        if (ti == 0 && ht_is_resizing(t) && (long)i < t->rehash_idx && !bucket_empty(b)) return false;
        for (int s = 0; s < HT_BUCKET_SLOTS; s++) {
            void *e = slot_get(b, s);
            if (!e) continue;
            used++;
            uint64_t h = hash_entry(t, e);
            if (b->hbits[s] != hash_byte(h)) return false;
            for (size_t j = h & mask; j != i; j = (j + 1) & mask)
                if (!(t->tables[ti][j].meta & META_EVERFULL)) return false;
        }
    }
    return used == t->used[ti] && marks == t->everfull[ti];
}

bool ht_validate(ht *t) {
    if (ht_is_resizing(t) != (t->tables[1] != NULL)) return false;
    for (int ti = 0; ti < 2; ti++) {
        if ((t->tables[ti] == NULL) != (t->exp[ti] < 0)) return false;
        if (t->tables[ti] && !validate_table(t, ti)) return false;
        if (!t->tables[ti] && t->used[ti]) return false;
    }
    return true;
}
