/* bench_opts.c: parses the benchmark's command line into bench_opts_t.
 *
 * Accepts redis-benchmark's spellings (-h -p -s -a --user -c -n -d -k -r -P
 * -q -l -e -t -I --csv --threads --precision --dbnum --seed -3 --cluster) and our
 * extensions.  Every numeric value is range-checked: a bad value prints
 * "Invalid value for <opt>: <text>" and the caller exits 1, where
 * redis-benchmark would silently take atoi()'s 0. */
#include "bench_opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_VERSION "redis-like-benchmark 1.0 (redis-benchmark 7 compatible)"

static void opts_usage(void) {
    printf(
        "Usage: redis-like-benchmark [OPTIONS] [COMMAND ARGS...]\n\n"
        "Options (as redis-benchmark):\n"
        " -h <hostname>      Server hostname (default 127.0.0.1)\n"
        " -p <port>          Server port (default 6379)\n"
        " -s <socket>        Server socket (overrides host and port)\n"
        " -a <password>      Password for AUTH\n"
        " --user <username>  ACL user for 'AUTH username pass'. Needs -a.\n"
        " --tls              Establish a secure TLS connection (either engine)\n"
        " --cacert <file>    CA certificate file to verify the server with\n"
        " --cert <file>      Client certificate to authenticate with\n"
        " --key <file>       Private key file to authenticate with\n"
        " -c <clients>       Number of parallel connections (default 50)\n"
        " -n <requests>      Total number of requests (default 100000)\n"
        " -d <size>          Data size of SET/GET value in bytes (default 3)\n"
        " --dbnum <db>       SELECT the specified db number (default 0)\n"
        " -3                 Start sessions in RESP3 mode (HELLO 3)\n"
        " --threads <num>    Split connections over <num> threads\n"
        " -k <boolean>       1=keep alive 0=reconnect (default 1)\n"
        " -r <keyspacelen>   Replace __rand_int__ in arguments with a 12 digit\n"
        "                    number in 0..keyspacelen-1 (new for every request)\n"
        " -P <numreq>        Pipeline <numreq> requests (default 1)\n"
        " -q                 Quiet: just show requests per second\n"
        " --precision <n>    Decimal places of latency output (default 3)\n"
        " --csv              Output in CSV format\n"
        " -l                 Loop: run the tests forever\n"
        " -e                 Print error replies from the server to stderr\n"
        " -t <tests>         Only run the comma separated list of tests\n"
        " -I                 Idle mode: open N idle connections and wait\n"
        " --seed <num>       Seed of the random generator (default: time)\n"
        " --cluster          Redis Cluster mode: read the slot map from the -h/-p\n"
        "                    node (CLUSTER NODES), open one connection per master\n"
        "                    per client, send each request to the master of its\n"
        "                    key's slot, follow -MOVED/-ASK (counted in the output)\n"
        "\nBeyond redis-benchmark:\n"
        " --duration <sec>   Run each test for <sec> seconds instead of -n requests\n"
        " --rate <ops>       Open loop: send <ops> requests/s in total; latency is\n"
        "                    measured from each request's intended send time\n"
        " --ratio <S:G>      One mixed test of SET and GET in the ratio S:G\n"
        " --key-pattern <p>  uniform|sequential|gaussian|zipf over the -r keyspace\n"
        " --data-size <a-b>  Random value sizes between a and b bytes\n"
        " --data-size-list <size:weight,...>  Weighted value sizes, e.g.\n"
        "                    32:60,1024:30,16384:10\n"
        " --json <file>      Write every figure and the latency distribution\n"
        " --memory-sample <file>  Poll INFO memory once a second into a CSV file\n"
        " --engine <e>       auto|uring|epoll: how sockets are driven (default auto:\n"
        "                    io_uring when the kernel allows it and\n"
        "                    RL_BENCH_NO_IO_URING is unset, else epoll)\n"
        "\nLatency sweep (one test; --duration per point, default 5 s):\n"
        " --latency-sweep    Measure each target's closed-loop maximum (-c connections,\n"
        "                    one request in flight each), then run the open loop at\n"
        "                    shares of the base target's maximum and print p50, p99\n"
        "                    and p99.9 per rate; -P caps how deep a connection\n"
        "                    pipelines when requests fall due faster (default 64)\n"
        " --target <n=[h:]p> A server of the sweep, by name (repeatable; default\n"
        "                    the -h/-p server, named 'server'); the servers take\n"
        "                    turns at every point, in an order that rotates\n"
        " --sweep-points <l> Percentages of the maximum (default 10,20,...,100)\n"
        " --sweep-max <ops>  The 100%% rate instead of a measured maximum\n"
        " --sweep-base <n>   The target whose maximum is 100%% (default the first)\n"
        " --sweep-runs <n>   Whole sweeps to run, medians reported (default 1)\n"
        " --plot <file.png>  Draw the latency-throughput curves with gnuplot\n"
        " --help, --version\n");
}

