/* io_uring_engine.c: the io_uring socket engine (see io_engine.h).
 *
 * Why: with epoll every request costs a read() and a write() of its own
 * plus a share of epoll_wait.  Here a loop round costs one io_uring_enter
 * that submits the sends of every client answered in the round, whatever
 * the number of clients, and runs the kernel's deferred receive work; an
 * idle loop sleeps in one more, and libevent's non-blocking pass runs only
 * when one of its own sources (timers, listeners, signals, epoll clients)
 * may be ready.
 *
 * Waiting (issue 50): the engine never holds a request that has arrived.
 * A round ends with a non-blocking submit; if requests came during the
 * round, the next round starts at once (io_engine_continue), else the loop
 * sleeps until the first completion.  Batching is the load's own: under
 * saturation each round takes everything that arrived during the last one
 * (one system call for many requests), at low load each request gets its
 * round.  An earlier design waited after busy rounds, up to 500 us, for
 * half of the recently answered clients to send again: it saved CPU for
 * clients in a tight request/reply loop, but an open-loop or pooled client
 * (requests on their own schedule) had each request held until others
 * came or the wait timed out, and its p50 grew tens of times Redis's.
 *
 * Shape: * Shape:
 *  - one ring (SINGLE_ISSUER|DEFER_TASKRUN|TASKRUN_FLAG when the kernel
 *    has them: receive work runs only when we ask, in one batch, and a
 *    sleeping io_uring_enter is woken once for the batch it waits for, not
 *    once per arriving request as with COOP_TASKRUN, the next choice);
 *  - the loop sleeps in io_uring_enter, not in libevent's epoll_wait
 *    (evloop_set_sleeper): a DEFER_TASKRUN ring wakes only a thread
 *    waiting in the ring promptly.  Through an eventfd, the kernel here
 *    (6.18) signalled new receive work 8-16 ms late, a lone client's every
 *    request; its ring fd in epoll never signalled it.  The rest of the
 *    loop (listeners, timers, signals, epoll clients) wakes the same
 *    sleep: a poll in the ring on evloop's mirror epoll set, the timeout
 *    of the next timer, and EINTR;
 *  - a provided-buffer ring of up to URING_NBUFS_MAX buffers of
 *    URING_BUFSIZE bytes shared by all clients; each client has one
 *    multishot recv taking buffers from it.  conn_input() parses straight
 *    from the buffer and copies only an unfinished request into the query
 *    buffer, then the buffer goes back to the ring.  The ring is sized to
 *    the load (see "Receive buffers' memory" below);
 *  - a send (or sendmsg over the static buffer and reply blocks) per client
 *    with output, one at a time, straight from the client's own buffers:
 *    output counts against client-output-buffer-limit until the kernel took
 *    it, as on epoll.  A short send completes with what was taken and the
 *    rest is queued again, as epoll's partial write and writable event do.
 *
 * Completions are copied into a FIFO (`q`) before any is handled: handling
 * one may run commands that serve other clients while a script is busy
 * (io_engine_serve_now) or wait for one client's send (conn_flush_now),
 * and the FIFO keeps every client's completions in arrival order through
 * such nesting.
 *
 * Receive buffers' memory (issue 49): the buffers are one mmap()ed
 * region, outside the allocator, reported as INFO's mem_io_buffers (its
 * resident pages, by mincore) and taken out of mem_fragmentation_ratio:
 * they are the network's working memory, like the kernel's socket
 * buffers, not data, so they must not count against maxmemory either.
 * Only the first `nactive` buffers circulate; the kernel takes buffers
 * in the order they were given back, so every circulating buffer gets
 * touched however light the load, and the count is what bounds RSS.  It
 * starts at URING_NBUFS_MIN and doubles when the ring runs low (fewer
 * than a quarter of the circulating buffers left in the ring when
 * completions are pulled, or a multishot ended for want of a buffer),
 * up to URING_NBUFS_MAX.  io_engine_cron() looks once a second: after
 * URING_SHRINK_AFTER seconds in which at most a quarter were ever in
 * use at once, the count halves each second (a buffer beyond the count
 * is not given back to the ring when it returns, and its pages go back
 * to the kernel with MADV_DONTNEED); after each second of such light
 * use, the pages of every buffer waiting in the ring go back too (the
 * kernel's next write there faults in a fresh zero page).  A burst
 * thus leaves nothing resident a few seconds later, and the cost under
 * load is nil: the checks are counters, the system calls are in the
 * cron.
 *
 * Lifetime: a client's uring_conn_t outlives the client while the kernel
 * still owns one of its operations; user_data is its address with the kind
 * in the low bits.  A client freed with a send in flight keeps its memory
 * (conn_release() frees it when the send ends): the kernel may still read
 * those bytes.  Any error on a client's operation closes that client only. */
#include "io_engine.h"

#include <string.h>

#include "conn.h"
#include "evloop.h"
#include "log.h"
#include "zmalloc.h"

const char *io_engine_name(const server_t *srv) { return srv->uring ? "io_uring" : "epoll"; }

#ifdef RL_HAVE_URING

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define URING_BGID 0
#define URING_NBUFS_MAX 256u      /* receive buffers shared by every client, at most */
#define URING_NBUFS_MIN 16u       /* circulating at start and when idle */
#define URING_BUFSIZE (16 * 1024) /* bytes each: CLIENT_READ_CHUNK, epoll's read size */
#define URING_BUFS_BYTES ((size_t)URING_NBUFS_MAX * URING_BUFSIZE)
/* Seconds of low use (at most a quarter of the circulating buffers out at
 * once) before the count halves, once a second after that. */
#define URING_SHRINK_AFTER 2
#define URING_SQ_ENTRIES 1024u
#define URING_CQ_ENTRIES 8192u
#define URING_MAX_IOV 32 /* conn.c's MAX_IOV: blocks per sendmsg */
/* Rounds served back to back (io_engine_continue) before libevent's
 * turn: its timers, listeners, signals and epoll clients wait at most
 * that many rounds' work. */
