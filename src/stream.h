/* stream.h: the stream type's data structure, laid out as Redis 7.0 does.
 *
 * A stream is a rax (lib/rax.h) keyed by the 128-bit big-endian ID of each
 * node's master entry, whose values are listpacks holding:
 *
 *   master entry: count, deleted, nfields, field_1 .. field_n, 0
 *   each entry:   flags, ms-delta, seq-delta,
 *                 (SAMEFIELDS: value_1 .. value_n) |
 *                 (nfields, field_1, value_1, ...),
 *                 lp-count (elements of the entry before it)
 *
 * count/deleted: live and flagged entries of the node; a node whose last
 * live entry is deleted is freed.  New nodes start when the last one would
 * reach stream-node-max-bytes or holds stream-node-max-entries entries.
 * Consumer groups: a rax name -> stream_cg_t, each with a PEL (ID -> nack)
 * and consumers (name -> consumer, each with its own PEL of the same nacks).
 * Callers: t_stream.c (commands), t_stream_cg.c (groups), rdb_*.c, aof.c,
 * lazyfree.c; nothing here replies to clients. */
#ifndef RL_STREAM_H
#define RL_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "rax.h"

#define STREAM_ITEM_FLAG_NONE 0
#define STREAM_ITEM_FLAG_DELETED (1 << 0)
#define STREAM_ITEM_FLAG_SAMEFIELDS (1 << 1)
#define STREAM_ID_STR_MAX 44
#define SCG_INVALID_ENTRIES_READ (-1LL)

typedef struct stream_id {
    uint64_t ms;
    uint64_t seq;
} stream_id_t;

typedef struct stream_consumer {
    long long seen_time;   /* unix ms of the last interaction */
    long long active_time; /* unix ms of the last delivery or claim to it, -1 = none (Redis 7.2) */
    sds name;
    rax_t *pel; /* ID -> stream_nack_t (shared with the group's PEL) */
} stream_consumer_t;

typedef struct stream_nack {
    long long delivery_time; /* unix ms of the last delivery */
    uint64_t delivery_count;
    stream_consumer_t *consumer; /* current owner */
} stream_nack_t;

typedef struct stream_cg {
    stream_id_t last_id;    /* last delivered ID */
    long long entries_read; /* logical reads counter, or SCG_INVALID_ENTRIES_READ */
    rax_t *pel;             /* ID -> stream_nack_t (owned here) */
    rax_t *consumers;       /* name -> stream_consumer_t */
} stream_cg_t;

typedef struct stream {
    rax_t *rax;           /* master ID -> listpack */
    uint64_t length;      /* live entries */
    stream_id_t last_id;  /* 0-0 for a new stream */
    stream_id_t first_id; /* first live entry, 0-0 when empty */
    stream_id_t max_deleted_entry_id;
    uint64_t entries_added; /* all entries ever added */
    rax_t *cgroups;         /* name -> stream_cg_t, NULL until the first group */
} stream_t;

/* Node limits (stream-node-max-bytes / -entries, 0 = unlimited). */
typedef struct stream_limits {
    long long max_bytes;
    long long max_entries;
} stream_limits_t;

/* ------------------------------------------------------------ IDs */
void stream_id_encode(unsigned char buf[16], const stream_id_t *id);
void stream_id_decode(const unsigned char buf[16], stream_id_t *id);
int stream_id_cmp(const stream_id_t *a, const stream_id_t *b);
/* Next / previous ID; false on overflow (then *id is unchanged). */
bool stream_id_incr(stream_id_t *id);
bool stream_id_decr(stream_id_t *id);
/* "ms-seq" into buf (STREAM_ID_STR_MAX bytes); returns the length. */
size_t stream_id_format(char *buf, const stream_id_t *id);

/* ------------------------------------------------------------ the type */
stream_t *stream_new(void);
void stream_free(stream_t *s);
robj *stream_create_object(void);
extern const obj_type_ops_t stream_type_ops;