static int opts_bad(const char *opt, const char *val) {
    fprintf(stderr, "Invalid value for %s: '%s'\n", opt, val ? val : "");
    return -1;
}

/* Strict unsigned parse in [lo, hi]; returns 0 or -1. */
static int opts_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
    if (!s || !*s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int opts_int(const char *s, int lo, int hi, int *out) {
    uint64_t v;
    if (opts_u64(s, (uint64_t)lo, (uint64_t)hi, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

static int opts_double(const char *s, double lo, double *out) {
    if (!s || !*s)
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= lo) || v > 1e12)
        return -1;
    *out = v;
    return 0;
}

/* "S:G" with both >= 0 and not both 0. */
static int opts_ratio(bench_opts_t *o, const char *s) {
    unsigned a, b;
    char tail;
    if (sscanf(s, "%u:%u%c", &a, &b, &tail) != 2 || a + b == 0 || a > 1000000 || b > 1000000)
        return -1;
    o->ratio_set = a;
    o->ratio_get = b;
    return 0;
}

static int opts_size_range(bench_opts_t *o, const char *s) {
    unsigned a, b;
    char tail;
    if (sscanf(s, "%u-%u%c", &a, &b, &tail) != 2 || a == 0 || b < a || b > 512u * 1024 * 1024)
        return -1;
    o->dsize_min = a;
    o->dsize_max = b;
    return 0;
}

static int opts_size_list(bench_opts_t *o, const char *s) {
    const char *p = s;
    o->dlist_len = 0;
    while (*p) {
        unsigned size, weight;
        int used = 0;
        if (sscanf(p, "%u:%u%n", &size, &weight, &used) != 2 || size == 0 ||
            size > 512u * 1024 * 1024 || weight == 0 || weight > 1000000 ||
            o->dlist_len == BENCH_MAX_SIZES)
            return -1;
        o->dlist[o->dlist_len].size = size;
        o->dlist[o->dlist_len].weight = weight;
        o->dlist_len++;
        p += used;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return o->dlist_len ? 0 : -1;
}

/* "NAME=PORT" or "NAME=HOST:PORT". */
static int opts_target(bench_opts_t *o, const char *v) {
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || o->ntargets == BENCH_MAX_TARGETS)
        return -1;
    bench_target_t *t = &o->targets[o->ntargets];
    const char *colon = strrchr(eq + 1, ':');
    const char *port = colon ? colon + 1 : eq + 1;
    size_t hlen = colon ? (size_t)(colon - eq - 1) : 0;
    if (hlen >= sizeof(t->host) || (colon && hlen == 0) || opts_int(port, 1, 65535, &t->port) < 0)
        return -1;
    for (int i = 0; i < o->ntargets; i++)
        if (strlen(o->targets[i].name) == (size_t)(eq - v) && !strncmp(o->targets[i].name, v, (size_t)(eq - v)))
            return -1; /* names tell the targets apart in every output */
    /* The name ends at '=': a copy of its own. */
    char *name = strndup(v, (size_t)(eq - v));
    if (!name)
        return -1;
    t->name = name;
    if (colon)
        memcpy(t->host, eq + 1, hlen);
    t->host[hlen] = '\0';
    o->ntargets++;
    return 0;
}

/* Comma-separated percentages in (0, 1000]. */
static int opts_points(bench_opts_t *o, const char *s) {
    const char *p = s;
    o->sweep_npoints = 0;
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !(v > 0) || v > 1000 || o->sweep_npoints == BENCH_MAX_POINTS)
            return -1;
        o->sweep_points[o->sweep_npoints++] = v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return o->sweep_npoints ? 0 : -1;
}

static const char *opts_known_tests[] = {
    "ping_inline", "ping_mbulk", "ping", "set", "get", "incr", "lpush", "rpush",
    "lpop", "rpop", "sadd", "hset", "spop", "zadd", "zpopmin", "lrange",
    "lrange_100", "lrange_300", "lrange_500", "lrange_600", "mset", NULL};

/* Lowercases -t into ",a,b," and rejects names no test answers to. */
static int opts_tests(bench_opts_t *o, const char *s) {
    size_t n = strlen(s);
    char *t = malloc(n + 3);
    if (!t)
        return -1;
    t[0] = ',';
    for (size_t i = 0; i < n; i++)
        t[i + 1] = (char)tolower((unsigned char)s[i]);
    t[n + 1] = ',';
    t[n + 2] = '\0';
    char *copy = strdup(t + 1), *save = NULL;
    if (!copy) {
        free(t);
        return -1;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; opts_known_tests[i]; i++)
            found |= strcmp(tok, opts_known_tests[i]) == 0;
        if (!found) {
            fprintf(stderr, "Unknown test name in -t: '%s'\n", tok);
            free(copy);
            free(t);
            return -1;
        }
    }
    free(copy);
    free(o->tests);
    o->tests = t;
    return 0;
}

