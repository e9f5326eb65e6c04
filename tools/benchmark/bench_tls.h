/* bench_tls.h: --tls for redis-like-benchmark (OpenSSL 3).
 *
 * --tls with --cacert, --cert and --key (redis-benchmark's names): every
 * connection the tool opens (workers, the probe, the memory sampler, the
 * sweep) runs a blocking TLS handshake right after connect, and its socket
 * is then read and written through bench_sock_recv / bench_sock_send, which
 * are plain recv/send on a connection without TLS.  TLS runs on the epoll
 * engine (the io_uring one moves raw socket bytes). */
#ifndef RL_BENCH_TLS_H
#define RL_BENCH_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "bench_opts.h"

/* The client context from the options; -1 with err set. */
int bench_tls_init(const bench_opts_t *o, char *err, size_t errlen);
/* TLS handshake on a connected blocking socket; -1 with err set. */
int bench_tls_connect(int fd, char *err, size_t errlen);
/* send/recv (errno EAGAIN when the session must wait for the socket). */
ssize_t bench_sock_send(int fd, const void *p, size_t n);
ssize_t bench_sock_recv(int fd, void *p, size_t n);
/* Plaintext the session already holds (read it: no socket event will come). */
int bench_sock_pending(int fd);
/* Free the session of fd, if any, and close fd. */
void bench_sock_close(int fd);

#endif
