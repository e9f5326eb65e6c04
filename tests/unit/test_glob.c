/* test_glob.c: util_glob_match, the matcher behind KEYS, SCAN MATCH,
 * PSUBSCRIBE and CONFIG GET: fixed cases with Redis's answers, agreement
 * with a plain backtracking matcher (the old implementation, kept here as
 * the reference) on thousands of random patterns, and the worst case that
 * was exponential ("a*a*...b" against a run of a's), which must answer
 * correctly and, being linear per star, at once. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_help.h"
#include "util.h"

/* ---- reference: the exhaustive backtracking matcher ---- */

static int ref_fold(int c, bool nocase) { return nocase ? tolower(c) : c; }

static bool ref_class(const char **pp, const char *pend, int c, bool nocase) {
    const char *p = *pp + 1;
    bool negate = false, hit = false;
    if (p < pend && *p == '^') {
        negate = true;
        p++;
    }
    while (p < pend && *p != ']') {
        if (*p == '\\' && p + 1 < pend) {
            p++;
            if (ref_fold(*p, nocase) == ref_fold(c, nocase)) hit = true;
        } else if (p + 2 < pend && p[1] == '-' && p[2] != ']') {
            int lo = ref_fold((unsigned char)p[0], nocase), hi = ref_fold((unsigned char)p[2], nocase);
            if (lo > hi) {
                int t = lo;
                lo = hi;
                hi = t;
            }
            int cc = ref_fold(c, nocase);
            if (cc >= lo && cc <= hi) hit = true;
            p += 2;
        } else if (ref_fold((unsigned char)*p, nocase) == ref_fold(c, nocase)) {
            hit = true;
        }
        p++;
    }
    *pp = (p < pend) ? p : pend - 1;
    return negate ? !hit : hit;
}

static bool ref_match(const char *p, const char *pend, const char *s, const char *send, bool nocase) {
    while (p < pend) {
        switch (*p) {
            case '*':
                while (p + 1 < pend && p[1] == '*') p++;
                if (p + 1 == pend) return true;
                for (const char *t = s; t <= send; t++)
                    if (ref_match(p + 1, pend, t, send, nocase)) return true;
                return false;
            case '?':
                if (s == send) return false;
                s++;
                break;
            case '[':
                if (s == send) return false;
                if (!ref_class(&p, pend, (unsigned char)*s, nocase)) return false;
                s++;
                break;
            case '\\':
                if (p + 1 < pend) p++;
                /* fall through */
            default:
                if (s == send || ref_fold((unsigned char)*p, nocase) != ref_fold((unsigned char)*s, nocase)) return false;
                s++;
                break;
        }
        p++;
    }
    return s == send;
}

static bool ref(const char *pat, const char *str, bool nocase) {
    size_t sl = strlen(str);
    if (sl == 0) return strlen(pat) == 0;
    return ref_match(pat, pat + strlen(pat), str, str + sl, nocase);
}

static bool glob(const char *pat, const char *str) {
    return util_glob_match(pat, strlen(pat), str, strlen(str), false);
}

static int test_fixed_cases(void) {
    CHECK(glob("*", "anything"));
    CHECK(glob("h?llo", "hello"));
    CHECK(!glob("h?llo", "hllo"));
    CHECK(glob("h*llo", "heeeello"));
    CHECK(glob("h[ae]llo", "hallo"));
    CHECK(!glob("h[ae]llo", "hillo"));
    CHECK(glob("h[^e]llo", "hallo"));
    CHECK(!glob("h[^e]llo", "hello"));
    CHECK(glob("h[a-b]llo", "hbllo"));
    CHECK(glob("h[b-a]llo", "hbllo")); /* reversed ranges work, as in Redis */
    CHECK(glob("a\\*b", "a*b"));
    CHECK(!glob("a\\*b", "axb"));
    CHECK(glob("*a*b*c*", "xxaxxbxxcxx"));
    CHECK(!glob("*a*b*c*", "xxaxxcxxbxx"));
    CHECK(glob("a*", "a"));
    CHECK(glob("[abc", "c")); /* an unclosed class ends the pattern */
    CHECK(!glob("**", ""));   /* Redis: only "" matches "" */
    CHECK(glob("", ""));
    CHECK(util_glob_match("HeLLo", 5, "hello", 5, true));
    CHECK(!util_glob_match("HeLLo", 5, "hello", 5, false));
    return 0;
}

/* Random patterns over a small alphabet rich in metacharacters, checked
 * against the reference on random strings. */
static int test_agrees_with_backtracking(void) {
    static const char pat_chars[] = "ab**?[]^-\\c";
    static const char str_chars[] = "abc-^]\\*";
    unsigned seed = 12345;
    char pat[16], str[16];
    for (int iter = 0; iter < 200000; iter++) {
        seed = seed * 1103515245u + 12345u;
        int pl = (int)(seed >> 16) % 10;
        for (int i = 0; i < pl; i++) {
            seed = seed * 1103515245u + 12345u;
            pat[i] = pat_chars[(seed >> 16) % (sizeof(pat_chars) - 1)];
        }
        pat[pl] = '\0';
        seed = seed * 1103515245u + 12345u;
        int sl = (int)(seed >> 16) % 9;
        for (int i = 0; i < sl; i++) {
            seed = seed * 1103515245u + 12345u;
            str[i] = str_chars[(seed >> 16) % (sizeof(str_chars) - 1)];
        }
        str[sl] = '\0';
        bool nocase = iter & 1;
        bool want = ref(pat, str, nocase);
        bool got = util_glob_match(pat, (size_t)pl, str, (size_t)sl, nocase);
        if (want != got) fprintf(stderr, "  pattern '%s' string '%s' nocase %d: want %d\n", pat, str, nocase, want);
        CHECK(want == got);
    }
    return 0;
}

/* The pattern that pinned the event loop: 20 stars, a string of 40 a's and
 * no 'b'.  Backtracking needs C(40,20) ~ 10^11 steps; we need ~40*40.  The
 * bigger cases would never finish if the matcher were exponential. */
static int test_worst_case(void) {
    char str[10001], pat[2001];
    memset(str, 'a', 40);
    str[40] = '\0';
    CHECK(!glob("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", str));
    memset(str, 'a', 10000);
    str[10000] = '\0';
    for (int i = 0; i < 1000; i++) {
        pat[2 * i] = '*';
        pat[2 * i + 1] = 'a';
    }
    pat[2000] = '\0';
    CHECK(glob(pat, str));
    pat[1999] = 'b';
    CHECK(!glob(pat, str));
    pat[1999] = '?';
    CHECK(glob(pat, str));
    return 0;
}

int main(void) {
    RUN_TEST(test_fixed_cases);
    RUN_TEST(test_agrees_with_backtracking);
    RUN_TEST(test_worst_case);
    return TEST_REPORT("glob");
}
