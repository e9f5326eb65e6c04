/* stats.c: ebb_stats_get() and the human report ebb_stats_print().
 * Numbers are gathered from each layer's own counters (page.c, central.c,
 * tcache.c, huge.c) one lock at a time, so with other threads running they
 * are a near-simultaneous snapshot, exact when the program is quiet.
 *   allocated = sum over classes (blocks out of slabs - blocks in thread
 *               caches, on transfer stacks and on remote lists) * class
 *               size + large run bytes (but the runs cached by
 *               runcache.c) + huge usable bytes
 *   active    = slab pages (but the empty slabs central.c keeps for
 *               reuse) + large run bytes (but the cached runs) + huge
 *               mapped bytes (but the cached huge mappings)
 *   dirty     = free pages still resident: page.c's dirty spans, the
 *               kept empty slabs, the cached large runs and the cached
 *               huge mappings (free memory, like jemalloc's dirty pages)
 *   tcache    = bytes in thread caches, on transfer stacks and on remote
 *               lists (freed, not yet back in their slabs), cached
 *               large runs and cached huge mappings
 *   retained  = free pages returned to the OS or never touched, plus
 *               header pages not yet touched (metadata counts the others)
 *   resident  = mapped - retained.
 * The report also gives each lock's acquisitions and contended
 * acquisitions (internal.h, ebb_lock_t): where threads wait.
 * The report is formatted into a stack buffer and never allocates. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void ebb_stats_get(ebb_stats_t *out) {
    ebb_ensure_init();
    ebb_page_stats_t ps;
    size_t huge_mapped, huge_usable, huge_cached, small = 0, cached = 0, kept = 0;
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        ebb_central_stats_t cs;
        _ebb_central_stats(c, &cs);
        kept += cs.nempty * _ebb_class_pages[c] * EBB_PAGE;
        size_t inc = _ebb_tcache_cached(c) + _ebb_xfer_pending(c) + cs.remote;
        small += (cs.used - (inc < cs.used ? inc : cs.used)) * _ebb_class_size[c];
        cached += inc * _ebb_class_size[c];
    }
    _ebb_page_stats(&ps);
    _ebb_huge_stats(&huge_mapped, &huge_usable, &huge_cached);
    if (huge_cached > huge_mapped) /* racy snapshot */
        huge_cached = huge_mapped;
    memset(out, 0, sizeof(*out));
    size_t runs = _ebb_runcache_bytes();
    if (runs > ps.large) /* racy snapshot */
        runs = ps.large;
    out->allocated = small + ps.large - runs + huge_usable;
    if (kept > ps.slab_pages) /* racy snapshot */
        kept = ps.slab_pages;
    out->active = ps.slab_pages - kept + ps.large - runs + huge_mapped -
                  huge_cached;
    out->mapped = ps.mapped + huge_mapped;
    out->retained = ps.retained +
                    (ps.nchunks * EBB_HDR_PAGES * EBB_PAGE - ps.metadata);
    out->resident = out->mapped - out->retained;
    out->metadata = ps.metadata;
    out->dirty = ps.dirty + kept + runs + huge_cached;
    out->tcache = cached + runs + huge_cached;
}

typedef void (*out_fn)(void *arg, const char *text);

