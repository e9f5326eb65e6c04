/* aof.c: the append-only file (see aof.h): Redis 7.0's multi-part AOF.
 *
 * Files: a directory (appenddirname in dir) holding a base file (the
 * dataset at the last rewrite: an RDB image with aof-use-rdb-preamble, else
 * commands), the incr files of the writes since, in order, and the
 * manifest naming them (aof_manifest.c).  Writes go to the last incr file.
 *
 * Feeding: each write command that changed the dataset is appended to
 * `buf` in RESP (aof_encode.c's translation), preceded by SELECT when the
 * database differs from the last one logged, and by a "#TS:<unix time>"
 * annotation when aof-timestamp-enabled is on and the second changed.
 * aof_flush (before the loop sleeps, i.e. before replies are written)
 * write()s buf; with appendfsync always it fdatasyncs right there, with
 * everysec the cron queues an fsync job on the AOF's own bio thread once a
 * second (the loop never waits for the disk), with no the kernel decides.
 *
 * Disk errors: a failed or short write keeps the unwritten commands in
 * `buf` (the file is cut back to the last whole command, or the written
 * part is dropped from buf when it cannot be), and a failed background
 * fsync is recorded by the job; either refuses write commands with
 * "-MISCONF Errors writing to the AOF file: <errno text>" (persist.c) until
 * a later write and fsync succeed, which the cron retries by itself.  With
 * appendfsync always a failed write or fsync exits, as Redis does: replies
 * are written after aof_flush, so no client was told OK for data that did
 * not reach the disk.
 *
 * Rewrite: writes switch to a new incr file (named in the manifest before
 * the fork, so a crash meanwhile loses nothing); the child writes the
 * dataset to a temp file; when it succeeds the temp file becomes the new
 * base, the old base and the incr files before the new one become history
 * and are removed (unless aof-disable-auto-gc).  Turning AOF on at run time
 * is a rewrite whose writes meanwhile go to a temp incr file, renamed to
 * the first incr file when the base is in place.
 *
 * Start-up: the manifest is read (an old single-file `appendfilename` in
 * dir is moved into the directory as the base first, as Redis 7.0
 * upgrades it), every file is replayed (aof_load.c), and the last incr
 * file is opened for appending; with no files at all an empty base is
 * written first. */
#include "aof.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aof_manifest.h"
#include "bio.h"
#include "child.h"
#include "durability_hooks.h"
#include "keyspace.h"
#include "loading.h"
#include "log.h"
#include "rdb.h"
#include "repl.h"
#include "resp.h"
#include "util.h"

/* Automatic rewrites after this many failures in a row wait, from a
 * minute doubling up to an hour (a failing disk would otherwise get a new
 * incr file every cron tick). */
#define REWRITE_FAILURES_BEFORE_DELAY 3
#define REWRITE_DELAY_MIN_MS (60 * 1000LL)
#define REWRITE_DELAY_MAX_MS (60 * 60 * 1000LL)

struct aof {
    bool on;                /* files in place, commands logged to the last incr file */
    bool enabling;          /* appendonly set at run time: logging to the temp incr
                      file until the first rewrite lands */
    int fd;                 /* the file writes go to, -1 when none */
    sds buf;                /* fed, not yet written */
    int last_db;            /* db of the last SELECT logged, -1 = unknown */
    long long last_ts;      /* second of the last #TS annotation, 0 = none yet in this file */
    aof_manifest_t *am;     /* the files (NULL until start-up or enabling) */
    long long incr_size;    /* bytes in the file fd writes to */
    long long current_size; /* bytes in all the files (auto rewrite, INFO) */
    long long base_size;    /* the base file's size when loaded or rewritten */
    bool write_failed;
    int write_errno;
    bool rewrite_scheduled;
    bool rewrite_rdb; /* the running rewrite writes an RDB base */
    bool last_rewrite_ok;
    long long rewrites, rewrite_failures; /* failures: in a row */
    long long rewrite_start_ms, last_rewrite_time_sec, next_auto_rewrite_ms;
    size_t last_cow_size;
    long long last_fsync_ms;
    long long fsynced_size; /* incr_size at the last fsync request */
    /* everysec: fsync jobs on our own bio thread; the job records its
     * outcome here and the main thread reads it (MISCONF, INFO). */
    bio_t *bio;             /* NULL if the thread could not start: fsync inline */
    atomic_int fsync_errno; /* 0 = the last background fsync succeeded */
    /* WAITAOF (Redis 7.2): tags are replication offsets (repl_offset(),
     * which moves as the stream is fed, by one per write without a stream).
     * written_tag: what the last write covers;
     * fsynced_tag: what the last completed fsync covers (a bio job stores
     * it); fork_tag: the stream when the running rewrite forked its base. */
    long long written_tag, fork_tag;
    atomic_llong fsynced_tag;
    /* A full sync replaced the data: nothing counts as fsynced until a
     * rewrite forked after it has installed its base (Redis 0 meanwhile). */
    bool resync_hold, resync_forked;
};

/* ----------------------------------------------------- state and paths */

aof_t *aof_create(const cpu_set_t *bio_cpus) {
    aof_t *aof = zcalloc(sizeof(*aof));
    aof->fd = -1;
    aof->buf = sds_empty();
    aof->last_db = -1;
    aof->last_rewrite_ok = true;
    aof->last_rewrite_time_sec = -1;
    atomic_init(&aof->fsync_errno, 0);
    atomic_init(&aof->fsynced_tag, 0);
    aof->bio = bio_create("bio_aof_fsync", bio_cpus); /* Redis's name for it */
    return aof;
}

