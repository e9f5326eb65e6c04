/* test_evloop.c: lib/evloop.c's before-sleep hook and its next-round
 * request, on libevent's own sleep and with a sleeper (the io_uring
 * engine's way): work done a slice per round must let ready sockets be
 * served between its slices.  A pipe stands for a client's socket.  The
 * round hook counts a round's work, not its sleep. */
#include <stdio.h>
#include <time.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "evloop.h"
#include "test_help.h"

#define SLICES 5

typedef struct {
    evloop_t *loop;
    int pipe_fd[2];
    int served;                  /* bytes the watcher read */
    int slices;                  /* before-sleep hook runs */
    int served_at_slice[SLICES]; /* what had been served when each ran */
} fixture;

static void on_readable(int fd, bool readable, bool writable, void *arg) {
    (void)writable;
    fixture *f = arg;
    char byte;
    if (readable && read(fd, &byte, 1) == 1) f->served++;
}

/* Each slice makes the "socket" ready, then asks for the next round: the
 * byte must be read before the next slice runs. */
static void slice(void *arg) {
    fixture *f = arg;
    f->served_at_slice[f->slices++] = f->served;
    if (f->slices == SLICES) {
        evloop_stop(f->loop);
        return;
    }
    if (write(f->pipe_fd[1], "x", 1) != 1) return;
    evloop_request_next_round(f->loop);
}

/* A sleeper that would block for ever without a timeout (there is no
 * timer): bounded here so that a broken loop fails instead of hanging.
 * It has no work of its own: libevent's sources always get their pass. */
static bool sleeper(void *arg, int wait_fd, long timeout_us) {
    (void)arg;
    struct epoll_event ev;
    epoll_wait(wait_fd, &ev, 1, timeout_us < 0 || timeout_us > 200000 ? 200 : (int)(timeout_us / 1000));
    return true;
}

/* A loop watching the pipe, with hook as its before-sleep hook, run
 * until the hook stops it; 0, or -1 if something could not be made. */
static int run_loop(fixture *f, evloop_fn *hook, bool with_sleeper) {
    f->loop = evloop_create();
    if (!f->loop || pipe(f->pipe_fd) != 0) return -1;
    evloop_io_t *io = evloop_io_add(f->loop, f->pipe_fd[0], on_readable, f);
    int rc = with_sleeper ? evloop_set_sleeper(f->loop, sleeper, f) : 0;
    evloop_set_before_sleep(f->loop, hook, f);
    evloop_request_before_sleep(f->loop);
    if (rc == 0) rc = evloop_run(f->loop);
    evloop_io_free(io);
    evloop_free(f->loop);
    close(f->pipe_fd[0]);
    close(f->pipe_fd[1]);
    return rc;
}

static int run_slices(bool with_sleeper) {
    fixture f = {0};
    CHECK(run_loop(&f, slice, with_sleeper) == 0);
    CHECK_EQ_INT(f.slices, SLICES);
    for (int i = 0; i < SLICES; i++) CHECK_EQ_INT(f.served_at_slice[i], i);
    return 0;
}

static int test_next_round_on_libevent(void) { return run_slices(false); }
static int test_next_round_with_sleeper(void) { return run_slices(true); }

/* The contrast: asked from the hook itself, the hook runs again at once,
 * in the same libevent pass, before the ready socket is read. */
static void eager(void *arg) {
    fixture *f = arg;
    f->served_at_slice[f->slices++] = f->served;
    if (f->slices == 2) {
        evloop_stop(f->loop);
        return;
    }
    if (write(f->pipe_fd[1], "x", 1) != 1) return;
    evloop_request_before_sleep(f->loop);
}

static int test_before_sleep_again_is_same_round(void) {
    fixture f = {0};
    CHECK(run_loop(&f, eager, false) == 0);
    CHECK_EQ_INT(f.slices, 2);
    CHECK_EQ_INT(f.served_at_slice[1], 0);
    return 0;
}

/* A sleeper whose own work ends its first two sleeps (as the io_uring
 * engine's completions do): each sleep asks for the before-sleep hook, and
 * the first two say libevent's sources need no pass.  libevent runs the
 * hook ahead of a ready watcher in a pass, so the slice of the pass that
 * reads the byte slice 1 wrote still sees 0 and the next one sees 1:
 * slice 3 when a pass follows every sleep (slice 2's pass reads it),
 * slice 4 when the passes after sleeps 1 and 2 are skipped (slice 3's). */
typedef struct {
    fixture f;
    int sleeps;
    int timer_fired;
} own_fixture;

static bool own_work_sleeper(void *arg, int wait_fd, long timeout_us) {
    own_fixture *o = arg;
    (void)wait_fd;
    (void)timeout_us;
    evloop_request_before_sleep(o->f.loop);
    return ++o->sleeps > 2;
}

