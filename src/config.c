/* config.c: the directive table, the config file parser, CONFIG GET/SET.
 *
 * One row per directive: name, type, where its value lives in rl_config_t,
 * default (as text, parsed like a config line), limits, and whether it may
 * change at run time.  Loading a file and CONFIG SET share the same parse
 * functions, so a value means the same thing everywhere.  A few directives
 * with their own syntax (bind, save, loglevel's names...) are enums or
 * special-cased strings. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "cpu_affinity.h"
#include "log.h"
#include "notify_flags.h"
#include "proc_title.h"
#include "sds.h"
#include "supervise.h"
#include "version.h"
#include "util.h"
#include "zmalloc.h"

/* T_NOTIFY: notify-keyspace-events letters (notify.c parses them);
 * T_OBUF: client-output-buffer-limit "<class> <hard> <soft> <secs>"...;
 * T_PCTL: a space-separated list of percentiles 0..100, kept as a string
 * in its normalized form ("%f" without trailing zeros, as Redis shows it);
 * T_OOMV: oom-score-adj-values, three scores -2000..2000;
 * T_FLAGS: words of an enum table or'ed together ("nosave force"; a 0
 * word, "default", adds nothing), shown in the table's order;
 * T_SECRET: a password, any bytes (NUL included, as Redis takes them),
 * kept as an sds; CONFIG SET takes the value as given, unparsed. */
enum { T_BOOL,
       T_INT,
       T_MEM,
       T_STR,
       T_ENUM,
       T_BIND,
       T_OCTAL,
       T_NOTIFY,
       T_OBUF,
       T_PCTL,
       T_OOMV,
       T_FLAGS,
       T_SECRET };
#define F_IMMUTABLE 1
#define F_BASENAME 2      /* a file name in dir, never a path (Redis 7.0 refuses one) */
#define F_DIRNAME 4       /* the same, of a directory */
#define F_HIDDEN 8        /* a testing knob: CONFIG GET names it only exactly, as Redis hides it */
#define F_TITLE 16        /* a process title template (proc_title.c) */
#define F_PERCENT 32      /* T_MEM that also takes "N%" (of maxmemory), kept as -N */
#define F_PROTECTED 64    /* CONFIG SET only as enable-protected-configs allows */
#define F_CPULIST 128     /* a list of CPUs (cpu_affinity.c) */
#define F_LOCALE 256      /* a locale name for LC_COLLATE ("" the environment's) */
#define F_NOT_LOADING 512 /* CONFIG SET refused with -LOADING while a dataset loads (Redis's DENY_LOADING_CONFIG) */

typedef struct enum_name {
    const char *name;
    int value;
} enum_name;

static const enum_name loglevel_enum[] = {{"debug", LL_DEBUG}, {"verbose", LL_VERBOSE}, {"notice", LL_NOTICE}, {"warning", LL_WARNING}, {NULL, 0}};
static const enum_name policy_enum[] = {
    {"volatile-lru", MAXMEMORY_VOLATILE_LRU}, {"volatile-lfu", MAXMEMORY_VOLATILE_LFU}, {"volatile-random", MAXMEMORY_VOLATILE_RANDOM}, {"volatile-ttl", MAXMEMORY_VOLATILE_TTL}, {"allkeys-lru", MAXMEMORY_ALLKEYS_LRU}, {"allkeys-lfu", MAXMEMORY_ALLKEYS_LFU}, {"allkeys-random", MAXMEMORY_ALLKEYS_RANDOM}, {"noeviction", MAXMEMORY_NOEVICTION}, {NULL, 0}};

static const enum_name appendfsync_enum[] = {{"everysec", APPENDFSYNC_EVERYSEC}, {"always", APPENDFSYNC_ALWAYS}, {"no", APPENDFSYNC_NO}, {NULL, 0}};

static const enum_name oom_adj_enum[] = {{"no", OOM_ADJ_NO}, {"yes", OOM_ADJ_RELATIVE}, {"relative", OOM_ADJ_RELATIVE}, {"absolute", OOM_ADJ_ABSOLUTE}, {NULL, 0}};
static const enum_name supervised_enum[] = {{"no", SUPERVISED_NO},
                                            {"upstart", SUPERVISED_UPSTART},
                                            {"systemd", SUPERVISED_SYSTEMD},
                                            {"auto", SUPERVISED_AUTO},
                                            {NULL, 0}};
static const enum_name syslog_facility_enum[] = {
    {"user", LOG_USER}, {"local0", LOG_LOCAL0}, {"local1", LOG_LOCAL1}, {"local2", LOG_LOCAL2}, {"local3", LOG_LOCAL3}, {"local4", LOG_LOCAL4}, {"local5", LOG_LOCAL5}, {"local6", LOG_LOCAL6}, {"local7", LOG_LOCAL7}, {NULL, 0}};
static const enum_name debug_enum[] = {{"no", DEBUG_CMD_NO}, {"yes", DEBUG_CMD_YES}, {"local", DEBUG_CMD_LOCAL}, {NULL, 0}};
static const enum_name io_engine_enum[] = {{"auto", IO_ENGINE_AUTO}, {"epoll", IO_ENGINE_EPOLL}, {"io_uring", IO_ENGINE_URING}, {NULL, 0}};
static const enum_name diskless_load_enum[] = {{"disabled", REPL_DISKLESS_LOAD_DISABLED},
                                               {"on-empty-db", REPL_DISKLESS_LOAD_ON_EMPTY_DB},
                                               {"swapdb", REPL_DISKLESS_LOAD_SWAPDB},
                                               {NULL, 0}};

static const enum_name propagation_error_enum[] = {{"ignore", PROPAGATION_ERR_IGNORE},
                                                   {"panic", PROPAGATION_ERR_PANIC},
                                                   {"panic-on-replicas", PROPAGATION_ERR_PANIC_ON_REPLICAS},
                                                   {NULL, 0}};

static const enum_name endpoint_enum[] = {{"ip", CLUSTER_ENDPOINT_IP},
                                          {"hostname", CLUSTER_ENDPOINT_HOSTNAME},
                                          {"unknown-endpoint", CLUSTER_ENDPOINT_UNKNOWN},
                                          {NULL, 0}};

static const enum_name sanitize_enum[] = {{"no", SANITIZE_NO}, {"yes", SANITIZE_YES}, {"clients", SANITIZE_CLIENTS}, {NULL, 0}};

static const enum_name shutdown_flags_enum[] = {{"default", 0},
                                                {"save", SHUTDOWN_FLAG_SAVE},
                                                {"nosave", SHUTDOWN_FLAG_NOSAVE},
                                                {"now", SHUTDOWN_FLAG_NOW},
                                                {"force", SHUTDOWN_FLAG_FORCE},
                                                {NULL, 0}};

static const enum_name tls_auth_enum[] = {{"no", TLS_AUTH_NO}, {"yes", TLS_AUTH_YES}, {"optional", TLS_AUTH_OPTIONAL}, {NULL, 0}};

static const enum_name acl_pubsub_enum[] = {{"allchannels", ACL_PUBSUB_ALLCHANNELS},
                                            {"resetchannels", ACL_PUBSUB_RESETCHANNELS},
                                            {NULL, 0}};

typedef struct directive {
    const char *name;
    int type;
    size_t offset;
    const char *def;
    long long min, max;
    const enum_name *enums;
    int flags;
} directive;