#define URING_BUSY_ROUNDS 16

/* The poll on the loop's mirror epoll set: a kind of CANCEL's bits, so
 * that nothing reads a connection from it. */
#define URING_WAKE_TAG ((uint64_t)4 | KIND_CANCEL)

/* Where a receive buffer is (uring_engine.bstate). */
enum { BUF_RETIRED = 0, /* beyond nactive and not in the ring: its pages were given back */
       BUF_IN_RING,     /* the kernel may fill it */
       BUF_OUT };       /* filled: its completion has not been handled yet */

enum { KIND_RECV = 1,
       KIND_SEND = 2,
       KIND_CANCEL = 3,
       KIND_MASK = 3 };

/* One client's operations.  Invariant: freed when client == NULL and
 * neither the receive nor a send is in flight. */
typedef struct uring_conn {
    client_t *client; /* NULL once conn_free ran */
    client_t *zombie; /* freed client whose buffers a send still reads */
    int fd;
    bool recv_armed;    /* a multishot recv is (or is queued to be) armed */
    bool send_inflight; /* a send of the client's output is in the kernel */
    bool closing;       /* cancels queued: ignore data, do not re-arm */
    bool in_callback;   /* conn.c is running on its behalf: not freed yet */
    /* Where the engine stood when its oldest unanswered receive was handled
     * (stat_rounds, stat_enters, stat_submits): the reply's distance from
     * it is counted at the send (io_uring_reply_after_* in INFO). */
    bool unanswered;
    unsigned long long arr_round, arr_enter, arr_submit;
    struct msghdr msg; /* sendmsg's header and vectors: read by the kernel */
    struct iovec iov[URING_MAX_IOV];
} uring_conn_t;

typedef struct cqe_copy {
    uint64_t data; /* 0 = already handled */
    int32_t res;
    uint32_t flags;
} cqe_copy_t;

struct uring_engine {
    server_t *srv;
    const io_conn_ops_t *ops; /* conn.c's, the only way up */
    struct io_uring ring;
    bool taskrun_flag; /* IORING_SQ_TASKRUN tells whether receive work waits */
    bool wake_armed;   /* the poll on the loop's mirror epoll set is in the ring */
    struct io_uring_buf_ring *br;
    size_t br_bytes;
    char *bufs; /* URING_BUFS_BYTES reserved by mmap(): in mem_io_buffers, not used_memory */
    unsigned mask, returned;
    /* Sizing (see "Receive buffers' memory").  Invariant: in_ring is the
     * number of BUF_IN_RING entries of bstate, out of BUF_OUT ones. */
    unsigned nactive;                /* buffers [0, nactive) circulate */
    unsigned in_ring, out;           /* buffers the kernel may fill; filled, not handled yet */
    unsigned out_peak;               /* most buffers out at once since the last cron look */
    uint8_t bstate[URING_NBUFS_MAX]; /* BUF_* per buffer id */
    bool dirty;                      /* a buffer was filled since the pages were last given back */
    int low_looks;                   /* cron looks in a row with out_peak <= nactive / 4 */
    long long last_look_ms;          /* the cron's last look (srv->mstime) */
    unsigned long long stat_grows, stat_shrinks, stat_releases;
    unsigned queued; /* SQEs prepared since the last submit */
    cqe_copy_t *q;   /* completions copied out of the CQ, oldest first */
    size_t qhead, qlen, qcap;
    int depth;   /* nesting of drain(): only the outermost compacts q */
    int zombies; /* freed clients whose send has not ended */
    int conns;   /* uring_conn_t alive (a client's, or one whose operations have not ended) */
    /* INFO stats (io_engine_info): what a loop round costs. */
    unsigned long long stat_rounds;  /* io_engine_submit calls: loop rounds that reached their end */
    unsigned long long stat_enters;  /* io_uring_enter calls while serving clients */
    unsigned long long stat_sleeps;  /* the loop's sleeps in the ring (engine_sleep) */
    unsigned long long busy_rounds;  /* rounds started by io_engine_continue, not libevent */
    unsigned long long stat_submits; /* io_uring_enter calls that submitted operations */
    /* Per answered receive: loop rounds, enters and submitting enters that
     * passed between its completion and the enter that submits its reply
     * (0, 1, 2, 3 or more).  A request answered in its own round counts 0
     * rounds and 0 enters. */
    unsigned long long reply_rounds[4], reply_enters[4], reply_submits[4];
    unsigned long long stat_recvs;  /* receive completions with request bytes */
    unsigned long long stat_rearms; /* multishot receives that ended and were armed again */
};

/* ------------------------------------------------------------ set-up */

static int ring_init(struct io_uring *ring) {
    static const unsigned modes[] = {
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG, /* 6.1+ */
        IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,                               /* 5.19+ */
        0,
    };
    int rc = -EINVAL;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = modes[i] | IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
        p.cq_entries = URING_CQ_ENTRIES;
        /* Memory outside zmalloc: liburing maps the kernel's submission
         * and completion rings (~200 KB here): in mem_io_buffers. */
        rc = io_uring_queue_init_params(URING_SQ_ENTRIES, ring, &p);
        if (rc != -EINVAL) break;
    }
    return rc;
}

static char *buf_addr(const struct uring_engine *e, unsigned bid) { return e->bufs + (size_t)bid * URING_BUFSIZE; }

static void buf_give_back_pages(struct uring_engine *e, unsigned first, unsigned n) {
    if (n) madvise(buf_addr(e, first), (size_t)n * URING_BUFSIZE, MADV_DONTNEED);
}

static void buf_to_ring(struct uring_engine *e, unsigned bid) {
    io_uring_buf_ring_add(e->br, buf_addr(e, bid), URING_BUFSIZE, (unsigned short)bid, e->mask, (int)e->returned++);
    e->bstate[bid] = BUF_IN_RING;
    e->in_ring++;
}

