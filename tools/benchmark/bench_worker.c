/* bench_worker.c: the engine-independent half of a worker (see bench_worker.h).
 *
 * A connection owns a pre-built batch of up to -P requests (bench_batch_t)
 * and alternates: send the whole batch, then count replies as they arrive
 * with the RESP skipper.  As soon as the last reply of a batch is in, the
 * next batch is handed to the engine from the input path itself, so a
 * request costs one send and one receive and never an allocation.
 *
 * Latency of request i in a batch = arrival of its reply - t0[i], where t0 is
 * the send time (closed loop) or, with --rate, the time the request was
 * scheduled to go out (open loop: a late send counts against the server
 * side, so coordinated omission does not hide stalls). */
#include "bench_tls.h"
#include "bench_worker.h"
#include "bench_net.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Live counters, one cache line per thread; written by their worker only. */
static struct {
    _Atomic uint64_t done;
    _Atomic uint64_t p99_ns;
    char pad[48];
} live[BENCH_MAX_THREADS];

uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t bench_worker_live_done(int i) {
    return atomic_load_explicit(&live[i].done, memory_order_relaxed);
}

uint64_t bench_worker_live_p99(int i) {
    return atomic_load_explicit(&live[i].p99_ns, memory_order_relaxed);
}

void bench_worker_fail(bench_worker_t *w, const char *msg) {
    if (!w->fail) {
        w->fail = 1;
        snprintf(w->errmsg, sizeof(w->errmsg), "%s", msg);
    }
}

