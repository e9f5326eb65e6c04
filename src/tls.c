/* tls.c: the server's TLS contexts and counters (see tls.h).
 *
 * Settings are Redis 7.0's: tls-cert-file / tls-key-file (with
 * tls-key-file-pass) is the server's certificate; tls-ca-cert-file /
 * tls-ca-cert-dir the CAs a peer's certificate must chain to;
 * tls-auth-clients whether a client must (yes), may (optional) or need not
 * (no) show one; tls-protocols, tls-ciphers, tls-ciphersuites,
 * tls-prefer-server-ciphers, tls-dh-params-file and the session cache.
 * Outgoing links (replication) use tls-client-cert-file / -key-file, or the
 * server's pair when those are empty.  Every context asks OpenSSL to free
 * its record buffers between records (SSL_MODE_RELEASE_BUFFERS): an idle
 * TLS client costs its SSL object and little more.  Renegotiation is
 * refused (SSL_OP_NO_RENEGOTIATION). */
#include "tls.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "zmalloc.h"

typedef struct tls_state {
    SSL_CTX *server_ctx, *client_ctx;
    long long connected;          /* TLS clients now */
    long long accepted;           /* TLS connections accepted, ever */
    long long handshakes;         /* completed */
    long long handshake_failures; /* ended before completing */
} tls_state_t;

static void *ossl_malloc(size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    return ztrymalloc(n ? n : 1);
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line) {
    (void)file;
    (void)line;
    if (n == 0) {
        zfree(p);
        return NULL;
    }
    return ztryrealloc(p, n);
}

static void ossl_free(void *p, const char *file, int line) {
    (void)file;
    (void)line;
    zfree(p);
}

void tls_use_zmalloc(void) {
    if (!CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free))
        log_msg(LL_WARNING, "OpenSSL allocated before start-up: its memory is not in used_memory");
}

static tls_state_t *state(server_t *srv) {
    if (!srv->tls) srv->tls = zcalloc(sizeof(tls_state_t));
    return srv->tls;
}

bool tls_wanted(const server_t *srv) {
    return srv->cfg.tls_port || srv->cfg.tls_replication || srv->cfg.tls_cluster;
}

static bool set(const char *s) { return s && s[0]; }

/* The last OpenSSL error as text, for the log line. */
static const char *ssl_error(char *buf, size_t cap) {
    unsigned long e = ERR_peek_last_error();
    if (!e) return "unknown error";
    ERR_error_string_n(e, buf, cap);
    ERR_clear_error();
    return buf;
}

/* tls-protocols: a space-separated list of TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
 * empty means TLSv1.2 and TLSv1.3 (Redis's default).  Sets the range on
 * ctx; false for an unknown name or an empty list. */
static bool apply_protocols(SSL_CTX *ctx, const char *list) {
    static const struct {
        const char *name;
        int version;
    } known[] = {
        {"tlsv1", TLS1_VERSION}, {"tlsv1.1", TLS1_1_VERSION}, {"tlsv1.2", TLS1_2_VERSION}, {"tlsv1.3", TLS1_3_VERSION}};
    int lo = 0, hi = 0;
    if (!set(list)) {
        lo = TLS1_2_VERSION;
        hi = TLS1_3_VERSION;
    } else {
        int argc = 0;
        sds *argv = sds_splitargs(list, &argc);
        if (!argv) return false;
        bool ok = argc > 0;
        for (int i = 0; i < argc && ok; i++) {
            size_t k = 0;
            while (k < sizeof(known) / sizeof(known[0]) && strcasecmp(argv[i], known[k].name)) k++;
            if (k == sizeof(known) / sizeof(known[0])) {
                log_msg(LL_WARNING, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
                                    "'TLSv1.2' and 'TLSv1.3'.");
                ok = false;
                break;
            }
            if (!lo || known[k].version < lo) lo = known[k].version;
            if (known[k].version > hi) hi = known[k].version;
        }
        sds_free_splitres(argv, argc);
        if (!ok) return false;
    }
    /* A list with a gap (TLSv1 TLSv1.3) is taken as its whole range. */
    return SSL_CTX_set_min_proto_version(ctx, lo) == 1 && SSL_CTX_set_max_proto_version(ctx, hi) == 1;
}

