/* fuzz_tls.c: libFuzzer target for the TLS input path (src/tls_conn.c).
 *
 * The input is what a client sends on the tls-port: it is fed to a
 * server-side session in pieces whose sizes come from the first byte (as an
 * engine's receives would deliver it), plaintext is read after each piece
 * and the records the session wants to send are taken and acknowledged in
 * the sizes a short send would give, until the session fails or closes, as
 * conn.c's tls_input and tls_output_iov drive it.  The server certificate
 * is an EC key signed by itself, made once at start-up.  Built and run by
 * `make fuzz` (clang's -fsanitize=fuzzer,address,undefined). */
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tls_conn.h"

static SSL_CTX *ctx;

static SSL_CTX *make_ctx(void) {
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    if (!key || !cert) abort();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"fuzz", -1, -1, 0);
    X509_set_issuer_name(cert, name);
    if (!X509_sign(cert, key, EVP_sha256())) abort();
    SSL_CTX *c = SSL_CTX_new(TLS_server_method());
    if (!c || SSL_CTX_use_certificate(c, cert) != 1 || SSL_CTX_use_PrivateKey(c, key) != 1) abort();
    SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION);
    X509_free(cert);
    EVP_PKEY_free(key);
    return c;
}

/* Take the records the session wants sent, `step` bytes per "send". */
static void drain(tls_conn_t *t, size_t step) {
    while (tls_conn_has_output(t)) {
        size_t len;
        tls_conn_output(t, &len);
        if (len == 0) break;
        tls_conn_sent(t, len < step ? len : step);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ctx) ctx = make_ctx();
    if (size < 1) return 0;
    size_t step = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    tls_conn_t *t = tls_conn_new(ctx);
    if (!t) abort();
    char plain[16 * 1024];
    size_t fed = 0;
    bool done = false;
    while (fed < size && !done) {
        size_t n = size - fed < step * 7 ? size - fed : step * 7;
        tls_conn_feed(t, (const char *)data + fed, n);
        fed += n;
        for (;;) {
            long r = tls_conn_read(t, plain, sizeof(plain));
            if (r > 0) {
                if (tls_conn_handshake_done(t)) tls_conn_write(t, plain, (size_t)r); /* an echo as the reply */
                continue;
            }
            if (r != TLS_READ_AGAIN) done = true;
            break;
        }
        drain(t, step);
        (void)tls_conn_take_handshake_event(t);
        (void)tls_conn_memory(t);
    }
    tls_conn_free(t);
    return 0;
}
