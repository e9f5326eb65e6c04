/* bench_uring.c: the io_uring I/O engine of the benchmark (bench_io_uring).
 *
 * Why: on loopback nearly all of a client's CPU is kernel time, and with
 * epoll every connection pays its own send() and recv() system call per
 * batch.  Here one io_uring_submit_and_wait_timeout() per loop turn submits
 * the sends of every connection whose batch completed since the last turn
 * and collects the replies of all of them, so N connections cost one system
 * call where epoll needs 2N+1.  Per worker, one ring and:
 *  - one multishot recv per connection, armed once for the whole test; the
 *    kernel puts each chunk in a buffer of the worker's provided-buffer ring
 *    (URING_BGID), replies are counted straight from it and it is handed
 *    back (no copy unless a header line is split across chunks);
 *  - one send SQE per batch with MSG_WAITALL (the kernel finishes short
 *    sends itself) and, where the kernel allows, no completion on success;
 *  - sockets registered as fixed files (no file lookup per operation);
 *  - SINGLE_ISSUER|DEFER_TASKRUN when available: receive work runs only
 *    when this thread asks for completions, so it is not woken per reply.
 * user_data = kind | conn idx << 2 | conn gen << 32; completions of a
 * connection replaced by -k 0 carry an old gen and are dropped.
 * --tls: after the blocking handshake the session moves onto memory BIOs
 * (bench_tls.h).  Each received chunk is fed to it and the plaintext read
 * back goes to the reply parser; a batch is encrypted when it is flushed
 * and its ciphertext, copied into the connection's uring_tls_t, leaves by
 * the same send SQE, always with a completion (the buffer is reused only
 * after it).  Built
 * without liburing (no BENCH_HAVE_URING), or with RL_BENCH_NO_IO_URING set
 * in the environment, bench_uring_probe() fails and --engine auto uses
 * epoll. */
#include "bench_tls.h"
#include "bench_worker.h"

#include <stdio.h>

#ifdef BENCH_HAVE_URING

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define URING_BGID 1
#define URING_KIND_RECV 1u
#define URING_KIND_SEND 2u
#define URING_KIND_CANCEL 3u
#define URING_MAX_SQ 32768u
#define URING_MAX_CQ 65536u
#define URING_MAX_BUFS 32768u
#define URING_PLAIN 16384u /* --tls: plaintext read per SSL_read (one record) */

/* --tls: one connection's ciphertext on its way out.  off <= len <= cap;
 * buf[off, len) is what the send in flight (or the next one) carries. */
typedef struct uring_tls {
    char *buf;
    size_t cap, len, off; /* bytes */
} uring_tls_t;

typedef struct uring_state {
    struct io_uring ring;
    int ring_ok;                  /* ring was created: exit it in fini */
    int fixed;                    /* sockets are fixed files: sqe fd = conn idx */
    int skip_send_cqe;            /* successful sends post no completion */
    struct io_uring_buf_ring *br; /* provided buffer ring, URING_BGID */
    size_t br_bytes;              /* its mmap length */
    char *bufs;                   /* nbufs * bufsize bytes of receive buffers */
    unsigned nbufs, bufsize, mask;
    unsigned returned; /* buffers given back, not yet published */
    uring_tls_t *tls;  /* --tls: per connection, else NULL */
    unsigned ntls;     /* entries of tls */
    char *plain;       /* --tls: URING_PLAIN bytes of decrypted input */
} uring_state_t;

static uint64_t uring_tag(unsigned kind, const bench_conn_t *c) {
    return kind | ((uint64_t)c->idx << 2) | ((uint64_t)c->gen << 32);
}

static unsigned uring_pow2(unsigned n, unsigned lo, unsigned hi) {
    unsigned p = lo;
    while (p < n && p < hi)
        p <<= 1;
    return p;
}

/* Creates the ring with the cheapest task-work mode this kernel accepts. */
static int uring_ring_init(struct io_uring *ring, unsigned entries, unsigned cq_entries) {
    static const unsigned modes[] = {
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, /* 6.1+ */
        IORING_SETUP_COOP_TASKRUN,                               /* 5.19+ */
        0,
    };
    int rc = -EINVAL;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = modes[i] | IORING_SETUP_CQSIZE;
        p.cq_entries = cq_entries;
        rc = io_uring_queue_init_params(entries, ring, &p);
        if (rc != -EINVAL)
            break;
    }
    return rc;
}