/* A private key's pass phrase from tls-key-file-pass / tls-client-key-file-pass. */
static int pass_cb(char *buf, int size, int rwflag, void *u) {
    (void)rwflag;
    const char *pass = u;
    if (!pass) return 0;
    int n = (int)strlen(pass);
    if (n > size) n = size;
    memcpy(buf, pass, (size_t)n);
    return n;
}

static bool load_pair(SSL_CTX *ctx, const char *cert, const char *key, const char *pass, const char *what) {
    char err[256];
    SSL_CTX_set_default_passwd_cb(ctx, pass_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, set(pass) ? (void *)pass : NULL);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        log_msg(LL_WARNING, "Failed to load %scertificate: %s: %s", what, cert, ssl_error(err, sizeof(err)));
        return false;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        log_msg(LL_WARNING, "Failed to load %sprivate key: %s: %s", what, key, ssl_error(err, sizeof(err)));
        return false;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        log_msg(LL_WARNING, "The %sprivate key does not match the certificate: %s", what, ssl_error(err, sizeof(err)));
        return false;
    }
    /* The callback's data points into the config: not needed after loading. */
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    return true;
}

/* What both contexts share: protocols, ciphers, CAs, buffers. */
static bool apply_common(SSL_CTX *ctx, const rl_config_t *cfg) {
    char err[256];
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (!apply_protocols(ctx, cfg->tls_protocols)) return false;
    if (set(cfg->tls_ciphers) && !SSL_CTX_set_cipher_list(ctx, cfg->tls_ciphers)) {
        log_msg(LL_WARNING, "Failed to configure ciphers: %s", ssl_error(err, sizeof(err)));
        return false;
    }
    if (set(cfg->tls_ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, cfg->tls_ciphersuites)) {
        log_msg(LL_WARNING, "Failed to configure ciphersuites: %s", ssl_error(err, sizeof(err)));
        return false;
    }
    if ((set(cfg->tls_ca_cert_file) || set(cfg->tls_ca_cert_dir)) &&
        SSL_CTX_load_verify_locations(ctx, set(cfg->tls_ca_cert_file) ? cfg->tls_ca_cert_file : NULL,
                                      set(cfg->tls_ca_cert_dir) ? cfg->tls_ca_cert_dir : NULL) <= 0) {
        log_msg(LL_WARNING, "Failed to configure CA certificate(s) file/directory: %s", ssl_error(err, sizeof(err)));
        return false;
    }
    return true;
}

static bool apply_dh(SSL_CTX *ctx, const char *file) {
    if (!set(file)) return SSL_CTX_set_dh_auto(ctx, 1) == 1;
    BIO *bio = BIO_new_file(file, "r");
    EVP_PKEY *dh = bio ? PEM_read_bio_Parameters(bio, NULL) : NULL;
    if (bio) BIO_free(bio);
    if (!dh || SSL_CTX_set0_tmp_dh_pkey(ctx, dh) != 1) {
        char err[256];
        log_msg(LL_WARNING, "Failed to load %s: %s", file, ssl_error(err, sizeof(err)));
        if (dh) EVP_PKEY_free(dh);
        return false;
    }
    return true;
}

