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
#include "sizehist.h"
#include "supervise.h"
#include "tls.h"

static void usage(void) {
    fprintf(stderr,
            "Usage: ./redis-like-server [/path/to/redis-like.conf] [options]\n"
            "       ./redis-like-server - (read config from stdin)\n"
            "       ./redis-like-server -v or --version\n"
            "       ./redis-like-server -h or --help\n\n"
            "Examples:\n"
            "       ./redis-like-server (run the server with default config)\n"
            "       ./redis-like-server redis-like.conf\n"
            "       ./redis-like-server --port 7777\n"
            "       ./redis-like-server redis-like.conf --loglevel verbose --save \"\"\n");
    exit(1);
}

static void version(void) {
    printf("redis-like server v=%s sha=00000000:0 malloc=%s bits=%d build=%s\n", RL_VERSION, zmalloc_lib(),
           (int)(sizeof(long) * 8), RL_BUILD_ID);
    exit(0);
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
        if (argv[1][0] != '-' || argv[1][1] != '-') {
            config_path = argv[1];
            first_opt = 2;
        }
    }
    config_init_defaults(&srv.cfg);
    if (config_load(&srv.cfg, config_path && strcmp(config_path, "-") ? config_path : NULL, argc - first_opt,
                    argv + first_opt) != 0) {
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
    const char *log_path = srv.cfg.logfile && srv.cfg.logfile[0] ? srv.cfg.logfile : background ? "/dev/null"
                                                                                                : NULL;
    if (log_path && log_set_file(log_path) != 0) {
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
        server_free(&srv);
        return 1;
    }
    server_run(&srv);
    server_free(&srv);
    return srv.exit_code;
}
