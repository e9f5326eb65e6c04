/* lazyfree.h: freeing big values off the main thread.
 *
 * Deleting a key whose value has millions of allocations (a big hash, set,
 * list, sorted set) would stall every client for as long as free() takes.
 * Instead the key is unlinked at once and the value handed to the bio
 * thread (bio.h).  Callers: keyspace.c (UNLINK, lazyfree-lazy-* deletes,
 * FLUSH* ASYNC), evict.c, lifecycle.c (create/destroy), info.c (counters).
 *
 * Only values with more than LAZYFREE_THRESHOLD allocations and no other
 * reference go to the thread: for small ones a job costs more than the
 * free.  The counters are objects (values, or keys of a flushed table). */
#ifndef RL_LAZYFREE_H
#define RL_LAZYFREE_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "dict.h"
#include "hashtable.h"
#include "object.h"

#define LAZYFREE_THRESHOLD 64

typedef struct lazyfree lazyfree_t;

/* Start the helper thread, on bio_cpus (bio_cpulist; NULL: anywhere).
 * If it cannot start, everything is freed synchronously (the server
 * still works). */
lazyfree_t *lazyfree_create(const cpu_set_t *bio_cpus);
/* Finish every queued job, join the thread, free the state. */
void lazyfree_destroy(lazyfree_t *lf);

/* Allocations freeing o would take: 1 for flat encodings, the number of
 * nodes/entries for linked ones. */
size_t lazyfree_effort(const robj *o);
/* Drop the caller's reference to val (takes it).  With lazy set and a big,
 * unshared value, the free happens on the thread; otherwise now. */
void lazyfree_free_value(lazyfree_t *lf, robj *val, bool lazy);
/* Release a database's keys table (takes it; its entries and their
 * values go with it) on the thread. */
void lazyfree_free_tables(lazyfree_t *lf, ht *keys);
/* Wait until every job submitted so far has finished (tests, shutdown). */
void lazyfree_drain(lazyfree_t *lf);
/* In a forked child that runs commands (SCRIPT DEBUG YES's session): the
 * thread is not there (fork copies only the caller) and its queue's lock
 * may have been held at the instant of the fork, so free synchronously
 * from now on and never touch the queue. */
void lazyfree_forget_thread(lazyfree_t *lf);
/* Hold (pause) or release the thread: jobs queue up but none runs while
 * held (DEBUG LAZYFREE-PAUSE, for tests).  false when there is no thread. */
bool lazyfree_pause(lazyfree_t *lf, bool pause);

unsigned long long lazyfree_pending_objects(const lazyfree_t *lf);
unsigned long long lazyfree_freed_objects(const lazyfree_t *lf);
void lazyfree_reset_stats(lazyfree_t *lf);

#endif
