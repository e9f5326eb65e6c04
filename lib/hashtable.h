/* hashtable.h: an open-addressing hash table of entry pointers in
 * cache-line buckets, with incremental resize, a resize-proof SCAN cursor,
 * random sampling, safe iteration and a defrag hook.
 *
 * The table stores pointers to caller-owned entries; the key lives inside
 * the entry and the type's entry_key callback finds it.  So a keyspace (or a
 * set) whose entries carry their own key needs no separate table entry or
 * key allocation: one pointer-sized slot per element, 64/9 bytes at 100%
 * fill.  A lookup reads one 64-byte bucket (nine slots and one hash byte
 * per slot) and, only when the hash byte matches, the entry.
 *
 * Entries are non-NULL pointers below 2^48 (every x86-64 and arm64 user
 * address Linux hands out with 48-bit virtual addressing); the table packs
 * them in six bytes and aborts on anything else.
 *
 * Who calls it: the keyspace and the hashtable encodings of hashes, sets and
 * sorted sets.  It includes no server header and allocates through zmalloc.
 * It must not be modified from inside a scan callback, nor (except for
 * deleting the entry just returned) while a safe iterator is live. */
#ifndef RL_HASHTABLE_H
#define RL_HASHTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ht_type {
    /* The key inside an entry; NULL means the entry pointer is the key. */
    const void *(*entry_key)(const void *entry);
    uint64_t (*hash)(const void *key);
    /* Key equality; NULL compares the key pointers. */
    bool (*key_eq)(const void *a, const void *b);
    /* Called by ht_delete, ht_empty and ht_release; NULL: nothing to free. */
    void (*entry_free)(void *entry);
} ht_type;

/* A hash for tables keyed by the entry pointer itself (entry_key NULL,
 * key_eq NULL): the address's bits mixed (splitmix64's finaliser), since
 * allocator alignment leaves the low bits of every pointer alike. */
uint64_t ht_hash_pointer(const void *p);

typedef struct ht_bucket ht_bucket; /* 64 bytes, private to hashtable.c */

/* Invariants (checked by ht_validate):
 *   - tables[1] exists only while resizing (rehash_idx >= 0); every bucket of
 *     tables[0] below rehash_idx is empty then, and new entries go to
 *     tables[1];
 *   - used[i] is the number of non-empty slots of tables[i];
 *   - an entry sits in its home bucket (hash & mask) or, when that was full,
 *     in a later bucket (wrapping) with every bucket from home up to the one
 *     before it marked everfull; lookups stop at the first bucket that is
 *     not everfull. */
typedef struct ht {
    const ht_type *type;
    ht_bucket *tables[2];
    int8_t exp[2];      /* log2 of the bucket count; -1: no table */
    size_t used[2];     /* entries in each table */
    size_t everfull[2]; /* buckets with the everfull mark, per table */
    long rehash_idx;    /* next bucket of tables[0] to move; -1 idle */
    int pause_rehash;   /* > 0: safe iterators live, no bucket moves */
    int pause_shrink;   /* > 0: deletions do not start a shrink */
} ht;

/* A position where ht_find_position_for_insert found room; valid until the
 * table is next modified. */
typedef struct ht_position {
    int table;
    int slot;
    size_t bucket;
    size_t home;   /* the entry's home bucket: marks go from here */
    uint8_t hbyte; /* its hash byte */
} ht_position;

typedef struct ht_iter {
    ht *t;
    bool safe;
    int table;
    size_t bucket;
    int slot; /* next slot to look at in bucket */
} ht_iter;

/* Scan callbacks.  ht_scan_fn sees each entry; ht_defrag_fn may move it
 * and returns the new address (the table stores it) or NULL if it stayed. */
typedef void ht_scan_fn(void *privdata, void *entry);
typedef void *ht_defrag_fn(void *privdata, void *entry);

#define HT_BUCKET_SLOTS 9
#define HT_BUCKET_BYTES 64

ht *ht_create(const ht_type *type);
void ht_release(ht *t); /* frees entries (entry_free) and the table */
void ht_empty(ht *t);   /* frees entries, keeps the handle */
/* The handle regrown to carry `bytes` of caller data behind it (zeroed),
 * and given another type (same hash and key functions expected): the
 * entries stay.  Returns the new handle; t is dead.  ht_meta(t) is that
 * data (a hash with field TTLs keeps its bookkeeping there). */
