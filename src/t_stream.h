/* t_stream.h: helpers shared by the stream command files: t_stream.c
 * (XADD, XRANGE, XREAD, XDEL, XTRIM, XLEN, XSETID) and t_stream_cg.c
 * (consumer groups, XREADGROUP, XPENDING, XCLAIM, XINFO).  Nothing outside
 * those two files uses them. */
#ifndef RL_T_STREAM_H
#define RL_T_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "stream.h"

#define STREAM_ERR_INVALID_ID "Invalid stream ID specified as stream command argument"

/* Parse an ID argument: "-" / "+" allowed unless strict; a missing
 * sequence becomes missing_seq; seq_given (may be NULL) accepts "ms-*" and
 * reports whether the sequence was given.  Replies on failure. */
bool stream_parse_id(robj *o, stream_id_t *id, uint64_t missing_seq, bool strict, bool *seq_given);
bool stream_parse_id_or_reply(client_t *c, robj *o, stream_id_t *id, uint64_t missing_seq, bool strict,
                              bool *seq_given);
/* "(" prefix means exclusive (the caller adjusts); replies on failure. */
bool stream_parse_interval_id_or_reply(client_t *c, robj *o, stream_id_t *id, bool *exclude, uint64_t missing_seq);

void stream_reply_id(client_t *c, const stream_id_t *id);
robj *stream_id_object(const stream_id_t *id);
/* Replace argument i of the current request (for AOF propagation). */
void stream_rewrite_arg(client_t *c, int i, robj *o);

/* The stream at key for reading/writing, NULL if missing or wrong type
 * (*wrongtype then true, WRONGTYPE sent). */
robj *stream_lookup_or_reply(client_t *c, robj *key, bool write, bool *wrongtype);

/* AOF propagation of group reads and claims: the stream key and group name
 * arguments of the running command. */
typedef struct stream_prop {
    robj *key;
    robj *group;
} stream_prop_t;

/* Log "XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID
 * LASTID last" (the exact state of one pending entry), "XGROUP SETID key
 * group id ENTRIESREAD n" or "XGROUP CREATECONSUMER key group name", and
 * keep the running command out of the AOF (persist_propagate). */
void stream_propagate_claim(client_t *c, const stream_prop_t *p, stream_cg_t *cg, const stream_id_t *id,
                            const stream_nack_t *nack);
void stream_propagate_setid(client_t *c, const stream_prop_t *p, stream_cg_t *cg);
void stream_propagate_createconsumer(client_t *c, const stream_prop_t *p, robj *consumer);

#define STREAM_RWR_NOACK (1 << 0)
#define STREAM_RWR_RAWENTRIES (1 << 1) /* no outer array length */
#define STREAM_RWR_HISTORY (1 << 2)    /* only the consumer's PEL */
/* Reply entries of [start, end] (end NULL = to the top), at most count
 * (0 = all); with a group, deliver them to consumer (PEL, last_id). */
size_t stream_reply_range(client_t *c, stream_t *s, const stream_id_t *start, const stream_id_t *end, size_t count,
                          bool rev, stream_cg_t *group, stream_consumer_t *consumer, int flags,
                          const stream_prop_t *prop);
/* Reply one entry [id, [field, value ...]] if it is live; false if not. */
bool stream_reply_entry(client_t *c, stream_t *s, const stream_id_t *id);

/* XREAD and XREADGROUP (t_stream.c), exposed for the group table. */
void stream_read_command(client_t *c, bool group);

long long stream_now(client_t *c);

extern command_t stream_cg_commands[]; /* t_stream_cg.c */

#endif
