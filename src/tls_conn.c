/* tls_conn.c: one TLS connection over memory BIOs (see tls_conn.h).
 *
 * OpenSSL never sees the socket: rbio holds ciphertext the engine received,
 * wbio collects what OpenSSL produced (records, handshake messages,
 * alerts).  The engine sends from `out`, our own copy of wbio's bytes, so
 * the buffer a send in flight reads never moves: it is refilled only once
 * the engine reported all of it sent.  The context asks for
 * SSL_MODE_RELEASE_BUFFERS (tls.c), so an idle connection holds no record
 * buffers; `out` and the BIOs' storage are released too once empty if
 * they grew past TLS_KEEP_BYTES (tls_conn_trim). */
#include "tls_conn.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <string.h>

#include "zmalloc.h"

/* Buffers an idle connection keeps: `out` and the memory BIOs' storage
 * (which never shrinks by itself) are let go once empty when they grew
 * past this (a handshake's certificates, a large reply). */
#define TLS_KEEP_BYTES 1024

struct tls_conn {
    SSL *ssl;
    BIO *rbio, *wbio; /* owned by ssl */
    char *out;        /* ciphertext being sent: out[out_pos..out_len) */
    size_t out_len, out_pos, out_cap;
    bool handshake_counted;
    char error[160];
};

static BIO *new_mem_bio(void) {
    BIO *b = BIO_new(BIO_s_mem());
    if (b) BIO_set_mem_eof_return(b, -1); /* empty means "more later", not end of file */
    return b;
}

/* The storage a memory BIO holds whatever its pending bytes. */
static size_t bio_capacity(BIO *b) {
    BUF_MEM *bm = NULL;
    BIO_get_mem_ptr(b, &bm);
    return bm ? bm->max : 0;
}

void tls_conn_trim(tls_conn_t *t) {
    if (BIO_ctrl_pending(t->rbio) == 0 && bio_capacity(t->rbio) > TLS_KEEP_BYTES) {
        BIO *b = new_mem_bio();
        if (b) {
            SSL_set0_rbio(t->ssl, b); /* frees the old one */
            t->rbio = b;
        }
    }
    if (BIO_ctrl_pending(t->wbio) == 0 && bio_capacity(t->wbio) > TLS_KEEP_BYTES) {
        BIO *b = new_mem_bio();
        if (b) {
            SSL_set0_wbio(t->ssl, b);
            t->wbio = b;
        }
    }
}

static tls_conn_t *conn_new(SSL_CTX *ctx, bool server) {
    tls_conn_t *t = zcalloc(sizeof(*t));
    t->ssl = SSL_new(ctx);
    t->rbio = new_mem_bio();
    t->wbio = new_mem_bio();
    if (!t->ssl || !t->rbio || !t->wbio) {
        if (t->ssl) SSL_free(t->ssl);
        if (t->rbio) BIO_free(t->rbio);
        if (t->wbio) BIO_free(t->wbio);
        zfree(t);
        return NULL;
    }
    SSL_set_bio(t->ssl, t->rbio, t->wbio);
    if (server) SSL_set_accept_state(t->ssl);
    else SSL_set_connect_state(t->ssl);
    return t;
}

tls_conn_t *tls_conn_new(struct ssl_ctx_st *ctx) { return conn_new(ctx, true); }
tls_conn_t *tls_conn_new_client(struct ssl_ctx_st *ctx) { return conn_new(ctx, false); }

void tls_conn_free(tls_conn_t *t) {
    if (!t) return;
    SSL_free(t->ssl); /* frees both BIOs */
    zfree(t->out);
    zfree(t);
}

void tls_conn_feed(tls_conn_t *t, const char *p, size_t n) {
    while (n > 0) {
        int chunk = n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
        int w = BIO_write(t->rbio, p, chunk);
        if (w <= 0) return; /* a memory BIO fails only out of memory */
        p += w;
        n -= (size_t)w;
    }
}

