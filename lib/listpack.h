/* listpack.h: a list of strings and integers packed into one contiguous
 * zmalloc'd buffer, walkable in both directions.
 *
 * The compact encoding of small lists (and the nodes of a quicklist), small
 * hashes (field, value, field, value ...), small sets and small sorted sets
 * (member, score, member, score ...).  Callers: quicklist.c, t_hash.c,
 * t_set.c, t_zset.c, rdb.c (lp_validate).  Pure module: zmalloc only, never
 * server.h.
 *
 * Buffer layout (all multi-byte fields little-endian):
 *
 *   +-----------+---------+---------+---------+-----+---------+------+
 *   | total u32 | count16 | entry 0 | entry 1 | ... | entry N | 0xFF |
 *   +-----------+---------+---------+---------+-----+---------+------+
 *     total: bytes of the whole buffer, header and end marker included
 *     count: number of entries, or 65535 = "at least 65535, walk to count"
 *
 * Entry layout:  [encoding + data][back-length]
 *
 *   encoding byte(s)             meaning                        entry body
 *   0xxxxxxx                     uint 0..127                    1 byte
 *   10LLLLLL                     string, len 0..63              1 + len
 *   110xxxxx xxxxxxxx            int -4096..4095 (13-bit, big-endian bits)  2
 *   1110LLLL LLLLLLLL            string, len 64..4095           2 + len
 *   11110000 L L L L             string, 32-bit len             5 + len
 *   11110001 b b                 int16                          3
 *   11110010 b b b               int24                          4
 *   11110011 b b b b             int32                          5
 *   11110100 b*8                 int64                          9
 *   11111111                     end marker (not an entry)
 *   0xF5..0xFE                   invalid
 *
 * The back-length holds the body size (encoding + data) in 1..5 bytes,
 * written so it can be read from its last byte leftwards: the rightmost byte
 * carries the low 7 bits, and a set high bit means "one more byte to the
 * left with the next 7 bits".  Hence prev(p) = p - backlen_size - body_size.
 *
 * Invariants: total equals the allocation's logical size; the last byte is
 * the only 0xFF in an entry-header position; every string that is a
 * canonical integer (lp_string_to_int64) is stored as an integer, so a value
 * has exactly one encoding and equality is a byte/integer comparison.
 *
 * Ownership: every call that changes the list may realloc and returns the new
 * buffer; the old pointer and every entry pointer into it are dead (calls
 * that keep a position hand back a fresh entry pointer).  String arguments
 * must not point into the listpack being changed. */
#ifndef RL_LISTPACK_H
#define RL_LISTPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LP_HDR_SIZE 6
#define LP_INTBUF_SIZE 21 /* "-9223372036854775808" plus NUL */
#define LP_BEFORE 0
#define LP_AFTER 1
/* Beyond this a listpack is not grown further: callers convert instead. */
#define LP_SAFETY_SIZE (1u << 30)

/* ----------------------------- create / free ----------------------------- */
unsigned char *lp_new(void); /* empty: 7 bytes */
void lp_free(unsigned char *lp);
unsigned char *lp_shrink_to_fit(unsigned char *lp);
unsigned char *lp_dup(const unsigned char *lp);

/* -------------------------------- adding -------------------------------- */
unsigned char *lp_append(unsigned char *lp, const void *s, size_t len);
unsigned char *lp_append_int(unsigned char *lp, long long v);
unsigned char *lp_prepend(unsigned char *lp, const void *s, size_t len);
unsigned char *lp_prepend_int(unsigned char *lp, long long v);
/* Insert before/after entry p (where = LP_BEFORE/LP_AFTER); p may be the end
 * marker with LP_BEFORE (append).  *newp (may be NULL) gets the new entry. */
unsigned char *lp_insert(unsigned char *lp, const void *s, size_t len,
                         unsigned char *p, int where, unsigned char **newp);
unsigned char *lp_insert_int(unsigned char *lp, long long v, unsigned char *p,
                             int where, unsigned char **newp);
/* Append n values with one reallocation (a stream entry at a time).  An
 * item is the string s[0..len), or the integer v when s is NULL. */
typedef struct lp_item {
    const void *s;
    size_t len;
    long long v;
} lp_item_t;
unsigned char *lp_append_batch(unsigned char *lp, const lp_item_t *items, size_t n);
/* Overwrite entry *p with a new value; *p is updated to the new entry. */
unsigned char *lp_replace(unsigned char *lp, unsigned char **p, const void *s, size_t len);
unsigned char *lp_replace_int(unsigned char *lp, unsigned char **p, long long v);
/* Append all entries of `other` (left unchanged) to lp. */
unsigned char *lp_merge(unsigned char *lp, const unsigned char *other);