#define O(f) offsetof(rl_config_t, f)
static const directive directives[] = {
    {"bind", T_BIND, O(bind), "127.0.0.1 -::1", 0, 0, NULL, 0},
    {"port", T_INT, O(port), "6379", 0, 65535, NULL, 0},
    {"unixsocket", T_STR, O(unixsocket), "", 0, 0, NULL, F_IMMUTABLE},
    {"unixsocketperm", T_OCTAL, O(unixsocketperm), "0", 0, 0777, NULL, F_IMMUTABLE},
    {"tcp-backlog", T_INT, O(tcp_backlog), "511", 0, INT_MAX, NULL, F_IMMUTABLE},
    {"tcp-keepalive", T_INT, O(tcp_keepalive), "300", 0, INT_MAX, NULL, 0},
    {"timeout", T_INT, O(timeout), "0", 0, INT_MAX, NULL, 0},
    {"protected-mode", T_BOOL, O(protected_mode), "yes", 0, 0, NULL, 0},
    {"maxclients", T_INT, O(maxclients), "10000", 1, INT_MAX, NULL, 0},
    {"proto-max-bulk-len", T_MEM, O(proto_max_bulk_len), "512mb", 1024 * 1024, LLONG_MAX, NULL, 0},
    {"client-query-buffer-limit", T_MEM, O(client_query_buffer_limit), "1gb", 1024 * 1024, LLONG_MAX, NULL, 0},
    /* TLS (tls.c: CONFIG SET of a tls-* file or option builds a new context,
     * refused with the old one kept when it fails) */
    {"tls-port", T_INT, O(tls_port), "0", 0, 65535, NULL, 0},
    {"tls-cert-file", T_STR, O(tls_cert_file), "", 0, 0, NULL, 0},
    {"tls-key-file", T_STR, O(tls_key_file), "", 0, 0, NULL, 0},
    {"tls-key-file-pass", T_STR, O(tls_key_file_pass), "", 0, 0, NULL, 0},
    {"tls-client-cert-file", T_STR, O(tls_client_cert_file), "", 0, 0, NULL, 0},
    {"tls-client-key-file", T_STR, O(tls_client_key_file), "", 0, 0, NULL, 0},
    {"tls-client-key-file-pass", T_STR, O(tls_client_key_file_pass), "", 0, 0, NULL, 0},
    {"tls-dh-params-file", T_STR, O(tls_dh_params_file), "", 0, 0, NULL, 0},
    {"tls-ca-cert-file", T_STR, O(tls_ca_cert_file), "", 0, 0, NULL, 0},
    {"tls-ca-cert-dir", T_STR, O(tls_ca_cert_dir), "", 0, 0, NULL, 0},
    {"tls-auth-clients", T_ENUM, O(tls_auth_clients), "yes", 0, 0, tls_auth_enum, 0},
    {"tls-replication", T_BOOL, O(tls_replication), "no", 0, 0, NULL, 0},
    {"tls-cluster", T_BOOL, O(tls_cluster), "no", 0, 0, NULL, 0},
    {"tls-protocols", T_STR, O(tls_protocols), "", 0, 0, NULL, 0},
    {"tls-ciphers", T_STR, O(tls_ciphers), "", 0, 0, NULL, 0},
    {"tls-ciphersuites", T_STR, O(tls_ciphersuites), "", 0, 0, NULL, 0},
    {"tls-prefer-server-ciphers", T_BOOL, O(tls_prefer_server_ciphers), "no", 0, 0, NULL, 0},
    {"tls-session-caching", T_BOOL, O(tls_session_caching), "yes", 0, 0, NULL, 0},
    {"tls-session-cache-size", T_INT, O(tls_session_cache_size), "20480", 0, INT_MAX, NULL, 0},
    {"tls-session-cache-timeout", T_INT, O(tls_session_cache_timeout), "300", 0, INT_MAX, NULL, 0},
    {"hz", T_INT, O(hz), "10", 1, 500, NULL, 0},
    {"dynamic-hz", T_BOOL, O(dynamic_hz), "yes", 0, 0, NULL, 0},
    {"shutdown-on-sigterm", T_FLAGS, O(shutdown_on_sigterm), "default", 0, 0, shutdown_flags_enum, 0},
    {"shutdown-timeout", T_INT, O(shutdown_timeout), "10", 0, INT_MAX, NULL, 0},
    {"shutdown-on-sigint", T_FLAGS, O(shutdown_on_sigint), "default", 0, 0, shutdown_flags_enum, 0},
    {"oom-score-adj", T_ENUM, O(oom_score_adj), "no", 0, 0, oom_adj_enum, 0},
    {"oom-score-adj-values", T_OOMV, O(oom_score_adj_values), "0 200 800", -2000, 2000, NULL, 0},
    {"set-proc-title", T_BOOL, O(set_proc_title), "yes", 0, 0, NULL, F_IMMUTABLE},
    {"proc-title-template", T_STR, O(proc_title_template), "{title} {listen-addr} {server-mode}", 0, 0, NULL, F_TITLE},
    {"disable-thp", T_BOOL, O(disable_thp), "yes", 0, 0, NULL, F_IMMUTABLE},
    {"databases", T_INT, O(databases), "16", 1, INT_MAX, NULL, F_IMMUTABLE},
    {"requirepass", T_SECRET, O(requirepass), "", 0, 0, NULL, 0},
    {"loglevel", T_ENUM, O(loglevel), "notice", 0, 0, loglevel_enum, 0},
    {"logfile", T_STR, O(logfile), "", 0, 0, NULL, F_IMMUTABLE},
    {"pidfile", T_STR, O(pidfile), "", 0, 0, NULL, F_IMMUTABLE},
    {"daemonize", T_BOOL, O(daemonize), "no", 0, 0, NULL, F_IMMUTABLE},
    /* Redis's ident: a syslog filter written for Redis matches ours */
    {"syslog-enabled", T_BOOL, O(syslog_enabled), "no", 0, 0, NULL, F_IMMUTABLE},
    {"syslog-ident", T_STR, O(syslog_ident), "redis", 0, 0, NULL, F_IMMUTABLE},
    {"syslog-facility", T_ENUM, O(syslog_facility), "local0", 0, 0, syslog_facility_enum, F_IMMUTABLE},
    {"dir", T_STR, O(dir), ".", 0, 0, NULL, F_PROTECTED | F_NOT_LOADING},
    {"dbfilename", T_STR, O(dbfilename), "dump.rdb", 0, 0, NULL, F_BASENAME | F_PROTECTED},
    {"save", T_STR, O(save), "3600 1 300 100 60 10000", 0, 0, NULL, 0},
    {"appendonly", T_BOOL, O(appendonly), "no", 0, 0, NULL, F_NOT_LOADING},
    {"appendfilename", T_STR, O(appendfilename), "appendonly.aof", 0, 0, NULL, F_IMMUTABLE | F_BASENAME},
    {"appenddirname", T_STR, O(appenddirname), "appendonlydir", 0, 0, NULL, F_IMMUTABLE | F_DIRNAME},
    {"aof-use-rdb-preamble", T_BOOL, O(aof_use_rdb_preamble), "yes", 0, 0, NULL, 0},
    {"aof-timestamp-enabled", T_BOOL, O(aof_timestamp_enabled), "no", 0, 0, NULL, 0},
    {"aof-disable-auto-gc", T_BOOL, O(aof_disable_auto_gc), "no", 0, 0, NULL, 0},
    {"aof-rewrite-incremental-fsync", T_BOOL, O(aof_rewrite_incremental_fsync), "yes", 0, 0, NULL, 0},
    {"rdb-save-incremental-fsync", T_BOOL, O(rdb_save_incremental_fsync), "yes", 0, 0, NULL, 0},
    {"no-appendfsync-on-rewrite", T_BOOL, O(no_appendfsync_on_rewrite), "no", 0, 0, NULL, 0},
    {"rdbcompression", T_BOOL, O(rdbcompression), "yes", 0, 0, NULL, 0},
    {"rdbchecksum", T_BOOL, O(rdbchecksum), "yes", 0, 0, NULL, 0},
    {"stop-writes-on-bgsave-error", T_BOOL, O(stop_writes_on_bgsave_error), "yes", 0, 0, NULL, 0},
    {"appendfsync", T_ENUM, O(appendfsync), "everysec", 0, 0, appendfsync_enum, 0},
    {"sanitize-dump-payload", T_ENUM, O(sanitize_dump_payload), "no", 0, 0, sanitize_enum, 0},
    {"auto-aof-rewrite-percentage", T_INT, O(auto_aof_rewrite_percentage), "100", 0, INT_MAX, NULL, 0},
    {"auto-aof-rewrite-min-size", T_MEM, O(auto_aof_rewrite_min_size), "64mb", 0, LLONG_MAX, NULL, 0},
    {"aof-load-truncated", T_BOOL, O(aof_load_truncated), "yes", 0, 0, NULL, 0},
    {"rdb-key-save-delay", T_INT, O(rdb_key_save_delay), "0", INT_MIN, INT_MAX, NULL, F_HIDDEN},
    {"key-load-delay", T_INT, O(key_load_delay), "0", INT_MIN, INT_MAX, NULL, F_HIDDEN},
    {"loading-process-events-interval-bytes", T_INT, O(loading_process_events_interval_bytes), "2097152", 1024, INT_MAX,
     NULL, F_HIDDEN},
    {"maxmemory", T_MEM, O(maxmemory), "0", 0, LLONG_MAX, NULL, 0},
    {"busy-reply-threshold", T_INT, O(busy_reply_threshold), "5000", 0, LLONG_MAX, NULL, 0},
    {"lua-enable-deprecated-api", T_BOOL, O(lua_enable_deprecated_api), "no", 0, 0, NULL, F_IMMUTABLE | F_HIDDEN},
    {"maxmemory-policy", T_ENUM, O(maxmemory_policy), "noeviction", 0, 0, policy_enum, 0},
    {"maxmemory-clients", T_MEM, O(maxmemory_clients), "0", 0, LLONG_MAX, NULL, F_PERCENT},
    {"maxmemory-eviction-tenacity", T_INT, O(maxmemory_eviction_tenacity), "10", 0, 100, NULL, 0},
    {"maxmemory-samples", T_INT, O(maxmemory_samples), "5", 1, 64, NULL, 0},
    {"jemalloc-bg-thread", T_BOOL, O(jemalloc_bg_thread), "yes", 0, 0, NULL, 0},
    {"active-expire-effort", T_INT, O(active_expire_effort), "1", 1, 10, NULL, 0},
    {"lazyfree-lazy-user-del", T_BOOL, O(lazyfree_lazy_user_del), "no", 0, 0, NULL, 0},
    {"lazyfree-lazy-expire", T_BOOL, O(lazyfree_lazy_expire), "no", 0, 0, NULL, 0},
    {"lazyfree-lazy-server-del", T_BOOL, O(lazyfree_lazy_server_del), "no", 0, 0, NULL, 0},
    {"lazyfree-lazy-eviction", T_BOOL, O(lazyfree_lazy_eviction), "no", 0, 0, NULL, 0},
    {"lazyfree-lazy-user-flush", T_BOOL, O(lazyfree_lazy_user_flush), "no", 0, 0, NULL, 0},
    {"activedefrag", T_BOOL, O(activedefrag), ZMALLOC_DEFRAG_DEFAULT, 0, 0, NULL, 0},
    {"activerehashing", T_BOOL, O(activerehashing), "yes", 0, 0, NULL, 0},
    {"lfu-log-factor", T_INT, O(lfu_log_factor), "10", 0, INT_MAX, NULL, 0},
    {"lfu-decay-time", T_INT, O(lfu_decay_time), "1", 0, INT_MAX, NULL, 0},
    {"active-defrag-ignore-bytes", T_MEM, O(active_defrag_ignore_bytes), "100mb", 1, LLONG_MAX, NULL, 0},
    {"active-defrag-ignore-percent", T_INT, O(active_defrag_ignore_percent), "10", 0, 1000, NULL, 0},
    {"active-defrag-threshold-lower", T_INT, O(active_defrag_threshold_lower), "10", 0, 1000, NULL, 0},
    {"active-defrag-threshold-upper", T_INT, O(active_defrag_threshold_upper), "100", 0, 1000, NULL, 0},
    {"active-defrag-cycle-min", T_INT, O(active_defrag_cycle_min), "1", 1, 99, NULL, 0},
    {"active-defrag-cycle-max", T_INT, O(active_defrag_cycle_max), "25", 1, 99, NULL, 0},
    {"active-defrag-max-scan-fields", T_INT, O(active_defrag_max_scan_fields), "1000", 1, LONG_MAX, NULL, 0},
    {"list-max-listpack-size", T_INT, O(list_max_listpack_size), "-2", -5, INT_MAX, NULL, 0},
    {"list-compress-depth", T_INT, O(list_compress_depth), "0", 0, INT_MAX, NULL, 0},
    {"hash-max-listpack-entries", T_INT, O(hash_max_listpack_entries), "512", 0, LLONG_MAX, NULL, 0},
    {"hash-max-listpack-value", T_INT, O(hash_max_listpack_value), "64", 0, LLONG_MAX, NULL, 0},
    {"set-max-intset-entries", T_INT, O(set_max_intset_entries), "512", 0, LLONG_MAX, NULL, 0},
    {"set-max-listpack-entries", T_INT, O(set_max_listpack_entries), "128", 0, LLONG_MAX, NULL, 0},
    {"set-max-listpack-value", T_INT, O(set_max_listpack_value), "64", 0, LLONG_MAX, NULL, 0},
    {"zset-max-listpack-entries", T_INT, O(zset_max_listpack_entries), "128", 0, LLONG_MAX, NULL, 0},
    {"zset-max-listpack-value", T_INT, O(zset_max_listpack_value), "64", 0, LLONG_MAX, NULL, 0},
    {"hll-sparse-max-bytes", T_MEM, O(hll_sparse_max_bytes), "3000", 0, LONG_MAX, NULL, 0},
    {"stream-node-max-bytes", T_MEM, O(stream_node_max_bytes), "4096", 0, LLONG_MAX, NULL, 0},
    {"stream-node-max-entries", T_INT, O(stream_node_max_entries), "100", 0, LLONG_MAX, NULL, 0},
    {"slowlog-log-slower-than", T_INT, O(slowlog_log_slower_than), "10000", -1, LLONG_MAX, NULL, 0},
    {"slowlog-max-len", T_INT, O(slowlog_max_len), "128", 0, LONG_MAX, NULL, 0},
    {"latency-monitor-threshold", T_INT, O(latency_monitor_threshold), "0", 0, LLONG_MAX, NULL, 0},
    {"io-engine", T_ENUM, O(io_engine), "auto", 0, 0, io_engine_enum, F_IMMUTABLE}, /* io_uring_engine.c */
    {"enable-debug-command", T_ENUM, O(enable_debug_command), "no", 0, 0, debug_enum, F_IMMUTABLE},
    {"enable-module-command", T_ENUM, O(enable_module_command), "no", 0, 0, debug_enum, F_IMMUTABLE},
    {"enable-protected-configs", T_ENUM, O(enable_protected_configs), "no", 0, 0, debug_enum, F_IMMUTABLE},
    {"supervised", T_ENUM, O(supervised), "no", 0, 0, supervised_enum, F_IMMUTABLE},
    {"crash-log-enabled", T_BOOL, O(crash_log_enabled), "yes", 0, 0, NULL, 0},
    {"always-show-logo", T_BOOL, O(always_show_logo), "no", 0, 0, NULL, F_IMMUTABLE},
    {"socket-mark-id", T_INT, O(socket_mark_id), "0", 0, UINT_MAX, NULL, F_IMMUTABLE},
    /* Redis 7.4's names; the 7.0 names (server_cpulist...) are aliases */
    {"server-cpulist", T_STR, O(server_cpulist), "", 0, 0, NULL, F_IMMUTABLE | F_CPULIST},
    {"bio-cpulist", T_STR, O(bio_cpulist), "", 0, 0, NULL, F_IMMUTABLE | F_CPULIST},
    {"aof-rewrite-cpulist", T_STR, O(aof_rewrite_cpulist), "", 0, 0, NULL, F_IMMUTABLE | F_CPULIST},
    {"bgsave-cpulist", T_STR, O(bgsave_cpulist), "", 0, 0, NULL, F_IMMUTABLE | F_CPULIST},
    {"hide-user-data-from-log", T_BOOL, O(hide_user_data_from_log), "no", 0, 0, NULL, 0},
    {"locale-collate", T_STR, O(locale_collate), "", 0, 0, NULL, F_LOCALE},
    {"max-new-connections-per-cycle", T_INT, O(max_new_conns_per_cycle), "10", 1, 1000, NULL, 0},
    {"max-new-tls-connections-per-cycle", T_INT, O(max_new_tls_conns_per_cycle), "1", 1, 1000, NULL, 0},
    {"latency-tracking", T_BOOL, O(latency_tracking), "yes", 0, 0, NULL, 0},
    {"latency-tracking-info-percentiles", T_PCTL, O(latency_tracking_info_percentiles), "50 99 99.9", 0, 0, NULL,
     0},
    {"tracking-table-max-keys", T_INT, O(tracking_table_max_keys), "1000000", 0, LONG_MAX, NULL, 0},
    {"notify-keyspace-events", T_NOTIFY, O(notify_keyspace_flags), "", 0, 0, NULL, 0},
    /* cluster (cluster*.c) */
    {"cluster-enabled", T_BOOL, O(cluster_enabled), "no", 0, 0, NULL, F_IMMUTABLE},
    {"cluster-config-file", T_STR, O(cluster_config_file), "nodes.conf", 0, 0, NULL, F_IMMUTABLE},
    {"cluster-node-timeout", T_INT, O(cluster_node_timeout), "15000", 0, LLONG_MAX, NULL, 0},
    {"cluster-port", T_INT, O(cluster_port), "0", 0, 65535, NULL, F_IMMUTABLE},
    {"cluster-announce-ip", T_STR, O(cluster_announce_ip), "", 0, 0, NULL, 0},
    {"cluster-announce-port", T_INT, O(cluster_announce_port), "0", 0, 65535, NULL, 0},
    {"cluster-announce-bus-port", T_INT, O(cluster_announce_bus_port), "0", 0, 65535, NULL, 0},
    {"cluster-announce-tls-port", T_INT, O(cluster_announce_tls_port), "0", 0, 65535, NULL, 0},
    {"cluster-announce-hostname", T_STR, O(cluster_announce_hostname), "", 0, 0, NULL, 0},
    {"cluster-preferred-endpoint-type", T_ENUM, O(cluster_preferred_endpoint_type), "ip", 0, 0, endpoint_enum, 0},
    {"cluster-require-full-coverage", T_BOOL, O(cluster_require_full_coverage), "yes", 0, 0, NULL, 0},
    {"cluster-allow-reads-when-down", T_BOOL, O(cluster_allow_reads_when_down), "no", 0, 0, NULL, 0},
    {"cluster-allow-pubsubshard-when-down", T_BOOL, O(cluster_allow_pubsubshard_when_down), "yes", 0, 0, NULL, 0},
    {"cluster-replica-validity-factor", T_INT, O(cluster_replica_validity_factor), "10", 0, INT_MAX, NULL, 0},
    {"cluster-migration-barrier", T_INT, O(cluster_migration_barrier), "1", 0, INT_MAX, NULL, 0},
    {"cluster-allow-replica-migration", T_BOOL, O(cluster_allow_replica_migration), "yes", 0, 0, NULL, 0},
    {"cluster-replica-no-failover", T_BOOL, O(cluster_replica_no_failover), "no", 0, 0, NULL, 0},
    {"cluster-link-sendbuf-limit", T_MEM, O(cluster_link_sendbuf_limit), "0", 0, LLONG_MAX, NULL, 0},
    /* access control (acl.c); "user" lines are kept apart, see add_user_line() */
    {"aclfile", T_STR, O(aclfile), "", 0, 0, NULL, F_IMMUTABLE},
    {"acllog-max-len", T_INT, O(acllog_max_len), "128", 0, LONG_MAX, NULL, 0},
    {"acl-pubsub-default", T_ENUM, O(acl_pubsub_default), "resetchannels", 0, 0, acl_pubsub_enum, 0},
    {"client-output-buffer-limit", T_OBUF, O(obuf_limits), "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60", 0, 0,
     NULL, 0},
    /* replication (repl_*.c); replicaof changes through REPLICAOF only */
    {"replicaof", T_STR, O(replicaof), "", 0, 0, NULL, F_IMMUTABLE},
    {"masterauth", T_SECRET, O(masterauth), "", 0, 0, NULL, 0},
    {"masteruser", T_STR, O(masteruser), "", 0, 0, NULL, 0},
    {"bind-source-addr", T_STR, O(bind_source_addr), "", 0, 0, NULL, 0}, /* the replica link's, next connect */
    {"ignore-warnings", T_STR, O(ignore_warnings), "", 0, 0, NULL, 0},
    {"replica-read-only", T_BOOL, O(replica_read_only), "yes", 0, 0, NULL, 0},
    {"replica-serve-stale-data", T_BOOL, O(replica_serve_stale_data), "yes", 0, 0, NULL, 0},
    {"replica-ignore-maxmemory", T_BOOL, O(replica_ignore_maxmemory), "yes", 0, 0, NULL, 0},
    {"replica-announced", T_BOOL, O(replica_announced), "yes", 0, 0, NULL, 0},
    {"repl-diskless-sync", T_BOOL, O(repl_diskless_sync), "yes", 0, 0, NULL, 0},
    {"repl-diskless-sync-delay", T_INT, O(repl_diskless_sync_delay), "5", 0, INT_MAX, NULL, 0},
    {"repl-diskless-sync-max-replicas", T_INT, O(repl_diskless_sync_max_replicas), "0", 0, INT_MAX, NULL, 0},
    {"repl-diskless-load", T_ENUM, O(repl_diskless_load), "disabled", 0, 0, diskless_load_enum, F_NOT_LOADING},
    {"repl-backlog-size", T_MEM, O(repl_backlog_size), "1mb", 1, LLONG_MAX, NULL, 0},
    {"repl-backlog-ttl", T_INT, O(repl_backlog_ttl), "3600", 0, INT_MAX, NULL, 0},
    {"repl-timeout", T_INT, O(repl_timeout), "60", 1, INT_MAX, NULL, 0},
    {"repl-ping-replica-period", T_INT, O(repl_ping_replica_period), "10", 1, INT_MAX, NULL, 0},
    {"min-replicas-to-write", T_INT, O(min_replicas_to_write), "0", 0, INT_MAX, NULL, 0},
    {"min-replicas-max-lag", T_INT, O(min_replicas_max_lag), "10", 0, INT_MAX, NULL, 0},
    {"replica-priority", T_INT, O(replica_priority), "100", 0, INT_MAX, NULL, 0},
    {"replica-lazy-flush", T_BOOL, O(replica_lazy_flush), "no", 0, 0, NULL, 0},
    {"rdb-del-sync-files", T_BOOL, O(rdb_del_sync_files), "no", 0, 0, NULL, 0},
    {"repl-disable-tcp-nodelay", T_BOOL, O(repl_disable_tcp_nodelay), "no", 0, 0, NULL, 0},
    {"replica-ignore-disk-write-errors", T_BOOL, O(replica_ignore_disk_write_errors), "no", 0, 0, NULL, 0},
    {"propagation-error-behavior", T_ENUM, O(propagation_error_behavior), "ignore", 0, 0, propagation_error_enum, 0},
    {"replica-announce-ip", T_STR, O(replica_announce_ip), "", 0, 0, NULL, 0},
    {"replica-announce-port", T_INT, O(replica_announce_port), "0", 0, 65535, NULL, 0},
};
#undef O
#define N_DIRECTIVES (sizeof(directives) / sizeof(directives[0]))

