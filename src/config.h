/* config.h: configuration directives, their values, and the config file.
 *
 * rl_config_t holds the current value of every directive, typed.  The
 * directive table in config.c says for each one its name, type, default,
 * limits and whether CONFIG SET may change it; the same table drives the
 * config file parser (errors name the file and line), command-line
 * overrides (--port 7000), CONFIG GET (glob) and CONFIG SET. */
#ifndef RL_CONFIG_H
#define RL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define CFG_MAX_BIND 16

enum { MAXMEMORY_NOEVICTION = 0,
       MAXMEMORY_ALLKEYS_LRU,
       MAXMEMORY_VOLATILE_LRU,
       MAXMEMORY_ALLKEYS_LFU,
       MAXMEMORY_VOLATILE_LFU,
       MAXMEMORY_ALLKEYS_RANDOM,
       MAXMEMORY_VOLATILE_RANDOM,
       MAXMEMORY_VOLATILE_TTL };

/* client-output-buffer-limit: per client class, a hard limit and a soft
 * limit that may be exceeded for at most soft_secs seconds; 0 = no limit. */
enum { OBUF_NORMAL = 0,
       OBUF_REPLICA,
       OBUF_PUBSUB,
       OBUF_CLASSES };
typedef struct obuf_limit {
    long long hard;      /* bytes */
    long long soft;      /* bytes */
    long long soft_secs; /* seconds */
} obuf_limit_t;

/* acl-pubsub-default: Redis 7.0 starts new users with no channels. */
enum { ACL_PUBSUB_RESETCHANNELS = 0,
       ACL_PUBSUB_ALLCHANNELS = 1 };

enum { APPENDFSYNC_NO = 0,
       APPENDFSYNC_ALWAYS,
       APPENDFSYNC_EVERYSEC };
/* sanitize-dump-payload: "clients" spares RDB files in Redis, as "no" does. */
enum { SANITIZE_NO = 0,
       SANITIZE_YES,
       SANITIZE_CLIENTS };

/* tls-auth-clients: a client certificate is required, not asked for, or
 * checked when one is given. */
enum { TLS_AUTH_NO = 0,
       TLS_AUTH_YES,
       TLS_AUTH_OPTIONAL };