/* Blocking connect + handshake, then non-blocking and given to the engine. */
int bench_worker_open(bench_worker_t *w, bench_conn_t *c) {
    char err[256];
    c->fd = bench_net_connect(w->o, err, sizeof(err));
    if (c->fd < 0 || bench_net_handshake(c->fd, w->o, err, sizeof(err)) < 0) {
        bench_worker_fail(w, err);
        return -1;
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    bench_resp_init(&c->rs);
    c->rlen = 0;
    return w->io->add(w, c);
}

/* Requests this connection may send now (0 = none left for the test). */
static int worker_budget(bench_worker_t *w, uint64_t now) {
    if (w->deadline_ns && now >= w->deadline_ns)
        return 0;
    uint64_t left = w->quota - w->issued;
    return left < (uint64_t)w->o->pipeline ? (int)left : w->o->pipeline;
}

/* Sends a batch of k requests whose latencies start at t0, t0+step, ... */
static int worker_send(bench_worker_t *w, bench_conn_t *c, int k, double t0, double step) {
    c->wlen = bench_batch_next(&c->batch, &w->gen, k);
    c->woff = 0;
    c->inflight = k;
    c->got = 0;
    for (int i = 0; i < k; i++)
        c->t0[i] = (uint64_t)(t0 + step * i);
    w->issued += (uint64_t)k;
    w->active++;
    return w->io->flush(w, c);
}

/* Closed loop: the next batch goes out right away. */
static int worker_next(bench_worker_t *w, bench_conn_t *c, uint64_t now) {
    if (w->o->rate > 0) {
        w->idle[(w->idle_head + w->nidle++) % w->nconns] = c->idx;
        return 0;
    }
    int k = worker_budget(w, now);
    if (k == 0) {
        c->finished = 1;
        return 0;
    }
    return worker_send(w, c, k, (double)now, 0);
}

/* Open loop: hand due requests to idle connections, the one idle longest
 * first (every connection carries its share, as in a pool used round
 * robin), spread over all idle ones: a connection pipelines only when more
 * requests are due than connections are idle (at most -P each). */
static int worker_dispatch_due(bench_worker_t *w, uint64_t now) {
    while (w->nidle > 0 && w->next_due_ns <= (double)now) {
        bench_conn_t *c = &w->conns[w->idle[w->idle_head]];
        int k = worker_budget(w, now);
        if (k == 0)
            return 0;
        int due = (int)(((double)now - w->next_due_ns) / w->interval_ns) + 1;
        int share = (due + w->nidle - 1) / w->nidle;
        if (share < k)
            k = share;
        w->idle_head = (w->idle_head + 1) % w->nconns;
        w->nidle--;
        if (worker_send(w, c, k, w->next_due_ns, w->interval_ns) < 0)
            return -1;
        w->next_due_ns += w->interval_ns * k;
    }
    return 0;
}

static void worker_note_error(bench_worker_t *w, const char *e, size_t len) {
    if (!w->first_error[0]) {
        size_t n = len < sizeof(w->first_error) - 1 ? len : sizeof(w->first_error) - 1;
        memcpy(w->first_error, e, n);
        w->first_error[n] = '\0';
    }
    if (w->o->show_errors)
        fprintf(stderr, "Error from server: %.*s\n", (int)len, e);
}

/* Counts the complete replies in buf[0, len) against c's batch; returns the
 * bytes consumed (the rest is an unfinished header line) or -1. */
static long worker_feed(bench_worker_t *w, bench_conn_t *c, const char *buf, size_t len,
                        uint64_t now) {
    bench_resp_out_t out;
    long used = bench_resp_feed(&c->rs, buf, len, &out);
    if (used < 0) {
        bench_worker_fail(w, "Error: protocol error in server reply");
        return -1;
    }
    if (out.replies > (uint32_t)c->inflight) {
        bench_worker_fail(w, "Error: more replies than requests (unexpected push data?)");
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
    return used;
}

/* After new replies: when the batch is complete, reconnect (-k 0) and send
 * the next one. */
static int worker_after_replies(bench_worker_t *w, bench_conn_t *c, uint32_t replies,
                                uint64_t now) {
    if (c->inflight > 0 || replies == 0)
        return 0;
    w->active--;
    if (!w->o->keepalive) {
        w->io->del(w, c);
        bench_sock_close(c->fd);
        c->fd = -1;
        if (bench_worker_open(w, c) < 0)
            return -1;
    }
    return worker_next(w, c, now);
}

int bench_worker_input_rbuf(bench_worker_t *w, bench_conn_t *c, size_t n, uint64_t now) {
    size_t have = c->rlen + n;
    int before = c->got;
    long used = worker_feed(w, c, c->rbuf, have, now);
    if (used < 0)
        return -1;
    c->rlen = have - (size_t)used;
    if (c->rlen)
        memmove(c->rbuf, c->rbuf + used, c->rlen);
    if (c->rlen == BENCH_RBUF) {
        bench_worker_fail(w, "Error: reply header line too long");
        return -1;
    }
    return worker_after_replies(w, c, (uint32_t)(c->got - before), now);
}

int bench_worker_input(bench_worker_t *w, bench_conn_t *c, const char *data, size_t len,
                       uint64_t now) {
    int before = c->got;
    while (len > 0) {
        if (c->rlen == 0) {
            /* Common case: parse in place, keep only a split header line. */
            long used = worker_feed(w, c, data, len, now);
            if (used < 0)
                return -1;
            size_t tail = len - (size_t)used;
            if (tail >= BENCH_RBUF) {
                bench_worker_fail(w, "Error: reply header line too long");
                return -1;
            }
            memcpy(c->rbuf, data + used, tail);
            c->rlen = tail;
            break;
        }
        /* A header line began in an earlier chunk: join it with this one. */
        size_t take = BENCH_RBUF - c->rlen < len ? BENCH_RBUF - c->rlen : len;
        memcpy(c->rbuf + c->rlen, data, take);
        data += take;
        len -= take;
        size_t have = c->rlen + take;
        long used = worker_feed(w, c, c->rbuf, have, now);
        if (used < 0)
            return -1;
        c->rlen = have - (size_t)used;
        if (c->rlen == BENCH_RBUF) {
            bench_worker_fail(w, "Error: reply header line too long");
            return -1;
        }
        if (c->rlen && used > 0)
            memmove(c->rbuf, c->rbuf + used, c->rlen);
    }
    return worker_after_replies(w, c, (uint32_t)(c->got - before), now);
}

static void worker_publish(bench_worker_t *w, uint64_t base_done) {
    atomic_store_explicit(&live[w->idx].done, base_done + w->completed, memory_order_relaxed);
    atomic_store_explicit(&live[w->idx].p99_ns, hist_percentile(w->hist, 99), memory_order_relaxed);
}

/* How long the engine may block, in microseconds: until the next due
 * request (--rate), the deadline (--duration), and at most 250 ms to keep
 * the live counters fresh.  Microseconds, not milliseconds: at 10,000
 * requests/s a request is due every 100 us, and a millisecond timeout sent
 * them up to 1 ms late, a delay the open loop then charged to the server. */
static long worker_timeout_us(bench_worker_t *w, uint64_t now, int budget_left) {
    long timeout = -1;
    if (w->o->rate > 0 && w->nidle > 0 && budget_left) {
        double wait = (w->next_due_ns - (double)now) / 1e3;
        timeout = wait <= 0 ? 0 : (long)wait + 1;
    }
    if (w->deadline_ns) {
        long dl = now >= w->deadline_ns ? 0 : (long)((w->deadline_ns - now) / 1000) + 1;
        if (timeout < 0 || dl < timeout)
            timeout = dl;
    }
    if (timeout < 0 || timeout > 250000)
        timeout = 250000;
    return timeout;
}

int bench_worker_loop(bench_worker_t *w) {
    uint64_t base_done = atomic_load_explicit(&live[w->idx].done, memory_order_relaxed);
    uint64_t next_publish = 0;
    /* Open loop: the kernel may end a sleep up to the thread's timer slack
     * (50 us by default) late; 1 us keeps requests on their schedule. */
    if (w->o->rate > 0)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    w->start_ns = bench_now_ns();
    if (w->o->duration > 0)
        w->deadline_ns = w->start_ns + (uint64_t)(w->o->duration * 1e9);
    w->next_due_ns = (double)w->start_ns;
    for (int i = 0; i < w->nconns; i++)
        if (worker_next(w, &w->conns[i], w->start_ns) < 0)
            return -1;
    for (;;) {
        uint64_t now = bench_now_ns();
        if (w->o->rate > 0 && worker_dispatch_due(w, now) < 0)
            return -1;
        int budget_left = worker_budget(w, now) > 0;
        if (w->active == 0 && (!budget_left || w->o->rate <= 0))
            break;
        if (w->io->wait(w, worker_timeout_us(w, now, budget_left)) < 0)
            return -1;
        now = bench_now_ns();
        if (now >= next_publish) {
            worker_publish(w, base_done);
            next_publish = now + 250000000ULL;
        }
    }
    w->end_ns = bench_now_ns();
    worker_publish(w, base_done);
    return 0;
}
