/* test_evloop.c: lib/evloop.c's before-sleep hook and its next-round
 * request, on libevent's own sleep and with a sleeper (the io_uring
 * engine's way): work done a slice per round must let ready sockets be
 * served between its slices.  A pipe stands for a client's socket. */
#include <stdio.h>
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
 * timer): bounded here so that a broken loop fails instead of hanging. */
static void sleeper(void *arg, int wait_fd, long timeout_us) {
    (void)arg;
    struct epoll_event ev;
    epoll_wait(wait_fd, &ev, 1, timeout_us < 0 || timeout_us > 200000 ? 200 : (int)(timeout_us / 1000));
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

int main(void) {
    RUN_TEST(test_next_round_on_libevent);
    RUN_TEST(test_next_round_with_sleeper);
    RUN_TEST(test_before_sleep_again_is_same_round);
    return TEST_REPORT("evloop");
}