/* Registers nbufs receive buffers of bufsize bytes as group URING_BGID. */
static int uring_bufs_init(uring_state_t *s, unsigned nbufs, unsigned bufsize) {
    s->br_bytes = (size_t)nbufs * sizeof(struct io_uring_buf);
    void *mem = mmap(NULL, s->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        s->br = NULL;
        return -ENOMEM;
    }
    s->br = mem;
    s->bufs = malloc((size_t)nbufs * bufsize);
    if (!s->bufs)
        return -ENOMEM;
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof(reg));
    reg.ring_addr = (unsigned long)mem;
    reg.ring_entries = nbufs;
    reg.bgid = URING_BGID;
    int rc = io_uring_register_buf_ring(&s->ring, &reg, 0);
    if (rc < 0)
        return rc;
    s->nbufs = nbufs;
    s->bufsize = bufsize;
    s->mask = io_uring_buf_ring_mask(nbufs);
    io_uring_buf_ring_init(s->br);
    for (unsigned i = 0; i < nbufs; i++)
        io_uring_buf_ring_add(s->br, s->bufs + (size_t)i * bufsize, bufsize, (unsigned short)i,
                              s->mask, (int)i);
    io_uring_buf_ring_advance(s->br, (int)nbufs);
    return 0;
}

/* Gives buffer bid back; visible to the kernel at uring_bufs_publish(). */
static void uring_buf_return(uring_state_t *s, unsigned bid) {
    io_uring_buf_ring_add(s->br, s->bufs + (size_t)bid * s->bufsize, s->bufsize,
                          (unsigned short)bid, s->mask, (int)s->returned++);
}

static void uring_bufs_publish(uring_state_t *s) {
    if (s->returned) {
        io_uring_buf_ring_advance(s->br, (int)s->returned);
        s->returned = 0;
    }
}

static void uring_state_free(uring_state_t *s) {
    if (s->ring_ok)
        io_uring_queue_exit(&s->ring); /* cancels what is still armed */
    if (s->br)
        munmap(s->br, s->br_bytes);
    free(s->bufs);
    if (s->tls)
        for (unsigned i = 0; i < s->ntls; i++)
            free(s->tls[i].buf);
    free(s->tls);
    free(s->plain);
    free(s);
}

/* A free SQE, submitting the queued ones first when the queue is full. */
static struct io_uring_sqe *uring_sqe(bench_worker_t *w, uring_state_t *s) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
    if (!sqe) {
        io_uring_submit(&s->ring);
        sqe = io_uring_get_sqe(&s->ring);
    }
    if (!sqe)
        bench_worker_fail(w, "io_uring submission queue full");
    return sqe;
}

static void uring_set_file(uring_state_t *s, struct io_uring_sqe *sqe, const bench_conn_t *c) {
    if (s->fixed) {
        sqe->fd = c->idx;
        sqe->flags |= IOSQE_FIXED_FILE;
    }
}

static int uring_arm_recv(bench_worker_t *w, uring_state_t *s, bench_conn_t *c) {
    struct io_uring_sqe *sqe = uring_sqe(w, s);
    if (!sqe)
        return -1;
    io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    uring_set_file(s, sqe, c);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BGID;
    io_uring_sqe_set_data64(sqe, uring_tag(URING_KIND_RECV, c));
    return 0;
}

/* Queues the unsent part of c's batch; it goes out at the next wait. */
static int uring_send(bench_worker_t *w, uring_state_t *s, bench_conn_t *c) {
    struct io_uring_sqe *sqe = uring_sqe(w, s);
    if (!sqe)
        return -1;
    io_uring_prep_send(sqe, c->fd, c->batch.buf + c->woff, c->wlen - c->woff,
                       MSG_NOSIGNAL | MSG_WAITALL);
    uring_set_file(s, sqe, c);
    if (s->skip_send_cqe)
        sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    else
        c->send_busy = 1;
    io_uring_sqe_set_data64(sqe, uring_tag(URING_KIND_SEND, c));
    return 0;
}

/* --tls: sends the ciphertext the session holds, unless a send is in
 * flight (its completion calls this again). */