/* Append an entry of nfields field/value pairs (argv alternates fields and
 * values, as sds strings).  use_id NULL: auto ID ("*"); seq_given false
 * with use_id: "ms-*".  Returns 0, or -1 with EDOM semantics (ID not
 * greater than the top item) or -2 (elements too large). */
int stream_append(stream_t *s, const stream_limits_t *lim, robj **argv, int64_t nfields, stream_id_t *added,
                  const stream_id_t *use_id, bool seq_given, long long now_ms);
/* Delete one entry; true if it was there (not already deleted). */
bool stream_delete(stream_t *s, const stream_id_t *id);
/* First (first=true) or last live entry's ID; false when empty. */
bool stream_edge_id(stream_t *s, bool first, stream_id_t *id);

/* Trimming: maxlen or minid; approx stops at node boundaries; limit caps
 * the entries removed (0 = no cap).  Returns the entries removed. */
enum { STREAM_TRIM_NONE = 0,
       STREAM_TRIM_MAXLEN,
       STREAM_TRIM_MINID };
int64_t stream_trim(stream_t *s, int strategy, long long maxlen, const stream_id_t *minid, bool approx, long long limit);

/* ------------------------------------------------------------ iteration */
typedef struct stream_iter {
    stream_t *s;
    stream_id_t start, end; /* inclusive */
    bool rev;
    bool started;
    bool done;
    rax_iter_t ri;
    unsigned char *lp;         /* current node, NULL between nodes */
    unsigned char *p;          /* next entry (forward: flags; reverse: lp-count) */
    unsigned char *master_end; /* the master entry's 0 terminator */
    stream_id_t master_id;
    int64_t master_fields;
    unsigned char *master_fields_p; /* first master field */
    /* current entry */
    unsigned char *entry_flags_p;
    int64_t entry_flags;
    unsigned char *fp, *vp; /* next field / value to read */
    int64_t fields_left;
    char fbuf[21], vbuf[21];
} stream_iter_t;

void stream_iter_start(stream_iter_t *it, stream_t *s, const stream_id_t *start, const stream_id_t *end, bool rev);
/* Next live entry in range; false when done. */
bool stream_iter_next(stream_iter_t *it, stream_id_t *id, int64_t *nfields);
/* The next field and value of the current entry (pointers valid until the
 * next call). */
void stream_iter_field(stream_iter_t *it, const unsigned char **f, size_t *flen, const unsigned char **v,
                       size_t *vlen);
void stream_iter_stop(stream_iter_t *it);

/* Logical distance helpers of 7.0's lag computation. */
bool stream_range_has_tombstones(stream_t *s, const stream_id_t *start, const stream_id_t *end);
long long stream_estimate_distance(stream_t *s, const stream_id_t *id);

/* ------------------------------------------------------------ groups */
stream_cg_t *stream_cg_lookup(stream_t *s, const char *name, size_t len);
/* NULL when a group of that name exists. */
stream_cg_t *stream_cg_create(stream_t *s, const char *name, size_t len, const stream_id_t *id, long long entries_read);
bool stream_cg_destroy(stream_t *s, const char *name, size_t len);
stream_consumer_t *stream_consumer_lookup(stream_cg_t *cg, const char *name, size_t len);
/* NULL when it exists. */
stream_consumer_t *stream_consumer_create(stream_cg_t *cg, const char *name, size_t len, long long now_ms);
/* Delete the consumer and its pending entries; returns how many were pending. */
uint64_t stream_consumer_delete(stream_cg_t *cg, stream_consumer_t *consumer);
stream_nack_t *stream_nack_new(stream_consumer_t *consumer, long long now_ms);
void stream_nack_free(void *n);

/* Bytes used (MEMORY USAGE), sampling at most `samples` nodes (0 = all). */
size_t stream_mem_usage(const stream_t *s, size_t samples);
/* Work to free it (lazyfree's effort). */
size_t stream_free_effort(const stream_t *s);

#endif
