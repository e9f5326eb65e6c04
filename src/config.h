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

enum { MAXMEMORY_NOEVICTION = 0, MAXMEMORY_ALLKEYS_LRU, MAXMEMORY_VOLATILE_LRU, MAXMEMORY_ALLKEYS_LFU,
       MAXMEMORY_VOLATILE_LFU, MAXMEMORY_ALLKEYS_RANDOM, MAXMEMORY_VOLATILE_RANDOM, MAXMEMORY_VOLATILE_TTL };

typedef struct rl_config {
    /* network */
    char *bind[CFG_MAX_BIND];
    int bind_count;
    long long port;
    char *unixsocket;
    long long unixsocketperm;
    long long tcp_backlog;
    long long tcp_keepalive;          /* seconds */
    long long timeout;                /* idle client timeout, seconds; 0 = none */
    bool protected_mode;
    long long maxclients;
    long long proto_max_bulk_len;     /* bytes */
    long long client_query_buffer_limit;  /* bytes */
    /* general */
    long long hz;
    long long databases;
    char *requirepass;                /* "" = none */
    int loglevel;
    char *logfile;
    char *pidfile;
    bool daemonize;
    char *dir;
    char *dbfilename;
    char *save;                       /* accepted for compatibility (persistence issue) */
    bool appendonly;
    char *appendfilename;
    /* memory */
    long long maxmemory;
    int maxmemory_policy;
    long long maxmemory_samples;
    bool jemalloc_bg_thread;
    long long active_expire_effort;
    bool lazyfree_lazy_user_del;
    bool lazyfree_lazy_expire;
    bool lazyfree_lazy_server_del;
    bool lazyfree_lazy_eviction;
    bool lazyfree_lazy_user_flush;
    bool activedefrag;
    /* encodings (data types issue) */
    long long list_max_listpack_size;
    long long list_compress_depth;
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long set_max_intset_entries;
    long long set_max_listpack_entries, set_max_listpack_value;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    /* introspection */
    long long slowlog_log_slower_than;
    long long slowlog_max_len;
    long long latency_monitor_threshold;
    char *notify_keyspace_events;
} rl_config_t;

typedef struct server server_t;

/* Fill cfg with every directive's default. */
void config_init_defaults(rl_config_t *cfg);
void config_free(rl_config_t *cfg);
/* Load a file and then the command-line overrides (argv pairs "--name
 * value..."), validating each line.  On error prints
 * "*** FATAL CONFIG FILE ERROR ***", the file:line, the line and the reason
 * to stderr and returns -1. */
int config_load(rl_config_t *cfg, const char *path, int argc, char **argv);
/* Set one directive from text; err receives a static reason on failure. */
int config_set(server_t *srv, const char *name, const char *value, const char **err);
/* Current value of a directive as text (caller frees with sds_free). */
char *config_get_value(const rl_config_t *cfg, const char *name);
/* Visit every directive whose name matches the glob. */
void config_foreach_match(const rl_config_t *cfg, const char *pattern,
                          void (*fn)(void *arg, const char *name, const char *value), void *arg);
const char *config_policy_name(int policy);

#endif
