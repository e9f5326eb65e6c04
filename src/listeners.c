/* listeners.c: the sockets the server accepts clients on (see listeners.h).
 *
 * TCP listeners come from `bind` and `port`, one socket per address (an
 * address written "-addr" is optional: skipped when it cannot be bound, as
 * "-::1" on a host without IPv6); the unix socket from `unixsocket`.  Each
 * is an accept event in the loop (conn_accept_handler), whatever the
 * engine serving the clients.  `tls-port` listens on the same addresses,
 * its clients speaking TLS (conn_tls_accept_handler); `port 0` with a
 * tls-port serves TLS only.  CONFIG SET port/bind listens again: the TCP
 * sockets are closed, the new ones opened, and a failure leaves none, so
 * that CONFIG SET's rollback listens again on the old addresses. */
#include "listeners.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "evloop.h"
#include "log.h"
#include "net.h"
#include "zmalloc.h"

static bool add_listener(server_t *srv, int fd, bool tcp, bool tls) {
    if (srv->listen_count == RL_MAX_LISTENERS) {
        log_msg(LL_WARNING, "Too many listening addresses (at most %d).", RL_MAX_LISTENERS);
        close(fd);
        return false;
    }
    srv->listen_fds[srv->listen_count] = fd;
    srv->listen_tcp[srv->listen_count] = tcp;
    srv->listen_tls[srv->listen_count] = tls;
    srv->listeners[srv->listen_count] =
        evloop_io_add(srv->loop, fd, tls ? conn_tls_accept_handler : conn_accept_handler, srv);
    srv->listen_count++;
    return true;
}

/* The configured TCP addresses as one string, to tell a change. */
static sds tcp_signature(const server_t *srv) {
    sds s = sds_catprintf(sds_empty(), "%lld %lld", srv->cfg.port, srv->cfg.tls_port);
    for (int i = 0; i < srv->cfg.bind_count; i++) s = sds_cat(sds_cat(s, " "), srv->cfg.bind[i]);
    return s;
}

/* Listen on every configured TCP address for port (tls: the tls-port);
 * false (logged) when a required one fails or none could be bound. */
static bool listen_port(server_t *srv, long long port, bool tls) {
    char err[256];
    int tcp = 0;
    if (port == 0) return true;
    for (int i = 0; i < srv->cfg.bind_count; i++) {
        const char *addr = srv->cfg.bind[i];
        bool optional = addr[0] == '-';
        if (optional) addr++;
        if (!strcmp(addr, "*")) addr = "0.0.0.0";
        int fd = net_listen_tcp(addr, (int)port, (int)srv->cfg.tcp_backlog, err, sizeof(err));
        if (fd >= 0 && srv->cfg.socket_mark_id && net_set_mark(fd, (unsigned)srv->cfg.socket_mark_id) != 0) {
            snprintf(err, sizeof(err), "setsockopt SO_MARK: %s", strerror(errno));
            close(fd);
            fd = -1;
        }
        if (fd < 0) {
            if (optional) continue;
            log_msg(LL_WARNING, "Warning: Could not create server TCP listening socket %s:%lld: %s", addr, port,
                    err);
            return false;
        }
        if (!add_listener(srv, fd, true, tls)) break; /* more than RL_MAX_LISTENERS: logged */
        tcp++;
    }
    if (tcp == 0) {
        log_msg(LL_WARNING, "Failed listening on port %lld (%s), aborting.", port, tls ? "tls" : "tcp");
        return false;
    }
    return true;
}

static bool listen_tcp(server_t *srv) {
    return listen_port(srv, srv->cfg.port, false) && listen_port(srv, srv->cfg.tls_port, true);
}

/* Close the TCP listeners (all of them, or those after index from), the
 * unix one stays. */
static void close_tcp(server_t *srv, int from) {
    int kept = from;
    for (int i = from; i < srv->listen_count; i++) {
        if (!srv->listen_tcp[i]) {
            srv->listen_fds[kept] = srv->listen_fds[i];
            srv->listen_tcp[kept] = false;
            srv->listen_tls[kept] = false;
            srv->listeners[kept++] = srv->listeners[i];
            continue;
        }
        evloop_io_free(srv->listeners[i]);
        close(srv->listen_fds[i]);
    }
    srv->listen_count = kept;
}

bool listeners_open(server_t *srv) {
    if (!listen_tcp(srv)) return false;
    if (srv->cfg.unixsocket && srv->cfg.unixsocket[0]) {
        char err[256];
        int fd = net_listen_unix(srv->cfg.unixsocket, (int)srv->cfg.unixsocketperm, (int)srv->cfg.tcp_backlog, err,
                                 sizeof(err));
        if (fd < 0) {
            log_msg(LL_WARNING, "Failed opening Unix socket: %s", err);
            return false;
        }
        srv->unix_path_bound = zstrdup(srv->cfg.unixsocket);
        if (!add_listener(srv, fd, false, false)) return false;
    }
    if (srv->listen_count == 0) {
        log_msg(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return false;
    }
    srv->tcp_bound = tcp_signature(srv);
    return true;
}

bool listeners_follow_config(server_t *srv) {
    sds want = tcp_signature(srv);
    bool same = srv->tcp_bound && !strcmp(want, srv->tcp_bound);
    sds_free(want);
    if (same) return true;
    close_tcp(srv, 0);
    sds_free(srv->tcp_bound);
    srv->tcp_bound = NULL;
    int before = srv->listen_count;
    if (!listen_tcp(srv)) {
        close_tcp(srv, before); /* what did bind goes too: the old addresses come back whole */
        return false;
    }
    srv->tcp_bound = tcp_signature(srv);
    log_msg(LL_NOTICE, "Listening on port %lld (tcp) as configured by CONFIG SET.", srv->cfg.port);
    return true;
}

void listeners_close(server_t *srv) {
    for (int i = 0; i < srv->listen_count; i++) {
        evloop_io_free(srv->listeners[i]);
        close(srv->listen_fds[i]);
    }
    srv->listen_count = 0;
    sds_free(srv->tcp_bound);
    srv->tcp_bound = NULL;
    if (srv->unix_path_bound) {
        unlink(srv->unix_path_bound);
        zfree(srv->unix_path_bound);
        srv->unix_path_bound = NULL;
    }
}
