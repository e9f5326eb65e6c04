/* info.c: INFO sections in Redis's text format (CRLF lines, "# Section"
 * headers, blank line between sections), so tools that parse Redis's INFO
 * parse ours.  It only formats: the figures come from server_t, the stats
 * counters, memory_report() and the command table. */
#include "info.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "acl.h"
#include "blocking.h"
#include "child.h"
#include "cluster_bus.h"
#include "commands.h"
#include "defrag.h"
#include "evict.h"
#include "io_engine.h"
#include "tls.h"
#include "latency_track.h"
#include "lazyfree.h"
#include "pubsub.h"
#include "conn.h"
#include "evloop.h"
#include "function.h"
#include "keyspace.h"
#include "memory.h"
#include "multi.h"
#include "pause.h"
#include "persist.h"
#include "repl.h"
#include "supervise.h"
#include "tracking.h"
#include "script.h"
#include "util.h"

typedef sds section_fn(server_t *srv, sds s);

/* Redis 7.2's listener lines: listener<type>:name=..,bind=..[,port=..],
 * type 0 TCP, 1 the unix socket (Redis's connection type order). */
static sds listener_lines(const server_t *srv, sds s) {
    if (srv->cfg.port) {
        s = sds_cat(s, "listener0:name=tcp");
        for (int i = 0; i < srv->cfg.bind_count; i++) s = sds_catprintf(s, ",bind=%s", srv->cfg.bind[i]);
        s = sds_catprintf(s, ",port=%lld\r\n", srv->cfg.port);
    }
    if (srv->cfg.unixsocket && srv->cfg.unixsocket[0])
        s = sds_catprintf(s, "listener1:name=unix,bind=%s\r\n", srv->cfg.unixsocket);
    return s;
}

static sds sec_server(server_t *srv, sds s) {
    struct utsname u;
    uname(&u);
    long long now_us = util_ustime();
    long long uptime = (srv->mstime - srv->start_time_ms) / 1000;
    s = sds_catprintf(s,
                      "# Server\r\n"
                      "redis_version:%s\r\n"
                      "redis_like_version:%s\r\n"
                      "redis_git_sha1:00000000\r\n"
                      "redis_git_dirty:0\r\n"
                      "redis_build_id:%s\r\n"
                      "redis_mode:%s\r\n"
                      "os:%s %s %s\r\n"
                      "arch_bits:%d\r\n"
                      "monotonic_clock:POSIX clock_gettime\r\n"
                      "multiplexing_api:%s\r\n"
                      "io_engine:%s\r\n"
                      "atomicvar_api:c11-builtin\r\n"
                      "gcc_version:%d.%d.%d\r\n"
                      "process_id:%d\r\n"
                      "process_supervised:%s\r\n"
                      "run_id:%s\r\n"
                      "tcp_port:%lld\r\n"
                      "server_time_usec:%lld\r\n"
                      "uptime_in_seconds:%lld\r\n"
                      "uptime_in_days:%lld\r\n"
                      "hz:%lld\r\n"
                      "configured_hz:%lld\r\n"
                      "lru_clock:%u\r\n"
                      "executable:%s\r\n"
                      "config_file:%s\r\n"
                      "io_threads_active:0\r\n",
                      RL_REDIS_COMPAT_VERSION, RL_VERSION, RL_BUILD_ID, srv->cfg.cluster_enabled ? "cluster" : "standalone", u.sysname, u.release, u.machine,
                      (int)(sizeof(void *) * 8), evloop_backend(srv->loop), io_engine_name(srv),
#ifdef __GNUC__
                      __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
#else
                      0, 0, 0,
#endif
                      (int)srv->pid, supervise_name(srv->cfg.supervised), srv->run_id, srv->cfg.port, now_us, uptime, uptime / 86400, (long long)srv->hz, srv->cfg.hz,
                      obj_lru_clock(), srv->executable ? srv->executable : "", srv->config_file ? srv->config_file : "");
    return listener_lines(srv, s);
}

