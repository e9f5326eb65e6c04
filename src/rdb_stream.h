/* rdb_stream.h: streams in the RDB format (types 15 and 19, Redis 7.0's
 * STREAM_LISTPACKS and STREAM_LISTPACKS_2; 21, Redis 7.2's
 * STREAM_LISTPACKS_3 with consumers' active times), and the few reader/writer
 * primitives rdb_load.c and rdb_save.c lend to it.
 *
 * rdb_save.c calls rdb_stream_save for OBJ_STREAM values; rdb_load.c calls
 * rdb_stream_load for the three stream types.  Each passes a table of its
 * own reader or writer primitives, so the stream code parses lengths and
 * strings exactly as every other type does while sitting below both files
 * (it never calls back into them by name: no call cycle). */
#ifndef RL_RDB_STREAM_H
#define RL_RDB_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rio.h"
#include "object.h"

typedef struct reader rdb_reader_t;

/* The reader primitives rdb_load.c lends (the stream codec sits below the
 * loader and reaches its reader only through this table). */
typedef struct rdb_in_ops {
    bool (*len)(rdb_reader_t *r, uint64_t *len);
    bool (*bytes)(rdb_reader_t *r, void *out, size_t n);
    /* Any string form as a zmalloc'd copy (*len bytes); NULL on error. */
    unsigned char *(*blob)(rdb_reader_t *r, size_t *len);
    bool (*fail)(rdb_reader_t *r, const char *msg);
    /* Whether count items of at least `per` bytes each can still follow. */
    bool (*plausible)(rdb_reader_t *r, uint64_t count, unsigned per);
} rdb_in_ops_t;

/* The writer primitives rdb_save.c lends. */
typedef struct rdb_out_ops {
    void (*len)(rio_t *r, uint64_t len);
    void (*string)(rio_t *r, const void *s, size_t len, bool compress);
} rdb_out_ops_t;

/* ------------------------------------------------ the stream codec */
/* Whether type 19 would lose something of o: a consumer whose active
 * time differs from its seen time (or that was never active). */
bool rdb_stream_needs_v3(robj *o);
/* v3: type 21's layout (consumers' active times), else type 19's. */
void rdb_stream_save(rio_t *r, const rdb_out_ops_t *out, robj *o, bool compress, bool v3);
/* type: RDB_TYPE_STREAM_LISTPACKS, _2 or _3.  NULL after ops->fail. */
robj *rdb_stream_load(rdb_reader_t *r, const rdb_in_ops_t *ops, int type);

#endif
