/* lifecycle.c: start-up, the cron, shutdown (the top of the server).
 *
 * Start order: config (already loaded by main) -> random seeds -> shared
 * objects -> databases -> command table -> event loop (which routes
 * libevent's memory through zmalloc) -> listeners -> cron timer and signals.
 * The cron runs hz times a second: clock and LRU clock, memory sample,
 * ops/sec sample, active expiry, idle-client timeouts, incremental rehash,
 * allocator maintenance.  Shutdown (SIGTERM, SIGINT, SHUTDOWN) stops the
 * loop; main() then frees everything so the process exits valgrind-clean.
 * This is the one file that may include every module: it decides the start
 * and stop order and wires the lower layers' hooks (hooks.c). */
#include "lifecycle.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "blocking.h"
#include "commands.h"
#include "child.h"
#include "defrag.h"
#include "evict.h"
#include "lazyfree.h"
#include "listeners.h"
#include "conn.h"
#include "evloop.h"
#include "io_engine.h"
#include "script.h"
#include "expire.h"
#include "function.h"
#include "hooks.h"
#include "keyspace.h"
#include "latency.h"
#include "monitor.h"
#include "pubsub.h"
#include "pause.h"
#include "tracking.h"
#include "ttl_index.h"
#include "slowlog.h"
#include "log.h"
#include "oom.h"
#include "multi.h"
#include "net.h"
#include "persist.h"
#include "propagate.h"
#include "repl.h"
#include "client_evict.h"
#include "cluster.h"
#include "cluster_bus.h"
#include "cpu_affinity.h"
#include "crash.h"
#include "shutdown.h"
#include "supervise.h"
#include "thp.h"
#include "tls.h"
#include "util.h"
#include "version.h"
#include "zmalloc.h"

static dict_type error_stats_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};

/* Ops/sec and network rates: one sample per 100 ms into 16-slot rings. */
static void sample_rates(server_t *srv) {
    server_stats_t *st = &srv->stats;
    long long now = util_mstime(), dt = now - st->ops_last_ms;
    if (dt < 100) return;
    int i = st->ops_idx;
    st->ops_samples[i] = (st->numcommands - st->ops_last_count) * 1000 / dt;
    st->net_in_samples[i] = (st->net_input_bytes - st->net_in_last) * 1000 / dt;
    st->net_out_samples[i] = (st->net_output_bytes - st->net_out_last) * 1000 / dt;
    st->net_repl_in_samples[i] = (st->net_repl_input_bytes - st->net_repl_in_last) * 1000 / dt;
    st->net_repl_out_samples[i] = (st->net_repl_output_bytes - st->net_repl_out_last) * 1000 / dt;
    st->cycles_samples[i] = (st->eventloop_cycles - st->cycles_last) * 1000 / dt;
    /* the mean round of the last 100 ms, as Redis samples it */
    long long rounds = st->eventloop_cycles - st->cycles_last;
    st->el_duration_samples[i] = rounds > 0 ? (st->eventloop_duration_sum - st->el_duration_last) / rounds : 0;
    st->el_duration_last = st->eventloop_duration_sum;
    st->cycles_last = st->eventloop_cycles;
    st->ops_idx = (i + 1) % 16;
    st->ops_last_ms = now;
    st->ops_last_count = st->numcommands;
    st->net_in_last = st->net_input_bytes;
    st->net_out_last = st->net_output_bytes;
    st->net_repl_in_last = st->net_repl_input_bytes;
    st->net_repl_out_last = st->net_repl_output_bytes;
}

/* Shrinks start here whatever activerehashing says; with it off a resize
 * moves on only as commands touch the table (one bucket each), so an idle
 * server keeps both tables, as Redis does. */
static void resize_tables(server_t *srv) {
    for (int i = 0; i < srv->dbnum; i++) {
        db_t *db = &srv->dbs[i];
        ht_shrink_if_needed(db->keys);
        if (srv->cfg.activerehashing && ht_is_resizing(db->keys)) ht_rehash_us(db->keys, 1000);
        ttl_index_cron(db, 1000); /* an index being built over a big table */
    }
}

/* oom-score-adj: the role's score (oom.c writes it only when it changes). */
static void apply_oom_score(server_t *srv) {
    oom_apply(srv, repl_is_replica(srv) ? OOM_CLASS_REPLICA : OOM_CLASS_MASTER);
}