ht *ht_with_meta(ht *t, const ht_type *type, size_t bytes);
static inline void *ht_meta(ht *t) { return t + 1; }

static inline size_t ht_size(const ht *t) { return t->used[0] + t->used[1]; }
size_t ht_buckets(const ht *t);   /* both tables */
size_t ht_mem_usage(const ht *t); /* the handle and bucket arrays, no entries */
size_t ht_lut_bytes(const ht *t); /* the bucket arrays alone (Redis 7.4's "lut") */
/* The array being emptied while the table resizes (7.4's "rehashing"
 * overhead), else 0. */
size_t ht_rehashing_bytes(const ht *t);
/* ht_mem_usage plus the entries' bytes: entry_bytes(entry) measured on the
 * first `samples` entries (0 = all) and scaled to ht_size (MEMORY USAGE). */
size_t ht_mem_usage_sampled(ht *t, size_t samples, size_t (*entry_bytes)(const void *entry));
bool ht_is_resizing(const ht *t);

/* Lookup: true and *found = the entry when key is present. */
bool ht_find(ht *t, const void *key, void **found);
/* Insert an entry whose key is absent: false (nothing stored) if present. */
bool ht_add(ht *t, void *entry);
/* Two-phase insert: true and *pos when key is absent (build the entry, then
 * ht_insert_at_position before modifying the table otherwise); false and
 * *existing (if not NULL) when present. */
bool ht_find_position_for_insert(ht *t, const void *key, ht_position *pos, void **existing);
void ht_insert_at_position(ht *t, const ht_position *pos, void *entry);
/* Remove the entry with key: ht_delete frees it through entry_free; ht_pop
 * hands it to the caller (*popped), without freeing. */
bool ht_delete(ht *t, const void *key);
bool ht_pop(ht *t, const void *key, void **popped);
/* Swap the stored pointer of an entry for another with the same key (a
 * reallocated or moved entry).  old_entry is only compared, never read, so
 * it may be freed already.  False if old is not in the table. */
bool ht_replace_entry(ht *t, const void *old_entry, void *new_entry);

/* Resizing.  ht_expand presizes for n entries (loading); the table also
 * grows and shrinks by itself.  Each lookup, insert and delete moves one
 * bucket of an ongoing resize; ht_rehash_us moves buckets for about us
 * microseconds (the cron) and returns true while more remain. */
bool ht_expand(ht *t, size_t n);
bool ht_rehash_us(ht *t, uint64_t us);
void ht_rehash_steps(ht *t, size_t buckets);
/* Start a shrink when the table is far too big for its entries (after
 * deletions the table shrinks by itself; this catches up after a pause). */
void ht_shrink_if_needed(ht *t);
void ht_pause_shrink(ht *t);
void ht_resume_shrink(ht *t);

/* Iteration.  A safe iterator pauses resizing so the caller may delete the
 * entry just returned (and insert: new entries may or may not be seen); an
 * unsafe one requires that the table is not modified at all. */
void ht_iter_init(ht_iter *it, ht *t, bool safe);
bool ht_next(ht_iter *it, void **entry);
void ht_iter_release(ht_iter *it);

/* Random sampling: ht_random_entry is uniform over entries; ht_sample
 * fills out with up to count entries from consecutive buckets starting at a
 * random one (cheap, for eviction and expiry sampling). */
bool ht_random_entry(ht *t, void **entry);
size_t ht_sample(ht *t, void **out, size_t count);

/* SCAN: visit the entries of one home bucket (of each table) per step and
 * return the next cursor, 0 when done.  Every entry present for the whole
 * scan is visited at least once, whatever resizes happen between calls;
 * within one table size an entry is visited exactly once.  The callback
 * must not modify the table. */
size_t ht_scan(ht *t, size_t cursor, ht_scan_fn *fn, void *privdata);
/* The same step for active defrag: fn may move each entry (the table
 * stores the new pointer). */
size_t ht_scan_defrag(ht *t, size_t cursor, ht_defrag_fn *fn, void *privdata);
/* Move the bucket arrays themselves (both while resizing): fn(privdata,
 * array) returns a new copy (the old one freed) or NULL. */
void ht_defrag_tables(ht *t, ht_defrag_fn *fn, void *privdata);

/* Whole-table check of the invariants above (tests, debug level 3). */
bool ht_validate(ht *t);

#endif
