/* tls_conn.h: one TLS connection's OpenSSL state over memory BIOs.
 *
 * The socket stays with the engines (epoll's read/write in conn.c, the
 * io_uring engine's receives and sends): they hand the ciphertext they
 * received to tls_conn_feed, tls_conn_read gives the plaintext back for the
 * parser; replies are encrypted with tls_conn_write, and the ciphertext the
 * engine must send is taken with tls_conn_output / tls_conn_sent.  Nothing
 * here touches a file descriptor or the server's state: conn.c owns the
 * client and calls in. */
#ifndef RL_TLS_CONN_H
#define RL_TLS_CONN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tls_conn tls_conn_t;
struct ssl_ctx_st;

/* tls_conn_read's results besides a byte count (> 0). */
#define TLS_READ_AGAIN 0   /* no plaintext until more ciphertext arrives */
#define TLS_READ_ERROR -1  /* handshake or record failure: close (tls_conn_error says why) */
#define TLS_READ_CLOSED -2 /* the peer sent close_notify */

/* A server-side connection on ctx (the connection keeps its own reference:
 * a certificate reload does not disturb it). NULL if OpenSSL refuses. */
tls_conn_t *tls_conn_new(struct ssl_ctx_st *ctx);
/* A client-side connection (replication link): the handshake starts with
 * the first tls_conn_read or tls_conn_write. */
tls_conn_t *tls_conn_new_client(struct ssl_ctx_st *ctx);
void tls_conn_free(tls_conn_t *t);

/* n received bytes of ciphertext. */
void tls_conn_feed(tls_conn_t *t, const char *p, size_t n);
/* Plaintext decrypted from what was fed: up to cap bytes, or one of the
 * TLS_READ_* results.  Drives the handshake. */
long tls_conn_read(tls_conn_t *t, char *buf, size_t cap);
/* Encrypt n bytes of plaintext: the count taken (all of it unless the
 * handshake is not done yet: then 0), or -1 on failure. */
long tls_conn_write(tls_conn_t *t, const char *p, size_t n);

/* Ciphertext waiting to be sent (records, handshake messages, alerts). */
bool tls_conn_has_output(const tls_conn_t *t);
/* The ciphertext to send now: a stable buffer (it does not move until
 * tls_conn_sent has taken all of it); *len 0 when there is none. */
const char *tls_conn_output(tls_conn_t *t, size_t *len);
/* n bytes of what tls_conn_output gave were sent. */
void tls_conn_sent(tls_conn_t *t, size_t n);

bool tls_conn_handshake_done(const tls_conn_t *t);
/* Drive a client-side handshake on what was fed: 1 done, 0 needs more
 * ciphertext (send tls_conn_output first), -1 failed (tls_conn_error). */
int tls_conn_handshake(tls_conn_t *t);
/* Once per connection: true the first time it is asked after the
 * handshake completed (the server counts handshakes with it). */
bool tls_conn_take_handshake_event(tls_conn_t *t);
/* The reason of the last TLS_READ_ERROR, for the log. */
const char *tls_conn_error(const tls_conn_t *t);
/* Let go of the BIOs' storage when they are empty and grew large (a
 * handshake's certificates): called when a batch of input is done. */
void tls_conn_trim(tls_conn_t *t);
/* Bytes this connection holds beyond OpenSSL's own: the output buffer and
 * what the memory BIOs keep. */
size_t tls_conn_memory(const tls_conn_t *t);
/* The peer's certificate subject (one line) when it sent one, else "". */
void tls_conn_peer_subject(const tls_conn_t *t, char *buf, size_t cap);

#endif