static sds sec_clients(server_t *srv, sds s) {
    size_t max_in = 0, max_out = 0, pubsub_clients = 0, watching = 0, bkeys, bkeys_nokey;
    for (client_t *c = srv->clients_head; c; c = c->next) {
        if (c->querybuf_peak > max_in) max_in = c->querybuf_peak;
        if (conn_output_bytes(c) > max_out) max_out = conn_output_bytes(c);
        if (pubsub_client_channels(c) + pubsub_client_patterns(c) + pubsub_client_shard_channels(c)) pubsub_clients++;
        if (multi_watched_count(c)) watching++;
    }
    blocking_key_counts(srv, &bkeys, &bkeys_nokey);
    return sds_catprintf(s,
                         "# Clients\r\n"
                         "connected_clients:%zu\r\n"
                         "cluster_connections:0\r\n"
                         "maxclients:%lld\r\n"
                         "client_recent_max_input_buffer:%zu\r\n"
                         "client_recent_max_output_buffer:%zu\r\n"
                         "blocked_clients:%zu\r\n"
                         "tracking_clients:%lld\r\n"
                         "pubsub_clients:%zu\r\n" /* 7.2 */
                         "watching_clients:%zu\r\n"
                         "clients_in_timeout_table:0\r\n"
                         "total_watched_keys:%zu\r\n"
                         "total_blocking_keys:%zu\r\n"
                         "total_blocking_keys_on_nokey:%zu\r\n",
                         srv->client_count, srv->cfg.maxclients, max_in, max_out,
                         blocking_client_count(srv) + pause_waiting_count(srv), /* paused ones too, as Redis */
                         tracking_clients(srv), pubsub_clients, watching, multi_watched_keys(srv), bkeys, bkeys_nokey);
}

static sds human_line(sds s, const char *name, unsigned long long v) {
    char h[32];
    util_bytes_to_human(h, sizeof(h), v);
    return sds_catprintf(s, "%s:%llu\r\n%s_human:%s\r\n", name, v, name, h);
}

/* The whole RSS part by part (memory.h: mem_rss_parts_t). */
static sds rss_parts_lines(server_t *srv, const mem_report_t *r, sds s) {
    mem_rss_parts_t p;
    memory_rss_parts(srv, r, &p);
    return sds_catprintf(s,
                         "rss_total:%zu\r\n"
                         "rss_allocator:%zu\r\n"
                         "rss_allocator_lua:%zu\r\n"
                         "rss_allocator_replication:%zu\r\n"
                         "rss_allocator_clients:%zu\r\n"
                         "rss_allocator_rest:%zu\r\n"
                         "rss_io_buffers:%zu\r\n"
                         "rss_thread_stacks:%zu\r\n"
                         "rss_code_and_libraries:%zu\r\n"
                         "rss_other:%zu\r\n"
                         "rss_threads:%d\r\n",
                         p.total, p.allocator, p.lua, p.replication, p.clients, p.allocator_rest, p.io, p.stacks, p.code,
                         p.other, p.threads);
}

static sds sec_memory(server_t *srv, sds s) {
    mem_report_t r;
    defrag_stats_t ds;
    /* The lazy-free counters are read before used_memory: the background
     * thread frees first and counts after, so a reader that sees no pending
     * job also sees the memory it gave back (read the other way round, one
     * INFO could show pending 0 next to the not-yet-freed used_memory). */
    unsigned long long lazy_pending = lazyfree_pending_objects(srv->lazyfree);
    unsigned long long lazy_freed = lazyfree_freed_objects(srv->lazyfree);
    memory_report(srv, &r);
    defrag_get_stats(srv, &ds);
    s = sds_cat(s, "# Memory\r\n");
    s = human_line(s, "used_memory", r.used);
    s = human_line(s, "used_memory_rss", r.rss);
    s = human_line(s, "used_memory_peak", r.peak);
    s = sds_catprintf(s,
                      "used_memory_peak_perc:%.2f%%\r\n"
                      "used_memory_overhead:%zu\r\n"
                      "used_memory_startup:%zu\r\n"
                      "used_memory_dataset:%zu\r\n"
                      "used_memory_dataset_perc:%.2f%%\r\n"
                      "allocator_allocated:%zu\r\n"
                      "allocator_active:%zu\r\n"
                      "allocator_resident:%zu\r\n"
                      "allocator_muzzy:%zu\r\n", /* 7.4: jemalloc's muzzy pages; the others have none */
                      r.peak_perc, r.overhead, r.startup, r.dataset, r.dataset_perc, r.alloc.allocated, r.alloc.active,
                      r.alloc.resident, r.alloc.muzzy);
    s = human_line(s, "total_system_memory", zmalloc_total_system_memory());
    scripting_fn_figures_t fn = {functions_count(srv), functions_library_count(srv), functions_vm_memory(srv),
                                 functions_overhead(srv)}; /* function.c */
    s = scripting_info_memory(srv, s, &fn);                /* script.c: Lua heaps, cached scripts */
    s = human_line(s, "maxmemory", (unsigned long long)srv->cfg.maxmemory);
    s = rss_parts_lines(srv, &r, s);
    return sds_catprintf(s,
                         "maxmemory_policy:%s\r\n"
                         "allocator_frag_ratio:%.2f\r\n"
                         "allocator_frag_bytes:%lld\r\n"
                         "allocator_rss_ratio:%.2f\r\n"
                         "allocator_rss_bytes:%lld\r\n"
                         "rss_overhead_ratio:%.2f\r\n"
                         "rss_overhead_bytes:%lld\r\n"
                         "mem_fragmentation_ratio:%.2f\r\n"
                         "mem_fragmentation_bytes:%lld\r\n"
                         "mem_not_counted_for_evict:%zu\r\n"
                         "mem_replication_backlog:%zu\r\n"
                         "mem_total_replication_buffers:%zu\r\n"
                         "mem_clients_slaves:%zu\r\n"
                         "mem_clients_normal:%zu\r\n"
                         "mem_cluster_links:%zu\r\n"
                         "mem_aof_buffer:0\r\n"
                         "mem_io_buffers:%zu\r\n"
                         "mem_allocator:%s\r\n"
                         "mem_overhead_db_hashtable_rehashing:%zu\r\n" /* 7.4 */
                         "active_defrag_running:%d\r\n"
                         "lazyfree_pending_objects:%llu\r\n"
                         "lazyfreed_objects:%llu\r\n",
                         config_policy_name(srv->cfg.maxmemory_policy), r.allocator_frag_ratio, r.allocator_frag_bytes,
                         r.allocator_rss_ratio, r.allocator_rss_bytes, r.rss_overhead_ratio, r.rss_overhead_bytes, r.frag_ratio,
                         r.frag_bytes, repl_backlog_memory(srv) + repl_replica_buffers_memory(srv), repl_backlog_memory(srv),
                         repl_backlog_memory(srv) + repl_replica_buffers_memory(srv), repl_replica_buffers_memory(srv),
                         r.clients_normal, cluster_bus_links_memory(srv), r.io_buffers, zmalloc_lib(), r.db_rehashing, ds.running_cpu_pct, lazy_pending,
                         lazy_freed);
}