typedef struct rl_config {
    /* network */
    char *bind[CFG_MAX_BIND];
    int bind_count;
    long long port;
    char *unixsocket;
    long long unixsocketperm;
    long long tcp_backlog;
    long long tcp_keepalive; /* seconds */
    long long timeout;       /* idle client timeout, seconds; 0 = none */
    bool protected_mode;
    long long maxclients;
    long long proto_max_bulk_len;        /* bytes */
    long long client_query_buffer_limit; /* bytes */
    /* TLS (tls.c builds the server's context from these, tls_conn.c runs
     * each connection); Redis 7.0's names and defaults */
    long long tls_port; /* 0 = no TLS listener */
    char *tls_cert_file, *tls_key_file, *tls_key_file_pass;
    char *tls_client_cert_file, *tls_client_key_file, *tls_client_key_file_pass;
    char *tls_dh_params_file, *tls_ca_cert_file, *tls_ca_cert_dir;
    int tls_auth_clients; /* TLS_AUTH_* */
    bool tls_replication, tls_cluster;
    char *tls_protocols, *tls_ciphers, *tls_ciphersuites;
    bool tls_prefer_server_ciphers, tls_session_caching;
    long long tls_session_cache_size, tls_session_cache_timeout;
    /* general */
    long long hz;
    bool dynamic_hz;             /* raise the cron's rate with many clients (server.c) */
    int shutdown_on_sigterm;     /* SHUTDOWN_FLAG_*: what SIGTERM's shutdown does */
    int shutdown_on_sigint;      /* the same for SIGINT */
    long long shutdown_timeout;  /* s a master's shutdown waits for lagging replicas (0: not at all) */
    int oom_score_adj;           /* OOM_ADJ_*: how oom.c uses the values below */
    int oom_score_adj_values[3]; /* master, replica, forked child (oom.c) */
    bool set_proc_title;         /* show proc_title_template as the command line (proc_title.c) */
    char *proc_title_template;
    bool disable_thp; /* no transparent huge pages for this process when the kernel uses them always (thp.c) */
    long long databases;
    char *requirepass; /* an sds, any bytes (T_SECRET); "" = none */
    int loglevel;
    char *logfile;
    char *pidfile;
    bool daemonize;
    bool syslog_enabled; /* log lines to syslog(3) as well (log.c) */
    char *syslog_ident;
    int syslog_facility; /* LOG_USER, LOG_LOCAL0.. */
    char *dir;
    char *dbfilename;
    char *save; /* accepted for compatibility (persistence issue) */
    bool appendonly;
    char *appendfilename;
    char *appenddirname;                /* the multi-part AOF's directory, in dir */
    bool aof_use_rdb_preamble;          /* a rewritten base is an RDB image */
    bool aof_timestamp_enabled;         /* "#TS:<unix time>" lines in the AOF */
    bool aof_disable_auto_gc;           /* keep the files a rewrite superseded */
    bool aof_rewrite_incremental_fsync; /* a rewrite's base synced every 4 MB */
    bool rdb_save_incremental_fsync;    /* an RDB file synced every 4 MB */
    bool no_appendfsync_on_rewrite;     /* no AOF fsync while a child writes */
    /* persistence (persist.c, rdb_*.c, aof.c) */
    bool rdbcompression;
    bool rdbchecksum;
    bool stop_writes_on_bgsave_error;
    int appendfsync; /* APPENDFSYNC_* */
    long long auto_aof_rewrite_percentage;
    long long auto_aof_rewrite_min_size; /* bytes */
    bool aof_load_truncated;
    long long rdb_key_save_delay; /* us slept per key written by a save or rewrite (tests) */
    long long key_load_delay;     /* us slept per key an RDB load adds; -n: 1 us once in n keys (tests) */
    int sanitize_dump_payload;    /* SANITIZE_*: yes checks every RDB blob fully */
    /* clients are served each time a load reads this much (loading.h) */
    long long loading_process_events_interval_bytes;
    /* memory */
    long long maxmemory;
    long long maxmemory_clients; /* bytes, or -N for N% of maxmemory; 0: no client eviction (client_evict.c) */
    int maxmemory_policy;
    long long busy_reply_threshold; /* ms a script runs before others get -BUSY */
    bool lua_enable_deprecated_api; /* setfenv, getfenv, newproxy for scripts (off: they escape the sandbox) */
    long long maxmemory_samples;
    long long maxmemory_eviction_tenacity; /* 0..100: how long one eviction call may run (evict.c) */
    bool jemalloc_bg_thread;
    long long active_expire_effort;
    bool lazyfree_lazy_user_del;
    bool lazyfree_lazy_expire;
    bool lazyfree_lazy_server_del;
    bool lazyfree_lazy_eviction;
    bool lazyfree_lazy_user_flush;
    bool activedefrag;
    bool activerehashing; /* the cron finishes resizes of the keyspace tables (lifecycle.c) */
    long long lfu_log_factor;
    long long lfu_decay_time;                /* minutes per counter decrement; 0 = never */
    long long active_defrag_ignore_bytes;    /* bytes of fragmentation tolerated */
    long long active_defrag_ignore_percent;  /* ours: the floor is at most this % of used_memory (0 = bytes only) */
    long long active_defrag_threshold_lower; /* % fragmentation to start */
    long long active_defrag_threshold_upper; /* % at which max effort is used */
    long long active_defrag_cycle_min;       /* % CPU at the lower threshold */
    long long active_defrag_cycle_max;       /* % CPU at the upper threshold */
    long long active_defrag_max_scan_fields; /* bigger collections: later work */
    /* encodings (data types issue) */
    long long list_max_listpack_size;
    long long list_compress_depth;
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long set_max_intset_entries;
    long long set_max_listpack_entries, set_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    long long hll_sparse_max_bytes;    /* a sparse HLL grows up to this, then goes dense */
    long long stream_node_max_bytes;   /* bytes per stream node, 0 = no limit */
    long long stream_node_max_entries; /* entries per stream node, 0 = no limit */
    /* introspection */
    long long slowlog_log_slower_than;
    long long slowlog_max_len;
    long long latency_monitor_threshold;
    int io_engine;                              /* IO_ENGINE_*: socket I/O engine asked for (io_uring_engine.c) */
    int enable_debug_command;                   /* DEBUG_CMD_*: who may run DEBUG (debug.c) */
    int enable_module_command;                  /* DEBUG_CMD_*: who may run MODULE LOAD|LOADEX|UNLOAD (module_cmds.c) */
    int enable_protected_configs;               /* DEBUG_CMD_*: who may CONFIG SET dir and dbfilename */
    char *server_cpulist, *bio_cpulist;         /* CPUs of the main thread, of the background threads (cpu_affinity.c) */
    char *aof_rewrite_cpulist, *bgsave_cpulist; /* of the forked children */
    long long socket_mark_id;                   /* SO_MARK of the TCP listening sockets, 0: none (lifecycle.c) */
    bool always_show_logo;                      /* the start-up banner even without a terminal (lifecycle.c) */
    bool crash_log_enabled;                     /* a crash writes a bug report to the log (crash.c) */
    bool hide_user_data_from_log;               /* logs name no key or argument (crash.c, debug.c, reply.c) */
    char *locale_collate;                       /* LC_COLLATE for SORT ALPHA's strcoll; "": the environment's */
    long long max_new_conns_per_cycle;          /* accepts per listener and loop round (conn.c) */
    long long max_new_tls_conns_per_cycle;      /* the same on the TLS port */
    int supervised;                             /* SUPERVISED_*: the service manager to tell; auto resolved at start-up (supervise.c) */
    bool latency_tracking;                      /* latency_track.c: per-command histograms */
    char *latency_tracking_info_percentiles;    /* normalized "50 99 99.9" (INFO latencystats) */
    long long tracking_table_max_keys;          /* tracking.c: keys remembered; 0 = no bound */
    int notify_keyspace_flags;                  /* NOTIFY_* bits (notify.h) */
    obuf_limit_t obuf_limits[OBUF_CLASSES];     /* client-output-buffer-limit */
    /* replication (repl_*.c) */
    char *replicaof;        /* "host port", "" = we are a master */
    char *masterauth;       /* an sds, any bytes (T_SECRET); "" = none */
    char *masteruser;       /* "" = none */
    char *bind_source_addr; /* the replica link's source address, "" = any */
    char *ignore_warnings;  /* Redis's ARM64-COW-BUG switch: no warning here to silence */
    bool replica_read_only;
    bool replica_serve_stale_data;
    bool replica_ignore_maxmemory;
    bool replica_announced;
    bool repl_diskless_sync;
    long long repl_diskless_sync_delay;        /* seconds */
    long long repl_diskless_sync_max_replicas; /* 0 = no cap */
    int repl_diskless_load;                    /* REPL_DISKLESS_LOAD_* */
    long long repl_backlog_size;               /* bytes */
    long long repl_backlog_ttl;                /* seconds without replicas before freeing it; 0 = never */
    long long repl_timeout;                    /* seconds */
    long long repl_ping_replica_period;        /* seconds */
    long long min_replicas_to_write;
    long long min_replicas_max_lag; /* seconds */
    long long replica_priority;
    bool replica_lazy_flush;               /* a full sync empties the old data on the bio thread */
    bool rdb_del_sync_files;               /* remove a full sync's RDB files when nothing persists */
    bool repl_disable_tcp_nodelay;         /* accepted for compatibility: our replica sockets keep TCP_NODELAY */
    bool replica_ignore_disk_write_errors; /* no: a replica that cannot persist stops on its master's writes */
    int propagation_error_behavior;        /* PROPAGATION_ERR_*: an error in the master's stream or the AOF */
    char *replica_announce_ip;             /* "" = not announced */
    long long replica_announce_port;       /* 0 = our port */
    /* cluster (cluster*.c): Redis 7.0's cluster-* directives */
    bool cluster_enabled;
    char *cluster_config_file;                /* nodes.conf, in dir */
    long long cluster_node_timeout;           /* ms */
    long long cluster_port;                   /* the bus; 0 = port + 10000 */
    char *cluster_announce_ip;                /* "" = the address a peer sees */
    long long cluster_announce_port;          /* 0 = port */
    long long cluster_announce_bus_port;      /* 0 = the bus port */
    long long cluster_announce_tls_port;      /* accepted: no TLS here */
    char *cluster_announce_hostname;          /* "" = none */
    int cluster_preferred_endpoint_type;      /* CLUSTER_ENDPOINT_* */
    bool cluster_require_full_coverage;       /* a slot without a node takes the cluster down */
    bool cluster_allow_reads_when_down;       /* reads still served while down */
    bool cluster_allow_pubsubshard_when_down; /* SPUBLISH/SSUBSCRIBE still served while down */
    long long cluster_replica_validity_factor;
    long long cluster_migration_barrier;
    bool cluster_allow_replica_migration;
    bool cluster_replica_no_failover;
    long long cluster_link_sendbuf_limit; /* bytes, 0 = no limit */
    /* access control (acl.c) */
    char *aclfile;            /* "" = users come from "user" lines */
    long long acllog_max_len; /* ACL LOG entries kept */
    int acl_pubsub_default;   /* ACL_PUBSUB_*: channels of a new user */
    char **acl_user_lines;    /* "user" lines, without the word "user" */
    int *acl_user_linenos;    /* their line numbers (0 = command line) */
    int acl_user_count;
    /* Redis-only directives taken with a value redis-like does not act on
     * (config.c, redis_only): one text each, logged at start-up */
    char **ignored;
    int ignored_count;
    bool save_loaded; /* config_load: a "save" line was read (the next ones append) */
} rl_config_t;

