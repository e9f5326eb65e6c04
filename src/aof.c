/* aof.c: the append-only file (see aof.h).
 *
 * Feeding: each write command that changed the dataset is appended to
 * `buf` in RESP, preceded by SELECT when the database differs from the last
 * one logged.  Commands whose effect depends on the clock or on chance are
 * logged by their effect: relative expiries become PEXPIREAT / SET ... PXAT
 * with the absolute time the key got, SPOP becomes the key's new contents.
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
 * Rewrite: the child writes the dataset as commands to a temp file; the
 * parent keeps every command fed meanwhile in `rewrite_buf`, appends it to
 * the temp file when the child succeeds, fsyncs, renames it over the AOF
 * and continues appending to it.  A file starting with "REDIS" has an RDB
 * preamble (Redis's aof-use-rdb-preamble) which is loaded first. */
#include "aof.h"
#include "t_hash.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bio.h"
#include "child.h"
#include "commands.h"
#include "durability_hooks.h"
#include "conn.h"
#include "intset.h"
#include "keyspace.h"
#include "listpack.h"
#include "log.h"
#include "quicklist.h"
#include "rdb.h"
#include "util.h"
#include "zset.h"

#define AOF_MIN_ARG_BYTES 6 /* "$0\r\n\r\n": the shortest argument in a file */
#define AOF_BATCH 64        /* elements per RPUSH/SADD/ZADD/HSET in a rewrite */

struct aof {
    bool on;       /* file open, commands logged */
    bool enabling; /* appendonly set at run time: waiting for the first rewrite */
    int fd;
    sds buf;                /* fed, not yet written */
    sds rewrite_buf;        /* fed while a rewrite child runs, or NULL */
    int last_db;            /* db of the last SELECT logged, -1 = unknown */
    long long current_size; /* bytes in the file */
    long long base_size;    /* size after the last rewrite/load (auto rewrite) */
    bool write_failed;
    int write_errno;
    bool rewrite_scheduled;
    bool last_rewrite_ok;
    long long rewrites;
    long long rewrite_start_ms, last_rewrite_time_sec;
    size_t last_cow_size;
    long long last_fsync_ms;
    long long fsynced_size; /* current_size at the last fsync request */
    /* everysec: fsync jobs on our own bio thread; the job records its
     * outcome here and the main thread reads it (MISCONF, INFO). */
    bio_t *bio;             /* NULL if the thread could not start: fsync inline */
    atomic_int fsync_errno; /* 0 = the last background fsync succeeded */
};

/* ------------------------------------------------------------ fsync jobs */

static void fsync_job(void *arg_aof, void *arg_fd, void *unused) {
    (void)unused;
    aof_t *aof = arg_aof;
    int fd = (int)(intptr_t)arg_fd;
    int e = fdatasync(fd) == 0 ? 0 : errno;
    int before = atomic_exchange(&aof->fsync_errno, e);
    /* Logged from here on a change only: the log is line-atomic. */
    if (e && !before) log_msg(LL_WARNING, "Error syncing the AOF file to disk: %s", strerror(e));
    else if (!e && before) log_msg(LL_NOTICE, "AOF fsync error looks solved, Redis can write again.");
}

/* Wait until no background fsync is queued or running (before the fd the
 * job uses is closed or replaced). */
static void fsync_wait_idle(aof_t *aof) {
    if (aof->bio) bio_drain(aof->bio);
}

/* Queue a background fsync unless one is still queued or running (a slow
 * disk then simply gets fewer fsyncs; the loop never waits). */
static void fsync_request(aof_t *aof) {
    if (!aof->bio) {
        fsync_job(aof, (void *)(intptr_t)aof->fd, NULL);
        return;
    }
    if (bio_pending(aof->bio, BIO_AOF_FSYNC) == 0)
        bio_submit(aof->bio, BIO_AOF_FSYNC, fsync_job, aof, (void *)(intptr_t)aof->fd, NULL);
}

aof_t *aof_create(void) {
    aof_t *aof = zcalloc(sizeof(*aof));
    aof->fd = -1;
    aof->buf = sds_empty();
    aof->last_db = -1;
    aof->last_rewrite_ok = true;
    aof->last_rewrite_time_sec = -1;
    atomic_init(&aof->fsync_errno, 0);
    aof->bio = bio_create();
    return aof;
}

