/* aof_manifest.h: the manifest of Redis 7.0's multi-part append-only file.
 *
 * The AOF is a directory (appenddirname in dir) holding one base file (the
 * dataset as of the last rewrite: an RDB image or commands), the incr files
 * written since (commands), history files a rewrite superseded, and the
 * manifest naming them, one line each:
 *
 *     file appendonly.aof.2.base.rdb seq 2 type b
 *     file appendonly.aof.1.incr.aof seq 1 type h
 *     file appendonly.aof.2.incr.aof seq 2 type i
 *
 * (b base, h history, i incr; '#' lines are comments; a name that needs
 * quoting is quoted).  This module holds the list, names new files, parses
 * and writes it; it knows nothing of the server, so redis-like-check-aof
 * reads manifests with it too.  aof.c decides when files change.  A change
 * is made on a copy (aof_manifest_dup) that replaces the live one only
 * once it is on disk, so a failed write leaves both as they were. */
#ifndef RL_AOF_MANIFEST_H
#define RL_AOF_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>

#include "sds.h"

typedef enum {
    AOF_FILE_BASE = 'b',
    AOF_FILE_HISTORY = 'h',
    AOF_FILE_INCR = 'i',
} aof_file_type_t;

typedef struct aof_file {
    sds name; /* inside the AOF directory */
    long long seq;
    aof_file_type_t type;
} aof_file_t;

typedef struct aof_manifest {
    aof_file_t *base;  /* NULL: none yet */
    aof_file_t **incr; /* oldest first: the order they are replayed */
    int nincr;
    aof_file_t **history; /* most recently superseded first */
    int nhistory;
    long long base_seq, incr_seq; /* the highest of each in use so far */
} aof_manifest_t;

aof_manifest_t *aof_manifest_create(void);
void aof_manifest_free(aof_manifest_t *am);
aof_manifest_t *aof_manifest_dup(const aof_manifest_t *am);

/* The manifest's text, NULL with *err (Redis 7.0's wording) when it is not
 * one; a name with '/' is refused (a manifest names files of its own
 * directory only). */
aof_manifest_t *aof_manifest_parse(const char *text, size_t len, const char **err);
sds aof_manifest_format(const aof_manifest_t *am);

/* "<dir>/<appendfilename>.manifest": 1 read into *out, 0 no such file, -1
 * unreadable or invalid (*err says why; errno text for I/O). */
int aof_manifest_load(const char *dir, const char *appendfilename, aof_manifest_t **out, sds *err);
/* Write it to a temp file, fsync, rename over the manifest, fsync the
 * directory.  false with errno set on failure (nothing replaced). */
bool aof_manifest_persist(const aof_manifest_t *am, const char *dir, const char *appendfilename);

/* Name a new base (rdb: ".base.rdb", else ".base.aof"), the current base
 * becoming history; returns the new name (owned by am). */
const char *aof_manifest_new_base(aof_manifest_t *am, const char *appendfilename, bool rdb);
/* The base is an existing file of that name, seq 1 (a single-file AOF
 * being upgraded into the directory). */
void aof_manifest_adopt_base(aof_manifest_t *am, const char *name);
/* Name a new incr file, appended to the incr list; returns it (owned). */
const char *aof_manifest_new_incr(aof_manifest_t *am, const char *appendfilename);
/* The last incr file, a new one named when there is none. */
const char *aof_manifest_last_incr(aof_manifest_t *am, const char *appendfilename);
/* After a rewrite: the incr files are history (the new base holds what
 * they did), but for the last one when keep_last (writes went on there
 * while the rewrite ran). */
void aof_manifest_retire_incrs(aof_manifest_t *am, bool keep_last);
/* Forget the history entries (their files were removed). */
void aof_manifest_clear_history(aof_manifest_t *am);

/* "temp-<appendfilename>.incr": where writes go while AOF is being turned
 * on, before the first base exists. */
sds aof_manifest_temp_incr_name(const char *appendfilename);

/* "<dir>/<name>". */
sds aof_path(const char *dir, const char *name);

#endif
