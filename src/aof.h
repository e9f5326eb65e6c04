/* aof.h: the append-only file: every write command, in RESP, with expiries
 * made absolute; fsync per appendfsync; loading at start-up; BGREWRITEAOF.
 *
 * Redis 7.0's multi-part AOF: a directory (appenddirname in dir) with a
 * base file, incr files and their manifest (aof_manifest.h).  aof.c owns
 * the files and the write stream, aof_encode.c turns commands and keys into
 * what is logged, aof_load.c replays a file.  persist.c creates it (srv->aof) and drives it: aof_flush before the event
 * loop sleeps (so with "always" the data is on disk before any reply
 * leaves), aof_cron once per cron tick, aof_rewrite_start for BGREWRITEAOF;
 * propagate.c appends each write (aof_append).  The rewrite runs in
 * child.c's forked child.  The everysec fsync runs on a helper thread owned
 * here. */
#ifndef RL_AOF_H
#define RL_AOF_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "server.h"

typedef struct aof aof_t; /* srv->aof */

/* bio_cpus: where its fsync thread runs (bio_cpulist), NULL anywhere. */
aof_t *aof_create(const cpu_set_t *bio_cpus);
void aof_free(aof_t *aof);
/* After aof_load at start-up (or to log again after a failed shutdown):
 * open the last incr file for appending, creating the directory, an empty
 * base and the first incr file as needed; false on error (logged). */
bool aof_open(server_t *srv, aof_t *aof);
void aof_close(aof_t *aof);
bool aof_is_on(const aof_t *aof);

/* argv (run on db dbid, which it just changed) as the RESP command that
 * replays its effect: relative expiries made absolute, SET and RESTORE in
 * Redis's logged forms.  Appended to buf.  propagate.c feeds the result to the AOF
 * and to the replicas alike. */
sds aof_translate(server_t *srv, sds buf, int dbid, robj **argv, int argc);
/* Log one translated command run on db dbid (SELECT and the timestamp
 * annotation added as needed). */
void aof_append(server_t *srv, int dbid, const char *cmd, size_t len);
/* WAITAOF: the replication offset (repl_offset()) that a completed fsync
 * covers; 0 while turning AOF on waits for its first base, -1 when AOF is
 * off. */
long long aof_fsynced_tag(const aof_t *aof);
/* A replica's full sync loaded new data: a rewrite is scheduled, and
 * WAITAOF sees nothing fsynced until its base. */
void aof_resynced(aof_t *aof);
/* Write the buffer out (and fsync when appendfsync always). */
void aof_flush(server_t *srv, aof_t *aof);
/* Once per cron tick: everysec fsync, appendonly switched by CONFIG SET,
 * automatic rewrite. */
void aof_cron(server_t *srv, aof_t *aof);

/* Read the manifest (moving a single-file AOF into the directory first)
 * and replay its files into the databases.  Returns 1 loaded, 0 no files,
 * -1 fatal (logged with the file, the offset and a pointer to
 * redis-like-check-aof). */
int aof_load(server_t *srv, aof_t *aof);
/* aof_load.c: one file's image, already in memory.  path names the file in
 * messages and is truncated there when aof-load-truncated cuts a partial
 * last command, which only the last file may have (last_file).  1 or -1. */
int aof_load_image(server_t *srv, const unsigned char *buf, size_t len, const char *path, bool last_file);
/* The same as the last file (the fuzz target's entry). */
int aof_load_buffer(server_t *srv, const unsigned char *buf, size_t len, const char *path);

/* BGREWRITEAOF: writes move to a new incr file and a child (child.c's
 * slot) writes the dataset as the next base; when it ends the manifest
 * switches to it.  false with *err when a child runs, a file could not be
 * made or the fork failed. */
bool aof_rewrite_start(server_t *srv, aof_t *aof, const char **err);

/* CONFIG SET appendonly: act on it now (turning AOF on starts its first
 * rewrite unless a child is busy, then the cron does).  NULL, or the error
 * that puts the old value back. */
const char *aof_appendonly_changed(server_t *srv, aof_t *aof);
/* AOF is being turned on and its first base is being written: until it is
 * in place there is no AOF holding the data (shutdown must wait). */
bool aof_writing_first_base(const server_t *srv, const aof_t *aof);
/* Flush and fsync before exit. */
void aof_shutdown(server_t *srv, aof_t *aof);
sds aof_info(server_t *srv, aof_t *aof, sds s);
bool aof_rewrite_scheduled(const aof_t *aof);
void aof_schedule_rewrite(aof_t *aof);
/* Whether the last write/fsync failed (writes are then refused with MISCONF
 * like Redis's "-MISCONF Errors writing to the AOF file"). */
bool aof_write_failed(const aof_t *aof);
/* The errno of that failure (write first, else background fsync). */
int aof_last_errno(const aof_t *aof);

/* aof_encode.c: append the commands that rebuild one key (a command base,
 * and commands logged by their effect). */
sds aof_emit_key(sds buf, sds key, robj *val, long long expire_ms);
/* One parsed command of an AOF image (offsets into the buffer). */
typedef struct aof_cmd {
    int argc, cap;
    size_t *off, *len;
} aof_cmd_t;
enum { AOF_PARSE_OK = 0,
       AOF_PARSE_TRUNCATED = 1,
       AOF_PARSE_CORRUPT = 2 };
/* Parse the command at *pos; on OK *pos moves past it.  On CORRUPT *pos is
 * the offset of the bad byte.  Pure: used by the loader and the check tool. */
int aof_parse_command(const unsigned char *buf, size_t len, size_t *pos, aof_cmd_t *cmd);
/* Step over an annotation line ('#' at *pos, e.g. "#TS:1700000000"): OK,
 * or TRUNCATED when it has no newline. */
int aof_skip_annotation(const unsigned char *buf, size_t len, size_t *pos);
void aof_cmd_free(aof_cmd_t *cmd);

/* stream_aof.c: the commands that rebuild one stream (used by aof_emit_key). */
sds stream_aof_emit(sds buf, sds key, robj *val);

#endif
