/* evloop.c: libevent 2.1 behind the small interface of evloop.h.
 *
 * The before-sleep event is activated (event_active) by the first callback
 * of an iteration that queues output.  libevent appends it to the tail of
 * the active queue it is draining, so it runs after every socket that was
 * ready in that iteration, and within the same epoll_wait round: one write
 * per client per iteration and no extra epoll_wait.  (A separate, lower
 * priority would cost a second, empty epoll_wait per iteration.)
 *
 * A sleeper (evloop_set_sleeper) moves the loop's sleep out of libevent:
 * each iteration runs libevent without blocking, then calls the sleeper
 * with the time left to the next timer and an epoll fd that is readable
 * while any watched fd is ready (a second epoll set mirroring libevent's
 * watchers).  The io_uring engine sleeps in io_uring_enter that way, the
 * one place where its ring's completions wake a thread at once.  When only
 * the sleeper's own work ended a sleep, the next iteration skips
 * libevent's (empty) poll and runs the before-sleep hook itself. */
#include "evloop.h"

#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "zmalloc.h"

#define EVLOOP_MAX_SIGNALS 8

typedef struct signal_ctx signal_ctx;

struct evloop {
    struct event_base *base;
    struct event *before_sleep; /* activated on demand, runs last */
    evloop_fn *before_sleep_fn;
    void *before_sleep_arg;
    bool before_sleep_pending;
    /* evloop_request_next_round: a timer due at once, so libevent polls
     * the sockets (without blocking) before it fires. */
    struct event *next_round;
    bool next_round_pending;
    struct event *signals[EVLOOP_MAX_SIGNALS]; /* freed with the loop */
    struct signal_ctx *signal_ctx[EVLOOP_MAX_SIGNALS];
    int nsignals;
    bool stopping; /* evloop_stop: also when called between libevent runs */
    /* The sleeper, its mirror epoll set and every watcher to put in it. */
    evloop_sleep_fn *sleep_fn;
    void *sleep_arg;
    int mirror_fd; /* -1 without a sleeper */
    evloop_io_t *ios;
    /* Timers by deadline (a binary min-heap): the sleeper's timeout. */
    evloop_timer_t **heap;
    size_t nheap, heap_cap;
    /* The round under way (evloop_set_round_hook): it starts with the first
     * callback after a sleep, or when a sleeper's wait ends, and ends when
     * the loop goes back to sleep. */
    long long round_start_ns; /* 0: none under way */
    evloop_round_fn *round_fn;
    void *round_arg;
};

struct evloop_io {
    evloop_t *loop;
    struct event *ev;
    int fd;
    bool want_read, want_write;
    evloop_io_fn *fn;
    void *arg;
    evloop_io_t *prev, *next; /* loop->ios */
};

struct evloop_timer {
    evloop_t *loop;
    struct event *ev;
    struct timeval interval;
    evloop_fn *fn;
    void *arg;
    bool oneshot;
    long long deadline_ns; /* CLOCK_MONOTONIC */
    size_t heap_idx;       /* HEAP_NONE when not scheduled */
};

#define HEAP_NONE ((size_t)-1)

struct signal_ctx {
    evloop_signal_fn *fn;
    void *arg;
};

static long long mono_ns(void);

static inline void round_begin(evloop_t *loop) {
    if (!loop->round_start_ns) loop->round_start_ns = mono_ns();
}

/* The loop goes to sleep: the round's time to the hook (a round in which
 * nothing ran took no time). */
static void round_end(evloop_t *loop) {
    long long ns = loop->round_start_ns ? mono_ns() - loop->round_start_ns : 0;
    loop->round_start_ns = 0;
    if (loop->round_fn) loop->round_fn(loop->round_arg, ns / 1000);
}

static void before_sleep_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evloop_t *loop = arg;
    round_begin(loop);
    loop->before_sleep_pending = false;
    if (loop->before_sleep_fn) loop->before_sleep_fn(loop->before_sleep_arg);
}

static void next_round_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evloop_t *loop = arg;
    round_begin(loop);
    loop->next_round_pending = false;
    evloop_request_before_sleep(loop);
}

