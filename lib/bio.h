/* bio.h: background jobs on one helper thread ("background I/O", as Redis
 * calls it): the start of a small job system.  Today it runs lazy-free jobs
 * (lazyfree.c hands it values and whole tables to release) and the AOF's
 * background fsyncs (aof.c, on a bio of its own, so an fsync on a slow
 * disk never waits behind a large free or the other way round).
 *
 * The main thread submits, the helper thread runs jobs in submission order.
 * A job must own everything it touches: once submitted, nothing on the main
 * thread may reach the memory it frees.  Only zmalloc (thread-safe, with an
 * atomic used_memory counter) is shared. */
#ifndef RL_BIO_H
#define RL_BIO_H

#include <sched.h>
#include <stddef.h>

typedef struct bio bio_t;

enum { BIO_LAZY_FREE = 0,
       BIO_AOF_FSYNC,
       BIO_NUM_TYPES };

/* A job's work: runs on the helper thread with the three submitted args. */
typedef void bio_job_fn(void *a, void *b, void *c);

/* Start the helper thread, named name (what `top -H` shows; at most 15
 * characters), on the CPUs of affinity (NULL: those of the caller); NULL
 * if the thread cannot be created. */
bio_t *bio_create(const char *name, const cpu_set_t *affinity);
/* Queue fn(a, b, c) as a job of the given type. */
void bio_submit(bio_t *bio, int type, bio_job_fn *fn, void *a, void *b, void *c);
/* Jobs of a type queued or running (0 when the thread is idle). */
unsigned long bio_pending(bio_t *bio, int type);
/* Block until every job submitted so far has run. */
void bio_drain(bio_t *bio);
/* Run the remaining jobs, stop and join the thread, free everything. */
void bio_destroy(bio_t *bio);

#endif
