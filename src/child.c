/* child.c: the one forked child (see child.h).
 *
 * child_start forks; the child resets the signals the parent's event loop
 * handles, runs the job's body, then writes how many bytes it had to copy
 * on write (the sum of Private_Dirty in /proc/self/smaps) into a pipe and
 * _exits with the body's code.  The parent records the fork's duration
 * (INFO latest_fork_usec, the "fork" latency event, LATENCY DOCTOR's fork
 * rate) and returns to the loop; the cron reaps the child with
 * waitpid(WNOHANG), reads the pipe and hands the outcome to the job's done
 * callback.  The slot is free again before the callback runs, so a
 * callback may start the next child (replication does). */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_affinity.h"
#include "latency.h"
#include "log.h"
#include "oom.h"
#include "rio.h"
#include "util.h"
#include "zmalloc.h"

/* Owned by child.c; srv->child points at it. */
typedef struct child {
    pid_t pid; /* -1 when none */
    child_type_t type;
    int pipe; /* read end: the child reports its COW bytes */
    long long start_ms;
    child_done_fn *done;
    void *done_arg;
    long long latest_fork_usec; /* INFO stats */
    long long total_forks;
} child_t;

static child_t *C(const server_t *srv) { return srv->child; }

void child_init(server_t *srv) {
    child_t *ch = zcalloc(sizeof(*ch));
    ch->pid = -1;
    ch->pipe = -1;
    srv->child = ch;
}

void child_free(server_t *srv) {
    child_t *ch = C(srv);
    if (!ch) return;
    if (ch->pipe >= 0) close(ch->pipe);
    zfree(ch);
    srv->child = NULL;
}

bool child_active(const server_t *srv) { return C(srv) && C(srv)->pid > 0; }
child_type_t child_active_type(const server_t *srv) { return child_active(srv) ? C(srv)->type : CHILD_NONE; }
pid_t child_pid(const server_t *srv) { return child_active(srv) ? C(srv)->pid : -1; }
long long child_start_ms(const server_t *srv) { return C(srv)->start_ms; }
long long child_latest_fork_usec(const server_t *srv) { return C(srv)->latest_fork_usec; }
long long child_total_forks(const server_t *srv) { return C(srv)->total_forks; }

/* ------------------------------------------------------------ in the child */

/* The child's own count of bytes it sent (child_count_sent): a global
 * because only the one process that is the child ever writes it. */
static uint64_t sent_bytes;

void child_count_sent(long long n) { sent_bytes += (uint64_t)n; }

/* Bytes the child copied on write: the sum of Private_Dirty in smaps. */
static size_t private_dirty_bytes(void) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[256];
    size_t total = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long kb;
        if (sscanf(line, "Private_Dirty: %lu kB", &kb) == 1) total += kb * 1024;
    }
    fclose(f);
    return total;
}

static void run_child(server_t *srv, const child_job_t *job, int pipe_fd) {
    /* No event loop here, and none of the parent's signal handlers. */
    log_set_child();
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGUSR1, SIG_DFL);
    oom_apply(srv, OOM_CLASS_BGCHILD); /* oom-score-adj: the child goes first */
    if (job->type == CHILD_AOF) cpu_affinity_apply(srv->cfg.aof_rewrite_cpulist, "AOF rewrite");
    else cpu_affinity_apply(srv->cfg.bgsave_cpulist, "RDB child");
    server_set_proc_title(srv, job->title);
    int rc = job->body(srv, job->body_arg);
    uint64_t report[2] = {private_dirty_bytes(), sent_bytes}; /* what finish() reads */
    if (rc == 0)
        log_msg(LL_NOTICE, "%s: %zu MB of memory used by copy-on-write", job->what,
                (size_t)(report[0] / (1024 * 1024)));
    if (rio_write_all(pipe_fd, report, sizeof(report)) != 0) { /* the parent then reports 0 */
    }
    _exit(rc);
}

/* ----------------------------------------------------------- in the parent */

bool child_start(server_t *srv, const child_job_t *job, const char **err) {
    child_t *ch = C(srv);
    if (ch->pid > 0) {
        *err = "child process already active";
        return false;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *err = "can't create pipe";
        return false;
    }
    long long start = util_ustime();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        run_child(srv, job, fds[1]); /* does not return */
    }
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        *err = strerror(errno);
        return false;
    }
    close(fds[1]);
    ch->latest_fork_usec = util_ustime() - start;
    double fork_rate = (double)zmalloc_used_memory() * 1000000 /
                       (double)(ch->latest_fork_usec ? ch->latest_fork_usec : 1) / (1024.0 * 1024 * 1024);
    latency_note_fork_rate(srv, fork_rate);                                 /* LATENCY DOCTOR's advice */
    latency_add_sample_if_needed(srv, "fork", ch->latest_fork_usec / 1000); /* latency.c */
    ch->total_forks++;
    ch->pid = pid;
    ch->type = job->type;
    ch->pipe = fds[0];
    ch->start_ms = start / 1000;
    ch->done = job->done;
    ch->done_arg = job->done_arg;
    return true;
}

/* Empty the slot, then tell the job's owner (which may start the next). */
static void finish(server_t *srv, child_exit_t *ex) {
    child_t *ch = C(srv);
    uint64_t report[2] = {0, 0}; /* copy-on-write, bytes sent (run_child) */
    if (!ex->killed && read(ch->pipe, report, sizeof(report)) != (ssize_t)sizeof(report)) report[0] = report[1] = 0;
    ex->cow_bytes = (size_t)report[0];
    ex->sent_bytes = (long long)report[1];
    ex->start_ms = ch->start_ms;
    close(ch->pipe);
    child_done_fn *done = ch->done;
    void *arg = ch->done_arg;
    ch->pipe = -1;
    ch->pid = -1;
    ch->type = CHILD_NONE;
    ch->done = NULL;
    ch->done_arg = NULL;
    if (done) done(srv, ex, arg);
}

void child_reap(server_t *srv) {
    child_t *ch = C(srv);
    if (!ch || ch->pid <= 0) return;
    int status;
    pid_t pid = waitpid(ch->pid, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) return;
    child_exit_t ex = {
        .pid = ch->pid,
        .ok = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        .signo = pid > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0,
    };
    finish(srv, &ex);
}

void child_kill(server_t *srv) {
    child_t *ch = C(srv);
    if (!ch || ch->pid <= 0) return;
    kill(ch->pid, SIGUSR1);
    int status;
    while (waitpid(ch->pid, &status, 0) < 0 && errno == EINTR) {}
    child_exit_t ex = {.pid = ch->pid, .ok = false, .signo = SIGUSR1, .killed = true};
    finish(srv, &ex);
}