evloop_t *evloop_create(void) {
    /* Only the main thread touches the loop (background threads never call
     * evloop), so libevent runs without locks: no evthread_use_pthreads(). */
    /* libevent's buffers and tables through zmalloc: in used_memory. */
    event_set_mem_functions(zmalloc, zrealloc, zfree);
    evloop_t *loop = zcalloc(sizeof(*loop));
    loop->base = event_base_new();
    if (!loop->base) {
        zfree(loop);
        return NULL;
    }
    loop->before_sleep = event_new(loop->base, -1, 0, before_sleep_cb, loop);
    loop->next_round = evtimer_new(loop->base, next_round_cb, loop);
    loop->mirror_fd = -1;
    return loop;
}

void evloop_free(evloop_t *loop) {
    if (!loop) return;
    for (int i = 0; i < loop->nsignals; i++) {
        event_free(loop->signals[i]);
        zfree(loop->signal_ctx[i]);
    }
    event_free(loop->before_sleep);
    event_free(loop->next_round);
    event_base_free(loop->base);
    if (loop->mirror_fd >= 0) close(loop->mirror_fd);
    zfree(loop->heap);
    zfree(loop);
}

static long long mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Microseconds to the earliest timer, -1 with none.  At least 1 ms once
 * it is due: libevent fires it on its own clock, which may run a little
 * behind ours, and a zero timeout would spin until it does.  A next-round
 * request is due at once on libevent's clock too (its deadline is the
 * time of the request), so it polls without waiting. */
static long next_timeout_us(evloop_t *loop) {
    if (loop->next_round_pending) return 0;
    if (loop->nheap == 0) return -1;
    long long left = loop->heap[0]->deadline_ns - mono_ns();
    return left > 0 ? (long)((left + 999) / 1000) : 1000;
}

/* Whether the earliest timer is due on our clock. */
static bool timer_due(evloop_t *loop) { return loop->nheap > 0 && loop->heap[0]->deadline_ns <= mono_ns(); }

/* An iteration whose sleep ended for the sleeper's own work only: nothing
 * of libevent's is ready (the mirror set was not readable, no timer is
 * due), so its poll, an epoll_wait that would return nothing, is skipped
 * and the before-sleep hook runs directly, its activation withdrawn.  A
 * hook that asks for itself again runs again at once, as it would in
 * libevent's active queue. */
static void run_before_sleep_only(evloop_t *loop) {
    while (loop->before_sleep_pending && !loop->stopping) {
        event_del(loop->before_sleep);
        before_sleep_cb(-1, 0, loop);
    }
}

int evloop_run(evloop_t *loop) {
    loop->stopping = false;
    bool poll = true; /* libevent's sources may be ready */
    while (!loop->stopping) {
        if (!loop->sleep_fn) {
            /* One libevent iteration at a time (a sleep, then every ready
             * callback), so that each ends a round. */
            int rc = event_base_loop(loop->base, EVLOOP_ONCE);
            round_end(loop);
            if (rc < 0) return -1;
            if (rc == 1) return 0; /* nothing left to wait for */
            continue;
        }
        if (poll || loop->next_round_pending || timer_due(loop)) {
            /* one pass (ONCE): a socket still ready, a listener with more
             * connections waiting, is served by the next round, after the
             * ring's work (libevent alone would poll again at once) */
            if (event_base_loop(loop->base, EVLOOP_NONBLOCK | EVLOOP_ONCE) < 0) return -1;
        } else {
            run_before_sleep_only(loop);
        }
        /* A signal caught outside the sleep waits for the next timer (the
         * cron, 1/hz at most): libevent's signal pipe is not in the mirror
         * set.  One caught inside ends the sleep with EINTR. */
        poll = true;
        round_end(loop);
        if (!loop->stopping && loop->sleep_fn) {
            poll = loop->sleep_fn(loop->sleep_arg, loop->mirror_fd, next_timeout_us(loop));
            round_begin(loop); /* unless the sleeper began it when its wait ended */
        }
    }
    return 0;
}

void evloop_stop(evloop_t *loop) {
    loop->stopping = true;
    event_base_loopbreak(loop->base);
}

void evloop_set_round_hook(evloop_t *loop, evloop_round_fn *fn, void *arg) {
    loop->round_fn = fn;
    loop->round_arg = arg;
}

void evloop_round_begin(evloop_t *loop) { round_begin(loop); }

void evloop_round_next(evloop_t *loop) {
    round_end(loop);
    round_begin(loop);
}

const char *evloop_backend(evloop_t *loop) { return event_base_get_method(loop->base); }