/* Redis 7.0's other names for directives: accepted wherever the name is
 * (files, CONFIG SET), and CONFIG GET answers them under the name asked
 * for; a pattern lists both names, as Redis does. */
static const struct { const char *alias, *name; } aliases[] = {
    {"hash-max-ziplist-entries", "hash-max-listpack-entries"},
    {"hash-max-ziplist-value", "hash-max-listpack-value"},
    {"zset-max-ziplist-entries", "zset-max-listpack-entries"},
    {"zset-max-ziplist-value", "zset-max-listpack-value"},
    {"list-max-ziplist-size", "list-max-listpack-size"},
    {"lua-time-limit", "busy-reply-threshold"},
    /* replication: Redis's older names */
    {"slaveof", "replicaof"},
    {"slave-read-only", "replica-read-only"},
    {"slave-serve-stale-data", "replica-serve-stale-data"},
    {"slave-ignore-maxmemory", "replica-ignore-maxmemory"},
    {"repl-ping-slave-period", "repl-ping-replica-period"},
    {"min-slaves-to-write", "min-replicas-to-write"},
    {"min-slaves-max-lag", "min-replicas-max-lag"},
    {"slave-priority", "replica-priority"},
    {"slave-announce-ip", "replica-announce-ip"},
    {"slave-announce-port", "replica-announce-port"},
    {"slave-lazy-flush", "replica-lazy-flush"},
    {"cluster-slave-validity-factor", "cluster-replica-validity-factor"},
    {"cluster-slave-no-failover", "cluster-replica-no-failover"},
    {"server_cpulist", "server-cpulist"},
    {"bio_cpulist", "bio-cpulist"},
    {"aof_rewrite_cpulist", "aof-rewrite-cpulist"},
    {"bgsave_cpulist", "bgsave-cpulist"},
};

