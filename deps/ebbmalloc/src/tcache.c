/* tcache.c: per-thread caches, the lock-free layer under malloc/free.
 * The hit paths (pop/push on a class list) are inline in internal.h; this
 * file holds what happens on a miss: set-up of a thread's cache, refill
 * from central.c, flush to it on overflow, and the flush at thread exit.
 * Callers: alloc.c, override.c (through internal.h), purge.c, stats.c.
 *
 * Bound: class c holds at most max[c] blocks, and max[] is chosen at start
 * so that sum(max[c] * size[c]) <= tcache_bytes (EBBMALLOC_CONF), then each
 * class above 128 B is raised to its floor (bin_floor: two refills of 16
 * KiB or 32 blocks, 4 KiB above 1 KiB); classes that cycle through more
 * than their bins hold may then grow by tcache_bytes / 2 in all
 * (bin_grow), so one thread never strands more than 3/2 tcache_bytes +
 * 1.3 MiB.
 * Two lists per class, each of at most max[c]/2 blocks (a pair of
 * magazines, after Bonwick's slab allocator): the bin's head, which the
 * fast paths pop and push, and the spare.  A free that finds the head
 * full sets it aside as the spare, sending the old spare away first as one
 * batch onto the class's transfer stack (xfer.c; to the slabs if the stack
 * is full); a malloc that finds the head empty takes the spare back, else
 * a batch from the transfer stack, else up to max/2 blocks from the slabs
 * (collecting the blocks of the thread's arena that wait on remote lists
 * first).  No miss walks a list to cut it: the bin used to be one list of
 * max blocks whose overflow sent all but the max/2 most recent away, found
 * by walking those, 3-5% of glibc-simple's and xmalloc-test's time.
 * Arena: at its first allocation a thread is given the arena with the
 * fewest live threads (the first thread gets arena 0); its refills and
 * large runs come from that arena, and its flushes to the slabs go to that
 * arena's lists (other arenas' blocks onto their remote lists, central.c).
 * Thread exit: a pthread key destructor releases the arena slot, hands
 * every bin to the transfer stacks (to the slabs when one worker at a
 * time ends beside the main thread, tc_exit) and marks the cache DEAD; a
 * dead thread's later calls go straight to central.c, still in its arena.
 * Live caches are on a registry so stats can count cached blocks; counts
 * are read with relaxed atomics (the owner writes them the same way). */
#include "internal.h"

__thread ebb_tcache_t _ebb_tc __attribute__((tls_model("initial-exec")));

#define BIN_MAX_COUNT 256
/* A thread's first refill of a class takes SLOW_START blocks, the next
 * ones more (refill_want), up to max/2: a program touching 60 classes once
 * (espresso) was handed half a bin of each, about 0.5 MiB of blocks it
 * never used and 1 MiB more peak RSS than glibc. */
#define SLOW_START 4
/* ...but never more than SLOW_START_BYTES of blocks (at least one): the
 * first refill of the 15 KiB class touched 15 pages for a thread that may
 * hold one such block at a time (glibc-thread's threads hold about four
 * blocks above 1 KiB at once, spread over 40 classes); 4 KiB here still
 * gave each of them 4 blocks of every class of 512 B .. 1 KiB, where it
 * has one or two live. */
#define SLOW_START_BYTES ((size_t)1024)
static uint16_t slow_start(unsigned c) {
    size_t n = SLOW_START_BYTES / _ebb_class_size[c];
    if (n < 1)
        n = 1;
    return (uint16_t)(n > SLOW_START ? SLOW_START : n);
}

static uint32_t bin_max[EBB_NCLASSES];
static uint16_t bin_ceiling[EBB_NCLASSES]; /* most a bin's max grows to */

