/* evloop.h: the event loop, a thin layer over libevent 2.1.
 *
 * The only part of the server that includes event2/ headers.  It offers
 * what the server needs and nothing more: readiness callbacks on file
 * descriptors, periodic and one-shot timers, signal handlers, a "before
 * sleep" hook that runs once per loop iteration after every ready socket
 * was served (where replies are flushed, as in Redis), and a way to sleep
 * somewhere else than in libevent (the io_uring engine's ring).
 *
 * libevent's own memory is routed through zmalloc (evloop_create calls
 * event_set_mem_functions before anything else), so it counts in
 * used_memory. */
#ifndef RL_EVLOOP_H
#define RL_EVLOOP_H

#include <stdbool.h>

typedef struct evloop evloop_t;
typedef struct evloop_io evloop_io_t;
typedef struct evloop_timer evloop_timer_t;

typedef void evloop_io_fn(int fd, bool readable, bool writable, void *arg);
typedef void evloop_fn(void *arg);
typedef void evloop_signal_fn(int signo, void *arg);

evloop_t *evloop_create(void);
void evloop_free(evloop_t *loop);
int evloop_run(evloop_t *loop); /* until evloop_stop; 0 or -1 */
void evloop_stop(evloop_t *loop);

/* Watch fd for reading (on from the start) and, on request, writing. */
evloop_io_t *evloop_io_add(evloop_t *loop, int fd, evloop_io_fn *fn, void *arg);
void evloop_io_want_write(evloop_io_t *io, bool want);
/* Read interest is on from evloop_io_add; a write-only watcher turns it off. */
void evloop_io_want_read(evloop_io_t *io, bool want);
void evloop_io_free(evloop_io_t *io); /* stops watching; does not close fd */

evloop_timer_t *evloop_timer_add(evloop_t *loop, long interval_us, evloop_fn *fn, void *arg);
void evloop_timer_set_interval(evloop_timer_t *t, long interval_us);
void evloop_timer_free(evloop_timer_t *t);

/* One-shot timer: fn runs once after delay_us unless cancelled. */
evloop_timer_t *evloop_oneshot_add(evloop_t *loop, long delay_us, evloop_fn *fn, void *arg);

int evloop_signal_add(evloop_t *loop, int signo, evloop_signal_fn *fn, void *arg);

/* The before-sleep hook runs at the end of the iteration in which
 * evloop_request_before_sleep() was called. */
void evloop_set_before_sleep(evloop_t *loop, evloop_fn *fn, void *arg);
void evloop_request_before_sleep(evloop_t *loop);
/* The before-sleep hook again, but in the next iteration, after the
 * sockets were polled (without blocking) and served: work done a slice
 * per iteration (a request from the hook itself would run it again at
 * once, in the same iteration, ahead of every client). */
void evloop_request_next_round(evloop_t *loop);

/* Sleep elsewhere than in libevent (see evloop.c): each iteration ends
 * with fn(arg, wait_fd, timeout_us), which returns once wait_fd (an epoll
 * fd) is readable, a signal arrived, timeout_us passed (-1: no timer), or
 * its own work came.  fn returns false only when its own work alone ended
 * the sleep (wait_fd was not readable, no timeout, no signal): the next
 * iteration then skips libevent's poll unless a timer is due, and runs
 * the before-sleep hook directly.  0, or -1 when the epoll fd cannot be
 * made. */
typedef bool evloop_sleep_fn(void *arg, int wait_fd, long timeout_us);
int evloop_set_sleeper(evloop_t *loop, evloop_sleep_fn *fn, void *arg);

/* Loop rounds (Redis's eventloop_cycles and durations): fn(arg, us) when
 * the loop goes back to sleep, with the time since the round began: its
 * first callback after the sleep, or a sleeper's evloop_round_begin when
 * its wait ended (its own work after the wait counts in the round).  The
 * sleep itself is never counted. */
typedef void evloop_round_fn(void *arg, long long duration_us);
void evloop_set_round_hook(evloop_t *loop, evloop_round_fn *fn, void *arg);
void evloop_round_begin(evloop_t *loop);
/* A round ends and the next begins at once, without a sleep (the io_uring
 * engine's busy rounds, back to back inside the before-sleep hook). */
void evloop_round_next(evloop_t *loop);

const char *evloop_backend(evloop_t *loop); /* "epoll", ... */

#endif
