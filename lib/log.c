/* log.c: the server log.  One line per message, timestamped, written with a
 * single write() so lines from a forked child never interleave mid-line;
 * with syslog-enabled, each message goes to syslog(3) as well, without the
 * prefix (syslog adds its own time and pid), at Redis's severities. */
#include "log.h"
#include "rl_assert.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static int log_level = LL_NOTICE;
static int log_fd = STDOUT_FILENO;
static char (*role_fn)(void *); /* the process's role, asked at each line */
static void *role_arg;
static bool is_child;
static bool to_syslog;
static char syslog_ident[64]; /* openlog keeps the pointer: our own copy */

void log_set_level(int level) { log_level = level; }
void log_set_role_source(char (*fn)(void *), void *arg) {
    role_fn = fn;
    role_arg = arg;
}
void log_set_child(void) { is_child = true; }

void log_set_syslog(const char *ident, int facility) {
    snprintf(syslog_ident, sizeof(syslog_ident), "%s", ident);
    /* LOG_NDELAY: the socket is opened now, before daemonize and fork */
    openlog(syslog_ident, LOG_PID | LOG_NDELAY | LOG_NOWAIT, facility);
    to_syslog = true;
}

/* syslog(3) takes a lock and may allocate: a crash report, written from a
 * signal handler, goes to the log only. */
void log_syslog_stop(void) { to_syslog = false; }

int log_set_file(const char *path) {
    if (!path || !*path) {
        log_fd = STDOUT_FILENO;
        return 0;
    }
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    if (log_fd != STDOUT_FILENO) close(log_fd);
    log_fd = fd;
    return 0;
}

void log_msg(int level, const char *fmt, ...) {
    static const char marks[] = ".-*#";
    if (level < log_level) return;
    char line[1024];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    char role = is_child ? 'C' : role_fn ? role_fn(role_arg)
                                         : 'M';
    int n = snprintf(line, sizeof(line), "%d:%c ", (int)getpid(), role);
    n += (int)strftime(line + n, sizeof(line) - (size_t)n, "%d %b %Y %H:%M:%S.", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, "%03d %c ", (int)(tv.tv_usec / 1000), marks[level & 3]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    int text = n;
    n = (m < 0) ? n : n + m;
    if ((size_t)n > sizeof(line) - 2) n = (int)sizeof(line) - 2;
    line[n] = '\0';
    if (to_syslog) {
        static const int severity[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};
        syslog(severity[level & 3], "%s", line + text);
    }
    line[n++] = '\n';
    if (write(log_fd, line, (size_t)n) < 0) { /* nowhere left to report */
    }
}

void log_write_raw(const char *buf, size_t len) {
    if (write(log_fd, buf, len) < 0) { /* nowhere left to report */
    }
}

int log_fd_get(void) { return log_fd; }

/* The failure path of rl_assert.h: here because the line belongs in the
 * server log (which may be a file), and log_msg does not allocate. */
void rl_assert_fail(const char *expr, const char *file, int line) {
    log_msg(LL_WARNING, "ASSERTION FAILED: %s at %s:%d", expr, file, line);
    if (log_fd != STDOUT_FILENO && log_fd != STDERR_FILENO) {
        fprintf(stderr, "ASSERTION FAILED: %s at %s:%d\n", expr, file, line);
    }
    abort();
}