static const directive *find_directive(const char *name) {
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (!strcasecmp(name, aliases[i].alias)) name = aliases[i].name;
    for (size_t i = 0; i < N_DIRECTIVES; i++)
        if (!strcasecmp(name, directives[i].name)) return &directives[i];
    return NULL;
}

/* Directives whose value is a string owned by the config: zmalloc'ed, or
 * an sds for T_SECRET. */
static bool owns_string(const directive *d) { return d->type == T_STR || d->type == T_PCTL || d->type == T_SECRET; }

static void free_owned(const directive *d, char **s) {
    if (d->type == T_SECRET) sds_free(*s);
    else zfree(*s);
    *s = NULL;
}

static void *field(rl_config_t *cfg, const directive *d) { return (char *)cfg + d->offset; }
static const void *cfield(const rl_config_t *cfg, const directive *d) { return (const char *)cfg + d->offset; }

static void free_bind(rl_config_t *cfg) {
    for (int i = 0; i < cfg->bind_count; i++) zfree(cfg->bind[i]);
    cfg->bind_count = 0;
}

static const char *const obuf_class_names[OBUF_CLASSES] = {"normal", "slave", "pubsub"};

/* "<class> <hard> <soft> <secs>" groups; classes not named keep their
 * limits.  Everything is checked before anything changes. */
