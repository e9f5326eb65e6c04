/* server_cmds.c: server-wide commands: INFO, CONFIG, TIME, DEBUG,
 * SHUTDOWN, LASTSAVE.  They read and change server_t; data commands live
 * in the t_*.c and keyspace files. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "commands.h"
#include "evict.h"
#include "config_rewrite.h"
#include "evloop.h"
#include "defrag.h"
#include "info.h"
#include "lazyfree.h"
#include "listeners.h"
#include "loading.h"
#include "log.h"
#include "oom.h"
#include "aof.h"
#include "persist.h"
#include "repl.h"
#include "shutdown.h"
#include "tls.h"
#include "reply.h"
#include "rl_assert.h"
#include "util.h"

/* ---------------------------------------------------------------- INFO */

static void cmd_info(client_t *c) {
    char *names[64];
    int n = 0;
    for (int j = 1; j < c->argc && n < 64; j++) names[n++] = c->argv[j]->ptr;
    sds s = info_generate(c->srv, n, names);
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* ---------------------------------------------------------------- CONFIG */

typedef struct get_ctx {
    client_t *c;
    long n;
    dict *seen;
} get_ctx;

static dict_type seen_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};

static void config_get_one(void *arg, const char *name, const char *value) {
    get_ctx *g = arg;
    sds key = sds_new(name);
    if (dict_add(g->seen, key, NULL) != DICT_OK) { /* listed by an earlier pattern */
        sds_free(key);
        return;
    }
    reply_bulk_cstr(g->c, name);
    reply_bulk(g->c, value, sds_len((sds)value)); /* an sds: a password may hold a NUL */
    g->n++;
}

static void cmd_config_get(client_t *c) {
    get_ctx g = {c, 0, dict_create(&seen_type)};
    void *slot = reply_deferred_len(c);
    for (int j = 2; j < c->argc; j++) {
        config_foreach_match(&c->srv->cfg, c->argv[j]->ptr, config_get_one, &g);
        config_foreach_alias_match(&c->srv->cfg, c->argv[j]->ptr, config_get_one, &g);
    }
    reply_set_deferred_map_len(c, slot, g.n);
    dict_release(g.seen);
}

/* Side effects of a changed directive on running subsystems; NULL, or the
 * error that makes CONFIG SET put the old values back. */
static const char *config_apply(server_t *srv, const char *name) {
    acl_config_changed(srv, name); /* requirepass, acl-pubsub-default */
    if (!strcasecmp(name, "oom-score-adj") || !strcasecmp(name, "oom-score-adj-values"))
        return oom_apply(srv, repl_is_replica(srv) ? OOM_CLASS_REPLICA : OOM_CLASS_MASTER)
                   ? NULL
                   : "Failed to set current oom_score_adj. Check server logs.";
    if (!strcasecmp(name, "appendonly")) return aof_appendonly_changed(srv, srv->aof);
    /* listeners.c: a failure leaves no TCP listener, the rollback listens
     * again on the old values (Redis's texts) */
    /* tls.c: a tls-port needs a context first (Redis's order and texts) */
    if (!strcasecmp(name, "tls-port")) {
        if (srv->cfg.tls_port && !tls_server_ctx(srv) && !tls_configure(srv))
            return "Unable to update TLS configuration. Check server logs.";
        return listeners_follow_config(srv) ? NULL : "Unable to listen on this port. Check server logs.";
    }
    if (!strncasecmp(name, "tls-", 4)) return tls_config_changed(srv, name);
    if (!strcasecmp(name, "port") || !strcasecmp(name, "bind"))
        return listeners_follow_config(srv) ? NULL
               : !strcasecmp(name, "port")  ? "Unable to listen on this port. Check server logs."
                                            : "Failed to bind to specified addresses.";
    if (!strcasecmp(name, "locale-collate"))
        return setlocale(LC_COLLATE, srv->cfg.locale_collate) ? NULL : "Invalid locale name"; /* sort.c's strcoll */
    if (!strcasecmp(name, "hz") || !strcasecmp(name, "dynamic-hz")) server_adapt_hz(srv);
    else if (!strcasecmp(name, "proc-title-template")) server_set_proc_title(srv, NULL);
    else if (!strcasecmp(name, "loglevel")) log_set_level(srv->cfg.loglevel);
    else if (!strcasecmp(name, "jemalloc-bg-thread")) zmalloc_set_background_thread(srv->cfg.jemalloc_bg_thread);
    else if (!strcasecmp(name, "maxmemory") && srv->cfg.maxmemory) {
        /* Evict now, as Redis does, so the "evicted" events come with the
         * CONFIG SET that caused them. */
        size_t used = zmalloc_used_memory();
        if ((unsigned long long)srv->cfg.maxmemory < used)
            log_msg(LL_WARNING, "WARNING: the new maxmemory value set via CONFIG SET (%lld) is smaller than the "
                                "current memory usage (%zu). This will result in key eviction and/or the inability to "
                                "accept new write commands depending on the maxmemory-policy.",
                    srv->cfg.maxmemory, used);
        evict_perform(srv);
    }
    return NULL;
}

static void reply_config_set_error(client_t *c, const char *name, const char *err) {
    if (!strcmp(err, "Unknown option or number of arguments for CONFIG SET"))
        reply_error(c, "Unknown option or number of arguments for CONFIG SET - '%s'", name);
    else
        reply_error(c, "CONFIG SET failed (possibly related to argument '%s') - %s", name, err);
}

