/* alloc_advice.c: MEMORY ALLOCATOR-ADVICE and MEMORY SIZES.
 *
 * The live size histogram that zmalloc keeps (lib/sizehist.h), run through
 * the size-class model of every allocator the project supports
 * (lib/alloc_classes.h), answers "what would each allocator need for the
 * blocks this server holds right now":
 *
 *   used_memory  sum of the usable sizes (what INFO's used_memory would be)
 *   active       bytes of the allocator's pages those blocks take
 *                (allocator_active; glibc: allocator_allocated, the chunk
 *                sizes, since it has no page figure), plus half a slab per
 *                size class in use (the slab being filled)
 *   metadata     the allocator's bookkeeping outside those pages
 *   predicted    active + metadata; waste = predicted - requested bytes
 * followed by this build's measured used_memory and active bytes, so the
 * prediction for the running allocator can be checked on the spot.
 *
 * It is a prediction for a heap holding exactly these blocks, packed as a
 * fill packs them.  Memory an allocator keeps after deletes (partly empty
 * slabs, free pages not yet returned) depends on the order of allocations
 * and frees, not on the sizes, and is not predicted: the reply says so, and
 * utils/tools/allocator-shootout --replay measures it.
 * Called through the MEMORY container's table in memory.c; allocates only
 * the reply and one histogram copy. */
#include "alloc_advice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc_classes.h"
#include "reply.h"
#include "sizehist.h"

/* The usable size of this build's allocator, for matching requests with the
 * live table.  A build without a model (sanitizers) counts as glibc. */
static ac_id_t current_model(void) {
    ac_id_t a = ac_current(RL_MALLOC_NAME);
    return a == AC_COUNT ? AC_LIBC : a;
}

static size_t current_usable(size_t req) { return ac_usable(current_model(), req); }

/* Whether class `usable` is in seen[]; adds it if not (and there is room). */
static bool class_seen(size_t *seen, size_t *n, size_t cap, size_t usable) {
    for (size_t i = 0; i < *n; i++)
        if (seen[i] == usable) return true;
    if (*n < cap) seen[(*n)++] = usable;
    return false;
}

void alloc_advice_compute(alloc_advice_t *adv) {
    sizehist_t *h = zmalloc(sizeof(*h));
    size_t cap = SH_NBUCKETS * 2;
    sizehist_group_t *g = zmalloc(cap * sizeof(*g));
    sizehist_read(h);
    size_t n = sizehist_live_requests(h, current_usable, g, cap);
    memset(adv, 0, sizeof(*adv));
    for (size_t i = 0; i < n; i++) {
        adv->blocks += g[i].count;
        adv->requested += g[i].count * (double)g[i].req;
    }
    for (int a = 0; a < AC_COUNT; a++) {
        alloc_prediction_t *p = &adv->pred[a];
        size_t seen[256], nseen = 0; /* slab classes in use (by usable size) */
        p->id = a;
        for (size_t i = 0; i < n; i++) {
            ac_block_t b;
            ac_block(a, g[i].req, &b);
            p->usable += g[i].count * (double)b.usable;
            p->active += g[i].count * b.active;
            p->metadata += g[i].count * b.metadata;
            if (b.slab && g[i].count >= 0.5 && !class_seen(seen, &nseen, 256, b.usable))
                p->active += AC_PARTIAL_SLABS_PER_CLASS * (double)b.slab;
        }
        p->predicted = p->active + p->metadata;
    }
    adv->current = current_model();
    zfree(g);
    zfree(h);
}

static int by_predicted(const void *a, const void *b) {
    const alloc_prediction_t *x = a, *y = b;
    return (x->predicted > y->predicted) - (x->predicted < y->predicted);
}

static double pct(double part, double whole) { return whole > 0 ? part * 100 / whole : 0; }

/* One line per allocator, ranked, then the advice.  Every figure is a
 * plain integer after its name so a tool can split the lines on spaces. */
