/* memory.c: memory accounting figures and the MEMORY command.
 *
 * Ratios follow Redis's definitions:
 *   allocator_frag_ratio = allocator_active / allocator_allocated
 *   allocator_rss_ratio  = allocator_resident / allocator_active
 *   rss_overhead_ratio   = rss / allocator_resident
 *   mem_fragmentation_ratio = (rss - mem_io_buffers) / used_memory (all
 *   from the same cron sample, so a burst of allocation between two
 *   samples cannot skew it).  mem_io_buffers, the io_uring engine's
 *   receive buffers and rings, is memory of its own: mmap()ed outside
 *   the allocator, sized by the network load and given back when idle,
 *   so neither used_memory (it would count against maxmemory and evict
 *   keys for a pipelined burst) nor the allocator's fragmentation.  Redis
 *   has no such buffers: its reads land in query buffers, which are in
 *   used_memory; ours land there only for an unfinished request.
 * A ratio whose inputs the allocator does not provide is reported as 0. */
#include "memory.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "alloc_advice.h"
#include "cluster_bus.h"
#include "commands.h"
#include "conn.h"
#include "io_engine.h"
#include "function.h"
#include "keyspace.h"
#include "proc_rss.h"
#include "repl.h"
#include "script.h"
#include "reply.h"
#include "ttl_index.h"
#include "util.h"

static double ratio(size_t num, size_t den) { return (num && den) ? (double)num / (double)den : 0; }
static long long diff(size_t a, size_t b) { return (a && b) ? (long long)a - (long long)b : 0; }

void memory_report(server_t *srv, mem_report_t *r) {
    memset(r, 0, sizeof(*r));
    r->used = zmalloc_used_memory();
    if (r->used > srv->peak_memory) srv->peak_memory = r->used;
    r->peak = srv->peak_memory;
    r->startup = srv->startup_memory;
    r->rss = srv->mem.rss;
    r->alloc = srv->mem.alloc;
    for (client_t *c = srv->clients_head; c; c = c->next)
        r->clients_normal += sds_alloc_size(c->querybuf) + c->reply_bytes + sizeof(*c);
    r->overhead = r->startup + r->clients_normal;
    for (int i = 0; i < srv->dbnum; i++) {
        /* Bucket arrays plus the entries' headers (db_entry.h; keys and
         * values are data): the table handle itself was allocated at
         * start-up and is part of used_memory_startup.  A TTL costs the
         * expire time inside its entry, and a slot of the db's index of
         * keys with a TTL where it keeps one (ttl_index.h). */
        ht *keys = srv->dbs[i].keys;
        size_t m = ht_mem_usage(keys) - zmalloc_size(keys) + ht_size(keys) * sizeof(db_entry_ptr);
        size_t e = db_expires_size(&srv->dbs[i]) * sizeof(int64_t) + ttl_index_mem(&srv->dbs[i]);
        if (i < 64) {
            r->db_overhead_main[i] = m;
            r->db_overhead_expires[i] = e;
        }
        r->overhead += m + e;
        r->keys += db_size(&srv->dbs[i]);
        ht *tables[2] = {keys, ttl_index_table(&srv->dbs[i])};
        for (int t = 0; t < 2; t++) {
            if (!tables[t]) continue;
            r->db_lut += ht_lut_bytes(tables[t]);
            r->db_rehashing += ht_rehashing_bytes(tables[t]);
            r->db_rehashing_count += ht_is_resizing(tables[t]);
        }
    }
    r->dataset = r->used > r->overhead ? r->used - r->overhead : 0;
    size_t net = r->used > r->startup ? r->used - r->startup : 0;
    r->dataset_perc = net ? (double)r->dataset * 100 / (double)net : 0;
    r->peak_perc = r->peak ? (double)r->used * 100 / (double)r->peak : 0;
    r->bytes_per_key = r->keys ? net / r->keys : 0;
    r->allocator_frag_ratio = ratio(r->alloc.active, r->alloc.allocated);
    r->allocator_frag_bytes = diff(r->alloc.active, r->alloc.allocated);
    r->allocator_rss_ratio = ratio(r->alloc.resident, r->alloc.active);
    r->allocator_rss_bytes = diff(r->alloc.resident, r->alloc.active);
    r->rss_overhead_ratio = ratio(r->rss, r->alloc.resident);
    r->rss_overhead_bytes = diff(r->rss, r->alloc.resident);
    r->io_buffers = srv->mem.io_buffers;
    size_t rss_no_io = srv->mem.rss > r->io_buffers ? srv->mem.rss - r->io_buffers : srv->mem.rss;
    r->frag_ratio = ratio(rss_no_io, srv->mem.zmalloc_used);
    r->frag_bytes = diff(rss_no_io, srv->mem.zmalloc_used);
}

