/* dict.c: chained hash table with incremental rehashing (see dict.h).
 *
 * Invariants:
 *   - table[1] exists only while rehashing (rehash_idx >= 0); buckets of
 *     table[0] below rehash_idx are empty then, so lookups check table[0]
 *     and then table[1], and inserts go to table[1].
 *   - sizes are powers of two; a bucket is hash & (size - 1).
 *   - while pause_rehash > 0 (a safe iterator is live) no bucket moves, so
 *     the iterator may delete the entry it just returned.
 * Entry layouts: plain dicts use dict_entry + a key pointer (24 bytes);
 * embed_key dicts use dict_entry + a one-byte offset + the key as an sds
 * built in place (see sds_embed). */
#include "dict.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sds.h"
#include "zmalloc.h"

typedef struct {
    dict_entry base;
    void *key;
} entry_ptr;
typedef struct {
    dict_entry base;
    uint8_t key_off;
    char buf[];
} entry_emb;

#define DICT_MIN_EXP 2 /* smallest table: 4 buckets */
#define DICT_SIZE(exp) ((exp) ? (size_t)1 << (exp) : 0)
#define DICT_MASK(exp) ((exp) ? DICT_SIZE(exp) - 1 : 0)

/* ---------------------------------------------------------------- hashing */

static uint8_t hash_seed[16];

void dict_set_hash_seed(const uint8_t seed[16]) { memcpy(hash_seed, seed, 16); }

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND()        \
    do {                   \
        v0 += v1;          \
        v1 = ROTL(v1, 13); \
        v1 ^= v0;          \
        v0 = ROTL(v0, 32); \
        v2 += v3;          \
        v3 = ROTL(v3, 16); \
        v3 ^= v2;          \
        v0 += v3;          \
        v3 = ROTL(v3, 21); \
        v3 ^= v0;          \
        v2 += v1;          \
        v1 = ROTL(v1, 17); \
        v1 ^= v2;          \
        v2 = ROTL(v2, 32); \
    } while (0)

/* Eight bytes as a little-endian number (tolower'ed for the nocase
 * hash): one load on the machines we run on. */
static inline uint64_t load_le64(const uint8_t *p, bool nocase) {
    uint64_t m;
    if (!nocase) {
        memcpy(&m, p, sizeof(m));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        m = __builtin_bswap64(m);
#endif
        return m;
    }
    m = 0;
    for (int i = 7; i >= 0; i--) m = (m << 8) | (uint8_t)tolower(p[i]);
    return m;
}

/* SipHash-1-2: one compression round per block, two finalisation rounds.
 * Keyed by the process's random seed so that clients cannot choose keys
 * that all land in one bucket.  Inlined into each wrapper below, so the
 * case-sensitive one (every key lookup) has no tolower and no branch on
 * nocase. */
