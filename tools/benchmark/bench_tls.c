/* bench_tls.c: --tls for redis-like-benchmark (see bench_tls.h).
 *
 * One client context for the process; each socket's session is found by
 * its descriptor in a table sized to the descriptor limit once, before any
 * worker thread starts, so workers (each owning its own sockets) read and
 * write their slots without a lock.  Sessions allow partial writes and a
 * moving write buffer: the epoll engine retries a short send from its own
 * offset, as with a plain socket. */
#include "bench_tls.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static SSL_CTX *tls_ctx;
static SSL **by_fd;
static int nfd;

static const char *last_error(void) {
    static __thread char buf[256];
    unsigned long e = ERR_get_error();
    if (!e)
        return "unknown error";
    ERR_error_string_n(e, buf, sizeof(buf));
    return buf;
}

int bench_tls_init(const bench_opts_t *o, char *err, size_t errlen) {
    struct rlimit rl;
    nfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (int)rl.rlim_cur : 65536;
    if (nfd > (1 << 20))
        nfd = 1 << 20;
    by_fd = calloc((size_t)nfd, sizeof(*by_fd));
    tls_ctx = SSL_CTX_new(TLS_client_method());
    if (!by_fd || !tls_ctx) {
        snprintf(err, errlen, "TLS: out of memory");
        return -1;
    }
    SSL_CTX_set_mode(tls_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (o->tls_cacert) {
        if (SSL_CTX_load_verify_locations(tls_ctx, o->tls_cacert, NULL) != 1) {
            snprintf(err, errlen, "Failed to load CA certificate %s: %s", o->tls_cacert, last_error());
            return -1;
        }
        SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_PEER, NULL);
    }
    if (o->tls_cert && (SSL_CTX_use_certificate_chain_file(tls_ctx, o->tls_cert) != 1 ||
                        SSL_CTX_use_PrivateKey_file(tls_ctx, o->tls_key ? o->tls_key : o->tls_cert,
                                                    SSL_FILETYPE_PEM) != 1)) {
        snprintf(err, errlen, "Failed to load client certificate/key: %s", last_error());
        return -1;
    }
    return 0;
}

int bench_tls_connect(int fd, char *err, size_t errlen) {
    if (fd >= nfd) {
        snprintf(err, errlen, "TLS: descriptor %d beyond the limit", fd);
        return -1;
    }
    SSL *ssl = SSL_new(tls_ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1 || SSL_connect(ssl) != 1) {
        snprintf(err, errlen, "TLS handshake failed: %s", last_error());
        if (ssl)
            SSL_free(ssl);
        return -1;
    }
    by_fd[fd] = ssl;
    return 0;
}

static SSL *session(int fd) { return by_fd && fd >= 0 && fd < nfd ? by_fd[fd] : NULL; }

/* An SSL result as send/recv would give it. */
static ssize_t as_syscall(SSL *ssl, int r) {
    switch (SSL_get_error(ssl, r)) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_WANT_WRITE:
            errno = EAGAIN;
            return -1;
        case SSL_ERROR_ZERO_RETURN:
            return 0;
        case SSL_ERROR_SYSCALL:
            if (errno == 0)
                errno = ECONNRESET;
            return -1;
        default:
            ERR_clear_error();
            errno = EPROTO;
            return -1;
    }
}

ssize_t bench_sock_send(int fd, const void *p, size_t n) {
    SSL *ssl = session(fd);
    if (!ssl)
        return send(fd, p, n, MSG_NOSIGNAL);
    size_t done = 0;
    errno = 0;
    int r = SSL_write_ex(ssl, p, n, &done);
    return r == 1 ? (ssize_t)done : as_syscall(ssl, r);
}

ssize_t bench_sock_recv(int fd, void *p, size_t n) {
    SSL *ssl = session(fd);
    if (!ssl)
        return recv(fd, p, n, 0);
    size_t done = 0;
    errno = 0;
    int r = SSL_read_ex(ssl, p, n, &done);
    return r == 1 ? (ssize_t)done : as_syscall(ssl, r);
}

int bench_sock_pending(int fd) {
    SSL *ssl = session(fd);
    return ssl ? SSL_pending(ssl) : 0;
}

/* The handshake ran on the socket with read-ahead off, so the socket BIO
 * holds no bytes past the last record: nothing is lost in the swap. */
int bench_tls_use_memory(int fd) {
    SSL *ssl = session(fd);
    if (!ssl)
        return 0;
    BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
    if (!rb || !wb) {
        BIO_free(rb);
        BIO_free(wb);
        return -1;
    }
    BIO_set_mem_eof_return(rb, -1); /* empty: "retry", not end of stream */
    SSL_set_bio(ssl, rb, wb);       /* frees the socket BIO */
    return 1;
}

int bench_tls_feed(int fd, const void *p, size_t n) {
    SSL *ssl = session(fd);
    size_t done = 0;
    return ssl && BIO_write_ex(SSL_get_rbio(ssl), p, n, &done) == 1 && done == n ? 0 : -1;
}

size_t bench_tls_out_pending(int fd) {
    SSL *ssl = session(fd);
    return ssl ? BIO_ctrl_pending(SSL_get_wbio(ssl)) : 0;
}

size_t bench_tls_drain(int fd, void *p, size_t cap) {
    SSL *ssl = session(fd);
    size_t done = 0;
    if (!ssl || cap == 0 || BIO_read_ex(SSL_get_wbio(ssl), p, cap, &done) != 1)
        return 0;
    return done;
}

void bench_sock_close(int fd) {
    SSL *ssl = session(fd);
    if (ssl) {
        by_fd[fd] = NULL;
        SSL_free(ssl);
    }
    close(fd);
}
