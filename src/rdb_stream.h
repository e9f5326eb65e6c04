/* rdb_stream.h: streams in the RDB format (types 15 and 19, Redis 7.0's
 * STREAM_LISTPACKS and STREAM_LISTPACKS_2), and the few reader/writer
 * primitives rdb_load.c and rdb_save.c lend to it.
 *
 * rdb_save.c calls rdb_stream_save for OBJ_STREAM values; rdb_load.c calls
 * rdb_stream_load for the two stream types.  The primitives are thin
 * wrappers over those files' own readers and writers, so the stream code
 * parses lengths and strings exactly as every other type does. */
#ifndef RL_RDB_STREAM_H
#define RL_RDB_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rio.h"
#include "object.h"

typedef struct reader rdb_reader_t;

/* ------------------------------------------------ lent by rdb_load.c */
bool rdb_in_len(rdb_reader_t *r, uint64_t *len);
bool rdb_in_bytes(rdb_reader_t *r, void *out, size_t n);
/* Any string form as a zmalloc'd copy (*len bytes); NULL on error. */
unsigned char *rdb_in_blob(rdb_reader_t *r, size_t *len);
bool rdb_in_fail(rdb_reader_t *r, const char *msg);
/* Whether count items of at least `per` bytes each can still follow. */
bool rdb_in_plausible(rdb_reader_t *r, uint64_t count, unsigned per);

/* ------------------------------------------------ lent by rdb_save.c */
void rdb_out_len(rio_t *r, uint64_t len);
void rdb_out_string(rio_t *r, const void *s, size_t len, bool compress);

/* ------------------------------------------------ the stream codec */
void rdb_stream_save(rio_t *r, robj *o, bool compress);
/* type: RDB_TYPE_STREAM_LISTPACKS or _2.  NULL after rdb_in_fail. */
robj *rdb_stream_load(rdb_reader_t *r, int type);

#endif