void aof_free(aof_t *aof) {
    if (!aof) return;
    bio_destroy(aof->bio); /* runs a queued fsync, then joins */
    if (aof->fd >= 0) close(aof->fd);
    sds_free(aof->buf);
    sds_free(aof->rewrite_buf);
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

static int open_append(const char *path) {
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

bool aof_open(server_t *srv, aof_t *aof) {
    sds path = server_path(srv, srv->cfg.appendfilename);
    int fd = open_append(path);
    if (fd < 0) {
        log_msg(LL_WARNING, "Can't open the append-only file %s: %s", path, strerror(errno));
        sds_free(path);
        return false;
    }
    struct stat st;
    aof->current_size = fstat(fd, &st) == 0 ? st.st_size : 0;
    aof->base_size = aof->current_size;
    aof->fsynced_size = aof->current_size;
    aof->fd = fd;
    aof->on = true;
    aof->last_db = -1;
    sds_free(path);
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

/* ------------------------------------------------------------- encoding */

/* "<prefix><n>\r\n" without printf: this runs for every argument of every
 * logged write (printf was 15% of the server's CPU with -P 16). */
static sds cat_header(sds buf, char prefix, long long n) {
    char hdr[32];
    hdr[0] = prefix;
    size_t h = 1 + (size_t)util_ll2str(hdr + 1, sizeof(hdr) - 3, n);
    hdr[h++] = '\r';
    hdr[h++] = '\n';
    return sds_catlen(buf, hdr, h);
}

sds aof_cat_command(sds buf, int argc, const char **argv, const size_t *lens) {
    buf = cat_header(buf, '*', argc);
    for (int i = 0; i < argc; i++) {
        buf = cat_header(buf, '$', (long long)lens[i]);
        buf = sds_catlen(buf, argv[i], lens[i]);
        buf = sds_catlen(buf, "\r\n", 2);
    }
    return buf;
}

/* Collects the arguments of one command (up to a batch of elements). */
typedef struct cmdbuf {
    const char *argv[2 + 2 * AOF_BATCH + 2];
    size_t lens[2 + 2 * AOF_BATCH + 2];
    char nums[AOF_BATCH][32]; /* formatted scores / integers */
    int argc, nnums, fixed;   /* fixed: the command name and key */
} cmdbuf_t;

static void cb_start(cmdbuf_t *cb, const char *name, sds key) {
    cb->argv[0] = name;
    cb->lens[0] = strlen(name);
    cb->argv[1] = key;
    cb->lens[1] = sds_len(key);
    cb->argc = cb->fixed = 2;
    cb->nnums = 0;
}

static void cb_arg(cmdbuf_t *cb, const char *s, size_t len) {
    cb->argv[cb->argc] = s;
    cb->lens[cb->argc++] = len;
}

static sds cb_flush(sds buf, cmdbuf_t *cb) {
    if (cb->argc > cb->fixed) buf = aof_cat_command(buf, cb->argc, cb->argv, cb->lens);
    cb->argc = cb->fixed;
    cb->nnums = 0;
    return buf;
}

static const char *cb_num(cmdbuf_t *cb, const char *s, size_t len, size_t *outlen) {
    char *slot = cb->nums[cb->nnums++];
    memcpy(slot, s, len);
    *outlen = len;
    return slot;
}

/* Elements of a listpack, in batches (strings point into the listpack, so
 * each batch is emitted before moving on). */
static sds emit_lp(sds buf, cmdbuf_t *cb, unsigned char *lp, int per) {
    int n = 0;
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p)) {
        char tmp[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, tmp);
        if (s == (const unsigned char *)tmp) s = (const unsigned char *)cb_num(cb, tmp, len, &len);
        cb_arg(cb, (const char *)s, len);
        if (++n % (AOF_BATCH * per) == 0 && n % per == 0) buf = cb_flush(buf, cb);
    }
    return cb_flush(buf, cb);
}

/* A hashtable hash, through t_hash.h: pairs appended, flushed in batches. */
struct hash_emit {
    sds buf;
    cmdbuf_t *cb;
    int n;
};

static void emit_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen) {
    struct hash_emit *e = arg;
    cb_arg(e->cb, f, flen);
    cb_arg(e->cb, v, vlen);
    if (++e->n % AOF_BATCH == 0) e->buf = cb_flush(e->buf, e->cb);
}

static sds emit_hash_ht(sds buf, cmdbuf_t *cb, robj *h) {
    struct hash_emit e = {buf, cb, 0};
    hash_type_ht_foreach(h, emit_pair, &e);
    return cb_flush(e.buf, cb);
}

/* A hashtable set: its entries are the member strings (t_set.c). */
static sds emit_set_ht(sds buf, cmdbuf_t *cb, ht *t) {
    ht_iter it;
    void *k;
    int n = 0;
    ht_iter_init(&it, t, false);
    while (ht_next(&it, &k)) {
        cb_arg(cb, k, sds_len(k));
        if (++n % AOF_BATCH == 0) buf = cb_flush(buf, cb);
    }
    ht_iter_release(&it);
    return cb_flush(buf, cb);
}

