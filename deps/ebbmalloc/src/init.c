/* init.c: one-time start-up, fork handling and the report at exit.
 * Every slow path calls ebb_ensure_init() (internal.h), which lands here
 * once.  Start-up must not allocate: conf parsing, size classes and the
 * thread-cache budget are computed in place, then _ebb_ready is published;
 * only after that is pthread_atfork called, since glibc may malloc there
 * (the nested call then finds the allocator ready).
 * Fork: prepare takes every lock in the global order (thread registry,
 * class locks, page lock, huge cache lock) so the child gets consistent structures; the
 * child re-initializes the locks and keeps only its own thread cache. */

#include "internal.h"

int _ebb_ready;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static void fork_prepare(void) {
    _ebb_tcache_lock_all();
    _ebb_central_lock_all();
    _ebb_page_lock_all();
    _ebb_huge_lock();
}

static void fork_parent(void) {
    _ebb_huge_unlock(0);
    _ebb_page_unlock_all(0);
    _ebb_central_unlock_all(0);
    _ebb_tcache_unlock_all(0);
}

static void fork_child(void) {
    _ebb_huge_unlock(1);
    _ebb_page_unlock_all(1);
    _ebb_central_unlock_all(1);
    _ebb_tcache_unlock_all(1);
    _ebb_purge_after_fork_child();
}

void _ebb_init_slow(void) {
    pthread_mutex_lock(&init_lock);
    if (__atomic_load_n(&_ebb_ready, __ATOMIC_ACQUIRE)) {
        pthread_mutex_unlock(&init_lock);
        return;
    }
    _ebb_conf_init();
    _ebb_size_class_init();
    _ebb_central_init();
    _ebb_tcache_global_init();
    __atomic_store_n(&_ebb_ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&init_lock);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void print_to_stderr(void *arg, const char *text) {
    (void)arg;
    _ebb_os_write_err(text);
}

__attribute__((destructor)) static void ebb_at_exit(void) {
    if (__atomic_load_n(&_ebb_ready, __ATOMIC_ACQUIRE) && _ebb_conf.stats_print)
        ebb_stats_print(print_to_stderr, NULL);
}