static int uring_tls_send(bench_worker_t *w, uring_state_t *s, bench_conn_t *c) {
    uring_tls_t *t = &s->tls[c->idx];
    if (c->send_busy)
        return 0;
    if (t->off == t->len) {
        t->off = t->len = 0;
        size_t want = bench_tls_out_pending(c->fd);
        if (!want)
            return 0;
        if (want > t->cap) {
            char *nb = realloc(t->buf, want);
            if (!nb) {
                bench_worker_fail(w, "out of memory");
                return -1;
            }
            t->buf = nb;
            t->cap = want;
        }
        t->len = bench_tls_drain(c->fd, t->buf, want);
        if (!t->len)
            return 0;
    }
    struct io_uring_sqe *sqe = uring_sqe(w, s);
    if (!sqe)
        return -1;
    io_uring_prep_send(sqe, c->fd, t->buf + t->off, t->len - t->off, MSG_NOSIGNAL | MSG_WAITALL);
    uring_set_file(s, sqe, c);
    c->send_busy = 1;
    io_uring_sqe_set_data64(sqe, uring_tag(URING_KIND_SEND, c));
    return 0;
}

/* --tls: encrypts the batch's unsent plaintext into the session, then sends. */
static int uring_tls_flush(bench_worker_t *w, uring_state_t *s, bench_conn_t *c) {
    while (c->woff < c->wlen) {
        ssize_t n = bench_sock_send(c->fd, c->batch.buf + c->woff, c->wlen - c->woff);
        if (n <= 0) {
            bench_worker_fail(w, "Error: TLS: encrypting a request failed");
            return -1;
        }
        c->woff += (size_t)n;
    }
    return uring_tls_send(w, s, c);
}

/* --tls: len received ciphertext bytes; the plaintext goes to the parser. */
static int uring_tls_input(bench_worker_t *w, uring_state_t *s, bench_conn_t *c, const char *data,
                           size_t len, uint64_t now) {
    uint32_t gen = c->gen;
    if (bench_tls_feed(c->fd, data, len) < 0) {
        bench_worker_fail(w, "Error: TLS: out of memory");
        return -1;
    }
    for (;;) {
        ssize_t n = bench_sock_recv(c->fd, s->plain, URING_PLAIN);
        if (n < 0 && errno == EAGAIN)
            break;
        if (n <= 0) {
            bench_worker_fail(w, "Error: Server closed the connection");
            return -1;
        }
        if (bench_worker_input(w, c, s->plain, (size_t)n, now) < 0)
            return -1;
        if (c->gen != gen)
            return 0; /* -k 0 replaced the connection */
    }
    return uring_tls_send(w, s, c); /* what reading produced, if anything */
}