static int apply_obuf(rl_config_t *cfg, int argc, char **argv, const char **err) {
    /* One quoted word holding the groups (--client-output-buffer-limit
     * "normal 2mb 0 0" on a command line) is split, as Redis does. */
    if (argc == 1 && strchr(argv[0], ' ')) {
        int n;
        sds *words = sds_splitargs(argv[0], &n);
        if (!words) {
            *err = "Wrong number of arguments in buffer limit configuration.";
            return -1;
        }
        int r = n == 1 ? -1 : apply_obuf(cfg, n, words, err);
        if (n == 1) *err = "Wrong number of arguments in buffer limit configuration.";
        sds_free_splitres(words, n);
        return r;
    }
    if (argc % 4 != 0) {
        *err = "Wrong number of arguments in buffer limit configuration.";
        return -1;
    }
    obuf_limit_t lim[OBUF_CLASSES];
    memcpy(lim, cfg->obuf_limits, sizeof(lim));
    for (int i = 0; i < argc; i += 4) {
        int cls;
        if (!strcasecmp(argv[i], "normal")) cls = OBUF_NORMAL;
        else if (!strcasecmp(argv[i], "slave") || !strcasecmp(argv[i], "replica")) cls = OBUF_REPLICA;
        else if (!strcasecmp(argv[i], "pubsub")) cls = OBUF_PUBSUB;
        else {
            *err = "Invalid client class specified in buffer limit configuration.";
            return -1;
        }
        unsigned long long hard, soft;
        long long secs;
        if (!util_memtoull(argv[i + 1], &hard) || !util_memtoull(argv[i + 2], &soft) ||
            !util_str2ll(argv[i + 3], strlen(argv[i + 3]), &secs) || hard > LLONG_MAX || soft > LLONG_MAX ||
            secs < 0) {
            *err = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
            return -1;
        }
        lim[cls] = (obuf_limit_t){(long long)hard, (long long)soft, secs};
    }
    memcpy(cfg->obuf_limits, lim, sizeof(lim));
    return 0;
}

/* "50 99 99.9": the words are split on single spaces (so "" is an empty
 * list and doubled spaces are an error, as in Redis), each a number in
 * 0..100, stored in the form CONFIG GET shows. */
static int apply_percentiles(rl_config_t *cfg, const directive *d, int argc, char **argv, const char **err) {
    sds joined = sds_empty();
    for (int i = 0; i < argc; i++) {
        if (i) joined = sds_cat(joined, " ");
        joined = sds_cat(joined, argv[i]);
    }
    sds out = sds_empty();
    const char *p = joined, *end = joined + sds_len(joined);
    int r = 0;
    while (sds_len(joined) && p <= end) {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        size_t len = sp ? (size_t)(sp - p) : (size_t)(end - p);
        double v;
        if (!util_str2d(p, len, &v) || isnan(v)) {
            *err = "Invalid latency-tracking-info-percentiles parameters";
            r = -1;
            break;
        }
        if (v < 0.0 || v > 100.0) {
            *err = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
            r = -1;
            break;
        }
        char buf[64];
        int n = snprintf(buf, sizeof(buf), "%f", v);
        while (n > 0 && buf[n - 1] == '0') n--; /* 99.900000 -> 99.9, 50.000000 -> 50 */
        if (n > 0 && buf[n - 1] == '.') n--;
        if (sds_len(out)) out = sds_cat(out, " ");
        out = sds_catlen(out, buf, (size_t)n);
        if (!sp) break;
        p = sp + 1;
    }
    sds_free(joined);
    if (r == 0) {
        char **s = field(cfg, d);
        zfree(*s);
        *s = zstrdup(out);
    }
    sds_free(out);
    return r;
}

/* Redis 7.0's text for a value not in an enum's list: the names in the
 * table's order (Redis's). */
static const char *enum_error(const enum_name *names) {
    static char msg[300];
    size_t len = (size_t)snprintf(msg, sizeof(msg), "argument(s) must be one of the following: ");
    for (const enum_name *e = names; e->name && len < sizeof(msg); e++)
        len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s", e == names ? "" : ", ", e->name);
    return msg;
}

/* oom-score-adj-values: three words, or one holding the three (a quoted
 * "0 200 800" on the command line), each -2000..2000. */
static int apply_oom_values(rl_config_t *cfg, const directive *d, int argc, char **argv, const char **err) {
    int n = argc;
    sds *words = NULL;
    if (argc == 1) {
        words = sds_splitargs(argv[0], &n);
        if (!words) n = 0;
        argv = words;
    }
    long long v[3];
    int r = 0;
    if (n != 3) {
        *err = "wrong number of arguments";
        r = -1;
    }
    for (int i = 0; i < 3 && r == 0; i++) {
        if (!util_str2ll(argv[i], strlen(argv[i]), &v[i]) || v[i] < d->min || v[i] > d->max) {
            *err = "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
            r = -1;
        }
    }
    if (r == 0) {
        int *out = field(cfg, d);
        for (int i = 0; i < 3; i++) out[i] = (int)v[i];
    }
    if (words) sds_free_splitres(words, n);
    return r;
}

/* T_FLAGS: one word per argument, or one argument of several words. */
static int apply_flags(rl_config_t *cfg, const directive *d, int argc, char **argv, const char **err) {
    int n = argc, flags = 0, r = 0;
    sds *words = NULL;
    if (argc == 1) {
        words = sds_splitargs(argv[0], &n);
        if (!words) n = 0;
        argv = words;
    }
    if (n == 0) { /* "": no word of the table (Redis's error too) */
        *err = enum_error(d->enums);
        r = -1;
    }
    for (int i = 0; i < n && r == 0; i++) {
        const enum_name *e = d->enums;
        while (e->name && strcasecmp(argv[i], e->name)) e++;
        if (!e->name) {
            *err = enum_error(d->enums);
            r = -1;
        }
        flags |= e->value;
    }
    if (r == 0 && (flags & SHUTDOWN_FLAG_SAVE) && (flags & SHUTDOWN_FLAG_NOSAVE)) {
        *err = "shutdown options SAVE and NOSAVE can't be used simultaneously";
        r = -1;
    }
    if (r == 0) *(int *)field(cfg, d) = flags;
    if (words) sds_free_splitres(words, n);
    return r;
}