/* Growth (bin_grow): a class whose free sent a full spare away and whose
 * next malloc then found both lists empty cycles through more blocks than
 * its two lists hold; each such round trip doubles the class's max for
 * this thread, up to GROW_CLASS_BYTES in its two lists, and all classes
 * together grow by at most tcache_bytes / GROW_SHARE.  glibc-simple
 * (1,600 blocks of 16, then 32, then 64 bytes allocated and freed, over
 * and over) sent 11-25 batches per cycle through the transfer stack,
 * 6% of its time in the hint walk, the pushes and the pops (tcmalloc
 * grows its lists the same way); with growth, 70 batches in the whole
 * run instead of 409k.  What a grown bin holds the program had live at
 * once, so it raises the peak little: 1.67 -> 1.72 MiB on glibc-simple,
 * nothing measurable on the threaded programs. */
#define GROW_CLASS_BYTES ((size_t)131072)
#define GROW_SHARE 2
static pthread_key_t tc_key;
static ebb_lock_t reg_lock = EBB_LOCK_INIT;
static ebb_tcache_t *reg_head;
static uint32_t arena_threads[EBB_MAX_ARENAS]; /* live threads per arena */
static uint32_t live_threads, live_peak;       /* all arenas; the most at once */

static void tc_exit(void *arg);

/* The least a bin of a class above 128 bytes holds (unless caches are
 * off): room for two refills of BATCH_FLOOR bytes, at least 4 blocks and
 * at most 2 x BATCH_MAX.  Classes of 144 B .. 1 KiB were left 8-32
 * blocks by the budget, so larson (8..1000 bytes) moved batches of 4-16
 * blocks through the transfer stacks, one every 65 operations (2M in 5 s
 * at 2 threads, 8% of its time in push, pop and the flush walk); the
 * floor makes them 28-32 (tcmalloc moves up to 32 per transfer too).  The byte
 * budget alone gave the classes above 4 KiB one block or none (512 KiB
 * shared by 72 classes, halved from the largest), so every malloc and free
 * of such a block took the class lock, the one-block slabs of 12-16 KiB
 * the page lock too, and with fewer than 4 the class had no transfer stack:
 * rptest (8..16000 bytes) spent as much CPU in central.c as in its own
 * loop.  Tried on rptest, larson and xmalloc-test at 4 threads: a floor on
 * every class (up to 256 blocks) bought nothing over this one and costs
 * twice the bound.
 * Above 1 KiB the batch is BATCH_FLOOR_BIG (4 KiB, still at least 2
 * blocks, so 4 to 6 per bin): every bin wanders between empty and full
 * as its thread allocates and frees, so it holds about half its bound on
 * average, and with 16 KiB batches the 1-16 KiB classes held 32-64 KiB
 * each per thread.  glibc-thread (blocks of 4 B .. 32 KiB, 1,024 live per
 * thread) had 1.7-2.2 MiB in caches at its peak RSS with 8 threads; with
 * 4 KiB batches above 1 KiB its peak fell 2.83 -> 2.56 MiB (2 threads)
 * and 4.65 -> 4.11 MiB (8), at the same iterations per CPU second;
 * rptest's transfer batches rose 22k -> 41k in a run, its class-lock
 * acquisitions 1.8k -> 2.4k in the run, and larson (up to
 * 1,000 bytes) is not touched.  The floors sum to 1.28 MiB (1.61 with
 * 16 KiB batches throughout), held only in classes the thread frees that
 * much of. */
#define BATCH_FLOOR ((size_t)16384)
#define BATCH_FLOOR_BIG ((size_t)4096)
#define BATCH_MAX 32
static uint32_t bin_floor(unsigned c) {
    size_t size = _ebb_class_size[c];
    size_t batch = (size <= 1024 ? BATCH_FLOOR : BATCH_FLOOR_BIG) / size;
    if (size <= 128)
        return 0;
    batch = batch < 2 ? 2 : batch > BATCH_MAX ? BATCH_MAX
                                              : batch;
    return (uint32_t)(2 * batch);
}

