/* repl_sync_file.c: the RDB files of full syncs.
 *
 * A replica's full sync goes through a file, as Redis does with
 * `repl-diskless-load disabled` (the default).
 * repl_replica.c hands each chunk of the master's RDB to
 * repl_sync_file_write(), which appends it to temp-<unixtime>.<pid>.rdb in
 * the working directory (starting write-back every 8 MB so the final fsync
 * does not stall the loop on a large file).  At the end
 * repl_sync_file_install() cuts the file to the RDB's length (an
 * EOF-marked stream wrote its mark too), fsyncs it, stops an RDB child of
 * ours (it would rename an older snapshot over this one) and renames it
 * over dbfilename; repl_sync_file_load() then loads that file.  So a
 * replica restarted after a sync finds the master's data and replication
 * history on disk and resynchronises partially.  rdb-del-sync-files
 * removes the file after the load when no persistence is configured.  An
 * aborted transfer removes its temp file; dbfilename is only ever replaced
 * by a complete transfer.  Write errors (a full disk) abort the attempt
 * with a log line; the cron tries again.
 *
 * On a master, a disk-based full sync (repl-diskless-sync no) has the RDB
 * child write dbfilename; with rdb-del-sync-files and no persistence
 * configured, that file is removed once no replica is waiting for it or
 * reading it, unless something else (a SAVE) has replaced it since. */
#include "repl_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "loading.h"
#include "log.h"
#include "persist.h"
#include "rdb.h"
#include "rio.h"
#include "util.h"

#define WRITEBACK_EVERY (8LL * 1024 * 1024)

bool repl_sync_file_open(server_t *srv) {
    repl_link_t *l = &R(srv)->link;
    char name[64];
    for (int attempt = 0; attempt < 5; attempt++) {
        snprintf(name, sizeof(name), "temp-%lld.%d.rdb", util_mstime() / 1000 + attempt, (int)getpid());
        sds path = server_path(srv, name);
        int fd = open(path, O_CREAT | O_WRONLY | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            l->sync_fd = fd;
            l->sync_path = path;
            l->sync_written = l->sync_flushed = 0;
            return true;
        }
        sds_free(path);
        if (errno != EEXIST) break;
    }
    log_msg(LL_WARNING, "Opening the temp file needed for MASTER <-> REPLICA synchronization: %s", strerror(errno));
    return false;
}

void repl_sync_file_discard(repl_link_t *l) {
    if (l->sync_fd >= 0) close(l->sync_fd);
    l->sync_fd = -1;
    if (l->sync_path) unlink(l->sync_path);
    sds_free(l->sync_path);
    l->sync_path = NULL;
}

bool repl_sync_file_write(server_t *srv, const char *p, size_t len) {
    repl_link_t *l = &R(srv)->link;
    if (rio_write_all(l->sync_fd, p, len) != 0) {
        log_msg(LL_WARNING,
                "Write error or short write writing to the DB dump file needed for MASTER <-> REPLICA "
                "synchronization: %s",
                strerror(errno));
        return false;
    }
    l->sync_written += (long long)len;
    if (l->sync_written - l->sync_flushed >= WRITEBACK_EVERY) {
        /* Start write-back of what is there; not a barrier, the final
         * fsync is.  A failure here only means the fsync does it all. */
        (void)sync_file_range(l->sync_fd, l->sync_flushed, l->sync_written - l->sync_flushed,
                              SYNC_FILE_RANGE_WRITE);
        l->sync_flushed = l->sync_written;
    }
    return true;
}

