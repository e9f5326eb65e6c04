/* server_main.c: main() of redis-like-server: command line, config, and the
 * server's life from init to exit.  Kept apart from lifecycle.c so the server
 * library (libredislike.a) can be linked into unit tests without a main. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "lifecycle.h"
#include "proc_title.h"
#include "selftest.h"
#include "sizehist.h"
#include "supervise.h"
#include "tls.h"
#include "version.h"

/* --help: the ways to start it, as Redis's usage lists them (on stderr,
 * exit status 1, as Redis) */
static void usage(void) {
    fprintf(stderr,
            "Usage: ./redis-like-server [/path/to/redis-like.conf] [options] [-]\n"
            "       ./redis-like-server - (read config from stdin)\n"
            "       ./redis-like-server -v or --version\n"
            "       ./redis-like-server -h or --help\n"
            "       ./redis-like-server --test-memory <megabytes>\n"
            "       ./redis-like-server --check-system\n\n"
            "Examples:\n"
            "       ./redis-like-server (run the server with default config)\n"
            "       echo 'maxmemory 128mb' | ./redis-like-server -\n"
            "       ./redis-like-server redis-like.conf\n"
            "       ./redis-like-server --port 7777\n"
            "       ./redis-like-server --port 7777 --replicaof 127.0.0.1 8888\n"
            "       ./redis-like-server redis-like.conf --loglevel verbose --save \"\"\n"
            "       ./redis-like-server redis-like.conf --io-engine epoll\n\n"
            "Any directive of redis-like.conf may follow as --name value; see docs/configuration.md.\n");
    exit(1);
}

/* The socket engines this binary has; `io-engine auto` (the default) takes
 * the first the kernel allows. */
#ifdef RL_HAVE_URING
#define RL_IO_ENGINES "io_uring,epoll"
#else
#define RL_IO_ENGINES "epoll"
#endif

/* --version: Redis's fields first (tools parse v= and malloc=), then the
 * Redis version whose surface we match and the socket engines. */
static void version(void) {
    printf("redis-like server v=%s sha=00000000:0 malloc=%s bits=%d build=%s redis=%s io-engine=auto(%s)\n",
           RL_VERSION, zmalloc_lib(), (int)(sizeof(long) * 8), RL_BUILD_ID, RL_REDIS_COMPAT_VERSION, RL_IO_ENGINES);
    exit(0);
}

/* The configuration given on stdin (`-` as the config file, or as the last
 * argument), as Redis reads it: after the file, before the options. */
static sds read_stdin(void) {
    sds text = sds_empty();
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0) text = sds_catlen(text, buf, n);
    return text;
}

/* File, then stdin, then the command line's options; 0 or -1 (reported). */
static int load_config(rl_config_t *cfg, const char *path, bool from_stdin, int argc, char **argv) {
    if (path && config_load(cfg, path, 0, NULL) != 0) return -1;
    if (from_stdin) {
        sds text = read_stdin();
        int r = config_load_text(cfg, "stdin", text);
        sds_free(text);
        if (r != 0) return -1;
    }
    return config_load(cfg, NULL, argc, argv);
}

static char *absolute_path(const char *p) {
    char buf[PATH_MAX];
    if (realpath(p, buf)) return zstrdup(buf);
    return zstrdup(p);
}

static char *self_executable(void) {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return zstrdup("");
    buf[n] = '\0';
    return zstrdup(buf);
}

int main(int argc, char **argv) {
    static server_t srv;
    const char *config_path = NULL;
    int first_opt = 1;
    sizehist_own_thread();       /* this thread's allocations count without locked adds */
    tls_use_zmalloc();           /* OpenSSL's memory in used_memory: before its first allocation */
    proc_title_init(argc, argv); /* before anything keeps a pointer into argv or environ */
    if (argc >= 2) {
        if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version")) version();
        if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) usage();
        if (!strcmp(argv[1], "--test-memory")) return selftest_memory(argc >= 3 ? argv[2] : NULL);
        if (!strcmp(argv[1], "--check-system")) return selftest_check_system();
        if (argv[1][0] != '-' || argv[1][1] != '-') {
            config_path = argv[1];
            first_opt = 2;
        }
    }
    bool from_stdin = config_path && !strcmp(config_path, "-");
    int last = argc; /* options are argv[first_opt..last) */
    if (last > first_opt && !strcmp(argv[last - 1], "-")) {
        from_stdin = true;
        last--;
    }
    config_init_defaults(&srv.cfg);
    if (load_config(&srv.cfg, config_path && strcmp(config_path, "-") ? config_path : NULL, from_stdin,
                    last - first_opt, argv + first_opt) != 0) {
        config_free(&srv.cfg);
        return 1;
    }
    if (config_path && strcmp(config_path, "-")) srv.config_file = absolute_path(config_path);
    srv.executable = self_executable();
    /* daemonize yes: the server goes into the background (below), unless a
     * service manager supervises it (Redis's rule: the manager wants the
     * process it started) */
    bool background = srv.cfg.daemonize && supervise_resolve(srv.cfg.supervised) == SUPERVISED_NO;
    /* the log file first, so that it has the start-up lines too, as Redis's
     * does; a daemon's log to stdout goes nowhere, those lines included */
    /* a relative logfile is in `dir`, as Redis (which has moved there) */
    sds log_path = srv.cfg.logfile && srv.cfg.logfile[0] ? server_path(&srv, srv.cfg.logfile)
                   : background                          ? sds_new("/dev/null")
                                                         : NULL;
    int log_rc = log_path ? log_set_file(log_path) : 0;
    sds_free(log_path);
    if (log_rc != 0) {
        fprintf(stderr, "Can't open the log file: %s\n", strerror(errno));
        config_free(&srv.cfg);
        return 1;
    }
    if (srv.cfg.syslog_enabled) log_set_syslog(srv.cfg.syslog_ident, srv.cfg.syslog_facility);
    log_set_level(srv.cfg.loglevel);
    /* warnings, as Redis logs them: they show at every loglevel */
    log_msg(LL_WARNING, "oO0OoO0OoO0Oo redis-like is starting oO0OoO0OoO0Oo");
    log_msg(LL_WARNING, "redis-like version=%s, bits=%d, pid=%d, malloc=%s, just started", RL_VERSION,
            (int)(sizeof(long) * 8), (int)getpid(), zmalloc_lib());
    if (argc == 1)
        log_msg(LL_WARNING, "Warning: no config file specified, using the default config.");
    else
        log_msg(LL_WARNING, "Configuration loaded");
    for (int i = 0; i < srv.cfg.ignored_count; i++) log_msg(LL_WARNING, "%s", srv.cfg.ignored[i]);
    if (background) { /* before any thread or socket exists */
        if (!supervise_daemonize()) {
            log_msg(LL_WARNING, "Can't daemonize: fork failed: %s", strerror(errno));
            config_free(&srv.cfg);
            return 1;
        }
        srv.daemonized = true;
    }
    if (!server_init(&srv)) {
        /* A SHUTDOWN while the data loaded is an exit, not a failure. */
        bool asked = srv.shutdown_asap;
        server_free(&srv);
        if (asked) log_msg(LL_WARNING, "redis-like is now ready to exit, bye bye...");
        return asked ? srv.exit_code : 1;
    }
    server_run(&srv);
    server_free(&srv);
    return srv.exit_code;
}
