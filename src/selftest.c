/* selftest.c: `redis-like-server --test-memory <MB>` and `--check-system`,
 * the two self-checks Redis runs from its command line instead of serving.
 *
 * The memory test maps a block of its own (not through zmalloc: it is
 * nobody's data) and writes and reads back four kinds of pattern over it,
 * pass after pass, so a bit that does not hold what was written shows as a
 * word that reads back wrong.  The system check reads the kernel settings
 * that make a forking in-memory server misbehave and times the clock the
 * server reads on every command.  Both print to stdout and return the exit
 * status; server_main.c calls them before any configuration is read. */
#include "selftest.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ memory test */

/* xorshift64: the random pattern is regenerated from its seed to check it,
 * so nothing but the block itself is held. */
static unsigned long next_random(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return (unsigned long)x;
}

/* Words of buf[0..words) that differ from what fill wrote; each pattern is
 * written over the whole block before any of it is read back, so a write
 * that lands on the wrong word is seen too. */
static size_t check_address_pattern(unsigned long *buf, size_t words) {
    size_t bad = 0;
    for (size_t i = 0; i < words; i++) buf[i] = (unsigned long)(uintptr_t)&buf[i];
    for (size_t i = 0; i < words; i++)
        if (buf[i] != (unsigned long)(uintptr_t)&buf[i]) bad++;
    return bad;
}

static size_t check_random_pattern(unsigned long *buf, size_t words, uint64_t seed) {
    size_t bad = 0;
    uint64_t s = seed;
    for (size_t i = 0; i < words; i++) buf[i] = next_random(&s);
    s = seed;
    for (size_t i = 0; i < words; i++)
        if (buf[i] != next_random(&s)) bad++;
    return bad;
}

/* even words get a, odd words b: solid (a == b) and checkerboard fills */
static size_t check_two_words(unsigned long *buf, size_t words, unsigned long a, unsigned long b) {
    size_t bad = 0;
    for (size_t i = 0; i < words; i++) buf[i] = (i & 1) ? b : a;
    for (size_t i = 0; i < words; i++)
        if (buf[i] != ((i & 1) ? b : a)) bad++;
    return bad;
}

size_t memtest_run(unsigned long *buf, size_t words, int passes, void (*progress)(int pass, void *arg), void *arg) {
    const unsigned long ones = ~0UL, alt = (unsigned long)0xaaaaaaaaaaaaaaaaULL;
    size_t bad = 0;
    for (int pass = 1; pass <= passes; pass++) {
        if (progress) progress(pass, arg);
        bad += check_address_pattern(buf, words);
        bad += check_random_pattern(buf, words, 0x9e3779b97f4a7c15ULL * (uint64_t)pass);
        bad += check_two_words(buf, words, ones, ones);
        bad += check_two_words(buf, words, 0, 0);
        bad += check_two_words(buf, words, alt, ~alt);
        bad += check_two_words(buf, words, ~alt, alt);
    }
    return bad;
}

static void print_pass(int pass, void *arg) {
    (void)arg;
    printf("pass %d of %d: addresses, random words, ones and zeros, alternating bits\n", pass,
           RL_MEMTEST_PASSES);
    fflush(stdout);
}

int selftest_memory(const char *megabytes) {
    char *end = NULL;
    long mb = megabytes ? strtol(megabytes, &end, 10) : 0;
    if (!megabytes || *end != '\0' || mb <= 0 || mb > (long)(SIZE_MAX >> 21)) {
        fprintf(stderr, "--test-memory needs the megabytes to test, a positive number.\n"
                        "Example: ./redis-like-server --test-memory 4096\n");
        return 1;
    }
    size_t bytes = (size_t)mb << 20;
    void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
        fprintf(stderr, "Could not map %ld MB to test.\n", mb);
        return 1;
    }
    printf("Testing %ld MB of memory, %d passes. Allow some minutes per GB; a failure here\n"
           "points at the hardware, a pass does not clear it of faults that need heat or time.\n",
           mb, RL_MEMTEST_PASSES);
    size_t bad = memtest_run(block, bytes / sizeof(unsigned long), RL_MEMTEST_PASSES, print_pass, NULL);
    munmap(block, bytes);
    if (bad) {
        printf("Your memory FAILED this test: %zu words read back other than written.\n"
               "Check it with a dedicated tool (memtest86+, memtester) before trusting it with data.\n",
               bad);
        return 1;
    }
    printf("Your memory passed this test.\n"
           "For more certainty, run a dedicated tool (memtest86+ at boot, or memtester).\n");
    return 0;
}