static void emitf(out_fn out, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void emitf(out_fn out, void *arg, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    out(arg, buf);
}

void ebb_stats_print(void (*out)(void *arg, const char *text), void *arg) {
    ebb_stats_t s;
    ebb_stats_get(&s);
    ebb_page_stats_t ps;
    _ebb_page_stats(&ps);
    char conf[256];
    _ebb_conf_describe(conf, sizeof(conf));
    emitf(out, arg, "___ ebbmalloc %s statistics ___\n", EBBMALLOC_VERSION);
    emitf(out, arg, "settings: %s\n", conf);
    emitf(out, arg,
          "allocated: %zu\nactive: %zu\nresident: %zu\nmapped: %zu\n"
          "retained: %zu\nmetadata: %zu\ndirty: %zu\ntcache: %zu\n"
          "chunks: %zu\nlarge: %zu\n",
          s.allocated, s.active, s.resident, s.mapped, s.retained,
          s.metadata, s.dirty, s.tcache, ps.nchunks, ps.large);
    emitf(out, arg, "frag ratio (active/allocated): %.3f\n",
          s.allocated ? (double)s.active / (double)s.allocated : 0.0);
    uint64_t acq, cont, class_acq = 0, class_cont = 0;
    _ebb_page_lock_counts(&acq, &cont);
    emitf(out, arg, "arenas: %u\n", _ebb_narenas);
    emitf(out, arg, "lock page (all arenas): %llu acquired, %llu contended\n",
          (unsigned long long)acq, (unsigned long long)cont);
    _ebb_tcache_lock_counts(&acq, &cont);
    emitf(out, arg, "lock thread registry: %llu acquired, %llu contended\n",
          (unsigned long long)acq, (unsigned long long)cont);
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        ebb_central_stats_t cs;
        _ebb_central_stats(c, &cs);
        class_acq += cs.lock_acquired;
        class_cont += cs.lock_contended;
    }
    emitf(out, arg, "lock classes (all arenas): %llu acquired, %llu contended\n",
          (unsigned long long)class_acq, (unsigned long long)class_cont);
    uint64_t nremote = 0;
    size_t remote = 0;
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        ebb_central_stats_t cs;
        _ebb_central_stats(c, &cs);
        nremote += cs.nremote;
        remote += cs.remote;
    }
    emitf(out, arg, "remote frees (no lock): %llu runs pushed, %zu blocks "
                    "waiting\n",
          (unsigned long long)nremote, remote);
    uint64_t xc[3];
    _ebb_xfer_counts(xc);
    size_t pend = 0;
    for (unsigned c = 0; c < EBB_NCLASSES; c++)
        pend += _ebb_xfer_pending(c);
    emitf(out, arg, "transfer stacks: %zu blocks waiting\n", pend);
    emitf(out, arg, "transfer batches (no lock): %llu pushed, %llu popped, "
                    "%llu refused (stack full)\n",
          (unsigned long long)xc[0],
          (unsigned long long)xc[1], (unsigned long long)xc[2]);
    uint64_t rc[3];
    _ebb_runcache_counts(rc);
    emitf(out, arg, "large runs cached (no lock): %llu pushed, %llu popped, "
                    "%llu refused, %zu bytes waiting\n",
          (unsigned long long)rc[0], (unsigned long long)rc[1],
          (unsigned long long)rc[2], _ebb_runcache_bytes());
    uint64_t hc[2];
    size_t hm, hu, hcached;
    _ebb_huge_counts(hc);
    _ebb_huge_stats(&hm, &hu, &hcached);
    emitf(out, arg, "huge mappings: %llu freed, %llu reused from the cache, "
                    "%zu bytes cached\n",
          (unsigned long long)hc[0], (unsigned long long)hc[1], hcached);
    emitf(out, arg, "%6s %5s %8s %10s %10s %9s %6s %10s %10s %10s %10s\n",
          "size", "pages", "slabs", "used", "cap", "cached", "util%",
          "refills", "flushes", "locks", "lockwaits");
    for (unsigned c = 0; c < EBB_NCLASSES; c++) {
        ebb_central_stats_t cs;
        _ebb_central_stats(c, &cs);
        if (cs.nslabs == 0 && cs.nrefills == 0)
            continue;
        size_t inc = _ebb_tcache_cached(c);
        emitf(out, arg,
              "%6u %5u %8zu %10zu %10zu %9zu %6.1f %10llu %10llu %10llu %10llu\n",
              (unsigned)_ebb_class_size[c], (unsigned)_ebb_class_pages[c],
              cs.nslabs, cs.used, cs.cap, inc,
              cs.cap ? 100.0 * (double)cs.used / (double)cs.cap : 0.0,
              (unsigned long long)cs.nrefills,
              (unsigned long long)cs.nflushes,
              (unsigned long long)cs.lock_acquired,
              (unsigned long long)cs.lock_contended);
    }
    emitf(out, arg, "___ end of ebbmalloc statistics ___\n");
}