/* The log's role letter: 'S' while we replicate a master (lib/log.c). */
static char log_role(void *arg) { return repl_is_replica(arg) ? 'S' : 'M'; }

static void server_cron(void *arg) {
    server_t *srv = arg;
    server_update_clock(srv);
    srv->cron_loops++;
    server_adapt_hz(srv);
    apply_oom_score(srv);
    io_engine_cron(srv); /* the receive buffer ring sized to the load, idle pages given back */
    server_sample_memory(srv);
    srv->mem.io_buffers = io_engine_memory(srv); /* sampled with rss: mem_fragmentation_ratio takes it out */
    sample_rates(srv);
    if (!srv->active_expire_off) expire_active_cycle(srv);
    persist_cron(srv);   /* child reaping (child.c), save points, AOF fsync/rewrite */
    scripting_cron(srv); /* forked SCRIPT DEBUG sessions that ended */
    repl_cron(srv);      /* replication: pings, ACKs, timeouts, reconnects, WAIT */
    if (srv->cluster) {
        cluster_bus_cron(srv); /* links, pings, failure detection */
        cluster_cron(srv);
    }
    shutdown_cron(srv); /* a shutdown waiting for replicas */
    conn_cron(srv);
    client_evict_run(srv);     /* maxmemory-clients, with the sizes conn_cron measured */
    tracking_cron(srv);        /* tracking-table-max-keys */
    pause_check_deadline(srv); /* CLIENT PAUSE ends on time even when idle */
    resize_tables(srv);
    defrag_cron(srv); /* active defrag slice (memory issue) */
    zmalloc_maintain();
    if (srv->shutdown_asap) evloop_stop(srv->loop);
}

/* persist.c writes the AOF buffer before replies leave (appendfsync
 * always: they are on disk before any client sees an acknowledgement). */
static void server_before_sleep(void *arg) {
    unsigned rounds = 0;
    do {
        io_engine_run_ready(arg);                                  /* io_uring: requests that arrived, before the AOF and replies go out */
        repl_before_sleep(arg);                                    /* WAIT: GETACK out and answers, flushed just below */
        if (((server_t *)arg)->cluster) cluster_before_sleep(arg); /* nodes.conf before the replies leave */
        persist_before_sleep(arg);
        repl_after_aof_flush(arg); /* WAITAOF: a replica's FACK right after its fsync */
        conn_before_sleep(arg);
    } while (io_engine_continue(arg, ++rounds)); /* io_uring, busy: the next round's requests are here */
    /* maxmemory-clients, once the replies that could leave have left: a
     * client is not closed for an answer it was about to receive. */
    client_evict_run(arg);
    evict_before_sleep(arg); /* maxmemory: what a call had no time left for */
}

/* evloop's round hook: INFO's eventloop_cycles and eventloop_duration_sum. */
static void on_loop_round(void *arg, long long duration_us) {
    server_stats_t *st = &((server_t *)arg)->stats;
    st->eventloop_cycles++;
    st->eventloop_duration_sum += duration_us;
}

static void on_signal(int signo, void *arg) {
    server_t *srv = arg;
    log_msg(LL_WARNING, "Received %s scheduling shutdown...", signo == SIGINT ? "SIGINT" : "SIGTERM");
    srv->shutdown_signal = signo;
    server_request_shutdown(srv);
}

/* SIGTERM or SIGINT while the data loads at start-up (the loop's own
 * handlers come after it): the load stops at its next step, and the
 * server exits without saving (loading.h), as Redis's does. */
static server_t *loading_srv; /* a signal handler takes no argument: the process's one server */

static void on_signal_while_loading(int signo) {
    loading_srv->shutdown_signal = signo;
    loading_srv->shutdown_asap = true;
}

