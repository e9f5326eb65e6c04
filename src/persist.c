/* persist.c: durability as the server sees it (see persist.h).
 *
 * BGSAVE takes the one forked child (child.c), whose body writes the RDB
 * file (temp name, fsync, rename, fsync of the directory); when the cron
 * has reaped it, bgsave_done records the outcome.  Save points ("save 900 1
 * ...") are checked in the cron; after a failed BGSAVE the next automatic
 * attempt waits PERSIST_RETRY_DELAY seconds, and while the last one failed
 * write commands get Redis's MISCONF error (stop-writes-on-bgsave-error).
 * Start-up loads the AOF when appendonly is yes, else the RDB file; a file
 * that cannot be loaded stops start-up (never a partial silent load). */
#include "persist.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aof.h"
#include "child.h"
#include "cpu_affinity.h"
#include "durability_hooks.h"
#include "keyspace.h"
#include "loading.h"
#include "log.h"
#include "propagate.h"
#include "repl.h"
#include "rdb.h"
#include "reply.h"
#include "supervise.h"
#include "util.h"

#define PERSIST_RETRY_DELAY 5 /* seconds between automatic BGSAVE retries after an error */

struct persist {
    char misconf[160];              /* persist_write_refusal's AOF error line */
    bool last_bgsave_ok;            /* rdb_last_bgsave_status */
    long long last_bgsave_try;      /* unix s of the last attempt (retry delay after errors) */
    long long last_bgsave_time_sec; /* duration of the last BGSAVE, -1 if none */
    long long rdb_saves;
    long long dirty_at_fork;          /* srv->dirty when the BGSAVE child started */
    size_t rdb_last_cow_size;         /* bytes */
    bool bgsave_scheduled;            /* BGSAVE SCHEDULE while the AOF child runs */
    bool shutdown_done;               /* the final save/flush ran (SHUTDOWN or exit) */
    long long last_disk_error_log_ms; /* replica-ignore-disk-write-errors yes: its log line */
    persist_rdb_done_fn *rdb_done;    /* replicas waiting for a BGSAVE (repl_master.c) */
};

static persist_t *P(const server_t *srv) { return srv->persist; }

void persist_init(server_t *srv) {
    persist_t *p = zcalloc(sizeof(*p));
    p->last_bgsave_ok = true;
    p->last_bgsave_time_sec = -1;
    srv->persist = p;
    cpu_set_t cpus;
    srv->aof = aof_create(cpu_affinity_of(srv->cfg.bio_cpulist, &cpus));
}

void persist_free(server_t *srv) {
    persist_t *p = P(srv);
    if (!p) return;
    aof_free(srv->aof);
    srv->aof = NULL;
    zfree(p);
    srv->persist = NULL;
}

/* ------------------------------------------------------------- writing */

/* Write the snapshot to tmp, fsync, rename over the real file, fsync the
 * directory.  Returns 0, or -1 with the reason logged. */
static int rdb_save_to(server_t *srv, const char *tmp, const char *final) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_msg(LL_WARNING, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                srv->cfg.dir, strerror(errno));
        return -1;
    }
    rio_t *r = zmalloc(sizeof(*r));
    rio_init(r, fd, srv->cfg.rdbchecksum);
    if (srv->cfg.rdb_save_incremental_fsync) rio_set_autosync(r, RIO_INCREMENTAL_FSYNC_BYTES);
    rdb_save_opts_t opts = {srv->cfg.rdbcompression, srv->cfg.rdbchecksum, false, srv->cfg.rdb_key_save_delay};
    int rc = rdb_write_dataset(srv, r, &opts);
    int err = r->err;
    zfree(r);
    if (rc == 0 && fsync(fd) != 0) {
        rc = -1;
        err = errno;
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc != 0) {
        log_msg(LL_WARNING, "Write error saving DB on disk: %s", strerror(err));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, final) != 0) {
        log_msg(LL_WARNING, "Error moving temp DB file %s on the final destination %s: %s", tmp, final,
                strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rio_fsync_dir(final) != 0) {
        log_msg(LL_WARNING, "Failed to fsync the directory of %s: %s", final, strerror(errno));
        return -1;
    }
    return 0;
}