/* Choose max[] under the byte budget: start from budget/8 bytes per class
 * (capped at 256 blocks), then halve the largest contributor until the
 * total fits; then raise each bin to its floor (bin_floor), and round it
 * down to even. */
void _ebb_tcache_global_init(void) {
    size_t budget = _ebb_conf.tcache_bytes, total = 0;
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        size_t m = budget / 8 / _ebb_class_size[c];
        bin_max[c] = (uint32_t)(m > BIN_MAX_COUNT ? BIN_MAX_COUNT : m);
        total += (size_t)bin_max[c] * _ebb_class_size[c];
    }
    while (total > budget) {
        unsigned big = 0;
        for (unsigned c = 1; c < EBB_NCLASSES; c++)
            if ((size_t)bin_max[c] * _ebb_class_size[c] >
                (size_t)bin_max[big] * _ebb_class_size[big])
                big = c;
        uint32_t half = bin_max[big] / 2;
        total -= (size_t)(bin_max[big] - half) * _ebb_class_size[big];
        bin_max[big] = half;
    }
    if (budget > 0)
        for (unsigned c = 0; c < EBB_NCLASSES; c++)
            if (bin_max[c] < bin_floor(c))
                bin_max[c] = bin_floor(c);
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        bin_max[c] &= ~1u; /* two lists of max/2 */
        size_t ceil = GROW_CLASS_BYTES / 2 / _ebb_class_size[c];
        bin_ceiling[c] = (uint16_t)(ceil > bin_max[c] / 2 ? ceil : bin_max[c] / 2);
        _ebb_xfer_init(c, bin_max[c]);
    }
    pthread_key_create(&tc_key, tc_exit);
}

/* The arena with the fewest live threads, lowest index first (reg_lock
 * held). */
static uint32_t arena_pick(void) {
    uint32_t best = 0;
    for (uint32_t a = 1; a < _ebb_narenas; a++)
        if (arena_threads[a] < arena_threads[best])
            best = a;
    return best;
}

/* Registers tc and gives it its arena. */
static void tc_register(ebb_tcache_t *tc) {
    ebb_lock(&reg_lock);
    tc->arena = arena_pick();
    arena_threads[tc->arena]++;
    if (++live_threads > live_peak)
        live_peak = live_threads;
    tc->reg_prev = NULL;
    tc->reg_next = reg_head;
    if (reg_head) reg_head->reg_prev = tc;
    reg_head = tc;
    ebb_unlock(&reg_lock);
}

/* Takes tc off the registry; true if its cache should go onto the
 * transfer stacks (tc_exit). */
static bool tc_unregister(ebb_tcache_t *tc) {
    ebb_lock(&reg_lock);
    ebb_assert_internal(arena_threads[tc->arena] > 0 && live_threads > 0);
    arena_threads[tc->arena]--;
    live_threads--;
    if (tc->reg_prev) tc->reg_prev->reg_next = tc->reg_next;
    else reg_head = tc->reg_next;
    if (tc->reg_next) tc->reg_next->reg_prev = tc->reg_prev;
    bool to_xfer = live_threads > 1 || live_peak > 2;
    ebb_unlock(&reg_lock);
    return to_xfer;
}

/* First use on this thread.  LIVE is set before pthread_setspecific,
 * which may itself call malloc. */
static void tc_start(ebb_tcache_t *tc) {
    ebb_ensure_init();
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        tc->bins[c].max = (uint16_t)(bin_max[c] / 2);
    }
    size_t grow = _ebb_conf.tcache_bytes / GROW_SHARE;
    tc->grow_left = (uint32_t)(grow > UINT32_MAX ? UINT32_MAX : grow);
    tc->state = EBB_TC_LIVE;
    tc_register(tc);
    pthread_setspecific(tc_key, tc);
}

