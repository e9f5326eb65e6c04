/* bench_sweep.c: --latency-sweep (see bench_sweep.h).
 *
 * Every measurement is one bench_engine_run() of the test on a copy of the
 * options aimed at one target: closed loop with -P 1 for the maximum, open
 * loop (--rate) for the points.  The order of the targets rotates from one
 * point and run to the next, so a burst of load from elsewhere on the
 * machine falls on all of them alike; medians are taken over the runs.
 * A point is "sustained" when the achieved rate is at least 97% of the
 * offered one: past the server's capacity the open loop's latency grows
 * with the backlog and says more about the test's length than the server.
 * Output: a table on stdout, the JSON document (--json) and a gnuplot
 * drawing (--plot: p50, p99 and p99.9 against achieved requests/s, one
 * curve per target, log scale). */
#include "bench_tls.h"
#include "bench_sweep.h"
#include "bench_engine.h"
#include "bench_net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SWEEP_SUSTAINED 0.97 /* achieved / offered below which a point is not sustained */

/* One open- or closed-loop run against one target. */
typedef struct sweep_sample {
    double offered;                  /* req/s asked (0: closed loop) */
    double achieved;                 /* req/s measured */
    double p50, p90, p99, p999, max; /* ms */
    unsigned long long requests, errors;
    double cpu_us; /* server CPU per request, us; < 0 when INFO has no used_cpu_* */
} sweep_sample_t;

typedef struct sweep {
    const bench_opts_t *o;
    const bench_test_t *t;
    const char *payload;
    int ntargets, npoints, runs;
    int base;               /* target whose maximum is 100% */
    double max_rps;         /* the 100% rate */
    sweep_sample_t *closed; /* [run][target] */
    sweep_sample_t *open;   /* [run][point][target] */
} sweep_t;

static sweep_sample_t *closed_at(sweep_t *s, int run, int tgt) { return &s->closed[run * s->ntargets + tgt]; }

static sweep_sample_t *open_at(sweep_t *s, int run, int pt, int tgt) {
    return &s->open[(run * s->npoints + pt) * s->ntargets + tgt];
}

/* The options of one measurement: the target's address, the rate. */
static bench_opts_t sweep_opts(const sweep_t *s, int tgt, double rate, int pipeline) {
    bench_opts_t o = *s->o;
    o.socket = s->o->targets[tgt].socket;
    o.host = s->o->targets[tgt].host;
    o.port = s->o->targets[tgt].port;
    o.rate = rate;
    o.pipeline = pipeline;
    o.quiet = 1;
    return o;
}

/* used_cpu_sys + used_cpu_user of the server, in seconds; < 0 if unknown. */
static double server_cpu(const bench_opts_t *o) {
    char err[256], reply[8192], v1[64], v2[64];
    int fd = bench_net_connect(o, err, sizeof(err));
    if (fd < 0)
        return -1;
    double cpu = -1;
    const char *argv[] = {"INFO", "cpu"};
    if (bench_net_handshake(fd, o, err, sizeof(err)) == 0 && bench_net_call(fd, reply, sizeof(reply), 2, argv) == '$' &&
        bench_net_info_field(reply, "used_cpu_sys", v1, sizeof(v1)) == 0 &&
        bench_net_info_field(reply, "used_cpu_user", v2, sizeof(v2)) == 0)
        cpu = atof(v1) + atof(v2);
    bench_sock_close(fd);
    return cpu;
}