/* A memory value, or with F_PERCENT "N%" (0..100), kept as -N: Redis
 * 7.0's form for maxmemory-clients, with its error texts. */
static int apply_mem_or_percent(rl_config_t *cfg, const directive *d, const char *arg, const char **err) {
    size_t len = strlen(arg);
    long long v;
    if (len > 1 && arg[len - 1] == '%') {
        if (!util_str2ll(arg, len - 1, &v) || v < 0) {
            *err = "argument must be a memory or percent value";
            return -1;
        }
        if (v > 100) {
            *err = "percentage argument must be less or equal to 100";
            return -1;
        }
        v = -v;
    } else {
        unsigned long long u;
        if (!util_memtoull(arg, &u) || u > LLONG_MAX) {
            *err = "argument must be a memory or percent value";
            return -1;
        }
        v = (long long)u;
    }
    *(long long *)field(cfg, d) = v;
    return 0;
}

/* proc-title-template: Redis checks a new template against where the
 * server listens as configured so far (a config file's earlier lines). */
static bool title_template_ok(const rl_config_t *cfg, const char *tpl) {
    proc_title_place_t where = {cfg->bind_count ? cfg->bind[0] : NULL, cfg->port, cfg->tls_port, cfg->unixsocket, NULL};
    sds s = proc_title_make(tpl, "", &where);
    sds_free(s);
    return s != NULL;
}

/* Whether setlocale(LC_COLLATE, name) would take it, asked without
 * changing the process's locale (a CONFIG SET is checked before it is
 * applied; lifecycle.c and CONFIG SET call setlocale). */
static bool locale_ok(const char *name) {
    locale_t l = newlocale(LC_COLLATE_MASK, name, (locale_t)0);
    if (l == (locale_t)0) return false;
    freelocale(l);
    return true;
}

/* Parse argv[0..argc) (sds words: T_SECRET reads their lengths) as the
 * value of d into cfg.  err gets a static reason. */
static int apply_value(rl_config_t *cfg, const directive *d, int argc, char **argv, const char **err) {
    if (d->type != T_BIND && d->type != T_STR && d->type != T_OBUF && d->type != T_PCTL && d->type != T_OOMV && d->type != T_FLAGS &&
        argc != 1) {
        *err = "wrong number of arguments";
        return -1;
    }
    switch (d->type) {
        case T_BOOL: {
            bool *b = field(cfg, d);
            if (!strcasecmp(argv[0], "yes")) *b = true;
            else if (!strcasecmp(argv[0], "no")) *b = false;
            else {
                *err = "argument must be 'yes' or 'no'";
                return -1;
            }
            return 0;
        }
        case T_INT:
        case T_MEM:
        case T_OCTAL: {
            long long v;
            if (d->flags & F_PERCENT) {
                return apply_mem_or_percent(cfg, d, argv[0], err);
            } else if (d->type == T_MEM) {
                unsigned long long u;
                if (!util_memtoull(argv[0], &u) || u > LLONG_MAX) {
                    *err = "argument must be a memory value";
                    return -1;
                }
                v = (long long)u;
            } else if (d->type == T_OCTAL) {
                char *end;
                errno = 0;
                v = strtoll(argv[0], &end, 8);
                if (*end || errno || !*argv[0]) {
                    *err = "argument must be an octal number";
                    return -1;
                }
            } else if (!util_str2ll(argv[0], strlen(argv[0]), &v)) {
                *err = "argument couldn't be parsed into an integer";
                return -1;
            }
            if (v < d->min || v > d->max) {
                static char msg[96]; /* Redis 7.0's text, with this directive's limits */
                snprintf(msg, sizeof(msg), "argument must be between %lld and %lld inclusive", d->min, d->max);
                *err = msg;
                return -1;
            }
            *(long long *)field(cfg, d) = v;
            return 0;
        }
        case T_ENUM:
            for (const enum_name *e = d->enums; e->name; e++) {
                if (!strcasecmp(argv[0], e->name)) {
                    *(int *)field(cfg, d) = e->value;
                    return 0;
                }
            }
            *err = enum_error(d->enums);
            return -1;
        case T_SECRET: { /* argv[0] is an sds: its bytes, NULs included */
            sds *s = field(cfg, d);
            sds_free(*s);
            *s = sds_newlen(argv[0], sds_len(argv[0]));
            return 0;
        }
        case T_STR: {
            if ((d->flags & (F_BASENAME | F_DIRNAME)) && argc == 1 && strchr(argv[0], '/')) {
                static char msg[96]; /* Redis 7.0's text */
                snprintf(msg, sizeof(msg), "%s can't be a path, just a %s", d->name,
                         d->flags & F_DIRNAME ? "dirname" : "filename");
                *err = msg;
                return -1;
            }
            /* Multi-word values (save "3600 1 300 100") are joined by spaces. */
            sds joined = sds_empty();
            for (int i = 0; i < argc; i++) {
                if (i) joined = sds_cat(joined, " ");
                joined = sds_cat(joined, argv[i]);
            }
            if ((d->flags & F_TITLE) && !title_template_ok(cfg, joined)) {
                sds_free(joined);
                *err = PROC_TITLE_ERR_TEMPLATE;
                return -1;
            }
            cpu_set_t cpus;
            if ((d->flags & F_CPULIST) && cpu_affinity_parse(joined, &cpus) < 0) {
                sds_free(joined);
                *err = CPU_AFFINITY_ERR;
                return -1;
            }
            if ((d->flags & F_LOCALE) && !locale_ok(joined)) {
                sds_free(joined);
                *err = "Invalid locale name"; /* Redis 7.4's text */
                return -1;
            }
            char **s = field(cfg, d);
            zfree(*s);
            *s = zstrdup(joined);
            sds_free(joined);
            return 0;
        }
        case T_NOTIFY: {
            int flags = notify_flags_from_string(argv[0]);
            if (flags < 0) {
                *err = NOTIFY_ERR_FLAGS;
                return -1;
            }
            *(int *)field(cfg, d) = flags;
            return 0;
        }
        case T_OBUF:
            return apply_obuf(cfg, argc, argv, err);
        case T_PCTL:
            return apply_percentiles(cfg, d, argc, argv, err);
        case T_OOMV:
            return apply_oom_values(cfg, d, argc, argv, err);
        case T_FLAGS:
            return apply_flags(cfg, d, argc, argv, err);
        case T_BIND:
            if (argc > CFG_MAX_BIND) {
                *err = "Too many bind addresses specified.";
                return -1;
            }
            free_bind(cfg);
            for (int i = 0; i < argc; i++) cfg->bind[cfg->bind_count++] = zstrdup(argv[i]);
            return 0;
    }
    return -1;
}

static int apply_text(rl_config_t *cfg, const directive *d, const char *text, const char **err) {
    /* A percentile list is split on single spaces by its own parser, so
     * that CONFIG SET's value is taken as Redis takes it. */
    if (d->type == T_PCTL) {
        char *one[1] = {(char *)text};
        return apply_value(cfg, d, 1, one, err);
    }
    int argc;
    sds *argv = sds_splitargs(text, &argc);
    if (!argv) {
        *err = "Unbalanced quotes in configuration line";
        return -1;
    }
    /* An empty value ("" in a file, or CONFIG SET x "") is one empty word. */
    sds empty[1] = {sds_empty()};
    int r = argc == 0 ? apply_value(cfg, d, 1, empty, err) : apply_value(cfg, d, argc, argv, err);
    sds_free_splitres(argv, argc);
    sds_free(empty[0]);
    return r;
}

void config_init_defaults(rl_config_t *cfg) {
    memset(cfg, 0, sizeof(*cfg));
    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        const char *err;
        if (apply_text(cfg, &directives[i], directives[i].def, &err) != 0) {
            fprintf(stderr, "bad default for %s: %s\n", directives[i].name, err);
            abort();
        }
    }
}

