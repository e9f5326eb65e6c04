/* bench_engine.c: the load generator's hot path (see bench_engine.h).
 *
 * Per worker thread: one epoll instance, its share of the connections, one
 * generator and one histogram.  A connection owns a pre-built batch of up to
 * -P requests (bench_batch_t) and alternates: send the whole batch with one
 * send(), then count replies as they arrive with the RESP skipper.  As soon
 * as the last reply of a batch is in, the next batch is sent from the read
 * handler itself: the socket stays registered for EPOLLIN only (EPOLLOUT just
 * while a send was short), so a request costs one send and one recv plus a
 * share of one epoll_wait, with no epoll_ctl and no malloc.
 *
 * Latency of request i in a batch = arrival of its reply - t0[i], where t0 is
 * the send time (closed loop) or, with --rate, the time the request was
 * scheduled to go out (open loop: a late send counts against the server
 * side, so coordinated omission does not hide stalls). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* pthread_timedjoin_np */
#endif
#include "bench_engine.h"
#include "bench_net.h"
#include "bench_resp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BENCH_RBUF 65536

typedef struct bench_conn {
    int fd;
    int idx;                    /* position in the worker's conns[] */
    bench_batch_t batch;
    size_t wlen, woff;          /* current batch bytes, bytes sent so far */
    int inflight;               /* requests of the batch still without reply */
    int got;                    /* replies of the batch received */
    int writing;                /* EPOLLOUT armed for a short send */
    int finished;               /* no more requests for this connection */
    uint64_t *t0;               /* per request: start of its latency, ns */
    bench_resp_t rs;
    char *rbuf;
    size_t rlen;                /* partial header line kept at rbuf start */
} bench_conn_t;

typedef struct bench_worker {
    const bench_opts_t *o;
    const bench_test_t *t;
    int idx, nthreads;
    int nconns;
    bench_conn_t *conns;
    int epfd;
    bench_gen_t gen;
    hist_t *hist;
    uint64_t quota, issued;     /* requests this worker may send / has sent */
    uint64_t completed, errors;
    uint64_t kind_count[BENCH_MAX_CMDS];
    uint64_t start_ns, end_ns, deadline_ns;
    int active;                 /* connections with a batch in flight */
    double interval_ns;         /* --rate: ns between this worker's requests */
    double next_due_ns;
    int *idle;                  /* --rate: connections waiting for a due time */
    int nidle;
    char first_error[160];
    int fail;
    char errmsg[256];
    pthread_barrier_t *barrier;
    struct bench_worker *all;   /* every worker, to see failures after the barrier */
    pthread_t tid;
} bench_worker_t;

/* Live counters, one cache line per thread; written by their worker only. */
static struct {
    _Atomic uint64_t done;
    _Atomic uint64_t p99_ns;
    char pad[48];
} live[BENCH_MAX_THREADS];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t bench_engine_live_done(void)
{
    uint64_t n = 0;
    for (int i = 0; i < BENCH_MAX_THREADS; i++)
        n += atomic_load_explicit(&live[i].done, memory_order_relaxed);
    return n;
}

static void worker_fail(bench_worker_t *w, const char *msg)
{
    if (!w->fail) {
        w->fail = 1;
        snprintf(w->errmsg, sizeof(w->errmsg), "%s", msg);
    }
}

/* Blocking connect + handshake, then non-blocking and registered. */
static int conn_open(bench_worker_t *w, bench_conn_t *c)
{
    char err[256];
    c->fd = bench_net_connect(w->o, err, sizeof(err));
    if (c->fd < 0 || bench_net_handshake(c->fd, w->o, err, sizeof(err)) < 0) {
        worker_fail(w, err);
        return -1;
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)c->idx};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        worker_fail(w, "epoll_ctl failed");
        return -1;
    }
    bench_resp_init(&c->rs);
    c->rlen = 0;
    return 0;
}

static void conn_set_writing(bench_worker_t *w, bench_conn_t *c, int on)
{
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u32 = (uint32_t)c->idx};
    epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->writing = on;
}

static int conn_flush(bench_worker_t *w, bench_conn_t *c)
{
    while (c->woff < c->wlen) {
        ssize_t n = send(c->fd, c->batch.buf + c->woff, c->wlen - c->woff, MSG_NOSIGNAL);
        if (n > 0) {
            c->woff += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!c->writing)
                conn_set_writing(w, c, 1);
            return 0;
        }
        worker_fail(w, "Error: Server closed the connection");
        return -1;
    }
    if (c->writing)
        conn_set_writing(w, c, 0);
    return 0;
}

