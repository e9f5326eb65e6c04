/* bench_output.c: formats results (see bench_output.h).
 *
 * The per-test text block, the -q line and the CSV rows copy redis-benchmark
 * 7's layout line for line so existing scripts keep parsing them; our extra
 * figures (p90/p99.9/p99.99, error replies, client CPU) come as additional
 * lines after its "latency summary" and never change the lines before.
 * Latencies are recorded in ns and printed in msec with --precision digits. */
#include "bench_output.h"
#include "bench_cluster.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int progress_shown;

static double ms(uint64_t ns) {
    return (double)ns / 1e6;
}

static double rps(const bench_result_t *r) {
    return r->seconds > 0 ? (double)r->requests / r->seconds : 0;
}

void bench_out_begin(const bench_opts_t *o) {
    if (o->csv)
        printf("\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\","
               "\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n");
}

void bench_out_progress(const bench_test_t *t, uint64_t done, double elapsed,
                        uint64_t p99_ns, void *arg) {
    const bench_opts_t *o = arg;
    static uint64_t last_done;
    static double last_elapsed;
    if (elapsed < last_elapsed || done < last_done)
        last_done = 0, last_elapsed = 0; /* a new test started */
    double cur = elapsed > last_elapsed ? (double)(done - last_done) / (elapsed - last_elapsed) : 0;
    printf("\r%s: rps=%.1f (overall: %.1f) p99=%.*f msec, %llu requests    ",
           t->name, cur, elapsed > 0 ? (double)done / elapsed : 0, o->precision, ms(p99_ns),
           (unsigned long long)done);
    fflush(stdout);
    progress_shown = 1;
    last_done = done;
    last_elapsed = elapsed;
}

void bench_out_progress_clear(void) {
    if (progress_shown) {
        printf("\r%100s\r", "");
        progress_shown = 0;
    }
}

static void out_percentile_block(const bench_opts_t *o, const hist_t *h) {
    int d = o->precision;
    printf("Latency by percentile distribution:\n");
    double p = 0;
    for (int i = 0; i < 40; i++) {
        uint64_t v = hist_percentile(h, p);
        if (v >= h->max)
            break;
        printf("%.3f%% <= %.*f milliseconds (cumulative count %llu)\n", p, d, ms(v),
               (unsigned long long)hist_count_le(h, v));
        p += (100.0 - p) / 2;
    }
    printf("100.000%% <= %.*f milliseconds (cumulative count %llu)\n\n", d, ms(h->max),
           (unsigned long long)h->total);

    /* Fixed thresholds: 0.1 ms steps to 1 ms, then 1, 10, 100 ms steps,
     * printed where the cumulative count grows. */
    printf("Cumulative distribution of latencies:\n");
    uint64_t last = 0, step = 100000, t = 100000;
    while (last < h->total) {
        uint64_t cum = t >= h->max ? h->total : hist_count_le(h, t);
        if (cum > last) {
            printf("%.3f%% <= %.*f milliseconds (cumulative count %llu)\n",
                   100.0 * (double)cum / (double)h->total, d, ms(t), (unsigned long long)cum);
            last = cum;
        }
        if (t >= step * 10 && step < 1000000000ULL)
            step *= 10;
        t += step;
    }
    printf("\n");
}

static void out_errors_line(const bench_result_t *r) {
    if (r->errors)
        printf("  error replies: %llu (first: %s)\n", (unsigned long long)r->errors, r->first_error);
}

/* --cluster: the masters and the redirects followed. */
static void out_cluster_line(const bench_opts_t *o, const bench_result_t *r) {
    if (o->cluster_map)
        printf("  cluster: %d masters, redirects followed: MOVED %llu, ASK %llu\n",
               o->cluster_map->nnodes, (unsigned long long)r->moved, (unsigned long long)r->asked);
}