void evloop_set_before_sleep(evloop_t *loop, evloop_fn *fn, void *arg) {
    loop->before_sleep_fn = fn;
    loop->before_sleep_arg = arg;
}

/* The mirror set follows each watcher's interests (level-triggered, as
 * libevent's own). */
static void mirror_update(evloop_io_t *io, int op) {
    if (io->loop->mirror_fd < 0) return;
    struct epoll_event ev = {0};
    ev.events = (io->want_read ? EPOLLIN : 0) | (io->want_write ? EPOLLOUT : 0);
    ev.data.fd = io->fd;
    if (op == EPOLL_CTL_MOD && ev.events == 0) op = EPOLL_CTL_DEL;
    if (epoll_ctl(io->loop->mirror_fd, op, io->fd, &ev) < 0 && op == EPOLL_CTL_MOD && errno == ENOENT)
        epoll_ctl(io->loop->mirror_fd, EPOLL_CTL_ADD, io->fd, &ev); /* interests back after none */
}

int evloop_set_sleeper(evloop_t *loop, evloop_sleep_fn *fn, void *arg) {
    if (loop->mirror_fd < 0) {
        loop->mirror_fd = epoll_create1(EPOLL_CLOEXEC);
        if (loop->mirror_fd < 0) return -1;
        for (evloop_io_t *io = loop->ios; io; io = io->next) mirror_update(io, EPOLL_CTL_ADD);
    }
    loop->sleep_fn = fn;
    loop->sleep_arg = arg;
    return 0;
}

void evloop_request_before_sleep(evloop_t *loop) {
    if (loop->before_sleep_pending) return;
    loop->before_sleep_pending = true;
    event_active(loop->before_sleep, 0, 0);
}

void evloop_request_next_round(evloop_t *loop) {
    if (loop->next_round_pending) return;
    loop->next_round_pending = true;
    const struct timeval now = {0, 0};
    event_add(loop->next_round, &now);
}

/* ------------------------------------------------------------ file events */

static void io_cb(evutil_socket_t fd, short what, void *arg) {
    evloop_io_t *io = arg;
    round_begin(io->loop);
    io->fn((int)fd, (what & EV_READ) != 0, (what & EV_WRITE) != 0, io->arg);
}

/* libevent cannot change the flags of an added event: re-assign it. */
static void io_update(evloop_io_t *io) {
    short flags = EV_PERSIST;
    if (io->want_read) flags |= EV_READ;
    if (io->want_write) flags |= EV_WRITE;
    event_del(io->ev);
    event_assign(io->ev, io->loop->base, io->fd, flags, io_cb, io);
    if (io->want_read || io->want_write) event_add(io->ev, NULL);
    mirror_update(io, EPOLL_CTL_MOD);
}

evloop_io_t *evloop_io_add(evloop_t *loop, int fd, evloop_io_fn *fn, void *arg) {
    evloop_io_t *io = zcalloc(sizeof(*io));
    io->loop = loop;
    io->fd = fd;
    io->fn = fn;
    io->arg = arg;
    io->want_read = true;
    io->ev = event_new(loop->base, fd, EV_READ | EV_PERSIST, io_cb, io);
    event_add(io->ev, NULL);
    io->next = loop->ios;
    if (loop->ios) loop->ios->prev = io;
    loop->ios = io;
    mirror_update(io, EPOLL_CTL_ADD);
    return io;
}

void evloop_io_want_write(evloop_io_t *io, bool want) {
    if (io->want_write == want) return;
    io->want_write = want;
    io_update(io);
}

void evloop_io_want_read(evloop_io_t *io, bool want) {
    if (io->want_read == want) return;
    io->want_read = want;
    io_update(io);
}

void evloop_io_free(evloop_io_t *io) {
    if (!io) return;
    event_free(io->ev);
    if (io->loop->mirror_fd >= 0) epoll_ctl(io->loop->mirror_fd, EPOLL_CTL_DEL, io->fd, NULL);
    if (io->prev) io->prev->next = io->next;
    else io->loop->ios = io->next;
    if (io->next) io->next->prev = io->prev;
    zfree(io);
}

/* ------------------------------------------------------------ timers */

static bool heap_less(evloop_t *loop, size_t a, size_t b) {
    return loop->heap[a]->deadline_ns < loop->heap[b]->deadline_ns;
}

static void heap_swap(evloop_t *loop, size_t a, size_t b) {
    evloop_timer_t *t = loop->heap[a];
    loop->heap[a] = loop->heap[b];
    loop->heap[b] = t;
    loop->heap[a]->heap_idx = a;
    loop->heap[b]->heap_idx = b;
}