void config_free(rl_config_t *cfg) {
    free_bind(cfg);
    for (int i = 0; i < cfg->acl_user_count; i++) zfree(cfg->acl_user_lines[i]);
    zfree(cfg->acl_user_lines);
    zfree(cfg->acl_user_linenos);
    cfg->acl_user_lines = NULL;
    cfg->acl_user_linenos = NULL;
    cfg->acl_user_count = 0;
    for (int i = 0; i < cfg->ignored_count; i++) zfree(cfg->ignored[i]);
    zfree(cfg->ignored);
    cfg->ignored = NULL;
    cfg->ignored_count = 0;
    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        if (owns_string(&directives[i])) free_owned(&directives[i], field(cfg, &directives[i]));
    }
}

static void fatal_line(const char *file, int lineno, const char *line, const char *reason) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (redis-like %s) ***\n", RL_VERSION);
    fprintf(stderr, "Reading the configuration file, at line %d\n", lineno);
    fprintf(stderr, ">>> '%s'\n", line);
    fprintf(stderr, "%s (%s:%d)\n", reason, file, lineno);
}

/* activedefrag needs an allocator that can say where a block should move
 * (memory-pressure hook; see defrag.c): refuse it elsewhere, naming the
 * allocators that have it. */
static int check_supported(const rl_config_t *cfg, const directive *d, const char **err) {
    if (d->offset != offsetof(rl_config_t, activedefrag) || !cfg->activedefrag || zmalloc_has_defrag()) return 0;
    static char msg[200];
    snprintf(msg, sizeof(msg),
             "Active defragmentation is not supported with this build's allocator (%s): it needs jemalloc or "
             "ebbmalloc (build with MALLOC=jemalloc or MALLOC=ebbmalloc)",
             zmalloc_lib());
    *err = msg;
    return -1;
}

/* Redis 7.0 directives that redis-like has no parameter for (docs/
 * configuration.md), taken in a config file or on the command line so that a
 * Redis configuration loads unchanged.  `same` is the value that asks for
 * what redis-like does anyway, taken silently; any other value is taken
 * with `does` logged at start-up, which says what happens instead.
 * Cluster and the rest of Redis's parameters are refused as unknown. */
typedef struct {
    const char *name, *same;
    const char *does;
} redis_only_directive;

static const redis_only_directive redis_only[] = {
    {"io-threads", "1", "socket I/O runs on the main thread"},
    {"io-threads-do-reads", "no", "socket I/O runs on the main thread"},
    {"crash-memcheck-enabled", "no", "no memory test runs after a crash"},
};

static const redis_only_directive *find_redis_only(const char *name) {
    for (size_t i = 0; i < sizeof(redis_only) / sizeof(redis_only[0]); i++)
        if (!strcasecmp(redis_only[i].name, name)) return &redis_only[i];
    return NULL;
}

/* A line naming a redis_only directive: taken (0), noting in cfg->ignored
 * a value that asks for what redis-like does not do, or refused (-1) for
 * want of its one value. */
static int apply_redis_only(rl_config_t *cfg, const redis_only_directive *r, int argc, sds *argv,
                            const char **err) {
    if (argc != 2) {
        *err = "wrong number of arguments";
        return -1;
    }
    if (!strcasecmp(argv[1], r->same)) return 0;
    sds note = sds_catprintf(sds_empty(), "'%s %s' has no effect in redis-like: %s.", r->name, argv[1], r->does);
    cfg->ignored = zrealloc(cfg->ignored, sizeof(char *) * (size_t)(cfg->ignored_count + 1));
    cfg->ignored[cfg->ignored_count++] = zstrdup(note);
    sds_free(note);
    return 0;
}

/* "replicaof <host> <port>" (or "no one") as Redis checks it at start-up. */
static bool replicaof_ok(int argc, sds *argv, const char **err) {
    if (argc != 3) {
        *err = "wrong number of arguments";
        return false;
    }
    if (!strcasecmp(argv[1], "no") && !strcasecmp(argv[2], "one")) return true;
    char *end;
    long port = strtol(argv[2], &end, 10);
    if (port < 0 || port > 65535 || *end != '\0') {
        *err = "Invalid master port";
        return false;
    }
    return true;
}

/* One "name value..." line; 0 ok, -1 with *err set. */
static int apply_line(rl_config_t *cfg, const char *line, const char **err) {
    int argc;
    sds *argv = sds_splitargs(line, &argc);
    if (!argv) {
        *err = "Unbalanced quotes in configuration line";
        return -1;
    }
    int r = 0;
    bool is_save = false;
    if (argc > 0) {
        const directive *d = find_directive(argv[0]);
        is_save = d && !strcasecmp(d->name, "save");
        const redis_only_directive *ro = d ? NULL : find_redis_only(argv[0]);
        if (ro) {
            r = apply_redis_only(cfg, ro, argc, argv, err);
        } else if (!strcasecmp(argv[0], "loadmodule")) {
            /* ignoring it would leave the module's commands missing */
            *err = "redis-like cannot load Redis modules (there is no module API)";
            r = -1;
        } else if (!d) {
            *err = "Bad directive or wrong number of arguments";
            r = -1;
        } else if (argc < 2 && !strcasecmp(argv[0], "save")) {
            /* a bare "save" line is `save ""`, as Redis takes it (its
             * test suite writes one) */
            sds none[1] = {sds_empty()};
            r = apply_value(cfg, d, 1, none, err);
            sds_free(none[0]);
        } else if (argc < 2 && d->type == T_FLAGS) {
            *err = enum_error(d->enums); /* an empty list of words, as Redis reports it */
            r = -1;
        } else if (argc < 2) {
            *err = "wrong number of arguments";
            r = -1;
        } else if (!strcasecmp(d->name, "replicaof") && !replicaof_ok(argc, argv, err)) {
            r = -1;
        } else if (is_save && cfg->save_loaded && sds_len(argv[1]) > 0) {
            /* the first save line replaces the defaults, the next ones add
             * their points to it, as Redis reads them (`save ""` clears) */
            sds joined = sds_new(cfg->save ? cfg->save : "");
            for (int i = 1; i < argc; i++) {
                if (sds_len(joined)) joined = sds_cat(joined, " ");
                joined = sds_cat(joined, argv[i]);
            }
            sds one[1] = {joined};
            r = apply_value(cfg, d, 1, one, err);
            sds_free(joined);
        } else {
            r = apply_value(cfg, d, argc - 1, argv + 1, err);
            if (r == 0) r = check_supported(cfg, d, err);
        }
    }
    if (r == 0 && is_save) cfg->save_loaded = true;
    sds_free_splitres(argv, argc);
    return r;
}

/* "user <name> rules...": not a directive with one value but a list the
 * ACL layer applies at start-up (acl_init), with the line numbers it
 * reports errors at.  True if line was one. */
static bool add_user_line(rl_config_t *cfg, const char *line, int lineno) {
    if (strncasecmp(line, "user", 4) != 0 || !isspace((unsigned char)line[4])) return false;
    const char *rest = line + 4;
    while (isspace((unsigned char)*rest)) rest++;
    int n = cfg->acl_user_count + 1;
    cfg->acl_user_lines = zrealloc(cfg->acl_user_lines, sizeof(char *) * (size_t)n);
    cfg->acl_user_linenos = zrealloc(cfg->acl_user_linenos, sizeof(int) * (size_t)n);
    cfg->acl_user_lines[n - 1] = zstrdup(rest);
    cfg->acl_user_linenos[n - 1] = lineno;
    cfg->acl_user_count = n;
    return true;
}

int config_load_text(rl_config_t *cfg, const char *name, const char *text) {
    int lineno = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sds line = sds_newlen(p, len);
        lineno++;
        p += len + (nl ? 1 : 0);
        sds_range(line, 0, -1);
        while (sds_len(line) && isspace((unsigned char)line[sds_len(line) - 1])) sds_setlen(line, sds_len(line) - 1);
        size_t lead = 0;
        while (lead < sds_len(line) && isspace((unsigned char)line[lead])) lead++;
        if (lead == sds_len(line) || line[lead] == '#') {
            sds_free(line);
            continue;
        }
        if (add_user_line(cfg, line + lead, lineno)) {
            sds_free(line);
            continue;
        }
        const char *err = NULL;
        if (apply_line(cfg, line + lead, &err) != 0) {
            fatal_line(name, lineno, line + lead, err);
            sds_free(line);
            return -1;
        }
        sds_free(line);
    }
    return 0;
}

