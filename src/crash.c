/* crash.c: what a crash leaves in the log, for a bug report, as Redis's
 * crash-log-enabled does: the signal and the faulting address, the stack
 * trace, the registers and the words on top of the stack, INFO, the
 * client list, the command that was running (its secrets redacted as
 * MONITOR redacts them), the settings that matter most to a bug's
 * reader, and the bytes of the function that crashed (to disassemble),
 * between START and END lines a user can cut and paste.  No memory test:
 * writing test patterns over pages the background threads (and the
 * allocator's purge thread) may be using would report their work as
 * broken memory.  Then the process dies of the same signal, so
 * a core dump and the exit status are what they would have been.
 *
 * The handler runs on its own stack (a stack overflow leaves none) and
 * does what is not async-signal-safe (INFO allocates, stdio formats): the
 * process is going down either way, and a report that is usually complete
 * is worth the chance that a corrupted heap cuts it short.  The default
 * action is back before the report starts (SA_RESETHAND), so a second
 * fault inside it ends the process at once. */
#include "crash.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "config.h"
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

/* The machine's registers at the fault, then the 16 words on top of the
 * stack (highest address first). */
static void report_registers(const void *uctx) {
#if defined(__x86_64__)
    const greg_t *g = ((const ucontext_t *)uctx)->uc_mcontext.gregs;
#define R(n) ((unsigned long)g[REG_##n])
    log_msg(LL_WARNING,
            "\nRAX:%016lx RBX:%016lx\nRCX:%016lx RDX:%016lx\nRDI:%016lx RSI:%016lx\nRBP:%016lx RSP:%016lx\n"
            "R8 :%016lx R9 :%016lx\nR10:%016lx R11:%016lx\nR12:%016lx R13:%016lx\nR14:%016lx R15:%016lx\n"
            "RIP:%016lx EFL:%016lx\nCSGSFS:%016lx",
            R(RAX), R(RBX), R(RCX), R(RDX), R(RDI), R(RSI), R(RBP), R(RSP), R(R8), R(R9), R(R10), R(R11), R(R12),
            R(R13), R(R14), R(R15), R(RIP), R(EFL), R(CSGSFS));
    const unsigned long *sp = (const unsigned long *)R(RSP);
#undef R
#elif defined(__aarch64__)
    const mcontext_t *m = &((const ucontext_t *)uctx)->uc_mcontext;
    sds regs = sds_empty();
    for (int i = 0; i < 31; i++)
        regs = sds_catprintf(regs, "%sX%-2d:%016lx", i % 2 ? " " : "\n", i, (unsigned long)m->regs[i]);
    regs = sds_catprintf(regs, "\nSP :%016lx PC :%016lx\nPSTATE:%016lx", (unsigned long)m->sp,
                         (unsigned long)m->pc, (unsigned long)m->pstate);
    log_msg(LL_WARNING, "%s", regs);
    sds_free(regs);
    const unsigned long *sp = (const unsigned long *)m->sp;
#else
    (void)uctx;
    puts_log("(no register dump on this architecture)\n");
    const unsigned long *sp = NULL;
#endif
    /* hide-user-data-from-log: the stack may hold keys and values */
    if (sp && crash_srv && crash_srv->cfg.hide_user_data_from_log) {
        log_msg(LL_NOTICE, "hide-user-data-from-log is on, skip logging stack content to avoid spilling PII.");
        return;
    }
    for (int i = 15; sp && i >= 0; i--) log_msg(LL_WARNING, "(%016lx) -> %016lx", (unsigned long)(sp + i), sp[i]);
}

/* Settings a crash's reader asks about first (Redis's list, those we
 * have, and the I/O engine that stands in for its I/O threads). */
static void report_config(server_t *srv) {
    static const char *const names[] = {
        "sanitize-dump-payload", "lazyfree-lazy-server-del", "proto-max-bulk-len", "replica-read-only",
        "io-engine", "repl-diskless-sync", "lazyfree-lazy-expire", "lazyfree-lazy-eviction",
        "lazyfree-lazy-user-flush", "repl-diskless-load", "lazyfree-lazy-user-del", "list-compress-depth",
        "client-query-buffer-limit", "activedefrag", NULL};
    for (int i = 0; names[i]; i++) {
        char *v = config_get_value(&srv->cfg, names[i]);
        if (!v) continue;
        put_sds(sds_catprintf(sds_empty(), "%s %s\n", names[i], v));
        sds_free(v);
    }
}