/* One run of the test against target tgt; 0, or -1 after printing why. */
static int sweep_measure(sweep_t *s, int tgt, double rate, int pipeline, sweep_sample_t *out) {
    bench_opts_t o = sweep_opts(s, tgt, rate, pipeline);
    bench_result_t res;
    char err[256];
    double cpu0 = server_cpu(&o);
    if (bench_engine_run(&o, s->t, s->payload, NULL, NULL, &res, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s (target %s)\n", err, s->o->targets[tgt].name);
        hist_free(res.hist);
        return -1;
    }
    double cpu1 = server_cpu(&o);
    const hist_t *h = res.hist;
    memset(out, 0, sizeof(*out));
    out->offered = rate;
    out->achieved = res.seconds > 0 ? (double)res.requests / res.seconds : 0;
    out->p50 = (double)hist_percentile(h, 50) / 1e6;
    out->p90 = (double)hist_percentile(h, 90) / 1e6;
    out->p99 = (double)hist_percentile(h, 99) / 1e6;
    out->p999 = (double)hist_percentile(h, 99.9) / 1e6;
    out->max = (double)h->max / 1e6;
    out->requests = res.requests;
    out->errors = res.errors;
    out->cpu_us = cpu0 >= 0 && cpu1 >= 0 && res.requests ? (cpu1 - cpu0) * 1e6 / (double)res.requests : -1;
    hist_free(res.hist);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Field-wise medians over the runs of samples[run * stride]. */
static sweep_sample_t median_sample(const sweep_sample_t *first, int runs, int stride) {
    double v[runs];
    sweep_sample_t m = first[0];
#define SWEEP_MED(field)                                               \
    do {                                                               \
        for (int r = 0; r < runs; r++) v[r] = first[r * stride].field; \
        m.field = median(v, runs);                                     \
    } while (0)
    SWEEP_MED(achieved);
    SWEEP_MED(p50);
    SWEEP_MED(p90);
    SWEEP_MED(p99);
    SWEEP_MED(p999);
    SWEEP_MED(max);
    SWEEP_MED(cpu_us);
#undef SWEEP_MED
    return m;
}

static sweep_sample_t closed_median(sweep_t *s, int tgt) { return median_sample(closed_at(s, 0, tgt), s->runs, s->ntargets); }

static sweep_sample_t open_median(sweep_t *s, int pt, int tgt) {
    return median_sample(open_at(s, 0, pt, tgt), s->runs, s->npoints * s->ntargets);
}

/* Runs in which the point was sustained, out of s->runs. */
static int sustained_runs(sweep_t *s, int pt, int tgt) {
    int n = 0;
    for (int r = 0; r < s->runs; r++) {
        const sweep_sample_t *x = open_at(s, r, pt, tgt);
        n += x->achieved >= SWEEP_SUSTAINED * x->offered;
    }
    return n;
}

static int sweep_closed_loop(sweep_t *s) {
    const bench_opts_t *o = s->o;
    for (int r = 0; r < s->runs; r++) {
        for (int k = 0; k < s->ntargets; k++) {
            int tgt = (k + r) % s->ntargets;
            sweep_sample_t *x = closed_at(s, r, tgt);
            if (sweep_measure(s, tgt, 0, 1, x) < 0)
                return -1;
            printf("closed loop, run %d: %-12s %12.0f req/s  p50 %.3f ms\n", r + 1, o->targets[tgt].name, x->achieved,
                   x->p50);
            fflush(stdout);
        }
    }
    return 0;
}

static void print_sample(const char *name, const sweep_sample_t *x, int sustained, int runs) {
    printf("  %-12s %10.0f req/s  p50 %8.3f  p99 %8.3f  p99.9 %8.3f ms", name, x->achieved, x->p50, x->p99, x->p999);
    if (x->cpu_us >= 0)
        printf("  cpu %6.2f us/req", x->cpu_us);
    if (sustained < runs)
        printf("  (sustained in %d of %d runs)", sustained, runs);
    printf("\n");
}

static int sweep_open_loop(sweep_t *s) {
    const bench_opts_t *o = s->o;
    for (int r = 0; r < s->runs; r++) {
        for (int p = 0; p < s->npoints; p++) {
            double rate = s->max_rps * o->sweep_points[p] / 100.0;
            if (s->runs > 1)
                printf("run %d, ", r + 1);
            printf("%g%% = %.0f req/s:\n", o->sweep_points[p], rate);
            for (int k = 0; k < s->ntargets; k++) {
                int tgt = (k + r + p) % s->ntargets;
                sweep_sample_t *x = open_at(s, r, p, tgt);
                if (sweep_measure(s, tgt, rate, o->pipeline, x) < 0)
                    return -1;
                print_sample(o->targets[tgt].name, x, x->achieved >= SWEEP_SUSTAINED * rate, 1);
                fflush(stdout);
            }
        }
    }
    return 0;
}

static void sweep_summary(sweep_t *s) {
    const bench_opts_t *o = s->o;
    printf("\n=== %s: %d connections, open loop pipelined up to %d, %.1f s per point, medians of %d run%s ===\n",
           s->t->name, o->clients, o->pipeline, o->duration, s->runs, s->runs > 1 ? "s" : "");
    if (o->sweep_max <= 0) {
        printf("closed-loop maximum (-P 1):");
        for (int i = 0; i < s->ntargets; i++) printf("  %s %.0f", o->targets[i].name, closed_median(s, i).achieved);
        printf(" req/s\n");
    }
    printf("100%% = %.0f req/s (%s)\n", s->max_rps, o->sweep_max > 0 ? "--sweep-max" : o->targets[s->base].name);
    for (int p = 0; p < s->npoints; p++) {
        printf("%g%% = %.0f req/s:\n", o->sweep_points[p], s->max_rps * o->sweep_points[p] / 100.0);
        for (int i = 0; i < s->ntargets; i++) {
            sweep_sample_t m = open_median(s, p, i);
            print_sample(o->targets[i].name, &m, sustained_runs(s, p, i), s->runs);
        }
    }
    fflush(stdout);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_str(FILE *f, const char *v) {
    fputc('"', f);
    for (; *v; v++) {
        unsigned char c = (unsigned char)*v;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_sample(FILE *f, const sweep_sample_t *x) {
    fprintf(f,
            "{\"offered\": %.1f, \"achieved\": %.1f, \"p50_ms\": %.6f, \"p90_ms\": %.6f, \"p99_ms\": %.6f, "
            "\"p99.9_ms\": %.6f, \"max_ms\": %.6f, \"requests\": %llu, \"errors\": %llu",
            x->offered, x->achieved, x->p50, x->p90, x->p99, x->p999, x->max, x->requests, x->errors);
    if (x->cpu_us >= 0)
        fprintf(f, ", \"server_cpu_us_per_request\": %.4f", x->cpu_us);
    fputc('}', f);
}

static int sweep_json(sweep_t *s, const char *path) {
    const bench_opts_t *o = s->o;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "{\n  \"tool\": \"redis-like-benchmark\",\n  \"mode\": \"latency-sweep\",\n  \"test\": ");
    json_str(f, s->t->name);
    fprintf(f,
            ",\n  \"config\": {\"clients\": %d, \"pipeline\": %d, \"threads\": %d, \"data_size\": %u, "
            "\"keyspace\": %llu, \"duration_s\": %.3f, \"runs\": %d, \"seed\": %llu},\n",
            o->clients, o->pipeline, o->threads, o->datasize, (unsigned long long)o->keyspace, o->duration, s->runs,
            (unsigned long long)o->seed);
    fprintf(f, "  \"base\": ");
    json_str(f, o->sweep_max > 0 ? "--sweep-max" : o->targets[s->base].name);
    fprintf(f, ",\n  \"max_rps\": %.1f,\n  \"targets\": [\n", s->max_rps);
    for (int i = 0; i < s->ntargets; i++) {
        fprintf(f, "    {\"name\": ");
        json_str(f, o->targets[i].name);
        fprintf(f, ", \"host\": ");
        json_str(f, o->targets[i].host);
        fprintf(f, ", \"port\": %d,\n     \"closed_loop\": ", o->targets[i].port);
        if (o->sweep_max > 0) {
            fprintf(f, "null");
        } else {
            fprintf(f, "{\"median\": ");
            sweep_sample_t m = closed_median(s, i);
            json_sample(f, &m);
            fprintf(f, ", \"runs\": [");
            for (int r = 0; r < s->runs; r++) {
                fprintf(f, r ? ", " : "");
                json_sample(f, closed_at(s, r, i));
            }
            fprintf(f, "]}");
        }
        fprintf(f, ",\n     \"points\": [\n");
        for (int p = 0; p < s->npoints; p++) {
            sweep_sample_t m = open_median(s, p, i);
            fprintf(f, "       {\"percent\": %g, \"rate\": %.1f, \"sustained_runs\": %d, \"median\": ", o->sweep_points[p],
                    s->max_rps * o->sweep_points[p] / 100.0, sustained_runs(s, p, i));
            json_sample(f, &m);
            fprintf(f, ", \"runs\": [");
            for (int r = 0; r < s->runs; r++) {
                fprintf(f, r ? ", " : "");
                json_sample(f, open_at(s, r, p, i));
            }
            fprintf(f, "]}%s\n", p + 1 < s->npoints ? "," : "");
        }
        fprintf(f, "     ]}%s\n", i + 1 < s->ntargets ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- gnuplot ------------------------------------------------------------ */

/* A name as a gnuplot string: single quotes, doubled inside. */
static void gp_str(FILE *g, const char *v) {
    fputc('\'', g);
    for (; *v; v++) {
        if (*v == '\'')
            fputc('\'', g);
        fputc(*v, g);
    }
    fputc('\'', g);
}

/* Three panels (p50, p99, p99.9) of latency against achieved requests/s,
 * a curve per target through the medians of its sustained points. */
static int sweep_plot(sweep_t *s, const char *path) {
    const bench_opts_t *o = s->o;
    FILE *g = popen("gnuplot", "w");
    if (!g) {
        perror("gnuplot");
        return -1;
    }
    for (int i = 0; i < s->ntargets; i++) {
        fprintf(g, "$d%d << EOD\n", i);
        int rows = 0;
        for (int p = 0; p < s->npoints; p++) {
            if (sustained_runs(s, p, i) * 2 <= s->runs)
                continue; /* mostly past capacity: the backlog's latency, not the server's */
            sweep_sample_t m = open_median(s, p, i);
            fprintf(g, "%.1f %.6f %.6f %.6f\n", m.achieved, m.p50, m.p99, m.p999);
            rows++;
        }
        if (!rows) /* an empty block would stop the plot */
            fprintf(g, "NaN NaN NaN NaN\n");
        fprintf(g, "EOD\n");
    }
    fprintf(g, "set terminal pngcairo noenhanced size 1500,520 font 'sans,10'\nset output ");
    gp_str(g, path);
    fprintf(g, "\nset multiplot layout 1,3 title ");
    char title[512];
    snprintf(title, sizeof(title), "%s, %d connections, open loop (medians of %d run%s, sustained points)", s->t->name,
             o->clients, s->runs, s->runs > 1 ? "s" : "");
    gp_str(g, title);
    fprintf(g, "\nset logscale y\nset grid\nset key top left\nset xlabel 'achieved requests/s'\n"
               "set ylabel 'latency (ms)'\nset format x '%%.0s%%c'\n");
    static const char *labels[] = {"p50", "p99", "p99.9"};
    for (int c = 0; c < 3; c++) {
        fprintf(g, "set title '%s'\nplot ", labels[c]);
        for (int i = 0; i < s->ntargets; i++) {
            fprintf(g, "%s$d%d using 1:%d with linespoints lw 2 pt 7 title ", i ? ", " : "", i, c + 2);
            gp_str(g, o->targets[i].name);
        }
        fprintf(g, "\n");
    }
    fprintf(g, "unset multiplot\n");
    int rc = pclose(g);
    if (rc != 0) {
        fprintf(stderr, "gnuplot failed (exit status %d): %s not drawn\n", rc, path);
        return -1;
    }
    return 0;
}

/* ---- the sweep ---------------------------------------------------------- */

static int sweep_probe(const bench_opts_t *o) {
    for (int i = 0; i < o->ntargets; i++) {
        bench_opts_t to = *o;
        to.socket = o->targets[i].socket;
        to.host = o->targets[i].host;
        to.port = o->targets[i].port;
        char err[256];
        int fd = bench_net_connect(&to, err, sizeof(err));
        if (fd < 0 || bench_net_handshake(fd, &to, err, sizeof(err)) < 0) {
            fprintf(stderr, "%s (target %s)\n", err, o->targets[i].name);
            if (fd >= 0)
                bench_sock_close(fd);
            return -1;
        }
        bench_sock_close(fd);
    }
    return 0;
}

int bench_sweep_run(const bench_opts_t *o, const bench_test_t *t, const char *payload) {
    sweep_t s = {.o = o, .t = t, .payload = payload, .ntargets = o->ntargets, .npoints = o->sweep_npoints, .runs = o->sweep_runs};
    for (int i = 0; i < o->ntargets; i++)
        if (o->sweep_base && !strcmp(o->targets[i].name, o->sweep_base))
            s.base = i;
    if (sweep_probe(o) < 0)
        return 1;
    s.closed = calloc((size_t)s.runs * (size_t)s.ntargets, sizeof(*s.closed));
    s.open = calloc((size_t)s.runs * (size_t)s.npoints * (size_t)s.ntargets, sizeof(*s.open));
    int rc = 1;
    if (!s.closed || !s.open) {
        fprintf(stderr, "out of memory\n");
        goto out;
    }
    if (o->sweep_max > 0) {
        s.max_rps = o->sweep_max;
    } else {
        if (sweep_closed_loop(&s) < 0)
            goto out;
        s.max_rps = closed_median(&s, s.base).achieved;
        if (!(s.max_rps > 0)) {
            fprintf(stderr, "the closed loop of %s served nothing: no rates to sweep\n", o->targets[s.base].name);
            goto out;
        }
    }
    if (sweep_open_loop(&s) < 0)
        goto out;
    sweep_summary(&s);
    rc = 0;
    if (o->json_path && sweep_json(&s, o->json_path) < 0)
        rc = 1;
    if (o->plot_path && sweep_plot(&s, o->plot_path) < 0)
        rc = 1;
out:
    free(s.closed);
    free(s.open);
    return rc;
}
