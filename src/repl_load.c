/* repl_load.c: repl-diskless-load, a replica loading its master's RDB from
 * the socket as the bytes arrive (Redis 7.0's "to parser" transfer).
 *
 * repl_replica.c reads the transfer's header line ("$<len>" or
 * "$EOF:<mark>") and asks repl_load_wanted(): with `swapdb`, or with
 * `on-empty-db` when no database holds a key, it hands the socket to
 * repl_load_from_socket() instead of reading the payload into memory.
 * The load runs to its end inside that call (as Redis's does), through
 * rdb_load_stream() with this file's socket source:
 *   - on-empty-db: the keys go straight into the live, empty databases;
 *     a failed transfer empties them again;
 *   - swapdb: the keys go into a temporary database set; on success it is
 *     swapped with the live one (the old data freed on the bio thread), on
 *     failure it is dropped and the old data stays.
 * Function libraries come out as code and replace ours only on success.
 * While it waits for bytes, every 100 ms of loading and every
 * loading-process-events-interval-bytes, the source serves the other
 * clients (loading.h): commands without Redis's
 * "loading" flag get -LOADING, except during an async load (swapdb, when
 * the master's replication ID is ours already, so the old data is the same
 * history), where only "no-async-loading" commands are refused and reads
 * see the old data.  INFO shows loading:1, async_loading and the
 * loading_* fields meanwhile.  A master silent for repl-timeout seconds,
 * a closed socket, a bad CRC or a broken EOF mark fail the load; the cron
 * connects again. */
#include "repl_state.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "durability_hooks.h"
#include "keyspace.h"
#include "lazyfree.h"
#include "loading.h"
#include "log.h"
#include "rdb.h"
#include "reply.h"
#include "util.h"


typedef struct load_ctx {
    server_t *srv;
    int fd;
    repl_link_reader_t rd;
    rdb_source_t src;
} load_ctx_t;

bool repl_load_wanted(server_t *srv) {
    int mode = srv->cfg.repl_diskless_load;
    if (mode == REPL_DISKLESS_LOAD_SWAPDB) return true;
    if (mode != REPL_DISKLESS_LOAD_ON_EMPTY_DB) return false;
    for (int i = 0; i < srv->dbnum; i++)
        if (db_size(&srv->dbs[i])) return false;
    return true;
}

/* ------------------------------------------------------------ the source */

/* rdb_source_t.read over the master's non-blocking socket: waits in poll
 * (serving clients between waits) up to repl-timeout without a byte. */
static ssize_t socket_read(void *arg, void *buf, size_t len) {
    load_ctx_t *x = arg;
    server_t *srv = x->srv;
    repl_link_t *l = &R(srv)->link;
    load_progress_t *ld = &srv->load;
    if (x->src.left == 0) return 0; /* "$<len>": all of it was read */
    if (x->src.left > 0 && (long long)len > x->src.left) len = (size_t)x->src.left;
    for (;;) {
        long long now = util_mstime();
        if (now - ld->last_serve_ms >= LOADING_SERVE_MS) loading_serve(srv);
        if (srv->shutdown_asap) {
            snprintf(x->src.err, sizeof(x->src.err), "the server is shutting down");
            return -1;
        }
        ssize_t n = x->rd(l, buf, len);
        if (n > 0) {
            if (x->src.left > 0) x->src.left -= n;
            stats_net_in(&srv->stats, n, true);
            l->last_io_ms = l->transfer_last_ms = now;
            loading_advance(srv, n); /* may serve the clients */
            return n;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            snprintf(x->src.err, sizeof(x->src.err), "%s", strerror(errno));
            return -1;
        }
        if (now - l->last_io_ms > srv->cfg.repl_timeout * 1000) {
            snprintf(x->src.err, sizeof(x->src.err), "no data from the MASTER for %lld seconds",
                     srv->cfg.repl_timeout);
            return -1;
        }
        struct pollfd pf = {.fd = x->fd, .events = POLLIN};
        (void)poll(&pf, 1, LOADING_SERVE_MS);
    }
}

