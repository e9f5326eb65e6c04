/* test_histogram.c: unit tests for src/histogram.c, the benchmark's latency
 * histogram.  Checks percentiles against distributions whose exact quantiles
 * are known (uniform 1..100000, a two-point mix), the 0.1% precision promise
 * over 1 us .. 60 s in nanoseconds, clamping, merging and bucket iteration. */
#include "test_help.h"
#include "histogram.h"

#include <stdint.h>
#include <stdlib.h>

#define NS_60S 60000000000ULL

/* |got - want| <= want / 1000 (3 significant digits), plus 1 for rounding. */
static int within_precision(uint64_t got, uint64_t want) {
    uint64_t diff = got > want ? got - want : want - got;
    return diff <= want / 1000 + 1;
}

static int test_uniform_quantiles(void) {
    hist_t *h = hist_create(NS_60S, 3);
    CHECK(h != NULL);
    for (uint64_t v = 1; v <= 100000; v++)
        hist_record(h, v * 1000); /* 1 us .. 100 ms, in ns */
    CHECK_EQ_INT(h->total, 100000);
    CHECK_EQ_INT(h->min, 1000);
    CHECK_EQ_INT(h->max, 100000000);
    /* Exact quantile of uniform 1..N at p is ceil(p/100 * N). */
    static const double ps[] = {1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99};
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        uint64_t rank = (uint64_t)(ps[i] / 100.0 * 100000 + 0.5);
        uint64_t got = hist_percentile(h, ps[i]);
        if (!within_precision(got, rank * 1000)) {
            fprintf(stderr, "  p%g: got %llu want %llu\n", ps[i],
                    (unsigned long long)got, (unsigned long long)(rank * 1000));
            CHECK(0);
        }
        /* The histogram reports the upper edge: never below the truth. */
        CHECK(got >= rank * 1000);
    }
    CHECK_EQ_INT(hist_percentile(h, 100), 100000000);
    CHECK_EQ_INT(hist_percentile(h, 0), 1000);
    /* Mean is exact: sum kept apart from the buckets. */
    CHECK(hist_mean(h) > 50000499.0 && hist_mean(h) < 50000501.0);
    hist_free(h);
    return 0;
}

static int test_precision_over_range(void) {
    hist_t *h = hist_create(NS_60S, 3);
    CHECK(h != NULL);
    /* One value at a time across 1 us .. 60 s: the single value is its own
     * p50 and must come back within 0.1%. */
    for (uint64_t v = 1000; v <= NS_60S; v = v * 13 / 10 + 7) {
        hist_reset(h);
        hist_record(h, v);
        hist_record(h, v);
        hist_record(h, 1);      /* keeps min below, so no clamp to min */
        hist_record(h, NS_60S); /* keeps max above, so no clamp to max */
        uint64_t got = hist_percentile(h, 50);
        if (!within_precision(got, v)) {
            fprintf(stderr, "  v=%llu got=%llu\n", (unsigned long long)v,
                    (unsigned long long)got);
            CHECK(0);
        }
    }
    hist_free(h);
    return 0;
}

static int test_two_point_mix(void) {
    hist_t *h = hist_create(NS_60S, 3);
    CHECK(h != NULL);
    hist_record_n(h, 100000, 990);  /* 100 us */
    hist_record_n(h, 50000000, 10); /* 50 ms: the 1% tail */
    CHECK(within_precision(hist_percentile(h, 50), 100000));
    CHECK(within_precision(hist_percentile(h, 99), 100000));
    CHECK(within_precision(hist_percentile(h, 99.1), 50000000));
    CHECK_EQ_INT(hist_count_le(h, 200000), 990);
    CHECK_EQ_INT(hist_count_le(h, NS_60S), 1000);
    hist_free(h);
    return 0;
}

static int test_clamp_and_merge(void) {
    hist_t *a = hist_create(1000000, 3), *b = hist_create(1000000, 3);
    hist_t *c = hist_create(NS_60S, 3);
    CHECK(a && b && c);
    hist_record(a, 5);
    hist_record(b, 5000000);       /* above highest: clamped in a slot */
    CHECK_EQ_INT(b->max, 5000000); /* but the exact max is kept */
    CHECK_EQ_INT(hist_merge(a, b), 0);
    CHECK_EQ_INT(a->total, 2);
    CHECK_EQ_INT(a->min, 5);
    CHECK_EQ_INT(a->max, 5000000);
    CHECK_EQ_INT(hist_percentile(a, 50), 5);
    CHECK(hist_percentile(a, 100) >= 1000000);
    CHECK_EQ_INT(hist_merge(a, c), -1); /* different shapes refuse */
    CHECK(hist_create(100, 0) == NULL);
    CHECK(hist_create(1, 3) == NULL);
    hist_free(a);
    hist_free(b);
    hist_free(c);
    return 0;
}

static int test_bucket_iteration(void) {
    hist_t *h = hist_create(NS_60S, 3);
    CHECK(h != NULL);
    CHECK_EQ_INT(hist_percentile(h, 99), 0); /* empty */
    hist_record_n(h, 10, 3);
    hist_record_n(h, 123456, 2);
    hist_record_n(h, 7000000000ULL, 1);
    size_t pos = 0;
    hist_bucket_t bk = {0};
    uint64_t last_hi = 0, n = 0, seen = 0;
    while (hist_next_bucket(h, &pos, &bk)) {
        CHECK(bk.lo <= bk.hi);
        CHECK(n == 0 || bk.lo > last_hi);
        last_hi = bk.hi;
        seen += bk.count;
        CHECK_EQ_INT(bk.cumulative, seen);
        n++;
    }
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(seen, 6);
    CHECK(last_hi >= 7000000000ULL);
    hist_free(h);
    return 0;
}

int main(void) {
    RUN_TEST(test_uniform_quantiles);
    RUN_TEST(test_precision_over_range);
    RUN_TEST(test_two_point_mix);
    RUN_TEST(test_clamp_and_merge);
    RUN_TEST(test_bucket_iteration);
    return TEST_REPORT("test_histogram");
}