static inline __attribute__((always_inline)) uint64_t siphash12(const uint8_t *in, size_t len, bool nocase) {
    uint64_t k0 = load_le64(hash_seed, false), k1 = load_le64(hash_seed + 8, false);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    const uint8_t *end = in + (len & ~(size_t)7);
    for (; in != end; in += 8) {
        uint64_t m = load_le64(in, nocase);
        v3 ^= m;
        SIP_ROUND();
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < (len & 7); i++) {
        uint8_t c = nocase ? (uint8_t)tolower(in[i]) : in[i];
        b |= (uint64_t)c << (8 * i);
    }
    v3 ^= b;
    SIP_ROUND();
    v0 ^= b;
    v2 ^= 0xff;
    SIP_ROUND();
    SIP_ROUND();
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t dict_hash_bytes(const void *p, size_t len) { return siphash12(p, len, false); }
uint64_t dict_hash_bytes_nocase(const void *p, size_t len) { return siphash12(p, len, true); }

uint64_t dict_sds_hash(const void *key) { return dict_hash_bytes(key, sds_len((sds)key)); }
uint64_t dict_sds_hash_nocase(const void *key) { return dict_hash_bytes_nocase(key, sds_len((sds)key)); }

bool dict_sds_eq(const void *a, const void *b) {
    size_t la = sds_len((sds)a);
    return la == sds_len((sds)b) && memcmp(a, b, la) == 0;
}

bool dict_sds_eq_nocase(const void *a, const void *b) {
    size_t la = sds_len((sds)a);
    return la == sds_len((sds)b) && strncasecmp(a, b, la) == 0;
}

void dict_sds_free(void *key) { sds_free(key); }

/* ---------------------------------------------------------------- entries */

void *dict_get_key(const dict *d, const dict_entry *de) {
    if (d->type->embed_key) {
        const entry_emb *e = (const entry_emb *)de;
        return (void *)(e->buf + e->key_off);
    }
    return ((const entry_ptr *)de)->key;
}

static dict_entry *entry_new(dict *d, void *key) {
    if (d->type->embed_key) {
        size_t klen = sds_len((sds)key);
        size_t esz = sds_embed_size(klen);
        entry_emb *e = zmalloc(sizeof(entry_emb) + esz);
        sds s = sds_embed(e->buf, key, klen);
        e->key_off = (uint8_t)(s - e->buf);
        return &e->base;
    }
    entry_ptr *e = zmalloc(sizeof(*e));
    e->key = d->type->key_dup ? d->type->key_dup(key) : key;
    return &e->base;
}

static void entry_free(dict *d, dict_entry *de) {
    if (!d->type->embed_key && d->type->key_free) d->type->key_free(((entry_ptr *)de)->key);
    /* A NULL value was taken out by the caller (keyspace lazy free). */
    if (d->type->val_free && de->v.ptr) d->type->val_free(de->v.ptr);
    zfree(de);
}

size_t dict_entry_mem(const dict *d, const dict_entry *de) {
    (void)d;
    return zmalloc_size(de);
}

size_t dict_mem_usage_sampled(dict *d, size_t samples, size_t (*val_bytes)(const dict_entry *de)) {
    size_t n = zmalloc_size(d) + dict_buckets(d) * sizeof(dict_entry *);
    size_t size = dict_size(d);
    if (size == 0) return n;
    if (samples == 0 || samples > size) samples = size;
    size_t seen = 0, bytes = 0;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, d, false);
    while (seen < samples && (de = dict_next(&it))) {
        bytes += dict_entry_mem(d, de) + (val_bytes ? val_bytes(de) : 0);
        seen++;
    }
    dict_iter_release(&it);
    return n + (size_t)((double)bytes / (double)seen * (double)size);
}

void dict_set_val(dict *d, dict_entry *de, void *val) {
    void *old = de->v.ptr;
    de->v.ptr = val;
    if (d->type->val_free && old != val) d->type->val_free(old);
}

/* ---------------------------------------------------------------- tables */

dict *dict_create(dict_type *type) {
    dict *d = zcalloc(sizeof(*d));
    d->type = type;
    d->rehash_idx = -1;
    return d;
}

static void clear_table(dict *d, int t) {
    size_t n = DICT_SIZE(d->size_exp[t]);
    for (size_t i = 0; i < n && d->used[t] > 0; i++) {
        dict_entry *de = d->table[t][i];
        while (de) {
            dict_entry *next = de->next;
            entry_free(d, de);
            d->used[t]--;
            de = next;
        }
    }
    zfree(d->table[t]);
    d->table[t] = NULL;
    d->size_exp[t] = 0;
    d->used[t] = 0;
}

void dict_empty(dict *d) {
    clear_table(d, 0);
    clear_table(d, 1);
    d->rehash_idx = -1;
    d->pause_rehash = 0;
}

void dict_release(dict *d) {
    if (!d) return;
    dict_empty(d);
    zfree(d);
}

bool dict_is_rehashing(const dict *d) { return d->rehash_idx != -1; }

size_t dict_buckets(const dict *d) { return DICT_SIZE(d->size_exp[0]) + DICT_SIZE(d->size_exp[1]); }