/* Prefetch hints (ebb_tbin_pop): word 1 of each block of a batch bound
 * for a transfer stack names the block HINT_AHEAD further on.  The
 * freeing thread writes them while the blocks are still in its cache; the
 * thread that pops the batch then loads each block's word 0 from a line
 * already on its way (xmalloc-test: a producer's malloc waited on that
 * load for each block, whose order after many hand-overs is random).
 * Only batches carry hints, and a bin counts how many of its first blocks
 * have them: word 1 of any other free block is the program's old data. */
#define HINT_AHEAD 8

static void hint_batch(void *first) {
    void *ring[HINT_AHEAD];
    uint32_t i = 0;
    for (void *q = first; q != NULL; q = *(void **)q, i++) {
        if (i >= HINT_AHEAD)
            ((void **)ring[i % HINT_AHEAD])[1] = q;
        ring[i % HINT_AHEAD] = q;
    }
}

/* Send list (n blocks of class cls) away: as one batch onto the class's
 * transfer stack (xfer.c) when to_xfer and it has room, else back to
 * their slabs (central.c). */
static void list_send(unsigned cls, void *list, uint32_t n, bool to_xfer) {
    if (n == 0)
        return;
    uint16_t *held = &_ebb_tc.bins[cls].held;
    *held = *held > n ? (uint16_t)(*held - n) : 0;
    if (to_xfer && cls != 0)
        hint_batch(list);
    if (!to_xfer || !_ebb_xfer_push(cls, list, n))
        _ebb_central_give(_ebb_tc.arena, cls, list, n);
}

/* Empty both lists of class cls (list_send). */
static void bin_flush(ebb_tcache_t *tc, unsigned cls, bool to_xfer) {
    ebb_tbin_t *b = &tc->bins[cls];
    void *head = b->head, *spare = tc->spare[cls];
    uint32_t n = b->count, sn = tc->spare_n[cls];
    b->head = NULL;
    b->hinted = 0;
    __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
    tc->spare[cls] = NULL;
    __atomic_store_n(&tc->spare_n[cls], 0, __ATOMIC_RELAXED);
    list_send(cls, head, n, to_xfer);
    list_send(cls, spare, sn, to_xfer);
}

/* Thread exit: the bins go onto the transfer stacks as whole batches
 * (to the slabs when a stack is full or the class has none), where the
 * next thread's refills find them without a lock.  It used to flush to
 * the slabs and drain every stack: larson, which replaces its threads all
 * the time, then refilled from the slabs under the class locks after each
 * exit.  What no thread takes is drained into the slabs by the next purge
 * tick (at most decay_ms / 10 later, 1 s by default), so empty slabs and
 * idle memory still go back.
 * Except in a program that has never had more than two threads at once
 * (one worker at a time beside the main thread), when at most one thread
 * remains: the stacks would then serve only that thread, which has bins
 * of its own for the classes it uses, so the bins go straight to their
 * slabs, whose emptied pages the next slab of any class can reuse.
 * glibc-simple's worker (16-byte blocks, then 32, then 64) left each
 * size's blocks on a stack that nothing popped, and its successor cut
 * new pages for the next size.  This cut its peak RSS by 50-130 KiB
 * (medians of four A/B sets of 20-30 runs, e.g. 1,884 -> 1,752 KiB) at
 * the same CPU; draining every transfer stack at such an exit as well
 * saved nothing more.  larson and xmalloc-test run two workers or more
 * beside the main thread, so their exits still feed the stacks, whatever
 * the number of arenas.  The count of live threads alone was not enough:
 * a larson worker that ended while the other one was between its own
 * exit and its successor's first call saw one live thread, and 1-1.5k
 * more class-lock acquisitions per run showed it. */
static void tc_exit(void *arg) {
    ebb_tcache_t *tc = arg;
    bool to_xfer = tc_unregister(tc);
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        tc->bins[c].max = 0;
        bin_flush(tc, c, to_xfer);
    }
    tc->state = EBB_TC_DEAD;
}

/* Double bin cls's max (see GROW_CLASS_BYTES), within its ceiling and
 * the thread's growth budget. */