/* The reason OpenSSL gave, for the log line that closes the connection. */
static void note_error(tls_conn_t *t, int ssl_err) {
    unsigned long e = ERR_peek_error();
    if (e) {
        ERR_error_string_n(e, t->error, sizeof(t->error));
    } else {
        snprintf(t->error, sizeof(t->error), "SSL error %d", ssl_err);
    }
    ERR_clear_error();
}

long tls_conn_read(tls_conn_t *t, char *buf, size_t cap) {
    ERR_clear_error();
    int chunk = cap > (size_t)INT32_MAX ? INT32_MAX : (int)cap;
    int r = SSL_read(t->ssl, buf, chunk);
    if (r > 0) return r;
    int err = SSL_get_error(t->ssl, r);
    switch (err) {
        case SSL_ERROR_WANT_READ:
        case SSL_ERROR_WANT_WRITE: return TLS_READ_AGAIN; /* wbio is memory: it never refuses */
        case SSL_ERROR_ZERO_RETURN: return TLS_READ_CLOSED;
        default: note_error(t, err); return TLS_READ_ERROR;
    }
}

long tls_conn_write(tls_conn_t *t, const char *p, size_t n) {
    if (n == 0) return 0;
    if (!SSL_is_init_finished(t->ssl)) return 0; /* replies wait for the handshake */
    ERR_clear_error();
    size_t written = 0;
    int r = SSL_write_ex(t->ssl, p, n, &written);
    if (r == 1) return (long)written;
    int err = SSL_get_error(t->ssl, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return 0;
    note_error(t, err);
    return -1;
}

bool tls_conn_has_output(const tls_conn_t *t) { return t->out_pos < t->out_len || BIO_ctrl_pending(t->wbio) > 0; }

const char *tls_conn_output(tls_conn_t *t, size_t *len) {
    if (t->out_pos == t->out_len) { /* all sent: refill from wbio */
        t->out_pos = t->out_len = 0;
        size_t pending = BIO_ctrl_pending(t->wbio);
        if (pending > 0) {
            if (pending > t->out_cap) {
                zfree(t->out);
                t->out = zmalloc(pending);
                t->out_cap = pending;
            }
            int r = BIO_read(t->wbio, t->out, (int)(pending > (size_t)INT32_MAX ? INT32_MAX : pending));
            t->out_len = r > 0 ? (size_t)r : 0;
            tls_conn_trim(t); /* wbio is empty now */
        }
    }
    *len = t->out_len - t->out_pos;
    return t->out + t->out_pos;
}

void tls_conn_sent(tls_conn_t *t, size_t n) {
    t->out_pos += n;
    if (t->out_pos > t->out_len) t->out_pos = t->out_len;
    if (t->out_pos == t->out_len) {
        t->out_pos = t->out_len = 0;
        if (t->out_cap > TLS_KEEP_BYTES) { /* a large reply's buffer is not kept while idle */
            zfree(t->out);
            t->out = NULL;
            t->out_cap = 0;
        }
    }
}

bool tls_conn_handshake_done(const tls_conn_t *t) { return SSL_is_init_finished(t->ssl); }

int tls_conn_handshake(tls_conn_t *t) {
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) return 1;
    int err = SSL_get_error(t->ssl, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return 0;
    note_error(t, err);
    return -1;
}

bool tls_conn_take_handshake_event(tls_conn_t *t) {
    if (t->handshake_counted || !SSL_is_init_finished(t->ssl)) return false;
    t->handshake_counted = true;
    return true;
}

const char *tls_conn_error(const tls_conn_t *t) { return t->error[0] ? t->error : "connection failed"; }

size_t tls_conn_memory(const tls_conn_t *t) {
    return zmalloc_size((void *)t) + (t->out ? zmalloc_size(t->out) : 0) + bio_capacity(t->rbio) +
           bio_capacity(t->wbio);
}

void tls_conn_peer_subject(const tls_conn_t *t, char *buf, size_t cap) {
    buf[0] = '\0';
    X509 *cert = SSL_get1_peer_certificate(t->ssl);
    if (!cert) return;
    X509_NAME_oneline(X509_get_subject_name(cert), buf, (int)cap);
    X509_free(cert);
}
