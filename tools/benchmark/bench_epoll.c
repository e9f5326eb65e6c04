/* bench_epoll.c: the epoll I/O engine of the benchmark (bench_io_epoll).
 *
 * The portable fallback when io_uring is unavailable or --engine epoll is
 * asked for.  One epoll instance per worker; a socket stays registered for
 * EPOLLIN only (EPOLLOUT just while a send was short), so a request costs
 * one send() and one recv() plus a share of one epoll_wait(), with no
 * epoll_ctl on the hot path.  Received bytes go straight into the
 * connection's rbuf and are counted by bench_worker_input_rbuf(). */
#include "bench_worker.h"
#include "bench_tls.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define EPOLL_BATCH 256 /* events taken per epoll_wait */

typedef struct epoll_state {
    int epfd;
    struct epoll_event evs[EPOLL_BATCH];
} epoll_state_t;

static int epoll_init(bench_worker_t *w) {
    epoll_state_t *s = calloc(1, sizeof(*s));
    if (!s) {
        bench_worker_fail(w, "out of memory");
        return -1;
    }
    w->io_state = s;
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0) {
        bench_worker_fail(w, "epoll_create1 failed");
        return -1;
    }
    return 0;
}

static int epoll_add(bench_worker_t *w, bench_conn_t *c) {
    epoll_state_t *s = w->io_state;
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)c->idx};
    c->writing = 0;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        bench_worker_fail(w, "epoll_ctl failed");
        return -1;
    }
    return 0;
}

static void epoll_del(bench_worker_t *w, bench_conn_t *c) {
    epoll_state_t *s = w->io_state;
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
}

static void epoll_set_writing(bench_worker_t *w, bench_conn_t *c, int on) {
    epoll_state_t *s = w->io_state;
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u32 = (uint32_t)c->idx};
    epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->writing = on;
}

static int epoll_flush(bench_worker_t *w, bench_conn_t *c) {
    while (c->woff < c->wlen) {
        ssize_t n = bench_sock_send(c->fd, c->batch.buf + c->woff, c->wlen - c->woff);
        if (n > 0) {
            c->woff += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->writing)
                epoll_set_writing(w, c, 1);
            return 0;
        }
        bench_worker_fail(w, "Error: Server closed the connection");
        return -1;
    }
    if (c->writing)
        epoll_set_writing(w, c, 0);
    return 0;
}

static int epoll_read(bench_worker_t *w, bench_conn_t *c) {
    uint32_t gen = c->gen;
    do { /* --tls: also what the session holds past this read */
        ssize_t n = bench_sock_recv(c->fd, c->rbuf + c->rlen, BENCH_RBUF - c->rlen);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n <= 0) {
            bench_worker_fail(w, "Error: Server closed the connection");
            return -1;
        }
        if (bench_worker_input_rbuf(w, c, (size_t)n, bench_now_ns()) < 0)
            return -1;
    } while (c->gen == gen && c->fd >= 0 && bench_sock_pending(c->fd) > 0);
    return 0;
}

/* epoll_pwait2: a timeout in nanoseconds (epoll_wait's milliseconds would
 * send open-loop requests late). */
static int epoll_wait_once(bench_worker_t *w, long timeout_us) {
    epoll_state_t *s = w->io_state;
    struct timespec ts = {.tv_sec = timeout_us / 1000000, .tv_nsec = (timeout_us % 1000000) * 1000};
    int n = epoll_pwait2(s->epfd, s->evs, EPOLL_BATCH, &ts, NULL);
    if (n < 0 && errno != EINTR) {
        bench_worker_fail(w, "epoll_wait failed");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        bench_conn_t *c = &w->conns[s->evs[i].data.u32];
        if ((s->evs[i].events & EPOLLOUT) && epoll_flush(w, c) < 0)
            return -1;
        if ((s->evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && epoll_read(w, c) < 0)
            return -1;
    }
    return 0;
}

static void epoll_fini(bench_worker_t *w) {
    epoll_state_t *s = w->io_state;
    if (!s)
        return;
    if (s->epfd >= 0)
        close(s->epfd);
    free(s);
    w->io_state = NULL;
}

const bench_io_t bench_io_epoll = {
    .name = "epoll",
    .init = epoll_init,
    .add = epoll_add,
    .del = epoll_del,
    .flush = epoll_flush,
    .wait = epoll_wait_once,
    .fini = epoll_fini,
};