static void bin_grow(ebb_tcache_t *tc, unsigned cls) {
    ebb_tbin_t *b = &tc->bins[cls];
    uint32_t to = (uint32_t)b->max * 2;
    if (to > bin_ceiling[cls])
        to = bin_ceiling[cls];
    if (to <= b->max)
        return;
    size_t cost = (size_t)(to - b->max) * 2 * _ebb_class_size[cls];
    if (cost > tc->grow_left)
        return;
    tc->grow_left -= (uint32_t)cost;
    b->max = (uint16_t)to;
}

/* How many blocks a refill of class cls from the slabs asks for: a
 * whole list (max) once the class has cycled (a full spare went away:
 * the thread goes through more blocks than its two lists hold), before
 * that half of what the thread holds out of the class, at least the slow
 * start.  So a thread whose use of a class peaks at k blocks takes at
 * most 1.5 k (plus a slow start) of it, where a slow start doubling each
 * refill took up to 2 k: glibc-thread's threads (a thousand blocks over
 * 60 classes, a few live per class) took 4 then 8 blocks of most classes
 * and kept all 12 in their caches, 1.7 MiB of caches against 0.4 MiB
 * live at 8 threads.  held says nothing about a thread that frees what
 * others allocated (larson, xmalloc-test); such threads cycle, and are
 * served whole lists. */
static uint32_t refill_want(ebb_tcache_t *tc, unsigned cls) {
    ebb_tbin_t *b = &tc->bins[cls];
    if (tc->sent[cls] & EBB_TC_CYCLED)
        return b->max;
    uint32_t want = b->held / 2u, least = slow_start(cls);
    if (want < least)
        want = least;
    return want < b->max ? want : b->max;
}

/* Fill bin cls, empty, from the spare, else a batch waiting on the
 * transfer stack, else the slabs; false when out of memory. */
static bool bin_refill(ebb_tcache_t *tc, unsigned cls) {
    ebb_tbin_t *b = &tc->bins[cls];
    uint32_t got;
    if (tc->spare[cls] != NULL) {
        b->head = tc->spare[cls];
        got = tc->spare_n[cls];
        tc->spare[cls] = NULL;
        __atomic_store_n(&tc->spare_n[cls], 0, __ATOMIC_RELAXED);
        b->hinted = 0;
        __atomic_store_n(&b->count, got, __ATOMIC_RELAXED);
        return true;
    }
    if (tc->sent[cls] & EBB_TC_SENT) {
        tc->sent[cls] &= (uint8_t)~EBB_TC_SENT;
        bin_grow(tc, cls);
    }
    uint32_t want = refill_want(tc, cls);
    /* a waiting batch first, whatever waits on remote lists: those
     * are collected (central.c) when the stack runs dry, or by the
     * purge tick.  Collecting first whenever a refill's worth waited
     * there fed itself: in a producer/consumer pair the producer left
     * the stack full, so the consumer's next batches were refused and
     * went to the remote lists too (xmalloc-test, 2 threads: 900k
     * refused, 750k pushed in 5 s; 40% of the time in collect_remote,
     * slab_take, central_take and central_give) */
    got = _ebb_xfer_pop(cls, &b->head);
    /* a batch's first block holds the stack's link in word 1, not a
     * hint; it is the one returned first */
    b->hinted = got > HINT_AHEAD + 1 ? (uint16_t)(got - HINT_AHEAD - 1) : 0;
    if (got == 0)
        got = _ebb_central_take(tc->arena, cls, want, &b->head);
    uint32_t held = b->held + got;
    b->held = (uint16_t)(held < UINT16_MAX ? held : UINT16_MAX);
    __atomic_store_n(&b->count, got, __ATOMIC_RELAXED);
    return got != 0;
}