/* The allocator's resident pages are its own figure where it has one
 * (ebbmalloc, jemalloc, tcmalloc; capped at the anonymous pages found, as
 * jemalloc's and tcmalloc's may count pages never touched), else (glibc,
 * whose heap is also the heap of every library calling malloc) all the
 * anonymous pages no other part claims.  Lua heaps, the backlog and client
 * buffers are zmalloc'd, so they are shares of the allocator's part. */
void memory_rss_parts(server_t *srv, const mem_report_t *r, mem_rss_parts_t *p) {
    memset(p, 0, sizeof(*p));
    proc_range_t io[4];
    size_t nio = io_engine_ranges(srv, io, 4);
    proc_rss_t pr;
    if (!proc_rss_read(io, nio, &pr)) return;
    p->ok = true;
    p->total = pr.total;
    p->io = pr.io;
    p->stacks = pr.stacks;
    p->code = pr.file;
    p->threads = pr.threads;
    zmalloc_stats_t st = {0};
    if (zmalloc_allocator_stats_cheap()) zmalloc_get_allocator_stats(&st);
    size_t own = st.resident ? st.resident + st.metadata : 0;
    p->allocator = own && own < pr.anon ? own : pr.anon;
    p->other = pr.anon - p->allocator;
    p->lua = scripting_vm_memory(srv) + functions_vm_memory(srv);
    p->replication = repl_backlog_memory(srv) + repl_replica_buffers_memory(srv);
    p->clients = r->clients_normal;
    size_t named = p->lua + p->replication + p->clients;
    p->allocator_rest = p->allocator > named ? p->allocator - named : 0;
    if (named > p->allocator) { /* not resident yet in full: scale down to fit */
        p->lua = p->lua * p->allocator / named;
        p->replication = p->replication * p->allocator / named;
        p->clients = p->allocator - p->lua - p->replication;
    }
}

/* ---------------------------------------------------------------- MEMORY */

static void cmd_memory_usage(client_t *c) {
    long long samples = 5;
    for (int j = 3; j < c->argc; j++) {
        if (!strcasecmp(c->argv[j]->ptr, "samples") && j + 1 < c->argc) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &samples, NULL)) return;
            if (samples < 0) { /* Redis 7.0's answer to a negative count */
                reply_error(c, RL_ERR_SYNTAX);
                return;
            }
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    robj *o = db_lookup_read(c->db, c->argv[2], LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
    if (!o) {
        reply_null(c);
        return;
    }
    db_entry *de = db_find(c->db, c->argv[2]->ptr);
    size_t usage = obj_mem_usage(o, (size_t)samples) + db_entry_mem(de);
    reply_ll(c, (long long)usage);
}

static void reply_kv_ll(client_t *c, const char *k, long long v) {
    reply_bulk_cstr(c, k);
    reply_ll(c, v);
}

static void reply_kv_double(client_t *c, const char *k, double v) {
    reply_bulk_cstr(c, k);
    reply_double(c, v);
}

/* MEMORY STATS: Redis 7.4.1's fields in its order (the db.<n> maps after
 * functions.caches), then ours: the io_uring buffers and where RSS goes
 * (docs/memory.md). */
