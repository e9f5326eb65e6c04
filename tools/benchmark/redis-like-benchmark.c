/* redis-like-benchmark.c: main of the load generator.
 *
 * Order: parse options, probe the server once (clear message and exit 1 when
 * unreachable or when AUTH fails), build the test list, then run each test
 * through bench_engine_run() and print it through bench_output.c.  Modules:
 * bench_opts (command line), bench_net (blocking helpers), bench_workload
 * (what to send), bench_engine (threads and event loops), bench_resp (reply
 * skipper), bench_output (text/CSV/JSON), bench_memsample (INFO timeline),
 * bench_sweep (--latency-sweep: latency against throughput, several servers),
 * bench_cluster (--cluster: the slot map and the key hash).
 * Standalone: plain libc malloc, not linked with the server library. */
#include "bench_tls.h"
#include "bench_cluster.h"
#include "bench_engine.h"
#include "bench_memsample.h"
#include "bench_net.h"
#include "bench_opts.h"
#include "bench_output.h"
#include "bench_sweep.h"
#include "bench_workload.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* -I: open the connections and wait until killed. */
static int idle_mode(const bench_opts_t *o) {
    char err[256];
    printf("Creating %d idle connections and waiting forever (Ctrl+C when done)\n", o->clients);
    fflush(stdout);
    for (int i = 0; i < o->clients; i++) {
        int fd = bench_net_connect(o, err, sizeof(err));
        if (fd < 0 || bench_net_handshake(fd, o, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    for (;;)
        pause();
}

/* One connection before any test: reachability, AUTH, and the two host
 * settings redis-benchmark prints.  Exits 1 with a message on failure. */
static void probe_server(const bench_opts_t *o, bench_hostconf_t *hc) {
    char err[256], reply[1024];
    int fd = bench_net_connect(o, err, sizeof(err));
    if (fd < 0 || bench_net_handshake(fd, o, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    const char *a1[] = {"CONFIG", "GET", "save"}, *a2[] = {"CONFIG", "GET", "appendonly"};
    if (bench_net_call(fd, reply, sizeof(reply), 3, a1) == '*')
        bench_net_array_bulk(reply, 1, hc->save, sizeof(hc->save));
    if (bench_net_call(fd, reply, sizeof(reply), 3, a2) == '*')
        bench_net_array_bulk(reply, 1, hc->appendonly, sizeof(hc->appendonly));
    bench_sock_close(fd);
}

int main(int argc, char **argv) {
    bench_opts_t o;
    int rc = bench_opts_parse(&o, argc, argv);
    if (rc) {
        bench_opts_free(&o);
        return rc < 0 ? 1 : 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (o.tls) {
        char err[256];
        if (bench_tls_init(&o, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            bench_opts_free(&o);
            return 1;
        }
    }
    if (!o.seed_given)
        o.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (o.idle)
        return idle_mode(&o);

    bench_hostconf_t hc = {"", ""};
    if (!o.latency_sweep)
        probe_server(&o, &hc);      /* the sweep probes each of its targets */
    static bench_cluster_t cluster; /* 16 KB: kept off the stack */
    if (o.cluster) {
        char err[256];
        if (bench_cluster_load(&o, &cluster, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        o.cluster_map = &cluster;
        if (!o.quiet && !o.csv)
            printf("Cluster has %d master nodes\n\n", cluster.nnodes);
    }

    bench_test_t *tests;
    int ntests = bench_tests_build(&o, &tests);
    if (ntests <= 0) {
        fprintf(stderr, "No tests selected\n");
        return 1;
    }
    if (o.latency_sweep && ntests != 1) {
        fprintf(stderr, "--latency-sweep runs one test: choose it with -t, --ratio or a custom command\n");
        return 1;
    }
    char *payload = bench_payload_create(bench_opts_max_value(&o), o.seed);
    if (!payload) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    if (o.latency_sweep) {
        rc = bench_sweep_run(&o, &tests[0], payload);
        free(payload);
        bench_tests_free(tests, ntests);
        bench_opts_free(&o);
        return rc;
    }
    if (o.memsample_path && bench_memsample_start(&o, o.memsample_path) < 0)
        return 1;
    int progress = isatty(STDOUT_FILENO) && !o.quiet && !o.csv;
    bench_out_begin(&o);
    do {
        for (int i = 0; i < ntests; i++) {
            bench_result_t res;
            char err[256];
            if (bench_engine_run(&o, &tests[i], payload, progress ? bench_out_progress : NULL,
                                 &o, &res, err, sizeof(err)) < 0) {
                bench_out_progress_clear();
                fprintf(stderr, "%s\n", err);
                bench_memsample_stop();
                return 1;
            }
            bench_out_result(&o, &hc, &res);
            if (o.json_path && (bench_json_add(&o, &res) < 0 || bench_json_write(&o, o.json_path) < 0))
                return 1;
            hist_free(res.hist);
        }
    } while (o.loop);
    bench_memsample_stop();
    free(payload);
    bench_tests_free(tests, ntests);
    bench_json_free();
    bench_opts_free(&o);
    return 0;
}