static sds emit_intset(sds buf, cmdbuf_t *cb, const intset *is) {
    for (uint32_t i = 0; i < intset_len(is); i++) {
        int64_t v;
        char tmp[32];
        intset_get(is, i, &v);
        int n = util_ll2str(tmp, sizeof(tmp), v);
        size_t len;
        const char *s = cb_num(cb, tmp, (size_t)n, &len);
        cb_arg(cb, s, len);
        if ((i + 1) % AOF_BATCH == 0) buf = cb_flush(buf, cb);
    }
    return cb_flush(buf, cb);
}

static sds emit_zset(sds buf, cmdbuf_t *cb, robj *o) {
    zset_cursor_t cur;
    int n = 0;
    /* Members of a listpack zset point into the cursor's buffer for integer
     * members, so each pair is copied into the number slots when needed. */
    sds *keep = zmalloc(sizeof(sds) * AOF_BATCH);
    int nkeep = 0;
    for (zset_cursor_at_rank(&cur, o, 0, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t mlen, slen;
        const char *m = zset_cursor_member(&cur, &mlen);
        char tmp[64];
        int sl = util_d2str(tmp, sizeof(tmp), zset_cursor_score(&cur));
        const char *sc = cb_num(cb, tmp, (size_t)sl, &slen);
        keep[nkeep] = sds_newlen(m, mlen);
        cb_arg(cb, sc, slen);
        cb_arg(cb, keep[nkeep], mlen);
        nkeep++;
        if (++n % AOF_BATCH == 0) {
            buf = cb_flush(buf, cb);
            for (int i = 0; i < nkeep; i++) sds_free(keep[i]);
            nkeep = 0;
        }
    }
    buf = cb_flush(buf, cb);
    for (int i = 0; i < nkeep; i++) sds_free(keep[i]);
    zfree(keep);
    return buf;
}

sds aof_emit_key(sds buf, sds key, robj *val, long long expire_ms) {
    cmdbuf_t *cb = zmalloc(sizeof(*cb));
    switch (val->type) {
        case OBJ_STRING: {
            char tmp[LP_INTBUF_SIZE];
            size_t len;
            const char *s = obj_string_view(val, tmp, sizeof(tmp), &len);
            cb_start(cb, "SET", key);
            cb_arg(cb, s, len);
            buf = cb_flush(buf, cb);
            break;
        }
        case OBJ_LIST:
            cb_start(cb, "RPUSH", key);
            if (val->encoding == OBJ_ENCODING_LISTPACK) {
                buf = emit_lp(buf, cb, val->ptr, 1);
            } else {
                for (ql_node_t *n = ((quicklist *)val->ptr)->head; n; n = n->next) buf = emit_lp(buf, cb, n->lp, 1);
            }
            break;
        case OBJ_SET:
            cb_start(cb, "SADD", key);
            if (val->encoding == OBJ_ENCODING_INTSET) buf = emit_intset(buf, cb, val->ptr);
            else if (val->encoding == OBJ_ENCODING_LISTPACK) buf = emit_lp(buf, cb, val->ptr, 1);
            else buf = emit_set_ht(buf, cb, val->ptr);
            break;
        case OBJ_ZSET:
            cb_start(cb, "ZADD", key);
            buf = emit_zset(buf, cb, val);
            break;
        case OBJ_HASH:
            cb_start(cb, "HSET", key);
            if (val->encoding == OBJ_ENCODING_LISTPACK) buf = emit_lp(buf, cb, val->ptr, 2);
            else buf = emit_hash_ht(buf, cb, val);
            break;
        case OBJ_STREAM:
            buf = stream_aof_emit(buf, key, val); /* stream_aof.c */
            break;
    }
    if (expire_ms >= 0) {
        char tmp[32];
        int n = util_ll2str(tmp, sizeof(tmp), expire_ms);
        cb_start(cb, "PEXPIREAT", key);
        cb_arg(cb, tmp, (size_t)n);
        buf = cb_flush(buf, cb);
    }
    zfree(cb);
    return buf;
}

/* --------------------------------------------------------------- feeding */

static bool is_cmd(robj *a, const char *name) { return obj_is_sds_encoded(a) && !strcasecmp(a->ptr, name); }

static sds cat_argv(sds buf, robj **argv, int argc, int skip_from, int skip_n, const char *extra, long long extra_v) {
    const char *av[argc + 2];
    size_t lens[argc + 2];
    char tmp[32];
    char(*ints)[LP_INTBUF_SIZE] = zmalloc((size_t)argc * LP_INTBUF_SIZE);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i >= skip_from && i < skip_from + skip_n) continue;
        /* Handlers may have re-encoded an argument as an integer. */
        av[n] = obj_string_view(argv[i], ints[i], LP_INTBUF_SIZE, &lens[n]);
        n++;
    }
    if (extra) {
        av[n] = extra;
        lens[n++] = strlen(extra);
        int l = util_ll2str(tmp, sizeof(tmp), extra_v);
        av[n] = tmp;
        lens[n++] = (size_t)l;
    }
    buf = aof_cat_command(buf, n, av, lens);
    zfree(ints);
    return buf;
}