/* The kernel filled buffer bid (a completion carries it): it is ours
 * until buf_return. */
static void buf_taken(struct uring_engine *e, unsigned bid) {
    if (bid >= URING_NBUFS_MAX || e->bstate[bid] != BUF_IN_RING) return;
    e->bstate[bid] = BUF_OUT;
    e->in_ring--;
    e->out++;
    if (e->out > e->out_peak) e->out_peak = e->out;
    e->dirty = true;
}

/* Done with buffer bid: back to the ring, or retired (pages given back)
 * when the ring shrank below it. */
static void buf_return(struct uring_engine *e, unsigned bid) {
    if (bid >= URING_NBUFS_MAX) return;
    if (e->bstate[bid] == BUF_OUT) e->out--;
    if (bid < e->nactive) {
        buf_to_ring(e, bid);
    } else {
        e->bstate[bid] = BUF_RETIRED;
        buf_give_back_pages(e, bid, 1);
    }
}

/* The ring runs low: double the circulating buffers.  Buffers beyond the
 * old count that are still in the ring (a shrink not yet finished) stay
 * there; retired ones go back in. */
static void bufs_grow(struct uring_engine *e) {
    if (e->nactive >= URING_NBUFS_MAX) return;
    unsigned n = e->nactive * 2 < URING_NBUFS_MAX ? e->nactive * 2 : URING_NBUFS_MAX;
    for (unsigned bid = e->nactive; bid < n; bid++)
        if (e->bstate[bid] == BUF_RETIRED) buf_to_ring(e, bid);
    e->nactive = n;
    e->stat_grows++;
}

static bool bufs_low(const struct uring_engine *e) { return e->in_ring < e->nactive / 4; }

/* Give back the pages of every buffer waiting in the ring from `first`
 * on (one madvise per run of such buffers).  Safe only where the kernel
 * fills buffers in our own thread: with DEFER_TASKRUN the receive work
 * runs inside this thread's io_uring_enter, never while the cron runs, so
 * no buffer is being written as its pages go.  Elsewhere only buffers
 * that came back to us (retired in buf_return) give their pages back.
 * A buffer the kernel already filled may still sit in the completion
 * queue, not yet pulled (the loop's timers, hence the cron, can run
 * between the sleep's return and the next drain): pulling first marks it
 * out, so its data is never zeroed before it is parsed. */
static void pull(struct uring_engine *e, bool enter);
static void bufs_release_from(struct uring_engine *e, unsigned first) {
    if (!(e->ring.flags & IORING_SETUP_DEFER_TASKRUN)) return;
    pull(e, false); /* the next drain handles what it queued */
    unsigned run = first, n = 0;
    for (unsigned bid = first; bid < URING_NBUFS_MAX; bid++) {
        if (e->bstate[bid] == BUF_IN_RING) {
            if (!n) run = bid;
            n++;
            continue;
        }
        buf_give_back_pages(e, run, n);
        n = 0;
    }
    buf_give_back_pages(e, run, n);
}

static void bufs_publish(struct uring_engine *e) {
    if (!e->returned) return;
    io_uring_buf_ring_advance(e->br, (int)e->returned);
    e->returned = 0;
}

/* The buffers and the ring of their addresses are mmap()ed, not
 * zmalloc()ed: the kernel writes into them at any time, they must be
 * page-aligned to give pages back, and a forked child must not copy them.
 * Counted by io_engine_memory() (INFO mem_io_buffers). */