static sds sec_persistence(server_t *srv, sds s) {
    s = sds_cat(s, "# Persistence\r\n");
    return persist_info(srv, s); /* persist.c owns these figures */
}

static long long ring_avg(const long long *ring) {
    long long sum = 0;
    for (int i = 0; i < 16; i++) sum += ring[i];
    return sum / 16;
}

static sds sec_stats(server_t *srv, sds s) {
    server_stats_t *st = &srv->stats;
    long long sync_full, sync_ok, sync_err;
    repl_sync_stats(srv, &sync_full, &sync_ok, &sync_err); /* repl_info.c */
    defrag_stats_t ds;
    defrag_get_stats(srv, &ds);
    s = sds_catprintf(s,
                      "# Stats\r\n"
                      "total_connections_received:%lld\r\n"
                      "total_commands_processed:%lld\r\n"
                      "instantaneous_ops_per_sec:%lld\r\n"
                      "total_net_input_bytes:%lld\r\n"
                      "total_net_output_bytes:%lld\r\n"
                      "total_net_repl_input_bytes:%lld\r\n"
                      "total_net_repl_output_bytes:%lld\r\n"
                      "instantaneous_input_kbps:%.2f\r\n"
                      "instantaneous_output_kbps:%.2f\r\n"
                      "instantaneous_input_repl_kbps:%.2f\r\n"
                      "instantaneous_output_repl_kbps:%.2f\r\n"
                      "rejected_connections:%lld\r\n"
                      "sync_full:%lld\r\n"
                      "sync_partial_ok:%lld\r\n"
                      "sync_partial_err:%lld\r\n"
                      "expired_subkeys:%lld\r\n" /* Redis 7.4: hash fields past their TTL */
                      "expired_keys:%lld\r\n"
                      "expired_stale_perc:0.00\r\n"
                      "expired_time_cap_reached_count:0\r\n"
                      "expire_cycle_cpu_milliseconds:%lld\r\n"
                      "evicted_keys:%lld\r\n"
                      "evicted_clients:%lld\r\n"
                      "evicted_scripts:%lld\r\n" /* script.c: EVAL scripts past 500 (7.4) */
                      "total_eviction_exceeded_time:%lld\r\n"
                      "current_eviction_exceeded_time:%lld\r\n"
                      "keyspace_hits:%lld\r\n"
                      "keyspace_misses:%lld\r\n"
                      "pubsub_channels:%zu\r\n"
                      "pubsub_patterns:%zu\r\n"
                      "pubsubshard_channels:%zu\r\n"
                      "latest_fork_usec:%lld\r\n"
                      "total_forks:%lld\r\n"
                      "migrate_cached_sockets:0\r\n"
                      "slave_expires_tracked_keys:%zu\r\n"
                      "active_defrag_hits:%lld\r\n"
                      "active_defrag_misses:%lld\r\n"
                      "active_defrag_key_hits:%lld\r\n"
                      "active_defrag_key_misses:%lld\r\n"
                      "total_active_defrag_time:%lld\r\n"
                      "current_active_defrag_time:%lld\r\n"
                      "tracking_total_keys:%lld\r\n"
                      "tracking_total_items:%lld\r\n"
                      "tracking_total_prefixes:%lld\r\n"
                      "unexpected_error_replies:%lld\r\n"
                      "total_error_replies:%lld\r\n"
                      "dump_payload_sanitizations:0\r\n"
                      "total_reads_processed:%lld\r\n"
                      "total_writes_processed:%lld\r\n"
                      "io_threaded_reads_processed:0\r\n"
                      "io_threaded_writes_processed:0\r\n"
                      "client_query_buffer_limit_disconnections:%lld\r\n" /* 7.4 */
                      "client_output_buffer_limit_disconnections:%lld\r\n"
                      /* a client's reply buffer has one size here
                       * (CLIENT_BUF_SIZE): never resized */
                      "reply_buffer_shrinks:0\r\n"
                      "reply_buffer_expands:0\r\n"
                      "eventloop_cycles:%lld\r\n" /* 7.2: loop rounds and their time in us (lifecycle.c) */
                      "eventloop_duration_sum:%lld\r\n"
                      "eventloop_duration_cmd_sum:%lld\r\n"
                      "instantaneous_eventloop_cycles_per_sec:%lld\r\n"
                      "instantaneous_eventloop_duration_usec:%lld\r\n",
                      st->numconnections, st->numcommands, ring_avg(st->ops_samples), st->net_input_bytes,
                      st->net_output_bytes, st->net_repl_input_bytes, st->net_repl_output_bytes,
                      ring_avg(st->net_in_samples) / 1024.0, ring_avg(st->net_out_samples) / 1024.0,
                      ring_avg(st->net_repl_in_samples) / 1024.0, ring_avg(st->net_repl_out_samples) / 1024.0,
                      st->rejected_conn, sync_full, sync_ok, sync_err, st->expired_subkeys, st->expiredkeys, st->expire_cycle_cpu_us / 1000, st->evictedkeys, st->evictedclients, st->evictedscripts, evict_exceeded_total_ms(srv), evict_exceeded_current_ms(srv), st->keyspace_hits,
                      st->keyspace_misses, pubsub_channel_count(srv), pubsub_pattern_count(srv), pubsub_shard_channel_count(srv),
                      child_latest_fork_usec(srv), child_total_forks(srv), /* child.c */
                      db_replica_ttl_keys_count(srv),                      /* keyspace.c */
                      ds.hits, ds.misses, ds.key_hits, ds.key_misses, ds.total_time_ms, ds.current_time_ms,
                      tracking_total_keys(srv), tracking_total_items(srv), tracking_total_prefixes(srv), st->unexpected_error_replies, st->total_error_replies, st->io_reads, st->io_writes,
                      st->qbuf_limit_disconnections, st->obuf_limit_disconnections, st->eventloop_cycles,
                      st->eventloop_duration_sum, st->eventloop_duration_cmd_sum, ring_avg(st->cycles_samples),
                      ring_avg(st->el_duration_samples));
    /* acl.c: denials by kind (Redis 7.2's names; 7.0 lacks them). */
    const acl_stats_t *as = acl_get_stats(srv);
    s = sds_catprintf(s,
                      "acl_access_denied_auth:%lld\r\n"
                      "acl_access_denied_cmd:%lld\r\n"
                      "acl_access_denied_key:%lld\r\n"
                      "acl_access_denied_channel:%lld\r\n",
                      as->denied_auth, as->denied_cmd, as->denied_key, as->denied_channel);
    s = io_engine_info(srv, s); /* io_uring_engine.c: rounds, enters, waits */
    s = tls_info(srv, s);       /* tls.c: TLS clients and handshakes, once TLS is configured */
    return s;
}

