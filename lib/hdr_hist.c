/* hdr_hist.c: the log-linear histogram of hdr_hist.h.
 *
 * Invariants: total == sum of counts[]; every recorded value maps to a slot
 * < counts_len because counts_len covers the doubling range of highest. */
#include "hdr_hist.h"

#include <stdbool.h>

#include "zmalloc.h"

hdr_hist_t *hdr_hist_create(int64_t highest, int digits) {
    if (digits < 1 || digits > 5 || highest < 2) return NULL;
    int64_t need = 2;
    for (int i = 0; i < digits; i++) need *= 10;
    int sub_mag = 1; /* log2(S) */
    while (((int64_t)1 << sub_mag) < need) sub_mag++;
    /* Doubling ranges until one reaches past highest. */
    int ranges = 1;
    for (int64_t untrackable = (int64_t)1 << sub_mag; untrackable <= highest; untrackable <<= 1) ranges++;
    int half = 1 << (sub_mag - 1);
    int len = (ranges + 1) * half;
    hdr_hist_t *h = zcalloc(sizeof(*h) + (size_t)len * sizeof(int64_t));
    h->highest = highest;
    h->half_mag = sub_mag - 1;
    h->counts_len = len;
    return h;
}

void hdr_hist_free(hdr_hist_t *h) { zfree(h); }

size_t hdr_hist_bytes(const hdr_hist_t *h) { return sizeof(*h) + (size_t)h->counts_len * sizeof(int64_t); }

/* Doubling range (b) and position within it of slot idx. */
static void slot_split(const hdr_hist_t *h, int idx, int *range, int64_t *sub) {
    int half = 1 << h->half_mag;
    int b = (idx >> h->half_mag) - 1;
    int64_t s = (idx & (half - 1)) + half;
    if (b < 0) { /* the first, one-per-value range */
        s -= half;
        b = 0;
    }
    *range = b;
    *sub = s;
}

int64_t hdr_hist_slot_low(const hdr_hist_t *h, int idx) {
    int b;
    int64_t s;
    slot_split(h, idx, &b, &s);
    return s << b;
}

int64_t hdr_hist_slot_high(const hdr_hist_t *h, int idx) {
    int b;
    int64_t s;
    slot_split(h, idx, &b, &s);
    return (s << b) + ((int64_t)1 << b) - 1;
}

/* Slot of v, which must be within the slots' range (not clamped). */
static int slot_raw(const hdr_hist_t *h, int64_t v) {
    int64_t mask = ((int64_t)2 << h->half_mag) - 1;
    int b = (64 - __builtin_clzll((uint64_t)(v | mask))) - (h->half_mag + 1);
    return ((b + 1) << h->half_mag) + (int)(v >> b) - (1 << h->half_mag);
}

int hdr_hist_slot_of(const hdr_hist_t *h, int64_t v) {
    if (v < 0) v = 0;
    if (v > h->highest) v = h->highest;
    return slot_raw(h, v);
}

int64_t hdr_hist_percentile(const hdr_hist_t *h, double p) {
    if (h->total == 0) return 0;
    if (p > 100.0) p = 100.0;
    int64_t want = (int64_t)(p / 100.0 * (double)h->total + 0.5);
    if (want < 1) want = 1;
    if (want > h->total) want = h->total;
    int64_t seen = 0;
    int idx = 0;
    for (; idx < h->counts_len; idx++) {
        seen += h->counts[idx];
        if (seen >= want) break;
    }
    return p == 0.0 ? hdr_hist_slot_low(h, idx) : hdr_hist_slot_high(h, idx);
}

int hdr_hist_log_cdf(const hdr_hist_t *h, int64_t first, void (*fn)(void *arg, int64_t high, int64_t cum),
                     void *arg) {
    int calls = 0, idx = 0;
    int64_t cum = 0, reported = 0;
    int64_t top = hdr_hist_slot_high(h, h->counts_len - 1);
    for (int64_t level = first; reported < h->total; level *= 2) {
        /* A level beyond the last slot ends the walk at the last slot. */
        bool past = level > top || level <= 0;
        int upto = past ? h->counts_len - 1 : slot_raw(h, level);
        for (; idx <= upto; idx++) cum += h->counts[idx];
        if (cum > reported) {
            fn(arg, hdr_hist_slot_high(h, upto), cum);
            calls++;
            reported = cum;
        }
        if (past) break;
    }
    return calls;
}
