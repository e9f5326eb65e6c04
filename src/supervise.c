/* supervise.c: the service-manager side of start-up and shutdown, for a
 * server run by systemd (Type=notify) or upstart (expect stop), as Redis's
 * `supervised no|upstart|systemd|auto` offers.
 *
 * systemd's protocol is datagrams of "VAR=value\n" lines sent to the Unix
 * socket named by $NOTIFY_SOCKET (a name starting with '@' is in the
 * abstract namespace): READY=1 once the server accepts connections,
 * STATUS= lines a user sees in `systemctl status`, STOPPING=1 when it
 * shuts down.  upstart's is a SIGSTOP the process sends itself once
 * ready.  Written from the protocols' descriptions (sd_notify(3),
 * upstart's "expect stop"): no libsystemd needed.  lifecycle.c,
 * shutdown.c and repl_replica.c say when; this file says how.
 * Also the start of a server with no manager: `daemonize yes`, the
 * double life of an init script's daemon (server_main.c calls it before
 * any thread or socket exists, so the child is the whole server). */
#include "supervise.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int supervise_resolve(int configured) {
    if (configured != SUPERVISED_AUTO) return configured;
    if (getenv("UPSTART_JOB")) return SUPERVISED_UPSTART;
    if (getenv("NOTIFY_SOCKET")) return SUPERVISED_SYSTEMD;
    return SUPERVISED_NO;
}

const char *supervise_name(int mode) {
    return mode == SUPERVISED_UPSTART ? "upstart" : mode == SUPERVISED_SYSTEMD ? "systemd"
                                                                               : "no";
}

bool supervise_notify(const char *text) {
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = path ? strlen(path) : 0;
    if (len < 2 || len >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@')) return false;
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@') sa.sun_path[0] = '\0'; /* abstract: the name's length says where it ends */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    ssize_t n = sendto(fd, text, strlen(text), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
    close(fd);
    return n == (ssize_t)strlen(text);
}

void supervise_tell(int mode, const char *text) {
    if (mode == SUPERVISED_SYSTEMD) supervise_notify(text);
}

void supervise_upstart_ready(void) {
    raise(SIGSTOP);
    unsetenv("UPSTART_JOB"); /* a child the server forks is not the job */
}

bool supervise_daemonize(void) {
    fflush(stdout); /* else the child would print the parent's buffered lines again */
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid > 0) _exit(0); /* no atexit work: the child owns everything */
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) close(fd);
    }
    return true;
}
