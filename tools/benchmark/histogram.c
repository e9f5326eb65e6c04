/* histogram.c: log-linear latency histogram (see histogram.h for the API).
 *
 * Layout.  Let S = 2^sub_bits be the smallest power of two >= 2 * 10^digits
 * (2048 for 3 digits) and H = S/2.  Values 0..S-1 get one slot each (exact).
 * Above that, each doubling range [2^m, 2^(m+1)) with m >= sub_bits is cut
 * into H equal slots of width 2^(m - sub_bits + 1).  A slot's width is thus at
 * most 1/H of any value in it: 3 significant digits.  For highest = 60 s in
 * nanoseconds that is 2048 + 25 * 1024 slots, about 220 KB.
 *
 * Invariant: total == sum of counts[]; min/max/sum describe exactly the
 * values recorded (before clamping to `highest`). */
#include "histogram.h"

#include <stdlib.h>
#include <string.h>

static int hist_msb(uint64_t v) {
    return 63 - __builtin_clzll(v);
}

/* Slot of a value already clamped to h->highest. */
static size_t hist_index(const hist_t *h, uint64_t v) {
    uint64_t sub_count = 1ULL << h->sub_bits;
    if (v < sub_count)
        return (size_t)v;
    int shift = hist_msb(v) - h->sub_bits + 1; /* >= 1 */
    uint64_t half = sub_count >> 1;
    return (size_t)(sub_count + (uint64_t)(shift - 1) * half + ((v >> shift) - half));
}

/* Inclusive value range of slot i. */
static void hist_slot_range(const hist_t *h, size_t i, uint64_t *lo, uint64_t *hi) {
    uint64_t sub_count = 1ULL << h->sub_bits;
    if (i < sub_count) {
        *lo = *hi = i;
        return;
    }
    uint64_t half = sub_count >> 1;
    uint64_t j = i - sub_count;
    int shift = (int)(j / half) + 1;
    *lo = (half + j % half) << shift;
    *hi = *lo + (1ULL << shift) - 1;
}

hist_t *hist_create(uint64_t highest, int sig_digits) {
    if (sig_digits < 1 || sig_digits > 5 || highest < 2)
        return NULL;
    uint64_t need = 2;
    for (int i = 0; i < sig_digits; i++)
        need *= 10;
    int sub_bits = 1;
    while ((1ULL << sub_bits) < need)
        sub_bits++;

    hist_t *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->highest = highest;
    h->sub_bits = sub_bits;
    int top = hist_msb(highest);
    h->bucket_count = top >= sub_bits ? top - sub_bits + 1 : 0;
    h->counts_len = (1ULL << sub_bits) + (size_t)h->bucket_count * (1ULL << (sub_bits - 1));
    h->counts = calloc(h->counts_len, sizeof(uint64_t));
    if (!h->counts) {
        free(h);
        return NULL;
    }
    h->min = UINT64_MAX;
    return h;
}

void hist_free(hist_t *h) {
    if (!h)
        return;
    free(h->counts);
    free(h);
}

void hist_reset(hist_t *h) {
    memset(h->counts, 0, h->counts_len * sizeof(uint64_t));
    h->total = 0;
    h->min = UINT64_MAX;
    h->max = 0;
    h->sum = 0;
}

void hist_record_n(hist_t *h, uint64_t value, uint64_t n) {
    if (n == 0)
        return;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    h->sum += (long double)value * n;
    h->total += n;
    h->counts[hist_index(h, value > h->highest ? h->highest : value)] += n;
}

void hist_record(hist_t *h, uint64_t value) {
    hist_record_n(h, value, 1);
}

int hist_merge(hist_t *dst, const hist_t *src) {
    if (dst->counts_len != src->counts_len || dst->sub_bits != src->sub_bits)
        return -1;
    for (size_t i = 0; i < src->counts_len; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    return 0;
}

uint64_t hist_percentile(const hist_t *h, double p) {
    if (h->total == 0)
        return 0;
    if (p < 0)
        p = 0;
    if (p > 100)
        p = 100;
    /* Rank of the wanted value, 1-based: at least the first value. */
    long double want_f = (long double)p / 100.0L * (long double)h->total;
    uint64_t want = (uint64_t)want_f;
    if ((long double)want < want_f)
        want++;
    if (want == 0)
        want = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < h->counts_len; i++) {
        seen += h->counts[i];
        if (seen >= want) {
            uint64_t lo, hi;
            hist_slot_range(h, i, &lo, &hi);
            if (hi > h->max)
                hi = h->max;
            if (hi < h->min)
                hi = h->min;
            return hi;
        }
    }
    return h->max;
}

double hist_mean(const hist_t *h) {
    return h->total ? (double)(h->sum / (long double)h->total) : 0.0;
}

uint64_t hist_count_le(const hist_t *h, uint64_t v) {
    uint64_t n = 0;
    for (size_t i = 0; i < h->counts_len; i++) {
        uint64_t lo, hi;
        hist_slot_range(h, i, &lo, &hi);
        if (hi > v)
            break;
        n += h->counts[i];
    }
    return n;
}

int hist_next_bucket(const hist_t *h, size_t *pos, hist_bucket_t *b) {
    /* cumulative of the previous call is carried in b when *pos > 0. */
    uint64_t cum = *pos ? b->cumulative : 0;
    for (size_t i = *pos; i < h->counts_len; i++) {
        if (!h->counts[i])
            continue;
        hist_slot_range(h, i, &b->lo, &b->hi);
        b->count = h->counts[i];
        b->cumulative = cum + h->counts[i];
        *pos = i + 1;
        return 1;
    }
    *pos = h->counts_len;
    return 0;
}
