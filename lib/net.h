/* net.h: socket helpers: listening on TCP and unix sockets, accepting,
 * socket options, peer names.  Plain POSIX; no server state. */
#ifndef RL_NET_H
#define RL_NET_H

#include <stdbool.h>
#include <stddef.h>

/* Listen on addr:port (IPv4 or IPv6 literal or name); returns the fd or -1
 * with a reason in err. */
int net_listen_tcp(const char *addr, int port, int backlog, char *err, size_t errlen);
int net_listen_unix(const char *path, int perm, int backlog, char *err, size_t errlen);
/* SO_MARK (socket-mark-id: the firewall mark of what the socket sends;
 * needs CAP_NET_ADMIN): 0, or -1 with errno. */
int net_set_mark(int fd, unsigned int mark);
/* Accept one connection, non-blocking; -1 with errno (EAGAIN when none). */
int net_accept(int lfd, bool *is_unix);
void net_set_client_options(int fd, bool is_unix, int keepalive_s);
/* TCP_NODELAY on or off (off: the kernel may coalesce small writes);
 * failures are ignored (a Unix socket has no such option). */
void net_set_nodelay(int fd, bool on);
void net_peer_name(int fd, char *buf, size_t len, bool local);
/* 127.0.0.1, ::1 or a unix socket: the peers Redis calls local. */
bool net_peer_is_loopback(int fd);
/* Start a non-blocking TCP connect to host:port (name or literal) from
 * source (an address to bind first, best effort; NULL or "": any); returns
 * the fd (connected or in progress: wait for writable, then ask
 * net_connect_result) or -1 with a reason in err. */
int net_connect_tcp_nonblock(const char *host, int port, const char *source, char *err, size_t errlen);
/* 0 once a non-blocking connect finished well, else the errno it failed with. */
int net_connect_result(int fd);

#endif