static SSL_CTX *build_server_ctx(const rl_config_t *cfg) {
    if (!set(cfg->tls_cert_file)) {
        log_msg(LL_WARNING, "No tls-cert-file configured!");
        return NULL;
    }
    if (!set(cfg->tls_key_file)) {
        log_msg(LL_WARNING, "No tls-key-file configured!");
        return NULL;
    }
    if (cfg->tls_auth_clients != TLS_AUTH_NO && !set(cfg->tls_ca_cert_file) && !set(cfg->tls_ca_cert_dir)) {
        log_msg(LL_WARNING, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-auth-clients "
                            "is enabled!");
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) return NULL;
    bool ok = apply_common(ctx, cfg) && apply_dh(ctx, cfg->tls_dh_params_file) &&
              load_pair(ctx, cfg->tls_cert_file, cfg->tls_key_file, cfg->tls_key_file_pass, "");
    if (!ok) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (cfg->tls_prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (cfg->tls_session_caching) {
        static const unsigned char sid_ctx[] = "redis-like";
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, cfg->tls_session_cache_size);
        SSL_CTX_set_timeout(ctx, cfg->tls_session_cache_timeout);
        SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    }
    int verify = cfg->tls_auth_clients == TLS_AUTH_YES        ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                 : cfg->tls_auth_clients == TLS_AUTH_OPTIONAL ? SSL_VERIFY_PEER
                                                              : SSL_VERIFY_NONE;
    SSL_CTX_set_verify(ctx, verify, NULL);
    return ctx;
}

/* The context of our outgoing links: it checks the server's certificate
 * against the CAs and shows ours. */
static SSL_CTX *build_client_ctx(const rl_config_t *cfg) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) return NULL;
    bool own = set(cfg->tls_client_cert_file);
    const char *cert = own ? cfg->tls_client_cert_file : cfg->tls_cert_file;
    const char *key = own ? cfg->tls_client_key_file : cfg->tls_key_file;
    const char *pass = own ? cfg->tls_client_key_file_pass : cfg->tls_key_file_pass;
    bool ok = apply_common(ctx, cfg) && (!set(cert) || load_pair(ctx, cert, key, pass, "client "));
    if (!ok) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

bool tls_configure(server_t *srv) {
    SSL_CTX *sctx = build_server_ctx(&srv->cfg);
    SSL_CTX *cctx = sctx ? build_client_ctx(&srv->cfg) : NULL;
    if (!sctx || !cctx) {
        if (sctx) SSL_CTX_free(sctx);
        return false;
    }
    tls_state_t *t = state(srv);
    /* Clients keep their own reference: freeing ours drops nobody. */
    if (t->server_ctx) SSL_CTX_free(t->server_ctx);
    if (t->client_ctx) SSL_CTX_free(t->client_ctx);
    t->server_ctx = sctx;
    t->client_ctx = cctx;
    return true;
}

struct ssl_ctx_st *tls_server_ctx(const server_t *srv) {
    return srv->tls ? srv->tls->server_ctx : NULL;
}
struct ssl_ctx_st *tls_client_ctx(const server_t *srv) {
    return srv->tls ? srv->tls->client_ctx : NULL;
}

void tls_free(server_t *srv) {
    tls_state_t *t = srv->tls;
    if (!t) return;
    if (t->server_ctx) SSL_CTX_free(t->server_ctx);
    if (t->client_ctx) SSL_CTX_free(t->client_ctx);
    zfree(t);
    srv->tls = NULL;
}

const char *tls_config_changed(server_t *srv, const char *name) {
    if (strncasecmp(name, "tls-", 4) != 0 || !strcasecmp(name, "tls-port")) return NULL;
    if (!tls_wanted(srv)) return NULL; /* built when a tls-port or TLS link asks for it, as in Redis */
    return tls_configure(srv) ? NULL : "Unable to update TLS configuration. Check server logs.";
}

void tls_note_accepted(server_t *srv) {
    tls_state_t *t = state(srv);
    t->connected++;
    t->accepted++;
}

void tls_note_closed(server_t *srv) { state(srv)->connected--; }

void tls_note_handshake(server_t *srv, bool ok) {
    if (ok) state(srv)->handshakes++;
    else state(srv)->handshake_failures++;
}

sds tls_info(const server_t *srv, sds s) {
    const tls_state_t *t = srv->tls;
    if (!t) return s;
    return sds_catprintf(s,
                         "tls_connected_clients:%lld\r\n"
                         "tls_total_connections_received:%lld\r\n"
                         "tls_total_handshakes:%lld\r\n"
                         "tls_total_handshake_failures:%lld\r\n",
                         t->connected, t->accepted, t->handshakes, t->handshake_failures);
}