/* A block of class cls after a fast-path miss; NULL when out of memory. */
void *_ebb_tcache_alloc_slow(unsigned cls) {
    ebb_tcache_t *tc = &_ebb_tc;
    if (tc->state == EBB_TC_NEW)
        tc_start(tc);
    ebb_tbin_t *b = &tc->bins[cls];
    if (b->head == NULL) {
        if (tc->state == EBB_TC_DEAD || b->max == 0) {
            void *one = NULL;
            return _ebb_central_take(tc->arena, cls, 1, &one) ? one : NULL;
        }
        if (!bin_refill(tc, cls))
            return NULL;
    }
    void *p = b->head;
    b->head = *(void **)p;
    __atomic_store_n(&b->count, b->count - 1, __ATOMIC_RELAXED);
    return p;
}

/* Free of a small block after a fast-path miss (bin full, or no cache). */
void _ebb_tcache_free_slow(void *ptr, unsigned cls) {
    ebb_tcache_t *tc = &_ebb_tc;
    if (tc->state == EBB_TC_NEW)
        tc_start(tc);
    ebb_tbin_t *b = &tc->bins[cls];
    if (tc->state == EBB_TC_DEAD || b->max == 0) {
        *(void **)ptr = NULL;
        _ebb_central_give(tc->arena, cls, ptr, 1);
        return;
    }
    if (b->count >= b->max) {
        if (tc->spare[cls] != NULL)
            tc->sent[cls] = EBB_TC_SENT | EBB_TC_CYCLED;
        list_send(cls, tc->spare[cls], tc->spare_n[cls], true);
        tc->spare[cls] = b->head;
        __atomic_store_n(&tc->spare_n[cls], b->count, __ATOMIC_RELAXED);
        b->head = NULL;
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
    }
    *(void **)ptr = b->head;
    b->head = ptr;
    b->hinted = 0;
    __atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELAXED);
}

unsigned _ebb_tcache_arena(void) {
    ebb_tcache_t *tc = &_ebb_tc;
    if (tc->state == EBB_TC_NEW)
        tc_start(tc);
    return tc->arena;
}

void _ebb_tcache_flush_self(void) {
    ebb_tcache_t *tc = &_ebb_tc;
    for (unsigned c = 0; c < EBB_NCLASSES; c++)
        bin_flush(tc, c, false);
}

/* Blocks of class cls sitting in all live caches (a racy snapshot). */
size_t _ebb_tcache_cached(unsigned cls) {
    size_t n = 0;
    ebb_lock(&reg_lock);
    for (ebb_tcache_t *tc = reg_head; tc; tc = tc->reg_next)
        n += __atomic_load_n(&tc->bins[cls].count, __ATOMIC_RELAXED) +
             __atomic_load_n(&tc->spare_n[cls], __ATOMIC_RELAXED);
    ebb_unlock(&reg_lock);
    return n;
}

void _ebb_tcache_lock_counts(uint64_t *acquired, uint64_t *contended) {
    *acquired = __atomic_load_n(&reg_lock.acquired, __ATOMIC_RELAXED);
    *contended = __atomic_load_n(&reg_lock.contended, __ATOMIC_RELAXED);
}

void _ebb_tcache_lock_all(void) {
    ebb_lock(&reg_lock);
}

/* In a fork child only the forking thread survives: the registry keeps
 * just its cache.  Blocks cached by the vanished threads are lost to the
 * child, bounded by tcache_bytes per thread. */
void _ebb_tcache_unlock_all(int reinit) {
    if (!reinit) {
        ebb_unlock(&reg_lock);
        return;
    }
    ebb_lock_reinit(&reg_lock);
    reg_head = NULL;
    for (unsigned a = 0; a < EBB_MAX_ARENAS; a++)
        arena_threads[a] = 0;
    live_threads = 0;
    if (_ebb_tc.state == EBB_TC_LIVE) {
        uint32_t keep = _ebb_tc.arena; /* its cache holds that arena's blocks */
        tc_register(&_ebb_tc);
        arena_threads[_ebb_tc.arena]--;
        _ebb_tc.arena = keep;
        arena_threads[keep]++;
    }
}