/* ------------------------------- deleting ------------------------------- */
/* Delete entry p; *newp (may be NULL) gets the entry that followed it, or
 * NULL when p was the last one. */
unsigned char *lp_delete(unsigned char *lp, unsigned char *p, unsigned char **newp);
/* Delete up to num entries starting at *p; *p becomes the entry that
 * followed them or NULL. */
unsigned char *lp_delete_range_at(unsigned char *lp, unsigned char **p, unsigned long num);
/* Delete up to num entries from index (negative counts from the end). */
unsigned char *lp_delete_range(unsigned char *lp, long index, unsigned long num);

/* ------------------------------- walking -------------------------------- */
unsigned char *lp_first(unsigned char *lp);                  /* NULL if empty */
unsigned char *lp_last(unsigned char *lp);                   /* NULL if empty */
unsigned char *lp_next(unsigned char *lp, unsigned char *p); /* NULL at end */
unsigned char *lp_prev(unsigned char *lp, unsigned char *p); /* NULL at start */
/* Entry at index (0-based; -1 is the last); NULL when out of range. */
unsigned char *lp_seek(unsigned char *lp, long index);

/* ------------------------------- reading -------------------------------- */
/* String entries: returns the bytes and sets *len.  Integer entries: returns
 * NULL and sets *ival.  The returned pointer is into the listpack. */
const unsigned char *lp_get(const unsigned char *p, size_t *len, long long *ival);
/* Always a string: integers are formatted into buf (LP_INTBUF_SIZE bytes). */
const unsigned char *lp_get_str(const unsigned char *p, size_t *len, char *buf);
/* Value of an integer entry; false for a string entry (which, by the
 * canonical-integer invariant, never holds a number we would store as one). */
bool lp_get_int(const unsigned char *p, long long *v);
/* Length of the entry's value as a string (digits for an integer). */
size_t lp_value_strlen(const unsigned char *p);

/* Whether entry p holds exactly the bytes s[0..len). */
bool lp_entry_equal(const unsigned char *p, const void *s, size_t len);
/* Order of entry p against s: memcmp order of the string forms, then length
 * (<0, 0, >0), the order ZRANGEBYLEX uses. */
int lp_entry_cmp(const unsigned char *p, const void *s, size_t len);
/* Find the first entry equal to s starting at p, comparing one entry then
 * jumping over `skip` entries (skip = 1 visits only the fields of a
 * field/value listpack).  NULL when not found. */
unsigned char *lp_find(unsigned char *lp, unsigned char *p, const void *s,
                       size_t len, unsigned skip);

/* Whether no value repeats among the entries visited from the first one,
 * jumping over `skip` entries each time (skip = 1: the fields of a
 * field/value listpack).  Quadratic: for listpacks within the entry limits. */
bool lp_entries_unique(unsigned char *lp, unsigned skip);

unsigned long lp_length(const unsigned char *lp);
size_t lp_bytes(const unsigned char *lp);
size_t lp_mem_usage(const unsigned char *lp); /* zmalloc_size of the buffer */

/* ------------------------- conversion helpers -------------------------- */
/* Canonical integer: optional '-', no leading zeros ("0" alone is fine), no
 * '+', no spaces, fits int64.  This decides integer storage. */
bool lp_string_to_int64(const void *s, size_t len, long long *v);
/* Whether adding `add` more bytes keeps the listpack under the safety
 * limit (LP_SAFETY_SIZE unless a test lowered it). */
bool lp_safe_to_add(const unsigned char *lp, size_t add);
/* The safety limit in bytes, and a test's override of it (DEBUG
 * LISTPACK-SAFETY-LIMIT; 0 restores LP_SAFETY_SIZE): the multi-GB inputs
 * of CVE-2021-32627/32628 replayed at a size a test can afford. */
size_t lp_safety_limit(void);
void lp_set_safety_limit(size_t bytes);
/* Whether the listpack holds at most max_entries entries and every value is
 * at most max_value bytes long (the *-max-listpack-entries / -value rule). */
bool lp_fits(const unsigned char *lp, size_t max_entries, size_t max_value);
/* Exact bytes the entry for s[0..len) would take (encoding, data, back-length). */
size_t lp_encoded_size(const void *s, size_t len);

/* Integrity check of `size` bytes claimed to be a listpack (RDB loading).
 * Shallow: header, total and end marker.  Deep: every entry's encoding,
 * bounds and back-length, and the count.  cb (may be NULL) is called for
 * each entry in deep mode and may reject it by returning false. */
typedef bool (*lp_validate_cb)(const unsigned char *p, void *arg);
bool lp_validate(const unsigned char *buf, size_t size, bool deep,
                 lp_validate_cb cb, void *arg);

#endif
