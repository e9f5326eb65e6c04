/* server.h: the server's state (server_t) and the databases (db_t).
 *
 * main() builds one server_t and hands it to every subsystem; command
 * handlers reach it through c->srv and their database through c->db.  This
 * header holds only the shared state and a few operations on it (server.c);
 * it is the bottom of the server's layers (docs/development.md, "Layers"), so it includes
 * only libraries and config.h.  Start-up and the cron are lifecycle.c's. */
#ifndef RL_SERVER_H
#define RL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "dict.h"
#include "hashtable.h"
#include "object.h"
#include "sds.h"
#include "version.h"
#include "zmalloc.h"

#define RL_MAX_LISTENERS 16
#define RL_DEFAULT_PIDFILE "/var/run/redis-like.pid" /* daemonize yes without pidfile */

typedef struct server server_t;
/* oom.c: what it did to /proc/self/oom_score_adj */
typedef struct oom_state {
    bool adjusted;      /* oom-score-adj is on and base was read */
    int base;           /* the score before we first changed it */
    bool written_valid; /* written holds the last value we wrote */
    int written;
} oom_state_t;
typedef struct client client_t;
typedef struct command command_t; /* command_def.h */
typedef struct evloop evloop_t;
typedef struct evloop_io evloop_io_t;
typedef struct evloop_timer evloop_timer_t;
typedef struct blocking blocking_t;
typedef struct pubsub pubsub_t;
typedef struct slowlog slowlog_t;
typedef struct latency latency_t;
typedef struct monitors monitors_t;
typedef struct evict evict_t;       /* evict.c */
typedef struct lazyfree lazyfree_t; /* lazyfree.c */
typedef struct defrag defrag_t;     /* defrag.c */
typedef struct tracking tracking_t; /* tracking.c */

typedef struct db {
    ht *keys;             /* every key: db_entry pointers (db_entry.h) */
    size_t expires_count; /* keys whose entry holds an expire time (keyspace.c) */
    int id;
    unsigned long expire_cursor; /* active expiry resumes here */
    long long avg_ttl;           /* ms, running estimate for INFO keyspace */
    struct ttl_index *ttl_index; /* keys with a TTL while they are rare (ttl_index.c), or NULL */
    ht *hfe_keys;                /* names of hashes whose fields may have a TTL (hash_ttl.c), or NULL */
    unsigned long hfe_cursor;    /* active field expiry resumes here */
    uint32_t *slot_keys;         /* cluster mode: keys per hash slot (16384 counts), else NULL */
    ht *replica_ttl_keys;        /* a writable replica's own keys given a TTL (expire.c), or NULL */
    unsigned long own_cursor;    /* replica_ttl_keys' expiry cycle resumes here */
    server_t *srv;
} db_t;

/* Counters shown by INFO stats; every field is a plain count. */
typedef struct server_stats {
    long long numcommands;    /* total_commands_processed */
    long long numconnections; /* total_connections_received */
    long long rejected_conn;
    long long expiredkeys;
    long long expired_subkeys;            /* hash fields deleted by their TTL (Redis 7.4) */
    long long qbuf_limit_disconnections;  /* conn.c: client-query-buffer-limit closures (7.4) */
    long long obuf_limit_disconnections;  /* conn.c: client-output-buffer-limit closures (7.4) */
    long long eventloop_cycles;           /* lifecycle.c: loop rounds (evloop's round hook; 7.2) */
    long long eventloop_duration_sum;     /* us: the rounds' time, sleeps excluded (7.2) */
    long long eventloop_duration_cmd_sum; /* us: of which commands ran (dispatch.c; 7.2) */
    long long expired_stale_perc;
    long long evictedkeys;
    long long evictedclients; /* client_evict.c: maxmemory-clients */
    long long evictedscripts; /* script.c: EVAL scripts past 500 (Redis 7.4) */
    long long keyspace_hits, keyspace_misses;
    long long net_input_bytes, net_output_bytes; /* every byte, replication's included */
    /* of those, replication's (Redis 7.0 counts them in both): the RDB
     * and stream from our master, to our replicas */
    long long net_repl_input_bytes, net_repl_output_bytes;
    long long total_error_replies;
    long long unexpected_error_replies;
    long long io_reads, io_writes; /* read/write system calls on clients */
    long long expire_cycle_cpu_us; /* summed per cycle in us: most cycles take well under 1 ms */
    dict *errors;                  /* error code -> count (errorstats) */
    /* instantaneous_ops_per_sec: a ring of samples taken in cron */
    long long ops_samples[16];
    int ops_idx;
    long long ops_last_count, ops_last_ms;
    long long net_in_samples[16], net_out_samples[16], net_repl_in_samples[16], net_repl_out_samples[16];
    long long net_in_last, net_out_last, net_repl_in_last, net_repl_out_last;
    long long cycles_samples[16], cycles_last;           /* instantaneous_eventloop_cycles_per_sec */
    long long el_duration_samples[16], el_duration_last; /* instantaneous_eventloop_duration_usec: us per round */
} server_stats_t;