size_t dict_mem_usage(const dict *d) {
    size_t n = sizeof(*d) + dict_buckets(d) * sizeof(dict_entry *);
    size_t per_entry = d->type->embed_key ? sizeof(entry_emb) : sizeof(entry_ptr);
    return n + dict_size(d) * per_entry;
}

static uint64_t exp_for(size_t size) {
    uint64_t e = DICT_MIN_EXP;
    while (e < 63 && DICT_SIZE(e) < size) e++;
    return e;
}

/* Start a resize to hold `size` entries: a fresh table when empty, else a
 * second table that later operations fill bucket by bucket. */
int dict_expand(dict *d, size_t size) {
    if (dict_is_rehashing(d)) return DICT_ERR;
    uint64_t e = exp_for(size);
    if (d->table[0] && e == d->size_exp[0]) return DICT_ERR;
    dict_entry **t = zcalloc(DICT_SIZE(e) * sizeof(dict_entry *));
    if (!d->table[0]) {
        d->table[0] = t;
        d->size_exp[0] = e;
        return DICT_OK;
    }
    d->table[1] = t;
    d->size_exp[1] = e;
    d->used[1] = 0;
    d->rehash_idx = 0;
    return DICT_OK;
}

static void expand_if_needed(dict *d) {
    if (dict_is_rehashing(d)) return;
    if (!d->table[0]) {
        dict_expand(d, DICT_SIZE(DICT_MIN_EXP));
        return;
    }
    if (d->used[0] >= DICT_SIZE(d->size_exp[0])) dict_expand(d, d->used[0] + 1);
}

void dict_shrink_if_needed(dict *d) {
    if (dict_is_rehashing(d) || !d->table[0]) return;
    size_t size = DICT_SIZE(d->size_exp[0]);
    if (size > DICT_SIZE(DICT_MIN_EXP) && d->used[0] * 8 < size) dict_expand(d, d->used[0]);
}

/* Move n non-empty buckets from table 0 to table 1, visiting at most 10*n
 * empty ones so that a sparse table cannot stall the caller. */