void aof_free(aof_t *aof) {
    if (!aof) return;
    bio_destroy(aof->bio); /* runs a queued fsync, then joins */
    if (aof->fd >= 0) close(aof->fd);
    sds_free(aof->buf);
    aof_manifest_free(aof->am);
    zfree(aof);
}

bool aof_is_on(const aof_t *aof) { return aof->on || aof->enabling; }
bool aof_write_failed(const aof_t *aof) {
    return aof->on && (aof->write_failed || atomic_load(&aof->fsync_errno) != 0);
}

int aof_last_errno(const aof_t *aof) {
    if (aof->write_failed) return aof->write_errno;
    return atomic_load(&((aof_t *)aof)->fsync_errno); /* a load does not modify */
}
bool aof_rewrite_scheduled(const aof_t *aof) { return aof->rewrite_scheduled; }
void aof_schedule_rewrite(aof_t *aof) { aof->rewrite_scheduled = true; }

static sds aof_dir(const server_t *srv) { return server_path(srv, srv->cfg.appenddirname); }

static sds file_path(const server_t *srv, const char *name) {
    sds dir = aof_dir(srv);
    sds path = aof_path(dir, name);
    sds_free(dir);
    return path;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static bool make_dir(const server_t *srv) {
    sds dir = aof_dir(srv);
    bool ok = mkdir(dir, 0755) == 0 || errno == EEXIST;
    if (!ok) log_msg(LL_WARNING, "Can't create the AOF directory %s: %s", dir, strerror(errno));
    sds_free(dir);
    return ok;
}

static int open_append(const char *path, bool truncate) {
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0), 0644);
}

/* Writes go to fd from now on (a new or reopened file of `size` bytes). */
static void write_to(aof_t *aof, int fd, long long size) {
    aof->fd = fd;
    aof->incr_size = aof->fsynced_size = size;
    aof->last_db = -1; /* a new file starts with its own SELECT and timestamp */
    aof->last_ts = 0;
}

/* base_size and current_size from the files on disk. */
static void measure(const server_t *srv, aof_t *aof) {
    aof->base_size = 0;
    if (aof->am->base) {
        sds p = file_path(srv, aof->am->base->name);
        aof->base_size = file_size(p);
        sds_free(p);
    }
    aof->current_size = aof->base_size;
    for (int i = 0; i < aof->am->nincr; i++) {
        sds p = file_path(srv, aof->am->incr[i]->name);
        aof->current_size += file_size(p);
        sds_free(p);
    }
}

/* Make `next` the manifest: on disk first, then in memory.  false (logged)
 * when it could not be written; the live one stays.  next is consumed. */
static bool manifest_commit(const server_t *srv, aof_t *aof, aof_manifest_t *next) {
    sds dir = aof_dir(srv);
    bool ok = aof_manifest_persist(next, dir, srv->cfg.appendfilename);
    if (ok) {
        aof_manifest_free(aof->am);
        aof->am = next;
    } else {
        log_msg(LL_WARNING, "Can't persist the AOF manifest in %s: %s", dir, strerror(errno));
        aof_manifest_free(next);
    }
    sds_free(dir);
    return ok;
}

/* ------------------------------------------------------ background jobs */

/* arg_tag: the written_tag the synced bytes cover (WAITAOF). */
static void fsync_job(void *arg_aof, void *arg_fd, void *arg_tag) {
    aof_t *aof = arg_aof;
    int fd = (int)(intptr_t)arg_fd;
    int e = fdatasync(fd) == 0 ? 0 : errno;
    if (!e) atomic_store(&aof->fsynced_tag, (long long)(intptr_t)arg_tag);
    int before = atomic_exchange(&aof->fsync_errno, e);
    /* Logged from here on a change only: the log is line-atomic. */
    if (e && !before) log_msg(LL_WARNING, "Error syncing the AOF file to disk: %s", strerror(e));
    else if (!e && before) log_msg(LL_NOTICE, "AOF fsync error looks solved, Redis can write again.");
}

/* Wait until no background job is queued or running (before the fd the
 * jobs use is closed). */
static void fsync_wait_idle(aof_t *aof) {
    if (aof->bio) bio_drain(aof->bio);
}

/* Queue a background fsync unless one is still queued or running (a slow
 * disk then simply gets fewer fsyncs; the loop never waits). */
static void fsync_request(aof_t *aof) {
    void *tag = (void *)(intptr_t)aof->written_tag;
    if (!aof->bio) {
        fsync_job(aof, (void *)(intptr_t)aof->fd, tag);
        return;
    }
    if (bio_pending(aof->bio, BIO_AOF_FSYNC) == 0)
        bio_submit(aof->bio, BIO_AOF_FSYNC, fsync_job, aof, (void *)(intptr_t)aof->fd, tag);
}

/* The incr file a rewrite switched away from: synced and closed behind any
 * fsync queued for it (jobs run in order). */
static void close_job(void *arg_fd, void *unused1, void *unused2) {
    (void)unused1;
    (void)unused2;
    int fd = (int)(intptr_t)arg_fd;
    if (fdatasync(fd) != 0) log_msg(LL_WARNING, "Error syncing the previous AOF incr file: %s", strerror(errno));
    close(fd);
}

/* A history file: unlinking a large file can take a while, so not on the
 * main thread.  The job owns the path. */
