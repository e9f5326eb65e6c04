/* bench-sizehist-micro.c: the size histogram's cost per zmalloc/zfree pair,
 * measured in thread CPU time (steady on a shared machine, unlike the
 * throughput of a server).  Built twice by utils/bench/bench-sizehist-micro.sh,
 * with and without -DRL_NO_SIZEHIST, and run alternately; each run prints
 * nanoseconds per pair.  The pattern mimics a server's: most blocks die
 * young (a ring of 64 live blocks, the oldest freed at each step) and sizes
 * cycle through small ones (16..200 bytes). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sizehist.h"
#include "zmalloc.h"

static double thread_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 20000000;
    void *ring[64] = {0};
    sizehist_own_thread(); /* as the server's main thread */
    double t0 = thread_ns();
    for (long i = 0; i < pairs; i++) {
        unsigned slot = (unsigned)i & 63;
        zfree(ring[slot]);
        ring[slot] = zmalloc(16 + (size_t)(i * 7 % 185));
    }
    double ns = (thread_ns() - t0) / (double)pairs;
    for (int i = 0; i < 64; i++) zfree(ring[i]);
    printf("%.2f\n", ns);
    return 0;
}