static int bufs_init(struct uring_engine *e) {
    e->br_bytes = URING_NBUFS_MAX * sizeof(struct io_uring_buf);
    void *ring_mem = mmap(NULL, e->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* Address space only: a page is resident once the kernel writes it. */
    void *bufs = mmap(NULL, URING_BUFS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (ring_mem == MAP_FAILED || bufs == MAP_FAILED) {
        if (ring_mem != MAP_FAILED) munmap(ring_mem, e->br_bytes);
        if (bufs != MAP_FAILED) munmap(bufs, URING_BUFS_BYTES);
        return -ENOMEM;
    }
    /* A forked child (BGSAVE, rewrite) never receives: do not copy these. */
    madvise(bufs, URING_BUFS_BYTES, MADV_DONTFORK);
    madvise(ring_mem, e->br_bytes, MADV_DONTFORK);
    e->br = ring_mem;
    e->bufs = bufs;
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof(reg));
    reg.ring_addr = (unsigned long)ring_mem;
    reg.ring_entries = URING_NBUFS_MAX;
    reg.bgid = URING_BGID;
    int rc = io_uring_register_buf_ring(&e->ring, &reg, 0);
    if (rc < 0) return rc;
    e->mask = io_uring_buf_ring_mask(URING_NBUFS_MAX);
    io_uring_buf_ring_init(e->br);
    e->nactive = URING_NBUFS_MIN;
    for (unsigned i = 0; i < e->nactive; i++) buf_to_ring(e, i);
    bufs_publish(e);
    return 0;
}

static void engine_destroy(struct uring_engine *e) {
    io_uring_queue_exit(&e->ring); /* cancels whatever is still armed */
    if (e->br) munmap(e->br, e->br_bytes);
    if (e->bufs) munmap(e->bufs, URING_BUFS_BYTES);
    zfree(e->q);
    zfree(e);
}

/* Everything the engine relies on, end to end on a socketpair: the ring,
 * the buffer ring, and a multishot recv on a non-blocking
 * socket that waits for data (older kernels fail it with EAGAIN). */
static int probe(struct uring_engine *e, const char **step) {
    int sv[2], rc;
    *step = "socketpair";
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0) return -errno;
    *step = "multishot recv";
    struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
    io_uring_prep_recv_multishot(sqe, sv[0], NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BGID;
    io_uring_sqe_set_data64(sqe, 0);
    rc = io_uring_submit(&e->ring);
    struct io_uring_cqe *cqe;
    if (rc >= 0 && io_uring_peek_cqe(&e->ring, &cqe) == 0) rc = cqe->res < 0 ? cqe->res : -EINVAL;
    if (rc >= 0 && write(sv[1], "+", 1) != 1) rc = -errno;
    if (rc >= 0) {
        struct __kernel_timespec ts = {.tv_sec = 1, .tv_nsec = 0};
        rc = io_uring_wait_cqe_timeout(&e->ring, &cqe, &ts);
        if (rc == 0) {
            bool ok = cqe->res == 1 && (cqe->flags & IORING_CQE_F_MORE) && (cqe->flags & IORING_CQE_F_BUFFER);
            rc = ok ? 0 : cqe->res < 0 ? cqe->res
                                       : -EINVAL;
            if (cqe->flags & IORING_CQE_F_BUFFER) {
                buf_taken(e, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
                buf_return(e, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
            }
            io_uring_cqe_seen(&e->ring, cqe);
            bufs_publish(e);
        }
    }
    close(sv[0]); /* the recv still holds the socket: cancel it */
    close(sv[1]);
    struct io_uring_sqe *c = io_uring_get_sqe(&e->ring);
    io_uring_prep_cancel64(c, 0, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(c, KIND_CANCEL);
    io_uring_submit_and_wait(&e->ring, 1);
    unsigned head;
    io_uring_for_each_cqe(&e->ring, head, cqe) {
        if (cqe->flags & IORING_CQE_F_BUFFER) {
            buf_taken(e, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
            buf_return(e, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
        }
    }
    io_uring_cq_advance(&e->ring, io_uring_cq_ready(&e->ring));
    bufs_publish(e);
    return rc;
}

static bool engine_sleep(void *arg, int wait_fd, long timeout_us);
static void drain(struct uring_engine *e, bool enter, const client_t *skip);

/* NULL with *why set when this kernel or sandbox has no usable io_uring. */
static struct uring_engine *engine_create(server_t *srv, char *why, size_t whylen) {
    struct uring_engine *e = zcalloc(sizeof(*e));
    e->srv = srv;
    const char *step = "io_uring_setup";
    int rc = ring_init(&e->ring);
    if (rc < 0) {
        snprintf(why, whylen, "%s: %s", step, strerror(-rc));
        zfree(e);
        return NULL;
    }
    e->taskrun_flag = (e->ring.flags & IORING_SETUP_TASKRUN_FLAG) != 0;
    step = "buffer ring";
    if ((rc = bufs_init(e)) < 0) goto fail;
    if ((rc = probe(e, &step)) < 0) goto fail;
    /* Every io_uring_enter then names the ring by its index in this
     * thread's table instead of an fd looked up per call (5.18+; an older
     * kernel refuses and the fd is used as before). */
    (void)io_uring_register_ring_fd(&e->ring);
    step = "epoll set for the loop's sleep";
    if (evloop_set_sleeper(srv->loop, engine_sleep, e) < 0) {
        rc = -errno;
        goto fail;
    }
    return e;
fail:
    snprintf(why, whylen, "%s: %s", step, strerror(-rc));
    engine_destroy(e);
    return NULL;
}

bool io_engine_init(server_t *srv, const io_conn_ops_t *ops) {
    srv->uring = NULL;
    int want = srv->cfg.io_engine;
    if (want == IO_ENGINE_EPOLL) return true;
    char why[160];
    srv->uring = engine_create(srv, why, sizeof(why));
    if (srv->uring) {
        srv->uring->ops = ops;
        log_msg(LL_NOTICE, "Client sockets served by io_uring (multishot receive, batched sends)");
        return true;
    }
    if (want == IO_ENGINE_URING) {
        log_msg(LL_WARNING, "io-engine io_uring is not available here (%s)", why);
        return false;
    }
    log_msg(LL_NOTICE, "io_uring not available (%s): client sockets use epoll", why);
    return true;
}

void io_engine_free(server_t *srv) {
    struct uring_engine *e = srv->uring;
    if (!e) return;
    srv->uring = NULL;
    evloop_set_sleeper(srv->loop, NULL, NULL);
    /* Clients freed with a send in flight wait for its cancellation (their
     * memory is released then), and every client's state for the end of its
     * cancelled receive; bounded, the process is exiting. */
    e->queued = 0;
    io_uring_submit(&e->ring);
    for (int i = 0; i < 100 && (e->zombies > 0 || e->conns > 0); i++) {
        struct io_uring_cqe *cqe;
        struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000000};
        if (io_uring_wait_cqe_timeout(&e->ring, &cqe, &ts) == 0) drain(e, false, NULL);
    }
    engine_destroy(e);
}

/* ------------------------------------------------------------ submission */

/* Before each io_uring_enter of the engine: count it (and whether it
 * submits anything); what was queued is in the kernel after it. */
static void enter_note(struct uring_engine *e) {
    e->stat_enters++;
    if (e->queued) e->stat_submits++;
    e->queued = 0;
}

static void count_distance(unsigned long long *hist, unsigned long long d) { hist[d < 3 ? d : 3]++; }

static struct io_uring_sqe *get_sqe(struct uring_engine *e) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
    if (!sqe) { /* the queue is full: send what is there, then go on */
        enter_note(e);
        io_uring_submit(&e->ring);
        sqe = io_uring_get_sqe(&e->ring);
    }
    if (sqe) {
        e->queued++;
        evloop_request_before_sleep(e->srv->loop); /* where it is submitted */
    }
    return sqe;
}

static uint64_t tag(uring_conn_t *uc, unsigned kind) { return (uint64_t)(uintptr_t)uc | kind; }

static bool arm_recv(struct uring_engine *e, uring_conn_t *uc) {
    struct io_uring_sqe *sqe = get_sqe(e);
    if (!sqe) return false;
    io_uring_prep_recv_multishot(sqe, uc->fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BGID;
    io_uring_sqe_set_data64(sqe, tag(uc, KIND_RECV));
    uc->recv_armed = true;
    return true;
}

static void cancel_op(struct uring_engine *e, uring_conn_t *uc, unsigned kind) {
    struct io_uring_sqe *sqe = get_sqe(e);
    if (!sqe) return; /* the queue could not be emptied: io_engine_free cancels */
    io_uring_prep_cancel64(sqe, tag(uc, kind), IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, KIND_CANCEL);
}

/* Whether an io_uring_enter would produce completions: receive work
 * waiting for our thread (TASKRUN_FLAG), or completions that overflowed
 * the CQ ring and wait in the kernel. */
static bool kernel_pending(struct uring_engine *e) {
    unsigned f = IO_URING_READ_ONCE(*e->ring.sq.kflags);
    if (f & IORING_SQ_CQ_OVERFLOW) return true;
    return !e->taskrun_flag || (f & IORING_SQ_TASKRUN);
}

/* Work the kernel holds for us, or completions not handled yet. */
static bool work_pending(struct uring_engine *e) {
    if (e->qhead < e->qlen || io_uring_cq_ready(&e->ring)) return true;
    return kernel_pending(e);
}

/* Completions to handle now, without asking the kernel: the FIFO, the CQ,
 * or an overflow that the next enter flushes. */
static bool work_ready(struct uring_engine *e) {
    unsigned f = IO_URING_READ_ONCE(*e->ring.sq.kflags);
    return e->qhead < e->qlen || io_uring_cq_ready(&e->ring) || (f & IORING_SQ_CQ_OVERFLOW);
}

/* Work for the loop now, or receive work the kernel holds for us (the
 * next enter runs it). */
static bool work_arrived(struct uring_engine *e) {
    unsigned f = IO_URING_READ_ONCE(*e->ring.sq.kflags);
    return (f & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)) || io_uring_cq_ready(&e->ring) || e->qhead < e->qlen;
}

/* The last step of a loop round (conn_before_sleep): submit every queued
 * operation in one system call, which also runs the receive work that
 * came during the round.  Never a wait here: a request that arrived is
 * served by the next round at once (io_engine_continue), whatever the
 * load, and when nothing came the loop sleeps in engine_sleep until the
 * first completion. */
void io_engine_submit(server_t *srv) {
    struct uring_engine *e = srv->uring;
    if (!e) return;
    e->stat_rounds++;
    bufs_publish(e);
    if (!e->queued && !work_pending(e)) return;
    enter_note(e); /* pending receive work runs in the same call */
    int rc = io_uring_submit_and_get_events(&e->ring);
    if (rc < 0 && rc != -EBUSY && rc != -EAGAIN && rc != -EINTR)
        log_msg(LL_WARNING, "io_uring submit failed: %s", strerror(-rc));
}

/* Busy rounds back to back (server_before_sleep): when the round's submit
 * brought completions (requests that arrived while it ran), the next round
 * starts at once instead of going back through libevent, whose pass would
 * only find them again.  Under load, rounds thus follow each other
 * without a sleep or a poll of libevent's set, each taking what came
 * during the last: the batching is the load's own, no request waits for
 * company.  At most URING_BUSY_ROUNDS in a row, so that timers,
 * listeners, signals and epoll clients are not starved. */
bool io_engine_continue(server_t *srv, unsigned rounds) {
    struct uring_engine *e = srv->uring;
    if (!e || rounds >= URING_BUSY_ROUNDS) return false;
    if (!work_arrived(e)) return false;
    e->busy_rounds++;
    evloop_round_next(srv->loop); /* each a loop round of its own in INFO's eventloop_* */
    return true;
}

bool uring_conn_attach(client_t *c) {
    struct uring_engine *e = c->srv->uring;
    if (!e) return false;
    uring_conn_t *uc = zcalloc(sizeof(*uc));
    uc->client = c;
    uc->fd = c->fd;
    if (!arm_recv(e, uc)) {
        zfree(uc);
        return false;
    }
    e->conns++;
    c->ring = uc;
    return true;
}

static void maybe_free_uc(struct uring_engine *e, uring_conn_t *uc) {
    if (uc->client || uc->recv_armed || uc->send_inflight || uc->in_callback) return;
    zfree(uc);
    e->conns--;
}

bool uring_conn_close(client_t *c) {
    struct uring_engine *e = c->srv->uring;
    uring_conn_t *uc = c->ring;
    c->ring = NULL;
    uc->client = NULL;
    uc->closing = true;
    if (uc->recv_armed) cancel_op(e, uc, KIND_RECV);
    if (uc->send_inflight) {
        cancel_op(e, uc, KIND_SEND);
        uc->zombie = c;
        e->zombies++;
        return true;
    }
    maybe_free_uc(e, uc);
    return false;
}

void uring_conn_flush(client_t *c) {
    uring_conn_t *uc = c->ring;
    struct uring_engine *e = c->srv->uring;
    if (uc->send_inflight) return; /* its completion queues the rest */
    if (!e->ops->has_pending_output(c)) {
        e->ops->sent(c, 0); /* nothing to send: close-after-reply happens there */
        return;
    }
    int cnt = e->ops->output_iov(c, uc->iov, URING_MAX_IOV);
    if (cnt == 0) {
        e->ops->sent(c, 0);
        return;
    }
    struct io_uring_sqe *sqe = get_sqe(e);
    if (!sqe) {
        e->ops->mark_pending_write(c); /* next round */
        return;
    }
    if (cnt == 1) {
        io_uring_prep_send(sqe, uc->fd, uc->iov[0].iov_base, uc->iov[0].iov_len, MSG_NOSIGNAL);
    } else {
        memset(&uc->msg, 0, sizeof(uc->msg));
        uc->msg.msg_iov = uc->iov;
        uc->msg.msg_iovlen = (size_t)cnt;
        io_uring_prep_sendmsg(sqe, uc->fd, &uc->msg, MSG_NOSIGNAL);
    }
    io_uring_sqe_set_data64(sqe, tag(uc, KIND_SEND));
    uc->send_inflight = true;
    if (uc->unanswered) { /* the enter that submits this send is the next one */
        uc->unanswered = false;
        count_distance(e->reply_rounds, e->stat_rounds - uc->arr_round);
        count_distance(e->reply_enters, e->stat_enters - uc->arr_enter);
        count_distance(e->reply_submits, e->stat_submits - uc->arr_submit);
    }
    c->srv->stats.io_writes++;
}

/* ------------------------------------------------------------ completions */

/* One receive completion: bytes (into conn_input), end of stream, error,
 * or the end of the multishot (no buffer was free): arm it again. */
static void on_recv(struct uring_engine *e, uring_conn_t *uc, const cqe_copy_t *cq) {
    client_t *c = uc->client;
    uc->in_callback = true; /* conn_input may free the client, not uc */
    if (cq->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = cq->flags >> IORING_CQE_BUFFER_SHIFT;
        if (c && !uc->closing && cq->res > 0) {
            e->stat_recvs++;
            if (!uc->unanswered) {
                uc->unanswered = true;
                uc->arr_round = e->stat_rounds;
                uc->arr_enter = e->stat_enters;
                uc->arr_submit = e->stat_submits;
            }
            e->ops->input(c, buf_addr(e, bid), (size_t)cq->res);
        }
        buf_return(e, bid);
        c = uc->client;
    }
    if (!(cq->flags & IORING_CQE_F_MORE)) uc->recv_armed = false;
    if (c && !uc->closing) {
        if (cq->res == 0) {
            log_msg(LL_VERBOSE, "Client closed connection id=%llu addr=%s", (unsigned long long)c->id, c->addr);
            e->ops->free(c);
        } else if (cq->res < 0 && cq->res != -ENOBUFS && cq->res != -EAGAIN && cq->res != -EINTR) {
            log_msg(LL_VERBOSE, "Reading from client: %s", strerror(-cq->res));
            e->ops->free(c);
        } else if (!uc->recv_armed) {
            /* The multishot ended, mostly for want of a free buffer: the
             * round's submit arms it again (counted: a dry buffer ring
             * would delay requests by a round). */
            e->stat_rearms++;
            if (cq->res == -ENOBUFS) bufs_grow(e);
            if (!arm_recv(e, uc)) {
                log_msg(LL_WARNING, "io_uring: cannot re-arm a receive, closing client id=%llu",
                        (unsigned long long)c->id);
                e->ops->free(c);
            }
        }
    }
    uc->in_callback = false;
    maybe_free_uc(e, uc);
}

static void on_send(struct uring_engine *e, uring_conn_t *uc, const cqe_copy_t *cq) {
    uc->send_inflight = false;
    if (uc->zombie) { /* freed meanwhile: its memory may go now */
        client_t *z = uc->zombie;
        uc->zombie = NULL;
        e->zombies--;
        e->ops->release(z);
    }
    uc->in_callback = true; /* conn_sent may free the client, not uc */
    if (uc->client) e->ops->sent(uc->client, cq->res);
    uc->in_callback = false;
    maybe_free_uc(e, uc);
}

static void dispatch(struct uring_engine *e, const cqe_copy_t *cq) {
    if (cq->data == URING_WAKE_TAG) {
        e->wake_armed = false; /* libevent's pass serves what was ready */
        return;
    }
    unsigned kind = (unsigned)(cq->data & KIND_MASK);
    uring_conn_t *uc = (uring_conn_t *)(uintptr_t)(cq->data & ~(uint64_t)KIND_MASK);
    if (kind == KIND_CANCEL || !uc) return;
    if (kind == KIND_RECV) on_recv(e, uc, cq);
    else if (kind == KIND_SEND) on_send(e, uc, cq);
}

/* Run deferred receive work if the kernel has any, then copy every ready
 * completion to the FIFO.  (Leaving that work to the round's submit when
 * the CQ already held completions saved an enter per busy round, but a
 * request read while the replica loads from the socket then went
 * unanswered with -LOADING: test_repl_diskless_load.py.) */
static void pull(struct uring_engine *e, bool enter) {
    if (enter && kernel_pending(e)) {
        bool submit = e->queued;
        enter_note(e);
        if (submit) {
            bufs_publish(e);
            io_uring_submit_and_get_events(&e->ring);
        } else {
            io_uring_get_events(&e->ring);
        }
    }
    unsigned head, n = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&e->ring, head, cqe) {
        if (e->qlen == e->qcap) {
            e->qcap = e->qcap ? e->qcap * 2 : 256;
            e->q = zrealloc(e->q, e->qcap * sizeof(*e->q));
        }
        e->q[e->qlen++] = (cqe_copy_t){cqe->user_data, cqe->res, cqe->flags};
        if (cqe->flags & IORING_CQE_F_BUFFER) buf_taken(e, cqe->flags >> IORING_CQE_BUFFER_SHIFT);
        n++;
    }
    io_uring_cq_advance(&e->ring, n);
    if (n && bufs_low(e)) bufs_grow(e); /* published with the buffers returned in this drain */
}

static bool belongs_to(const cqe_copy_t *cq, const client_t *c) {
    if (!c) return false;
    uring_conn_t *uc = (uring_conn_t *)(uintptr_t)(cq->data & ~(uint64_t)KIND_MASK);
    return uc && (cq->data & KIND_MASK) != KIND_CANCEL && uc->client == c;
}

/* Handle the FIFO in order, leaving skip's completions in it. */
static void drain(struct uring_engine *e, bool enter, const client_t *skip) {
    e->depth++;
    pull(e, enter);
    for (size_t i = e->qhead; i < e->qlen; i++) {
        if (!e->q[i].data || belongs_to(&e->q[i], skip)) continue;
        cqe_copy_t cq = e->q[i];
        e->q[i].data = 0;
        dispatch(e, &cq); /* may nest: e->q may move */
    }
    if (--e->depth == 0) {
        while (e->qhead < e->qlen && !e->q[e->qhead].data) e->qhead++;
        if (e->qhead == e->qlen) e->qhead = e->qlen = 0;
    }
    bufs_publish(e);
}

/* The loop's sleep (evloop_set_sleeper): until a completion, a watched fd
 * of libevent (the poll on the mirror set), a signal or the next timer.
 * The wait runs deferred receive work first and returns at once if that
 * brought a completion, so nothing that arrived meanwhile is slept on.
 * Returns whether libevent's sources may want a pass (see evloop.h):
 * false only when the ring's own completions ended the sleep, the usual
 * case under load, which then costs no epoll_wait. */
static bool engine_sleep(void *arg, int wait_fd, long timeout_us) {
    struct uring_engine *e = arg;
    if (!e->wake_armed) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
        if (!sqe) { /* a full queue: the sleep would submit it anyway */
            enter_note(e);
            io_uring_submit(&e->ring);
            sqe = io_uring_get_sqe(&e->ring);
        }
        if (sqe) {
            io_uring_prep_poll_add(sqe, wait_fd, POLLIN);
            io_uring_sqe_set_data64(sqe, URING_WAKE_TAG);
            e->wake_armed = true;
        }
    }
    if (!work_ready(e)) {
        struct __kernel_timespec ts = {.tv_sec = timeout_us / 1000000, .tv_nsec = (timeout_us % 1000000) * 1000};
        struct io_uring_cqe *cqe;
        if (!work_arrived(e)) e->stat_sleeps++; /* else the kernel's pending work ends it at once */
        enter_note(e);
        bufs_publish(e);
        io_uring_submit_and_wait_timeout(&e->ring, &cqe, 1, timeout_us >= 0 ? &ts : NULL, NULL);
    }
    if (!work_ready(e)) return true;  /* the timeout or a signal: nothing for the ring */
    evloop_round_begin(e->srv->loop); /* the drain below is the next round's work (INFO eventloop_duration_sum) */
    evloop_request_before_sleep(e->srv->loop);
    drain(e, false, NULL);
    return !e->wake_armed; /* the poll on libevent's set fired: its pass serves what is ready */
}

/* The start of a round: serve what is in hand and what the kernel took
 * since (one enter), so that requests that came while the loop woke up
 * leave in this round's submit.  Leaving the latter to the next round, so
 * that replies already made leave before newer requests are served, was
 * measured worse: p50 1.36x at 10 connections and 1.15x at 50 (open loop
 * at 80% of Redis's maximum, 10 paired runs): they waited a whole round
 * and an enter more. */
void io_engine_run_ready(server_t *srv) {
    struct uring_engine *e = srv->uring;
    if (!e) return;
    if (work_pending(e)) drain(e, true, NULL);
}

void io_engine_serve_now(server_t *srv, client_t *skip) {
    struct uring_engine *e = srv->uring;
    if (!e) return;
    if (e->queued) {
        enter_note(e);
        bufs_publish(e);
        io_uring_submit(&e->ring);
    }
    drain(e, true, skip);
}

void io_engine_settle(server_t *srv) {
    struct uring_engine *e = srv->uring;
    /* Not inside a command (a busy script serving the listener): the
     * drain would run the running client's next requests too. */
    if (!e || srv->current_client || !work_pending(e)) return;
    evloop_request_before_sleep(srv->loop); /* its io_engine_submit sends the replies */
    io_engine_run_ready(srv);
}

void uring_conn_wait_send(client_t *c) {
    struct uring_engine *e = c->srv->uring;
    uring_conn_t *uc = c->ring;
    while (uc && uc->send_inflight) {
        bufs_publish(e);
        enter_note(e);
        io_uring_submit_and_wait(&e->ring, 1);
        pull(e, false);
        for (size_t i = e->qhead; i < e->qlen && uc->send_inflight; i++) {
            if (e->q[i].data != tag(uc, KIND_SEND)) continue;
            cqe_copy_t cq = e->q[i];
            e->q[i].data = 0;
            dispatch(e, &cq);
        }
        uc = c->ring; /* a failed send frees the client */
        if (!uc) break;
    }
    /* What was pulled meanwhile is handled at the next before-sleep. */
    if (e->qhead < e->qlen) evloop_request_before_sleep(c->srv->loop);
}

/* Neutralize c's receive completions already pulled into the FIFO:
 * their bytes go to *caught, their buffers back to the ring. */
static void detach_take_recvs(struct uring_engine *e, uring_conn_t *uc, sds *caught) {
    for (size_t i = e->qhead; i < e->qlen; i++) {
        if (e->q[i].data != tag(uc, KIND_RECV)) continue;
        cqe_copy_t cq = e->q[i];
        e->q[i].data = 0;
        if (cq.flags & IORING_CQE_F_BUFFER) {
            unsigned bid = cq.flags >> IORING_CQE_BUFFER_SHIFT;
            if (cq.res > 0) *caught = sds_catlen(*caught, buf_addr(e, bid), (size_t)cq.res);
            buf_return(e, bid);
        }
        if (!(cq.flags & IORING_CQE_F_MORE)) uc->recv_armed = false;
    }
}

sds uring_conn_detach(client_t *c, sds caught) {
    struct uring_engine *e = c->srv->uring;
    uring_conn_wait_send(c);
    uring_conn_t *uc = c->ring;
    if (!uc) return caught;
    pull(e, false);
    detach_take_recvs(e, uc, &caught);
    if (uc->recv_armed) cancel_op(e, uc, KIND_RECV);
    while (uc->recv_armed) {
        bufs_publish(e);
        enter_note(e);
        io_uring_submit_and_wait(&e->ring, 1);
        pull(e, false);
        detach_take_recvs(e, uc, &caught);
    }
    c->ring = NULL;
    uc->client = NULL;
    uc->closing = true;
    maybe_free_uc(e, uc);
    if (e->qhead < e->qlen) evloop_request_before_sleep(c->srv->loop);
    return caught;
}

sds io_engine_info(server_t *srv, sds s) {
    struct uring_engine *e = srv->uring;
    if (!e) return s;
    s = sds_catprintf(s,
                      "io_uring_rounds:%llu\r\n"
                      "io_uring_busy_rounds:%llu\r\n"
                      "io_uring_enters:%llu\r\n"
                      "io_uring_submits:%llu\r\n"
                      "io_uring_sleeps:%llu\r\n"
                      "io_uring_recvs:%llu\r\n"
                      "io_uring_recv_rearms:%llu\r\n"
                      "io_uring_buffers_active:%u\r\n"
                      "io_uring_buffer_grows:%llu\r\n"
                      "io_uring_buffer_shrinks:%llu\r\n"
                      "io_uring_buffer_releases:%llu\r\n",
                      e->stat_rounds, e->busy_rounds, e->stat_enters, e->stat_submits, e->stat_sleeps,
                      e->stat_recvs, e->stat_rearms, e->nactive, e->stat_grows, e->stat_shrinks, e->stat_releases);
    static const char *names[] = {"rounds", "enters", "submits"};
    const unsigned long long *hists[] = {e->reply_rounds, e->reply_enters, e->reply_submits};
    for (int i = 0; i < 3; i++)
        s = sds_catprintf(s, "io_uring_reply_after_%s:0=%llu,1=%llu,2=%llu,3+=%llu\r\n", names[i], hists[i][0],
                          hists[i][1], hists[i][2], hists[i][3]);
    return s;
}

/* Once a second from the server cron: shrink a ring that the load no
 * longer needs, give back the pages of buffers a quiet second left idle
 * (see "Receive buffers' memory"). */
void io_engine_cron(server_t *srv) {
    struct uring_engine *e = srv->uring;
    if (!e || srv->mstime - e->last_look_ms < 1000) return;
    e->last_look_ms = srv->mstime;
    if (e->out_peak <= e->nactive / 4) e->low_looks++;
    else e->low_looks = 0;
    if (e->low_looks > URING_SHRINK_AFTER && e->nactive > URING_NBUFS_MIN) {
        e->nactive /= 2;
        e->stat_shrinks++;
        bufs_release_from(e, e->nactive); /* the rest retire as they come back */
    }
    /* A second of light use (or none): the pages of the buffers waiting in
     * the ring go back; the few that light use touches again cost a page
     * fault each, a second apart. */
    if (e->low_looks > 0 && e->dirty) io_engine_release_idle(srv);
    e->out_peak = e->out;
}

void io_engine_release_idle(server_t *srv) {
    struct uring_engine *e = srv->uring;
    if (!e) return;
    bufs_release_from(e, 0);
    e->dirty = false;
    e->stat_releases++;
}

/* Resident bytes of the receive buffers (mincore: what the kernel really
 * holds, pages given back excluded), of the ring of their addresses, and
 * of the submission and completion rings the kernel maps into us. */
size_t io_engine_memory(const server_t *srv) {
    const struct uring_engine *e = srv->uring;
    if (!e) return 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[URING_BUFS_BYTES / 4096];
    size_t pages = URING_BUFS_BYTES / page, resident = 0;
    if (pages <= sizeof(vec) && mincore(e->bufs, URING_BUFS_BYTES, vec) == 0)
        for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
    size_t rings = e->ring.sq.ring_sz + e->ring.sq.ring_entries * sizeof(struct io_uring_sqe);
    if (e->ring.cq.ring_ptr != e->ring.sq.ring_ptr) rings += e->ring.cq.ring_sz;
    return resident * page + e->br_bytes + rings;
}

size_t io_engine_ranges(const server_t *srv, proc_range_t *r, size_t max) {
    const struct uring_engine *e = srv->uring;
    if (!e || max < 2) return 0;
    r[0] = (proc_range_t){(uintptr_t)e->bufs, (uintptr_t)e->bufs + URING_BUFS_BYTES};
    r[1] = (proc_range_t){(uintptr_t)e->br, (uintptr_t)e->br + e->br_bytes};
    return 2;
}

#else /* !RL_HAVE_URING: built without liburing, epoll only */

bool io_engine_init(server_t *srv, const io_conn_ops_t *ops) {
    (void)ops;
    srv->uring = NULL;
    if (srv->cfg.io_engine == IO_ENGINE_URING) {
        log_msg(LL_WARNING, "io-engine io_uring is not available here (built without liburing)");
        return false;
    }
    if (srv->cfg.io_engine == IO_ENGINE_AUTO)
        log_msg(LL_NOTICE, "io_uring not available (built without liburing): client sockets use epoll");
    return true;
}

void io_engine_free(server_t *srv) { (void)srv; }
bool uring_conn_attach(client_t *c) {
    (void)c;
    return false;
}
bool uring_conn_close(client_t *c) {
    (void)c;
    return false;
}
void uring_conn_flush(client_t *c) { (void)c; }
void uring_conn_wait_send(client_t *c) { (void)c; }
sds uring_conn_detach(client_t *c, sds caught) {
    (void)c;
    return caught;
}
void io_engine_run_ready(server_t *srv) { (void)srv; }
void io_engine_submit(server_t *srv) { (void)srv; }
void io_engine_serve_now(server_t *srv, client_t *skip) {
    (void)srv;
    (void)skip;
}
void io_engine_settle(server_t *srv) { (void)srv; }
sds io_engine_info(server_t *srv, sds s) {
    (void)srv;
    return s;
}
bool io_engine_continue(server_t *srv, unsigned rounds) {
    (void)srv;
    (void)rounds;
    return false;
}
void io_engine_cron(server_t *srv) { (void)srv; }
void io_engine_release_idle(server_t *srv) { (void)srv; }
size_t io_engine_ranges(const server_t *srv, proc_range_t *r, size_t max) {
    (void)srv;
    (void)r;
    (void)max;
    return 0;
}
size_t io_engine_memory(const server_t *srv) {
    (void)srv;
    return 0;
}

#endif