static sds sec_replication(server_t *srv, sds s) {
    s = sds_cat(s, "# Replication\r\n");
    return repl_info(srv, s); /* repl_info.c owns these figures */
}

static sds sec_cpu(server_t *srv, sds s) {
    (void)srv;
    struct rusage self, children, main_thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &main_thread); /* INFO runs on the main thread */
#define TV(t) ((double)(t).tv_sec + (double)(t).tv_usec / 1e6)
    return sds_catprintf(s,
                         "# CPU\r\n"
                         "used_cpu_sys:%.6f\r\n"
                         "used_cpu_user:%.6f\r\n"
                         "used_cpu_sys_children:%.6f\r\n"
                         "used_cpu_user_children:%.6f\r\n"
                         "used_cpu_sys_main_thread:%.6f\r\n"
                         "used_cpu_user_main_thread:%.6f\r\n",
                         TV(self.ru_stime), TV(self.ru_utime), TV(children.ru_stime), TV(children.ru_utime),
                         TV(main_thread.ru_stime), TV(main_thread.ru_utime));
#undef TV
}

static sds sec_modules(server_t *srv, sds s) {
    (void)srv;
    return sds_cat(s, "# Modules\r\n");
}

static sds sec_errorstats(server_t *srv, sds s) {
    s = sds_cat(s, "# Errorstats\r\n");
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, srv->stats.errors, false);
    while ((de = dict_next(&it)))
        s = sds_catprintf(s, "errorstat_%s:count=%lld\r\n", (char *)dict_get_key(srv->stats.errors, de),
                          (long long)dict_get_s64(de));
    dict_iter_release(&it);
    return s;
}

