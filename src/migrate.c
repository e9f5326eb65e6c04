/* migrate.c: MIGRATE, moving keys to another server.
 *
 * MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user
 * pw] [KEYS key ...] connects to the target, sends AUTH (if asked), SELECT
 * db and one RESTORE per key (the DUMP payload of dump.c with the key's
 * remaining TTL), reads every reply, and deletes the keys the target
 * accepted unless COPY (propagated to the AOF as one DEL).  As in Redis the
 * command is synchronous: the server waits for the target, each step
 * bounded by `timeout` ms.  Errors are Redis 7.0's: +NOKEY when no key
 * exists, -IOERR on connection or I/O failures, "Target instance replied
 * with error" when the target refused.  Unlike Redis, no connection is kept
 * for the next MIGRATE (each call connects anew).  With tls-cluster yes the
 * connection is TLS, as Redis's MIGRATE dials then (tls_conn.c's client
 * session, driven here with blocking waits). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "commands.h"
#include "dump.h"
#include "keyspace.h"
#include "net.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "server.h"
#include "tls.h"
#include "tls_conn.h"
#include "util.h"

typedef struct migrate_args {
    bool copy, replace;
    const char *user, *password; /* NULL when not given */
    int first_key, num_keys;     /* argv positions of the keys */
    long long db, timeout_ms;
} migrate_args;

