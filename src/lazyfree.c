/* lazyfree.c: hand big values and whole tables to the bio thread (see
 * lazyfree.h).
 *
 * pending and freed are updated by both threads with atomics: pending goes
 * up on the main thread when a job is queued and down on the helper thread
 * after the memory is freed, so INFO never shows a job as done before
 * used_memory has dropped.  Values reach the thread with refcount 1 and no
 * other pointer to them (the key was unlinked first), so the thread owns
 * them outright; the object type callbacks it runs only call zfree. */
#include "lazyfree.h"

#include <pthread.h>

#include "bio.h"
#include "quicklist.h"
#include "zmalloc.h"
#include "stream.h"
#include "zset.h"

struct lazyfree {
    bio_t *bio;                 /* NULL: no thread, free synchronously */
    unsigned long long pending; /* objects queued, not yet freed (atomic) */
    unsigned long long freed;   /* objects freed by the thread (atomic) */
    /* DEBUG LAZYFREE-PAUSE: a job that holds the thread until resumed, so
     * a test can see a value queued but not yet freed without timing. */
    pthread_mutex_t pause_lock;
    pthread_cond_t pause_cond;
    bool paused;
};

lazyfree_t *lazyfree_create(const cpu_set_t *bio_cpus) {
    lazyfree_t *lf = zcalloc(sizeof(*lf));
    pthread_mutex_init(&lf->pause_lock, NULL);
    pthread_cond_init(&lf->pause_cond, NULL);
    lf->bio = bio_create("bio_lazy_free", bio_cpus);
    return lf;
}

void lazyfree_destroy(lazyfree_t *lf) {
    if (!lf) return;
    lazyfree_pause(lf, false); /* a held thread would never join */
    bio_destroy(lf->bio);      /* runs what is queued, then joins */
    pthread_cond_destroy(&lf->pause_cond);
    pthread_mutex_destroy(&lf->pause_lock);
    zfree(lf);
}

void lazyfree_forget_thread(lazyfree_t *lf) {
    if (lf) lf->bio = NULL; /* the child's copy only: the parent's thread goes on */
}

void lazyfree_drain(lazyfree_t *lf) {
    if (lf && lf->bio) bio_drain(lf->bio);
}

size_t lazyfree_effort(const robj *o) {
    switch (o->type) {
        case OBJ_LIST:
            if (o->encoding == OBJ_ENCODING_QUICKLIST) return ((const quicklist *)o->ptr)->len;
            return 1;
        case OBJ_SET:
        case OBJ_HASH:
            if (o->encoding == OBJ_ENCODING_HT) return ht_size(o->ptr);
            return 1;
        case OBJ_ZSET:
            if (o->encoding == OBJ_ENCODING_SKIPLIST) return ht_size(((const zset_t *)o->ptr)->members);
            return 1;
        case OBJ_STREAM:
            return stream_free_effort(o->ptr);
        default:
            return 1;
    }
}

static void job_done(lazyfree_t *lf, unsigned long long objects) {
    __atomic_fetch_sub(&lf->pending, objects, __ATOMIC_RELAXED);
    __atomic_fetch_add(&lf->freed, objects, __ATOMIC_RELAXED);
}

/* Helper thread: a = lf, b = the value. */
static void free_value_job(void *a, void *b, void *c) {
    (void)c;
    obj_decref(b);
    job_done(a, 1);
}

/* Helper thread: a = lf, b = the keys table. */
static void free_tables_job(void *a, void *b, void *c) {
    (void)c;
    unsigned long long n = ht_size(b);
    ht_release(b);
    job_done(a, n);
}

void lazyfree_free_value(lazyfree_t *lf, robj *val, bool lazy) {
    if (lazy && lf && lf->bio && val->refcount == 1 && lazyfree_effort(val) > LAZYFREE_THRESHOLD) {
        __atomic_fetch_add(&lf->pending, 1, __ATOMIC_RELAXED);
        bio_submit(lf->bio, BIO_LAZY_FREE, free_value_job, lf, val, NULL);
        return;
    }
    obj_decref(val);
}

void lazyfree_free_tables(lazyfree_t *lf, ht *keys) {
    if (!lf || !lf->bio) {
        ht_release(keys);
        return;
    }
    __atomic_fetch_add(&lf->pending, ht_size(keys), __ATOMIC_RELAXED);
    bio_submit(lf->bio, BIO_LAZY_FREE, free_tables_job, lf, keys, NULL);
}

/* Helper thread: wait while the pause that queued this job lasts. */
static void pause_job(void *a, void *b, void *c) {
    (void)b, (void)c;
    lazyfree_t *lf = a;
    pthread_mutex_lock(&lf->pause_lock);
    while (lf->paused) pthread_cond_wait(&lf->pause_cond, &lf->pause_lock);
    pthread_mutex_unlock(&lf->pause_lock);
}

bool lazyfree_pause(lazyfree_t *lf, bool pause) {
    if (!lf || !lf->bio) return false;
    pthread_mutex_lock(&lf->pause_lock);
    bool was = lf->paused;
    lf->paused = pause;
    if (!pause) pthread_cond_broadcast(&lf->pause_cond);
    pthread_mutex_unlock(&lf->pause_lock);
    if (pause && !was) bio_submit(lf->bio, BIO_LAZY_FREE, pause_job, lf, NULL, NULL);
    return true;
}

unsigned long long lazyfree_pending_objects(const lazyfree_t *lf) {
    return __atomic_load_n(&lf->pending, __ATOMIC_RELAXED);
}

unsigned long long lazyfree_freed_objects(const lazyfree_t *lf) {
    return __atomic_load_n(&lf->freed, __ATOMIC_RELAXED);
}

void lazyfree_reset_stats(lazyfree_t *lf) { __atomic_store_n(&lf->freed, 0, __ATOMIC_RELAXED); }