/* Bytes read or written on a socket; repl: replication's (stats above). */
static inline void stats_net_in(server_stats_t *st, long long n, bool repl) {
    st->net_input_bytes += n;
    if (repl) st->net_repl_input_bytes += n;
}
static inline void stats_net_out(server_stats_t *st, long long n, bool repl) {
    st->net_output_bytes += n;
    if (repl) st->net_repl_output_bytes += n;
}

/* Memory figures sampled together in cron, so ratios divide simultaneous
 * readings (see memory.c). */
typedef struct mem_sample {
    size_t rss;
    zmalloc_stats_t alloc;
    size_t zmalloc_used; /* used_memory at the time of sampling */
    size_t io_buffers;   /* resident bytes of the io_uring engine's mappings (io_engine_memory) */
} mem_sample_t;

/* loading.c: a load that clients wait for while it runs (the start-up
 * RDB or AOF, a replica's full sync): they get -LOADING, INFO shows it. */
typedef struct load_progress {
    bool active;                      /* clients are served meanwhile (loading.h) */
    bool async;                       /* repl-diskless-load swapdb of our own history: reads see the old data */
    long long start_sec;              /* unix time (INFO loading_start_time) */
    long long start_ms;               /* for the ETA */
    long long total;                  /* bytes to load, 0 when unknown (an EOF mark) */
    long long loaded;                 /* bytes read so far */
    long long rdb_used_mem;           /* the RDB's aux used-mem once read, else 0 */
    long long next_serve;             /* loaded bytes at which clients are served next */
    long long last_serve_ms;          /* when they were last served */
    void (*keepalive)(server_t *srv); /* called about once a second meanwhile, or NULL */
    long long keepalive_ms;           /* when it was last called */
} load_progress_t;

struct server {
    rl_config_t cfg;   /* every directive's current value */
    char *config_file; /* absolute path, or NULL */
    char *executable;  /* absolute path of the binary */
    evloop_t *loop;
    evloop_timer_t *cron_timer;
    evloop_io_t *listeners[RL_MAX_LISTENERS]; /* listeners.c */
    int listen_fds[RL_MAX_LISTENERS];
    bool listen_tcp[RL_MAX_LISTENERS]; /* a TCP listener (CONFIG SET port/bind replaces those) */
    bool listen_tls[RL_MAX_LISTENERS]; /* a tls-port listener: its clients speak TLS (tls.c) */
    int listen_count;
    char *tcp_bound;       /* listeners.c: "port addr..." the TCP listeners were opened for (an sds) */
    char *unix_path_bound; /* unix socket we created, to unlink */
    bool daemonized;       /* `daemonize yes` took effect (server_main.c) */
    bool pidfile_written;  /* ours to unlink at exit: a failed start leaves another's alone */

    db_t *dbs;
    int dbnum;

    client_t *clients_head; /* every connected client */
    size_t client_count;
    client_t *pending_write;     /* clients with output to flush */
    client_t *close_asap;        /* clients to free at before-sleep */
    size_t clients_evict_mem;    /* conn.c: the sum of the clients' evict_mem (maxmemory-clients) */
    bool clients_evict_measured; /* client_evict.c: every client measured since the limit was set */
    struct uring_engine *uring;  /* io_uring_engine.c: the ring, or NULL on epoll */
    struct tls_state *tls;       /* tls.c: contexts and counters, NULL until TLS is configured */
    uint64_t next_client_id;
    dict *commands;                    /* lowercase name -> command_t * */
    dict *watched;                     /* multi.c: WATCHed keys -> clients */
    bool in_exec;                      /* multi.c: EXEC is running its commands */
    blocking_t *blocking;              /* clients blocked on keys (blocking.c) */
    pubsub_t *pubsub;                  /* channels and patterns (pubsub.c) */
    slowlog_t *slowlog;                /* SLOWLOG entries (slowlog.c) */
    latency_t *latency;                /* LATENCY events (latency.c) */
    monitors_t *monitors;              /* MONITOR clients (monitor.c) */
    evict_t *evict;                    /* eviction pool (evict.c) */
    lazyfree_t *lazyfree;              /* bio thread freeing big values (lazyfree.c) */
    defrag_t *defrag;                  /* active defrag cursor and stats (defrag.c) */
    tracking_t *tracking;              /* client-side caching tables (tracking.c) */
    struct pause *pause;               /* CLIENT PAUSE state and waiting requests (pause.c) */
    client_t *current_client;          /* the client whose command runs, or NULL */
    client_t *top_client;              /* dispatch.c: whose top-level command runs (a script's caller too) */
    struct db_views *views;            /* robj views of embedded values (db_views.c) */
    client_t *pending_tracking_client; /* tracking.c: owed invalidations after its reply */

