/* hll.c: the HyperLogLog format (see hll.h for the byte layout), its
 * sparse and dense register encodings, and the estimator.
 *
 * The estimator is Otmar Ertl's improved raw estimator ("New cardinality
 * estimation algorithms for HyperLogLog sketches", 2017): from the
 * histogram C[k] of register values, with m = 16384 registers and q = 50,
 *   z = m * tau(1 - C[q+1]/m);  for k = q..1: z = (z + C[k]) / 2;
 *   z += m * sigma(C[0]/m);     estimate = round(m^2 / (2 ln 2) / z).
 * It needs no bias tables and is exact for small sets.  The operations are
 * done in the order the paper gives them, so the doubles (and therefore
 * the rounded counts) are the same as Redis 7's for the same registers.
 *
 * Sparse updates rewrite one opcode into at most three (XZERO -> XZERO VAL
 * XZERO, at most 5 bytes), then merge equal adjacent VAL opcodes around the
 * change; the result is the canonical encoding Redis produces, so a sparse
 * HLL built here is byte-identical to Redis's for the same additions.
 * Inputs are sds (NUL-terminated): a two-byte opcode at the very end reads
 * the terminator, as Redis does, instead of past the buffer. */
#include "hll.h"

#include <math.h>
#include <string.h>

#define HLL_Q (64 - HLL_P) /* hash bits left after the register index: 50 */
#define HLL_SEED 0xadc83b19ULL
#define HLL_ALPHA_INF 0.721347520444481703680 /* 1 / (2 ln 2) */

#define SP_ZERO_MAX 64
#define SP_XZERO_MAX 16384
#define SP_VAL_MAXLEN 4

static inline bool sp_is_zero(const unsigned char *p) { return (*p & 0xc0) == 0x00; }
static inline bool sp_is_xzero(const unsigned char *p) { return (*p & 0xc0) == 0x40; }
static inline bool sp_is_val(const unsigned char *p) { return (*p & 0x80) != 0; }
static inline long sp_zero_len(const unsigned char *p) { return (*p & 0x3f) + 1; }
static inline long sp_xzero_len(const unsigned char *p) { return (((long)(p[0] & 0x3f) << 8) | p[1]) + 1; }
static inline int sp_val_value(const unsigned char *p) { return ((*p >> 2) & 0x1f) + 1; }
static inline long sp_val_len(const unsigned char *p) { return (*p & 0x3) + 1; }
static inline void sp_put_val(unsigned char *p, int val, long len) {
    *p = (unsigned char)(0x80 | ((val - 1) << 2) | (len - 1));
}
/* A zero run of len (1..16384) registers: ZERO when it fits, else XZERO.
 * Returns the bytes written. */
static inline int sp_put_zeros(unsigned char *p, long len) {
    if (len <= SP_ZERO_MAX) {
        *p = (unsigned char)(len - 1);
        return 1;
    }
    p[0] = (unsigned char)(0x40 | ((len - 1) >> 8));
    p[1] = (unsigned char)((len - 1) & 0xff);
    return 2;
}

/* ------------------------------------------------------------ hashing */

