/* bench_tls.h: --tls for redis-like-benchmark (OpenSSL 3).
 *
 * --tls with --cacert, --cert and --key (redis-benchmark's names): every
 * connection the tool opens (workers, the probe, the memory sampler, the
 * sweep) runs a blocking TLS handshake right after connect, and its socket
 * is then read and written through bench_sock_recv / bench_sock_send, which
 * are plain recv/send on a connection without TLS.  The epoll engine keeps
 * the session on its socket.  The io_uring engine moves the session onto
 * memory BIOs (bench_tls_use_memory) once the handshake is done: its
 * receives go in through bench_tls_feed, plaintext comes out of
 * bench_sock_recv, requests go in through bench_sock_send and the ciphertext
 * its sends carry comes out of bench_tls_drain. */
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
/* Moves fd's session onto memory BIOs: from now on nothing reads or writes
 * the socket for it.  1 when fd has a session, 0 when it has none, -1. */
int bench_tls_use_memory(int fd);
/* Memory BIOs: n received ciphertext bytes for the session; 0 or -1. */
int bench_tls_feed(int fd, const void *p, size_t n);
/* Memory BIOs: ciphertext waiting to be sent, in bytes. */
size_t bench_tls_out_pending(int fd);
/* Memory BIOs: takes up to cap ciphertext bytes to send; bytes taken. */
size_t bench_tls_drain(int fd, void *p, size_t cap);
/* Free the session of fd, if any, and close fd. */
void bench_sock_close(int fd);

#endif