/* Requests this connection may send now (0 = none left for the test). */
static int conn_budget(bench_worker_t *w, uint64_t now)
{
    if (w->deadline_ns && now >= w->deadline_ns)
        return 0;
    uint64_t left = w->quota - w->issued;
    return left < (uint64_t)w->o->pipeline ? (int)left : w->o->pipeline;
}

/* Sends a batch of k requests whose latencies start at t0, t0+step, ... */
static int conn_send(bench_worker_t *w, bench_conn_t *c, int k, double t0, double step)
{
    c->wlen = bench_batch_next(&c->batch, &w->gen, k);
    c->woff = 0;
    c->inflight = k;
    c->got = 0;
    for (int i = 0; i < k; i++)
        c->t0[i] = (uint64_t)(t0 + step * i);
    w->issued += (uint64_t)k;
    w->active++;
    return conn_flush(w, c);
}

/* Closed loop: the next batch goes out right away. */
static int conn_next(bench_worker_t *w, bench_conn_t *c, uint64_t now)
{
    if (w->o->rate > 0) {
        w->idle[w->nidle++] = c->idx;
        return 0;
    }
    int k = conn_budget(w, now);
    if (k == 0) {
        c->finished = 1;
        return 0;
    }
    return conn_send(w, c, k, (double)now, 0);
}

/* Open loop: hand due requests to idle connections. */
static int worker_dispatch_due(bench_worker_t *w, uint64_t now)
{
    while (w->nidle > 0 && w->next_due_ns <= (double)now) {
        bench_conn_t *c = &w->conns[w->idle[w->nidle - 1]];
        int k = conn_budget(w, now);
        if (k == 0)
            return 0;
        int due = (int)(((double)now - w->next_due_ns) / w->interval_ns) + 1;
        if (due < k)
            k = due;
        w->nidle--;
        if (conn_send(w, c, k, w->next_due_ns, w->interval_ns) < 0)
            return -1;
        w->next_due_ns += w->interval_ns * k;
    }
    return 0;
}

static void worker_note_error(bench_worker_t *w, const char *e, size_t len)
{
    if (!w->first_error[0]) {
        size_t n = len < sizeof(w->first_error) - 1 ? len : sizeof(w->first_error) - 1;
        memcpy(w->first_error, e, n);
        w->first_error[n] = '\0';
    }
    if (w->o->show_errors)
        fprintf(stderr, "Error from server: %.*s\n", (int)len, e);
}

static int conn_read(bench_worker_t *w, bench_conn_t *c)
{
    ssize_t n = recv(c->fd, c->rbuf + c->rlen, BENCH_RBUF - c->rlen, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0) {
        worker_fail(w, "Error: Server closed the connection");
        return -1;
    }
    uint64_t now = now_ns();
    size_t have = c->rlen + (size_t)n;
    bench_resp_out_t out;
    long used = bench_resp_feed(&c->rs, c->rbuf, have, &out);
    if (used < 0) {
        worker_fail(w, "Error: protocol error in server reply");
        return -1;
    }
    if (out.replies > (uint32_t)c->inflight) {
        worker_fail(w, "Error: more replies than requests (unexpected push data?)");
        return -1;
    }
    for (uint32_t i = 0; i < out.replies; i++) {
        uint64_t t0 = c->t0[c->got];
        w->kind_count[c->batch.kinds[c->got]]++;
        hist_record(w->hist, now > t0 ? now - t0 : 0);
        c->got++;
    }
    if (out.errors) {
        w->errors += out.errors;
        if (out.err)
            worker_note_error(w, out.err, out.err_len);
    }
    w->completed += out.replies;
    c->inflight -= (int)out.replies;
    c->rlen = have - (size_t)used;
    if (c->rlen)
        memmove(c->rbuf, c->rbuf + used, c->rlen);
    if (c->rlen == BENCH_RBUF) {
        worker_fail(w, "Error: reply header line too long");
        return -1;
    }
    if (c->inflight > 0 || out.replies == 0)
        return 0;
    w->active--;
    if (!w->o->keepalive) {
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        if (conn_open(w, c) < 0)
            return -1;
    }
    return conn_next(w, c, now);
}

static void worker_publish(bench_worker_t *w, uint64_t base_done, int with_p99)
{
    atomic_store_explicit(&live[w->idx].done, base_done + w->completed, memory_order_relaxed);
    if (with_p99)
        atomic_store_explicit(&live[w->idx].p99_ns, hist_percentile(w->hist, 99), memory_order_relaxed);
}

