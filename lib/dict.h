/* dict.h: chained hash table with incremental rehashing.
 *
 * Used for the keyspace, the expires table, the command table and the large
 * encodings of hashes, sets and sorted sets.  The table doubles when it holds
 * as many entries as buckets, and shrinks when under 1/8 full; the move from
 * the old table to the new one is spread over later operations (one bucket
 * each) and over dict_rehash_ms() calls from the cron, so no single command
 * pays for a whole resize.
 *
 * Keys are owned by the dict through the type's callbacks.  A type with
 * embed_key set stores an sds key inside the entry itself (one allocation per
 * key instead of two): dict_add copies the key and the caller keeps its own.
 * Entries of an embedded-key dict never move while they are in the table, so
 * dict_get_key() pointers stay valid until the entry is deleted, with one
 * exception: active defrag (dict_scan_defrag) may move entries, and then
 * updates whatever borrows their keys itself. */
#ifndef RL_DICT_H
#define RL_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DICT_OK 0
#define DICT_ERR 1

typedef union dict_val {
    void *ptr;
    int64_t s64;
    uint64_t u64;
    double d;
} dict_val;

typedef struct dict_entry {
    struct dict_entry *next; /* bucket chain */
    dict_val v;
} dict_entry;

typedef struct dict_type {
    uint64_t (*hash)(const void *key);
    bool (*key_eq)(const void *a, const void *b);
    void *(*key_dup)(const void *key); /* NULL: store the pointer as given */
    void (*key_free)(void *key);
    void (*val_free)(void *val);
    bool embed_key; /* keys are sds copied into the entry */
} dict_type;

typedef struct dict {
    dict_type *type;
    dict_entry **table[2];
    uint64_t size_exp[2]; /* log2 of the bucket count; 0 with no table */
    size_t used[2];       /* entries in each table */
    long rehash_idx;      /* next bucket of table 0 to move; -1 if idle */
    int pause_rehash;     /* > 0 while safe iterators are live */
} dict;

typedef struct dict_iter {
    dict *d;
    long index;
    int table;
    bool safe;
    dict_entry *entry, *next_entry;
} dict_iter;

typedef void dict_scan_fn(void *privdata, const dict_entry *de);

dict *dict_create(dict_type *type);
void dict_release(dict *d);
void dict_empty(dict *d);

int dict_add(dict *d, void *key, void *val); /* DICT_ERR if exists */
dict_entry *dict_add_raw(dict *d, void *key, dict_entry **existing);
int dict_replace(dict *d, void *key, void *val); /* 1 added, 0 replaced */
dict_entry *dict_find(dict *d, const void *key);
void *dict_fetch_value(dict *d, const void *key);
int dict_delete(dict *d, const void *key);         /* frees key and value */
dict_entry *dict_unlink(dict *d, const void *key); /* take out, no free */
void dict_free_unlinked(dict *d, dict_entry *de);

void *dict_get_key(const dict *d, const dict_entry *de);
static inline void *dict_get_val(const dict_entry *de) { return de->v.ptr; }
static inline int64_t dict_get_s64(const dict_entry *de) { return de->v.s64; }
static inline double dict_get_double(const dict_entry *de) { return de->v.d; }
void dict_set_val(dict *d, dict_entry *de, void *val); /* frees the old value */
static inline void dict_set_s64(dict_entry *de, int64_t v) { de->v.s64 = v; }
static inline void dict_set_double(dict_entry *de, double v) { de->v.d = v; }

static inline size_t dict_size(const dict *d) { return d->used[0] + d->used[1]; }
size_t dict_buckets(const dict *d);
size_t dict_mem_usage(const dict *d); /* bucket arrays + entries, no keys/values */
size_t dict_entry_mem(const dict *d, const dict_entry *de);
/* MEMORY USAGE of a dict-encoded collection: the dict, its buckets, and the
 * entries (plus what val_bytes says each value holds, if given) measured on
 * the first `samples` entries and scaled to all; samples 0 = every entry. */
size_t dict_mem_usage_sampled(dict *d, size_t samples, size_t (*val_bytes)(const dict_entry *de));
bool dict_is_rehashing(const dict *d);

int dict_expand(dict *d, size_t size);
void dict_shrink_if_needed(dict *d);
int dict_rehash(dict *d, int n); /* move n buckets; 1 if more to do */
int dict_rehash_ms(dict *d, int ms);

void dict_iter_init(dict_iter *it, dict *d, bool safe);
dict_entry *dict_next(dict_iter *it);
void dict_iter_release(dict_iter *it);

dict_entry *dict_random_entry(dict *d);
/* A uniformly chosen entry (slower than dict_random_entry: SRANDMEMBER and
 * HRANDFIELD with repetitions, where the distribution is visible). */
dict_entry *dict_fair_random_entry(dict *d);
/* Fill des with up to count entries from a random region; returns how many. */
size_t dict_sample(dict *d, dict_entry **des, size_t count);
unsigned long dict_scan(dict *d, unsigned long cursor, dict_scan_fn *fn, void *privdata);
/* One SCAN command's worth of dict_scan: visit buckets from cursor until at
 * least count entries were gathered, or 10*count buckets were seen (so a
 * sparse table cannot make one call walk everything).  *out receives a
 * zmalloc'd array of *n entries (caller frees it), valid until the dict is
 * next modified.  Returns the next cursor (0 when the scan is complete). */
unsigned long dict_scan_some(dict *d, unsigned long cursor, size_t count, dict_entry ***out, size_t *n);

/* Active defrag (defrag.c): a scan step whose callback may move an entry.
 * It returns the entry's new address (the old one freed) or NULL if the
 * entry stayed; the bucket chain is relinked.  Values may be replaced in
 * place (de->v) by the callback.  Same cursor contract as dict_scan. */
typedef dict_entry *dict_defrag_fn(void *privdata, dict *d, dict_entry *de);
unsigned long dict_scan_defrag(dict *d, unsigned long cursor, dict_defrag_fn *fn, void *privdata);
/* Point a plain (not embedded-key) entry at another copy of its key: for
 * a table borrowing keys from another one whose entries moved. */
void dict_set_borrowed_key(dict *d, dict_entry *de, void *key);

/* Hashing: SipHash-1-2 keyed by a per-process random seed. */
void dict_set_hash_seed(const uint8_t seed[16]);
uint64_t dict_hash_bytes(const void *p, size_t len);
uint64_t dict_hash_bytes_nocase(const void *p, size_t len);

/* Ready-made types for sds keys. */
uint64_t dict_sds_hash(const void *key);
bool dict_sds_eq(const void *a, const void *b);
uint64_t dict_sds_hash_nocase(const void *key);
bool dict_sds_eq_nocase(const void *a, const void *b);
void dict_sds_free(void *key);

#endif
