/* bench.c: micro-benchmarks for allocators, run under LD_PRELOAD by
 * run_bench.sh so each allocator executes the same binary.
 *   pair    malloc+free pairs, single thread, mixed small sizes (ns/pair)
 *   xthread producer/consumer: one thread mallocs, another frees (M frees/s)
 *   larson  2 threads, each replacing random slots of a 10000-slot table
 *           with random sizes 16..1024, handing a share of blocks to the
 *           other thread (M ops/s)
 * Prints one line per benchmark plus the peak RSS (VmHWM). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void bench_pair(void) {
    static const size_t sizes[8] = {16, 24, 32, 48, 64, 80, 100, 128};
    long n = 50 * 1000 * 1000;
    void *volatile sink;
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        void *p = malloc(sizes[i & 7]);
        sink = p;
        free(p);
    }
    double t = now_s() - t0;
    (void)sink;
    printf("pair: %.2f ns per malloc+free\n", t * 1e9 / (double)n);
}

#define RING 4096
static void *ring[RING];
static long r_head, r_tail; /* atomic; published in batches */
static long xt_n = 10 * 1000 * 1000;

static void *xt_consumer(void *arg) {
    (void)arg;
    long head = 0;
    while (head < xt_n) {
        long tail;
        while ((tail = __atomic_load_n(&r_tail, __ATOMIC_ACQUIRE)) == head)
            ;
        for (; head < tail; head++)
            free(ring[head % RING]);
        __atomic_store_n(&r_head, head, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void bench_xthread(void) {
    pthread_t t;
    double t0 = now_s();
    pthread_create(&t, NULL, xt_consumer, NULL);
    long tail = 0, head_seen = 0;
    for (long i = 0; i < xt_n; i++) {
        void *p = malloc(16 + (size_t)(i & 7) * 16);
        while (tail - head_seen >= RING)
            head_seen = __atomic_load_n(&r_head, __ATOMIC_ACQUIRE);
        ring[tail % RING] = p;
        tail++;
        if ((tail & 63) == 0 || i == xt_n - 1)
            __atomic_store_n(&r_tail, tail, __ATOMIC_RELEASE);
    }
    pthread_join(t, NULL);
    double el = now_s() - t0;
    printf("xthread: %.1f M frees/s\n", (double)xt_n / el / 1e6);
}

#define SLOTS 10000
static void *shared[2][SLOTS];
static long larson_ops = 20 * 1000 * 1000;

static void *larson_worker(void *arg) {
    int me = (int)(intptr_t)arg;
    uint64_t s = 88172645463325252ULL + (uint64_t)me;
    for (long i = 0; i < larson_ops; i++) {
        /* mostly own table; 1 in 8 from the other thread's table */
        int tab = (rng(&s) & 7) == 0 ? 1 - me : me;
        void **slot = &shared[tab][rng(&s) % SLOTS];
        void *p = malloc(16 + rng(&s) % 1009);
        *(char *)p = 1;
        void *old = __atomic_exchange_n(slot, p, __ATOMIC_ACQ_REL);
        free(old);
    }
    return NULL;
}

static void bench_larson(void) {
    pthread_t t[2];
    double t0 = now_s();
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, larson_worker, (void *)(intptr_t)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    double el = now_s() - t0;
    printf("larson: %.1f M ops/s\n", 2.0 * (double)larson_ops / el / 1e6);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < SLOTS; i++)
            free(shared[k][i]);
}

static void print_peak_rss(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            printf("peak_rss: %s", line + 6);
    if (f) fclose(f);
}

int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "all";
    if (!strcmp(which, "all") || !strcmp(which, "pair")) bench_pair();
    if (!strcmp(which, "all") || !strcmp(which, "xthread")) bench_xthread();
    if (!strcmp(which, "all") || !strcmp(which, "larson")) bench_larson();
    print_peak_rss();
    return 0;
}
