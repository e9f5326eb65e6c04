/* histogram.h: a log-linear latency histogram (HdrHistogram's idea, own code).
 *
 * Used by the benchmark tool (one histogram per worker thread, merged at the
 * end of a test) and by tests/unit/test_histogram.c.  Pure module: libc only,
 * no I/O, no locks; a histogram is owned by one thread at a time.
 *
 * Values are unsigned integers in the caller's unit (the tool records
 * nanoseconds).  With `sig_digits` = 3 every recorded value lands in a bucket
 * whose width is at most 1/1024 of the value, so any percentile is reported
 * within 0.1% of the exact one.  Values above `highest` are clamped to it
 * (the exact max is still kept apart). */
#ifndef RL_HISTOGRAM_H
#define RL_HISTOGRAM_H

#include <stdint.h>
#include <stddef.h>

typedef struct hist {
    uint64_t highest;  /* largest trackable value (caller's unit) */
    int sub_bits;      /* log2 of sub-buckets per doubling range */
    int bucket_count;  /* doubling ranges above the first linear one */
    size_t counts_len; /* entries in counts[] */
    uint64_t total;    /* values recorded */
    uint64_t min, max; /* exact extremes; min = UINT64_MAX when empty */
    long double sum;   /* exact sum, for the mean */
    uint64_t *counts;  /* counts_len slots, index from hist_index() */
} hist_t;

/* One non-empty bucket, as handed out by hist_next_bucket(). */
typedef struct hist_bucket {
    uint64_t lo, hi;     /* value range covered, inclusive */
    uint64_t count;      /* values in this bucket */
    uint64_t cumulative; /* values in this and all lower buckets */
} hist_bucket_t;

/* Returns NULL on bad arguments (sig_digits outside 1..5, highest < 2) or
 * when calloc fails.  Caller frees with hist_free(). */
hist_t *hist_create(uint64_t highest, int sig_digits);
void hist_free(hist_t *h);
void hist_reset(hist_t *h);

void hist_record(hist_t *h, uint64_t value);
void hist_record_n(hist_t *h, uint64_t value, uint64_t n);
/* Adds src into dst; both must have been created with the same arguments.
 * Returns 0, or -1 when their shapes differ. */
int hist_merge(hist_t *dst, const hist_t *src);

/* The value at percentile p (0..100): the upper edge of the bucket holding
 * the ceil(p/100 * total)-th smallest value, clamped to [min, max].  0 when
 * the histogram is empty. */
uint64_t hist_percentile(const hist_t *h, double p);
double hist_mean(const hist_t *h);
/* Values recorded that are <= v (bucket granularity: counts whole buckets
 * whose upper edge is <= v). */
uint64_t hist_count_le(const hist_t *h, uint64_t v);

/* Iterates non-empty buckets in increasing value order.  Start with *pos = 0
 * and pass the same *b on every call (it carries the running cumulative
 * count); returns 1 and fills *b while there are buckets left, then 0. */
int hist_next_bucket(const hist_t *h, size_t *pos, hist_bucket_t *b);

#endif
