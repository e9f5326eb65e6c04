/* repl_diskless.c: diskless full resync (repl-diskless-sync yes).
 *
 * The forked child (child.c's one slot, RDB type) writes to every
 * waiting replica's socket (one replica: while serialising; several: the
 * dataset is serialised into memory once, then sent to each)
 * "$EOF:<40 random chars>\r\n", the RDB, and the same 40 chars: the
 * replica, which announced "capa eof", reads until the mark instead of a
 * known length.  The sockets are non-blocking (they are the parent's), so
 * the child waits in rio_write_all when one is full; a replica that went away
 * is skipped and the others still get their copy.  The parent holds the
 * stream meanwhile and starts it at the replica's first ACK (the replica
 * sends one as soon as it has loaded). */
#include "repl_state.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "log.h"
#include "rdb.h"
#include "rio.h"
#include "util.h"
#include "zmalloc.h"

#define DISKLESS_MAX_TARGETS 64

typedef struct diskless_job {
    int fds[DISKLESS_MAX_TARGETS];
    int n;
    bool functions_only; /* the batch asked for REPLCONF rdb-filter-only functions */
} diskless_job_t;

/* One replica (the usual case): the RDB goes to its socket as it is
 * serialised, so the transfer overlaps the dump. */
static int diskless_child_one(server_t *srv, int fd, const char *mark, const rdb_save_opts_t *opts) {
    char hdr[64];
    int hl = snprintf(hdr, sizeof(hdr), "$EOF:%s\r\n", mark);
    if (rio_write_all(fd, hdr, (size_t)hl) != 0) return 1;
    rio_t *r = zmalloc(sizeof(*r));
    rio_init(r, fd, srv->cfg.rdbchecksum);
    int rc = rdb_write_dataset(srv, r, opts);
    if (rc == 0) rc = rio_flush(r);
    long long sent = (long long)r->written;
    zfree(r);
    child_count_sent(hl + sent);
    if (rc != 0 || rio_write_all(fd, mark, REPL_ID_LEN) != 0) return 1;
    child_count_sent(REPL_ID_LEN);
    log_msg(LL_NOTICE, "Diskless RDB transfer: %lld bytes streamed to the replica", sent);
    return 0;
}

static int diskless_child(server_t *srv, void *arg) {
    diskless_job_t *job = arg;
    char mark[REPL_ID_LEN + 1];
    util_random_hex(mark, REPL_ID_LEN);
    mark[REPL_ID_LEN] = '\0';
    rdb_save_opts_t opts = {srv->cfg.rdbcompression, srv->cfg.rdbchecksum, false, srv->cfg.rdb_key_save_delay,
                            job->functions_only};
    if (job->n == 1) return diskless_child_one(srv, job->fds[0], mark, &opts);
    /* Several: serialise once into memory, then the same bytes to each. */
    rio_t *r = zmalloc(sizeof(*r));
    rio_init_mem(r, srv->cfg.rdbchecksum);
    if (rdb_write_dataset(srv, r, &opts) != 0) return 1;
    sds rdb = rio_take_mem(r);
    zfree(r);
    char hdr[64];
    int hl = snprintf(hdr, sizeof(hdr), "$EOF:%s\r\n", mark);
    int ok = 0;
    for (int i = 0; i < job->n; i++) {
        int fd = job->fds[i];
        if (rio_write_all(fd, hdr, (size_t)hl) == 0 && rio_write_all(fd, rdb, sds_len(rdb)) == 0 &&
            rio_write_all(fd, mark, REPL_ID_LEN) == 0) {
            ok++;
            child_count_sent((long long)(hl + sds_len(rdb) + REPL_ID_LEN));
        }
    }
    log_msg(LL_NOTICE, "Diskless RDB transfer: %zu bytes sent to %d of %d replicas", sds_len(rdb), ok, job->n);
    sds_free(rdb);
    return ok > 0 ? 0 : 1;
}

/* In the parent: the replicas in this batch get the stream, or are
 * dropped.  Nothing was saved to disk, so BGSAVE's figures stay as they
 * are; at shutdown (killed) nobody is waiting any more. */
static void diskless_done(server_t *srv, const child_exit_t *ex, void *arg) {
    (void)arg;
    stats_net_out(&srv->stats, ex->sent_bytes, true); /* the child wrote to the replicas' sockets */
    if (!ex->killed) R(srv)->diskless_done(srv, ex->ok);
}

int repl_diskless_child_start(server_t *srv, bool functions_only, persist_rdb_done_fn *done) {
    R(srv)->diskless_done = done; /* called by name, it would close a call cycle */
    diskless_job_t targets = {.n = 0, .functions_only = functions_only};
    for (repl_replica_t *rep = R(srv)->replicas; rep; rep = rep->next)
        if (rep->state == REPLICA_WAIT_BGSAVE_END && targets.n < DISKLESS_MAX_TARGETS)
            targets.fds[targets.n++] = rep->c->fd;
    const char *err;
    /* targets lives on this stack: the child gets its own copy at fork. */
    child_job_t job = {.type = CHILD_RDB, .what = "RDB", .title = "redis-rdb-to-slaves", .body = diskless_child, .body_arg = &targets, .done = diskless_done};
    return child_start(srv, &job, &err) ? 0 : -1;
}