int config_load(rl_config_t *cfg, const char *path, int argc, char **argv) {
    sds text = sds_empty();
    if (path) {
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", path, strerror(errno));
            sds_free(text);
            return -1;
        }
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text = sds_catlen(text, buf, n);
        fclose(f);
        if (config_load_text(cfg, path, text) != 0) {
            sds_free(text);
            return -1;
        }
    }
    /* Command-line options become lines: "--port 7000 --save ''".  A word
     * starting with "--" names an option only once the previous option
     * has a value (so "--proc-title-template --my--title" gives the
     * template "--my--title", and "--port --loglevel verbose" is a port
     * line with two words, refused); "--port 7000" in one word carries its
     * value; a "--save" with nothing after it is `save ""`, as in Redis. */
    sds_clear(text);
    bool wants_value = false;
    for (int i = 0; i < argc; i++) {
        if (!wants_value && strncmp(argv[i], "--", 2) == 0) {
            if (sds_len(text)) text = sds_cat(text, "\n");
            text = sds_cat(text, argv[i] + 2);
            int words = 0;
            sds *w = sds_splitargs(argv[i], &words);
            if (w) sds_free_splitres(w, words);
            wants_value = words <= 1;
            bool nothing_follows = i == argc - 1 || strncmp(argv[i + 1], "--", 2) == 0;
            if (wants_value && !strcasecmp(argv[i], "--save") && nothing_follows) {
                text = sds_cat(text, " \"\"");
                wants_value = false;
            }
        } else {
            text = sds_cat(text, " ");
            text = sds_catrepr(text, argv[i], strlen(argv[i]));
            wants_value = false;
        }
    }
    int r = config_load_text(cfg, "command line", text);
    sds_free(text);
    return r;
}

const char *config_canonical_name(const char *name) {
    const directive *d = find_directive(name);
    return d ? d->name : NULL;
}

const char *config_policy_name(int policy) {
    for (const enum_name *e = policy_enum; e->name; e++)
        if (e->value == policy) return e->name;
    return "unknown";
}

char *config_get_value(const rl_config_t *cfg, const char *name) {
    const directive *d = find_directive(name);
    if (!d) return NULL;
    switch (d->type) {
        case T_BOOL: return sds_new(*(const bool *)cfield(cfg, d) ? "yes" : "no");
        case T_INT:
        case T_MEM: {
            long long v = *(const long long *)cfield(cfg, d);
            return v < 0 && (d->flags & F_PERCENT) ? sds_catprintf(sds_empty(), "%lld%%", -v) : sds_fromll(v);
        }
        case T_OCTAL: return sds_catprintf(sds_empty(), "%llo", *(const long long *)cfield(cfg, d));
        case T_STR:
        case T_PCTL: {
            const char *s = *(char *const *)cfield(cfg, d);
            return sds_new(s ? s : "");
        }
        case T_SECRET: {
            const sds s = *(const sds *)cfield(cfg, d);
            return s ? sds_dup(s) : sds_empty();
        }
        case T_ENUM:
            for (const enum_name *e = d->enums; e->name; e++)
                if (e->value == *(const int *)cfield(cfg, d)) return sds_new(e->name);
            return sds_empty();
        case T_NOTIFY: return notify_flags_to_string(*(const int *)cfield(cfg, d));
        case T_FLAGS: {
            int flags = *(const int *)cfield(cfg, d);
            if (!flags) return sds_new(d->enums[0].name);
            sds s = sds_empty();
            for (const enum_name *e = d->enums; e->name; e++)
                if (e->value & flags) s = sds_catprintf(s, "%s%s", sds_len(s) ? " " : "", e->name);
            return s;
        }
        case T_OOMV: {
            const int *v = cfield(cfg, d);
            return sds_catprintf(sds_empty(), "%d %d %d", v[0], v[1], v[2]);
        }
        case T_OBUF: {
            sds s = sds_empty();
            for (int i = 0; i < OBUF_CLASSES; i++) {
                const obuf_limit_t *l = &cfg->obuf_limits[i];
                s = sds_catprintf(s, "%s%s %lld %lld %lld", i ? " " : "", obuf_class_names[i], l->hard, l->soft,
                                  l->soft_secs);
            }
            return s;
        }
        case T_BIND: {
            sds s = sds_empty();
            for (int i = 0; i < cfg->bind_count; i++) {
                if (i) s = sds_cat(s, " ");
                s = sds_cat(s, cfg->bind[i]);
            }
            return s;
        }
    }
    return NULL;
}

void config_foreach_match(const rl_config_t *cfg, const char *pattern,
                          void (*fn)(void *arg, const char *name, const char *value), void *arg) {
    size_t plen = strlen(pattern);
    for (size_t i = 0; i < N_DIRECTIVES; i++) {
        const char *name = directives[i].name;
        if ((directives[i].flags & F_HIDDEN) && strcasecmp(pattern, name)) continue;
        if (!util_glob_match(pattern, plen, name, strlen(name), true)) continue;
        sds v = config_get_value(cfg, name);
        fn(arg, name, v);
        sds_free(v);
    }
}

void config_foreach_alias_match(const rl_config_t *cfg, const char *pattern,
                                void (*fn)(void *arg, const char *name, const char *value), void *arg) {
    size_t plen = strlen(pattern);
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
        const char *name = aliases[i].alias;
        if (!util_glob_match(pattern, plen, name, strlen(name), true)) continue;
        sds v = config_get_value(cfg, name);
        fn(arg, name, v);
        sds_free(v);
    }
}

/* Parse value into a scratch copy (so a bad value changes nothing), then
 * keep it only when commit. */
static int set_value(rl_config_t *cfg, const char *name, const char *value, const char **err, bool commit) {
    const directive *d = find_directive(name);
    if (!d) {
        *err = "Unknown option or number of arguments for CONFIG SET";
        return -1;
    }
    if (d->flags & F_IMMUTABLE) {
        *err = "can't set immutable config";
        return -1;
    }
    rl_config_t tmp = *cfg;
    void *slot = field(&tmp, d);
    char *old_str = owns_string(d) ? *(char **)slot : NULL;
    if (owns_string(d)) *(char **)slot = NULL;
    /* the copy of the bind list must not free cfg's strings */
    if (d->type == T_BIND) tmp.bind_count = 0;
    /* A string is taken as given, as Redis takes it: quotes, spaces and
     * (in a password) NULs are part of it.  Other types parse words. */
    char *as_given[1] = {(char *)value};
    int rc = (d->type == T_STR || d->type == T_SECRET ? apply_value(&tmp, d, 1, as_given, err)
                                                      : apply_text(&tmp, d, value, err)) != 0 ||
                     check_supported(&tmp, d, err) != 0
                 ? -1
                 : 0;
    if (rc != 0 || !commit) {
        if (owns_string(d)) free_owned(d, slot);
        if (d->type == T_BIND) free_bind(&tmp);
        return rc;
    }
    if (d->type == T_BIND) free_bind(cfg);
    *cfg = tmp;
    if (old_str) free_owned(d, &old_str);
    return 0;
}

int config_set(rl_config_t *cfg, const char *name, const char *value, const char **err) {
    return set_value(cfg, name, value, err, true);
}

int config_check(rl_config_t *cfg, const char *name, const char *value, const char **err) {
    return set_value(cfg, name, value, err, false);
}

bool config_is_immutable(const char *name) {
    const directive *d = find_directive(name);
    return d && (d->flags & F_IMMUTABLE);
}

bool config_is_secret(const char *name) {
    const directive *d = find_directive(name);
    return d && d->type == T_SECRET;
}

bool config_is_sensitive(const char *name) {
    const directive *d = find_directive(name);
    return d && (d->type == T_SECRET || !strcmp(d->name, "masteruser") || !strcmp(d->name, "tls-key-file-pass") ||
                 !strcmp(d->name, "tls-client-key-file-pass"));
}

bool config_is_protected(const char *name) {
    const directive *d = find_directive(name);
    return d && (d->flags & F_PROTECTED);
}

bool config_denied_while_loading(const char *name) {
    const directive *d = find_directive(name);
    return d && (d->flags & F_NOT_LOADING);
}