static sds temp_rdb_name(const server_t *srv, pid_t pid) {
    char name[64];
    snprintf(name, sizeof(name), "temp-%d.rdb", (int)pid);
    return server_path(srv, name);
}

int persist_save(server_t *srv) {
    persist_t *p = P(srv);
    sds tmp = temp_rdb_name(srv, getpid()), final = server_path(srv, srv->cfg.dbfilename);
    long long start = util_mstime();
    int rc = rdb_save_to(srv, tmp, final);
    sds_free(tmp);
    sds_free(final);
    p->last_bgsave_try = start / 1000;
    if (rc != 0) {
        p->last_bgsave_ok = false;
        return -1;
    }
    log_msg(LL_NOTICE, "DB saved on disk");
    srv->dirty = 0;
    srv->lastsave = util_mstime() / 1000;
    p->last_bgsave_ok = true;
    p->rdb_saves++;
    return 0;
}

/* ---------------------------------------------------------------- BGSAVE */

/* In the child: write the snapshot; the exit code. */
static int bgsave_body(server_t *srv, void *arg) {
    (void)arg;
    sds tmp = temp_rdb_name(srv, getpid()), final = server_path(srv, srv->cfg.dbfilename);
    int rc = rdb_save_to(srv, tmp, final) == 0 ? 0 : 1;
    sds_free(tmp);
    sds_free(final);
    if (rc == 0) log_msg(LL_NOTICE, "DB saved on disk"); /* by the child, as in Redis */
    return rc;
}

/* In the parent, once child.c has reaped (or, at shutdown, killed) it. */
static void bgsave_done(server_t *srv, const child_exit_t *ex, void *arg) {
    (void)arg;
    persist_t *p = P(srv);
    sds tmp = temp_rdb_name(srv, ex->pid);
    if (ex->killed) { /* shutdown: not a disk error, and nobody waits */
        unlink(tmp);
        sds_free(tmp);
        return;
    }
    long long now = util_mstime();
    p->rdb_last_cow_size = ex->cow_bytes;
    p->last_bgsave_time_sec = (now - ex->start_ms) / 1000;
    if (ex->ok) {
        log_msg(LL_NOTICE, "Background saving terminated with success");
        srv->dirty -= p->dirty_at_fork;
        if (srv->dirty < 0) srv->dirty = 0;
        srv->lastsave = now / 1000;
        p->last_bgsave_ok = true;
        p->rdb_saves++;
    } else {
        if (ex->signo) log_msg(LL_WARNING, "Background saving terminated by signal %d", ex->signo);
        else log_msg(LL_WARNING, "Background saving error");
        unlink(tmp);
        /* A child killed on purpose (SIGUSR1) is not a disk error. */
        if (ex->signo != SIGUSR1) p->last_bgsave_ok = false;
    }
    sds_free(tmp);
    if (p->rdb_done) p->rdb_done(srv, ex->ok); /* replicas waiting for this RDB */
}

void persist_on_rdb_done(server_t *srv, persist_rdb_done_fn *fn) { P(srv)->rdb_done = fn; }

bool persist_bgsave(server_t *srv, const char **err) {
    persist_t *p = P(srv);
    p->last_bgsave_try = util_mstime() / 1000;
    child_job_t job = {.type = CHILD_RDB, .what = "RDB", .title = "redis-rdb-bgsave", .body = bgsave_body, .done = bgsave_done};
    if (!child_start(srv, &job, err)) {
        p->last_bgsave_ok = false;
        log_msg(LL_WARNING, "Can't save in background: fork: %s", *err);
        return false;
    }
    p->dirty_at_fork = srv->dirty;
    log_msg(LL_NOTICE, "Background saving started by pid %d", (int)child_pid(srv));
    return true;
}

/* ------------------------------------------------------------ save points */