static void cmd_memory_stats(client_t *c) {
    server_t *srv = c->srv;
    mem_report_t r;
    memory_report(srv, &r);
    void *slot = reply_deferred_len(c);
    long n = 0;
    reply_kv_ll(c, "peak.allocated", (long long)r.peak), n++;
    reply_kv_ll(c, "total.allocated", (long long)r.used), n++;
    reply_kv_ll(c, "startup.allocated", (long long)r.startup), n++;
    reply_kv_ll(c, "replication.backlog", (long long)repl_backlog_memory(srv)), n++;
    reply_kv_ll(c, "clients.slaves", (long long)repl_replica_buffers_memory(srv)), n++;
    reply_kv_ll(c, "clients.normal", (long long)r.clients_normal), n++;
    reply_kv_ll(c, "cluster.links", (long long)cluster_bus_links_memory(srv)), n++;
    reply_kv_ll(c, "aof.buffer", 0), n++;
    reply_kv_ll(c, "lua.caches", (long long)scripting_cache_memory(srv)), n++;
    reply_kv_ll(c, "functions.caches", (long long)functions_overhead(srv)), n++;
    for (int i = 0; i < srv->dbnum && i < 64; i++) {
        if (db_size(&srv->dbs[i]) == 0) continue;
        char name[16];
        snprintf(name, sizeof(name), "db.%d", i);
        reply_bulk_cstr(c, name);
        reply_map_len(c, 2);
        reply_kv_ll(c, "overhead.hashtable.main", (long long)r.db_overhead_main[i]);
        reply_kv_ll(c, "overhead.hashtable.expires", (long long)r.db_overhead_expires[i]);
        n++;
    }
    reply_kv_ll(c, "overhead.db.hashtable.lut", (long long)r.db_lut), n++;
    reply_kv_ll(c, "overhead.db.hashtable.rehashing", (long long)r.db_rehashing), n++;
    reply_kv_ll(c, "overhead.total", (long long)r.overhead), n++;
    reply_kv_ll(c, "db.dict.rehashing.count", (long long)r.db_rehashing_count), n++;
    reply_kv_ll(c, "keys.count", (long long)r.keys), n++;
    reply_kv_ll(c, "keys.bytes-per-key", (long long)r.bytes_per_key), n++;
    reply_kv_ll(c, "dataset.bytes", (long long)r.dataset), n++;
    reply_kv_double(c, "dataset.percentage", r.dataset_perc), n++;
    reply_kv_double(c, "peak.percentage", r.peak_perc), n++;
    reply_kv_ll(c, "allocator.allocated", (long long)r.alloc.allocated), n++;
    reply_kv_ll(c, "allocator.active", (long long)r.alloc.active), n++;
    reply_kv_ll(c, "allocator.resident", (long long)r.alloc.resident), n++;
    reply_kv_ll(c, "allocator.muzzy", (long long)r.alloc.muzzy), n++;
    reply_kv_double(c, "allocator-fragmentation.ratio", r.allocator_frag_ratio), n++;
    reply_kv_ll(c, "allocator-fragmentation.bytes", r.allocator_frag_bytes), n++;
    reply_kv_double(c, "allocator-rss.ratio", r.allocator_rss_ratio), n++;
    reply_kv_ll(c, "allocator-rss.bytes", r.allocator_rss_bytes), n++;
    reply_kv_double(c, "rss-overhead.ratio", r.rss_overhead_ratio), n++;
    reply_kv_ll(c, "rss-overhead.bytes", r.rss_overhead_bytes), n++;
    reply_kv_double(c, "fragmentation", r.frag_ratio), n++;
    reply_kv_ll(c, "fragmentation.bytes", r.frag_bytes), n++;
    reply_kv_ll(c, "io.buffers", (long long)r.io_buffers), n++;
    mem_rss_parts_t p;
    memory_rss_parts(srv, &r, &p);
    reply_kv_ll(c, "rss.total", (long long)p.total), n++;
    reply_kv_ll(c, "rss.allocator", (long long)p.allocator), n++;
    reply_kv_ll(c, "rss.allocator.lua", (long long)p.lua), n++;
    reply_kv_ll(c, "rss.allocator.replication", (long long)p.replication), n++;
    reply_kv_ll(c, "rss.allocator.clients", (long long)p.clients), n++;
    reply_kv_ll(c, "rss.allocator.rest", (long long)p.allocator_rest), n++;
    reply_kv_ll(c, "rss.io-buffers", (long long)p.io), n++;
    reply_kv_ll(c, "rss.thread-stacks", (long long)p.stacks), n++;
    reply_kv_ll(c, "rss.code-and-libraries", (long long)p.code), n++;
    reply_kv_ll(c, "rss.other", (long long)p.other), n++;
    reply_set_deferred_map_len(c, slot, n);
}

