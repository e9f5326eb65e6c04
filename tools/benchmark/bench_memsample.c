/* bench_memsample.c: the INFO memory timeline (see bench_memsample.h).
 * One thread; it sleeps on a condition variable so stop is immediate. */
#include "bench_tls.h"
#include "bench_memsample.h"
#include "bench_engine.h"
#include "bench_net.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    const bench_opts_t *o;
    FILE *f;
    int fd;
    long pid; /* server process_id when local, else 0 */
    int stop;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double t_start, t_last;
    uint64_t done_last;
} ms = {.mu = PTHREAD_MUTEX_INITIALIZER};

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long vmrss_bytes(long pid) {
    char path[64], line[256];
    long long kb = -1;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static void sample_once(void) {
    static char info[65536];
    const char *argv[] = {"INFO", "memory"};
    int t = bench_net_call(ms.fd, info, sizeof(info), 2, argv);
    if (t != '$')
        info[0] = '\0';
    static const char *fields[] = {"used_memory", "used_memory_rss", "mem_fragmentation_ratio",
                                   "allocator_active", "allocator_resident"};
    double now = mono();
    uint64_t done = bench_engine_live_done();
    double ops = now > ms.t_last ? (double)(done - ms.done_last) / (now - ms.t_last) : 0;
    ms.t_last = now;
    ms.done_last = done;
    fprintf(ms.f, "%.3f", now - ms.t_start);
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        char v[64] = "";
        bench_net_info_field(info, fields[i], v, sizeof(v));
        fprintf(ms.f, ",%s", v);
    }
    fprintf(ms.f, ",%.0f,", ops);
    if (ms.pid > 0) {
        long long rss = vmrss_bytes(ms.pid);
        if (rss >= 0)
            fprintf(ms.f, "%lld", rss);
    }
    fprintf(ms.f, "\n");
    fflush(ms.f);
}

static void *sampler_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&ms.mu);
    while (!ms.stop) {
        pthread_mutex_unlock(&ms.mu);
        sample_once();
        pthread_mutex_lock(&ms.mu);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += 1;
        while (!ms.stop && pthread_cond_timedwait(&ms.cv, &ms.mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&ms.mu);
    sample_once();
    return NULL;
}

int bench_memsample_start(const bench_opts_t *o, const char *path) {
    char err[256], reply[8192];
    ms.o = o;
    ms.fd = bench_net_connect(o, err, sizeof(err));
    if (ms.fd < 0 || bench_net_handshake(ms.fd, o, err, sizeof(err)) < 0) {
        fprintf(stderr, "--memory-sample: %s\n", err);
        return -1;
    }
    if (bench_net_is_local(o)) {
        const char *argv[] = {"INFO", "server"};
        char pid[32];
        if (bench_net_call(ms.fd, reply, sizeof(reply), 2, argv) == '$' &&
            bench_net_info_field(reply, "process_id", pid, sizeof(pid)) == 0)
            ms.pid = atol(pid);
    }
    ms.f = fopen(path, "w");
    if (!ms.f) {
        perror(path);
        return -1;
    }
    fprintf(ms.f, "time,used_memory,used_memory_rss,mem_fragmentation_ratio,allocator_active,"
                  "allocator_resident,ops_per_sec,vmrss\n");
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ms.cv, &ca);
    pthread_condattr_destroy(&ca);
    ms.t_start = ms.t_last = mono();
    ms.done_last = bench_engine_live_done();
    if (pthread_create(&ms.tid, NULL, sampler_main, NULL) != 0) {
        fprintf(stderr, "--memory-sample: cannot start thread\n");
        return -1;
    }
    return 0;
}

void bench_memsample_stop(void) {
    if (!ms.f)
        return;
    pthread_mutex_lock(&ms.mu);
    ms.stop = 1;
    pthread_cond_signal(&ms.cv);
    pthread_mutex_unlock(&ms.mu);
    pthread_join(ms.tid, NULL);
    fclose(ms.f);
    ms.f = NULL;
    bench_sock_close(ms.fd);
}
