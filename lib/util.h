/* util.h: small pure helpers shared by the server: number parsing and
 * formatting with Redis's exact rules, glob matching, clocks, byte sizes.
 * No server state here. */
#ifndef RL_UTIL_H
#define RL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strict integer parse: no spaces, no '+', no leading zeros, fits int64. */
bool util_str2ll(const char *s, size_t len, long long *out);
/* Double parse as Redis accepts it: strtod over the whole string, no
 * spaces, no NaN; "inf"/"-inf" accepted. */
bool util_str2d(const char *s, size_t len, double *out);
/* long double for INCRBYFLOAT. */
bool util_str2ld(const char *s, size_t len, long double *out);
int util_ll2str(char *buf, size_t size, long long v);
/* A double as Redis 7.0 replies with it: %.17g (0.1 is
 * "0.10000000000000001"), "inf", "-inf"; integers without ".0". */
int util_d2str(char *buf, size_t size, double v);
/* The shortest of %.15g, %.16g, %.17g that reads back as exactly v (0.1 is
 * "0.1"), else as util_d2str: for storage, where only the value matters. */
int util_d2str_short(char *buf, size_t size, double v);
/* INCRBYFLOAT's human form: %.17Lf with trailing zeros trimmed. */
int util_ld2str(char *buf, size_t size, long double v);
/* v truncated toward zero, as a C cast; NaN and values past long long's
 * range give LLONG_MIN, which is what x86-64's conversion produces, so
 * scripts see what Redis gives them there, without the cast's undefined
 * behaviour (a script's 1e300 must not stop a sanitizer build). */
long long util_d2ll_trunc(double v);

/* Glob match as Redis's KEYS/PSUBSCRIBE/CONFIG GET: * ? [abc] [^a] [a-z] \x.
 * At most O(plen * slen) steps whatever the pattern (no backtracking over
 * earlier stars), so a hostile pattern cannot stall the event loop. */
bool util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, bool nocase);

/* The one rule for a count or length read from a file or a socket: n
 * items of at least min_each bytes each must fit in the `avail` bytes that
 * can still follow, and n may not exceed `limit` (a format's or the
 * config's bound).  Checked before n sizes any allocation, so a header
 * announcing billions of entries costs nothing.  Used by the RDB loader,
 * the AOF parser and the RESP parser. */
static inline bool util_count_fits(uint64_t n, size_t min_each, size_t avail, uint64_t limit) {
    if (n > limit) return false;
    return min_each == 0 || n <= avail / min_each;
}

/* Memory sizes as in config files: 1k=1000, 1kb=1024, 1m, 1mb, 1g, 1gb.
 * Returns false on a malformed value. */
bool util_memtoull(const char *s, unsigned long long *out);
/* "1.23M" style for *_human fields: B, K, M, G, T, P with two decimals. */
void util_bytes_to_human(char *buf, size_t size, unsigned long long n);

long long util_ustime(void); /* wall clock, microseconds */
long long util_mstime(void); /* wall clock, milliseconds */
long long util_monotonic_us(void);

void util_random_bytes(uint8_t *p, size_t len);
/* Uniform-enough random integer in [0, n) from random(); 0 when n is 0. */
unsigned long util_random_below(unsigned long n);
void util_random_hex(char *p, size_t len);

#endif
