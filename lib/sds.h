/* sds.h: binary-safe dynamic strings.
 *
 * An sds is a char* that points at NUL-terminated bytes preceded by a small
 * header holding the length and the allocated capacity, so it can be handed
 * to printf-style C code yet hold any byte.  The header is 3, 5, 9 or 17
 * bytes depending on how large the string may grow (type 8/16/32/64), which
 * keeps the short keys of a key-value server cheap.
 *
 * Ownership: calls that may grow the buffer return the new pointer and the
 * argument is dead afterwards (s = sds_cat(s, ...)).  sds_free(NULL) is fine.
 * Memory comes from zmalloc. */
#ifndef RL_SDS_H
#define RL_SDS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

typedef char *sds;

/* Header types, named by the flags byte just before the string (low 3
 * bits); the layouts themselves are in sds.c.  Here only so that sds_len
 * can be inline: it is read several times per request (parser, command
 * lookup, keyspace), where a call costs more than the read. */
enum { SDS_T8 = 0,
       SDS_T16 = 1,
       SDS_T32 = 2,
       SDS_T64 = 3,
       SDS_T5 = 4 };
#define SDS_TYPE_MASK 7
#define SDS_T5_MAX 31 /* longest string a T5 header describes */

sds sds_newlen(const void *init, size_t len); /* init may be NULL: zeroed */

/* A read-only sds built in buf (at least len + 2 bytes) from len <=
 * SDS_T5_MAX bytes of s, for a lookup key without an allocation; never
 * grown nor freed, valid while buf is. */
static inline sds sds_in_buf_t5(char *buf, const void *s, size_t len) {
    buf[0] = (char)((len << 3) | SDS_T5);
    memcpy(buf + 1, s, len);
    buf[1 + len] = '\0';
    return buf + 1;
}
sds sds_new(const char *cstr);
sds sds_empty(void);
sds sds_dup(const sds s);
sds sds_fromll(long long v);
void sds_free(sds s);

/* The length: the len field sits right before the flags byte, 1, 2, 4 or
 * 8 bytes wide (sds.c's packed headers; T5 keeps it in the flags byte). */
static inline size_t sds_len(const sds s) {
    unsigned char f = (unsigned char)s[-1];
    switch (f & SDS_TYPE_MASK) {
        case SDS_T5: return f >> 3;
        case SDS_T8: return (unsigned char)s[-3];
        case SDS_T16: {
            uint16_t n;
            memcpy(&n, s - 5, sizeof(n));
            return n;
        }
        case SDS_T32: {
            uint32_t n;
            memcpy(&n, s - 9, sizeof(n));
            return n;
        }
        default: {
            uint64_t n;
            memcpy(&n, s - 17, sizeof(n));
            return n;
        }
    }
}
size_t sds_avail(const sds s);
size_t sds_alloc(const sds s);      /* capacity excluding header/NUL */
size_t sds_alloc_size(const sds s); /* whole block incl. header */
void sds_setlen(sds s, size_t len); /* len <= capacity; writes NUL */
void sds_incrlen(sds s, ssize_t incr);

sds sds_make_room(sds s, size_t addlen); /* greedy growth */
sds sds_make_room_exact(sds s, size_t addlen);
sds sds_remove_free(sds s); /* shrink capacity to length */

sds sds_catlen(sds s, const void *t, size_t len);
sds sds_cat(sds s, const char *t);
sds sds_catsds(sds s, const sds t);
sds sds_cpylen(sds s, const char *t, size_t len);
sds sds_catprintf(sds s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
sds sds_catvprintf(sds s, const char *fmt, va_list ap);
sds sds_catrepr(sds s, const char *p, size_t len); /* quoted, escaped */
sds sds_growzero(sds s, size_t len);               /* extend to len with zeros */

void sds_range(sds s, ssize_t start, ssize_t end); /* inclusive, negatives from end */
void sds_clear(sds s);                             /* len 0, keeps capacity */
void sds_tolower(sds s);
void sds_toupper(sds s);
int sds_cmp(const sds a, const sds b); /* memcmp order, then length */

/* Split a line the way redis-cli and the inline protocol do: whitespace
 * separates, "..." understands \n \r \t \b \a \\ \" \xHH, '...' understands \'.
 * Returns a zmalloc'd array of *argc sds, or NULL on unbalanced quotes. */
sds *sds_splitargs(const char *line, int *argc);
void sds_free_splitres(sds *tokens, int count);

/* Size of the header an sds of this length gets, and building one in place
 * inside caller-owned memory (used to embed keys in hash table entries).
 * buf must have sds_embed_size(len) bytes; returns the sds inside it, which
 * must never be grown or freed with sds_free.  Strings of up to 31 bytes
 * get a one-byte header (no spare capacity), longer ones the usual one. */
static inline size_t sds_embed_size(size_t len) {
    /* header: T5 1 byte up to SDS_T5_MAX, else T8 3, T16 5, T32 9, T64 17 */
    size_t hdr = len <= SDS_T5_MAX ? 1 : len < 256       ? 3
                                     : len < 65536       ? 5
                                     : len <= UINT32_MAX ? 9
                                                         : 17;
    return hdr + len + 1;
}
/* Bytes between the start of s's allocation and s: code that moves the
 * allocation (active defrag) finds the block at s - sds_hdr_len(s) and the
 * moved string at new_block + sds_hdr_len(s). */
size_t sds_hdr_len(const sds s);
sds sds_embed(void *buf, const void *init, size_t len);

#endif