static sds advice_text(const alloc_advice_t *adv) {
    alloc_prediction_t ranked[AC_COUNT];
    memcpy(ranked, adv->pred, sizeof(ranked));
    qsort(ranked, AC_COUNT, sizeof(ranked[0]), by_predicted);
    sds s = sds_empty();
    for (int i = 0; i < AC_COUNT; i++) {
        const alloc_prediction_t *p = &ranked[i];
        double waste = p->predicted - adv->requested;
        s = sds_catprintf(s, "%s %.0f waste %.0f (%.1f%%) used_memory %.0f active %.0f metadata %.0f\n",
                          ac_name(p->id), p->predicted, waste, pct(waste, adv->requested),
                          p->usable, p->active, p->metadata);
    }
    const alloc_prediction_t *best = &ranked[0], *worst = &ranked[AC_COUNT - 1];
    const alloc_prediction_t *cur = &adv->pred[adv->current];
    s = sds_catprintf(s, "requested %.0f blocks %.0f (live allocations of this server)\n", adv->requested, adv->blocks);
    /* This build's own figures, read now (glibc's walk of its heap is
     * acceptable on request), to hold the prediction against. */
    zmalloc_stats_t st;
    zmalloc_get_allocator_stats(&st);
    s = sds_catprintf(s, "measured %s used_memory %zu active %zu\n", zmalloc_lib(), zmalloc_used_memory(),
                      adv->current == AC_LIBC ? st.allocated : st.active);
    if (best->id == cur->id || cur->predicted - best->predicted < cur->predicted * 0.01) {
        s = sds_catprintf(s, "advice: keep %s: it is within 1%% of the best fit for these allocation sizes "
                             "(%s needs %.1f%% more than the best)\n",
                          ac_name(cur->id), ac_name(worst->id), pct(worst->predicted - best->predicted, best->predicted));
    } else {
        s = sds_catprintf(s, "advice: %s fits these allocation sizes best: %.0f bytes, %.1f%% less than this "
                             "build's %s; build with make MALLOC=%s\n",
                          ac_name(best->id), best->predicted, pct(cur->predicted - best->predicted, cur->predicted),
                          ac_name(cur->id), best->id == AC_JEMALLOC_Q8 ? "jemalloc (configured --with-lg-quantum=3)" : ac_name(best->id));
    }
    s = sds_cat(s, "note: fragmentation from churn (deletes and overwrites leaving partly empty pages) is not "
                   "predicted, only the fit of the sizes; measure it with utils/tools/allocator-shootout --replay\n");
    return s;
}

void cmd_memory_allocator_advice(client_t *c) {
    alloc_advice_t adv;
    alloc_advice_compute(&adv);
    sds s = advice_text(&adv);
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* MEMORY SIZES [REQUESTED]: the histogram, one [max-size, blocks, bytes]
 * triple per non-empty bucket.  By default the live blocks by usable size
 * on this build (exact); REQUESTED splits them by the size asked for, the
 * estimate the advice works from (blocks then may be fractions: rounded). */
void cmd_memory_sizes(client_t *c) {
    bool requested = false;
    if (c->argc == 3 && !strcasecmp(c->argv[2]->ptr, "requested")) {
        requested = true;
    } else if (c->argc != 2) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    sizehist_t *h = zmalloc(sizeof(*h));
    sizehist_read(h);
    void *slot = reply_deferred_len(c);
    long n = 0;
    if (requested) {
        size_t cap = SH_NBUCKETS * 2;
        sizehist_group_t *g = zmalloc(cap * sizeof(*g));
        size_t ng = sizehist_live_requests(h, current_usable, g, cap);
        for (size_t i = 0; i < ng; i++) {
            long long blocks = (long long)(g[i].count + 0.5);
            if (!blocks) continue;
            reply_array_len(c, 3);
            reply_ll(c, (long long)g[i].req);
            reply_ll(c, blocks);
            reply_ll(c, (long long)(g[i].count * (double)g[i].req + 0.5));
            n++;
        }
        zfree(g);
    } else {
        for (unsigned b = 0; b < SH_NBUCKETS; b++) {
            if ((int64_t)h->live_count[b] <= 0) continue;
            reply_array_len(c, 3);
            reply_ll(c, b == SH_NBUCKETS - 1 ? -1 : (long long)sizehist_bucket_upper(b));
            reply_ll(c, (long long)h->live_count[b]);
            reply_ll(c, (long long)h->live_bytes[b]);
            n++;
        }
    }
    reply_set_deferred_array_len(c, slot, n);
    zfree(h);
}