int dict_rehash(dict *d, int n) {
    int empty_visits = n * 10;
    if (!dict_is_rehashing(d)) return 0;
    size_t size0 = DICT_SIZE(d->size_exp[0]);
    uint64_t mask1 = DICT_MASK(d->size_exp[1]);
    while (n-- && d->used[0] != 0) {
        while ((size_t)d->rehash_idx < size0 && d->table[0][d->rehash_idx] == NULL) {
            d->rehash_idx++;
            if (--empty_visits == 0) return 1;
        }
        dict_entry *de = d->table[0][d->rehash_idx];
        while (de) {
            dict_entry *next = de->next;
            uint64_t h = d->type->hash(dict_get_key(d, de)) & mask1;
            de->next = d->table[1][h];
            d->table[1][h] = de;
            d->used[0]--;
            d->used[1]++;
            de = next;
        }
        d->table[0][d->rehash_idx] = NULL;
        d->rehash_idx++;
    }
    if (d->used[0] == 0) {
        zfree(d->table[0]);
        d->table[0] = d->table[1];
        d->size_exp[0] = d->size_exp[1];
        d->used[0] = d->used[1];
        d->table[1] = NULL;
        d->size_exp[1] = 0;
        d->used[1] = 0;
        d->rehash_idx = -1;
        return 0;
    }
    return 1;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int dict_rehash_ms(dict *d, int ms) {
    if (d->pause_rehash > 0) return 0;
    long long start = now_ms();
    int moved = 0;
    while (dict_rehash(d, 100)) {
        moved += 100;
        if (now_ms() - start > ms) break;
    }
    return moved;
}

static inline void rehash_step(dict *d) {
    if (d->pause_rehash == 0) dict_rehash(d, 1);
}

/* ---------------------------------------------------------------- lookups */

dict_entry *dict_find(dict *d, const void *key) {
    if (dict_size(d) == 0) return NULL;
    if (dict_is_rehashing(d)) rehash_step(d);
    uint64_t h = d->type->hash(key);
    for (int t = 0; t <= 1; t++) {
        if (!d->table[t]) break;
        dict_entry *de = d->table[t][h & DICT_MASK(d->size_exp[t])];
        for (; de; de = de->next) {
            if (d->type->key_eq(key, dict_get_key(d, de))) return de;
        }
        if (!dict_is_rehashing(d)) break;
    }
    return NULL;
}

void *dict_fetch_value(dict *d, const void *key) {
    dict_entry *de = dict_find(d, key);
    return de ? de->v.ptr : NULL;
}

dict_entry *dict_add_raw(dict *d, void *key, dict_entry **existing) {
    if (existing) *existing = NULL;
    dict_entry *found = dict_find(d, key); /* also does a rehash step */
    if (found) {
        if (existing) *existing = found;
        return NULL;
    }
    expand_if_needed(d);
    int t = dict_is_rehashing(d) ? 1 : 0;
    uint64_t idx = d->type->hash(key) & DICT_MASK(d->size_exp[t]);
    dict_entry *de = entry_new(d, key);
    de->v.u64 = 0;
    de->next = d->table[t][idx];
    d->table[t][idx] = de;
    d->used[t]++;
    return de;
}

int dict_add(dict *d, void *key, void *val) {
    dict_entry *de = dict_add_raw(d, key, NULL);
    if (!de) return DICT_ERR;
    de->v.ptr = val;
    return DICT_OK;
}

int dict_replace(dict *d, void *key, void *val) {
    dict_entry *existing;
    dict_entry *de = dict_add_raw(d, key, &existing);
    if (de) {
        de->v.ptr = val;
        return 1;
    }
    dict_set_val(d, existing, val);
    return 0;
}

dict_entry *dict_unlink(dict *d, const void *key) {
    if (dict_size(d) == 0) return NULL;
    if (dict_is_rehashing(d)) rehash_step(d);
    uint64_t h = d->type->hash(key);
    for (int t = 0; t <= 1; t++) {
        if (!d->table[t]) break;
        dict_entry **link = &d->table[t][h & DICT_MASK(d->size_exp[t])];
        for (dict_entry *de = *link; de; link = &de->next, de = de->next) {
            if (d->type->key_eq(key, dict_get_key(d, de))) {
                *link = de->next;
                d->used[t]--;
                de->next = NULL;
                return de;
            }
        }
        if (!dict_is_rehashing(d)) break;
    }
    return NULL;
}

void dict_free_unlinked(dict *d, dict_entry *de) {
    if (de) entry_free(d, de);
}

int dict_delete(dict *d, const void *key) {
    dict_entry *de = dict_unlink(d, key);
    if (!de) return DICT_ERR;
    entry_free(d, de);
    return DICT_OK;
}

/* ---------------------------------------------------------------- iteration */

void dict_iter_init(dict_iter *it, dict *d, bool safe) {
    memset(it, 0, sizeof(*it));
    it->d = d;
    it->index = -1;
    it->safe = safe;
}

dict_entry *dict_next(dict_iter *it) {
    for (;;) {
        if (it->entry == NULL) {
            dict *d = it->d;
            if (it->index == -1 && it->table == 0 && it->safe) d->pause_rehash++;
            it->index++;
            if ((size_t)it->index >= DICT_SIZE(d->size_exp[it->table])) {
                if (dict_is_rehashing(d) && it->table == 0) {
                    it->table++;
                    it->index = 0;
                } else {
                    return NULL;
                }
            }
            if (!d->table[it->table]) return NULL;
            it->entry = d->table[it->table][it->index];
        } else {
            it->entry = it->next_entry;
        }
        if (it->entry) {
            it->next_entry = it->entry->next;
            return it->entry;
        }
    }
}

void dict_iter_release(dict_iter *it) {
    if (it->safe && !(it->index == -1 && it->table == 0)) it->d->pause_rehash--;
    it->index = -1;
    it->table = 0;
    it->entry = NULL;
}

/* ---------------------------------------------------------------- random */

dict_entry *dict_random_entry(dict *d) {
    if (dict_size(d) == 0) return NULL;
    if (dict_is_rehashing(d)) rehash_step(d);
    dict_entry *de = NULL;
    /* Pick a non-empty bucket uniformly, then a uniform element of its chain.
     * Buckets of table 0 below rehash_idx are known to be empty. */
    do {
        if (dict_is_rehashing(d)) {
            size_t s0 = DICT_SIZE(d->size_exp[0]), s1 = DICT_SIZE(d->size_exp[1]);
            size_t h = (size_t)d->rehash_idx + ((size_t)random() % (s0 + s1 - (size_t)d->rehash_idx));
            de = h >= s0 ? d->table[1][h - s0] : d->table[0][h];
        } else {
            de = d->table[0][(size_t)random() & DICT_MASK(d->size_exp[0])];
        }
    } while (de == NULL);
    size_t len = 0;
    for (dict_entry *e = de; e; e = e->next) len++;
    size_t pick = (size_t)random() % len;
    while (pick--) de = de->next;
    return de;
}

/* Uniform over entries, unlike dict_random_entry (which favours entries in
 * short chains): draw a bucket uniformly (empty ones included) and a slot
 * in [0, DICT_FAIR_SLOTS); the slot's entry, if the chain has one there,
 * is the answer, else draw again.  Every entry of a chain up to
 * DICT_FAIR_SLOTS long thus has the same chance per draw; a longer chain
 * (rare at load factor <= 1) is sampled as a whole.  About
 * DICT_FAIR_SLOTS / load draws per call. */
#define DICT_FAIR_SLOTS 8
dict_entry *dict_fair_random_entry(dict *d) {
    if (dict_size(d) == 0) return NULL;
    if (dict_is_rehashing(d)) rehash_step(d);
    for (;;) {
        dict_entry *de;
        if (dict_is_rehashing(d)) {
            size_t s0 = DICT_SIZE(d->size_exp[0]), s1 = DICT_SIZE(d->size_exp[1]);
            size_t h = (size_t)d->rehash_idx + ((size_t)random() % (s0 + s1 - (size_t)d->rehash_idx));
            de = h >= s0 ? d->table[1][h - s0] : d->table[0][h];
        } else {
            de = d->table[0][(size_t)random() & DICT_MASK(d->size_exp[0])];
        }
        if (!de) continue;
        size_t len = 0;
        for (dict_entry *e = de; e; e = e->next) len++;
        size_t slot = (size_t)random() % (len > DICT_FAIR_SLOTS ? len : DICT_FAIR_SLOTS);
        if (slot >= len) continue;
        while (slot--) de = de->next;
        return de;
    }
}

size_t dict_sample(dict *d, dict_entry **des, size_t count) {
    size_t got = 0, size = dict_size(d);
    if (count > size) count = size;
    if (count == 0) return 0;
    for (int i = 0; i < (int)count && dict_is_rehashing(d); i++) rehash_step(d);
    int tables = dict_is_rehashing(d) ? 2 : 1;
    size_t maxmask = DICT_MASK(d->size_exp[0]);
    if (tables > 1 && DICT_MASK(d->size_exp[1]) > maxmask) maxmask = DICT_MASK(d->size_exp[1]);
    size_t i = (size_t)random() & maxmask, empty = 0, steps = count * 10;
    while (got < count && steps--) {
        for (int t = 0; t < tables; t++) {
            if (t == 0 && tables == 2 && i < (size_t)d->rehash_idx) continue;
            if (i >= DICT_SIZE(d->size_exp[t])) continue;
            dict_entry *de = d->table[t][i];
            if (!de) {
                /* Long empty runs: jump somewhere else. */
                if (++empty >= 5 && empty > count) {
                    i = (size_t)random() & maxmask;
                    empty = 0;
                }
                continue;
            }
            empty = 0;
            for (; de && got < count; de = de->next) des[got++] = de;
        }
        i = (i + 1) & maxmask;
    }
    return got;
}

/* Reverse-binary cursor scan: the cursor's bits are incremented from the
 * most significant end, so every bucket present through the whole scan is
 * visited at least once even if the table grows or shrinks in between. */
static inline uint64_t rev64(uint64_t v) {
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) {
        r = (r << 1) | (v & 1);
        v >>= 1;
    }
    return r;
}