static void heap_fix(evloop_t *loop, size_t i) {
    while (i > 0 && heap_less(loop, i, (i - 1) / 2)) {
        heap_swap(loop, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < loop->nheap && heap_less(loop, l, m)) m = l;
        if (l + 1 < loop->nheap && heap_less(loop, l + 1, m)) m = l + 1;
        if (m == i) return;
        heap_swap(loop, i, m);
        i = m;
    }
}

static void heap_remove(evloop_timer_t *t) {
    evloop_t *loop = t->loop;
    size_t i = t->heap_idx;
    if (i == HEAP_NONE) return;
    t->heap_idx = HEAP_NONE;
    if (i != --loop->nheap) {
        loop->heap[i] = loop->heap[loop->nheap];
        loop->heap[i]->heap_idx = i;
        heap_fix(loop, i);
    }
}

/* (Re)schedule t one interval from now, in libevent and in the heap. */
static void timer_schedule(evloop_timer_t *t) {
    evloop_t *loop = t->loop;
    t->deadline_ns = mono_ns() + (long long)t->interval.tv_sec * 1000000000LL + (long long)t->interval.tv_usec * 1000;
    if (t->heap_idx == HEAP_NONE) {
        if (loop->nheap == loop->heap_cap) {
            loop->heap_cap = loop->heap_cap ? loop->heap_cap * 2 : 16;
            loop->heap = zrealloc(loop->heap, loop->heap_cap * sizeof(*loop->heap));
        }
        t->heap_idx = loop->nheap;
        loop->heap[loop->nheap++] = t;
    }
    heap_fix(loop, t->heap_idx);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evloop_timer_t *t = arg;
    round_begin(t->loop);
    if (t->oneshot) heap_remove(t);
    else timer_schedule(t); /* libevent counts from the last deadline: ours is never earlier */
    t->fn(t->arg);          /* may free t */
}

static evloop_timer_t *timer_new(evloop_t *loop, long us, evloop_fn *fn, void *arg, bool oneshot) {
    evloop_timer_t *t = zcalloc(sizeof(*t));
    t->loop = loop;
    t->fn = fn;
    t->arg = arg;
    t->oneshot = oneshot;
    t->heap_idx = HEAP_NONE;
    t->interval.tv_sec = us / 1000000;
    t->interval.tv_usec = us % 1000000;
    t->ev = event_new(loop->base, -1, oneshot ? 0 : EV_PERSIST, timer_cb, t);
    event_add(t->ev, &t->interval);
    timer_schedule(t);
    return t;
}

evloop_timer_t *evloop_timer_add(evloop_t *loop, long us, evloop_fn *fn, void *arg) {
    return timer_new(loop, us, fn, arg, false);
}

evloop_timer_t *evloop_oneshot_add(evloop_t *loop, long us, evloop_fn *fn, void *arg) {
    return timer_new(loop, us, fn, arg, true);
}

void evloop_timer_set_interval(evloop_timer_t *t, long us) {
    t->interval.tv_sec = us / 1000000;
    t->interval.tv_usec = us % 1000000;
    event_del(t->ev);
    event_add(t->ev, &t->interval);
    timer_schedule(t);
}

void evloop_timer_free(evloop_timer_t *t) {
    if (!t) return;
    heap_remove(t);
    event_free(t->ev);
    zfree(t);
}

/* ------------------------------------------------------------ signals */

static void signal_cb(evutil_socket_t sig, short what, void *arg) {
    (void)what;
    signal_ctx *ctx = arg;
    ctx->fn((int)sig, ctx->arg);
}

int evloop_signal_add(evloop_t *loop, int signo, evloop_signal_fn *fn, void *arg) {
    if (loop->nsignals == EVLOOP_MAX_SIGNALS) return -1;
    signal_ctx *ctx = zmalloc(sizeof(*ctx));
    ctx->fn = fn;
    ctx->arg = arg;
    struct event *ev = evsignal_new(loop->base, signo, signal_cb, ctx);
    if (!ev || event_add(ev, NULL) != 0) {
        if (ev) event_free(ev);
        zfree(ctx);
        return -1;
    }
    loop->signals[loop->nsignals] = ev;
    loop->signal_ctx[loop->nsignals++] = ctx;
    return 0;
}
