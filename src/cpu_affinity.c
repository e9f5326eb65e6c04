/* cpu_affinity.c: pinning the server's threads and children to CPUs, as
 * Redis's *_cpulist settings do: server_cpulist for the main thread,
 * bio_cpulist for the background threads (lib/bio.c), aof_rewrite_cpulist
 * and bgsave_cpulist for the forked children (child.c).  A list is
 * comma-separated items, each a CPU number, a range "a-b", or a range
 * with a step "a-b:s" (every s-th CPU from a to b).  Unlike Redis, which
 * ignores a list it cannot read, config.c refuses one with the line. */
#include "cpu_affinity.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* A CPU number at *p (advanced past it), or -1. */
static long read_cpu(const char **p) {
    if (!isdigit((unsigned char)**p)) return -1;
    char *end;
    errno = 0;
    long v = strtol(*p, &end, 10);
    if (errno || v >= CPU_SETSIZE) return -1;
    *p = end;
    return v;
}

int cpu_affinity_parse(const char *list, cpu_set_t *set) {
    CPU_ZERO(set);
    if (!list || !*list) return 0;
    const char *p = list;
    for (;;) {
        long a = read_cpu(&p), b = a, step = 1;
        if (a < 0) return -1;
        if (*p == '-') {
            p++;
            if ((b = read_cpu(&p)) < a) return -1;
            if (*p == ':') {
                p++;
                if ((step = read_cpu(&p)) < 1) return -1;
            }
        }
        for (long cpu = a; cpu <= b; cpu += step) CPU_SET((int)cpu, set);
        if (*p == '\0') break;
        if (*p++ != ',') return -1;
    }
    return CPU_COUNT(set);
}

const cpu_set_t *cpu_affinity_of(const char *list, cpu_set_t *set) {
    return cpu_affinity_parse(list, set) > 0 ? set : NULL;
}

void cpu_affinity_apply(const char *list, const char *what) {
    cpu_set_t set;
    if (!cpu_affinity_of(list, &set)) return;
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        log_msg(LL_WARNING, "Could not run the %s on CPUs %s: %s", what, list, strerror(errno));
}
