/* child.h: the one forked child.  BGSAVE, BGREWRITEAOF and replication's
 * RDB for a full sync (to disk or to the replicas' sockets) all take this
 * slot, at most one at a time, as in Redis.
 *
 * A user hands child_start a job: the body the child runs (its return
 * value is the exit code) and the callback the parent runs once the child
 * is over.  persist.c (BGSAVE), aof.c (the rewrite) and repl_diskless.c
 * start jobs; persist_cron calls child_reap, persist_shutdown child_kill.
 * This module knows no file format and no user: it forks, tells latency.c
 * how long the fork took, brings the child's copy-on-write figure back
 * through a pipe and keeps the INFO fork figures.  It sits at the bottom of
 * the durability layer, so that persist.c and aof.c, which both fork, need
 * not include each other. */
#ifndef RL_CHILD_H
#define RL_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server.h"

typedef enum { CHILD_NONE = 0,
               CHILD_RDB, /* a snapshot: BGSAVE, or a full sync's RDB */
               CHILD_AOF  /* BGREWRITEAOF */
} child_type_t;

/* How the child ended, for the done callback. */
typedef struct child_exit {
    pid_t pid;
    bool ok;              /* exited with status 0 */
    int signo;            /* the signal that ended it, or 0 */
    bool killed;          /* child_kill ended it (shutdown), not its own exit */
    size_t cow_bytes;     /* copy-on-write the child reported (bytes), 0 when unknown */
    long long sent_bytes; /* what the child said it sent to sockets (child_count_sent) */
    long long start_ms;   /* when it was forked */
} child_exit_t;

/* Runs in the child; returns its exit code. */
typedef int child_body_fn(server_t *srv, void *arg);
/* Runs in the parent after the child was reaped or killed. */
typedef void child_done_fn(server_t *srv, const child_exit_t *ex, void *arg);

typedef struct child_job {
    child_type_t type;
    const char *what;    /* names the child in the log: "RDB", "AOF rewrite" */
    const char *title;   /* its {title} in the process title: Redis's "redis-rdb-bgsave"... */
    child_body_fn *body; /* in the child */
    void *body_arg;      /* the child sees its own copy (fork), so the caller's stack will do */
    child_done_fn *done; /* in the parent, once */
    void *done_arg;      /* must live until done runs */
} child_job_t;

void child_init(server_t *srv);
void child_free(server_t *srv);
/* Fork and run job->body in the child.  false when a child is already
 * active or the fork failed; *err gets the reason. */
bool child_start(server_t *srv, const child_job_t *job, const char **err);
/* Cron: if the child has exited, reap it and run its done callback. */
void child_reap(server_t *srv);
/* Shutdown: stop the child (SIGUSR1), wait for it and run its done callback
 * with killed set. */
void child_kill(server_t *srv);

bool child_active(const server_t *srv);
/* In the child: n more bytes went to the network (a diskless sync's
 * RDB), for the parent's INFO counters. */
void child_count_sent(long long n);
/* CHILD_NONE when no child runs. */
child_type_t child_active_type(const server_t *srv);
/* pid of the running child, -1 when none. */
pid_t child_pid(const server_t *srv);
/* When the running child started (ms), for the "current ... time" INFO fields. */
long long child_start_ms(const server_t *srv);
/* INFO stats: the last fork's duration and the number of forks. */
long long child_latest_fork_usec(const server_t *srv);
long long child_total_forks(const server_t *srv);

#endif
