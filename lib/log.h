/* log.h: the server log (stdout or logfile, and syslog), Redis's line format:
 * "pid:role dd Mon yyyy hh:mm:ss.mmm <level-char> message". */
#ifndef RL_LOG_H
#define RL_LOG_H

#include <stddef.h>

enum { LL_DEBUG = 0,
       LL_VERBOSE,
       LL_NOTICE,
       LL_WARNING };

void log_set_level(int level);
/* The role letter after the pid, as in Redis's log: fn's answer ('M'
 * master, 'S' replica) until log_set_child() marks a forked child ('C'). */
void log_set_role_source(char (*fn)(void *), void *arg);
void log_set_child(void);
int log_set_file(const char *path); /* "" = stdout; 0 ok, -1 error */
/* syslog-enabled: every message from now on to syslog(3) too, with this
 * ident (copied, at most 63 bytes) and facility (LOG_LOCAL0...). */
void log_set_syslog(const char *ident, int facility);
void log_syslog_stop(void); /* crash.c: no syslog from a signal handler */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A crash report's own lines (crash.c): written as they are, no prefix;
 * and the log's descriptor, for backtrace_symbols_fd. */
void log_write_raw(const char *buf, size_t len);
int log_fd_get(void);

#endif
