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
 * side, so coordinated omission does not hide stalls).
 *
 * --cluster: the budgeting works on clients (bench_client_t) instead of
 * connections; a client's batch goes out in rounds over its connections to
 * the masters, and -MOVED / -ASK replies are resent in the next round. */
#include "bench_tls.h"
#include "bench_worker.h"
#include "bench_cluster.h"
#include "bench_net.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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
    bench_opts_t node_o;
    const bench_opts_t *o = w->o;
    if (w->cl) {
        const bench_cnode_t *nd = &w->cl->nodes[c->idx % w->nnodes];
        node_o = *w->o;
        node_o.host = nd->host;
        node_o.port = nd->port;
        o = &node_o;
    }
    c->fd = bench_net_connect(o, err, sizeof(err));
    if (c->fd < 0 || bench_net_handshake(c->fd, o, err, sizeof(err)) < 0) {
        bench_worker_fail(w, err);
        return -1;
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    bench_resp_init(&c->rs);
    c->rs.stop_on_error = w->cl != NULL; /* each error may be a redirect */
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

#define ASKING_REQ "*1\r\n$6\r\nASKING\r\n"
#define ASKING_LEN (sizeof(ASKING_REQ) - 1)
#define CLIENT_SENT (-1)
#define CLIENT_DONE (-2)
#define CLIENT_MAX_HOPS 16 /* redirects of one request before it counts as an error */

int bench_worker_client_init(bench_worker_t *w, int client) {
    bench_client_t *cl = &w->clients[client];
    int p = w->o->pipeline;
    if (bench_batch_init(&cl->batch, &w->gen, p) < 0)
        return -1;
    cl->t0 = calloc((size_t)p, sizeof(uint64_t));
    cl->dest = calloc((size_t)p, sizeof(int16_t));
    cl->ask = calloc((size_t)p, 1);
    cl->hops = calloc((size_t)p, 1);
    if (!cl->t0 || !cl->dest || !cl->ask || !cl->hops)
        return -1;
    for (int n = 0; n < w->nnodes; n++) {
        bench_conn_t *c = &w->conns[client * w->nnodes + n];
        /* Room for the whole batch, each request behind an ASKING. */
        c->batch.cap = cl->batch.cap + (size_t)p * ASKING_LEN;
        c->batch.buf = malloc(c->batch.cap);
        c->route = calloc(2 * (size_t)p, sizeof(int));
        if (!c->batch.buf || !c->route)
            return -1;
    }
    return 0;
}

void bench_worker_client_free(bench_worker_t *w, int client) {
    bench_client_t *cl = &w->clients[client];
    bench_batch_free(&cl->batch);
    free(cl->t0);
    free(cl->dest);
    free(cl->ask);
    free(cl->hops);
}

/* The master of request r's key; keyless requests take turns over them. */
static int client_node(bench_worker_t *w, int client, const bench_client_t *cl, int r) {
    size_t from = r ? cl->batch.slot_end[r - 1] : 0;
    int slot = bench_request_slot(cl->batch.buf + from, cl->batch.slot_end[r] - from);
    if (slot < 0)
        return (client + r) % w->nnodes;
    return w->slots[slot];
}

/* Sends every request of the client's batch that waits for a round, each on
 * the connection to its node, in batch order per connection. */
static int client_round(bench_worker_t *w, int client) {
    bench_client_t *cl = &w->clients[client];
    bench_conn_t *base = &w->conns[client * w->nnodes];
    for (int n = 0; n < w->nnodes; n++) {
        base[n].wlen = 0;
        base[n].inflight = 0;
    }
    for (int r = 0; r < cl->k; r++) {
        if (cl->dest[r] < 0)
            continue;
        bench_conn_t *c = &base[cl->dest[r]];
        if (cl->ask[r]) {
            memcpy(c->batch.buf + c->wlen, ASKING_REQ, ASKING_LEN);
            c->wlen += ASKING_LEN;
            c->route[c->inflight++] = -1;
            cl->ask[r] = 0;
        }
        size_t from = r ? cl->batch.slot_end[r - 1] : 0, len = cl->batch.slot_end[r] - from;
        memcpy(c->batch.buf + c->wlen, cl->batch.buf + from, len);
        c->wlen += len;
        c->route[c->inflight++] = r;
        cl->dest[r] = CLIENT_SENT;
    }
    cl->busy = 0;
    for (int n = 0; n < w->nnodes; n++) {
        if (base[n].inflight) {
            base[n].woff = 0;
            base[n].got = 0;
            cl->busy++;
        }
    }
    for (int n = 0; n < w->nnodes; n++)
        if (base[n].inflight && w->io->flush(w, &base[n]) < 0)
            return -1;
    return 0;
}

static int client_send(bench_worker_t *w, int client, int k, double t0, double step) {
    bench_client_t *cl = &w->clients[client];
    bench_batch_next(&cl->batch, &w->gen, k);
    cl->k = k;
    cl->unanswered = k;
    for (int r = 0; r < k; r++) {
        cl->t0[r] = (uint64_t)(t0 + step * r);
        cl->dest[r] = (int16_t)client_node(w, client, cl, r);
        cl->ask[r] = 0;
        cl->hops[r] = 0;
    }
    w->issued += (uint64_t)k;
    w->active++;
    return client_round(w, client);
}

/* A batch of k requests for client idx (a connection, or --cluster's
 * client) whose latencies start at t0, t0+step, ... */
static int worker_send_to(bench_worker_t *w, int idx, int k, double t0, double step) {
    if (w->cl)
        return client_send(w, idx, k, t0, step);
    return worker_send(w, &w->conns[idx], k, t0, step);
}

/* Closed loop: the next batch goes out right away. */
static int worker_next(bench_worker_t *w, int idx, uint64_t now) {
    if (w->o->rate > 0) {
        w->idle[(w->idle_head + w->nidle++) % w->nconns] = idx;
        return 0;
    }
    int k = worker_budget(w, now);
    if (k == 0) {
        if (!w->cl)
            w->conns[idx].finished = 1;
        return 0;
    }
    return worker_send_to(w, idx, k, (double)now, 0);
}

/* Open loop: hand due requests to idle connections, the one idle longest
 * first (every connection carries its share, as in a pool used round
 * robin), spread over all idle ones: a connection pipelines only when more
 * requests are due than connections are idle (at most -P each). */
static int worker_dispatch_due(bench_worker_t *w, uint64_t now) {
    while (w->nidle > 0 && w->next_due_ns <= (double)now) {
        int idx = w->idle[w->idle_head];
        int k = worker_budget(w, now);
        if (k == 0)
            return 0;
        int due = (int)(((double)now - w->next_due_ns) / w->interval_ns) + 1;
        int share = (due + w->nidle - 1) / w->nidle;
        if (share < k)
            k = share;
        w->idle_head = (w->idle_head + 1) % w->nconns;
        w->nidle--;
        if (worker_send_to(w, idx, k, w->next_due_ns, w->interval_ns) < 0)
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
static long cluster_feed(bench_worker_t *w, bench_conn_t *c, const char *buf, size_t len,
                         uint64_t now);

/* The connection's parser over buf: the bytes it used, or -1 when the
 * reply is malformed or answers more requests than are in flight (the
 * worker has failed then). */
static long feed_parser(bench_worker_t *w, bench_conn_t *c, const char *buf, size_t len,
                        bench_resp_out_t *out) {
    long used = bench_resp_feed(&c->rs, buf, len, out);
    if (used < 0) {
        bench_worker_fail(w, "Error: protocol error in server reply");
        return -1;
    }
    if (out->replies > (uint32_t)c->inflight) {
        bench_worker_fail(w, "Error: more replies than requests (unexpected push data?)");
        return -1;
    }
    return used;
}

static long worker_feed(bench_worker_t *w, bench_conn_t *c, const char *buf, size_t len,
                        uint64_t now) {
    if (w->cl)
        return cluster_feed(w, c, buf, len, now);
    bench_resp_out_t out;
    long used = feed_parser(w, c, buf, len, &out);
    if (used < 0)
        return -1;
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

/* --cluster: an error reply to request r (-1: to an ASKING).  Returns 1
 * when it was a redirect, now queued for the client's next round, 0 when it
 * counts as an error reply, -1 when the worker fails. */
static int cluster_error(bench_worker_t *w, bench_client_t *cl, int r, const char *e, size_t len) {
    int ask, node;
    unsigned slot;
    if (r < 0) {
        worker_note_error(w, e, len); /* the request behind it tells the rest */
        return 1;
    }
    if (!bench_cluster_redirect(w->cl, e, len, &ask, &slot, &node) || cl->hops[r] >= CLIENT_MAX_HOPS)
        return 0;
    if (node < 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), "Error: -%.*s: not a master of the cluster map read at start",
                 (int)(len < 160 ? len : 160), e);
        bench_worker_fail(w, msg);
        return -1;
    }
    cl->hops[r]++;
    if (ask) {
        w->asked++;
        cl->ask[r] = 1;
    } else {
        w->moved++;
        w->slots[slot] = (uint8_t)node;
    }
    cl->dest[r] = (int16_t)node;
    return 1;
}

/* --cluster's worker_feed: replies map to the client's requests through
 * c->route; the skipper stops after each error reply so that a redirect is
 * known by its request. */
static long cluster_feed(bench_worker_t *w, bench_conn_t *c, const char *buf, size_t len,
                         uint64_t now) {
    bench_client_t *cl = &w->clients[c->idx / w->nnodes];
    size_t pos = 0;
    while (pos < len) {
        bench_resp_out_t out;
        long used = feed_parser(w, c, buf + pos, len - pos, &out);
        if (used < 0)
            return -1;
        for (uint32_t j = 0; j < out.replies; j++) {
            int r = c->route[c->got++];
            int is_err = out.errors && j == out.replies - 1;
            const char *e = out.err ? out.err : "";
            size_t elen = out.err ? out.err_len : 0;
            if (is_err) {
                int rc = cluster_error(w, cl, r, e, elen);
                if (rc < 0)
                    return -1;
                if (rc > 0)
                    continue;
            }
            if (r < 0)
                continue; /* +OK to an ASKING */
            w->kind_count[cl->batch.kinds[r]]++;
            hist_record(w->hist, now > cl->t0[r] ? now - cl->t0[r] : 0);
            cl->dest[r] = CLIENT_DONE;
            cl->unanswered--;
            w->completed++;
            if (is_err) {
                w->errors++;
                worker_note_error(w, e, elen);
            }
        }
        c->inflight -= (int)out.replies;
        pos += (size_t)used;
        if (!out.errors || used == 0)
            break; /* no stop at an error: all whole replies are in */
    }
    return (long)pos;
}

/* After new replies: when the batch is complete, reconnect (-k 0) and send
 * the next one.  --cluster: when the client's round is complete, send the
 * redirected requests again or, with all answered, the next batch. */
static int worker_after_replies(bench_worker_t *w, bench_conn_t *c, uint32_t replies,
                                uint64_t now) {
    if (c->inflight > 0 || replies == 0)
        return 0;
    if (w->cl) {
        int client = c->idx / w->nnodes;
        bench_client_t *cl = &w->clients[client];
        if (--cl->busy > 0)
            return 0;
        if (cl->unanswered > 0)
            return client_round(w, client);
        w->active--;
        return worker_next(w, client, now);
    }
    w->active--;
    if (!w->o->keepalive) {
        w->io->del(w, c);
        bench_sock_close(c->fd);
        c->fd = -1;
        if (bench_worker_open(w, c) < 0)
            return -1;
    }
    return worker_next(w, c->idx, now);
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
    for (int i = 0; i < w->nclients; i++)
        if (worker_next(w, i, w->start_ns) < 0)
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
