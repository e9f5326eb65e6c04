/* bench_opts.h: the benchmark's configuration and its command-line parser.
 *
 * bench_opts_parse() fills a bench_opts_t from argv with redis-benchmark's
 * option names and defaults plus our extensions (--duration, --rate, --ratio,
 * --key-pattern, --data-size, --data-size-list, --json, --memory-sample,
 * --engine, and the latency sweep's --latency-sweep, --target,
 * --sweep-points, --sweep-max, --sweep-base, --sweep-runs, --plot).
 * Called once by main; everything else only reads the struct. */
#ifndef RL_BENCH_OPTS_H
#define RL_BENCH_OPTS_H

#include <stdint.h>

typedef enum {
    BENCH_KEYS_UNIFORM,
    BENCH_KEYS_SEQUENTIAL,
    BENCH_KEYS_GAUSSIAN,
    BENCH_KEYS_ZIPF
} bench_keypat_t;

typedef enum {
    BENCH_ENGINE_AUTO, /* io_uring when the kernel allows it, else epoll */
    BENCH_ENGINE_URING,
    BENCH_ENGINE_EPOLL
} bench_engine_kind_t;

#define BENCH_MAX_SIZES 32
#define BENCH_MAX_THREADS 64
#define BENCH_MAX_TARGETS 8
#define BENCH_MAX_POINTS 32

/* One server of a latency sweep (--target NAME=[HOST:]PORT). */
typedef struct bench_target {
    const char *name; /* owned (bench_opts_free) */
    char host[256];
    int port;
    const char *socket; /* the default target keeps -s; NULL for --target */
} bench_target_t;

typedef struct bench_size_weight {
    uint32_t size;   /* value bytes */
    uint32_t weight; /* relative frequency */
} bench_size_weight_t;

typedef struct bench_opts {
    const char *host;                            /* -h, default 127.0.0.1 */
    int port;                                    /* -p, default 6379 */
    const char *socket;                          /* -s: unix socket path, overrides host/port */
    const char *password;                        /* -a */
    const char *user;                            /* --user (needs -a) */
    int tls;                                     /* --tls (bench_tls.c) */
    const char *tls_cacert, *tls_cert, *tls_key; /* --cacert, --cert, --key */
    int clients;                                 /* -c, default 50 */
    uint64_t requests;                           /* -n, default 100000 */
    uint32_t datasize;                           /* -d, default 3 */
    int keepalive;                               /* -k 1|0 */
    uint64_t keyspace;                           /* -r; 0 = keys keep their literal __rand_int__ */
    int pipeline;                                /* -P, default 1 */
    int quiet;                                   /* -q */
    int loop;                                    /* -l */
    int show_errors;                             /* -e: print server error replies */
    char *tests;                                 /* -t, lowercased ",a,b," or NULL for defaults */
    int idle;                                    /* -I */
    int csv;                                     /* --csv */
    int threads;                                 /* --threads, default 1 */
    int precision;                               /* --precision: decimals of msec figures */
    int dbnum;                                   /* --dbnum */
    uint64_t seed;                               /* --seed */
    int seed_given;                              /* --seed was on the command line */
    int resp3;                                   /* -3 */
    double duration;                             /* --duration seconds; 0 = use -n */
    double rate;                                 /* --rate ops/s over all clients; 0 = closed loop */
    uint32_t ratio_set, ratio_get;               /* --ratio SET:GET; both 0 = off */
    bench_keypat_t keypat;                       /* --key-pattern */
    uint32_t dsize_min, dsize_max;               /* --data-size MIN-MAX; 0,0 = off */
    bench_size_weight_t dlist[BENCH_MAX_SIZES];  /* --data-size-list */
    int dlist_len;
    const char *json_path;      /* --json FILE */
    const char *memsample_path; /* --memory-sample FILE */
    bench_engine_kind_t engine; /* --engine auto|uring|epoll */
    int pipeline_given;         /* -P was on the command line */
    /* --latency-sweep: open-loop points at shares of a closed-loop maximum. */
    int latency_sweep;
    double sweep_points[BENCH_MAX_POINTS]; /* --sweep-points, percent of the maximum */
    int sweep_npoints;
    double sweep_max;                          /* --sweep-max: the 100% rate; 0 = measure it */
    int sweep_runs;                            /* --sweep-runs: rotations (medians over them) */
    const char *sweep_base;                    /* --sweep-base: the target whose maximum is 100% */
    const char *plot_path;                     /* --plot: the PNG gnuplot draws */
    bench_target_t targets[BENCH_MAX_TARGETS]; /* --target, in order */
    int ntargets;
    int cluster;                             /* --cluster */
    const struct bench_cluster *cluster_map; /* --cluster: set by main (bench_cluster.h) */
    char **custom_argv;                      /* trailing command, borrowed from argv */
    int custom_argc;
} bench_opts_t;

/* Returns 0, 1 when --help/--version was handled (exit 0), or -1 after
 * printing a message to stderr (exit 1). */
int bench_opts_parse(bench_opts_t *o, int argc, char **argv);

void bench_opts_free(bench_opts_t *o);

/* The largest value size any request can carry. */
uint32_t bench_opts_max_value(const bench_opts_t *o);
/* True when value sizes vary per request. */
int bench_opts_variable_size(const bench_opts_t *o);

#endif