static void unlink_job(void *arg_path, void *unused1, void *unused2) {
    (void)unused1;
    (void)unused2;
    sds path = arg_path;
    if (unlink(path) != 0 && errno != ENOENT)
        log_msg(LL_WARNING, "Can't remove the AOF history file %s: %s", path, strerror(errno));
    sds_free(path);
}

static void in_background(aof_t *aof, bio_job_fn *fn, void *arg) {
    if (aof->bio) bio_submit(aof->bio, BIO_AOF_FSYNC, fn, arg, NULL, NULL);
    else fn(arg, NULL, NULL);
}

/* Drop the history files (unless aof-disable-auto-gc): the manifest stops
 * naming them first, so a crash in between leaves a stray file, never a
 * manifest naming a missing one. */
static void remove_history(const server_t *srv, aof_t *aof) {
    if (srv->cfg.aof_disable_auto_gc || aof->am->nhistory == 0) return;
    aof_manifest_t *before = aof_manifest_dup(aof->am);
    aof_manifest_t *next = aof_manifest_dup(aof->am);
    aof_manifest_clear_history(next);
    if (manifest_commit(srv, aof, next)) {
        for (int i = 0; i < before->nhistory; i++) {
            log_msg(LL_NOTICE, "Removing the history file %s in the background", before->history[i]->name);
            in_background(aof, unlink_job, file_path(srv, before->history[i]->name));
        }
    }
    aof_manifest_free(before);
}

/* ------------------------------------------------------------ base files */

/* Function libraries go first in a command base, as FUNCTION LOAD. */
static void emit_function(void *arg, const char *code, size_t len) {
    sds *cmd = arg;
    const char *av[3] = {"FUNCTION", "LOAD", code};
    size_t lens[3] = {8, 4, len};
    *cmd = resp_cat_command(*cmd, 3, av, lens);
}

/* The dataset as commands (aof-use-rdb-preamble no). */
static int write_commands(server_t *srv, rio_t *r) {
    sds cmd = sds_empty();
    if (srv->cfg.aof_timestamp_enabled) cmd = sds_catprintf(cmd, "#TS:%lld\r\n", util_mstime() / 1000);
    srv->durability_hooks->foreach_function(srv, emit_function, &cmd); /* function.c */
    for (int i = 0; i < srv->dbnum && !rio_error(r); i++) {
        db_t *db = &srv->dbs[i];
        if (!db_size(db)) continue;
        char n[16];
        const char *av[2] = {"SELECT", n};
        size_t lens[2] = {6, (size_t)util_ll2str(n, sizeof(n), i)};
        cmd = resp_cat_command(cmd, 2, av, lens);
        ht_iter it;
        void *p;
        ht_iter_init(&it, db->keys, false);
        while (ht_next(&it, &p)) {
            db_entry *de = p;
            robj view;
            cmd = aof_emit_key(cmd, db_entry_key(de), db_entry_val(de, &view), db_entry_expire(de));
            if (srv->cfg.rdb_key_save_delay > 0) usleep((useconds_t)srv->cfg.rdb_key_save_delay);
            if (sds_len(cmd) > 64 * 1024) {
                rio_write(r, cmd, sds_len(cmd));
                sds_clear(cmd);
            }
        }
        ht_iter_release(&it);
    }
    rio_write(r, cmd, sds_len(cmd));
    sds_free(cmd);
    return rio_flush(r);
}

/* The dataset into tmpfile, as an RDB image or as commands, fsynced; 0 or
 * -1 (logged, the file removed).  Runs in the rewrite child, or in the
 * server for the empty base of a first start. */
static int write_base(server_t *srv, const char *tmpfile, bool rdb) {
    int fd = open(tmpfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_msg(LL_WARNING, "Opening the temp file for AOF rewrite failed: %s", strerror(errno));
        return -1;
    }
    rio_t *r = zmalloc(sizeof(*r));
    rio_init(r, fd, rdb && srv->cfg.rdbchecksum);
    if (srv->cfg.aof_rewrite_incremental_fsync) rio_set_autosync(r, RIO_INCREMENTAL_FSYNC_BYTES);
    int rc;
    if (rdb) {
        rdb_save_opts_t opts = {srv->cfg.rdbcompression, srv->cfg.rdbchecksum, true, srv->cfg.rdb_key_save_delay};
        rc = rdb_write_dataset(srv, r, &opts);
    } else {
        rc = write_commands(srv, r);
    }
    int e = r->err;
    zfree(r);
    if (rc == 0 && fsync(fd) != 0) {
        rc = -1;
        e = errno;
    }
    close(fd);
    if (rc != 0) {
        log_msg(LL_WARNING, "Write error writing append only file on disk: %s", strerror(e));
        unlink(tmpfile);
        return -1;
    }
    return 0;
}

static sds rewrite_tmp_name(const server_t *srv, pid_t pid) {
    char name[64];
    snprintf(name, sizeof(name), "temp-rewriteaof-bg-%d.aof", (int)pid);
    return server_path(srv, name);
}

/* First start with nothing to load: an empty base, written here. */
static bool create_base_now(server_t *srv, const char *name) {
    char tmpname[64];
    snprintf(tmpname, sizeof(tmpname), "temp-rewriteaof-%d.aof", (int)getpid());
    sds tmp = server_path(srv, tmpname);
    sds path = file_path(srv, name);
    bool ok = write_base(srv, tmp, srv->cfg.aof_use_rdb_preamble) == 0;
    if (ok && rename(tmp, path) != 0) {
        log_msg(LL_WARNING, "Error trying to rename the temporary AOF base file %s into %s: %s", tmp, path,
                strerror(errno));
        unlink(tmp);
        ok = false;
    }
    sds_free(tmp);
    sds_free(path);
    return ok;
}