/* As Redis 7.0: every name is checked (known, mutable, not repeated), then
 * every value, and only then is anything set, so a failing pair leaves
 * the configuration as it was. */
static void cmd_config_set(client_t *c) {
    if ((c->argc - 2) % 2 != 0) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    const char *err = NULL;
    /* While a dataset loads (an async load too), a setting the load must
     * not see change is refused with -LOADING, in its turn among the
     * pairs as Redis checks them (the first failing pair answers). */
    bool loading = loading_active(c->srv);
    for (int j = 2; j < c->argc; j += 2) {
        const char *name = c->argv[j]->ptr;
        if (!config_canonical_name(name)) err = "Unknown option or number of arguments for CONFIG SET";
        else if (config_is_immutable(name)) err = "can't set immutable config";
        else if (config_is_protected(name) && !cmd_local_mode_allows(c, c->srv->cfg.enable_protected_configs))
            err = "can't set protected config";
        else if (loading && config_denied_while_loading(name)) {
            reply_error(c, LOADING_ERR);
            return;
        }
        for (int k = 2; k < j && !err; k += 2)
            if (!strcasecmp(c->argv[k]->ptr, name)) err = "duplicate parameter";
        if (err) {
            reply_config_set_error(c, name, err);
            return;
        }
    }
    for (int j = 2; j < c->argc; j += 2) {
        if (config_check(&c->srv->cfg, c->argv[j]->ptr, c->argv[j + 1]->ptr, &err) != 0) {
            reply_config_set_error(c, c->argv[j]->ptr, err);
            return;
        }
    }
    /* The old values, for when a side effect fails (config_apply): then
     * every parameter of the call goes back, as in Redis. */
    int npairs = (c->argc - 2) / 2;
    sds *old = zcalloc(sizeof(sds) * (size_t)npairs);
    for (int j = 2; j < c->argc; j += 2) old[(j - 2) / 2] = config_get_value(&c->srv->cfg, c->argv[j]->ptr);
    const char *failed = NULL, *failed_name = NULL;
    for (int j = 2; j < c->argc; j += 2) {
        int rc = config_set(&c->srv->cfg, c->argv[j]->ptr, c->argv[j + 1]->ptr, &err);
        rl_assert(rc == 0); /* checked above */
        (void)rc;
    }
    /* Side effects once every value is in (Redis's order): a certificate
     * and its key set together are loaded together, once. */
    bool tls_applied = false;
    for (int j = 2; j < c->argc && !failed; j += 2) {
        const char *name = c->argv[j]->ptr;
        bool tls_file = !strncasecmp(name, "tls-", 4) && strcasecmp(name, "tls-port");
        if (tls_file && tls_applied) continue;
        tls_applied |= tls_file;
        if ((failed = config_apply(c->srv, name))) failed_name = name;
    }
    if (failed) {
        for (int j = 2; j < c->argc; j += 2) config_set(&c->srv->cfg, c->argv[j]->ptr, old[(j - 2) / 2], &err);
        for (int j = 2; j < c->argc; j += 2) config_apply(c->srv, c->argv[j]->ptr);
        reply_config_set_error(c, failed_name, failed);
    } else {
        reply_ok(c);
    }
    for (int i = 0; i < npairs; i++) sds_free(old[i]);
    zfree(old);
}

static void cmd_config_resetstat(client_t *c) {
    server_t *srv = c->srv;
    dict *errors = srv->stats.errors;
    dict_empty(errors);
    memset(&srv->stats, 0, sizeof(srv->stats));
    srv->stats.errors = errors;
    srv->peak_memory = zmalloc_used_memory();
    commands_reset_stats(srv);
    acl_reset_stats(srv);
    lazyfree_reset_stats(srv->lazyfree);
    defrag_reset_stats(srv->defrag);
    evict_reset_stats(srv);
    reply_ok(c);
}

static void cmd_config_help(client_t *c) {
    static const char *help[] = {
        "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
        "RESETSTAT", "    Reset statistics reported by the INFO command.",
        "REWRITE", "    Rewrite the configuration file.", NULL};
    reply_help(c, "CONFIG", help);
}

static command_t config_subcommands[] = {
    {"get", cmd_config_get, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get the values of configuration parameters", "2.0.0", NULL},
    {"set", cmd_config_set, -4, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Set configuration parameters to the given values", "2.0.0", NULL},
    {"rewrite", cmd_config_rewrite, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Rewrite the configuration file with the in memory configuration", "2.8.0", NULL}, /* config_rewrite.c */
    {"resetstat", cmd_config_resetstat, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Reset the stats returned by INFO", "2.0.0", NULL},
    {"help", cmd_config_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {0},
};

/* ---------------------------------------------------------------- misc */

static void cmd_time(client_t *c) {
    long long us = util_ustime();
    reply_array_len(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

static void cmd_lastsave(client_t *c) { reply_ll(c, c->srv->lastsave); }

command_t server_commands[] = {
    {"info", cmd_info, -1, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get information and statistics about the server", "1.0.0", NULL},
    {"config", NULL, -2, 0, 0, 0, 0, "server", "A container for server configuration commands", "2.0.0", config_subcommands},
    {"time", cmd_time, 1, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server", "Return the current server time", "2.6.0", NULL},
    {"lastsave", cmd_lastsave, 1, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server", "Get the UNIX time stamp of the last successful save to disk", "1.0.0", NULL},
    {"shutdown", cmd_shutdown, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_NO_MULTI, 0, 0, 0, "server", "Synchronously save the dataset to disk and then shut down the server", "1.0.0", NULL},
    {0},
};