static sds cat_simple(sds buf, const char *cmd, robj *key, const char *arg) {
    char kbuf[LP_INTBUF_SIZE];
    size_t klen;
    const char *k = obj_string_view(key, kbuf, sizeof(kbuf), &klen);
    const char *av[3] = {cmd, k, arg};
    size_t lens[3] = {strlen(cmd), klen, arg ? strlen(arg) : 0};
    return aof_cat_command(buf, arg ? 3 : 2, av, lens);
}

/* The key's state after the command, as DEL + rebuild commands. */
static sds cat_key_state(sds buf, db_t *db, robj *key) {
    buf = cat_simple(buf, "DEL", key, NULL);
    db_entry *de = db_find(db, key->ptr);
    robj view;
    if (de) buf = aof_emit_key(buf, key->ptr, db_entry_val(de, &view), db_entry_expire(de));
    return buf;
}

/* SET with EX/PX/EXAT/PXAT: drop the relative option, add PXAT. */
static sds cat_set(sds buf, db_t *db, robj **argv, int argc) {
    int skip = -1;
    for (int i = 3; i < argc - 1; i++) {
        if (!obj_is_sds_encoded(argv[i])) continue;
        const char *o = argv[i]->ptr;
        if (!strcasecmp(o, "ex") || !strcasecmp(o, "px") || !strcasecmp(o, "exat") || !strcasecmp(o, "pxat")) {
            skip = i;
            break;
        }
    }
    if (skip < 0) return cat_argv(buf, argv, argc, 0, 0, NULL, 0);
    long long when = db_get_expire(db, argv[1]);
    if (when < 0) return cat_argv(buf, argv, argc, skip, 2, NULL, 0);
    return cat_argv(buf, argv, argc, skip, 2, "PXAT", when);
}

static sds translate(sds buf, db_t *db, robj **argv, int argc) {
    robj *cmd = argv[0];
    if (argc >= 3 && (is_cmd(cmd, "expire") || is_cmd(cmd, "pexpire") || is_cmd(cmd, "expireat") ||
                      is_cmd(cmd, "pexpireat") || is_cmd(cmd, "getex"))) {
        long long when = db_get_expire(db, argv[1]);
        if (!db_find(db, argv[1]->ptr)) return cat_simple(buf, "DEL", argv[1], NULL);
        if (when < 0) return cat_simple(buf, "PERSIST", argv[1], NULL);
        char tmp[32];
        util_ll2str(tmp, sizeof(tmp), when);
        return cat_simple(buf, "PEXPIREAT", argv[1], tmp);
    }
    if (argc == 4 && (is_cmd(cmd, "setex") || is_cmd(cmd, "psetex"))) {
        robj *av[3] = {NULL, argv[1], argv[3]};
        robj set = {.type = OBJ_STRING, .ptr = NULL};
        sds name = sds_new("SET");
        set.ptr = name;
        av[0] = &set;
        long long when = db_get_expire(db, argv[1]);
        buf = cat_argv(buf, av, 3, 0, 0, when >= 0 ? "PXAT" : NULL, when);
        sds_free(name);
        return buf;
    }
    if (argc >= 4 && is_cmd(cmd, "set")) return cat_set(buf, db, argv, argc);
    if (argc >= 2 && is_cmd(cmd, "spop")) return cat_key_state(buf, db, argv[1]);
    /* RESTORE: a relative TTL must not restart when the log is replayed. */
    if (argc >= 4 && is_cmd(cmd, "restore")) return cat_key_state(buf, db, argv[1]);
    return cat_argv(buf, argv, argc, 0, 0, NULL, 0);
}

sds aof_translate(server_t *srv, sds buf, int dbid, robj **argv, int argc) {
    return translate(buf, &srv->dbs[dbid], argv, argc);
}