static void opts_defaults(bench_opts_t *o) {
    memset(o, 0, sizeof(*o));
    o->host = "127.0.0.1";
    o->port = 6379;
    o->clients = 50;
    o->requests = 100000;
    o->datasize = 3;
    o->keepalive = 1;
    o->pipeline = 1;
    o->threads = 1;
    o->precision = 3;
    o->keypat = BENCH_KEYS_UNIFORM;
}

/* Options that take a value; returns 0, -1 on a bad value, -2 if unknown. */
static int opts_with_value(bench_opts_t *o, const char *opt, const char *v) {
    uint64_t u;
    if (!strcmp(opt, "-h")) o->host = v;
    else if (!strcmp(opt, "-p")) {
        if (opts_int(v, 1, 65535, &o->port) < 0) return -1;
    } else if (!strcmp(opt, "-s")) o->socket = v;
    else if (!strcmp(opt, "-a")) o->password = v;
    else if (!strcmp(opt, "--user")) o->user = v;
    else if (!strcmp(opt, "--cacert")) o->tls_cacert = v;
    else if (!strcmp(opt, "--cert")) o->tls_cert = v;
    else if (!strcmp(opt, "--key")) o->tls_key = v;
    else if (!strcmp(opt, "-c")) {
        if (opts_int(v, 1, 100000, &o->clients) < 0) return -1;
    } else if (!strcmp(opt, "-n")) {
        if (opts_u64(v, 1, UINT64_MAX / 4, &o->requests) < 0) return -1;
    } else if (!strcmp(opt, "-d")) {
        if (opts_u64(v, 1, 512u * 1024 * 1024, &u) < 0) return -1;
        o->datasize = (uint32_t)u;
    } else if (!strcmp(opt, "-k")) {
        if (opts_int(v, 0, 1, &o->keepalive) < 0) return -1;
    } else if (!strcmp(opt, "-r")) {
        if (opts_u64(v, 1, 999999999999ULL, &o->keyspace) < 0) return -1;
    } else if (!strcmp(opt, "-P")) {
        if (opts_int(v, 1, 100000, &o->pipeline) < 0) return -1;
        o->pipeline_given = 1;
    } else if (!strcmp(opt, "-t")) {
        if (opts_tests(o, v) < 0) return -1;
    } else if (!strcmp(opt, "--threads")) {
        if (opts_int(v, 1, BENCH_MAX_THREADS, &o->threads) < 0) return -1;
    } else if (!strcmp(opt, "--precision")) {
        if (opts_int(v, 0, 6, &o->precision) < 0) return -1;
    } else if (!strcmp(opt, "--dbnum")) {
        if (opts_int(v, 0, 1000000, &o->dbnum) < 0) return -1;
    } else if (!strcmp(opt, "--seed")) {
        if (opts_u64(v, 0, UINT64_MAX, &o->seed) < 0) return -1;
    } else if (!strcmp(opt, "--duration")) {
        if (opts_double(v, 0.001, &o->duration) < 0) return -1;
    } else if (!strcmp(opt, "--rate")) {
        if (opts_double(v, 0.001, &o->rate) < 0) return -1;
    } else if (!strcmp(opt, "--ratio")) {
        if (opts_ratio(o, v) < 0) return -1;
    } else if (!strcmp(opt, "--data-size")) {
        if (opts_size_range(o, v) < 0) return -1;
    } else if (!strcmp(opt, "--data-size-list")) {
        if (opts_size_list(o, v) < 0) return -1;
    } else if (!strcmp(opt, "--target")) {
        if (opts_target(o, v) < 0) return -1;
    } else if (!strcmp(opt, "--sweep-points")) {
        if (opts_points(o, v) < 0) return -1;
    } else if (!strcmp(opt, "--sweep-max")) {
        if (opts_double(v, 1, &o->sweep_max) < 0) return -1;
    } else if (!strcmp(opt, "--sweep-base")) o->sweep_base = v;
    else if (!strcmp(opt, "--sweep-runs")) {
        if (opts_int(v, 1, 1000, &o->sweep_runs) < 0) return -1;
    } else if (!strcmp(opt, "--plot")) o->plot_path = v;
    else if (!strcmp(opt, "--json")) o->json_path = v;
    else if (!strcmp(opt, "--memory-sample")) o->memsample_path = v;
    else if (!strcmp(opt, "--engine")) {
        if (!strcmp(v, "auto")) o->engine = BENCH_ENGINE_AUTO;
        else if (!strcmp(v, "uring") || !strcmp(v, "io_uring")) o->engine = BENCH_ENGINE_URING;
        else if (!strcmp(v, "epoll")) o->engine = BENCH_ENGINE_EPOLL;
        else return -1;
    } else if (!strcmp(opt, "--key-pattern")) {
        if (!strcmp(v, "uniform")) o->keypat = BENCH_KEYS_UNIFORM;
        else if (!strcmp(v, "sequential")) o->keypat = BENCH_KEYS_SEQUENTIAL;
        else if (!strcmp(v, "gaussian")) o->keypat = BENCH_KEYS_GAUSSIAN;
        else if (!strcmp(v, "zipf")) o->keypat = BENCH_KEYS_ZIPF;
        else return -1;
    } else return -2;
    return 0;
}