static int worker_loop(bench_worker_t *w)
{
    struct epoll_event evs[256];
    uint64_t base_done = atomic_load_explicit(&live[w->idx].done, memory_order_relaxed);
    uint64_t next_publish = 0;
    w->start_ns = now_ns();
    if (w->o->duration > 0)
        w->deadline_ns = w->start_ns + (uint64_t)(w->o->duration * 1e9);
    w->next_due_ns = (double)w->start_ns;
    for (int i = 0; i < w->nconns; i++)
        if (conn_next(w, &w->conns[i], w->start_ns) < 0)
            return -1;
    for (;;) {
        uint64_t now = now_ns();
        if (w->o->rate > 0 && worker_dispatch_due(w, now) < 0)
            return -1;
        int budget_left = conn_budget(w, now) > 0;
        if (w->active == 0 && (!budget_left || w->o->rate <= 0))
            break;
        int timeout = -1;
        if (w->o->rate > 0 && w->nidle > 0 && budget_left) {
            double wait = (w->next_due_ns - (double)now) / 1e6;
            timeout = wait <= 0 ? 0 : (int)wait + 1;
        }
        if (w->deadline_ns) {
            int dl = now >= w->deadline_ns ? 0 : (int)((w->deadline_ns - now) / 1000000) + 1;
            if (timeout < 0 || dl < timeout)
                timeout = dl;
        }
        if (timeout < 0 || timeout > 250)
            timeout = 250;   /* keep the live counters fresh */
        int n = epoll_wait(w->epfd, evs, 256, timeout);
        if (n < 0 && errno != EINTR) {
            worker_fail(w, "epoll_wait failed");
            return -1;
        }
        for (int i = 0; i < n; i++) {
            bench_conn_t *c = &w->conns[evs[i].data.u32];
            if ((evs[i].events & EPOLLOUT) && conn_flush(w, c) < 0)
                return -1;
            if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && conn_read(w, c) < 0)
                return -1;
        }
        now = now_ns();
        if (now >= next_publish) {
            worker_publish(w, base_done, 1);
            next_publish = now + 250000000ULL;
        }
    }
    w->end_ns = now_ns();
    worker_publish(w, base_done, 1);
    return 0;
}

static void *worker_main(void *arg)
{
    bench_worker_t *w = arg;
    for (int i = 0; i < w->nconns && !w->fail; i++) {
        bench_conn_t *c = &w->conns[i];
        if (conn_open(w, c) < 0)
            break;
        if (bench_batch_init(&c->batch, &w->gen, w->o->pipeline) < 0)
            worker_fail(w, "out of memory");
    }
    pthread_barrier_wait(w->barrier);
    for (int i = 0; i < w->nthreads; i++)
        if (w->all[i].fail)
            return NULL;
    worker_loop(w);
    return NULL;
}

static int worker_setup(bench_worker_t *w, const bench_opts_t *o, const bench_test_t *t,
                        const char *payload, int nconns)
{
    w->o = o;
    w->t = t;
    w->nconns = nconns;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->hist = hist_create(BENCH_HIST_HIGHEST, BENCH_HIST_DIGITS);
    w->conns = calloc((size_t)nconns, sizeof(bench_conn_t));
    w->idle = calloc((size_t)nconns, sizeof(int));
    if (w->epfd < 0 || !w->hist || !w->conns || !w->idle)
        return -1;
    bench_gen_init(&w->gen, o, t, payload, w->idx, w->nthreads);
    for (int i = 0; i < nconns; i++) {
        bench_conn_t *c = &w->conns[i];
        c->fd = -1;
        c->idx = i;
        c->rbuf = malloc(BENCH_RBUF);
        c->t0 = calloc((size_t)o->pipeline, sizeof(uint64_t));
        if (!c->rbuf || !c->t0)
            return -1;
    }
    return 0;
}

static void worker_teardown(bench_worker_t *w)
{
    for (int i = 0; w->conns && i < w->nconns; i++) {
        bench_conn_t *c = &w->conns[i];
        if (c->fd >= 0)
            close(c->fd);
        bench_batch_free(&c->batch);
        free(c->rbuf);
        free(c->t0);
    }
    free(w->conns);
    free(w->idle);
    hist_free(w->hist);
    if (w->epfd >= 0)
        close(w->epfd);
}

