/* supervise.h: telling a service manager how the server is doing, as
 * Redis's `supervised` setting does, and the classic daemon start of
 * `daemonize yes` (see supervise.c). */
#ifndef RL_SUPERVISE_H
#define RL_SUPERVISE_H

#include <stdbool.h>

enum { SUPERVISED_NO,
       SUPERVISED_UPSTART,
       SUPERVISED_SYSTEMD,
       SUPERVISED_AUTO };

/* The mode in force for a configured one: auto becomes upstart when
 * $UPSTART_JOB is set, else systemd when $NOTIFY_SOCKET is, else no. */
int supervise_resolve(int configured);
/* "no", "upstart" or "systemd" (INFO's process_supervised). */
const char *supervise_name(int mode);
/* systemd: send one notification (lines such as "READY=1\n") to
 * $NOTIFY_SOCKET; false if there is none or it could not be sent. */
bool supervise_notify(const char *text);
/* The same when mode (the `supervised` in force) is systemd; a no-op
 * otherwise.  For the moments Redis reports: loading, ready, a replica's
 * sync, shutting down, a final save and its failure. */
void supervise_tell(int mode, const char *text);
/* `daemonize yes`: fork, the parent exits 0 at once (the shell or init
 * script that started the server goes on), the child leaves the
 * terminal's session and has /dev/null for stdin, stdout and stderr, so a
 * log to stdout goes nowhere, as in Redis.  Returns in the child only;
 * false (in the caller's process) if fork failed. */
bool supervise_daemonize(void);
/* upstart: stop this process (the job's "expect stop" sees it ready and
 * continues it), once. */
void supervise_upstart_ready(void);

#endif