static void cmdstat_one(void *arg, command_t *cmd) {
    sds *s = arg;
    if (!cmd->calls && !cmd->rejected_calls && !cmd->failed_calls) return;
    *s = sds_catprintf(*s, "cmdstat_%s:calls=%lld,usec=%lld,usec_per_call=%.2f,rejected_calls=%lld,failed_calls=%lld\r\n",
                       cmd->fullname, cmd->calls, cmd->usec, cmd->calls ? (double)cmd->usec / (double)cmd->calls : 0.0,
                       cmd->rejected_calls, cmd->failed_calls);
}

static sds sec_commandstats(server_t *srv, sds s) {
    s = sds_cat(s, "# Commandstats\r\n");
    commands_foreach(srv, cmdstat_one, &s);
    return s;
}

static sds sec_cluster(server_t *srv, sds s) {
    return sds_catprintf(s, "# Cluster\r\ncluster_enabled:%d\r\n", srv->cluster ? 1 : 0);
}

static sds sec_keyspace(server_t *srv, sds s) {
    s = sds_cat(s, "# Keyspace\r\n");
    for (int i = 0; i < srv->dbnum; i++) {
        db_t *db = &srv->dbs[i];
        if (db_size(db) == 0) continue;
        s = sds_catprintf(s, "db%d:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", i, db_size(db), db_expires_size(db),
                          db->avg_ttl);
    }
    return s;
}

typedef struct section {
    const char *name;
    section_fn *fn;
    bool in_default;
} section;

static const section sections[] = {
    /* Redis's order, which INFO ALL/EVERYTHING keeps */
    {"server", sec_server, true},
    {"clients", sec_clients, true},
    {"memory", sec_memory, true},
    {"persistence", sec_persistence, true},
    {"stats", sec_stats, true},
    {"replication", sec_replication, true},
    {"cpu", sec_cpu, true},
    {"modules", sec_modules, true},
    {"commandstats", sec_commandstats, false},
    {"errorstats", sec_errorstats, true},
    {"latencystats", latency_track_info, false}, /* latency_track.c */
    {"cluster", sec_cluster, true},
    {"keyspace", sec_keyspace, true},
};
#define N_SECTIONS (sizeof(sections) / sizeof(sections[0]))

sds info_generate(server_t *srv, int n, char **names) {
    bool want[N_SECTIONS] = {false};
    if (n == 0) {
        for (size_t i = 0; i < N_SECTIONS; i++) want[i] = sections[i].in_default;
    }
    for (int j = 0; j < n; j++) {
        bool all = !strcasecmp(names[j], "all") || !strcasecmp(names[j], "everything");
        bool def = !strcasecmp(names[j], "default");
        for (size_t i = 0; i < N_SECTIONS; i++)
            if (all || (def && sections[i].in_default) || !strcasecmp(names[j], sections[i].name)) want[i] = true;
    }
    sds s = sds_empty();
    for (size_t i = 0; i < N_SECTIONS; i++) {
        if (!want[i]) continue;
        if (sds_len(s)) s = sds_cat(s, "\r\n");
        s = sections[i].fn(srv, s);
    }
    return s;
}