static void catch_signals_while_loading(server_t *srv) {
    loading_srv = srv;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal_while_loading;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

/* `supervised`: which manager, told that the dataset is being loaded
 * (systemd shows it as the unit's status). */
static void start_supervision(server_t *srv) {
    int asked = srv->cfg.supervised;
    srv->cfg.supervised = supervise_resolve(asked); /* CONFIG GET shows what auto chose, as in Redis */
    if (srv->cfg.supervised == SUPERVISED_SYSTEMD) {
        log_msg(LL_NOTICE, "Supervised by systemd: readiness and shutdown are notified to it "
                           "(set TimeoutStartSec and TimeoutStopSec to cover loading and the final save).");
        if (!supervise_notify("STATUS=Redis is loading...\n"))
            log_msg(LL_WARNING, "systemd supervision asked for, but NOTIFY_SOCKET is not set or not reachable.");
    } else if (srv->cfg.supervised == SUPERVISED_UPSTART) {
        log_msg(LL_NOTICE, "Supervised by upstart: the server stops itself once ready (SIGSTOP).");
    } else if (asked != SUPERVISED_NO) {
        log_msg(LL_NOTICE, "supervised auto: neither UPSTART_JOB nor NOTIFY_SOCKET is set, no supervision.");
    }
}

/* Start-up is over: the manager may consider the service started. */
static void signal_ready(server_t *srv) {
    if (srv->cfg.supervised == SUPERVISED_SYSTEMD) {
        supervise_notify(repl_is_replica(srv) ? "STATUS=Ready to accept connections in read-only mode. "
                                                "Waiting for MASTER <-> REPLICA sync\n"
                                              : "STATUS=Ready to accept connections\n");
        supervise_notify("READY=1\n");
    } else if (srv->cfg.supervised == SUPERVISED_UPSTART) {
        supervise_upstart_ready();
    }
}

/* `pidfile`, written once the process is the one that serves.  A
 * daemonized server writes one even when none is configured, at
 * RL_DEFAULT_PIDFILE, as Redis writes /var/run/redis.pid: an init script
 * that daemonizes a server expects to find its pid.  A file that cannot be
 * written is reported and start-up goes on, as in Redis.  Written once the
 * sockets are bound (Redis too writes it after binding), so a second
 * server started on a busy port fails without touching the first one's
 * file; it is written once the data is loaded. */
static void write_pidfile(server_t *srv) {
    if (srv->daemonized && !(srv->cfg.pidfile && srv->cfg.pidfile[0])) {
        zfree(srv->cfg.pidfile);
        srv->cfg.pidfile = zstrdup(RL_DEFAULT_PIDFILE);
    }
    if (!srv->cfg.pidfile || !srv->cfg.pidfile[0]) return;
    FILE *f = fopen(srv->cfg.pidfile, "w");
    if (!f) {
        log_msg(LL_WARNING, "Failed to write PID file: %s", strerror(errno));
        return;
    }
    fprintf(f, "%d\n", (int)srv->pid);
    srv->pidfile_written = fclose(f) == 0;
}


/* always-show-logo, or a terminal on stdout with no log file: the
 * banner (our own drawing) with what Redis's shows beside it; else the
 * one line Redis logs instead. */
static void show_banner(const server_t *srv) {
    bool tty = (!srv->cfg.logfile || !srv->cfg.logfile[0]) && isatty(STDOUT_FILENO);
    if (!srv->cfg.always_show_logo && !tty) {
        log_msg(LL_NOTICE, "Running mode=%s, port=%lld.", srv->cfg.cluster_enabled ? "cluster" : "standalone",
                srv->cfg.port);
        return;
    }
    sds s = sds_catprintf(sds_empty(),
                          "\n"
                          "      ~~~~    ~~~~    ~~~~        redis-like %s, %d bit, allocator %s\n"
                          "    ~~    ~~~~    ~~~~    ~~      Running in %s mode\n"
                          "   ~   redis-like  key-value  ~   Port: %lld\n"
                          "    ~~    ~~~~    ~~~~    ~~      PID: %d\n"
                          "      ~~~~    ~~~~    ~~~~\n\n",
                          RL_VERSION, (int)(sizeof(long) * 8), zmalloc_lib(),
                          srv->cfg.cluster_enabled ? "cluster" : "standalone", srv->cfg.port, (int)srv->pid);
    log_write_raw(s, sds_len(s));
    sds_free(s);
}
bool server_init(server_t *srv) {
    hooks_register(srv); /* the lower layers' calls up, before anything runs */
    crash_install(srv);  /* crash-log-enabled: a report in the log if we go down */
    /* server_cpulist: before any thread starts, so that the ones without a
     * list of their own (the allocator's) run there too. */
    cpu_affinity_apply(srv->cfg.server_cpulist, "main thread");
    /* locale-collate (checked when the file was read): SORT ALPHA's strcoll;
     * "" is the environment's LC_ALL/LC_COLLATE/LANG, as in Redis */
    setlocale(LC_COLLATE, srv->cfg.locale_collate);
    uint8_t seed[16];
    util_random_bytes(seed, sizeof(seed));
    dict_set_hash_seed(seed);
    srandom((unsigned)(seed[0] | seed[1] << 8 | seed[2] << 16) ^ (unsigned)getpid());
    util_random_hex(srv->run_id, 40);
    srv->run_id[40] = '\0';
    srv->pid = getpid();
    server_update_clock(srv);
    srv->start_time_ms = srv->mstime;
    srv->lastsave = srv->mstime / 1000;
    srv->stats.ops_last_ms = srv->mstime;
    srv->stats.errors = dict_create(&error_stats_type);
    log_set_level(srv->cfg.loglevel);
    log_set_role_source(log_role, srv);
    signal(SIGPIPE, SIG_IGN);
    obj_create_shared();
    db_init_all(srv);
    srv->evict = evict_create(); /* maxmemory pool, bio thread, defrag */
    cpu_set_t bio_cpus;
    srv->lazyfree = lazyfree_create(cpu_affinity_of(srv->cfg.bio_cpulist, &bio_cpus));
    srv->defrag = defrag_create();
    srv->blocking = blocking_create(srv);
    srv->pubsub = pubsub_create();     /* pub/sub and introspection state */
    srv->tracking = tracking_create(); /* client-side caching */
    srv->pause = pause_create();       /* CLIENT PAUSE */
    srv->slowlog = slowlog_create();
    srv->latency = latency_create();
    srv->monitors = monitor_create();
    commands_init(srv);
    if (!acl_init(srv)) return false; /* users: config lines or aclfile */
    multi_init(srv);
    scripting_init(srv); /* before loading: RDB functions, AOF scripts */
    functions_init(srv); /* FUNCTION's registry, in srv->scripting */
    srv->loop = evloop_create();
    if (!srv->loop) {
        log_msg(LL_WARNING, "Failed creating the event loop");
        return false;
    }
    evloop_set_before_sleep(srv->loop, server_before_sleep, srv);
    evloop_set_round_hook(srv->loop, on_loop_round, srv);
    if (!io_engine_init(srv, conn_io_ops())) return false; /* io-engine: epoll or io_uring */
    zmalloc_set_background_thread(srv->cfg.jemalloc_bg_thread);
    child_init(srv);     /* the one forked child slot: BGSAVE, AOF rewrite, full syncs */
    persist_init(srv);   /* then load the AOF or RDB before listening */
    propagate_init(srv); /* the write stream to the AOF and replicas */
    repl_init(srv);      /* `replicaof`: the cron connects once we run */
    apply_oom_score(srv);
    thp_apply(srv); /* disable-thp: before the dataset is loaded */
    start_supervision(srv);
    /* The banner (with the PID) and "Server initialized" come before the
     * data is loaded, as in Redis: a start-up that fails loading a file
     * shows them first (Redis's test suite waits for the PID line). */
    show_banner(srv);
    log_msg(LL_WARNING, "Server initialized"); /* Redis logs it as a warning */
    /* nodes.conf, before the data; then the bus's listeners */
    if (srv->cfg.cluster_enabled && (!cluster_init(srv) || !cluster_bus_init(srv))) return false;
    /* tls.c: a tls-port or a TLS link needs the contexts before listening */
    if (tls_wanted(srv) && !tls_configure(srv)) {
        log_msg(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        return false;
    }
    /* Listening before the load, as Redis does: a client that connects
     * meanwhile gets -LOADING, INFO shows the progress (loading.h). */
    if (!listeners_open(srv)) return false;
    catch_signals_while_loading(srv);
    if (!persist_load_at_startup(srv)) {
        if (srv->shutdown_signal)
            log_msg(LL_WARNING, "Received %s during loading, shutting down without saving.",
                    srv->shutdown_signal == SIGINT ? "SIGINT" : "SIGTERM");
        return false;
    }
    server_set_proc_title(srv, NULL);
    srv->hz = (int)srv->cfg.hz;
    srv->cron_timer = evloop_timer_add(srv->loop, 1000000 / srv->hz, server_cron, srv);
    evloop_signal_add(srv->loop, SIGTERM, on_signal, srv);
    evloop_signal_add(srv->loop, SIGINT, on_signal, srv);
    write_pidfile(srv); /* once listening: a start that failed to bind leaves another's file alone */
    server_sample_memory(srv);
    srv->startup_memory = zmalloc_used_memory();
    srv->peak_memory = srv->startup_memory;
    return true;
}

/* A signal's shutdown, with the flags shutdown-on-sigterm / -sigint give
 * it: true when the server exits now (shutdown.c). */
static bool signal_shutdown(server_t *srv, int signo) {
    int flags = signo == SIGINT ? srv->cfg.shutdown_on_sigint : srv->cfg.shutdown_on_sigterm;
    return shutdown_begin(srv, flags, NULL);
}

void server_run(server_t *srv) {
    if (srv->cfg.port) log_msg(LL_NOTICE, "Ready to accept connections tcp");
    if (srv->unix_path_bound) log_msg(LL_NOTICE, "Ready to accept connections unix");
    signal_ready(srv);
    for (;;) {
        while (!srv->shutdown_asap) {
            if (evloop_run(srv->loop) != 0) break;
        }
        /* A signal stops the loop (it may have to end a busy script): the
         * shutdown proper runs here, and may wait for replicas (the cron
         * ends it) or fail, the server then running on. */
        int signo = srv->shutdown_signal;
        if (!srv->shutdown_asap || !signo) break;
        srv->shutdown_asap = false;
        srv->shutdown_signal = 0;
        if (signal_shutdown(srv, signo)) break;
    }
    persist_shutdown(srv, false, false, false); /* the loop failed: still close the AOF (else a no-op) */
    log_msg(LL_WARNING, "redis-like is now ready to exit, bye bye...");
}

void server_free(server_t *srv) {
    /* The listeners first, as Redis closes them before it exits: a client
     * that saw its connection end (SHUTDOWN's own) and dials again is
     * refused rather than accepted by a server on its way out. */
    listeners_close(srv);
    while (srv->clients_head) conn_free(srv->clients_head);
    blocking_free(srv->blocking); /* after the clients: they unblock as they go */
    srv->blocking = NULL;
    pubsub_free(srv->pubsub);     /* after the clients: they unsubscribe as they go */
    tracking_free(srv->tracking); /* after the clients: they stop tracking as they go */
    srv->tracking = NULL;
    pause_free(srv->pause); /* after the clients: they leave the queue as they go */
    srv->pause = NULL;
    slowlog_free(srv->slowlog);
    latency_free(srv->latency);
    monitor_free(srv->monitors);
    srv->pubsub = NULL;
    srv->slowlog = NULL;
    srv->latency = NULL;
    srv->monitors = NULL;
    cluster_bus_free(srv); /* its links and listeners live in the loop */
    repl_close_link(srv);  /* so does a replica's link to its master */
    if (srv->pidfile_written) unlink(srv->cfg.pidfile);
    evloop_timer_free(srv->cron_timer);
    defrag_release_timer(srv->defrag); /* its slice timer lives in the loop */
    io_engine_free(srv);               /* after the clients: their cancels were queued */
    tls_free(srv);                     /* clients hold their own references to the contexts */
    evloop_free(srv->loop);
    lazyfree_destroy(srv->lazyfree); /* finishes queued frees, joins the bio thread */
    srv->lazyfree = NULL;
    evict_free(srv->evict);
    defrag_free(srv->defrag);
    srv->evict = NULL;
    srv->defrag = NULL;
    repl_free(srv);
    propagate_free(srv);
    persist_free(srv);
    child_free(srv); /* persist_shutdown killed a running child */
    db_free_all(srv);
    cluster_free(srv);
    acl_free(srv);
    commands_free(srv);
    multi_free(srv);
    functions_free(srv); /* before the scripting state it hangs off */
    scripting_free(srv);
    dict_release(srv->stats.errors);
    for (int i = 0; i < OBJ_SHARED_INTEGERS; i++) zfree(shared_integers[i]);
    config_free(&srv->cfg);
    zfree(srv->config_file);
    zfree(srv->executable);
}