/* shutdown-on-sigterm / shutdown-on-sigint: flags as SHUTDOWN's options. */
enum { SHUTDOWN_FLAG_SAVE = 1,
       SHUTDOWN_FLAG_NOSAVE = 2,
       SHUTDOWN_FLAG_NOW = 4,
       SHUTDOWN_FLAG_FORCE = 8 };

enum { OOM_ADJ_NO = 0,
       OOM_ADJ_RELATIVE,
       OOM_ADJ_ABSOLUTE };
enum { IO_ENGINE_AUTO = 0,
       IO_ENGINE_EPOLL,
       IO_ENGINE_URING };
enum { DEBUG_CMD_NO,
       DEBUG_CMD_YES,
       DEBUG_CMD_LOCAL };
enum { PROPAGATION_ERR_IGNORE = 0,
       PROPAGATION_ERR_PANIC,
       PROPAGATION_ERR_PANIC_ON_REPLICAS };
enum { CLUSTER_ENDPOINT_IP = 0,
       CLUSTER_ENDPOINT_HOSTNAME,
       CLUSTER_ENDPOINT_UNKNOWN };
enum { REPL_DISKLESS_LOAD_DISABLED = 0,
       REPL_DISKLESS_LOAD_ON_EMPTY_DB,
       REPL_DISKLESS_LOAD_SWAPDB };