bool repl_sync_file_install(server_t *srv, long long rdb_len) {
    repl_link_t *l = &R(srv)->link;
    const char *step = "truncate";
    if (ftruncate(l->sync_fd, rdb_len) != 0) goto fail;
    step = "fsync";
    if (fsync(l->sync_fd) != 0) goto fail;
    close(l->sync_fd);
    l->sync_fd = -1;
    /* An RDB child of ours would rename its older snapshot over the
     * master's data when it ends (Redis stops it too). */
    if (child_active_type(srv) == CHILD_RDB) {
        log_msg(LL_NOTICE, "Killing the RDB child: the replica is replacing %s with its master's data",
                srv->cfg.dbfilename);
        child_kill(srv);
    }
    sds final = server_path(srv, srv->cfg.dbfilename);
    if (rename(l->sync_path, final) != 0) {
        log_msg(LL_WARNING, "Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %s",
                final, strerror(errno));
        sds_free(final);
        repl_sync_file_discard(l);
        return false;
    }
    if (rio_fsync_dir(final) != 0)
        log_msg(LL_WARNING, "Failed to fsync the directory of %s: %s", final, strerror(errno));
    sds_free(final);
    sds_free(l->sync_path);
    l->sync_path = NULL;
    return true;
fail:
    log_msg(LL_WARNING, "Failed trying to %s the temp DB of the MASTER <-> REPLICA synchronization: %s", step,
            strerror(errno));
    repl_sync_file_discard(l);
    return false;
}

bool repl_sync_file_load(server_t *srv, long long *keys, loading_keepalive_fn *keepalive) {
    sds path = server_path(srv, srv->cfg.dbfilename);
    rdb_file_t f;
    rdb_load_result_t res = {0};
    int rc = -1;
    if (rdb_file_open(path, &f) != 0) {
        snprintf(res.err, sizeof(res.err), "%s: %s", path, strerror(errno));
    } else {
        srv->loading = true;
        loading_begin(srv, false, (long long)f.len, keepalive); /* the clients get -LOADING meanwhile (loading.h) */
        /* now_ms 0: keys already expired stay; the master's DEL removes them. */
        rc = rdb_load_file(srv, &f, RDB_LOAD_VERIFY, 0, &res);
        loading_end(srv);
        srv->loading = false;
        rdb_file_close(&f);
    }
    if (rc != 0) {
        log_msg(LL_WARNING, "Failed trying to load the MASTER synchronization DB from disk: %s", res.err);
    } else if (srv->cfg.rdb_del_sync_files && persist_all_disabled(srv)) {
        log_msg(LL_NOTICE, "Removing the RDB file of the full sync (rdb-del-sync-files, no persistence configured)");
        if (unlink(path) != 0) log_msg(LL_WARNING, "Failed to remove %s: %s", path, strerror(errno));
    }
    sds_free(path);
    *keys = res.keys;
    return rc == 0;
}

/* ------------------------------------------------------------ master side */

static bool file_id(server_t *srv, struct stat *st) {
    sds path = server_path(srv, srv->cfg.dbfilename);
    bool ok = stat(path, st) == 0;
    sds_free(path);
    return ok;
}

void repl_sync_file_written(server_t *srv) {
    repl_t *r = R(srv);
    struct stat st;
    r->sync_file_known = file_id(srv, &st);
    r->sync_file_dev = st.st_dev;
    r->sync_file_ino = st.st_ino;
}

void repl_sync_file_cron(server_t *srv) {
    repl_t *r = R(srv);
    if (!r->sync_file_known || !srv->cfg.rdb_del_sync_files || !persist_all_disabled(srv) || child_active(srv))
        return;
    for (repl_replica_t *rep = r->replicas; rep; rep = rep->next)
        if (rep->state == REPLICA_WAIT_BGSAVE_START || rep->state == REPLICA_WAIT_BGSAVE_END ||
            rep->state == REPLICA_SEND_BULK)
            return;
    r->sync_file_known = false;
    struct stat st;
    /* A SAVE since then renamed another file into place: the user's. */
    if (!file_id(srv, &st) || st.st_dev != r->sync_file_dev || st.st_ino != r->sync_file_ino) return;
    sds path = server_path(srv, srv->cfg.dbfilename);
    log_msg(LL_NOTICE, "Removing the RDB file used to sync replicas (rdb-del-sync-files, no persistence configured)");
    if (unlink(path) != 0) log_msg(LL_WARNING, "Failed to remove %s: %s", path, strerror(errno));
    sds_free(path);
}
