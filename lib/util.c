/* util.c: number parsing/formatting, glob matching, clocks (see util.h). */
#include "util.h"
#include "zmalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

bool util_str2ll(const char *s, size_t len, long long *out) {
    if (len == 0 || len > 20) return false;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-') {
        neg = true;
        i = 1;
        if (len == 1) return false;
    }
    if (s[i] == '0' && len > i + 1) return false;
    if (s[i] == '0' && neg) return false; /* "-0" is not canonical */
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return false;
        *out = (long long)(0 - v);
    } else {
        if (v > (unsigned long long)LLONG_MAX) return false;
        *out = (long long)v;
    }
    return true;
}

bool util_str2d(const char *s, size_t len, double *out) {
    /* Any length, as Redis takes it (DBL_MAX written out in full is 300
     * digits and more): long texts are copied to the heap to end them. */
    char stack[256];
    if (len == 0 || isspace((unsigned char)s[0])) return false;
    char *buf = len < sizeof(stack) ? stack : zmalloc(len + 1);
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    bool ok = (size_t)(end - buf) == len && !isspace((unsigned char)buf[len - 1]) && !isnan(v) &&
              !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO));
    if (buf != stack) zfree(buf);
    if (ok) *out = v;
    return ok;
}

bool util_str2ld(const char *s, size_t len, long double *out) {
    /* As wide as INCRBYFLOAT's widest result, so what it stores reads back. */
    char buf[5 * 1024];
    if (len == 0 || len >= sizeof(buf)) return false;
    if (isspace((unsigned char)s[0])) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long double v = strtold(buf, &end);
    if ((size_t)(end - buf) != len || isspace((unsigned char)buf[len - 1])) return false;
    /* Underflow to a denormal is accepted; overflow and underflow to 0 not. */
    if (errno == ERANGE && (isinf(v) || fpclassify(v) == FP_ZERO)) return false;
    if (isnan(v)) return false;
    *out = v;
    return true;
}

/* Decimal text of v without printf: this runs for every integer and bulk
 * length of every reply. */
int util_ll2str(char *buf, size_t size, long long v) {
    char tmp[24];
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char *p = tmp + sizeof(tmp);
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    size_t n = (size_t)(tmp + sizeof(tmp) - p);
    if (n >= size) return snprintf(buf, size, "%lld", v);
    memcpy(buf, p, n);
    buf[n] = '\0';
    return (int)n;
}

long long util_d2ll_trunc(double v) {
    /* -2^63 is exact in a double; 2^63 is the first value past the range */
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return (long long)v;
    return LLONG_MIN;
}

int util_d2str(char *buf, size_t size, double v) {
    if (isinf(v)) return snprintf(buf, size, v > 0 ? "inf" : "-inf");
    /* Integral values below 2^53 print the same with %.17g and as integers;
     * the integer path avoids printf's slow float formatting (scores). */
    if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(long long)v && !(v == 0 && signbit(v)))
        return util_ll2str(buf, size, (long long)v);
    /* Redis 7.0 replies with %.17g, so 0.1 reads "0.10000000000000001". */
    return snprintf(buf, size, "%.17g", v);
}

int util_d2str_short(char *buf, size_t size, double v) {
    if (!isfinite(v) || (fabs(v) < 9007199254740992.0 && v == (double)(long long)v)) return util_d2str(buf, size, v);
    for (int prec = 15; prec <= 16; prec++) {
        int n = snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return n;
    }
    return util_d2str(buf, size, v);
}

int util_ld2str(char *buf, size_t size, long double v) {
    if (isinf(v)) return snprintf(buf, size, v > 0 ? "inf" : "-inf");
    int n = snprintf(buf, size, "%.17Lf", v);
    if (n < 0) return 0;
    if ((size_t)n >= size) n = (int)size - 1; /* truncated: never report more than buf holds */
    if (strchr(buf, '.')) {
        while (n > 0 && buf[n - 1] == '0') n--;
        if (n > 0 && buf[n - 1] == '.') n--;
        buf[n] = '\0';
    }
    if (strcmp(buf, "-0") == 0) {
        buf[0] = '0';
        buf[1] = '\0';
        n = 1;
    }
    return n;
}

static inline int fold(int c, bool nocase) { return nocase ? tolower(c) : c; }

/* Match a [...] class at *pp against c; advances *pp past the ']'. */
static bool match_class(const char **pp, const char *pend, int c, bool nocase) {
    const char *p = *pp + 1;
    bool negate = false, hit = false;
    if (p < pend && *p == '^') {
        negate = true;
        p++;
    }
    while (p < pend && *p != ']') {
        if (*p == '\\' && p + 1 < pend) {
            p++;
            if (fold(*p, nocase) == fold(c, nocase)) hit = true;
        } else if (p + 2 < pend && p[1] == '-' && p[2] != ']') {
            int lo = fold((unsigned char)p[0], nocase), hi = fold((unsigned char)p[2], nocase);
            if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
            }
            int cc = fold(c, nocase);
            if (cc >= lo && cc <= hi) hit = true;
            p += 2;
        } else if (fold((unsigned char)*p, nocase) == fold(c, nocase)) {
            hit = true;
        }
        p++;
    }
    *pp = (p < pend) ? p : pend - 1; /* an unclosed class ends the pattern */
    return negate ? !hit : hit;
}

/* Match one pattern token (a literal, an escaped byte, '?' or a class) at
 * *pp against the byte c, advancing *pp past the token.  Every token but
 * '*' consumes exactly one byte of the string, which is what lets
 * util_glob_match work without recursion. */
