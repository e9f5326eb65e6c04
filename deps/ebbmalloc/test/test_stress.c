/* test_stress.c: multi-threaded stress of the allocator, checked for
 * corruption: every block carries a fill pattern derived from its address
 * and size, verified before it is freed.
 *   producer/consumer  blocks made on 2 threads, freed on 2 others
 *   churn              4 threads replacing random slots with mixed sizes
 *                      (mostly small, some large, rare huge), realloc'ing
 *                      some, and swapping blocks through a shared table so
 *                      many frees are cross-thread
 *   fork               fork while churn threads run; the child allocates
 * Built twice: with -DSTRESS_EBB_API against libebbmalloc.a (calls ebb_*),
 * and plain (calls malloc), which run_tests.sh runs under LD_PRELOAD. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_help.h"

#ifdef STRESS_EBB_API
#include "ebbmalloc.h"
#define XMALLOC ebb_malloc
#define XFREE ebb_free
#define XREALLOC ebb_realloc
#define XNAME "ebbmalloc stress (static)"
#else
#define XMALLOC malloc
#define XFREE free
#define XREALLOC realloc
#define XNAME "ebbmalloc stress (malloc)"
#endif

static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static unsigned char pattern(const void *p, size_t size) {
    uintptr_t v = (uintptr_t)p;
    return (unsigned char)((v >> 4) ^ (v >> 12) ^ size ^ 0x5a);
}

/* Fill the first and last 64 bytes (all of a small block). */
static void fill(void *p, size_t size) {
    unsigned char c = pattern(p, size);
    size_t head = size < 64 ? size : 64;
    memset(p, c, head);
    if (size > 64)
        memset((char *)p + size - 64, c, 64);
}

static int verify(const void *p, size_t size) {
    unsigned char c = pattern(p, size);
    const unsigned char *b = p;
    size_t head = size < 64 ? size : 64;
    for (size_t i = 0; i < head; i++)
        if (b[i] != c) return 0;
    if (size > 64)
        for (size_t i = size - 64; i < size; i++)
            if (b[i] != c) return 0;
    return 1;
}

static size_t random_size(uint64_t *rng) {
    uint64_t r = rng_next(rng) % 1000;
    if (r < 700) return 1 + rng_next(rng) % 128;
    if (r < 930) return 129 + rng_next(rng) % 4000;
    if (r < 995) return 4096 + rng_next(rng) % 60000;
    if (r < 999) return 65536 + rng_next(rng) % (1 << 20);
    return (2 << 20) + rng_next(rng) % (3 << 20);
}

static int errors; /* atomic */

/* ---- producer / consumer ---- */

typedef struct {
    void *p;
    size_t size;
} item_t;
#define QCAP 1024
static item_t queue[QCAP];
static size_t q_head, q_tail;
static int producers_left;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
#define PC_ITEMS 500000

static void *producer(void *arg) {
    uint64_t rng = (uintptr_t)arg * 7919 + 1;
    for (int i = 0; i < PC_ITEMS; i++) {
        size_t size = rng_next(&rng) % 8 == 0 ? random_size(&rng)
                                              : 1 + rng_next(&rng) % 256;
        void *p = XMALLOC(size);
        if (!p) {
            __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
            continue;
        }
        fill(p, size);
        pthread_mutex_lock(&q_lock);
        while (q_tail - q_head == QCAP)
            pthread_cond_wait(&q_cond, &q_lock);
        queue[q_tail++ % QCAP] = (item_t){p, size};
        pthread_cond_broadcast(&q_cond);
        pthread_mutex_unlock(&q_lock);
    }
    pthread_mutex_lock(&q_lock);
    producers_left--;
    pthread_cond_broadcast(&q_cond);
    pthread_mutex_unlock(&q_lock);
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    for (;;) {
        item_t batch[64];
        int n = 0;
        pthread_mutex_lock(&q_lock);
        while (q_tail == q_head && producers_left > 0)
            pthread_cond_wait(&q_cond, &q_lock);
        while (q_tail != q_head && n < 64)
            batch[n++] = queue[q_head++ % QCAP];
        int done = n == 0 && producers_left == 0;
        pthread_cond_broadcast(&q_cond);
        pthread_mutex_unlock(&q_lock);
        for (int i = 0; i < n; i++) {
            if (!verify(batch[i].p, batch[i].size))
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
            XFREE(batch[i].p);
        }
        if (done)
            return NULL;
    }
}