static void out_full(const bench_opts_t *o, const bench_hostconf_t *hc, const bench_result_t *r) {
    const hist_t *h = r->hist;
    int d = o->precision;
    printf("====== %s ======\n", r->test->name);
    printf("  %llu requests completed in %.2f seconds\n", (unsigned long long)r->requests, r->seconds);
    if (r->clients < o->clients) /* -n below -c: one request per connection at most */
        printf("  %d parallel clients (lowered from -c %d to match -n)\n", r->clients, o->clients);
    else
        printf("  %d parallel clients\n", r->clients);
    if (bench_opts_variable_size(o))
        printf("  %u-%u bytes payload\n", o->dsize_min ? o->dsize_min : o->dlist[0].size,
               bench_opts_max_value(o));
    else
        printf("  %u bytes payload\n", bench_opts_max_value(o));
    printf("  keep alive: %d\n", o->keepalive);
    printf("  host configuration \"save\": %s\n", hc->save);
    printf("  host configuration \"appendonly\": %s\n", hc->appendonly);
    if (r->threads > 1)
        printf("  multi-thread: yes\n  threads: %d\n\n", r->threads);
    else
        printf("  multi-thread: no\n\n");
    if (h->total)
        out_percentile_block(o, h);
    printf("Summary:\n");
    printf("  throughput summary: %.2f requests per second\n", rps(r));
    printf("  latency summary (msec):\n");
    printf("          avg       min       p50       p95       p99       max\n");
    printf("    %9.*f %9.*f %9.*f %9.*f %9.*f %9.*f\n", d, hist_mean(h) / 1e6,
           d, ms(h->total ? h->min : 0), d, ms(hist_percentile(h, 50)), d, ms(hist_percentile(h, 95)),
           d, ms(hist_percentile(h, 99)), d, ms(h->max));
    printf("  extended percentiles (msec):\n");
    printf("          p90     p99.9    p99.99\n");
    printf("    %9.*f %9.*f %9.*f\n", d, ms(hist_percentile(h, 90)), d, ms(hist_percentile(h, 99.9)),
           d, ms(hist_percentile(h, 99.99)));
    out_errors_line(r);
    out_cluster_line(o, r);
    if (r->test->ncmds > 1)
        printf("  commands: SET %llu, GET %llu\n", (unsigned long long)r->kind_count[0],
               (unsigned long long)r->kind_count[1]);
    double per_m = r->requests ? (r->cpu_user + r->cpu_sys) * 1e6 / (double)r->requests : 0;
    printf("  client CPU: %.3f s user, %.3f s sys (%.2f CPU-s per 1M requests)\n\n",
           r->cpu_user, r->cpu_sys, per_m);
}

void bench_out_result(const bench_opts_t *o, const bench_hostconf_t *hc, const bench_result_t *r) {
    const hist_t *h = r->hist;
    int d = o->precision;
    bench_out_progress_clear();
    if (o->csv) {
        printf("\"%s\",\"%.2f\",\"%.*f\",\"%.*f\",\"%.*f\",\"%.*f\",\"%.*f\",\"%.*f\"\n",
               r->test->name, rps(r), d, hist_mean(h) / 1e6, d, ms(h->total ? h->min : 0),
               d, ms(hist_percentile(h, 50)), d, ms(hist_percentile(h, 95)),
               d, ms(hist_percentile(h, 99)), d, ms(h->max));
        if (r->errors)
            fprintf(stderr, "%s: %llu error replies (first: %s)\n", r->test->name,
                    (unsigned long long)r->errors, r->first_error);
        if (o->cluster_map)
            fprintf(stderr, "%s: redirects followed: MOVED %llu, ASK %llu\n", r->test->name,
                    (unsigned long long)r->moved, (unsigned long long)r->asked);
    } else if (o->quiet) {
        printf("%s: %.2f requests per second, p50=%.*f msec", r->test->name, rps(r), d,
               ms(hist_percentile(h, 50)));
        if (r->errors)
            printf(" (%llu error replies: %s)", (unsigned long long)r->errors, r->first_error);
        if (o->cluster_map)
            printf(" (MOVED %llu, ASK %llu)", (unsigned long long)r->moved, (unsigned long long)r->asked);
        printf("\n");
    } else {
        out_full(o, hc, r);
    }
    fflush(stdout);
}

/* ---- JSON --------------------------------------------------------------- */

static char *json_doc; /* comma-separated test objects so far */
static size_t json_len, json_cap;

static void jputs(const char *s, size_t n) {
    if (json_len + n + 1 > json_cap) {
        size_t cap = json_cap ? json_cap * 2 : 65536;
        while (cap < json_len + n + 1)
            cap *= 2;
        char *p = realloc(json_doc, cap);
        if (!p) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        json_doc = p;
        json_cap = cap;
    }
    memcpy(json_doc + json_len, s, n);
    json_len += n;
    json_doc[json_len] = '\0';
}

