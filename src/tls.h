/* tls.h: the server's TLS contexts, built from the tls-* settings, and its
 * TLS counters.
 *
 * tls_configure builds a server context (tls-cert-file, tls-key-file, the
 * CA for client certificates, protocols, ciphers, session cache) and a
 * client context for outgoing links (tls-client-cert-file, or the server
 * certificate).  A new pair replaces the old only when both built: CONFIG
 * SET of a bad file is refused and the running context stays.  Connections
 * hold their own reference to the context they started with, so a reload
 * drops nobody.  tls_conn.c runs each connection; conn.c and listeners.c
 * ask here for the context and count through tls_note_*. */
#ifndef RL_TLS_H
#define RL_TLS_H

#include <stdbool.h>

#include "sds.h"
#include "server.h"

struct ssl_ctx_st;

/* OpenSSL allocates through zmalloc from now on, so that its sessions and
 * buffers count in used_memory (INFO, maxmemory): first thing in main(),
 * before OpenSSL's first allocation. */
void tls_use_zmalloc(void);
/* Build the contexts from srv->cfg; false (reason logged) keeps the old. */
bool tls_configure(server_t *srv);
/* TLS is wanted: a tls-port, or tls-replication / tls-cluster. */
bool tls_wanted(const server_t *srv);
/* The contexts, NULL until tls_configure succeeded once. */
struct ssl_ctx_st *tls_server_ctx(const server_t *srv);
struct ssl_ctx_st *tls_client_ctx(const server_t *srv);
void tls_free(server_t *srv);

/* CONFIG SET side effect for a tls-* name other than tls-port: NULL, or
 * Redis's error (the caller puts the old values back). */
const char *tls_config_changed(server_t *srv, const char *name);

/* Counters (INFO stats). */
void tls_note_accepted(server_t *srv);
void tls_note_closed(server_t *srv);
void tls_note_handshake(server_t *srv, bool ok);
sds tls_info(const server_t *srv, sds s);

#endif
