/* cpu_affinity.h: the CPUs a thread or child may run on, from Redis's
 * cpulist settings (server_cpulist, bio_cpulist, aof_rewrite_cpulist,
 * bgsave_cpulist; see cpu_affinity.c). */
#ifndef RL_CPU_AFFINITY_H
#define RL_CPU_AFFINITY_H

#include <sched.h>
#include <stdbool.h>

#define CPU_AFFINITY_ERR "argument must be a list of CPUs such as 0,2,4-7 or 0-15:2"

/* Parse list ("" means no setting): the number of CPUs put in *set, 0
 * for "", -1 when the text is not a CPU list. */
int cpu_affinity_parse(const char *list, cpu_set_t *set);
/* *set for a non-empty list, NULL for "" (the thread keeps its mask). */
const cpu_set_t *cpu_affinity_of(const char *list, cpu_set_t *set);
/* Pin the calling thread (or process) to list; what names it in the
 * warning logged when the kernel refuses (no such CPU here). */
void cpu_affinity_apply(const char *list, const char *what);

#endif