/* The sweep's options belong together: without --latency-sweep they are
 * refused, with it the defaults are filled in. */
static int opts_sweep_check(bench_opts_t *o) {
    if (!o->latency_sweep) {
        if (o->ntargets || o->sweep_npoints || o->sweep_max > 0 || o->sweep_base || o->sweep_runs || o->plot_path) {
            fprintf(stderr, "--target, --sweep-* and --plot need --latency-sweep\n");
            return -1;
        }
        return 0;
    }
    if (o->rate > 0 || o->loop || o->idle || o->memsample_path) {
        fprintf(stderr, "--latency-sweep sets the rates itself: drop --rate, -l, -I and --memory-sample\n");
        return -1;
    }
    if (!o->sweep_npoints)
        for (int i = 1; i <= 10; i++)
            o->sweep_points[o->sweep_npoints++] = 10.0 * i;
    if (!o->sweep_runs)
        o->sweep_runs = 1;
    if (!o->pipeline_given)
        o->pipeline = 64;
    if (o->duration <= 0)
        o->duration = 5;
    if (!o->ntargets) {
        bench_target_t *t = &o->targets[o->ntargets++];
        t->name = strdup("server");
        snprintf(t->host, sizeof(t->host), "%s", o->host);
        t->port = o->port;
        t->socket = o->socket;
        if (!t->name)
            return -1;
    }
    for (int i = 0; i < o->ntargets; i++)
        if (!o->targets[i].host[0])
            snprintf(o->targets[i].host, sizeof(o->targets[i].host), "%s", o->host);
    if (o->sweep_base) {
        int found = 0;
        for (int i = 0; i < o->ntargets; i++)
            found |= !strcmp(o->targets[i].name, o->sweep_base);
        if (!found) {
            fprintf(stderr, "--sweep-base '%s' names no --target\n", o->sweep_base);
            return -1;
        }
    }
    return 0;
}

