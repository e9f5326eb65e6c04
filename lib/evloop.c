/* evloop.c: libevent 2.1 behind the small interface of evloop.h.
 *
 * The before-sleep event is activated (event_active) by the first callback
 * of an iteration that queues output.  libevent appends it to the tail of
 * the active queue it is draining, so it runs after every socket that was
 * ready in that iteration, and within the same epoll_wait round: one write
 * per client per iteration and no extra epoll_wait.  (A separate, lower
 * priority would cost a second, empty epoll_wait per iteration.) */
#include "evloop.h"

#include <event2/event.h>
#include <stdlib.h>

#include "zmalloc.h"

#define EVLOOP_MAX_SIGNALS 8

typedef struct signal_ctx signal_ctx;

struct evloop {
    struct event_base *base;
    struct event *before_sleep; /* activated on demand, runs last */
    evloop_fn *before_sleep_fn;
    void *before_sleep_arg;
    bool before_sleep_pending;
    struct event *signals[EVLOOP_MAX_SIGNALS]; /* freed with the loop */
    struct signal_ctx *signal_ctx[EVLOOP_MAX_SIGNALS];
    int nsignals;
};

struct evloop_io {
    evloop_t *loop;
    struct event *ev;
    int fd;
    bool want_read, want_write;
    evloop_io_fn *fn;
    void *arg;
};

struct evloop_timer {
    struct event *ev;
    struct timeval interval;
    evloop_fn *fn;
    void *arg;
    bool oneshot;
};

struct signal_ctx {
    evloop_signal_fn *fn;
    void *arg;
};

static void before_sleep_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evloop_t *loop = arg;
    loop->before_sleep_pending = false;
    if (loop->before_sleep_fn) loop->before_sleep_fn(loop->before_sleep_arg);
}

evloop_t *evloop_create(void) {
    /* Only the main thread touches the loop (background threads never call
     * evloop), so libevent runs without locks: no evthread_use_pthreads(). */
    event_set_mem_functions(zmalloc, zrealloc, zfree);
    evloop_t *loop = zcalloc(sizeof(*loop));
    loop->base = event_base_new();
    if (!loop->base) {
        zfree(loop);
        return NULL;
    }
    loop->before_sleep = event_new(loop->base, -1, 0, before_sleep_cb, loop);
    return loop;
}

void evloop_free(evloop_t *loop) {
    if (!loop) return;
    for (int i = 0; i < loop->nsignals; i++) {
        event_free(loop->signals[i]);
        zfree(loop->signal_ctx[i]);
    }
    event_free(loop->before_sleep);
    event_base_free(loop->base);
    zfree(loop);
}

int evloop_run(evloop_t *loop) { return event_base_dispatch(loop->base) < 0 ? -1 : 0; }
void evloop_stop(evloop_t *loop) { event_base_loopbreak(loop->base); }
const char *evloop_backend(evloop_t *loop) { return event_base_get_method(loop->base); }

void evloop_set_before_sleep(evloop_t *loop, evloop_fn *fn, void *arg) {
    loop->before_sleep_fn = fn;
    loop->before_sleep_arg = arg;
}

void evloop_request_before_sleep(evloop_t *loop) {
    if (loop->before_sleep_pending) return;
    loop->before_sleep_pending = true;
    event_active(loop->before_sleep, 0, 0);
}

/* ------------------------------------------------------------ file events */

static void io_cb(evutil_socket_t fd, short what, void *arg) {
    evloop_io_t *io = arg;
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
}

/* A watcher that wants reads from the start; extra: EV_ET or 0. */
static evloop_io_t *io_new(evloop_t *loop, int fd, evloop_io_fn *fn, void *arg, short extra) {
    evloop_io_t *io = zcalloc(sizeof(*io));
    io->loop = loop;
    io->fd = fd;
    io->fn = fn;
    io->arg = arg;
    io->want_read = true;
    io->ev = event_new(loop->base, fd, EV_READ | EV_PERSIST | extra, io_cb, io);
    event_add(io->ev, NULL);
    return io;
}

evloop_io_t *evloop_io_add(evloop_t *loop, int fd, evloop_io_fn *fn, void *arg) { return io_new(loop, fd, fn, arg, 0); }

/* Edge-triggered, read only: the io_uring engine's eventfd, whose counter
 * is never read (each completion batch is a new edge), so a wake-up costs
 * no read() of its own. */
evloop_io_t *evloop_io_add_edge(evloop_t *loop, int fd, evloop_io_fn *fn, void *arg) { return io_new(loop, fd, fn, arg, EV_ET); }

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
    zfree(io);
}

/* ------------------------------------------------------------ timers */

static void timer_cb(evutil_socket_t fd, short what, void *arg) {
    (void)fd;
    (void)what;
    evloop_timer_t *t = arg;
    t->fn(t->arg);
}

static evloop_timer_t *timer_new(evloop_t *loop, long us, evloop_fn *fn, void *arg, bool oneshot) {
    evloop_timer_t *t = zcalloc(sizeof(*t));
    t->fn = fn;
    t->arg = arg;
    t->oneshot = oneshot;
    t->interval.tv_sec = us / 1000000;
    t->interval.tv_usec = us % 1000000;
    t->ev = event_new(loop->base, -1, oneshot ? 0 : EV_PERSIST, timer_cb, t);
    event_add(t->ev, &t->interval);
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
}

void evloop_timer_free(evloop_timer_t *t) {
    if (!t) return;
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