/* "$EOF:<mark>": the 40 bytes after the RDB must be the mark; extra bytes
 * (none from a master that waits for our first ACK) go to *rest. */
static bool check_eof_mark(load_ctx_t *x, const char *mark, sds *rest) {
    while (sds_len(*rest) < REPL_ID_LEN) {
        char buf[REPL_ID_LEN];
        ssize_t n = socket_read(x, buf, REPL_ID_LEN - sds_len(*rest));
        if (n <= 0) return false;
        *rest = sds_catlen(*rest, buf, (size_t)n);
    }
    if (memcmp(*rest, mark, REPL_ID_LEN)) return false;
    sds_range(*rest, REPL_ID_LEN, -1);
    return true;
}

/* ------------------------------------------------------------ the load */

/* Load the libraries the stream carried, in place of ours. */
static bool replace_functions(server_t *srv, rdb_libs_t *libs) {
    srv->durability_hooks->flush_functions(srv); /* function.c */
    for (size_t i = 0; i < libs->n; i++) {
        sds err = srv->durability_hooks->load_function(srv, libs->code[i], sds_len(libs->code[i]), false);
        if (err) {
            log_msg(LL_WARNING, "Failed loading a function library from the MASTER: %s", err);
            sds_free(err);
            return false;
        }
    }
    return true;
}

static void drop_loaded(server_t *srv, db_t *temp) {
    if (temp) {
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Discarding temporary DB in background");
        db_temp_set_free(srv, temp, true);
        return;
    }
    for (int i = 0; i < srv->dbnum; i++) db_empty_async(&srv->dbs[i]);
}

bool repl_load_from_socket(server_t *srv, int fd, repl_link_reader_t rd, long long size, const char *eof_mark,
                           sds *rest, long long *keys, loading_keepalive_fn *keepalive) {
    repl_t *r = R(srv);
    bool swapdb = srv->cfg.repl_diskless_load == REPL_DISKLESS_LOAD_SWAPDB;
    /* Same history: the old data is an earlier point of what arrives. */
    bool async = swapdb && !memcmp(r->replid, r->link.fullsync_replid, REPL_ID_LEN);
    db_t *temp = swapdb ? db_temp_set_create(srv) : NULL;
    if (!swapdb) {
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
        for (int i = 0; i < srv->dbnum; i++) db_empty(&srv->dbs[i]);
    }
    log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
    load_ctx_t x = {.srv = srv, .fd = fd, .rd = rd};
    x.src.read = socket_read;
    x.src.arg = &x;
    x.src.left = size; /* -1 with an EOF mark */
    rdb_libs_t libs = {0};
    rdb_load_result_t res = {0};
    loading_begin(srv, async, size, keepalive);
    /* now_ms 0: keys already expired stay; the master's DEL removes them. */
    bool ok = rdb_load_stream(srv, &x.src, temp ? temp : srv->dbs, &libs, 0, &res) == 0;
    *rest = x.src.rest ? x.src.rest : sds_empty();
    if (!ok) {
        log_msg(LL_WARNING, "Failed trying to load the MASTER synchronization DB from socket: %s", res.err);
    } else if (eof_mark && !check_eof_mark(&x, eof_mark, rest)) {
        log_msg(LL_WARNING, "Replication stream EOF marker is broken");
        ok = false;
    } else if (!eof_mark && (sds_len(*rest) || x.src.left != 0)) {
        log_msg(LL_WARNING, "The MASTER's RDB is not the %lld bytes it announced", size);
        ok = false;
    }
    loading_end(srv);
    if (ok && temp) {
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
        db_temp_set_swap(srv, temp);
        log_msg(LL_NOTICE, "MASTER <-> REPLICA sync: Discarding old DB in background");
        db_temp_set_free(srv, temp, true);
        temp = NULL;
    }
    if (ok) ok = replace_functions(srv, &libs);
    rdb_libs_free(&libs);
    if (!ok) drop_loaded(srv, temp);
    *keys = res.keys;
    srv->mstime = util_mstime();
    return ok;
}