static bool parse_or_reply(client_t *c, migrate_args *a) {
    memset(a, 0, sizeof(*a));
    a->first_key = 3;
    a->num_keys = 1;
    for (int j = 6; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        int more = c->argc - 1 - j;
        if (!strcasecmp(opt, "copy")) {
            a->copy = true;
        } else if (!strcasecmp(opt, "replace")) {
            a->replace = true;
        } else if (!strcasecmp(opt, "auth") && more >= 1) {
            a->password = c->argv[++j]->ptr;
        } else if (!strcasecmp(opt, "auth2") && more >= 2) {
            a->user = c->argv[++j]->ptr;
            a->password = c->argv[++j]->ptr;
        } else if (!strcasecmp(opt, "keys")) {
            if (sds_len(c->argv[3]->ptr) != 0) {
                reply_error(c, "When using MIGRATE KEYS option, the key argument must be set to the empty string");
                return false;
            }
            a->first_key = j + 1;
            a->num_keys = c->argc - j - 1;
            break; /* the rest are keys */
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    if (!cmd_get_ll_or_reply(c, c->argv[5], &a->timeout_ms, NULL)) return false;
    if (!cmd_get_ll_or_reply(c, c->argv[4], &a->db, NULL)) return false;
    if (a->timeout_ms <= 0) a->timeout_ms = 1000;
    return true;
}

static sds append_command(sds buf, int argc, const char **argv, const size_t *lens) {
    buf = sds_catprintf(buf, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf = sds_catprintf(buf, "$%zu\r\n", lens[i]);
        buf = sds_catlen(buf, argv[i], lens[i]);
        buf = sds_catlen(buf, "\r\n", 2);
    }
    return buf;
}

static sds append_cstr_command(sds buf, int argc, const char **argv) {
    size_t lens[8];
    for (int i = 0; i < argc; i++) lens[i] = strlen(argv[i]);
    return append_command(buf, argc, argv, lens);
}

/* The connection to the target: plain, or TLS (tls non-NULL). */
typedef struct mconn {
    int fd;
    tls_conn_t *tls;
} mconn;

static bool wait_fd(int fd, short events, long long timeout_ms) {
    struct pollfd pfd = {fd, events, 0};
    return poll(&pfd, 1, (int)timeout_ms) == 1;
}

/* Raw bytes out within timeout_ms per wait. */
static bool write_raw(int fd, const char *p, size_t len, long long timeout_ms) {
    while (len) {
        if (!wait_fd(fd, POLLOUT, timeout_ms)) return false;
        ssize_t n = write(fd, p, len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* The TLS session's pending ciphertext out. */
static bool tls_flush(mconn *m, long long timeout_ms) {
    size_t len;
    const char *o;
    while ((o = tls_conn_output(m->tls, &len)) && len) {
        if (!write_raw(m->fd, o, len, timeout_ms)) return false;
        tls_conn_sent(m->tls, len);
    }
    return true;
}

/* Ciphertext in: false on a timeout, the end or an error. */
static bool tls_fill(mconn *m, long long timeout_ms) {
    char buf[16384];
    for (;;) {
        if (!wait_fd(m->fd, POLLIN, timeout_ms)) return false;
        ssize_t n = read(m->fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return false;
        tls_conn_feed(m->tls, buf, (size_t)n);
        return true;
    }
}

static bool tls_handshake(mconn *m, long long timeout_ms) {
    for (;;) {
        int h = tls_conn_handshake(m->tls);
        if (!tls_flush(m, timeout_ms)) return false;
        if (h != 0) return h == 1;
        if (!tls_fill(m, timeout_ms)) return false;
    }
}

/* Send all of buf within timeout_ms per wait. */
static bool send_all(mconn *m, const char *p, size_t len, long long timeout_ms) {
    if (!m->tls) return write_raw(m->fd, p, len, timeout_ms);
    if (tls_conn_write(m->tls, p, len) != (long)len) return false;
    return tls_flush(m, timeout_ms);
}

/* One reply line (without CRLF) into line; the replies MIGRATE reads are
 * all single lines (+OK or -error). */
typedef struct reader {
    mconn *m;
    char buf[4096];
    size_t len;
} reader;

/* More bytes into r->buf: false on a timeout, the end or an error. */
static bool read_more(reader *r, long long timeout_ms) {
    mconn *m = r->m;
    size_t room = sizeof(r->buf) - r->len;
    for (;;) {
        if (m->tls) {
            long got = tls_conn_read(m->tls, r->buf + r->len, room);
            if (got > 0) {
                r->len += (size_t)got;
                return true;
            }
            if (got != TLS_READ_AGAIN || !tls_flush(m, timeout_ms) || !tls_fill(m, timeout_ms)) return false;
            continue;
        }
        if (!wait_fd(m->fd, POLLIN, timeout_ms)) return false;
        ssize_t n = read(m->fd, r->buf + r->len, room);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return false;
        r->len += (size_t)n;
        return true;
    }
}

static bool read_line(reader *r, char *line, size_t size, long long timeout_ms) {
    for (;;) {
        char *nl = memchr(r->buf, '\n', r->len);
        if (nl) {
            size_t n = (size_t)(nl - r->buf);
            size_t keep = n && r->buf[n - 1] == '\r' ? n - 1 : n;
            if (keep >= size) keep = size - 1;
            memcpy(line, r->buf, keep);
            line[keep] = '\0';
            memmove(r->buf, nl + 1, r->len - n - 1);
            r->len -= n + 1;
            return true;
        }
        if (r->len == sizeof(r->buf)) return false;
        if (!read_more(r, timeout_ms)) return false;
    }
}

/* The request: AUTH, SELECT, then RESTORE per live key.  live[] gets the
 * argv index of each key sent. */
static sds build_request(client_t *c, const migrate_args *a, int *live, int *nlive) {
    sds buf = sds_empty();
    if (a->password) {
        const char *argv[3] = {"AUTH", a->user ? a->user : a->password, a->password};
        buf = append_cstr_command(buf, a->user ? 3 : 2, argv);
    }
    char dbstr[32];
    snprintf(dbstr, sizeof(dbstr), "%lld", a->db);
    const char *sel[2] = {"SELECT", dbstr};
    buf = append_cstr_command(buf, 2, sel);
    *nlive = 0;
    for (int i = 0; i < a->num_keys; i++) {
        robj *key = c->argv[a->first_key + i];
        robj *val = db_lookup_read(c->db, key, LOOKUP_NOTOUCH);
        if (!val) continue;
        long long ttl = 0, when = db_get_expire(c->db, key);
        if (when != -1) {
            ttl = when - util_mstime();
            if (ttl < 0) continue; /* expired meanwhile */
            if (ttl < 1) ttl = 1;
        }
        char ttlstr[32];
        snprintf(ttlstr, sizeof(ttlstr), "%lld", ttl);
        sds payload = dump_payload_create(c->srv, val);
        /* In a cluster the target is importing the slot: RESTORE-ASKING
         * is let in there without an ASKING first (Redis 7.0). */
        const char *cmd = c->srv->cfg.cluster_enabled ? "RESTORE-ASKING" : "RESTORE";
        const char *argv[5] = {cmd, key->ptr, ttlstr, payload, "REPLACE"};
        size_t lens[5] = {strlen(cmd), sds_len(key->ptr), strlen(ttlstr), sds_len(payload), 7};
        buf = append_command(buf, a->replace ? 5 : 4, argv, lens);
        sds_free(payload);
        live[(*nlive)++] = a->first_key + i;
    }
    return buf;
}

/* Delete the keys the target accepted; one DEL for the AOF. */
static void delete_moved(client_t *c, const int *moved, int n) {
    if (!n) return;
    robj **del = zmalloc(sizeof(robj *) * (size_t)(n + 1));
    del[0] = obj_create_string("DEL", 3);
    for (int i = 0; i < n; i++) {
        robj *key = c->argv[moved[i]];
        db_delete(c->db, key);
        db_signal_modified(c->db, key);
        notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
        c->srv->dirty++;
        del[i + 1] = key;
    }
    persist_propagate(c, del, n + 1);
    obj_decref(del[0]);
    zfree(del);
}

static void cmd_migrate(client_t *c) {
    migrate_args a;
    if (!parse_or_reply(c, &a)) return;
    int *live = zmalloc(sizeof(int) * (size_t)(a.num_keys ? a.num_keys : 1));
    int nlive;
    sds req = build_request(c, &a, live, &nlive);
    if (nlive == 0) {
        reply_simple(c, "NOKEY");
        goto out;
    }
    long long port;
    char err[128];
    int fd = -1, failed = ETIMEDOUT;
    if (obj_get_ll(c->argv[2], &port) && port > 0 && port < 65536)
        fd = net_connect_tcp_nonblock(c->argv[1]->ptr, (int)port, NULL, err, sizeof(err)); /* Redis 7.0: no bind-source-addr */
    if (fd >= 0) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        failed = poll(&pfd, 1, (int)a.timeout_ms) == 1 ? net_connect_result(fd) : ETIMEDOUT;
    }
    if (fd < 0 || failed) {
        if (fd >= 0) close(fd);
        /* Redis's connect returns before the refusal is known, which then
         * shows up as a failed write. */
        if (fd >= 0 && failed == ECONNREFUSED) reply_error(c, "IOERR error or timeout writing to target instance");
        else reply_error(c, "IOERR error or timeout connecting to the client");
        goto out;
    }
    mconn m = {fd, NULL};
    if (c->srv->cfg.tls_cluster) {
        struct ssl_ctx_st *ctx = tls_client_ctx(c->srv);
        m.tls = ctx ? tls_conn_new_client(ctx) : NULL;
        if (!m.tls || !tls_handshake(&m, a.timeout_ms)) {
            tls_conn_free(m.tls);
            close(fd);
            reply_error(c, "IOERR error or timeout connecting to the client");
            goto out;
        }
    }
    if (!send_all(&m, req, sds_len(req), a.timeout_ms)) {
        tls_conn_free(m.tls);
        close(fd);
        reply_error(c, "IOERR error or timeout writing to target instance");
        goto out;
    }
    reader rd = {.m = &m};
    char line[1024], target_err[1024] = "";
    bool io_error = false;
    int moved_n = 0;
    /* AUTH and SELECT first: a refusal there fails every key.  Then one
     * reply per key: the accepted ones move even if another one failed. */
    for (int i = 0; i < (a.password ? 2 : 1) && !io_error; i++) {
        if (!read_line(&rd, line, sizeof(line), a.timeout_ms)) io_error = true;
        else if (line[0] == '-' && !*target_err) snprintf(target_err, sizeof(target_err), "%s", line + 1);
    }
    bool refused = *target_err != '\0';
    int *moved = zmalloc(sizeof(int) * (size_t)nlive);
    for (int i = 0; i < nlive && !io_error; i++) {
        if (!read_line(&rd, line, sizeof(line), a.timeout_ms)) {
            io_error = true;
        } else if (line[0] == '-') {
            if (!*target_err) snprintf(target_err, sizeof(target_err), "%s", line + 1);
        } else if (!refused) {
            moved[moved_n++] = live[i];
        }
    }
    tls_conn_free(m.tls);
    close(fd);
    if (!a.copy) delete_moved(c, moved, moved_n);
    zfree(moved);
    if (*target_err) reply_error(c, "Target instance replied with error: %s", target_err);
    else if (io_error) reply_error(c, "IOERR error or timeout reading to target instance");
    else reply_ok(c);
out:
    sds_free(req);
    zfree(live);
}

command_t migrate_commands[] = {
    {"migrate", cmd_migrate, -6, CMD_WRITE, 3, 3, 1, "generic", "Atomically transfer a key from a Redis instance to another one.", "2.6.0", NULL},
    {0},
};