/* ----------------------------------------------------------- system check */

/* The first line of a file, without its newline; false if unreadable. */
static bool read_line(const char *path, char *buf, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

static double cpu_seconds(const struct timeval *tv) { return (double)tv->tv_sec + (double)tv->tv_usec / 1e6; }

/* The server reads the clock on every command: a clock source the vDSO
 * cannot read (each read a system call) makes that expensive.  Read it for
 * a tenth of a second and see how much of the CPU went to the kernel. */
static const char *check_slow_clocksource(void) {
    struct rusage before, after;
    struct timespec start, now;
    getrusage(RUSAGE_SELF, &before);
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 100000000L);
    getrusage(RUSAGE_SELF, &after);
    double sys = cpu_seconds(&after.ru_stime) - cpu_seconds(&before.ru_stime);
    double user = cpu_seconds(&after.ru_utime) - cpu_seconds(&before.ru_utime);
    if (sys + user > 0 && sys / (sys + user) > 0.1)
        return "Reading the clock costs a system call here (the kernel took more than a tenth of the CPU of a "
               "loop that only reads it). The server reads the clock for every command; choose a clock source "
               "the vDSO can read (tsc) in /sys/devices/system/clocksource/clocksource0/current_clocksource.";
    return NULL;
}

static const char *check_xen_clocksource(void) {
    char cs[64];
    if (read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof(cs)) &&
        !strcmp(cs, "xen"))
        return "The clock source is xen, which is slow to read; the server reads the clock for every command. "
               "Switch it to tsc (echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource, "
               "or clocksource=tsc on the kernel command line) where the hypervisor allows it.";
    return NULL;
}

static const char *check_overcommit(void) {
    char v[16];
    if (read_line("/proc/sys/vm/overcommit_memory", v, sizeof(v)) && strcmp(v, "1") != 0)
        return "vm.overcommit_memory is not 1. A background save, an AOF rewrite or a full sync forks the "
               "server, and without overcommit that fork can fail when memory is short, even though the "
               "child shares the parent's pages. Set 'vm.overcommit_memory = 1' in /etc/sysctl.conf and run "
               "'sysctl vm.overcommit_memory=1'.";
    return NULL;
}

static const char *check_thp(void) {
    char v[128];
    if (read_line("/sys/kernel/mm/transparent_hugepage/enabled", v, sizeof(v)) && strstr(v, "[always]"))
        return "Transparent huge pages are 'always': after a fork every write copies 2 MB instead of 4 KB, "
               "which costs latency and memory. The server turns them off for itself (disable-thp yes, the "
               "default); for other processes, 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled'.";
    return NULL;
}

int selftest_check_system(void) {
    static const struct {
        const char *name;
        const char *(*run)(void);
    } checks[] = {
        {"slow-clocksource", check_slow_clocksource},
        {"xen-clocksource", check_xen_clocksource},
        {"overcommit", check_overcommit},
        {"THP", check_thp},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        printf("[%s]...", checks[i].name);
        fflush(stdout);
        const char *why = checks[i].run();
        if (why) {
            printf("WARNING:\n%s\n", why);
            failed = 1;
        } else {
            printf("OK\n");
        }
    }
    return failed;
}