/* The crashed function's bytes from its start to just past the faulting
 * instruction, in hex, with the commands that turn them back into code. */
static void report_code(void *pc) {
    Dl_info info;
    if (!pc || !dladdr(pc, &info)) {
        puts_log("(the faulting instruction is in no loaded module)\n");
        return;
    }
    /* A static function has no dynamic symbol: the 64 bytes before the
     * instruction stand in for its start. */
    if (!info.dli_saddr || (char *)pc < (char *)info.dli_saddr) {
        info.dli_sname = "(a static function)";
        info.dli_saddr = (char *)pc - 64 >= (char *)info.dli_fbase ? (char *)pc - 64 : info.dli_fbase;
    }
    size_t len = (size_t)((char *)pc - (char *)info.dli_saddr) + 16;
    if (len > 8192) len = 8192;
    put_sds(sds_catprintf(sds_empty(),
                          "Symbol: %s (base: %p)\nModule: %s (base %p)\n$ xxd -r -p /tmp/dump.hex /tmp/dump.bin\n"
                          "$ objdump --adjust-vma=%p -D -b binary -m %s /tmp/dump.bin\n------\n",
                          info.dli_sname ? info.dli_sname : "?", info.dli_saddr, info.dli_fname, info.dli_fbase,
                          info.dli_saddr,
#if defined(__aarch64__)
                          "aarch64"
#else
                          "i386:x86-64"
#endif
                          ));
    log_msg(LL_WARNING, "dump of function (hexdump of %zu bytes):", len);
    sds hex = sds_empty();
    const unsigned char *p = info.dli_saddr;
    for (size_t i = 0; i < len; i++) hex = sds_catprintf(hex, "%02x", p[i]);
    put_sds(sds_cat(hex, "\n"));
}

static void report_client(client_t *c) {
    put_sds(sds_cat(conn_info_string(sds_empty(), c), "\n"));
    for (int j = 0; j < c->argc; j++) {
        sds line = sds_catprintf(sds_empty(), "argv[%d]: ", j);
        if (j > 0 && c->srv->cfg.hide_user_data_from_log) {
            line = sds_cat(line, "*redacted*"); /* the command's name only, as Redis 7.4 logs it */
        } else if (monitor_arg_redacted(c, j)) {
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
    log_syslog_stop();
    puts_log("\n\n=== REDIS-LIKE BUG REPORT START: Cut & paste starting from here ===\n");
    log_msg(LL_WARNING, "redis-like %s crashed by signal: %d, si_code: %d", RL_VERSION, sig, info->si_code);
    if (sig == SIGSEGV || sig == SIGBUS) log_msg(LL_WARNING, "Accessing address: %p", info->si_addr);
    void *pc = fault_pc(uctx);
    if (pc) log_msg(LL_WARNING, "Crashed running the instruction at: %p", pc);

    puts_log("\n------ STACK TRACE ------\n\nBacktrace:\n");
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), log_fd_get());

    puts_log("\n------ REGISTERS ------\n");
    report_registers(uctx);

    puts_log("\n------ INFO OUTPUT ------\n");
    char *all[] = {"all"};
    put_sds(info_generate(srv, 1, all));

    puts_log("\n------ CLIENT LIST OUTPUT ------\n");
    for (client_t *c = srv->clients_head; c; c = c->next) put_sds(sds_cat(conn_info_string(sds_empty(), c), "\n"));

    puts_log("\n------ CURRENT CLIENT INFO ------\n");
    if (srv->current_client) report_client(srv->current_client);
    else puts_log("(no command was running)\n");

    puts_log("\n------ CONFIG DEBUG OUTPUT ------\n");
    report_config(srv);

    puts_log("\n------ DUMPING CODE AROUND EIP ------\n");
    report_code(pc);

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