/* MurmurHash64A (Austin Appleby), 8-byte blocks read little-endian. */
uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    const unsigned char *d = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++, d += 8) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--) k = (k << 8) | d[b];
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t tail = len & 7;
    if (tail) {
        for (size_t b = tail; b-- > 0;) h ^= (uint64_t)d[b] << (8 * b);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_pattern(const unsigned char *ele, size_t len, long *index) {
    uint64_t h = hll_murmur64a(ele, len, HLL_SEED);
    *index = (long)(h & (HLL_REGISTERS - 1));
    h >>= HLL_P;
    h |= 1ULL << HLL_Q; /* a sentinel: the count is at most q + 1 */
    return __builtin_ctzll(h) + 1;
}

/* ------------------------------------------------------------ header */

sds hll_new(void) {
    sds s = sds_newlen(NULL, HLL_HDR_SIZE + 2);
    memcpy(s, "HYLL", 4);
    s[4] = HLL_SPARSE;
    sp_put_zeros((unsigned char *)s + HLL_HDR_SIZE, HLL_REGISTERS);
    return s;
}

bool hll_header_ok(const unsigned char *p, size_t len) {
    if (len < HLL_HDR_SIZE || memcmp(p, "HYLL", 4) != 0) return false;
    if (p[4] > HLL_SPARSE) return false;
    if (p[4] == HLL_DENSE && len != HLL_DENSE_SIZE) return false;
    return true;
}

bool hll_cache_valid(const unsigned char *p) { return (p[15] & 0x80) == 0; }

uint64_t hll_cache_get(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[8 + i];
    return v;
}

void hll_cache_set(unsigned char *p, uint64_t card) {
    for (int i = 0; i < 8; i++) p[8 + i] = (unsigned char)(card >> (8 * i));
}

void hll_cache_invalidate(unsigned char *p) { p[15] |= 0x80; }

/* ------------------------------------------------------------ dense */

uint8_t hll_dense_get(const unsigned char *regs, long idx) {
    unsigned long pos = (unsigned long)idx * HLL_BITS;
    unsigned long b = pos >> 3, shift = pos & 7;
    unsigned v = regs[b] >> shift;
    if (shift > 8 - HLL_BITS) v |= (unsigned)regs[b + 1] << (8 - shift);
    return (uint8_t)(v & HLL_REGISTER_MAX);
}

void hll_dense_put(unsigned char *regs, long idx, uint8_t val) {
    unsigned long pos = (unsigned long)idx * HLL_BITS;
    unsigned long b = pos >> 3, shift = pos & 7;
    regs[b] = (unsigned char)((regs[b] & ~(HLL_REGISTER_MAX << shift)) | (val << shift));
    if (shift > 8 - HLL_BITS) {
        unsigned hi = 8 - shift; /* bits that went into regs[b] */
        regs[b + 1] = (unsigned char)((regs[b + 1] & ~(HLL_REGISTER_MAX >> hi)) | (val >> hi));
    }
}

static int dense_raise(unsigned char *regs, long idx, uint8_t count) {
    if (hll_dense_get(regs, idx) >= count) return 0;
    hll_dense_put(regs, idx, count);
    return 1;
}

bool hll_to_dense(sds *s) {
    unsigned char *p = (unsigned char *)*s;
    if (p[4] == HLL_DENSE) return true;
    sds dense = sds_newlen(NULL, HLL_DENSE_SIZE);
    unsigned char *d = (unsigned char *)dense;
    memcpy(d, p, HLL_HDR_SIZE); /* magic and the cached cardinality */
    d[4] = HLL_DENSE;
    unsigned char *regs = d + HLL_HDR_SIZE;
    const unsigned char *q = p + HLL_HDR_SIZE, *end = p + sds_len(*s);
    long idx = 0;
    while (q < end) {
        if (sp_is_zero(q)) {
            idx += sp_zero_len(q);
            q++;
        } else if (sp_is_xzero(q)) {
            idx += sp_xzero_len(q);
            q += 2;
        } else {
            long len = sp_val_len(q);
            int val = sp_val_value(q);
            if (idx + len > HLL_REGISTERS) break;
            for (long i = 0; i < len; i++) hll_dense_put(regs, idx++, (uint8_t)val);
            q++;
        }
        if (idx > HLL_REGISTERS) break;
    }
    /* Exactly 16384 registers and nothing after them (see hll_merge_max). */
    if (idx != HLL_REGISTERS || q != end) {
        sds_free(dense);
        return false;
    }
    sds_free(*s);
    *s = dense;
    return true;
}

/* ------------------------------------------------------------ sparse */

/* Merge equal adjacent VAL opcodes in the few opcodes from p on (the ones
 * a change can have made mergeable).  Returns the new end. */
static unsigned char *sparse_merge_near(sds s, unsigned char *p, unsigned char *end) {
    int budget = 5;
    while (p < end && budget--) {
        if (sp_is_xzero(p)) {
            p += 2;
            continue;
        }
        if (sp_is_zero(p)) {
            p++;
            continue;
        }
        if (p + 1 < end && sp_is_val(p + 1) && sp_val_value(p) == sp_val_value(p + 1)) {
            long len = sp_val_len(p) + sp_val_len(p + 1);
            if (len <= SP_VAL_MAXLEN) {
                sp_put_val(p + 1, sp_val_value(p), len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                sds_incrlen(s, -1);
                end--;
                continue; /* the merged opcode may merge again to its right */
            }
        }
        p++;
    }
    return end;
}

static int sparse_raise(sds *s, long idx, uint8_t count, size_t sparse_max) {
    if (count > HLL_SPARSE_VAL_MAX) goto promote;
    /* The worst split grows the body by 3 bytes: make room before taking
     * pointers into the string. */
    *s = sds_make_room(*s, 3);
    unsigned char *body = (unsigned char *)*s + HLL_HDR_SIZE;
    unsigned char *end = (unsigned char *)*s + sds_len(*s);
    unsigned char *p = body, *prev = NULL;
    long first = 0, span = 0;
    while (p < end) {
        int oplen = sp_is_xzero(p) ? 2 : 1;
        span = sp_is_zero(p) ? sp_zero_len(p) : sp_is_val(p) ? sp_val_len(p)
                                                             : sp_xzero_len(p);
        if (idx <= first + span - 1) break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) return -1;
    if (sp_is_xzero(p) && p + 1 >= end) return -1; /* cut-off opcode: corrupt */
    unsigned char *next = p + (sp_is_xzero(p) ? 2 : 1);
    if (next >= end) next = NULL;

    if (sp_is_val(p)) {
        if (sp_val_value(p) >= count) return 0;
        if (span == 1) {
            sp_put_val(p, count, 1);
            goto updated;
        }
    } else if (sp_is_zero(p) && span == 1) {
        sp_put_val(p, count, 1);
        goto updated;
    }

    /* Split the opcode covering [first, last] into: before idx, idx, after. */
    unsigned char seq[5], *n = seq;
    long last = first + span - 1;
    if (sp_is_val(p)) {
        int cur = sp_val_value(p);
        if (idx != first) sp_put_val(n++, cur, idx - first);
        sp_put_val(n++, count, 1);
        if (idx != last) sp_put_val(n++, cur, last - idx);
    } else {
        if (idx != first) n += sp_put_zeros(n, idx - first);
        sp_put_val(n++, count, 1);
        if (idx != last) n += sp_put_zeros(n, last - idx);
    }
    long seqlen = n - seq, oldlen = sp_is_xzero(p) ? 2 : 1, delta = seqlen - oldlen;
    if (delta > 0 && sds_len(*s) + (size_t)delta > sparse_max) goto promote;
    if (delta && next) memmove(next + delta, next, (size_t)(end - next));
    sds_incrlen(*s, delta);
    memcpy(p, seq, (size_t)seqlen);
    end += delta;

updated:
    sparse_merge_near(*s, prev ? prev : body, end);
    hll_cache_invalidate((unsigned char *)*s);
    return 1;

promote:
    if (!hll_to_dense(s)) return -1;
    return dense_raise((unsigned char *)*s + HLL_HDR_SIZE, idx, count);
}

int hll_raise(sds *s, long idx, uint8_t count, size_t sparse_max) {
    unsigned char *p = (unsigned char *)*s;
    if (p[4] == HLL_DENSE) return dense_raise(p + HLL_HDR_SIZE, idx, count);
    return sparse_raise(s, idx, count, sparse_max);
}

int hll_add(sds *s, const unsigned char *ele, size_t len, size_t sparse_max) {
    long idx;
    int count = hll_pattern(ele, len, &idx);
    return hll_raise(s, idx, (uint8_t)count, sparse_max);
}

bool hll_merge_max(uint8_t *max, const unsigned char *p, size_t len) {
    if (p[4] == HLL_DENSE) {
        const unsigned char *regs = p + HLL_HDR_SIZE;
        for (long i = 0; i < HLL_REGISTERS; i++) {
            uint8_t v = hll_dense_get(regs, i);
            if (v > max[i]) max[i] = v;
        }
        return true;
    }
    const unsigned char *q = p + HLL_HDR_SIZE, *end = p + len;
    long idx = 0;
    while (q < end) {
        if (sp_is_zero(q)) {
            idx += sp_zero_len(q);
            q++;
        } else if (sp_is_xzero(q)) {
            idx += sp_xzero_len(q);
            q += 2;
        } else {
            long n = sp_val_len(q);
            uint8_t v = (uint8_t)sp_val_value(q);
            if (idx + n > HLL_REGISTERS) break;
            for (long i = 0; i < n; i++, idx++)
                if (v > max[idx]) max[idx] = v;
            q++;
        }
        if (idx > HLL_REGISTERS) break; /* runs past the last register (CVE-2025-32023's shape) */
    }
    /* Valid only when the runs cover the 16384 registers exactly and the
     * opcodes end there: opcodes left after the last register are a
     * corrupt object, refused here as hll_count refuses them (multi-key
     * PFCOUNT and PFMERGE used to take them where PFCOUNT of one key did
     * not). */
    return idx == HLL_REGISTERS && q == end;
}

sds hll_sparse_decode(const unsigned char *p, size_t len) {
    sds out = sds_empty();
    const unsigned char *q = p + HLL_HDR_SIZE, *end = p + len;
    while (q < end) {
        if (sp_is_zero(q)) {
            out = sds_catprintf(out, "z:%ld ", sp_zero_len(q));
            q++;
        } else if (sp_is_xzero(q)) {
            out = sds_catprintf(out, "Z:%ld ", sp_xzero_len(q));
            q += 2;
        } else {
            out = sds_catprintf(out, "v:%d,%ld ", sp_val_value(q), sp_val_len(q));
            q++;
        }
    }
    if (sds_len(out)) sds_setlen(out, sds_len(out) - 1); /* the trailing space */
    return out;
}

/* ------------------------------------------------------------ estimator */

/* sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1), to convergence. */
static double hll_sigma(double x) {
    if (x == 1.0) return INFINITY;
    double y = 1.0, z = x, prev;
    do {
        x *= x;
        prev = z;
        z += x * y;
        y += y;
    } while (prev != z);
    return z;
}

/* tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3, to convergence. */
static double hll_tau(double x) {
    if (x == 0.0 || x == 1.0) return 0.0;
    double y = 1.0, z = 1.0 - x, prev;
    do {
        x = sqrt(x);
        prev = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
    } while (prev != z);
    return z / 3;
}

static uint64_t estimate(const int *histo) {
    double m = HLL_REGISTERS;
    double z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
    for (int k = HLL_Q; k >= 1; k--) {
        z += histo[k];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / m);
    return (uint64_t)llround(HLL_ALPHA_INF * m * m / z);
}

uint64_t hll_count_registers(const uint8_t *regs) {
    int histo[64] = {0};
    for (long i = 0; i < HLL_REGISTERS; i++) histo[regs[i] & 63]++;
    return estimate(histo);
}

uint64_t hll_count(const unsigned char *p, size_t len, bool *invalid) {
    int histo[64] = {0};
    if (p[4] == HLL_DENSE) {
        const unsigned char *regs = p + HLL_HDR_SIZE;
        for (long i = 0; i < HLL_REGISTERS; i++) histo[hll_dense_get(regs, i)]++;
        return estimate(histo);
    }
    const unsigned char *q = p + HLL_HDR_SIZE, *end = p + len;
    long idx = 0;
    while (q < end) {
        if (sp_is_zero(q)) {
            long n = sp_zero_len(q);
            idx += n;
            histo[0] += (int)n;
            q++;
        } else if (sp_is_xzero(q)) {
            long n = sp_xzero_len(q);
            idx += n;
            histo[0] += (int)n;
            q += 2;
        } else {
            long n = sp_val_len(q);
            idx += n;
            histo[sp_val_value(q)] += (int)n;
            q++;
        }
        if (idx > HLL_REGISTERS) break; /* corrupt; also keeps the counts small */
    }
    if (idx != HLL_REGISTERS) {
        if (invalid) *invalid = true;
        return 0;
    }
    return estimate(histo);
}
