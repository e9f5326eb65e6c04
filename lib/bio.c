/* bio.c: the background job thread (see bio.h).
 *
 * One FIFO queue under a mutex; the helper thread sleeps on a condition
 * variable while the queue is empty.  pending[type] counts jobs queued or
 * running: it is decremented only after a job has finished, so "pending is
 * 0" means the job's memory is really back (used_memory reflects it).
 * bio_drain() waits on a second condition variable signalled whenever a job
 * finishes.  Jobs are zmalloc'd by the submitter and freed by the thread,
 * so they are counted in used_memory like everything else. */
#include "bio.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "log.h"
#include "zmalloc.h"

typedef struct bio_job {
    struct bio_job *next;
    int type;
    bio_job_fn *fn;
    void *a, *b, *c;
} bio_job_t;

struct bio {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work_cond;             /* signalled on submit and on stop */
    pthread_cond_t done_cond;             /* signalled when a job finishes */
    bio_job_t *head, *tail;               /* FIFO of queued jobs */
    unsigned long pending[BIO_NUM_TYPES]; /* queued + running, per type */
    unsigned long unfinished;             /* queued + running, all types */
    bool stop;                            /* exit once the queue is empty */
};

static void *bio_main(void *arg) {
    bio_t *bio = arg;
    pthread_mutex_lock(&bio->lock);
    for (;;) {
        while (!bio->head && !bio->stop) pthread_cond_wait(&bio->work_cond, &bio->lock);
        if (!bio->head) break; /* stop requested and nothing left to run */
        bio_job_t *job = bio->head;
        bio->head = job->next;
        if (!bio->head) bio->tail = NULL;
        pthread_mutex_unlock(&bio->lock);
        job->fn(job->a, job->b, job->c);
        int type = job->type;
        zfree(job);
        pthread_mutex_lock(&bio->lock);
        bio->pending[type]--;
        bio->unfinished--;
        pthread_cond_broadcast(&bio->done_cond);
    }
    pthread_mutex_unlock(&bio->lock);
    return NULL;
}

bio_t *bio_create(const char *name, const cpu_set_t *affinity) {
    bio_t *bio = zcalloc(sizeof(*bio));
    pthread_mutex_init(&bio->lock, NULL);
    pthread_cond_init(&bio->work_cond, NULL);
    pthread_cond_init(&bio->done_cond, NULL);
    /* Memory outside zmalloc: libc maps the thread's stack (8 MB reserved,
     * a few pages touched); INFO's rss_thread_stacks counts its pages. */
    if (pthread_create(&bio->thread, NULL, bio_main, bio) != 0) {
        pthread_cond_destroy(&bio->done_cond);
        pthread_cond_destroy(&bio->work_cond);
        pthread_mutex_destroy(&bio->lock);
        zfree(bio);
        return NULL;
    }
    pthread_setname_np(bio->thread, name);
    /* After the start, so that CPUs this machine lacks cost a warning, not
     * the thread (bio_cpulist is the user's text). */
    int rc = affinity ? pthread_setaffinity_np(bio->thread, sizeof(*affinity), affinity) : 0;
    if (rc != 0) log_msg(LL_WARNING, "Could not run a background thread on the CPUs asked for: %s", strerror(rc));
    return bio;
}

void bio_submit(bio_t *bio, int type, bio_job_fn *fn, void *a, void *b, void *c) {
    bio_job_t *job = zmalloc(sizeof(*job));
    job->next = NULL;
    job->type = type;
    job->fn = fn;
    job->a = a;
    job->b = b;
    job->c = c;
    pthread_mutex_lock(&bio->lock);
    if (bio->tail) bio->tail->next = job;
    else bio->head = job;
    bio->tail = job;
    bio->pending[type]++;
    bio->unfinished++;
    pthread_cond_signal(&bio->work_cond);
    pthread_mutex_unlock(&bio->lock);
}

unsigned long bio_pending(bio_t *bio, int type) {
    pthread_mutex_lock(&bio->lock);
    unsigned long n = bio->pending[type];
    pthread_mutex_unlock(&bio->lock);
    return n;
}

void bio_drain(bio_t *bio) {
    pthread_mutex_lock(&bio->lock);
    while (bio->unfinished > 0) pthread_cond_wait(&bio->done_cond, &bio->lock);
    pthread_mutex_unlock(&bio->lock);
}

void bio_destroy(bio_t *bio) {
    if (!bio) return;
    pthread_mutex_lock(&bio->lock);
    bio->stop = true;
    pthread_cond_signal(&bio->work_cond);
    pthread_mutex_unlock(&bio->lock);
    pthread_join(bio->thread, NULL);
    pthread_cond_destroy(&bio->done_cond);
    pthread_cond_destroy(&bio->work_cond);
    pthread_mutex_destroy(&bio->lock);
    zfree(bio);
}