static void jprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void jprintf(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    jputs(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void jstr(const char *s) {
    jputs("\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            jprintf("\\%c", c);
        else if (c < 0x20)
            jprintf("\\u%04x", c);
        else
            jputs((const char *)&c, 1);
    }
    jputs("\"", 1);
}

int bench_json_add(const bench_opts_t *o, const bench_result_t *r) {
    const hist_t *h = r->hist;
    if (json_len)
        jputs(",\n", 2);
    jprintf("    {\"name\": ");
    jstr(r->test->name);
    jprintf(", \"requests\": %llu, \"errors\": %llu, \"first_error\": ",
            (unsigned long long)r->requests, (unsigned long long)r->errors);
    jstr(r->first_error);
    jprintf(", \"seconds\": %.6f, \"rps\": %.2f, \"clients\": %d, \"threads\": %d",
            r->seconds, rps(r), r->clients, r->threads);
    jprintf(", \"client_cpu_user_s\": %.4f, \"client_cpu_sys_s\": %.4f", r->cpu_user, r->cpu_sys);
    jprintf(", \"engine\": \"%s\"", r->engine ? r->engine : "");
    if (o->cluster_map)
        jprintf(", \"cluster\": {\"masters\": %d, \"moved\": %llu, \"asked\": %llu}",
                o->cluster_map->nnodes, (unsigned long long)r->moved, (unsigned long long)r->asked);
    if (r->test->ncmds > 1)
        jprintf(", \"by_command\": {\"SET\": %llu, \"GET\": %llu}",
                (unsigned long long)r->kind_count[0], (unsigned long long)r->kind_count[1]);
    jprintf(",\n     \"latency_ms\": {\"avg\": %.6f, \"min\": %.6f, \"p50\": %.6f, \"p90\": %.6f, "
            "\"p95\": %.6f, \"p99\": %.6f, \"p99.9\": %.6f, \"p99.99\": %.6f, \"max\": %.6f}",
            hist_mean(h) / 1e6, ms(h->total ? h->min : 0), ms(hist_percentile(h, 50)),
            ms(hist_percentile(h, 90)), ms(hist_percentile(h, 95)), ms(hist_percentile(h, 99)),
            ms(hist_percentile(h, 99.9)), ms(hist_percentile(h, 99.99)), ms(h->max));
    /* Full distribution: every non-empty bucket as [low_ms, high_ms, count]. */
    jprintf(",\n     \"distribution\": [");
    size_t pos = 0;
    hist_bucket_t b = {0};
    int first = 1;
    while (hist_next_bucket(h, &pos, &b)) {
        jprintf("%s[%.6f, %.6f, %llu]", first ? "" : ", ", ms(b.lo), ms(b.hi), (unsigned long long)b.count);
        first = 0;
    }
    jputs("]}", 2);
    return 0;
}

int bench_json_write(const bench_opts_t *o, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    static const char *pats[] = {"uniform", "sequential", "gaussian", "zipf"};
    fprintf(f, "{\n  \"tool\": \"redis-like-benchmark\",\n  \"config\": {\"host\": ");
    /* host may hold odd bytes: reuse the JSON escaper through a small doc */
    char *saved = json_doc;
    size_t slen = json_len, scap = json_cap;
    json_doc = NULL, json_len = 0, json_cap = 0;
    jstr(o->socket ? o->socket : o->host);
    fputs(json_doc, f);
    free(json_doc);
    json_doc = saved, json_len = slen, json_cap = scap;
    fprintf(f, ", \"port\": %d, \"clients\": %d, \"requests\": %llu, \"data_size\": %u, "
               "\"pipeline\": %d, \"threads\": %d, \"keyspace\": %llu, \"keepalive\": %d, "
               "\"duration_s\": %.3f, \"rate\": %.3f, \"key_pattern\": \"%s\", \"seed\": %llu},\n"
               "  \"tests\": [\n%s\n  ]\n}\n",
            o->port, o->clients, (unsigned long long)o->requests, o->datasize, o->pipeline,
            o->threads, (unsigned long long)o->keyspace, o->keepalive, o->duration, o->rate,
            pats[o->keypat], (unsigned long long)o->seed, json_doc ? json_doc : "");
    return fclose(f) == 0 ? 0 : -1;
}

void bench_json_free(void) {
    free(json_doc);
    json_doc = NULL;
    json_len = json_cap = 0;
}