/* Walk "s1 c1 s2 c2 ..." and return true when one is due. */
static bool save_point_due(server_t *srv, long long now, long long *secs_out, long long *changes_out) {
    const char *s = srv->cfg.save;
    if (!s) return false;
    while (*s) {
        char *end;
        long long secs = strtoll(s, &end, 10);
        if (end == s) return false;
        s = end;
        long long changes = strtoll(s, &end, 10);
        if (end == s) return false;
        s = end;
        while (*s == ' ') s++;
        if (srv->dirty >= changes && now - srv->lastsave > secs) {
            *secs_out = secs;
            *changes_out = changes;
            return true;
        }
    }
    return false;
}

static bool has_save_points(const server_t *srv) {
    const char *s = srv->cfg.save;
    while (s && *s == ' ') s++;
    return s && *s;
}

bool persist_all_disabled(const server_t *srv) { return !has_save_points(srv) && !aof_is_on(srv->aof); }

void persist_cron(server_t *srv) {
    persist_t *p = P(srv);
    child_reap(srv); /* runs bgsave_done, aof.c's or replication's callback */
    long long now = util_mstime() / 1000;
    if (!child_active(srv) && p->bgsave_scheduled) {
        const char *err;
        p->bgsave_scheduled = false;
        persist_bgsave(srv, &err);
    }
    long long secs, changes;
    if (!child_active(srv) && save_point_due(srv, now, &secs, &changes) &&
        (p->last_bgsave_ok || now - p->last_bgsave_try > PERSIST_RETRY_DELAY)) {
        const char *err;
        log_msg(LL_NOTICE, "%lld changes in %lld seconds. Saving...", changes, secs);
        persist_bgsave(srv, &err);
    }
    aof_cron(srv, srv->aof);
}

void persist_before_sleep(server_t *srv) { aof_flush(srv, srv->aof); }

/* ------------------------------------------------------- start-up, shutdown */