static int test_producer_consumer(void) {
    pthread_t t[4];
    errors = 0;
    producers_left = 2;
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, producer, (void *)(uintptr_t)(i + 1)), 0);
    for (int i = 2; i < 4; i++)
        CHECK_EQ(pthread_create(&t[i], NULL, consumer, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(errors, 0);
    CHECK(q_head == q_tail);
    return 0;
}

/* ---- churn ---- */

#define SLOTS 2000
#define SHARED 256
static item_t shared_tab[SHARED];
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static int churn_stop; /* atomic: churn threads run until set (if > 0 ops) */

typedef struct {
    uint64_t seed;
    long ops;
} churn_arg_t;

static void *churn(void *argp) {
    churn_arg_t *arg = argp;
    uint64_t rng = arg->seed;
    static __thread item_t slot[SLOTS];
    memset(slot, 0, sizeof(slot));
    for (long op = 0; arg->ops < 0 ? !__atomic_load_n(&churn_stop, __ATOMIC_RELAXED)
                                   : op < arg->ops;
         op++) {
        item_t *it = &slot[rng_next(&rng) % SLOTS];
        if (it->p) {
            if (!verify(it->p, it->size))
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
            uint64_t r = rng_next(&rng) % 16;
            if (r == 0) { /* realloc */
                size_t ns = random_size(&rng);
                void *np = XREALLOC(it->p, ns);
                if (!np) {
                    __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
                    continue;
                }
                fill(np, ns);
                it->p = np;
                it->size = ns;
                continue;
            }
            if (r == 1) { /* swap with the shared table */
                pthread_mutex_lock(&shared_lock);
                item_t *sh = &shared_tab[rng_next(&rng) % SHARED];
                item_t tmp = *sh;
                *sh = *it;
                *it = tmp;
                pthread_mutex_unlock(&shared_lock);
                continue;
            }
            XFREE(it->p);
            it->p = NULL;
        } else {
            size_t size = random_size(&rng);
            it->p = XMALLOC(size);
            if (!it->p) {
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
                continue;
            }
            it->size = size;
            fill(it->p, size);
        }
    }
    for (int i = 0; i < SLOTS; i++)
        if (slot[i].p) {
            if (!verify(slot[i].p, slot[i].size))
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
            XFREE(slot[i].p);
        }
    return NULL;
}

static void drain_shared(void) {
    for (int i = 0; i < SHARED; i++)
        if (shared_tab[i].p) {
            if (!verify(shared_tab[i].p, shared_tab[i].size))
                __atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
            XFREE(shared_tab[i].p);
            shared_tab[i].p = NULL;
        }
}

static int test_churn(void) {
    pthread_t t[4];
    churn_arg_t a[4];
    errors = 0;
    for (int i = 0; i < 4; i++) {
        a[i] = (churn_arg_t){.seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1), .ops = 1000000};
        CHECK_EQ(pthread_create(&t[i], NULL, churn, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    drain_shared();
    CHECK_EQ(errors, 0);
    return 0;
}

/* ---- fork from a multithreaded process ---- */

static int child_work(void) {
    uint64_t rng = 12345;
    static item_t v[5000];
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 5000; i++) {
            v[i].size = random_size(&rng) % 20000 + 1;
            v[i].p = XMALLOC(v[i].size);
            if (!v[i].p) return 2;
            fill(v[i].p, v[i].size);
        }
        for (int i = 0; i < 5000; i++) {
            if (!verify(v[i].p, v[i].size)) return 3;
            XFREE(v[i].p);
        }
    }
#ifdef STRESS_EBB_API
    int bad = ebb_check();
    if (bad != 0) {
        fprintf(stderr, "  child: ebb_check() = %d\n", bad);
        return 4;
    }
#endif
    return 0;
}

static int test_fork(void) {
    pthread_t t[3];
    churn_arg_t a[3];
    errors = 0;
    churn_stop = 0;
    for (int i = 0; i < 3; i++) {
        a[i] = (churn_arg_t){.seed = 77 + (uint64_t)i, .ops = -1};
        CHECK_EQ(pthread_create(&t[i], NULL, churn, &a[i]), 0);
    }
    int bad = 0;
    for (int k = 0; k < 20; k++) {
        usleep(5000);
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_work());
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0) {
            fprintf(stderr, "  fork %d: child status %d\n", k, st);
            bad++;
        }
    }
    __atomic_store_n(&churn_stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    drain_shared();
    CHECK_EQ(bad, 0);
    CHECK_EQ(errors, 0);
    return 0;
}

#ifdef STRESS_EBB_API
/* After the storm, with all threads gone, the heap must be consistent. */
static int test_heap_check(void) {
    CHECK_EQ(ebb_check(), 0);
    ebb_purge();
    CHECK_EQ(ebb_check(), 0);
    return 0;
}
#endif

int main(void) {
    RUN_TEST(test_producer_consumer);
    RUN_TEST(test_churn);
    RUN_TEST(test_fork);
#ifdef STRESS_EBB_API
    RUN_TEST(test_heap_check);
#endif
    return TEST_REPORT(XNAME);
}