/* -------------------------------------------------------------- start-up */

/* An AOF of one file (appendfilename in dir: Redis before 7.0, or an
 * older redis-like) moves into the directory as its base, as Redis 7.0
 * upgrades one.  The manifest naming it is written first, so a crash in
 * between is finished at the next start (the manifest names a base of
 * that name still in dir).  *am: the manifest read, or NULL; on a move a
 * new one.  false on an error (logged). */
static bool upgrade_single_file(server_t *srv, aof_manifest_t **am) {
    const char *fn = srv->cfg.appendfilename;
    sds old = server_path(srv, fn);
    sds moved = file_path(srv, fn);
    struct stat st;
    bool ok = true;
    bool outside = stat(old, &st) == 0 && S_ISREG(st.st_mode);
    if (!*am && outside) {
        aof_manifest_t *next = aof_manifest_create();
        aof_manifest_adopt_base(next, fn);
        sds dir = aof_dir(srv);
        ok = make_dir(srv) && aof_manifest_persist(next, dir, fn);
        if (!ok) log_msg(LL_WARNING, "Can't write the AOF manifest for the upgrade of %s: %s", old, strerror(errno));
        sds_free(dir);
        if (ok) *am = next;
        else aof_manifest_free(next);
    }
    if (ok && outside && *am && (*am)->base && !strcmp((*am)->base->name, fn) && stat(moved, &st) != 0) {
        ok = rename(old, moved) == 0;
        if (ok) {
            (void)rio_fsync_dir(moved);
            log_msg(LL_NOTICE, "Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).", fn,
                    srv->cfg.appenddirname);
        } else {
            log_msg(LL_WARNING, "Can't move the AOF file %s into %s: %s", old, moved, strerror(errno));
        }
    }
    sds_free(old);
    sds_free(moved);
    return ok;
}

/* Read the manifest into aof->am (at start-up with AOF on, upgrading a
 * single-file AOF first); an empty one when there is none.  false when it
 * is unreadable or invalid. */
static bool manifest_read(server_t *srv, aof_t *aof, bool upgrade) {
    sds dir = aof_dir(srv);
    sds err = NULL;
    aof_manifest_t *am = NULL;
    int rc = aof_manifest_load(dir, srv->cfg.appendfilename, &am, &err);
    sds_free(dir);
    if (rc < 0) {
        log_msg(LL_WARNING, "%s", err);
        sds_free(err);
        return false;
    }
    if (upgrade && !upgrade_single_file(srv, &am)) {
        aof_manifest_free(am);
        return false;
    }
    aof_manifest_free(aof->am);
    aof->am = am ? am : aof_manifest_create();
    return true;
}

/* One file of the manifest into the databases; 1 or -1. */
static int load_file(server_t *srv, const char *name, const char *kind, bool last) {
    sds path = file_path(srv, name);
    rdb_file_t f;
    long long start = util_ustime();
    if (rdb_file_open(path, &f) != 0) {
        log_msg(LL_WARNING, "Fatal error: can't open the AOF %s file %s named in the manifest: %s", kind, path,
                strerror(errno));
        sds_free(path);
        return -1;
    }
    int rc = aof_load_image(srv, f.buf, f.len, path, last);
    rdb_file_close(&f);
    if (rc > 0)
        log_msg(LL_NOTICE, "DB loaded from %s file %s: %.3f seconds", kind, name, (double)(util_ustime() - start) / 1e6);
    sds_free(path);
    return rc;
}

/* The bytes of the manifest's files (INFO loading_total_bytes, as Redis
 * counts them for an AOF load). */
static long long files_size(server_t *srv, const aof_manifest_t *am) {
    long long total = 0;
    for (int i = -1; i < am->nincr; i++) {
        const aof_file_t *af = i < 0 ? am->base : am->incr[i];
        if (!af) continue;
        sds path = file_path(srv, af->name);
        struct stat st;
        if (stat(path, &st) == 0) total += (long long)st.st_size;
        sds_free(path);
    }
    return total;
}

int aof_load(server_t *srv, aof_t *aof) {
    /* A single-file AOF is upgraded only when AOF is on (start-up), as in
     * Redis: DEBUG LOADAOF with AOF off leaves it where it is. */
    if (!manifest_read(srv, aof, srv->cfg.appendonly)) return -1;
    aof_manifest_t *am = aof->am;
    if (!am->base && !am->nincr) return 0;
    if (loading_active(srv)) srv->load.total = files_size(srv, am);
    if (am->base && load_file(srv, am->base->name, "base", am->nincr == 0) < 0) return -1;
    for (int i = 0; i < am->nincr; i++)
        if (load_file(srv, am->incr[i]->name, "incr", i == am->nincr - 1) < 0) return -1;
    measure(srv, aof);
    struct stat st; /* DEBUG LOADAOF: the file written to may have been cut */
    if (aof->fd >= 0 && fstat(aof->fd, &st) == 0) aof->incr_size = aof->fsynced_size = (long long)st.st_size;
    return 1;
}

