/* hdr_hist.h: a log-linear histogram with HdrHistogram's bucket layout.
 *
 * The server keeps one per command for LATENCY HISTOGRAM and INFO
 * latencystats (src/latency_track.c).  Redis 7.0 reports those figures
 * through HdrHistogram (lowest value 1, 2 significant digits, values in
 * nanoseconds up to 1 s), and the bucket edges and percentiles it prints
 * follow from that layout; this module reproduces the layout so the same
 * recorded values give the same keys and percentiles.  (The benchmark's
 * tools/benchmark/histogram.c is a separate, richer histogram: 3 digits,
 * exact min/max/mean, malloc-based, in a folder the server cannot see.)
 *
 * Layout, with S = the smallest power of two >= 2 * 10^digits and H = S/2:
 * values 0..S-1 have one slot each; each further doubling range
 * [H * 2^b, S * 2^b) for b >= 1 is cut into H slots of width 2^b.  Slot
 * index of v in range b is (b + 1) * H + (v >> b) - H, so the slots are in
 * value order.  Pure module: zmalloc only, no I/O. */
#ifndef RL_HDR_HIST_H
#define RL_HDR_HIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct hdr_hist {
    int64_t highest;  /* largest value kept apart; larger ones are clamped to it */
    int half_mag;     /* log2(H) */
    int counts_len;   /* slots */
    int64_t total;    /* values recorded; == sum of counts[] */
    int64_t counts[]; /* counts_len slots */
} hdr_hist_t;

/* NULL when digits is outside 1..5 or highest < 2.  Caller frees with
 * hdr_hist_free(). */
hdr_hist_t *hdr_hist_create(int64_t highest, int digits);
void hdr_hist_free(hdr_hist_t *h);
/* Bytes the histogram occupies (for memory accounting). */
size_t hdr_hist_bytes(const hdr_hist_t *h);

/* Values below 0 count as 0, above highest as highest. */
static inline void hdr_hist_record(hdr_hist_t *h, int64_t v) {
    if (v < 0) v = 0;
    if (v > h->highest) v = h->highest;
    int64_t mask = ((int64_t)2 << h->half_mag) - 1; /* S - 1 */
    int b = (64 - __builtin_clzll((uint64_t)(v | mask))) - (h->half_mag + 1);
    int idx = ((b + 1) << h->half_mag) + (int)(v >> b) - (1 << h->half_mag);
    h->counts[idx]++;
    h->total++;
}

/* Smallest and largest value that share slot idx. */
int64_t hdr_hist_slot_low(const hdr_hist_t *h, int idx);
int64_t hdr_hist_slot_high(const hdr_hist_t *h, int idx);
/* Slot of a value (clamped as in record). */
int hdr_hist_slot_of(const hdr_hist_t *h, int64_t v);

/* The value at percentile p, as HdrHistogram computes it: the slot holding
 * the max(1, round(p% of total))-th value; its lowest value when p is 0,
 * its highest otherwise.  0 when empty. */
int64_t hdr_hist_percentile(const hdr_hist_t *h, double p);

/* Cumulative distribution at doubling reporting levels first, 2*first, ...:
 * for each level L, (highest value of L's slot, values <= it), handed to
 * fn only when the count grew since the previous level; stops once every
 * value is covered.  Past the last slot the last slot is reported.  Returns
 * the number of calls. */
int hdr_hist_log_cdf(const hdr_hist_t *h, int64_t first, void (*fn)(void *arg, int64_t high, int64_t cum),
                     void *arg);

#endif
