/* crash.c: what a crash leaves in the log, for a bug report, as Redis's
 * crash-log-enabled does: the signal and the faulting address, the stack
 * trace, INFO, the client list and the command that was running (its
 * secrets redacted as MONITOR redacts them), between START and END lines
 * a user can cut and paste.  Then the process dies of the same signal, so
 * a core dump and the exit status are what they would have been.
 *
 * The handler runs on its own stack (a stack overflow leaves none) and
 * does what is not async-signal-safe (INFO allocates, stdio formats): the
 * process is going down either way, and a report that is usually complete
 * is worth the chance that a corrupted heap cuts it short.  The default
 * action is back before the report starts (SA_RESETHAND), so a second
 * fault inside it ends the process at once. */
#include "crash.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "conn.h"
#include "info.h"
#include "log.h"
#include "monitor.h"
#include "object.h"
#include "version.h"

static server_t *crash_srv; /* a signal handler takes no argument: the process's one server */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static char crash_stack[256 * 1024]; /* INFO's sections need some room */

static void put(const char *s, size_t len) { log_write_raw(s, len); }
static void puts_log(const char *s) { put(s, strlen(s)); }

static void put_sds(sds s) {
    put(s, sds_len(s));
    sds_free(s);
}

/* The instruction that faulted, where the machine's context says it. */
static void *fault_pc(const void *uctx) {
#if defined(__x86_64__)
    return (void *)((const ucontext_t *)uctx)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)((const ucontext_t *)uctx)->uc_mcontext.pc;
#else
    (void)uctx;
    return NULL;
#endif
}

static void report_client(client_t *c) {
    put_sds(sds_cat(conn_info_string(sds_empty(), c), "\n"));
    for (int j = 0; j < c->argc; j++) {
        sds line = sds_catprintf(sds_empty(), "argv[%d]: ", j);
        if (monitor_arg_redacted(c, j)) {
            line = sds_cat(line, "(redacted)");
        } else {
            char buf[32];
            size_t len;
            const char *p = obj_string_view(c->argv[j], buf, sizeof(buf), &len);
            line = sds_catrepr(line, p, len);
        }
        put_sds(sds_cat(line, "\n"));
    }
}

static void report(int sig, const siginfo_t *info, const void *uctx) {
    server_t *srv = crash_srv;
    puts_log("\n\n=== REDIS-LIKE BUG REPORT START: Cut & paste starting from here ===\n");
    log_msg(LL_WARNING, "redis-like %s crashed by signal: %d, si_code: %d", RL_VERSION, sig, info->si_code);
    if (sig == SIGSEGV || sig == SIGBUS) log_msg(LL_WARNING, "Accessing address: %p", info->si_addr);
    void *pc = fault_pc(uctx);
    if (pc) log_msg(LL_WARNING, "Crashed running the instruction at: %p", pc);

    puts_log("\n------ STACK TRACE ------\n\nBacktrace:\n");
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), log_fd_get());

    puts_log("\n------ INFO OUTPUT ------\n");
    char *all[] = {"all"};
    put_sds(info_generate(srv, 1, all));

    puts_log("\n------ CLIENT LIST OUTPUT ------\n");
    for (client_t *c = srv->clients_head; c; c = c->next) put_sds(sds_cat(conn_info_string(sds_empty(), c), "\n"));

    puts_log("\n------ CURRENT CLIENT INFO ------\n");
    if (srv->current_client) report_client(srv->current_client);
    else puts_log("(no command was running)\n");

    puts_log("\n=== REDIS-LIKE BUG REPORT END. Make sure to include from START to END. ===\n\n");
}

static void on_crash(int sig, siginfo_t *info, void *uctx) {
    if (crash_srv && crash_srv->cfg.crash_log_enabled) report(sig, info, uctx);
    raise(sig); /* the default action again (SA_RESETHAND): die of it */
}

void crash_install(server_t *srv) {
    crash_srv = srv;
    stack_t ss = {.ss_sp = crash_stack, .ss_size = sizeof(crash_stack), .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK | SA_NODEFER;
    for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
        sigaction(crash_signals[i], &sa, NULL);
}