    server_stats_t stats;
    mem_sample_t mem;      /* last cron sample */
    size_t peak_memory;    /* used_memory_peak */
    size_t startup_memory; /* used_memory after start-up */
    long long start_time_ms;
    long long cron_loops;
    int hz;              /* the cron's rate now: cfg.hz, raised by dynamic-hz (server_adapt_hz) */
    client_t *cron_next; /* conn_cron: the next client it visits (NULL: the first) */
    oom_state_t oom;     /* oom.c */
    long long mstime;    /* cached clock, updated per command batch */
    /* dispatch.c: the clock (us) at the end of the last top-level command
     * of the input batch conn.c is running, taken as the next command's
     * start (one clock read per pipelined command instead of two: a read
     * costs ~70 ns on a VM); 0 = read the clock, -1 = a batch is running
     * but no command has ended yet.  conn.c arms it per batch. */
    long long clock_chain_us;
    char run_id[41];
    bool shutdown_asap;
    int shutdown_signal;            /* SIGTERM/SIGINT asked for the shutdown (0: SHUTDOWN or none) */
    int shutdown_flags;             /* shutdown.c: SHUTDOWN_FLAG_* of the shutdown waiting for replicas */
    long long shutdown_deadline_ms; /* shutdown.c: when that wait ends, 0 when none */
    bool active_expire_off;         /* debug.c: DEBUG SET-ACTIVE-EXPIRE 0 stops the expiry cycle */
    bool scripts_call_anything;     /* debug.c: DEBUG SET-DISABLE-DENY-SCRIPTS 1 lets scripts call NOSCRIPT commands */
    bool script_busy;               /* script.c: a script past busy-reply-threshold serves clients from inside */
    int ttl_index_mode;             /* ttl_index.h: TTL_INDEX_AUTO, or forced by DEBUG TTL-INDEX */
    bool stream_groups_seen;        /* sticky: a group was created or a stream loaded (rdb_save.c scans) */
    int exit_code;
    pid_t pid;
    long long dirty;                     /* changes since last save (for INFO) */
    long long lastsave;                  /* unix seconds */
    long long rdb_last_load_keys_loaded; /* rdb_load.c: the last load that finished (not reset by RESETSTAT) */
    long long rdb_last_load_keys_expired;
    struct persist *persist;                         /* persist.c: save points, BGSAVE state, MISCONF */
    struct child *child;                             /* child.c: the one forked child (RDB, AOF rewrite) */
    struct aof *aof;                                 /* aof.c: the append-only file (persist.c creates it) */
    bool loading;                                    /* an RDB/AOF/full-sync load runs: nothing is propagated */
    load_progress_t load;                            /* loading.c: the load clients wait for, if active */
    struct scripting *scripting;                     /* script.c: Lua states, cached scripts, the running script */
    struct repl *repl;                               /* repl_*.c: replication state (repl_state.h) */
    struct propagate *propagate;                     /* propagate.c: the one write stream to the AOF and replicas */
    struct acl *acl;                                 /* acl.c: users, the default user, the ACL log */
    struct cluster *cluster;                         /* cluster.c: cluster-enabled's state, else NULL */
    const struct conn_hooks *conn_hooks;             /* conn.c calls the layers above through these (hooks.c) */
    const struct dispatch_hooks *dispatch_hooks;     /* commands_call/_process reach dispatch.c (hooks.c) */
    const struct keyspace_hooks *keyspace_hooks;     /* keyspace.c tells the layers above about key changes (hooks.c) */
    const struct durability_hooks *durability_hooks; /* rdb, aof, repl: functions, AOF MULTI, FAILOVER (hooks.c) */
};

/* server.c: operations on the state that any layer may call.  The
 * process-level functions (init, run, free) are lifecycle.h's. */
/* Stop after the current iteration; the main loop then exits cleanly. */
void server_request_shutdown(server_t *srv);
void server_update_clock(server_t *srv);
void server_sample_memory(server_t *srv);
void server_adapt_hz(server_t *srv);
/* Full path of a file in the configured dir, or name itself when absolute
 * (the RDB, the AOF and their temp files; caller sds_frees). */
sds server_path(const server_t *srv, const char *name);
/* With set-proc-title, show proc-title-template as the command line, its
 * {title} the program as run (NULL) or a forked child's name. */
void server_set_proc_title(const server_t *srv, const char *title);

#endif