/* repl (may be NULL): the file's replication aux fields, if it has them. */
static bool load_rdb(server_t *srv, rdb_repl_info_t *repl, unsigned flags) {
    sds path = server_path(srv, srv->cfg.dbfilename);
    long long start = util_ustime();
    rdb_file_t f;
    if (rdb_file_open(path, &f) != 0) {
        bool missing = errno == ENOENT;
        if (!missing) log_msg(LL_WARNING, "Fatal error loading the DB: %s (%s). Exiting.", strerror(errno), path);
        sds_free(path);
        return missing;
    }
    rdb_load_result_t res;
    if (loading_active(srv)) srv->load.total = (long long)f.len;
    int rc = rdb_load_file(srv, &f, RDB_LOAD_VERIFY | flags, util_mstime(), &res);
    rdb_file_close(&f);
    if (rc != 0 && srv->shutdown_asap) { /* a SHUTDOWN while it loaded (loading.h) */
        log_msg(LL_WARNING, "Loading the DB stopped: the server is shutting down.");
        sds_free(path);
        return false;
    }
    if (rc != 0) {
        log_msg(LL_WARNING, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
        log_msg(LL_WARNING, "Internal error in RDB reading offset 0, function at rdb.c:0 -> %s (file %s)", res.err,
                path);
        sds_free(path);
        return false;
    }
    log_msg(LL_NOTICE, "DB loaded from disk: %.3f seconds (%lld keys, %lld expired keys skipped)",
            (double)(util_ustime() - start) / 1e6, res.keys, res.expired);
    if (repl) *repl = res.repl;
    sds_free(path);
    return true;
}

bool persist_reload_rdb(server_t *srv, bool merge) {
    sds path = server_path(srv, srv->cfg.dbfilename);
    bool exists = access(path, R_OK) == 0;
    sds_free(path);
    if (!exists) return false;
    srv->loading = true;
    bool ok = load_rdb(srv, NULL, merge ? RDB_LOAD_MERGE : 0);
    srv->loading = false;
    return ok;
}

bool persist_reload_aof(server_t *srv) {
    aof_flush(srv, srv->aof);
    /* the function libraries too, as Redis empties them: the files load
     * them again (else their FUNCTION LOAD fails as a duplicate) */
    for (int i = 0; i < srv->dbnum; i++) db_empty(&srv->dbs[i]);
    srv->durability_hooks->flush_functions(srv);
    srv->loading = true;
    int rc = aof_load(srv, srv->aof);
    srv->loading = false;
    srv->dirty = 0; /* what was loaded is not a change to log or replicate */
    return rc >= 0;
}

bool persist_load_at_startup(server_t *srv) {
    srv->loading = true;
    loading_begin(srv, false, 0, NULL); /* the clients get -LOADING meanwhile (loading.h) */
    bool ok;
    if (srv->cfg.appendonly) {
        long long start = util_ustime();
        int rc = aof_load(srv, srv->aof);
        ok = rc >= 0;
        if (rc > 0) {
            long long keys = 0;
            for (int i = 0; i < srv->dbnum; i++) keys += (long long)db_size(&srv->dbs[i]);
            log_msg(LL_NOTICE, "DB loaded from append only file: %.3f seconds (%lld keys)",
                    (double)(util_ustime() - start) / 1e6, keys);
        }
        if (ok && !aof_open(srv, srv->aof)) ok = false;
    } else {
        rdb_repl_info_t repl = {0};
        ok = load_rdb(srv, &repl, 0);
        /* repl_info.c: continue the replication history the file records. */
        if (ok && repl.valid) repl_restore_from_rdb(srv, &repl);
    }
    loading_end(srv);
    srv->loading = false;
    srv->dirty = 0;
    return ok;
}

bool persist_shutdown(server_t *srv, bool nosave, bool force_save, bool force) {
    persist_t *p = P(srv);
    if (!p || p->shutdown_done) return true;
    if (aof_writing_first_base(srv, srv->aof)) {
        /* Killing that child would leave no AOF at all, and the next
         * start (appendonly yes) would come up empty. */
        if (!force) {
            log_msg(LL_WARNING, "Writing initial AOF, can't exit.");
            supervise_tell(srv->cfg.supervised, "STATUS=Writing initial AOF, can't exit.\n");
            return false;
        }
        log_msg(LL_WARNING, "Writing initial AOF. Exit anyway.");
    }
    child_kill(srv);
    aof_shutdown(srv, srv->aof);
    p->shutdown_done = true;
    if (nosave || (!force_save && !has_save_points(srv))) return true;
    log_msg(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
    supervise_tell(srv->cfg.supervised, "STATUS=Saving the final RDB snapshot\n");
    if (persist_save(srv) != 0) {
        if (force) { /* exit all the same, as Redis does with FORCE */
            log_msg(LL_WARNING, "Error trying to save the DB. Exit anyway.");
            return false;
        }
        log_msg(LL_WARNING, "Error trying to save the DB, can't exit.");
        supervise_tell(srv->cfg.supervised, "STATUS=Error trying to save the DB, can't exit.\n");
        p->shutdown_done = false;
        if (srv->cfg.appendonly) aof_open(srv, srv->aof); /* keep logging while we stay up */
        return false;
    }
    return true;
}

/* ----------------------------------------------------- command-side hooks */

#define MISCONF_RDB                                                                                              \
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "          \
    "Commands that may modify the data set are disabled, because this instance is configured to report errors "  \
    "during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs " \
    "for details about the RDB error."

/* Why writes are refused now, or 0: 1 the last RDB save failed, 2 an
 * AOF write failed. */
static int write_refusal(server_t *srv) {
    persist_t *p = P(srv);
    if (!p || srv->loading) return 0;
    if (srv->cfg.stop_writes_on_bgsave_error && has_save_points(srv) && !p->last_bgsave_ok) return 1;
    if (aof_write_failed(srv->aof)) return 2;
    return 0;
}

const char *persist_write_refusal(server_t *srv) {
    switch (write_refusal(srv)) {
        case 1: return MISCONF_RDB;
        case 2: {
            persist_t *p = P(srv);
            snprintf(p->misconf, sizeof(p->misconf), "MISCONF Errors writing to the AOF file: %s",
                     strerror(aof_last_errno(srv->aof)));
            return p->misconf;
        }
    }
    return NULL;
}

void persist_check_master_write(server_t *srv) {
    persist_t *p = P(srv);
    if (!write_refusal(srv)) return;
    if (!srv->cfg.replica_ignore_disk_write_errors) {
        log_msg(LL_WARNING, "PANIC: Replica was unable to write command to disk "
                            "(replica-ignore-disk-write-errors is no): stopping");
        abort();
    }
    if (srv->mstime - p->last_disk_error_log_ms >= 10000) {
        p->last_disk_error_log_ms = srv->mstime;
        log_msg(LL_WARNING, "Replica is applying a command even though it is unable to write to disk.");
    }
}

void persist_after_command(client_t *c, long long dirty_before) {
    server_t *srv = c->srv;
    bool prevented = c->flags & CLIENT_PREVENT_PROP;
    bool repl_only = c->flags & CLIENT_PROPAGATE_REPL, forced = c->flags & CLIENT_FORCE_PROP;
    c->flags &= ~(CLIENT_PREVENT_PROP | CLIENT_PROPAGATE_REPL | CLIENT_FORCE_PROP);
    if (repl_only) {
        propagate_to_replicas(srv, c->db->id, c->argv, c->argc); /* PUBLISH */
        return;
    }
    if (prevented || (!forced && srv->dirty == dirty_before)) return;
    propagate_command(srv, c->db->id, c->argv, c->argc); /* AOF and replicas */
}

/* A command's or a script's effects (dispatch.c, blocking.c, script.c):
 * every write it runs is fed as usual, and they are logged as one unit
 * when it ends (propagate.c). */
void persist_effects_begin(server_t *srv) { propagate_unit_begin(srv); }
void persist_effects_targets(server_t *srv, bool aof, bool replicas) {
    propagate_unit_targets(srv, (aof ? PROPAGATE_AOF : 0) | (replicas ? PROPAGATE_REPL : 0));
}
void persist_effects_end(server_t *srv) { propagate_unit_end(srv); }
void persist_effects_end_as(server_t *srv, bool may_wrap) { propagate_unit_end_as(srv, may_wrap); }

void persist_propagate_as(client_t *c, const char *name, robj **args, int nargs) {
    c->flags |= CLIENT_PREVENT_PROP;
    if (!propagate_wanted(c->srv)) return;
    robj *stack[8];
    robj **argv = nargs < 8 ? stack : zmalloc(sizeof(robj *) * (size_t)(nargs + 1));
    argv[0] = obj_create_string(name, strlen(name));
    memcpy(argv + 1, args, sizeof(robj *) * (size_t)nargs);
    propagate_command(c->srv, c->db->id, argv, nargs + 1);
    obj_decref(argv[0]);
    if (argv != stack) zfree(argv);
}

void persist_propagate_pop(client_t *c, const char *name, robj *key, long count) {
    robj *args[2] = {key, count >= 0 ? obj_create_from_ll(count) : NULL};
    persist_propagate_as(c, name, args, count >= 0 ? 2 : 1);
    if (args[1]) obj_decref(args[1]);
}

void persist_force_propagate(client_t *c) { c->flags |= CLIENT_FORCE_PROP; }

void persist_after_flushall(server_t *srv) {
    if (child_active_type(srv) == CHILD_RDB) child_kill(srv);
    if (has_save_points(srv)) persist_save(srv);
}

bool persist_propagation_on(const client_t *c) { return propagate_wanted(c->srv); }

void persist_propagate(client_t *c, robj **argv, int argc) {
    c->flags |= CLIENT_PREVENT_PROP;
    if (argc) propagate_command(c->srv, c->db->id, argv, argc);
}

/* --------------------------------------------------------------- commands */

static void cmd_save(client_t *c) {
    if (child_active_type(c->srv) == CHILD_RDB) {
        reply_error(c, "Background save already in progress");
        return;
    }
    if (persist_save(c->srv) == 0) reply_ok(c);
    else reply_error(c, "ERR");
}

static void cmd_bgsave(client_t *c) {
    persist_t *p = P(c->srv);
    bool schedule = false;
    if (c->argc == 2 && !strcasecmp(c->argv[1]->ptr, "schedule")) {
        schedule = true;
    } else if (c->argc > 1) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    if (child_active_type(c->srv) == CHILD_RDB) {
        reply_error(c, "Background save already in progress");
        return;
    }
    /* A fork inside EXEC would save half the transaction: it waits for the
     * cron, as when another child runs (Redis 7.0). */
    if (child_active(c->srv) || c->srv->in_exec) {
        if (!schedule && !c->srv->in_exec) {
            reply_error(c, "Another child process is active (AOF?): can't BGSAVE right now. "
                           "Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.");
            return;
        }
        p->bgsave_scheduled = true;
        reply_simple(c, "Background saving scheduled");
        return;
    }
    const char *err;
    if (!persist_bgsave(c->srv, &err)) {
        reply_error(c, "Background save failed: %s", err);
        return;
    }
    reply_simple(c, "Background saving started");
}

static void cmd_bgrewriteaof(client_t *c) {
    aof_t *aof = c->srv->aof;
    if (child_active_type(c->srv) == CHILD_AOF) {
        reply_error(c, "Background append only file rewriting already in progress");
        return;
    }
    if (child_active(c->srv) || c->srv->in_exec) {
        aof_schedule_rewrite(aof);
        reply_simple(c, "Background append only file rewriting scheduled");
        return;
    }
    const char *err;
    if (!aof_rewrite_start(c->srv, aof, &err)) {
        reply_error(c, "Can't execute an AOF background rewriting. Please check the server logs for more information.");
        return;
    }
    reply_simple(c, "Background append only file rewriting started");
}

command_t persist_commands[] = {
    {"save", cmd_save, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI, 0, 0, 0, "server", "Synchronously save the dataset to disk", "1.0.0", NULL},
    {"bgsave", cmd_bgsave, -1, CMD_ADMIN | CMD_NOSCRIPT, 0, 0, 0, "server", "Asynchronously save the dataset to disk", "1.0.0", NULL},
    {"bgrewriteaof", cmd_bgrewriteaof, 1, CMD_ADMIN | CMD_NOSCRIPT, 0, 0, 0, "server", "Asynchronously rewrite the append-only file", "1.0.0", NULL},
    {NULL},
};

/* ------------------------------------------------------------------- INFO */

sds persist_info(server_t *srv, sds s) {
    persist_t *p = P(srv);
    long long now = util_mstime();
    bool rdb_child = child_active_type(srv) == CHILD_RDB;
    s = sds_catprintf(s,
                      "loading:%d\r\n"
                      "async_loading:%d\r\n"
                      "current_cow_peak:0\r\n"
                      "current_cow_size:0\r\n"
                      "current_cow_size_age:0\r\n"
                      "current_fork_perc:0.00\r\n"
                      "current_save_keys_processed:0\r\n"
                      "current_save_keys_total:0\r\n"
                      "rdb_changes_since_last_save:%lld\r\n"
                      "rdb_bgsave_in_progress:%d\r\n"
                      "rdb_last_save_time:%lld\r\n"
                      "rdb_last_bgsave_status:%s\r\n"
                      "rdb_last_bgsave_time_sec:%lld\r\n"
                      "rdb_current_bgsave_time_sec:%lld\r\n"
                      "rdb_saves:%lld\r\n"
                      "rdb_last_cow_size:%zu\r\n"
                      "rdb_last_load_keys_expired:%lld\r\n"
                      "rdb_last_load_keys_loaded:%lld\r\n",
                      srv->loading || loading_active(srv) ? 1 : 0, loading_async(srv) ? 1 : 0, srv->dirty, rdb_child ? 1 : 0, srv->lastsave, p->last_bgsave_ok ? "ok" : "err",
                      p->last_bgsave_time_sec, rdb_child ? (now - child_start_ms(srv)) / 1000 : -1, p->rdb_saves,
                      p->rdb_last_cow_size, srv->rdb_last_load_keys_expired, srv->rdb_last_load_keys_loaded);
    s = aof_info(srv, srv->aof, s);
    s = sds_cat(s, "module_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n");
    return loading_info(srv, s); /* loading.c: a load the clients wait for */
}
