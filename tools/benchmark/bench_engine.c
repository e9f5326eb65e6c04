/* bench_engine.c: runs one test over --threads workers (see bench_engine.h).
 *
 * Picks the I/O engine once per process (io_uring when the kernel allows it,
 * else epoll; --engine forces one), splits the connections and the -n quota
 * over the workers, starts them behind a barrier so every connection is open
 * before the first request, reports progress while they run and merges their
 * histograms and counters.  The per-connection hot path lives in
 * bench_worker.c and the engines (bench_epoll.c, bench_uring.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif
#include "bench_tls.h"
#include "bench_cluster.h"
#include "bench_engine.h"
#include "bench_worker.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_engine_live_done(void) {
    uint64_t n = 0;
    for (int i = 0; i < BENCH_MAX_THREADS; i++)
        n += bench_worker_live_done(i);
    return n;
}

/* The engine every test of this process runs on, chosen at the first test:
 * probing builds and tears down a ring, so it is done once. */
static const bench_io_t *engine_io;

static const bench_io_t *engine_pick(const bench_opts_t *o, char *err, size_t errlen) {
    char why[160];
    if (engine_io)
        return engine_io;
    if (o->engine == BENCH_ENGINE_EPOLL) {
        engine_io = &bench_io_epoll;
    } else if (bench_uring_probe(why, sizeof(why)) == 0) {
        engine_io = &bench_io_uring;
    } else if (o->engine == BENCH_ENGINE_URING) {
        snprintf(err, errlen, "--engine uring: io_uring is not available (%s)", why);
        return NULL;
    } else {
        if (!o->quiet)
            fprintf(stderr, "io_uring not available (%s): using epoll\n", why);
        engine_io = &bench_io_epoll;
    }
    return engine_io;
}

static void *worker_main(void *arg) {
    bench_worker_t *w = arg;
    if (w->io->init(w) == 0) {
        for (int i = 0; i < w->nconns && !w->fail; i++) {
            bench_conn_t *c = &w->conns[i];
            if (bench_worker_open(w, c) < 0)
                break;
            if (!w->cl && bench_batch_init(&c->batch, &w->gen, w->o->pipeline) < 0)
                bench_worker_fail(w, "out of memory");
        }
        for (int i = 0; w->cl && i < w->nclients && !w->fail; i++)
            if (bench_worker_client_init(w, i) < 0)
                bench_worker_fail(w, "out of memory");
    }
    pthread_barrier_wait(w->barrier);
    for (int i = 0; i < w->nthreads; i++)
        if (w->all[i].fail)
            return NULL;
    bench_worker_loop(w);
    return NULL;
}

static int worker_setup(bench_worker_t *w, const bench_opts_t *o, const bench_test_t *t,
                        const char *payload, int nclients) {
    int nconns = nclients;
    w->o = o;
    w->t = t;
    w->nclients = nclients;
    if (o->cluster_map) {
        /* --cluster: one connection per master per client. */
        w->cl = o->cluster_map;
        w->nnodes = w->cl->nnodes;
        nconns = nclients * w->nnodes;
        w->clients = calloc((size_t)nclients, sizeof(bench_client_t));
        w->slots = malloc(BENCH_CLUSTER_SLOTS);
        if (!w->clients || !w->slots)
            return -1;
        memcpy(w->slots, w->cl->slot_node, BENCH_CLUSTER_SLOTS);
    }
    w->nconns = nconns;
    w->hist = hist_create(BENCH_HIST_HIGHEST, BENCH_HIST_DIGITS);
    w->conns = calloc((size_t)nconns, sizeof(bench_conn_t));
    w->idle = calloc((size_t)nconns, sizeof(int));
    if (!w->hist || !w->conns || !w->idle)
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

/* The engine goes first: an io_uring may still reference the sockets. */
static void worker_teardown(bench_worker_t *w) {
    if (w->io)
        w->io->fini(w);
    for (int i = 0; w->conns && i < w->nconns; i++) {
        bench_conn_t *c = &w->conns[i];
        if (c->fd >= 0)
            bench_sock_close(c->fd);
        bench_batch_free(&c->batch);
        free(c->rbuf);
        free(c->t0);
        free(c->route);
    }
    for (int i = 0; w->clients && i < w->nclients; i++)
        bench_worker_client_free(w, i);
    free(w->clients);
    free(w->slots);
    free(w->conns);
    free(w->idle);
    hist_free(w->hist);
}

static double tv_sec(struct timeval tv) {
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Waits for the workers, calling progress about 4 times a second. */
static void engine_wait(bench_worker_t *ws, int nt, const bench_test_t *t,
                        bench_progress_fn progress, void *parg) {
    uint64_t start = bench_now_ns(), base = bench_engine_live_done();
    for (int i = 0; progress && i < nt;) {
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
            uint64_t v = bench_worker_live_p99(j);
            if (v > p99)
                p99 = v;
        }
        progress(t, bench_engine_live_done() - base, (double)(bench_now_ns() - start) / 1e9, p99, parg);
    }
    for (int i = 0; i < nt; i++)
        if (ws[i].tid)
            pthread_join(ws[i].tid, NULL);
}

static void engine_merge(bench_worker_t *ws, int nt, bench_result_t *res) {
    uint64_t start = UINT64_MAX, end = 0;
    for (int i = 0; i < nt; i++) {
        bench_worker_t *w = &ws[i];
        hist_merge(res->hist, w->hist);
        res->requests += w->completed;
        res->errors += w->errors;
        res->moved += w->moved;
        res->asked += w->asked;
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
                     bench_result_t *res, char *err, size_t errlen) {
    int clients = o->clients;
    if (o->duration <= 0 && (uint64_t)clients > o->requests)
        clients = (int)o->requests; /* more connections than requests: idle ones would only skew setup */
    int nt = o->threads < clients ? o->threads : clients;
    memset(res, 0, sizeof(*res));
    const bench_io_t *io = engine_pick(o, err, errlen);
    if (!io)
        return -1;
    res->engine = io->name;
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
        w->io = io;
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