static void scan_bucket(dict *d, int t, size_t idx, dict_scan_fn *fn, void *priv) {
    for (dict_entry *de = d->table[t][idx]; de;) {
        dict_entry *next = de->next;
        fn(priv, de);
        de = next;
    }
}

static unsigned long next_cursor(unsigned long v, uint64_t mask) {
    v |= ~mask;
    v = rev64(v);
    v++;
    return rev64(v);
}

/* Defrag variant of scan_bucket: the callback may hand back a new address
 * for the entry (it has copied it and freed the old one); the link that
 * pointed at the old entry is updated. */
static void defrag_bucket(dict *d, int t, size_t idx, dict_defrag_fn *fn, void *priv) {
    dict_entry **link = &d->table[t][idx];
    for (dict_entry *de = *link; de;) {
        dict_entry *next = de->next;
        dict_entry *moved = fn(priv, d, de);
        if (moved) *link = moved;
        link = &(*link)->next;
        de = next;
    }
}

/* One scan step over the buckets cursor v designates; exactly one of fn and
 * dfn is set. */
static unsigned long scan_step(dict *d, unsigned long v, dict_scan_fn *fn, dict_defrag_fn *dfn, void *priv) {
    if (dict_size(d) == 0) return 0;
    d->pause_rehash++;
    if (!dict_is_rehashing(d)) {
        uint64_t m0 = DICT_MASK(d->size_exp[0]);
        if (fn) scan_bucket(d, 0, v & m0, fn, priv);
        else defrag_bucket(d, 0, v & m0, dfn, priv);
        v = next_cursor(v, m0);
    } else {
        int small = 0, large = 1;
        if (DICT_SIZE(d->size_exp[0]) > DICT_SIZE(d->size_exp[1])) {
            small = 1;
            large = 0;
        }
        uint64_t m0 = DICT_MASK(d->size_exp[small]), m1 = DICT_MASK(d->size_exp[large]);
        if (fn) scan_bucket(d, small, v & m0, fn, priv);
        else defrag_bucket(d, small, v & m0, dfn, priv);
        /* Visit every bucket of the larger table that expands v's bucket. */
        do {
            if (fn) scan_bucket(d, large, v & m1, fn, priv);
            else defrag_bucket(d, large, v & m1, dfn, priv);
            v = next_cursor(v, m1);
        } while (v & (m0 ^ m1));
    }
    d->pause_rehash--;
    return v;
}

typedef struct scan_batch {
    dict_entry **des;
    size_t n, cap;
} scan_batch;

static void batch_collect(void *priv, const dict_entry *de) {
    scan_batch *b = priv;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->des = zrealloc(b->des, sizeof(dict_entry *) * b->cap);
    }
    b->des[b->n++] = (dict_entry *)de;
}

unsigned long dict_scan_some(dict *d, unsigned long cursor, size_t count, dict_entry ***out, size_t *n) {
    scan_batch b = {NULL, 0, 0};
    size_t max_buckets = count * 10;
    do {
        cursor = dict_scan(d, cursor, batch_collect, &b);
    } while (cursor && max_buckets-- && b.n < count);
    *out = b.des;
    *n = b.n;
    return cursor;
}

unsigned long dict_scan(dict *d, unsigned long v, dict_scan_fn *fn, void *priv) {
    return scan_step(d, v, fn, NULL, priv);
}

unsigned long dict_scan_defrag(dict *d, unsigned long v, dict_defrag_fn *fn, void *priv) {
    return scan_step(d, v, NULL, fn, priv);
}

void dict_set_borrowed_key(dict *d, dict_entry *de, void *key) {
    if (!d->type->embed_key) ((entry_ptr *)de)->key = key;
}
