/* bench_worker.h: one worker thread of the benchmark and the I/O engine
 * contract its event loop runs on.
 *
 * bench_worker.c holds what every engine shares: connection set-up, batch
 * budgeting (closed and open loop), counting replies into the histogram and
 * the loop that decides timeouts.  An engine (bench_epoll.c, bench_uring.c)
 * only moves bytes: it sends a connection's batch, waits for readiness or
 * completions and hands received bytes back through bench_worker_input*().
 * Used by bench_engine.c (threads, results) and the two engines only. */
#ifndef RL_BENCH_WORKER_H
#define RL_BENCH_WORKER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_engine.h"
#include "bench_resp.h"
#include "bench_workload.h"

#define BENCH_RBUF 65536 /* bytes a partial reply header line may take */

/* Invariants: 0 <= got <= got + inflight <= batch.slots; woff <= wlen;
 * rbuf[0, rlen) holds an incomplete header line, nothing else. */
typedef struct bench_conn {
    int fd;
    int idx;      /* position in the worker's conns[] */
    uint32_t gen; /* bumped at each reconnect (-k 0) */
    bench_batch_t batch;
    size_t wlen, woff; /* current batch bytes, bytes sent so far */
    int inflight;      /* requests of the batch still without reply */
    int got;           /* replies of the batch received */
    int finished;      /* no more requests for this connection */
    int writing;       /* epoll: EPOLLOUT armed for a short send */
    int send_busy;     /* io_uring: a send of this batch is in flight */
    int send_queued;   /* io_uring: a new batch waits for send_busy */
    uint64_t *t0;      /* per request: start of its latency, ns */
    bench_resp_t rs;
    char *rbuf; /* BENCH_RBUF bytes */
    size_t rlen;
    int *route; /* --cluster: per reply, its request in the client's batch (-1: ASKING) */
} bench_conn_t;

/* --cluster: one client of -c.  Its batch is split by slot over its
 * connections conns[client * nnodes + node]; a request answered -MOVED or
 * -ASK is sent again in a next round of the same batch, and the batch is
 * done when every request has its final reply.
 * Invariant: 0 <= busy <= nnodes; dest[r] >= 0 only for requests waiting
 * for the next round, CLIENT_SENT while one is on its way, CLIENT_DONE. */
typedef struct bench_client {
    bench_batch_t batch;
    uint64_t *t0;   /* per request: start of its latency, ns */
    int16_t *dest;  /* per request: node of its next round, or below */
    uint8_t *ask;   /* per request: send ASKING before it */
    uint8_t *hops;  /* per request: redirects followed */
    int k;          /* requests in the batch */
    int unanswered; /* requests without their final reply */
    int busy;       /* connections with replies still due this round */
} bench_client_t;

struct bench_io;

typedef struct bench_worker {
    const bench_opts_t *o;
    const bench_test_t *t;
    const struct bench_io *io; /* the engine this worker runs on */
    void *io_state;            /* engine's own per-worker state */
    int idx, nthreads;
    int nconns;
    bench_conn_t *conns;
    bench_gen_t gen;
    hist_t *hist;
    uint64_t quota, issued; /* requests this worker may send / has sent */
    uint64_t completed, errors;
    uint64_t kind_count[BENCH_MAX_CMDS];
    uint64_t start_ns, end_ns, deadline_ns;
    int active;         /* connections with a batch in flight */
    double interval_ns; /* --rate: ns between this worker's requests */
    double next_due_ns;
    int *idle; /* --rate: connections waiting for a due time, a FIFO ring */
    int idle_head, nidle;
    char first_error[160];
    int fail;
    char errmsg[256];
    pthread_barrier_t *barrier;
    struct bench_worker *all; /* every worker, to see failures after the barrier */
    /* --cluster (bench_cluster.h): nconns == nclients * nnodes */
    const struct bench_cluster *cl;
    int nclients, nnodes;
    bench_client_t *clients;
    uint8_t *slots;        /* this worker's slot -> node table, updated on -MOVED */
    uint64_t moved, asked; /* redirects followed */
    pthread_t tid;
} bench_worker_t;

/* An I/O engine.  All calls come from the worker's own thread; each returns
 * 0 or -1 after bench_worker_fail(). */
typedef struct bench_io {
    const char *name;
    int (*init)(bench_worker_t *w);                   /* before any connection */
    int (*add)(bench_worker_t *w, bench_conn_t *c);   /* c->fd open, non-blocking */
    void (*del)(bench_worker_t *w, bench_conn_t *c);  /* c->fd is closed next */
    int (*flush)(bench_worker_t *w, bench_conn_t *c); /* send batch [woff, wlen) */
    int (*wait)(bench_worker_t *w, long timeout_us);  /* block, handle what came */
    void (*fini)(bench_worker_t *w);                  /* frees io_state; idempotent */
} bench_io_t;

extern const bench_io_t bench_io_epoll;
extern const bench_io_t bench_io_uring;
/* 0 when this kernel lets us build the rings bench_io_uring needs (and the
 * tool was built with liburing), else -1 with the reason in err. */
int bench_uring_probe(char *err, size_t errlen);

uint64_t bench_now_ns(void);
/* Records the first failure of the worker; later ones are dropped. */
void bench_worker_fail(bench_worker_t *w, const char *msg);
/* Connect (--cluster: to the connection's node), handshake, non-blocking,
 * io->add.  0 or -1. */
int bench_worker_open(bench_worker_t *w, bench_conn_t *c);
/* --cluster: the client's arrays and its connections' send buffers, after
 * the workload's batch of the client is set up.  0 or -1. */
int bench_worker_client_init(bench_worker_t *w, int client);
void bench_worker_client_free(bench_worker_t *w, int client);
/* n new bytes were received at c->rbuf + c->rlen: count the replies and
 * send the next batch when this one is complete.  0 or -1. */
int bench_worker_input_rbuf(bench_worker_t *w, bench_conn_t *c, size_t n, uint64_t now);
/* The same for len bytes that arrived in a buffer of the engine's (borrowed;
 * only an unfinished header line is copied into c->rbuf). */
int bench_worker_input(bench_worker_t *w, bench_conn_t *c, const char *data, size_t len,
                       uint64_t now);
/* Runs the test on this worker's connections until its budget is spent. */
int bench_worker_loop(bench_worker_t *w);
/* Live counters of worker slot i, for the progress line and the memory
 * sampler (relaxed reads; only that worker writes them). */
uint64_t bench_worker_live_done(int i);
uint64_t bench_worker_live_p99(int i);

#endif