bool aof_open(server_t *srv, aof_t *aof) {
    if (!make_dir(srv)) return false;
    if (!aof->am && !manifest_read(srv, aof, true)) return false;
    aof_manifest_t *next = aof_manifest_dup(aof->am);
    const char *fn = srv->cfg.appendfilename;
    if (!next->base && !next->nincr) {
        const char *base = aof_manifest_new_base(next, fn, srv->cfg.aof_use_rdb_preamble);
        if (!create_base_now(srv, base)) {
            aof_manifest_free(next);
            return false;
        }
        log_msg(LL_NOTICE, "Creating AOF base file %s on server start", base);
    }
    bool fresh = next->nincr == 0;
    const char *incr = aof_manifest_last_incr(next, fn);
    sds path = file_path(srv, incr);
    int fd = open_append(path, false);
    if (fd < 0) {
        log_msg(LL_WARNING, "Can't open the append-only file %s: %s", path, strerror(errno));
        sds_free(path);
        aof_manifest_free(next);
        return false;
    }
    sds_free(path);
    log_msg(LL_NOTICE, "%s AOF incr file %s on server start", fresh ? "Creating" : "Opening", incr);
    if (!manifest_commit(srv, aof, next)) {
        close(fd);
        return false;
    }
    struct stat st;
    write_to(aof, fd, fstat(fd, &st) == 0 ? (long long)st.st_size : 0);
    aof->on = true;
    measure(srv, aof);
    remove_history(srv, aof);
    return true;
}

void aof_close(aof_t *aof) {
    if (aof->fd < 0) return;
    fsync_wait_idle(aof);
    if (fdatasync(aof->fd) != 0) log_msg(LL_WARNING, "Error syncing the AOF file before closing it: %s", strerror(errno));
    close(aof->fd);
    aof->fd = -1;
    aof->on = false;
}

/* --------------------------------------------------------------- feeding */

void aof_append(server_t *srv, int dbid, const char *cmd, size_t len) {
    aof_t *aof = srv->aof;
    if (aof->fd < 0) return;
    if (srv->cfg.aof_timestamp_enabled) {
        long long now = util_mstime() / 1000;
        if (now != aof->last_ts) {
            aof->buf = sds_catprintf(aof->buf, "#TS:%lld\r\n", now);
            aof->last_ts = now;
        }
    }
    if (dbid != aof->last_db) {
        char n[16];
        const char *av[2] = {"SELECT", n};
        size_t lens[2] = {6, (size_t)util_ll2str(n, sizeof(n), dbid)};
        aof->buf = resp_cat_command(aof->buf, 2, av, lens);
        aof->last_db = dbid;
    }
    aof->buf = sds_catlen(aof->buf, cmd, len);
}

/* --------------------------------------------------------------- writing */

/* write() all of len bytes; returns how many reached the file (len on
 * success) and leaves errno set when that is fewer. */
static size_t write_counted(int fd, const char *p, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = ENOSPC; /* no progress: treat as a full disk */
            break;
        }
        done += (size_t)n;
    }
    return done;
}

/* A failed or short write: the file must still end on a whole command.
 * Cut it back to where this write began; if even that fails, keep the
 * part that made it (drop it from buf) so it is not written twice. */
