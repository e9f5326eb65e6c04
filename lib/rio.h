/* rio.h: a buffered writer to a file descriptor (or to a growing sds in
 * memory) that keeps a running CRC-64 of everything written and remembers
 * the first error.
 *
 * Used by the RDB writer (rdb_save.c) and the AOF rewrite (aof.c), both in
 * forked children and in the main process (SAVE); DUMP (dump.c) writes one
 * value into memory.  After an error every
 * further write is a no-op, so callers may write a whole file and check
 * rio_error() once at the end; rio_flush() reports it as well.  Pure module
 * (zmalloc not needed: the buffer is inline). */
#ifndef RL_RIO_H
#define RL_RIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sds.h"

#define RIO_BUF_SIZE (64 * 1024)
#define RIO_INCREMENTAL_FSYNC_BYTES (4u << 20) /* Redis's step too */

typedef struct rio {
    int fd;            /* -1: memory mode, bytes go to mem */
    sds mem;           /* memory mode: everything written */
    bool checksum;     /* keep crc up to date */
    uint64_t crc;      /* CRC-64 of the bytes written so far */
    uint64_t written;  /* bytes accepted (buffered or on disk) */
    int err;           /* first errno seen, 0 if none */
    size_t used;       /* bytes in buf */
    uint64_t autosync; /* fdatasync every this many bytes written out (0: never) */
    uint64_t unsynced; /* bytes written out since the last of those */
    unsigned char buf[RIO_BUF_SIZE];
} rio_t;

void rio_init(rio_t *r, int fd, bool checksum);
/* Memory mode: writes append to r->mem (the caller takes it when done
 * with rio_take_mem; the inline buffer is not used). */
void rio_init_mem(rio_t *r, bool checksum);
sds rio_take_mem(rio_t *r);
void rio_write(rio_t *r, const void *p, size_t len);
/* Incremental fsync (rdb-save-incremental-fsync, aof-rewrite-incremental-
 * fsync): the file is synced every `bytes` written, so the kernel never
 * holds a whole snapshot's dirty pages and then flushes them in one long
 * stall.  A failed sync is an error like a failed write. */
void rio_set_autosync(rio_t *r, uint64_t bytes);
/* Write out the buffer; 0 or -1 (then r->err is set). */
int rio_flush(rio_t *r);
static inline bool rio_error(const rio_t *r) { return r->err != 0; }

/* write() all of len bytes, retrying on EINTR and short writes, and
 * waiting (poll, up to a minute) when a non-blocking fd is full; 0 or -1. */
int rio_write_all(int fd, const void *p, size_t len);

/* fsync the directory holding path (after a rename into it, so that the
 * new name survives a crash); 0 or -1 with errno. */
int rio_fsync_dir(const char *path);

#endif