static double tv_sec(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Waits for the workers, calling progress about 4 times a second. */
static void engine_wait(bench_worker_t *ws, int nt, const bench_test_t *t,
                        bench_progress_fn progress, void *parg)
{
    uint64_t start = now_ns(), base = bench_engine_live_done();
    for (int i = 0; progress && i < nt; ) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_timedjoin_np(ws[i].tid, NULL, &ts) == 0) {
            ws[i].tid = 0;
            i++;
            continue;
        }
        uint64_t p99 = 0;
        for (int j = 0; j < nt; j++) {
            uint64_t v = atomic_load_explicit(&live[j].p99_ns, memory_order_relaxed);
            if (v > p99)
                p99 = v;
        }
        progress(t, bench_engine_live_done() - base, (double)(now_ns() - start) / 1e9, p99, parg);
    }
    for (int i = 0; i < nt; i++)
        if (ws[i].tid)
            pthread_join(ws[i].tid, NULL);
}

static void engine_merge(bench_worker_t *ws, int nt, bench_result_t *res)
{
    uint64_t start = UINT64_MAX, end = 0;
    for (int i = 0; i < nt; i++) {
        bench_worker_t *w = &ws[i];
        hist_merge(res->hist, w->hist);
        res->requests += w->completed;
        res->errors += w->errors;
        for (int k = 0; k < BENCH_MAX_CMDS; k++)
            res->kind_count[k] += w->kind_count[k];
        if (!res->first_error[0] && w->first_error[0])
            snprintf(res->first_error, sizeof(res->first_error), "%s", w->first_error);
        if (w->start_ns && w->start_ns < start)
            start = w->start_ns;
        if (w->end_ns > end)
            end = w->end_ns;
    }
    res->seconds = end > start ? (double)(end - start) / 1e9 : 0;
}

int bench_engine_run(const bench_opts_t *o, const bench_test_t *t, const char *payload,
                     bench_progress_fn progress, void *parg,
                     bench_result_t *res, char *err, size_t errlen)
{
    int clients = o->clients;
    if (o->duration <= 0 && (uint64_t)clients > o->requests)
        clients = (int)o->requests;   /* more connections than requests: idle ones would only skew setup */
    int nt = o->threads < clients ? o->threads : clients;
    memset(res, 0, sizeof(*res));
    res->test = t;
    res->clients = clients;
    res->threads = nt;
    res->hist = hist_create(BENCH_HIST_HIGHEST, BENCH_HIST_DIGITS);
    bench_worker_t *ws = calloc((size_t)nt, sizeof(*ws));
    pthread_barrier_t barrier;
    if (!res->hist || !ws) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_barrier_init(&barrier, NULL, (unsigned)nt + 1);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);

    uint64_t total = o->duration > 0 ? UINT64_MAX : o->requests;
    int conn_from = 0, rc = 0;
    for (int i = 0; i < nt; i++) {
        bench_worker_t *w = &ws[i];
        int nconns = clients / nt + (i < clients % nt);
        w->idx = i;
        w->nthreads = nt;
        w->barrier = &barrier;
        w->all = ws;
        w->epfd = -1;
        /* Quota proportional to connections, summing exactly to -n. */
        if (total == UINT64_MAX) {
            w->quota = UINT64_MAX;
        } else {
            unsigned __int128 a = (unsigned __int128)total * (unsigned)conn_from / (unsigned)clients;
            unsigned __int128 b = (unsigned __int128)total * (unsigned)(conn_from + nconns) / (unsigned)clients;
            w->quota = (uint64_t)(b - a);
        }
        if (o->rate > 0)
            w->interval_ns = 1e9 * clients / (o->rate * nconns);
        conn_from += nconns;
        if (worker_setup(w, o, t, payload, nconns) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    for (int i = 0; i < nt; i++)
        pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]);
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < nt; i++) {
        if (ws[i].fail) {
            snprintf(err, errlen, "%s", ws[i].errmsg);
            rc = -1;
            break;
        }
    }
    engine_wait(ws, nt, t, rc == 0 ? progress : NULL, parg);
    for (int i = 0; i < nt && rc == 0; i++) {
        if (ws[i].fail) {
            snprintf(err, errlen, "%s", ws[i].errmsg);
            rc = -1;
        }
    }
    getrusage(RUSAGE_SELF, &ru1);
    res->cpu_user = tv_sec(ru1.ru_utime) - tv_sec(ru0.ru_utime);
    res->cpu_sys = tv_sec(ru1.ru_stime) - tv_sec(ru0.ru_stime);
    engine_merge(ws, nt, res);
    for (int i = 0; i < nt; i++)
        worker_teardown(&ws[i]);
    pthread_barrier_destroy(&barrier);
    free(ws);
    return rc;
}
