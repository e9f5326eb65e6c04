/* test_hdr_hist.c: unit tests for lib/hdr_hist.c, the per-command latency
 * histogram.  The expected numbers are the ones Redis 7.0.15 prints for the
 * same recorded values (1 ns .. 1 s, 2 significant digits): LATENCY
 * HISTOGRAM keys 1, 2, 4, 8, 16, 33, 66, 132 ... us and INFO latencystats
 * percentiles such as p50=1.003 for a 1 us command. */
#include "test_help.h"
#include "hdr_hist.h"

#include <stdint.h>

#define NS_1S 1000000000LL

static int test_layout(void) {
    hdr_hist_t *h = hdr_hist_create(NS_1S, 2);
    CHECK(h != NULL);
    CHECK_EQ_INT(h->counts_len, 3072); /* 24 ranges x 128 */
    /* One slot per value below 256, then width 2^b. */
    for (int64_t v = 0; v < 256; v++) CHECK_EQ_INT(hdr_hist_slot_of(h, v), v);
    CHECK_EQ_INT(hdr_hist_slot_low(h, hdr_hist_slot_of(h, 1000)), 1000);
    CHECK_EQ_INT(hdr_hist_slot_high(h, hdr_hist_slot_of(h, 1000)), 1003);
    CHECK_EQ_INT(hdr_hist_slot_high(h, hdr_hist_slot_of(h, 8000)), 8031);
    /* Slots are in value order and tile the range without gaps. */
    for (int i = 1; i < h->counts_len; i++)
        CHECK_EQ_INT(hdr_hist_slot_low(h, i), hdr_hist_slot_high(h, i - 1) + 1);
    for (int64_t v = 1; v < NS_1S; v = v * 3 + 1) {
        int i = hdr_hist_slot_of(h, v);
        CHECK(hdr_hist_slot_low(h, i) <= v && v <= hdr_hist_slot_high(h, i));
    }
    CHECK_EQ_INT(hdr_hist_slot_of(h, NS_1S * 5), hdr_hist_slot_of(h, NS_1S)); /* clamped */
    CHECK(hdr_hist_bytes(h) >= 3072 * 8);
    hdr_hist_free(h);
    CHECK(hdr_hist_create(NS_1S, 0) == NULL);
    CHECK(hdr_hist_create(1, 2) == NULL);
    return 0;
}

static int test_percentiles(void) {
    hdr_hist_t *h = hdr_hist_create(NS_1S, 2);
    CHECK_EQ_INT(hdr_hist_percentile(h, 50), 0); /* empty */
    hdr_hist_record(h, 1000);
    CHECK_EQ_INT(hdr_hist_percentile(h, 50), 1003);
    CHECK_EQ_INT(hdr_hist_percentile(h, 99.9), 1003);
    CHECK_EQ_INT(hdr_hist_percentile(h, 0), 1000); /* p0: the slot's lowest value */
    for (int i = 0; i < 99; i++) hdr_hist_record(h, 8000);
    CHECK_EQ_INT(hdr_hist_percentile(h, 0), 1000);
    CHECK_EQ_INT(hdr_hist_percentile(h, 1), 1003);   /* round(1% of 100) = 1st value */
    CHECK_EQ_INT(hdr_hist_percentile(h, 1.6), 8031); /* round(1.6) = 2nd */
    CHECK_EQ_INT(hdr_hist_percentile(h, 100), 8031);
    CHECK_EQ_INT(hdr_hist_percentile(h, 250), 8031);
    CHECK_EQ_INT(h->total, 100);
    hdr_hist_free(h);
    return 0;
}

typedef struct cdf {
    int n;
    int64_t high[64], cum[64];
} cdf_t;

static void collect(void *arg, int64_t high, int64_t cum) {
    cdf_t *c = arg;
    c->high[c->n] = high;
    c->cum[c->n] = cum;
    c->n++;
}

static int test_log_cdf(void) {
    hdr_hist_t *h = hdr_hist_create(NS_1S, 2);
    cdf_t c = {0};
    CHECK_EQ_INT(hdr_hist_log_cdf(h, 1024, collect, &c), 0);
    /* Each value sits below the next reporting edge: 1031 ns, 2063, 4127,
     * 8255, 16511, 33023, 66047, 132095 (us keys 1 2 4 8 16 33 66 132). */
    static const int64_t values[] = {0, 1000, 1500, 3000, 5000, 9000, 20000, 40000, 100000};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) hdr_hist_record(h, values[i]);
    CHECK_EQ_INT(hdr_hist_log_cdf(h, 1024, collect, &c), 8);
    static const int64_t want_high[] = {1031, 2063, 4127, 8255, 16511, 33023, 66047, 132095};
    static const int64_t want_cum[] = {2, 3, 4, 5, 6, 7, 8, 9};
    for (int i = 0; i < 8; i++) {
        CHECK_EQ_INT(c.high[i], want_high[i]);
        CHECK_EQ_INT(c.cum[i], want_cum[i]);
    }
    /* Levels whose count does not grow are skipped; a value past the last
     * reporting level shows up at the last slot (Redis: 1073741 us). */
    c.n = 0;
    hdr_hist_t *g = hdr_hist_create(NS_1S, 2);
    hdr_hist_record(g, 1000);
    hdr_hist_record(g, 100000);
    hdr_hist_record(g, NS_1S);
    CHECK_EQ_INT(hdr_hist_log_cdf(g, 1024, collect, &c), 3);
    CHECK_EQ_INT(c.high[0], 1031);
    CHECK_EQ_INT(c.high[1], 132095);
    CHECK_EQ_INT(c.high[2] / 1000, 1073741);
    CHECK_EQ_INT(c.cum[2], 3);
    hdr_hist_free(g);
    hdr_hist_free(h);
    return 0;
}

int main(void) {
    RUN_TEST(test_layout);
    RUN_TEST(test_percentiles);
    RUN_TEST(test_log_cdf);
    return TEST_REPORT("test_hdr_hist");
}