/* Fill cfg with every directive's default. */
void config_init_defaults(rl_config_t *cfg);
void config_free(rl_config_t *cfg);
/* Load a file and then the command-line overrides (argv pairs "--name
 * value..."), validating each line.  On error prints
 * "*** FATAL CONFIG FILE ERROR ***", the file:line, the line and the reason
 * to stderr and returns -1. */
int config_load(rl_config_t *cfg, const char *path, int argc, char **argv);
/* The same for a file's text already in memory (NUL-terminated; name is what
 * error messages call it).  config_load's body; the fuzz target calls it. */
int config_load_text(rl_config_t *cfg, const char *name, const char *text);
/* Set one directive from text (an sds: a password's bytes are taken as
 * given, NULs included); err receives a static reason on failure. */
int config_set(rl_config_t *cfg, const char *name, const char *value, const char **err);
/* Whether config_set would accept value (0) or not (-1, err set); changes
 * nothing.  CONFIG SET checks every pair before it sets any. */
int config_check(rl_config_t *cfg, const char *name, const char *value, const char **err);
bool config_is_immutable(const char *name);
/* dir and dbfilename: a client able to set them can write a file where
 * it likes (enable-protected-configs says who may). */
bool config_is_protected(const char *name);
/* dir, appendonly, repl-diskless-load: CONFIG SET answers -LOADING while
 * a dataset loads (a new dir or AOF under a load would lose files). */
bool config_denied_while_loading(const char *name);
/* requirepass, masterauth: one word of any bytes, spaces and NULs too. */
bool config_is_secret(const char *name);
/* Those and masteruser: CONFIG SET's value is redacted in MONITOR and
 * SLOWLOG, as Redis's SENSITIVE_CONFIG ones. */
bool config_is_sensitive(const char *name);
/* Current value of a directive as text (caller frees with sds_free). */
char *config_get_value(const rl_config_t *cfg, const char *name);
/* Visit every directive whose name matches the glob (value: an sds). */
void config_foreach_match(const rl_config_t *cfg, const char *pattern,
                          void (*fn)(void *arg, const char *name, const char *value), void *arg);
/* The same over Redis 7.0's alternative names (hash-max-ziplist-entries,
 * lua-time-limit, ...), each with the value of the directive it names. */
void config_foreach_alias_match(const rl_config_t *cfg, const char *pattern,
                                void (*fn)(void *arg, const char *name, const char *value), void *arg);
const char *config_policy_name(int policy);
/* The table's name for a directive or one of its aliases; NULL if unknown. */
const char *config_canonical_name(const char *name);

#endif
