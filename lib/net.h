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
/* Accept one connection, non-blocking; -1 with errno (EAGAIN when none). */
int net_accept(int lfd, bool *is_unix);
void net_set_client_options(int fd, bool is_unix, int keepalive_s);
void net_peer_name(int fd, char *buf, size_t len, bool local);
bool net_peer_is_loopback(int fd);
/* A non-blocking TCP connection to host:port, established within
 * timeout_ms (TCP_NODELAY set); -1 with err filled and errno set on
 * failure. */
int net_connect_tcp(const char *host, int port, int timeout_ms, char *err, size_t errlen);

#endif
