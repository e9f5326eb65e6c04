/* purge.c: giving free pages back to the OS.
 *
 * Decay: a free span becomes DIRTY (still resident) when freed; once it
 * has stayed unused for decay_ms (default 10 s) it is madvised away
 * (page.c does the work, oldest first).  The check runs at most once per
 * tick interval (decay_ms / 10, between 10 ms and 1 s) from three places:
 * page frees, ebb_maintain() (a host's timer), and the background thread,
 * which makes the purge happen even when the program is idle.  Each tick
 * first drains the transfer stacks (xfer.c) into the slabs, the cached
 * large runs (runcache.c) into the page layer, and gives back
 * the empty slabs central.c kept for decay_ms, so their pages age too.  decay_ms 0
 * purges at every page free; -1 never purges by age.  ebb_purge() flushes
 * the caller's thread cache, drains the transfer stacks, gives back every
 * kept empty slab and purges everything at once; ebb_flush_thread_cache()
 * does only the first two.
 * The background thread starts lazily on the first page free (not during
 * init, where creating a thread could recurse into malloc), blocks all
 * signals, and is restarted on demand in a fork child. */
#include <signal.h>
#include <time.h>

#include "internal.h"

static uint64_t last_tick_ms; /* atomic */
static int bg_started;        /* atomic: 0 none, 1 running or starting */
static __thread int in_tick;  /* this thread is inside tick() */

static void tick(bool force);

static uint64_t tick_interval_ms(void) {
    long iv = _ebb_conf.decay_ms / 10;
    if (iv < 10) iv = 10;
    if (iv > 1000) iv = 1000;
    return (uint64_t)iv;
}

static void *bg_main(void *arg) {
    (void)arg;
    uint64_t iv = tick_interval_ms();
    struct timespec ts = {.tv_sec = (time_t)(iv / 1000),
                          .tv_nsec = (long)(iv % 1000) * 1000000L};
    for (;;) {
        nanosleep(&ts, NULL);
        tick(true);
    }
    return NULL;
}

static void bg_start(void) {
    int expect = 0;
    if (!__atomic_compare_exchange_n(&bg_started, &expect, 1, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t tid;
    if (pthread_create(&tid, &attr, bg_main, NULL) != 0)
        __atomic_store_n(&bg_started, 0, __ATOMIC_RELEASE);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Purge what has aged past decay_ms, if a tick interval has passed. */
void _ebb_purge_tick(void) {
    tick(false);
}

/* force: the background thread's own wake-ups skip the interval check,
 * so a coarse clock cannot make it miss a whole interval. */
static void tick(bool force) {
    long decay = _ebb_conf.decay_ms;
    if (decay < 0)
        return;
    if (_ebb_conf.background_thread &&
        !__atomic_load_n(&bg_started, __ATOMIC_RELAXED))
        bg_start();
    uint64_t now = _ebb_os_now_ms();
    uint64_t last = __atomic_load_n(&last_tick_ms, __ATOMIC_RELAXED);
    if (decay > 0 && !force && now - last < tick_interval_ms())
        return;
    if (in_tick)
        return; /* a page free made by this very tick */
    if (!__atomic_compare_exchange_n(&last_tick_ms, &last, now, false,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return; /* another thread is ticking */
    in_tick = 1;
    _ebb_xfer_drain_all();
    _ebb_runcache_drain();
    _ebb_central_trim(now, decay, false);
    if ((uint64_t)decay <= now) {
        _ebb_page_purge(now - (uint64_t)decay);
        _ebb_huge_trim(now - (uint64_t)decay);
    }
    /* no lock is held here; ebb_check's own page frees find in_tick set */
    ebb_assert_expensive(ebb_check() == 0);
    in_tick = 0;
}

void ebb_flush_thread_cache(void) {
    ebb_ensure_init();
    _ebb_tcache_flush_self();
    _ebb_xfer_drain_all();
}

void _ebb_purge_after_fork_child(void) {
    __atomic_store_n(&bg_started, 0, __ATOMIC_RELAXED);
}

void ebb_maintain(void) {
    ebb_ensure_init();
    _ebb_purge_tick();
}

void ebb_purge(void) {
    ebb_ensure_init();
    _ebb_tcache_flush_self();
    _ebb_xfer_drain_all();
    _ebb_runcache_drain();
    _ebb_central_trim(0, 0, true);
    _ebb_page_purge(UINT64_MAX);
    _ebb_huge_trim(UINT64_MAX);
    ebb_assert_expensive(ebb_check() == 0);
}