static void count_slice(void *arg) {
    own_fixture *o = arg;
    o->f.served_at_slice[o->f.slices] = o->f.served;
    if (o->f.slices == 1 && write(o->f.pipe_fd[1], "x", 1) != 1) return;
    if (++o->f.slices == SLICES) evloop_stop(o->f.loop);
}

static int test_own_work_skips_libevent_poll(void) {
    own_fixture o = {0};
    o.f.loop = evloop_create();
    CHECK(o.f.loop != NULL);
    CHECK(pipe(o.f.pipe_fd) == 0);
    evloop_io_t *io = evloop_io_add(o.f.loop, o.f.pipe_fd[0], on_readable, &o.f);
    CHECK(evloop_set_sleeper(o.f.loop, own_work_sleeper, &o) == 0);
    evloop_set_before_sleep(o.f.loop, count_slice, &o);
    evloop_request_before_sleep(o.f.loop);
    CHECK(evloop_run(o.f.loop) == 0);
    CHECK_EQ_INT(o.f.slices, SLICES);
    static const int want[SLICES] = {0, 0, 0, 0, 1};
    for (int i = 0; i < SLICES; i++) CHECK_EQ_INT(o.f.served_at_slice[i], want[i]);
    evloop_io_free(io);
    evloop_free(o.f.loop);
    close(o.f.pipe_fd[0]);
    close(o.f.pipe_fd[1]);
    return 0;
}

/* A due timer still gets libevent's pass after a sleep that reported own
 * work only. */
static void on_timer(void *arg) {
    own_fixture *o = arg;
    o->timer_fired++;
    evloop_stop(o->f.loop);
}

static bool busy_sleeper(void *arg, int wait_fd, long timeout_us) {
    own_fixture *o = arg;
    (void)wait_fd;
    (void)timeout_us;
    if (++o->sleeps > 100000) evloop_stop(o->f.loop); /* the timer never fired: fail below */
    usleep(100);
    return false;
}

static int test_due_timer_runs_despite_own_work(void) {
    own_fixture o = {0};
    o.f.loop = evloop_create();
    CHECK(o.f.loop != NULL);
    CHECK(evloop_set_sleeper(o.f.loop, busy_sleeper, &o) == 0);
    evloop_timer_t *t = evloop_oneshot_add(o.f.loop, 2000, on_timer, &o);
    CHECK(evloop_run(o.f.loop) == 0);
    CHECK_EQ_INT(o.timer_fired, 1);
    evloop_timer_free(t);
    evloop_free(o.f.loop);
    return 0;
}

/* The round hook: a timer every 20 ms whose callback works 5 ms makes
 * rounds of about 5 ms, the sleeps between them not counted. */
typedef struct {
    evloop_t *loop;
    int ticks, rounds;
    long long sum_us, max_us;
    long long work_us; /* measured in the ticks themselves */
} rounds_fixture;

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void busy_tick(void *arg) {
    rounds_fixture *f = arg;
    long long start = now_us();
    usleep(5000);
    f->work_us += now_us() - start;
    if (++f->ticks == 5) evloop_stop(f->loop);
}

static void on_round(void *arg, long long us) {
    rounds_fixture *f = arg;
    f->rounds++;
    f->sum_us += us;
    if (us > f->max_us) f->max_us = us;
}

static int run_rounds(bool with_sleeper) {
    rounds_fixture f = {0};
    f.loop = evloop_create();
    CHECK(f.loop != NULL);
    if (with_sleeper) CHECK(evloop_set_sleeper(f.loop, sleeper, NULL) == 0);
    evloop_set_round_hook(f.loop, on_round, &f);
    evloop_timer_t *t = evloop_timer_add(f.loop, 20000, busy_tick, &f);
    CHECK(evloop_run(f.loop) == 0);
    evloop_timer_free(t);
    evloop_free(f.loop);
    CHECK_EQ_INT(f.ticks, 5);
    CHECK(f.rounds >= 5);
    if (f.sum_us + f.rounds < f.work_us) printf("rounds %d sum %lld work %lld\n", f.rounds, f.sum_us, f.work_us);
    CHECK(f.sum_us + f.rounds >= f.work_us); /* every tick's work (a round's time is rounded down to a us) */
    CHECK(f.sum_us < f.work_us + 20000);     /* not the 75 ms and more of sleep between them */
    CHECK(f.max_us >= 5000 && f.max_us < 20000);
    return 0;
}

static int test_round_hook_on_libevent(void) { return run_rounds(false); }
static int test_round_hook_with_sleeper(void) { return run_rounds(true); }

int main(void) {
    RUN_TEST(test_next_round_on_libevent);
    RUN_TEST(test_next_round_with_sleeper);
    RUN_TEST(test_before_sleep_again_is_same_round);
    RUN_TEST(test_own_work_skips_libevent_poll);
    RUN_TEST(test_due_timer_runs_despite_own_work);
    RUN_TEST(test_round_hook_on_libevent);
    RUN_TEST(test_round_hook_with_sleeper);
    return TEST_REPORT("evloop");
}
