/* net.c: socket helpers (see net.h). */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) ? -1 : 0;
}

/* The TCP addresses of host:port (getaddrinfo), or NULL with err set. */
static struct addrinfo *resolve_tcp(const char *host, int port, int flags, char *err, size_t errlen) {
    struct addrinfo hints, *res;
    char portstr[8];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = flags;
    snprintf(portstr, sizeof(portstr), "%d", port);
    /* Memory outside zmalloc: getaddrinfo's list comes from libc's malloc
     * and is freed below (freeaddrinfo); nothing of it stays. */
    int rv = getaddrinfo(host, portstr, &hints, &res);
    if (rv != 0) {
        snprintf(err, errlen, "%s", gai_strerror(rv));
        return NULL;
    }
    return res;
}

int net_listen_tcp(const char *addr, int port, int backlog, char *err, size_t errlen) {
    struct addrinfo *res = resolve_tcp(addr, port, AI_PASSIVE, err, errlen), *ai;
    if (!res) return -1;
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        int yes = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
        if (ai->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof(yes));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0 && set_nonblock(fd) == 0) break;
        snprintf(err, errlen, "%s", strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

int net_set_mark(int fd, unsigned int mark) { return setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)); }

int net_listen_unix(const char *path, int perm, int backlog, char *err, size_t errlen) {
    struct sockaddr_un sa;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errlen, "unix socket path too long");
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    unlink(path); /* a stale socket file from a previous run */
    /* The mode is set between bind() and listen(): until listen() nobody
     * can connect, so the socket is never reachable with the looser mode
     * a permissive umask gave the file (CVE-2023-45145: Redis chmod'ed
     * after listen, leaving a window open to any local user). */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || (perm && chmod(path, (mode_t)perm) < 0) ||
        listen(fd, backlog) < 0 || set_nonblock(fd) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int net_accept(int lfd, bool *is_unix) {
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    int fd = accept4(lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) *is_unix = sa.ss_family == AF_UNIX;
    return fd;
}

void net_set_nodelay(int fd, bool on) {
    int v = on;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, sizeof(v));
}

void net_set_client_options(int fd, bool is_unix, int keepalive_s) {
    if (is_unix) return;
    int yes = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    if (keepalive_s > 0) {
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof(yes));
        int idle = keepalive_s, intvl = keepalive_s / 3 ? keepalive_s / 3 : 1, cnt = 3;
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
        setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    }
}

void net_peer_name(int fd, char *buf, size_t len, bool local) {
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    int r = local ? getsockname(fd, (struct sockaddr *)&sa, &salen) : getpeername(fd, (struct sockaddr *)&sa, &salen);
    if (r < 0) {
        snprintf(buf, len, "?:0");
        return;
    }
    char ip[INET6_ADDRSTRLEN];
    if (sa.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&sa;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
        snprintf(buf, len, "%s:%d", ip, ntohs(s->sin_port));
    } else if (sa.ss_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&sa;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
        snprintf(buf, len, "%s:%d", ip, ntohs(s->sin6_port));
    } else {
        struct sockaddr_un *s = (struct sockaddr_un *)&sa;
        snprintf(buf, len, "%s:0", local && salen > sizeof(sa_family_t) ? s->sun_path : "");
    }
}

/* Redis's "local" peers: 127.0.0.1, ::1 (also as ::ffff:127.0.0.1) and unix
 * sockets, as redis.conf documents for protected mode.  Not all of 127/8:
 * Redis compares the peer's address text with those two, so a client bound
 * to 127.0.0.2 (e.g. a replica with bind-source-addr) is refused by a
 * protected server of either kind. */
bool net_peer_is_loopback(int fd) {
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    if (getpeername(fd, (struct sockaddr *)&sa, &salen) < 0) return false;
    if (sa.ss_family == AF_INET) return ntohl(((struct sockaddr_in *)&sa)->sin_addr.s_addr) == INADDR_LOOPBACK;
    if (sa.ss_family == AF_INET6) {
        struct in6_addr *a = &((struct sockaddr_in6 *)&sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a)) return true;
        static const uint8_t mapped_lo[4] = {127, 0, 0, 1};
        return IN6_IS_ADDR_V4MAPPED(a) && memcmp(&a->s6_addr[12], mapped_lo, 4) == 0;
    }
    return sa.ss_family == AF_UNIX;
}

/* Bind fd to source (an address of family fam); false if that fails, e.g.
 * the address is not this host's or of the other family. */
static bool bind_source(int fd, int fam, const char *source) {
    struct addrinfo hints, *res, *ai;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = fam;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    if (getaddrinfo(source, NULL, &hints, &res) != 0) return false;
    bool ok = false;
    for (ai = res; ai && !ok; ai = ai->ai_next) ok = bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    freeaddrinfo(res);
    return ok;
}

int net_connect_tcp_nonblock(const char *host, int port, const char *source, char *err, size_t errlen) {
    struct addrinfo *res = resolve_tcp(host, port, 0, err, errlen), *ai;
    if (!res) return -1;
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        /* Best effort, as Redis's replica link: a source that cannot be
         * bound leaves the kernel to choose. */
        if (source && *source) (void)bind_source(fd, ai->ai_family, source);
        if (set_nonblock(fd) == 0 && (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS)) break;
        snprintf(err, errlen, "%s", strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

int net_connect_result(int fd) {
    int e = 0;
    socklen_t len = sizeof(e);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) return errno;
    return e;
}