int bench_opts_parse(bench_opts_t *o, int argc, char **argv) {
    opts_defaults(o);
    int seed_given = 0;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            break; /* start of the custom command */
        if (!strcmp(a, "--help")) {
            opts_usage();
            return 1;
        }
        if (!strcmp(a, "--version")) {
            printf("%s\n", BENCH_VERSION);
            return 1;
        }
        if (!strcmp(a, "-q")) {
            o->quiet = 1;
            continue;
        }
        if (!strcmp(a, "-l")) {
            o->loop = 1;
            continue;
        }
        if (!strcmp(a, "-e")) {
            o->show_errors = 1;
            continue;
        }
        if (!strcmp(a, "-I")) {
            o->idle = 1;
            continue;
        }
        if (!strcmp(a, "--csv")) {
            o->csv = 1;
            continue;
        }
        if (!strcmp(a, "-3")) {
            o->resp3 = 1;
            continue;
        }
        if (!strcmp(a, "--tls")) {
            o->tls = 1;
            continue;
        }
        if (!strcmp(a, "--cluster")) {
            o->cluster = 1;
            continue;
        }
        if (!strcmp(a, "--latency-sweep")) {
            o->latency_sweep = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "Missing value for %s (try --help)\n", a);
            return -1;
        }
        int rc = opts_with_value(o, a, argv[i + 1]);
        if (rc == -2) {
            fprintf(stderr, "Unrecognized option or bad number of args for: '%s'\n", a);
            return -1;
        }
        if (rc < 0)
            return opts_bad(a, argv[i + 1]);
        if (!strcmp(a, "--seed"))
            seed_given = 1;
        i++;
    }
    o->custom_argv = argv + i;
    o->custom_argc = argc - i;
    o->seed_given = seed_given;
    if ((o->tls_cacert || o->tls_cert || o->tls_key) && !o->tls) {
        fprintf(stderr, "--cacert, --cert and --key need --tls\n");
        return -1;
    }
    if (o->tls && o->socket) {
        fprintf(stderr, "--tls needs a TCP server (-h/-p), not -s\n");
        return -1;
    }
    if (o->user && !o->password) {
        fprintf(stderr, "--user needs -a <password>\n");
        return -1;
    }
    if (o->dsize_max && o->dlist_len) {
        fprintf(stderr, "--data-size and --data-size-list are exclusive\n");
        return -1;
    }
    if (o->ratio_set + o->ratio_get && o->custom_argc) {
        fprintf(stderr, "--ratio cannot be combined with a custom command\n");
        return -1;
    }
    if (o->cluster && (o->socket || !o->keepalive || o->latency_sweep || o->idle)) {
        fprintf(stderr, "--cluster needs a TCP node (-h/-p) and cannot be combined with -k 0, -I or --latency-sweep\n");
        return -1;
    }
    if (o->cluster && o->dbnum) {
        fprintf(stderr, "--cluster: a cluster has only db 0\n");
        return -1;
    }
    return opts_sweep_check(o);
}

void bench_opts_free(bench_opts_t *o) {
    free(o->tests);
    o->tests = NULL;
    for (int i = 0; i < o->ntargets; i++)
        free((char *)o->targets[i].name);
    o->ntargets = 0;
}

uint32_t bench_opts_max_value(const bench_opts_t *o) {
    uint32_t m = o->datasize;
    if (o->dsize_max > m)
        m = o->dsize_max;
    for (int i = 0; i < o->dlist_len; i++)
        if (o->dlist[i].size > m)
            m = o->dlist[i].size;
    return m;
}

int bench_opts_variable_size(const bench_opts_t *o) {
    return (o->dsize_max && o->dsize_max != o->dsize_min) || o->dlist_len > 1;
}