static int uring_init(bench_worker_t *w) {
    uring_state_t *s = calloc(1, sizeof(*s));
    char msg[160];
    if (!s) {
        bench_worker_fail(w, "out of memory");
        return -1;
    }
    w->io_state = s;
    unsigned n = (unsigned)w->nconns;
    unsigned sq = uring_pow2(2 * n + 8, 64, URING_MAX_SQ);
    int rc = uring_ring_init(&s->ring, sq, uring_pow2(4 * sq, 256, URING_MAX_CQ));
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "io_uring_queue_init: %s", strerror(-rc));
        bench_worker_fail(w, msg);
        return -1;
    }
    s->ring_ok = 1;
    s->skip_send_cqe = (s->ring.features & IORING_FEAT_CQE_SKIP) != 0;
    /* Two buffers per connection: one being parsed, one being filled;
     * smaller ones past 1024 connections keep the total under 64 MB.  Big
     * reply bursts that drain the ring end a multishot recv with ENOBUFS,
     * which re-arms it: slower, never wrong. */
    rc = uring_bufs_init(s, uring_pow2(2 * n, 16, URING_MAX_BUFS), n > 1024 ? 2048 : 16384);
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "io_uring buffer ring: %s", strerror(-rc));
        bench_worker_fail(w, msg);
        return -1;
    }
    s->fixed = io_uring_register_files_sparse(&s->ring, n) == 0; /* optional */
    if (w->o->tls) {
        s->tls = calloc(n ? n : 1, sizeof(*s->tls));
        s->ntls = n;
        s->plain = malloc(URING_PLAIN);
        if (!s->tls || !s->plain) {
            bench_worker_fail(w, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int uring_add(bench_worker_t *w, bench_conn_t *c) {
    uring_state_t *s = w->io_state;
    /* io_uring retries a socket that is not ready by itself; a blocking
     * socket lets it do so instead of failing with EAGAIN. */
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK);
    c->send_busy = 0;
    c->send_queued = 0;
    if (s->tls) {
        s->tls[c->idx].len = s->tls[c->idx].off = 0;
        if (bench_tls_use_memory(c->fd) != 1) {
            bench_worker_fail(w, "Error: TLS: no session to move onto memory buffers");
            return -1;
        }
    }
    if (s->fixed && io_uring_register_files_update(&s->ring, (unsigned)c->idx, &c->fd, 1) != 1) {
        bench_worker_fail(w, "io_uring: registering a socket failed");
        return -1;
    }
    return uring_arm_recv(w, s, c);
}

/* -k 0: the connection is closed and replaced; stop its receive first. */
static void uring_del(bench_worker_t *w, bench_conn_t *c) {
    uring_state_t *s = w->io_state;
    struct io_uring_sqe *sqe = uring_sqe(w, s);
    if (sqe) {
        io_uring_prep_cancel64(sqe, uring_tag(URING_KIND_RECV, c), 0);
        io_uring_sqe_set_data64(sqe, URING_KIND_CANCEL);
    }
    c->gen++;
}

static int uring_flush(bench_worker_t *w, bench_conn_t *c) {
    uring_state_t *s = w->io_state;
    if (s->tls)
        return uring_tls_flush(w, s, c);
    if (c->send_busy) {
        /* All replies of the previous batch are in, so the kernel has sent
         * its bytes; only its completion is still unread.  Send after it. */
        c->send_queued = 1;
        return 0;
    }
    return uring_send(w, w->io_state, c);
}

static int uring_on_recv(bench_worker_t *w, uring_state_t *s, bench_conn_t *c, uint32_t gen,
                         const struct io_uring_cqe *cqe, uint64_t now) {
    int res = cqe->res;
    if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        int rc = 0;
        const char *data = s->bufs + (size_t)bid * s->bufsize;
        if (res > 0 && gen == c->gen)
            rc = s->tls ? uring_tls_input(w, s, c, data, (size_t)res, now)
                        : bench_worker_input(w, c, data, (size_t)res, now);
        uring_buf_return(s, bid);
        if (rc < 0)
            return -1;
    }
    if (gen != c->gen)
        return 0; /* stale, or the input above reconnected (-k 0) */
    if (res == 0 || (res < 0 && res != -ENOBUFS)) {
        char msg[160];
        if (res == 0 || res == -ECONNRESET)
            snprintf(msg, sizeof(msg), "Error: Server closed the connection");
        else
            snprintf(msg, sizeof(msg), "Error: receive failed: %s", strerror(-res));
        bench_worker_fail(w, msg);
        return -1;
    }
    if (!(cqe->flags & IORING_CQE_F_MORE))
        return uring_arm_recv(w, s, c); /* ran out of buffers: go on */
    return 0;
}

static int uring_on_send(bench_worker_t *w, uring_state_t *s, bench_conn_t *c, uint32_t gen,
                         int res) {
    if (gen != c->gen)
        return 0;
    c->send_busy = 0;
    if (res < 0 && res != -EINTR && res != -EAGAIN) {
        bench_worker_fail(w, "Error: Server closed the connection");
        return -1;
    }
    if (s->tls) {
        if (res > 0)
            s->tls[c->idx].off += (size_t)res;
        return uring_tls_send(w, s, c);
    }
    if (c->send_queued) {
        c->send_queued = 0;
        return uring_send(w, s, c);
    }
    if (res > 0)
        c->woff += (size_t)res;
    return c->woff < c->wlen ? uring_send(w, s, c) : 0;
}

static int uring_on_cqe(bench_worker_t *w, uring_state_t *s, const struct io_uring_cqe *cqe,
                        uint64_t now) {
    uint64_t tag = io_uring_cqe_get_data64(cqe);
    unsigned kind = (unsigned)(tag & 3);
    unsigned idx = (unsigned)(tag >> 2) & 0x3fffffffu;
    uint32_t gen = (uint32_t)(tag >> 32);
    if (kind == URING_KIND_CANCEL || idx >= (unsigned)w->nconns)
        return 0;
    bench_conn_t *c = &w->conns[idx];
    if (kind == URING_KIND_RECV)
        return uring_on_recv(w, s, c, gen, cqe, now);
    return uring_on_send(w, s, c, gen, cqe->res);
}

/* Completions worth waking up for.  Closed loop: half the connections that
 * wait for replies, so one wake-up serves many of them and their next
 * batches leave together (measured with 50 connections against waking per
 * reply: about 7% less client CPU without pipelining, 20% less with -P 16,
 * p50 no worse).  Open loop (--rate): wake for every reply, since its
 * arrival time is the measurement. */
static unsigned uring_wait_nr(const bench_worker_t *w) {
    unsigned want = w->o->rate > 0 ? 1 : (unsigned)w->active / 2;
    return want ? want : 1;
}

static int uring_wait(bench_worker_t *w, long timeout_us) {
    uring_state_t *s = w->io_state;
    struct __kernel_timespec ts = {.tv_sec = timeout_us / 1000000,
                                   .tv_nsec = (long long)(timeout_us % 1000000) * 1000};
    struct io_uring_cqe *cqe;
    int rc = io_uring_submit_and_wait_timeout(&s->ring, &cqe, uring_wait_nr(w), &ts, NULL);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        char msg[160];
        snprintf(msg, sizeof(msg), "io_uring_enter: %s", strerror(-rc));
        bench_worker_fail(w, msg);
        return -1;
    }
    uint64_t now = bench_now_ns();
    unsigned head, seen = 0;
    int ret = 0;
    io_uring_for_each_cqe(&s->ring, head, cqe) {
        seen++;
        if (uring_on_cqe(w, s, cqe, now) < 0) {
            ret = -1;
            break;
        }
    }
    io_uring_cq_advance(&s->ring, seen);
    uring_bufs_publish(s);
    return ret;
}