static bool match_token(const char **pp, const char *pend, int c, bool nocase) {
    const char *p = *pp;
    bool hit;
    switch (*p) {
        case '?':
            hit = true;
            break;
        case '[':
            hit = match_class(&p, pend, c, nocase);
            break;
        case '\\':
            if (p + 1 < pend) p++;
            /* fall through */
        default:
            hit = fold((unsigned char)*p, nocase) == fold(c, nocase);
            break;
    }
    *pp = p + 1;
    return hit;
}

/* Glob matching in O(len(pattern) * len(string)) steps, never more.
 *
 * A backtracking matcher retries every earlier '*' when a later part fails,
 * which is exponential in the number of stars ("a*a*a*...b" against a run
 * of a's).  Retrying only the most recent '*' is enough: when the pattern
 * after star k fails at every string position reachable from star k, no
 * choice for an earlier star can help, since star k could have absorbed
 * whatever an earlier star would have skipped.  So the state is the pattern
 * position after the last star and the string position it was tried at;
 * each failure moves that string position one byte right. */
static bool glob_match(const char *p, const char *pend, const char *s, const char *send, bool nocase) {
    const char *star_p = NULL, *star_s = NULL; /* resume point after the last '*' */
    while (s < send) {
        if (p < pend && *p == '*') {
            while (p < pend && *p == '*') p++;
            if (p == pend) return true; /* a trailing star takes the rest */
            star_p = p;
            star_s = s;
            continue;
        }
        const char *next = p;
        if (p < pend && match_token(&next, pend, (unsigned char)*s, nocase)) {
            p = next;
            s++;
            continue;
        }
        if (!star_p) return false;
        p = star_p; /* let the last star take one more byte */
        s = ++star_s;
    }
    while (p < pend && *p == '*') p++;
    return p == pend;
}

/* Redis's recursive matcher gives up (no match) once it is nested more
 * than 1000 stars deep, its fix for CVE-2024-31228 (a long pattern ran the
 * stack out), and Redis 7.0.15 as Debian ships it has that fix: so a
 * pattern matches there only if a match passes through at most 1000
 * recursions.  Every match passes through the same number: one per run of
 * stars (escaped stars and stars in a class are literals), except a final
 * run, which matches the rest without recursing.  Counting them keeps our
 * answers Redis's; the matcher itself needs no recursion. */
#define GLOB_MAX_STAR_NESTING 1000

static bool glob_too_deep(const char *p, const char *pend) {
    /* Each counted run is followed by at least one more token: under
     * 2 * 1001 bytes there cannot be 1001 of them. */
    if (pend - p < 2 * (GLOB_MAX_STAR_NESTING + 1)) return false;
    long runs = 0;
    bool ends_in_star = false;
    while (p < pend) {
        if (*p == '*') {
            while (p < pend && *p == '*') p++;
            runs++;
            ends_in_star = p == pend;
            continue;
        }
        match_token(&p, pend, 0, false); /* only to step over the token */
    }
    if (ends_in_star) runs--;
    return runs > GLOB_MAX_STAR_NESTING;
}

bool util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, bool nocase) {
    /* Redis's matcher never enters its loop for an empty string, so "" is
     * matched only by "" ("**" does not match it; KEYS/SCAN special-case a
     * lone "*" before calling us). */
    if (slen == 0) return plen == 0;
    if (glob_too_deep(pat, pat + plen)) return false;
    return glob_match(pat, pat + plen, str, str + slen, nocase);
}

bool util_memtoull(const char *s, unsigned long long *out) {
    const char *u = s;
    while (*u == '-' || isdigit((unsigned char)*u)) u++;
    unsigned long long mul;
    if (!strcasecmp(u, "")) mul = 1;
    else if (!strcasecmp(u, "b")) mul = 1;
    else if (!strcasecmp(u, "k")) mul = 1000;
    else if (!strcasecmp(u, "kb")) mul = 1024;
    else if (!strcasecmp(u, "m")) mul = 1000ULL * 1000;
    else if (!strcasecmp(u, "mb")) mul = 1024ULL * 1024;
    else if (!strcasecmp(u, "g")) mul = 1000ULL * 1000 * 1000;
    else if (!strcasecmp(u, "gb")) mul = 1024ULL * 1024 * 1024;
    else return false;
    long long v;
    if (!util_str2ll(s, (size_t)(u - s), &v) || v < 0) return false;
    *out = (unsigned long long)v * mul;
    return true;
}

void util_bytes_to_human(char *buf, size_t size, unsigned long long n) {
    const char *units = "BKMGTP";
    double d = (double)n;
    int i = 0;
    if (n < 1024) {
        snprintf(buf, size, "%lluB", n);
        return;
    }
    while (d >= 1024 && i < 5) {
        d /= 1024;
        i++;
    }
    snprintf(buf, size, "%.2f%c", d, units[i]);
}

long long util_ustime(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

long long util_mstime(void) { return util_ustime() / 1000; }

long long util_monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

unsigned long util_random_below(unsigned long n) {
    /* random() gives 31 bits: combine two draws for large collections. */
    unsigned long r = ((unsigned long)random() << 31) ^ (unsigned long)random();
    return n ? r % n : 0;
}

void util_random_bytes(uint8_t *p, size_t len) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    if (fd >= 0) {
        while (got < len) {
            ssize_t n = read(fd, p + got, len - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        close(fd);
    }
    /* Without /dev/urandom fall back on time and pid: still varies per run. */
    for (; got < len; got++) p[got] = (uint8_t)(util_ustime() >> (got % 8) ^ getpid());
}

void util_random_hex(char *p, size_t len) {
    static const char hex[] = "0123456789abcdef";
    uint8_t raw[64];
    for (size_t i = 0; i < len; i += sizeof(raw)) {
        util_random_bytes(raw, sizeof(raw));
        for (size_t j = 0; j < sizeof(raw) && i + j < len; j++) p[i + j] = hex[raw[j] & 15];
    }
}