static void cmd_memory_purge(client_t *c) {
    zmalloc_purge();
    io_engine_release_idle(c->srv);
    server_sample_memory(c->srv);
    c->srv->mem.io_buffers = io_engine_memory(c->srv);
    reply_ok(c);
}

static void append_text(void *arg, const char *text) {
    sds *s = arg;
    *s = sds_cat(*s, text);
}

static void cmd_memory_malloc_stats(client_t *c) {
    sds s = sds_empty();
    zmalloc_malloc_stats(append_text, &s);
    if (sds_len(s) == 0) s = sds_cat(s, "Stats not supported for the current allocator");
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* When the process holds much more than used_memory (RSS over 1.2x it
 * and 1 MB more): which part of the RSS holds the difference, the
 * largest first (memory_rss_parts). */
static sds doctor_rss_parts(server_t *srv, const mem_report_t *r, sds s) {
    mem_rss_parts_t p;
    memory_rss_parts(srv, r, &p);
    if (!p.ok || p.total < r->used + r->used / 5 + (1 << 20)) return s;
    struct {
        const char *name, *hint;
        size_t bytes;
    } parts[] = {
        {"the allocator's pages beyond used_memory (fragmentation, free pages kept)",
         "MEMORY PURGE gives free pages back; activedefrag compacts fragmented ones", p.allocator > r->used ? p.allocator - r->used : 0},
        {"the io_uring engine's receive buffers and rings (mem_io_buffers)",
         "they grow under pipelined bursts and are given back within seconds of light load", p.io},
        {"code and libraries (file-backed pages, shared with other processes running them)",
         "a fixed cost of the binary and its libraries", p.code},
        {"thread stacks", "a fixed cost per thread", p.stacks},
        {"anonymous pages outside the allocator", "memory that libraries took from libc directly", p.other},
    };
    size_t best = 0;
    for (size_t i = 1; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (parts[i].bytes > parts[best].bytes) best = i;
    char h[32];
    util_bytes_to_human(h, sizeof(h), parts[best].bytes);
    return sds_catprintf(s, " * RSS runs ahead of used_memory (%zu vs %zu bytes). The largest part of the RSS beside the data is %s: %s (%s). INFO memory's rss_* fields name every part.\n",
                         p.total, r->used, parts[best].name, h, parts[best].hint);
}

/* Plain-words advice from the ratios, in the spirit of Redis's doctor. */
static void cmd_memory_doctor(client_t *c) {
    mem_report_t r;
    memory_report(c->srv, &r);
    sds s = sds_empty();
    char used[32], rss[32], peak[32];
    util_bytes_to_human(used, sizeof(used), r.used);
    util_bytes_to_human(rss, sizeof(rss), r.rss);
    util_bytes_to_human(peak, sizeof(peak), r.peak);
    int issues = 0;
    if (r.used < 5 * 1024 * 1024) {
        s = sds_catprintf(s, "Hi. This instance holds less than 5 MB (%s), so there is not much to diagnose: "
                             "ratios on such a small heap are dominated by fixed costs.\n",
                          used);
        s = doctor_rss_parts(c->srv, &r, s);
    } else {
        s = sds_catprintf(s, "Memory report for this instance (allocator %s): used %s, resident %s, peak %s.\n\n",
                          zmalloc_lib(), used, rss, peak);
        if (r.peak > r.used * 3 / 2) {
            issues++;
            s = sds_catprintf(s, " * Peak memory: the peak (%s) is more than 1.5x what is used now. Memory freed "
                                 "since then may still be held by the allocator; see the ratios below.\n",
                              peak);
        }
        if (r.frag_ratio > 1.4) {
            issues++;
            s = sds_catprintf(s, " * High fragmentation: the process holds %.2fx the memory the data needs "
                                 "(%lld bytes more). Running MEMORY PURGE returns free pages; a different "
                                 "allocator (make MALLOC=...) or activedefrag may help.\n",
                              r.frag_ratio, r.frag_bytes);
        }
        if (r.allocator_frag_ratio > 1.1) {
            issues++;
            s = sds_catprintf(s, " * Allocator fragmentation %.2f: live blocks are spread over partly empty pages. "
                                 "Active defragmentation would compact them.\n",
                              r.allocator_frag_ratio);
        }
        if (r.allocator_rss_ratio > 1.1) {
            issues++;
            s = sds_catprintf(s, " * The allocator keeps %.2fx its active pages resident: free pages not yet returned. "
                                 "MEMORY PURGE gives them back now.\n",
                              r.allocator_rss_ratio);
        }
        sds parts = doctor_rss_parts(c->srv, &r, sds_empty());
        if (sds_len(parts)) {
            issues++;
            s = sds_cat(s, parts);
        }
        sds_free(parts);
        if (r.clients_normal > 200 * 1024 * 1024) {
            issues++;
            s = sds_cat(s, " * Client buffers use more than 200 MB: look for slow readers or huge pipelines.\n");
        }
        if (!issues) s = sds_cat(s, "Memory health looks fine: no problem found.\n");
    }
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

static void cmd_memory_help(client_t *c) {
    static const char *help[] = {
        "ALLOCATOR-ADVICE", "    Predict what each supported allocator needs for the live allocations (fragmentation from churn is not predicted).",
        "DOCTOR", "    Return memory problems reports.",
        "MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
        "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
        "SIZES [REQUESTED]", "    Return the live allocation size histogram: [max-size, blocks, bytes] per bucket.",
        "STATS", "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).", NULL};
    reply_help(c, "MEMORY", help);
}

static command_t memory_subcommands[] = {
    {"usage", cmd_memory_usage, -3, CMD_READONLY, 2, 2, 1, "server", "Estimate the memory usage of a key", "4.0.0", NULL},
    {"stats", cmd_memory_stats, 2, 0, 0, 0, 0, "server", "Show memory usage details", "4.0.0", NULL},
    {"purge", cmd_memory_purge, 2, 0, 0, 0, 0, "server", "Ask the allocator to release memory", "4.0.0", NULL},
    {"malloc-stats", cmd_memory_malloc_stats, 2, 0, 0, 0, 0, "server", "Show allocator internal stats", "4.0.0", NULL},
    {"doctor", cmd_memory_doctor, 2, 0, 0, 0, 0, "server", "Outputs memory problems report", "4.0.0", NULL},
    {"allocator-advice", cmd_memory_allocator_advice, 2, 0, 0, 0, 0, "server", "Predict each supported allocator's memory for the live allocations", "7.0.0", NULL},
    {"sizes", cmd_memory_sizes, -2, 0, 0, 0, 0, "server", "Show the live allocation size histogram", "7.0.0", NULL},
    {"help", cmd_memory_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "4.0.0", NULL},
    {0},
};

command_t memory_commands[] = {
    {"memory", NULL, -2, 0, 0, 0, 0, "server", "A container for memory diagnostics commands", "4.0.0", memory_subcommands},
    {0},
};