static void write_failed(server_t *srv, aof_t *aof, size_t written, int e) {
    if (written > 0) {
        if (ftruncate(aof->fd, aof->incr_size) == 0) {
            written = 0;
        } else {
            log_msg(LL_WARNING, "Could not remove a short write from the end of the AOF file: %s", strerror(errno));
            aof->incr_size += (long long)written;
            aof->current_size += (long long)written;
            sds_range(aof->buf, (ssize_t)written, -1);
        }
    }
    if (!aof->write_failed)
        log_msg(LL_WARNING, "Error writing to the AOF file: %s (%zu bytes written of the batch)", strerror(e), written);
    aof->write_failed = true;
    aof->write_errno = e;
    if (srv->cfg.appendfsync == APPENDFSYNC_ALWAYS) {
        log_msg(LL_WARNING, "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
        exit(1);
    }
}

/* no-appendfsync-on-rewrite: while a child writes a snapshot or a base,
 * the AOF is written but not synced, so its fsync does not queue behind
 * the child's disk traffic (what the kernel has not written back is at risk meanwhile, as in Redis). */
static bool fsync_held(const server_t *srv) { return srv->cfg.no_appendfsync_on_rewrite && child_active(srv); }

void aof_resynced(aof_t *aof) {
    aof->resync_hold = true;
    aof->resync_forked = false;
    aof->rewrite_scheduled = true; /* the file must describe the new data */
}

long long aof_fsynced_tag(const aof_t *aof) {
    /* nothing is durable before the first base, or the base after a full
     * sync (Redis: 0 too) */
    if (aof->enabling || (aof->on && aof->resync_hold)) return 0;
    if (!aof->on) return -1;
    return atomic_load(&((aof_t *)aof)->fsynced_tag); /* a load does not modify */
}

/* Nothing written is waiting for an fsync (and none is queued): what the
 * stream fed since is durable too, so WAITAOF need not wait for a write
 * that never comes (Redis moves its fsynced offset the same way). */
static void fsynced_all(const server_t *srv, aof_t *aof) {
    if (sds_len(aof->buf) == 0 && aof->fsynced_size == aof->incr_size && atomic_load(&aof->fsync_errno) == 0 &&
        !aof->write_failed && (!aof->bio || bio_pending(aof->bio, BIO_AOF_FSYNC) == 0)) {
        aof->written_tag = repl_offset(srv);
        atomic_store(&aof->fsynced_tag, aof->written_tag);
    }
}

void aof_flush(server_t *srv, aof_t *aof) {
    if (aof->fd >= 0 && sds_len(aof->buf) == 0 && srv->cfg.appendfsync == APPENDFSYNC_ALWAYS) fsynced_all(srv, aof);
    if (aof->fd < 0 || sds_len(aof->buf) == 0) return;
    size_t len = sds_len(aof->buf);
    size_t written = write_counted(aof->fd, aof->buf, len);
    if (written != len) {
        write_failed(srv, aof, written, errno);
        return;
    }
    aof->incr_size += (long long)len;
    aof->current_size += (long long)len;
    aof->written_tag = repl_offset(srv); /* the buffer holds the stream up to here */
    sds_clear(aof->buf);
    if (aof->write_failed) {
        log_msg(LL_NOTICE, "AOF write error looks solved, Redis can write again.");
        aof->write_failed = false;
    }
    if (srv->cfg.appendfsync == APPENDFSYNC_ALWAYS && !fsync_held(srv)) {
        if (fdatasync(aof->fd) != 0) {
            log_msg(LL_WARNING, "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...",
                    strerror(errno));
            exit(1);
        }
        aof->fsynced_size = aof->incr_size;
        aof->last_fsync_ms = srv->mstime;
        atomic_store(&aof->fsynced_tag, aof->written_tag);
    }
}

/* appendonly set to no: a rewrite in progress is stopped, the file
 * closed; the files stay as they are. */
static void aof_stop(server_t *srv, aof_t *aof) {
    if (child_active_type(srv) == CHILD_AOF) {
        log_msg(LL_NOTICE, "Killing running AOF rewrite child: %d", (int)child_pid(srv));
        child_kill(srv); /* rewrite_done drops the temp files */
    }
    aof_flush(srv, aof);
    aof_close(aof);
    aof->enabling = false;
    log_msg(LL_NOTICE, "Background append only file rewriting stopped: AOF turned off");
}

/* Automatic rewrites (and turning AOF on) wait after repeated failures. */
static bool rewrite_allowed(const aof_t *aof, long long now) { return now >= aof->next_auto_rewrite_ms; }

/* appendonly changed (CONFIG SET, at once, as in Redis) or still to be
 * acted on (the cron: a child was busy, or the first rewrite failed):
 * turning AOF on is a rewrite whose writes meanwhile go to the temp incr
 * file.  false when that rewrite could not start. */
static bool follow_appendonly(server_t *srv, aof_t *aof, long long now) {
    if (srv->cfg.appendonly && !aof->on && !aof->enabling && !child_active(srv) && rewrite_allowed(aof, now)) {
        const char *err;
        aof->enabling = true;
        if (!aof_rewrite_start(srv, aof, &err)) {
            aof->enabling = false;
            return false;
        }
    } else if (!srv->cfg.appendonly && (aof->on || aof->enabling)) {
        aof_stop(srv, aof);
    }
    return true;
}

const char *aof_appendonly_changed(server_t *srv, aof_t *aof) {
    bool turning_on = srv->cfg.appendonly && !aof->on && !aof->enabling;
    if (turning_on && child_active(srv) && child_active_type(srv) != CHILD_AOF)
        log_msg(LL_WARNING, "AOF was enabled but there is already another background operation. An AOF background "
                            "was scheduled to start when possible.");
    /* Inside EXEC the first rewrite waits for the cron: its fork would
     * take half the transaction into the base file. */
    if (turning_on && srv->in_exec) {
        log_msg(LL_WARNING, "AOF was enabled during a transaction. An AOF background was scheduled to start when "
                            "possible.");
        return NULL;
    }
    return follow_appendonly(srv, aof, util_mstime()) ? NULL : "Unable to turn on AOF. Check server logs.";
}

bool aof_writing_first_base(const server_t *srv, const aof_t *aof) {
    return aof->enabling && child_active_type(srv) == CHILD_AOF;
}

void aof_cron(server_t *srv, aof_t *aof) {
    long long now = util_mstime();
    follow_appendonly(srv, aof, now);
    aof_flush(srv, aof);
    /* everysec: once a second when the file grew, and again after a failed
     * fsync (writes are refused meanwhile, so only a retry can clear it). */
    if (aof->fd >= 0 && srv->cfg.appendfsync == APPENDFSYNC_EVERYSEC && now - aof->last_fsync_ms >= 1000 &&
        !fsync_held(srv) &&
        (aof->fsynced_size != aof->incr_size || atomic_load(&aof->fsync_errno) != 0)) {
        fsync_request(aof);
        aof->fsynced_size = aof->incr_size;
        aof->last_fsync_ms = now;
    } else if (aof->fd >= 0 && aof->on && srv->cfg.appendfsync == APPENDFSYNC_EVERYSEC && !fsync_held(srv)) {
        fsynced_all(srv, aof);
    }
    if (child_active(srv)) return;
    long long pct = srv->cfg.auto_aof_rewrite_percentage;
    long long base = aof->base_size ? aof->base_size : 1;
    bool grown = aof->on && pct > 0 && aof->current_size > srv->cfg.auto_aof_rewrite_min_size &&
                 (aof->current_size - aof->base_size) * 100 / base >= pct && rewrite_allowed(aof, now);
    if (aof->rewrite_scheduled || grown) {
        const char *err;
        if (grown) log_msg(LL_NOTICE, "Starting automatic rewriting of AOF on %lld%% growth",
                           (aof->current_size - aof->base_size) * 100 / base);
        aof->rewrite_scheduled = false;
        aof_rewrite_start(srv, aof, &err);
    }
}

void aof_shutdown(server_t *srv, aof_t *aof) {
    if (!aof->on) return;
    aof_flush(srv, aof);
    aof_close(aof);
}

/* --------------------------------------------------------------- rewrite */

static int rewrite_body(server_t *srv, void *arg);
static void rewrite_done(server_t *srv, const child_exit_t *ex, void *arg);

static sds temp_incr_path(const server_t *srv) {
    sds name = aof_manifest_temp_incr_name(srv->cfg.appendfilename);
    sds path = file_path(srv, name);
    sds_free(name);
    return path;
}

/* Before the fork, writes move to a file of their own: a new incr file,
 * named in the manifest before anything is written to it (AOF on), or the
 * temp incr file (AOF being turned on).  With AOF off a rewrite only makes
 * a new base, as in Redis 7.0. */
static bool open_rewrite_incr(server_t *srv, aof_t *aof) {
    if (!make_dir(srv)) return false;
    /* Files an earlier run left are superseded, not reused: read their
     * manifest so the new files' numbers follow theirs. */
    if (!aof->am && !manifest_read(srv, aof, false)) aof->am = aof_manifest_create();
    if (!aof->on && !aof->enabling) return true;
    if (aof->enabling) {
        sds path = temp_incr_path(srv);
        int fd = open_append(path, true);
        if (fd < 0) log_msg(LL_WARNING, "Can't open the temp AOF incr file %s: %s", path, strerror(errno));
        sds_free(path);
        if (fd < 0) return false;
        write_to(aof, fd, 0);
        return true;
    }
    aof_manifest_t *next = aof_manifest_dup(aof->am);
    const char *incr = aof_manifest_new_incr(next, srv->cfg.appendfilename);
    sds path = file_path(srv, incr);
    int fd = open_append(path, true);
    bool ok = fd >= 0;
    if (!ok) {
        log_msg(LL_WARNING, "Can't open the new AOF incr file %s: %s", path, strerror(errno));
        aof_manifest_free(next);
    } else if ((ok = manifest_commit(srv, aof, next))) {
        log_msg(LL_NOTICE, "Creating AOF incr file %s on background rewrite", incr); /* now aof->am's */
    } else {
        close(fd);
        unlink(path);
    }
    sds_free(path);
    if (!ok) return false;
    in_background(aof, close_job, (void *)(intptr_t)aof->fd);
    write_to(aof, fd, 0);
    return true;
}

/* Turning AOF on failed: the temp incr file goes. */
static void drop_temp_incr(server_t *srv, aof_t *aof) {
    if (aof->fd >= 0) {
        fsync_wait_idle(aof);
        close(aof->fd);
        aof->fd = -1;
    }
    sds_clear(aof->buf);
    sds path = temp_incr_path(srv);
    unlink(path);
    sds_free(path);
}

/* A failed rewrite: counted, and after several in a row the automatic ones
 * wait, a minute doubling up to an hour. */
static void rewrite_failed(aof_t *aof) {
    aof->last_rewrite_ok = false;
    aof->rewrite_failures++;
    if (aof->rewrite_failures < REWRITE_FAILURES_BEFORE_DELAY) return;
    long long delay = REWRITE_DELAY_MIN_MS;
    for (long long i = REWRITE_FAILURES_BEFORE_DELAY; i < aof->rewrite_failures && delay < REWRITE_DELAY_MAX_MS; i++)
        delay *= 2;
    if (delay > REWRITE_DELAY_MAX_MS) delay = REWRITE_DELAY_MAX_MS;
    aof->next_auto_rewrite_ms = util_mstime() + delay;
    log_msg(LL_WARNING, "Background AOF rewrite has failed %lld times in a row: the next automatic one waits %lld minutes",
            aof->rewrite_failures, delay / 60000);
}

bool aof_rewrite_start(server_t *srv, aof_t *aof, const char **err) {
    if (child_active(srv)) {
        *err = "a child process is already running";
        return false;
    }
    aof_flush(srv, aof);
    if (!open_rewrite_incr(srv, aof)) {
        *err = "can't open a new AOF incr file";
        rewrite_failed(aof);
        return false;
    }
    aof->rewrite_rdb = srv->cfg.aof_use_rdb_preamble;
    child_job_t job = {.type = CHILD_AOF, .what = "AOF rewrite", .title = "redis-aof-rewrite", .body = rewrite_body, .body_arg = aof, .done = rewrite_done, .done_arg = aof};
    if (!child_start(srv, &job, err)) {
        log_msg(LL_WARNING, "Can't rewrite append only file in background: fork: %s", *err);
        if (aof->enabling) drop_temp_incr(srv, aof);
        rewrite_failed(aof);
        return false;
    }
    aof->rewrite_start_ms = util_mstime();
    aof->fork_tag = repl_offset(srv); /* the base holds the stream up to here */
    if (aof->resync_hold) aof->resync_forked = true;
    log_msg(LL_NOTICE, "Background append only file rewriting started by pid %d", (int)child_pid(srv));
    return true;
}

/* In the child (child.c): the dataset into the temp file. */
static int rewrite_body(server_t *srv, void *arg) {
    aof_t *aof = arg;
    sds tmp = rewrite_tmp_name(srv, getpid());
    int rc = write_base(srv, tmp, aof->rewrite_rdb);
    if (rc == 0) log_msg(LL_NOTICE, "Successfully created the temporary AOF base file %s", tmp);
    sds_free(tmp);
    return rc == 0 ? 0 : 1;
}

/* The child's file becomes the base (and, when AOF is being turned on, the
 * temp incr file the first incr file); what it supersedes becomes history
 * and is removed.  false (logged) when a rename or the manifest failed:
 * the manifest on disk then still names the files before. */
static bool install_base(server_t *srv, aof_t *aof, const char *tmp) {
    const char *fn = srv->cfg.appendfilename;
    aof_manifest_t *next = aof_manifest_dup(aof->am);
    const char *base = aof_manifest_new_base(next, fn, aof->rewrite_rdb);
    sds base_path = file_path(srv, base);
    sds incr_path = NULL;
    bool ok = rename(tmp, base_path) == 0;
    if (!ok)
        log_msg(LL_WARNING, "Error trying to rename the temporary AOF base file %s into %s: %s", tmp, base_path,
                strerror(errno));
    else log_msg(LL_NOTICE, "Successfully renamed the temporary AOF base file %s into %s", tmp, base);
    if (ok && aof->enabling) {
        sds temp = temp_incr_path(srv);
        const char *incr = aof_manifest_new_incr(next, fn);
        incr_path = file_path(srv, incr);
        ok = rename(temp, incr_path) == 0;
        if (!ok)
            log_msg(LL_WARNING, "Error trying to rename the temporary AOF incr file %s into %s: %s", temp, incr_path,
                    strerror(errno));
        else log_msg(LL_NOTICE, "Successfully renamed the temporary AOF incr file %s into %s", temp, incr);
        sds_free(temp);
    }
    aof_manifest_retire_incrs(next, aof_is_on(aof));
    if (ok) {
        ok = manifest_commit(srv, aof, next);
    } else {
        aof_manifest_free(next);
    }
    if (!ok) {
        unlink(base_path);
        if (incr_path) unlink(incr_path);
    }
    sds_free(base_path);
    sds_free(incr_path);
    if (!ok) return false;
    if (aof->enabling) aof->on = true;
    if (aof->enabling || (aof->resync_hold && aof->resync_forked)) {
        aof->resync_hold = false;
        atomic_store(&aof->fsynced_tag, aof->fork_tag); /* the base was fsynced */
    }
    measure(srv, aof);
    remove_history(srv, aof);
    return true;
}

/* In the parent, once child.c has reaped (or killed) the rewrite child. */
static void rewrite_done(server_t *srv, const child_exit_t *ex, void *arg) {
    aof_t *aof = arg;
    sds tmp = rewrite_tmp_name(srv, ex->pid);
    aof->last_rewrite_time_sec = (util_mstime() - aof->rewrite_start_ms) / 1000;
    aof->last_cow_size = ex->cow_bytes;
    aof_flush(srv, aof); /* the incr file gets everything up to now */
    if (ex->ok && install_base(srv, aof, tmp)) {
        log_msg(LL_NOTICE, "Background AOF rewrite finished successfully");
        aof->last_rewrite_ok = true;
        aof->rewrites++;
        aof->rewrite_failures = 0;
        aof->next_auto_rewrite_ms = 0;
    } else {
        log_msg(LL_WARNING, "Background AOF rewrite %s", ex->killed ? "terminated by a kill" : "failed");
        unlink(tmp);
        if (aof->enabling) drop_temp_incr(srv, aof);
        if (ex->killed) aof->last_rewrite_ok = false;
        else rewrite_failed(aof);
    }
    aof->enabling = false;
    sds_free(tmp);
}

/* ------------------------------------------------------------------ INFO */

sds aof_info(server_t *srv, aof_t *aof, sds s) {
    bool rewriting = child_active_type(srv) == CHILD_AOF;
    s = sds_catprintf(s,
                      "aof_enabled:%d\r\n"
                      "aof_rewrite_in_progress:%d\r\n"
                      "aof_rewrite_scheduled:%d\r\n"
                      "aof_last_rewrite_time_sec:%lld\r\n"
                      "aof_current_rewrite_time_sec:%lld\r\n"
                      "aof_last_bgrewrite_status:%s\r\n"
                      "aof_rewrites:%lld\r\n"
                      "aof_rewrites_consecutive_failures:%lld\r\n"
                      "aof_last_write_status:%s\r\n"
                      "aof_last_cow_size:%zu\r\n",
                      aof_is_on(aof) ? 1 : 0, rewriting ? 1 : 0, aof->rewrite_scheduled ? 1 : 0, aof->last_rewrite_time_sec,
                      rewriting ? (util_mstime() - aof->rewrite_start_ms) / 1000 : -1, aof->last_rewrite_ok ? "ok" : "err",
                      aof->rewrites, aof->rewrite_failures, aof->write_failed || atomic_load(&aof->fsync_errno) ? "err" : "ok", aof->last_cow_size);
    if (aof_is_on(aof)) {
        s = sds_catprintf(s,
                          "aof_current_size:%lld\r\n"
                          "aof_base_size:%lld\r\n"
                          "aof_pending_rewrite:0\r\n"
                          "aof_buffer_length:%zu\r\n"
                          "aof_pending_bio_fsync:%d\r\n"
                          "aof_delayed_fsync:0\r\n",
                          aof->current_size, aof->base_size, sds_len(aof->buf),
                          aof->bio ? (int)bio_pending(aof->bio, BIO_AOF_FSYNC) : 0);
    }
    return s;
}