static void uring_fini(bench_worker_t *w) {
    if (w->io_state)
        uring_state_free(w->io_state);
    w->io_state = NULL;
}

/* End to end on a socketpair: ring, buffer ring, fixed file, multishot
 * receive.  Seccomp filters and io_uring_disabled fail the first step;
 * kernels older than 6.0 fail one of the others. */
int bench_uring_probe(char *err, size_t errlen) {
    if (getenv("RL_BENCH_NO_IO_URING")) {
        snprintf(err, errlen, "disabled by RL_BENCH_NO_IO_URING");
        return -1;
    }
    uring_state_t *s = calloc(1, sizeof(*s));
    int sv[2] = {-1, -1}, rc;
    const char *step = "io_uring_queue_init";
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if ((rc = uring_ring_init(&s->ring, 8, 16)) < 0)
        goto out;
    s->ring_ok = 1;
    step = "buffer ring";
    if ((rc = uring_bufs_init(s, 16, 64)) < 0)
        goto out;
    step = "socketpair";
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
        rc = -errno;
        goto out;
    }
    step = "fixed files";
    if ((rc = io_uring_register_files(&s->ring, &sv[0], 1)) < 0)
        goto out;
    step = "multishot recv";
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
    io_uring_prep_recv_multishot(sqe, 0, NULL, 0, 0);
    sqe->flags |= IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BGID;
    if (write(sv[1], "+", 1) != 1) {
        rc = -errno;
        goto out;
    }
    struct io_uring_cqe *cqe;
    struct __kernel_timespec ts = {.tv_sec = 1, .tv_nsec = 0};
    if ((rc = io_uring_submit_and_wait_timeout(&s->ring, &cqe, 1, &ts, NULL)) < 0)
        goto out;
    rc = cqe->res == 1 && (cqe->flags & IORING_CQE_F_MORE) ? 0 : (cqe->res < 0 ? cqe->res : -EINVAL);
    io_uring_cqe_seen(&s->ring, cqe);
out:
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", step, strerror(-rc));
    uring_state_free(s);
    if (sv[0] >= 0) {
        close(sv[0]);
        close(sv[1]);
    }
    return rc < 0 ? -1 : 0;
}

const bench_io_t bench_io_uring = {
    .name = "io_uring",
    .init = uring_init,
    .add = uring_add,
    .del = uring_del,
    .flush = uring_flush,
    .wait = uring_wait,
    .fini = uring_fini,
};

#else /* !BENCH_HAVE_URING */

int bench_uring_probe(char *err, size_t errlen) {
    snprintf(err, errlen, "built without liburing");
    return -1;
}

static int uring_unavailable(bench_worker_t *w) {
    bench_worker_fail(w, "built without liburing");
    return -1;
}

static void uring_noop(bench_worker_t *w) {
    (void)w;
}

const bench_io_t bench_io_uring = {
    .name = "io_uring",
    .init = uring_unavailable,
    .fini = uring_noop,
};

#endif
