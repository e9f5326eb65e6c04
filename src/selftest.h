/* selftest.h: the checks redis-like-server runs from its command line
 * instead of serving, as Redis's `--test-memory <MB>` and `--check-system`.
 *
 * server_main.c calls these before any configuration is read; each prints
 * its report on stdout and returns the process's exit status.  Nothing here
 * touches server state: the process layer's leaf. */
#ifndef RL_SELFTEST_H
#define RL_SELFTEST_H

#include <stddef.h>

/* Passes `--test-memory` runs over the block, as Redis does. */
#define RL_MEMTEST_PASSES 50

/* Write and read back patterns (each word its own address, pseudo-random
 * words, all ones and zeros, alternating bits) over `words` words at
 * `buf`, `passes` times.  Returns the number of words that read back
 * wrong (0: the memory held every pattern).  progress(pass, arg), if
 * given, is called before each pass. */
size_t memtest_run(unsigned long *buf, size_t words, int passes, void (*progress)(int pass, void *arg), void *arg);

/* `--test-memory <megabytes>`: map that much memory, run memtest_run over
 * it and say whether it passed.  0 passed, 1 failed or bad argument. */
int selftest_memory(const char *megabytes);

/* `--check-system`: the host settings that hurt a Redis-like server, one
 * line each as "[name]...OK" or "[name]...WARNING:" and the reason (the
 * check names are Redis 7.0's: slow-clocksource, xen-clocksource,
 * overcommit, THP).  0 when every check is OK, else 1. */
int selftest_check_system(void);

#endif
