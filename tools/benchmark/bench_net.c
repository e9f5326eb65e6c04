/* bench_net.c: blocking connect, handshake and one-shot calls (see
 * bench_net.h).  Never on the measured path: the engine switches its sockets
 * to non-blocking after bench_net_handshake(). */
#include "bench_net.h"
#include "bench_resp.h"
#include "bench_tls.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int bench_net_connect(const bench_opts_t *o, char *err, size_t errlen) {
    if (o->socket) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", o->socket);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            snprintf(err, errlen, "Could not connect to Redis at %s: %s", o->socket, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        return fd;
    }
    char port[16];
    snprintf(port, sizeof(port), "%d", o->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    int rc = getaddrinfo(o->host, port, &hints, &res);
    if (rc) {
        snprintf(err, errlen, "Could not connect to Redis at %s:%d: %s", o->host, o->port, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "Could not connect to Redis at %s:%d: %s", o->host, o->port, strerror(saved));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (o->tls && bench_tls_connect(fd, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int net_write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = bench_sock_send(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int bench_net_call(int fd, char *reply, size_t cap, int argc, const char **argv) {
    size_t need = 32;
    for (int i = 0; i < argc; i++)
        need += strlen(argv[i]) + 32;
    char *req = malloc(need), *p = req;
    if (!req)
        return -1;
    p += sprintf(p, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        p += sprintf(p, "$%zu\r\n", l);
        memcpy(p, argv[i], l);
        p += l;
        *p++ = '\r';
        *p++ = '\n';
    }
    int rc = net_write_all(fd, req, (size_t)(p - req));
    free(req);
    if (rc < 0)
        return -1;

    /* Read until the skipper reports one complete reply.  Bytes past cap are
     * still parsed (in a scratch buffer) but not kept. */
    bench_resp_t rs;
    bench_resp_init(&rs);
    char scratch[4096];
    size_t kept = 0, pend = 0; /* pend: unparsed tail at scratch start */
    int type = -1;
    for (;;) {
        ssize_t r = bench_sock_recv(fd, scratch + pend, sizeof(scratch) - pend);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        size_t have = pend + (size_t)r;
        if (type < 0)
            type = (unsigned char)scratch[0];
        /* keep a copy of the new bytes */
        size_t copy = (size_t)r;
        if (kept + copy > cap - 1)
            copy = cap - 1 - kept;
        memcpy(reply + kept, scratch + pend, copy);
        kept += copy;
        reply[kept] = '\0';
        bench_resp_out_t out;
        long used = bench_resp_feed(&rs, scratch, have, &out);
        if (used < 0)
            return -1;
        if (out.replies)
            return type;
        pend = have - (size_t)used;
        memmove(scratch, scratch + used, pend);
        if (pend == sizeof(scratch))
            return -1; /* a header line longer than 4 KB: not RESP */
    }
}

int bench_net_handshake(int fd, const bench_opts_t *o, char *err, size_t errlen) {
    char reply[512];
    if (o->password) {
        const char *a2[] = {"AUTH", o->password};
        const char *a3[] = {"AUTH", o->user ? o->user : "", o->password};
        int t = o->user ? bench_net_call(fd, reply, sizeof(reply), 3, a3)
                        : bench_net_call(fd, reply, sizeof(reply), 2, a2);
        if (t != '+') {
            reply[strcspn(reply, "\r\n")] = '\0';
            snprintf(err, errlen, "AUTH failed: %s", t < 0 ? "connection lost" : reply + 1);
            return -1;
        }
    }
    if (o->resp3) {
        const char *h[] = {"HELLO", "3"};
        int t = bench_net_call(fd, reply, sizeof(reply), 2, h);
        if (t < 0 || t == '-') {
            reply[strcspn(reply, "\r\n")] = '\0';
            snprintf(err, errlen, "HELLO 3 failed: %s", t < 0 ? "connection lost" : reply + 1);
            return -1;
        }
    }
    if (o->dbnum) {
        char db[16];
        snprintf(db, sizeof(db), "%d", o->dbnum);
        const char *s[] = {"SELECT", db};
        int t = bench_net_call(fd, reply, sizeof(reply), 2, s);
        if (t != '+') {
            reply[strcspn(reply, "\r\n")] = '\0';
            snprintf(err, errlen, "SELECT %d failed: %s", o->dbnum, t < 0 ? "connection lost" : reply + 1);
            return -1;
        }
    }
    return 0;
}

/* Skips one "$len\r\n<bytes>\r\n"; copies bytes to out when out != NULL. */
static const char *net_bulk(const char *p, char *out, size_t cap) {
    if (*p != '$')
        return NULL;
    long n = strtol(p + 1, NULL, 10);
    p = strchr(p, '\n');
    if (!p)
        return NULL;
    p++;
    if (n < 0) {
        if (out)
            out[0] = '\0';
        return p;
    }
    if (out) {
        size_t c = (size_t)n < cap - 1 ? (size_t)n : cap - 1;
        memcpy(out, p, c);
        out[c] = '\0';
    }
    if (strlen(p) < (size_t)n + 2)
        return NULL;
    return p + n + 2;
}

int bench_net_array_bulk(const char *reply, int idx, char *out, size_t cap) {
    if (*reply != '*')
        return -1;
    const char *p = strchr(reply, '\n');
    long n = strtol(reply + 1, NULL, 10);
    if (!p || idx >= n)
        return -1;
    p++;
    for (int i = 0; i < idx && p; i++)
        p = net_bulk(p, NULL, 0);
    return p && net_bulk(p, out, cap) ? 0 : -1;
}

int bench_net_info_field(const char *info, const char *field, char *out, size_t cap) {
    size_t fl = strlen(field);
    for (const char *p = info; (p = strstr(p, field)) != NULL; p += fl) {
        if ((p != info && p[-1] != '\n') || p[fl] != ':')
            continue;
        p += fl + 1;
        size_t n = strcspn(p, "\r\n");
        if (n >= cap)
            n = cap - 1;
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
    }
    return -1;
}

int bench_net_is_local(const bench_opts_t *o) {
    return o->socket || !strcmp(o->host, "localhost") || !strncmp(o->host, "127.", 4) ||
           !strcmp(o->host, "::1");
}