void aof_append(aof_t *aof, int dbid, const char *cmd, size_t len) {
    if (!aof->on && !aof->rewrite_buf) return;
    if (dbid != aof->last_db) {
        char n[16];
        const char *av[2] = {"SELECT", n};
        size_t lens[2] = {6, (size_t)util_ll2str(n, sizeof(n), dbid)};
        sds sel = aof_cat_command(sds_empty(), 2, av, lens);
        if (aof->on) aof->buf = sds_catsds(aof->buf, sel);
        if (aof->rewrite_buf) aof->rewrite_buf = sds_catsds(aof->rewrite_buf, sel);
        sds_free(sel);
        aof->last_db = dbid;
    }
    if (aof->on) aof->buf = sds_catlen(aof->buf, cmd, len);
    if (aof->rewrite_buf) aof->rewrite_buf = sds_catlen(aof->rewrite_buf, cmd, len);
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
        if (ftruncate(aof->fd, aof->current_size) == 0) {
            written = 0;
        } else {
            log_msg(LL_WARNING, "Could not remove a short write from the end of the AOF file: %s", strerror(errno));
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

void aof_flush(server_t *srv, aof_t *aof) {
    if (!aof->on || sds_len(aof->buf) == 0) return;
    size_t len = sds_len(aof->buf);
    size_t written = write_counted(aof->fd, aof->buf, len);
    if (written != len) {
        write_failed(srv, aof, written, errno);
        return;
    }
    aof->current_size += (long long)len;
    sds_clear(aof->buf);
    if (aof->write_failed) {
        log_msg(LL_NOTICE, "AOF write error looks solved, Redis can write again.");
        aof->write_failed = false;
    }
    if (srv->cfg.appendfsync == APPENDFSYNC_ALWAYS) {
        if (fdatasync(aof->fd) != 0) {
            log_msg(LL_WARNING, "Can't persist AOF for fsync error when the AOF fsync policy is 'always': %s. Exiting...",
                    strerror(errno));
            exit(1);
        }
        aof->fsynced_size = aof->current_size;
        aof->last_fsync_ms = srv->mstime;
    }
}

void aof_cron(server_t *srv, aof_t *aof) {
    long long now = util_mstime();
    if (srv->cfg.appendonly && !aof->on && !aof->enabling && !child_active(srv)) {
        const char *err;
        aof->enabling = true;
        if (!aof_rewrite_start(srv, aof, &err)) aof->enabling = false;
    } else if (!srv->cfg.appendonly && aof->on) {
        aof_flush(srv, aof);
        aof_close(aof);
        log_msg(LL_NOTICE, "Background append only file rewriting stopped: AOF turned off");
    }
    aof_flush(srv, aof);
    /* everysec: once a second when the file grew, and again after a failed
     * fsync (writes are refused meanwhile, so only a retry can clear it). */
    if (aof->on && srv->cfg.appendfsync == APPENDFSYNC_EVERYSEC && now - aof->last_fsync_ms >= 1000 &&
        (aof->fsynced_size != aof->current_size || atomic_load(&aof->fsync_errno) != 0)) {
        fsync_request(aof);
        aof->fsynced_size = aof->current_size;
        aof->last_fsync_ms = now;
    }
    if (child_active(srv)) return;
    long long pct = srv->cfg.auto_aof_rewrite_percentage;
    bool grown = aof->on && pct > 0 && aof->current_size > srv->cfg.auto_aof_rewrite_min_size &&
                 (aof->current_size - aof->base_size) * 100 / (aof->base_size ? aof->base_size : 1) >= pct;
    if (aof->rewrite_scheduled || grown) {
        const char *err;
        if (grown) log_msg(LL_NOTICE, "Starting automatic rewriting of AOF on %lld%% growth",
                           (aof->current_size - aof->base_size) * 100 / (aof->base_size ? aof->base_size : 1));
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

bool aof_rewrite_start(server_t *srv, aof_t *aof, const char **err) {
    aof_flush(srv, aof);
    child_job_t job = {.type = CHILD_AOF, .what = "AOF rewrite", .body = rewrite_body, .done = rewrite_done, .done_arg = aof};
    if (!child_start(srv, &job, err)) {
        log_msg(LL_WARNING, "Can't rewrite append only file in background: fork: %s", *err);
        aof->last_rewrite_ok = false;
        return false;
    }
    /* The rewritten file ends in some db; force a SELECT before the next
     * command in both the old file and the catch-up buffer. */
    aof->last_db = -1;
    sds_free(aof->rewrite_buf);
    aof->rewrite_buf = sds_empty();
    aof->rewrite_start_ms = util_mstime();
    log_msg(LL_NOTICE, "Background append only file rewriting started");
    return true;
}

/* Function libraries go first in a rewritten file, as FUNCTION LOAD. */
static void emit_function(void *arg, const char *code, size_t len) {
    sds *cmd = arg;
    const char *av[3] = {"FUNCTION", "LOAD", code};
    size_t lens[3] = {8, 4, len};
    *cmd = aof_cat_command(*cmd, 3, av, lens);
}

/* In the child: the dataset as commands into tmpfile; the exit code. */
static int rewrite_write(server_t *srv, const char *tmpfile) {
    int fd = open(tmpfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_msg(LL_WARNING, "Opening the temp file for AOF rewrite failed: %s", strerror(errno));
        return 1;
    }
    rio_t *r = zmalloc(sizeof(*r));
    rio_init(r, fd, false);
    sds cmd = sds_empty();
    srv->durability_hooks->foreach_function(srv, emit_function, &cmd); /* function.c */
    for (int i = 0; i < srv->dbnum && !rio_error(r); i++) {
        db_t *db = &srv->dbs[i];
        if (!db_size(db)) continue;
        char n[16];
        const char *av[2] = {"SELECT", n};
        size_t lens[2] = {6, (size_t)util_ll2str(n, sizeof(n), i)};
        cmd = aof_cat_command(cmd, 2, av, lens);
        ht_iter it;
        void *p;
        ht_iter_init(&it, db->keys, false);
        while (ht_next(&it, &p)) {
            db_entry *de = p;
            robj view;
            cmd = aof_emit_key(cmd, db_entry_key(de), db_entry_val(de, &view), db_entry_expire(de));
            if (sds_len(cmd) > 64 * 1024) {
                rio_write(r, cmd, sds_len(cmd));
                sds_clear(cmd);
            }
        }
        ht_iter_release(&it);
    }
    rio_write(r, cmd, sds_len(cmd));
    sds_free(cmd);
    int rc = rio_flush(r);
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
        return 1;
    }
    log_msg(LL_NOTICE, "Successfully created the temporary AOF base file %s", tmpfile);
    return 0;
}

static sds rewrite_tmp_name(server_t *srv, pid_t pid) {
    char name[64];
    snprintf(name, sizeof(name), "temp-rewriteaof-bg-%d.aof", (int)pid);
    return server_path(srv, name);
}

/* In the child (child.c): write the dataset to the temp file. */
static int rewrite_body(server_t *srv, void *arg) {
    (void)arg;
    sds tmp = rewrite_tmp_name(srv, getpid());
    int rc = rewrite_write(srv, tmp);
    sds_free(tmp);
    return rc;
}

/* Append the catch-up buffer to the child's file and switch to it. */
static bool rewrite_install(server_t *srv, aof_t *aof, const char *tmp) {
    int fd = open_append(tmp);
    if (fd < 0) return false;
    if (rio_write_all(fd, aof->rewrite_buf, sds_len(aof->rewrite_buf)) != 0 || fsync(fd) != 0) {
        close(fd);
        return false;
    }
    sds path = server_path(srv, srv->cfg.appendfilename);
    if (rename(tmp, path) != 0) {
        log_msg(LL_WARNING, "Error trying to rename the temporary AOF file %s into %s: %s", tmp, path,
                strerror(errno));
        sds_free(path);
        close(fd);
        return false;
    }
    (void)rio_fsync_dir(path); /* the rename itself happened; durability of it is best effort */
    sds_free(path);
    struct stat st;
    long long size = fstat(fd, &st) == 0 ? st.st_size : 0;
    if (aof->on || aof->enabling) {
        if (aof->fd >= 0) {
            fsync_wait_idle(aof);
            close(aof->fd);
        }
        aof->fd = fd;
        aof->on = true;
        aof->current_size = aof->base_size = aof->fsynced_size = size;
        aof->last_db = -1;
    } else {
        close(fd);
    }
    return true;
}

/* In the parent, once child.c has reaped (or, at shutdown, killed) the
 * rewrite child. */
static void rewrite_done(server_t *srv, const child_exit_t *ex, void *arg) {
    aof_t *aof = arg;
    sds tmp = rewrite_tmp_name(srv, ex->pid);
    aof->last_rewrite_time_sec = (util_mstime() - aof->rewrite_start_ms) / 1000;
    aof->last_cow_size = ex->cow_bytes;
    aof_flush(srv, aof); /* the old file gets everything up to now, too */
    if (ex->ok && rewrite_install(srv, aof, tmp)) {
        log_msg(LL_NOTICE, "Background AOF rewrite finished successfully");
        aof->last_rewrite_ok = true;
        aof->rewrites++;
    } else {
        log_msg(LL_WARNING, "Background AOF rewrite failed");
        unlink(tmp);
        aof->last_rewrite_ok = false;
    }
    aof->enabling = false;
    sds_free(aof->rewrite_buf);
    aof->rewrite_buf = NULL;
    sds_free(tmp);
}

/* --------------------------------------------------------------- loading */

void aof_cmd_free(aof_cmd_t *cmd) {
    zfree(cmd->off);
    zfree(cmd->len);
    memset(cmd, 0, sizeof(*cmd));
}

/* "<prefix><digits>\r\n" at *pos; TRUNCATED when the line is not complete. */
static int parse_line_num(const unsigned char *buf, size_t len, size_t *pos, char prefix, long long *v) {
    size_t p = *pos;
    if (p >= len) return AOF_PARSE_TRUNCATED;
    if (buf[p] != prefix) return AOF_PARSE_CORRUPT;
    const unsigned char *nl = memchr(buf + p, '\n', len - p);
    if (!nl) {
        /* Digits only so far: a cut-off line, else garbage. */
        for (size_t i = p + 1; i < len; i++)
            if ((buf[i] < '0' || buf[i] > '9') && buf[i] != '\r') return AOF_PARSE_CORRUPT;
        return AOF_PARSE_TRUNCATED;
    }
    size_t end = (size_t)(nl - buf);
    if (end < p + 2 || buf[end - 1] != '\r') return AOF_PARSE_CORRUPT;
    if (!util_str2ll((const char *)buf + p + 1, end - 1 - (p + 1), v) || *v < 0) return AOF_PARSE_CORRUPT;
    *pos = end + 1;
    return AOF_PARSE_OK;
}

int aof_parse_command(const unsigned char *buf, size_t len, size_t *pos, aof_cmd_t *cmd) {
    size_t p = *pos;
    long long argc;
    int rc = parse_line_num(buf, len, &p, '*', &argc);
    if (rc == AOF_PARSE_CORRUPT || (rc == AOF_PARSE_OK && argc < 1)) {
        return AOF_PARSE_CORRUPT;
    }
    if (rc != AOF_PARSE_OK) return rc;
    /* argc sizes two arrays: it must be an int and every argument needs at
     * least "$0\r\n\r\n" in the rest of the file, else the file ends (or
     * was cut) before the command does. */
    if (argc > INT_MAX) return AOF_PARSE_CORRUPT;
    if (!util_count_fits((uint64_t)argc, AOF_MIN_ARG_BYTES, len - p, INT_MAX)) return AOF_PARSE_TRUNCATED;
    if (argc > cmd->cap) {
        cmd->cap = (int)argc;
        cmd->off = zrealloc(cmd->off, sizeof(size_t) * (size_t)argc);
        cmd->len = zrealloc(cmd->len, sizeof(size_t) * (size_t)argc);
    }
    cmd->argc = (int)argc;
    for (long long i = 0; i < argc; i++) {
        long long blen;
        size_t at = p;
        rc = parse_line_num(buf, len, &p, '$', &blen);
        if (rc != AOF_PARSE_OK) {
            if (rc == AOF_PARSE_CORRUPT) *pos = at;
            return rc;
        }
        if ((unsigned long long)blen + 2 > len - p) return AOF_PARSE_TRUNCATED;
        if (buf[p + (size_t)blen] != '\r' || buf[p + (size_t)blen + 1] != '\n') {
            *pos = p + (size_t)blen;
            return AOF_PARSE_CORRUPT;
        }
        cmd->off[i] = p;
        cmd->len[i] = (size_t)blen;
        p += (size_t)blen + 2;
    }
    *pos = p;
    return AOF_PARSE_OK;
}

static client_t *fake_client(server_t *srv) {
    client_t *c = zcalloc(sizeof(*c));
    c->srv = srv;
    c->db = &srv->dbs[0];
    c->fd = -1;
    c->resp = 2;
    /* PENDING_WRITE keeps it off the write list: its replies are dropped. */
    c->flags = CLIENT_AUTHENTICATED | CLIENT_PENDING_WRITE | CLIENT_DENY_BLOCKING | CLIENT_AOF_LOADER;
    return c;
}

static void fake_client_drop_replies(client_t *c) {
    while (c->reply_head) {
        reply_block *b = c->reply_head;
        c->reply_head = b->next;
        zfree(b);
    }
    c->reply_tail = NULL;
    c->reply_bytes = 0;
    c->bufpos = 0;
}

/* Run one parsed command; false for an unknown command or one with the
 * wrong number of arguments (fatal: handlers index argv by their arity, so
 * a damaged file must not reach them; Redis would crash here). */
static bool replay(server_t *srv, client_t *c, const unsigned char *buf, aof_cmd_t *cmd, const char *path,
                   size_t at) {
    robj *argv_stack[16];
    robj **argv = cmd->argc <= 16 ? argv_stack : zmalloc(sizeof(robj *) * (size_t)cmd->argc);
    for (int i = 0; i < cmd->argc; i++) argv[i] = obj_create_string((const char *)buf + cmd->off[i], cmd->len[i]);
    command_t *cc = commands_lookup_argv(srv, argv, cmd->argc); /* subcommands too (XGROUP CREATE) */
    bool ok = cc && cc->proc;
    if (!ok) {
        log_msg(LL_WARNING, "Unknown command '%.64s' reading the append only file %s", (char *)argv[0]->ptr, path);
    } else if (!commands_arity_ok(cc, cmd->argc)) {
        log_msg(LL_WARNING, "Wrong number of arguments for '%s' reading the append only file %s at offset %zu",
                cc->fullname, path, at);
        ok = false;
    } else {
        c->argc = cmd->argc;
        c->argv = argv;
        c->cmd = cc;
        srv->mstime = util_mstime();
        /* Inside MULTI the commands wait for their EXEC, as they did when
         * they ran: a transaction the file does not finish never applies. */
        size_t views_mark = db_views_mark(db_views_of(srv)); /* db_views.h */
        if (!srv->durability_hooks->replay_queue(c, cc)) cc->proc(c);
        db_views_release(srv->views, views_mark);
        c->cmd = NULL;
        c->argv = NULL;
        c->argc = 0;
        fake_client_drop_replies(c);
    }
    for (int i = 0; i < cmd->argc; i++) obj_decref(argv[i]);
    if (argv != argv_stack) zfree(argv);
    return ok;
}

/* The file ends early (a partial last command, or a MULTI without its
 * EXEC): with aof-load-truncated the file is cut at `at`, the last offset
 * that ends a whole command outside a transaction; else loading fails.
 * 1 loaded, -1 fatal. */
static int load_cut(server_t *srv, const char *path, size_t at) {
    if (!srv->cfg.aof_load_truncated) {
        log_msg(LL_WARNING, "Unexpected end of file reading the append only file %s. You can: "
                            "1) Make a backup of your AOF file, then use ./redis-like-check-aof --fix <filename>. "
                            "2) Alternatively you can set the 'aof-load-truncated' configuration option to yes "
                            "and restart the server.",
                path);
        return -1;
    }
    log_msg(LL_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", path);
    log_msg(LL_WARNING, "!!! Truncating the AOF at offset %zu !!!", at);
    if (truncate(path, (off_t)at) != 0) {
        log_msg(LL_WARNING, "Error truncating the AOF file: %s", strerror(errno));
        return -1;
    }
    log_msg(LL_WARNING, "AOF loaded anyway because aof-load-truncated is enabled");
    return 1;
}

static int load_commands(server_t *srv, const unsigned char *buf, size_t len, size_t pos, const char *path) {
    client_t *c = fake_client(srv);
    aof_cmd_t cmd = {0};
    int result = 1;
    size_t multi_at = 0; /* offset of the open transaction's MULTI */
    bool ended = true;   /* the loop read the whole file */
    while (pos < len) {
        size_t at = pos;
        int rc = aof_parse_command(buf, len, &pos, &cmd);
        if (rc == AOF_PARSE_OK) {
            bool in_multi = c->mstate != NULL;
            if (!replay(srv, c, buf, &cmd, path, at)) {
                result = -1;
                ended = false;
                break;
            }
            if (!in_multi && c->mstate) multi_at = at;
            continue;
        }
        if (rc == AOF_PARSE_TRUNCATED) {
            result = load_cut(srv, path, c->mstate ? multi_at : at);
            ended = false;
            break;
        }
        log_msg(LL_WARNING, "Bad file format reading the append only file %s at offset %zu: make a backup of your "
                            "AOF file, then use ./redis-like-check-aof --fix <filename>",
                path, pos);
        result = -1;
        ended = false;
        break;
    }
    if (ended && c->mstate) {
        log_msg(LL_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", path);
        result = load_cut(srv, path, multi_at);
    }
    srv->durability_hooks->replay_end(c); /* an unfinished transaction is dropped, never run */
    aof_cmd_free(&cmd);
    fake_client_drop_replies(c);
    zfree(c);
    return result;
}

int aof_load(server_t *srv, aof_t *aof) {
    (void)aof;
    sds path = server_path(srv, srv->cfg.appendfilename);
    rdb_file_t f;
    if (rdb_file_open(path, &f) != 0) {
        int e = errno;
        sds_free(path);
        if (e == ENOENT) return 0;
        log_msg(LL_WARNING, "Fatal error: can't open the append log file for reading: %s", strerror(e));
        return -1;
    }
    int rc = aof_load_buffer(srv, f.buf, f.len, path);
    rdb_file_close(&f);
    sds_free(path);
    return rc;
}

int aof_load_buffer(server_t *srv, const unsigned char *buf, size_t len, const char *path) {
    size_t pos = 0;
    int rc = 1;
    if (len >= 5 && !memcmp(buf, "REDIS", 5)) {
        rdb_load_result_t res;
        if (rdb_load_buffer(srv, buf, len, false, util_mstime(), &res) != 0) {
            log_msg(LL_WARNING, "Error reading the RDB preamble of the AOF file %s: %s", path, res.err);
            rc = -1;
        }
        pos = res.consumed;
    }
    if (rc > 0) rc = load_commands(srv, buf, len, pos, path);
    return rc;
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
                      "aof_last_write_status:%s\r\n"
                      "aof_last_cow_size:%zu\r\n",
                      aof->on ? 1 : 0, rewriting ? 1 : 0, aof->rewrite_scheduled ? 1 : 0, aof->last_rewrite_time_sec,
                      rewriting ? (util_mstime() - aof->rewrite_start_ms) / 1000 : -1, aof->last_rewrite_ok ? "ok" : "err",
                      aof->rewrites, aof->write_failed || atomic_load(&aof->fsync_errno) ? "err" : "ok", aof->last_cow_size);
    if (aof->on) {
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
