/* reply.c: reply builders for RESP2 and RESP3 (see reply.h).
 *
 * Output goes to the client's static buffer while it fits and nothing is
 * queued in blocks; after that, into a list of blocks of >= 16 KB.  Order is
 * preserved because once a block exists, everything goes to the last one. */
#include "reply.h"
#include "rl_assert.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_def.h"
#include "log.h"
#include "util.h"
#include "zmalloc.h"

static reply_block *block_new(size_t need) {
    size_t size = need < REPLY_BLOCK_MIN ? REPLY_BLOCK_MIN : need;
    reply_block *b = zmalloc(sizeof(*b) + size);
    b->size = zmalloc_size(b) - sizeof(*b);
    b->used = 0;
    b->next = NULL;
    return b;
}

static void append_blocks(client_t *c, const char *p, size_t len) {
    reply_block *t = c->reply_tail;
    if (t && t->size > t->used) {
        size_t n = t->size - t->used;
        if (n > len) n = len;
        memcpy(t->buf + t->used, p, n);
        t->used += n;
        c->reply_bytes += n;
        p += n;
        len -= n;
    }
    if (len == 0) {
        /* A client that has not authenticated is held to 1 KB of blocks,
         * checked on every append, not only when a block is added (conn.c). */
        if (!(c->flags & CLIENT_AUTHENTICATED)) conn_check_output_limit(c);
        return;
    }
    reply_block *b = block_new(len);
    memcpy(b->buf, p, len);
    b->used = len;
    c->reply_bytes += len;
    if (t) t->next = b;
    else c->reply_head = b;
    c->reply_tail = b;
    /* A new block is the only way output grows past the static buffer:
     * the place to enforce client-output-buffer-limit (conn.c). */
    conn_check_output_limit(c);
}

/* Count replies for the replied-or-blocked check in dispatch.c (debug
 * builds only: the release build pays nothing). */
static inline void reply_count(client_t *c) {
#if RL_DEBUG >= 2
    c->reply_calls++;
#else
    (void)c;
#endif
}

/* CLIENT REPLY OFF/SKIP silence replies, but not pushes and messages. */
static bool silenced(client_t *c) {
    /* The master link hears nothing back but what repl_replica.c forces
     * (REPLCONF ACK). */
    if (c->flags & CLIENT_MASTER) return !(c->flags & CLIENT_MASTER_FORCE_REPLY);
    bool off = (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) && !(c->flags & CLIENT_PUSHING);
    /* dispatch.c silences a replica's own commands: note that one answered */
    if (off && (c->flags & CLIENT_REPLICA)) c->replica_replied = true;
    return off;
}

void reply_raw(client_t *c, const char *p, size_t len) {
    reply_count(c);
    if (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) return;
    if (silenced(c)) return;
    if (!c->reply_head && CLIENT_BUF_SIZE - c->bufpos >= len) {
        memcpy(c->buf + c->bufpos, p, len);
        c->bufpos += len;
    } else {
        append_blocks(c, p, len);
    }
    conn_mark_pending_write(c);
}

static void reply_header(client_t *c, char prefix, long long n) {
    char buf[32];
    buf[0] = prefix;
    int len = 1 + util_ll2str(buf + 1, sizeof(buf) - 3, n);
    buf[len++] = '\r';
    buf[len++] = '\n';
    reply_raw(c, buf, (size_t)len);
}

void reply_simple(client_t *c, const char *s) {
    reply_raw(c, "+", 1);
    reply_raw(c, s, strlen(s));
    reply_raw(c, "\r\n", 2);
}

void reply_ok(client_t *c) { reply_raw(c, "+OK\r\n", 5); }

/* The error code is the first word if it is one of Redis's codes; any other
 * text ("DB index is out of range", "NX and XX ...") gets "ERR ".  A list,
 * not "any capital word", because plain messages may start in capitals. */
static const char *const error_codes[] = {
    "ERR", "WRONGTYPE", "NOAUTH", "WRONGPASS", "NOPROTO", "OOM", "EXECABORT", "BUSY", "NOSCRIPT", "LOADING",
    "READONLY", "MISCONF", "BUSYKEY", "NOPERM", "UNBLOCKED", "DENIED", "NOTBUSY", "NOREPLICAS", "MASTERDOWN",
    "INVALIDOBJ", "TESTFAILED", "UNKILLABLE", "NOGROUP", "BUSYGROUP",
    "IOERR" /* migrate.c */, "MOVED", "ASK", "TRYAGAIN", "CROSSSLOT", "CLUSTERDOWN" /* cluster.c */, NULL};

static size_t code_len(const char *msg) {
    size_t i = 0;
    while (msg[i] && isupper((unsigned char)msg[i])) i++;
    if (i == 0 || msg[i] != ' ') return 0;
    for (const char *const *code = error_codes; *code; code++)
        if (strlen(*code) == i && strncmp(msg, *code, i) == 0) return i;
    return 0;
}

/* An error where none should happen: our master's stream, a replica's
 * REPLCONF, or the AOF being replayed (the command ran once without one).
 * Logged and counted (INFO unexpected_error_replies); with
 * propagation-error-behavior panic (or panic-on-replicas, for the
 * master's stream of a read-only replica) the server stops rather than
 * let its data silently diverge. */
#define UNEXPECTED_ERROR_CLIENTS (CLIENT_MASTER | CLIENT_REPLICA | CLIENT_AOF_LOADER)
static void unexpected_error(client_t *c, const char *msg, size_t len) {
    server_t *srv = c->srv;
    const char *from = (c->flags & CLIENT_MASTER)    ? "our master's stream"
                       : (c->flags & CLIENT_REPLICA) ? "a replica"
                                                     : "the append only file";
    const char *cmd = c->cmd ? c->cmd->fullname : "<unknown>";
    /* hide-user-data-from-log: the error's code only, its text may quote
     * the arguments (an unknown command's, a key's name) */
    if (srv->cfg.hide_user_data_from_log) {
        size_t cl = code_len(msg);
        log_msg(LL_WARNING, "== CRITICAL == The command '%s' from %s failed: '%.*s *redacted*'", cmd, from,
                cl ? (int)cl : 3, cl ? msg : "ERR");
    } else {
        log_msg(LL_WARNING, "== CRITICAL == The command '%s' from %s failed: '%.*s'", cmd, from,
                (int)(len > 512 ? 512 : len), msg);
    }
    srv->stats.unexpected_error_replies++;
    int how = srv->cfg.propagation_error_behavior;
    bool stop = (c->flags & CLIENT_MASTER) && srv->cfg.replica_read_only && how != PROPAGATION_ERR_IGNORE;
    stop = stop || ((c->flags & CLIENT_AOF_LOADER) && how == PROPAGATION_ERR_PANIC);
    if (stop) {
        log_msg(LL_WARNING, "PANIC: stopping after an error applying '%s' from %s (propagation-error-behavior)", cmd,
                from);
        abort();
    }
}

/* INFO's errorstats and total_error_replies. */
static void count_error_code(server_stats_t *st, const char *code, size_t len) {
    st->total_error_replies++;
    sds k = sds_newlen(code, len);
    dict_entry *existing;
    dict_entry *de = dict_add_raw(st->errors, k, &existing);
    if (de) {
        dict_set_s64(de, 1); /* the dict now owns k */
        return;
    }
    dict_set_s64(existing, dict_get_s64(existing) + 1);
    sds_free(k);
}

static void count_error(client_t *c, const char *code, size_t len) {
    count_error_code(&c->srv->stats, code, len);
    if (c->cmd) c->cmd->failed_calls++;
}

void reply_note_error(server_t *srv, const char *msg, size_t len) {
    size_t cl = 0;
    while (cl < len && msg[cl] != ' ') cl++;
    count_error_code(&srv->stats, msg, cl);
}

void reply_error(client_t *c, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof(msg)) n = (int)sizeof(msg) - 1;
    for (int i = 0; i < n; i++)
        if (msg[i] == '\r' || msg[i] == '\n') msg[i] = ' ';
    size_t cl = code_len(msg);
    if (cl) {
        reply_raw(c, "-", 1);
        count_error(c, msg, cl);
    } else {
        reply_raw(c, "-ERR ", 5);
        count_error(c, "ERR", 3);
    }
    reply_raw(c, msg, (size_t)n);
    reply_raw(c, "\r\n", 2);
    if (c->flags & UNEXPECTED_ERROR_CLIENTS) unexpected_error(c, msg, (size_t)n);
}

static void error_raw(client_t *c, const char *msg, size_t len, bool noted) {
    size_t cl = 0;
    while (cl < len && msg[cl] != ' ') cl++;
    reply_raw(c, "-", 1);
    if (!noted) count_error(c, msg, cl);
    else if (c->cmd) c->cmd->failed_calls++;
    for (size_t i = 0; i < len; i++) {
        const char *nl = memchr(msg + i, '\n', len - i), *cr = memchr(msg + i, '\r', len - i);
        const char *stop = !nl ? cr : !cr ? nl
                                          : (nl < cr ? nl : cr);
        size_t n = stop ? (size_t)(stop - (msg + i)) : len - i;
        reply_raw(c, msg + i, n);
        i += n;
        if (stop) reply_raw(c, " ", 1);
    }
    reply_raw(c, "\r\n", 2);
    if (c->flags & UNEXPECTED_ERROR_CLIENTS) unexpected_error(c, msg, len);
}

void reply_error_raw(client_t *c, const char *msg, size_t len) { error_raw(c, msg, len, false); }
void reply_error_raw_noted(client_t *c, const char *msg, size_t len) { error_raw(c, msg, len, true); }

void reply_error_arity(client_t *c) {
    reply_error(c, "wrong number of arguments for '%s' command", c->cmd ? c->cmd->fullname : "unknown");
}

void reply_subcommand_syntax_error(client_t *c) {
    sds cmd = sds_new(c->argv[0]->ptr);
    sds_toupper(cmd);
    reply_error(c, "unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
                (char *)c->argv[1]->ptr, cmd);
    sds_free(cmd);
}

void reply_ll(client_t *c, long long v) {
    if (v == 0) reply_raw(c, ":0\r\n", 4);
    else if (v == 1) reply_raw(c, ":1\r\n", 4);
    else reply_header(c, ':', v);
}

void reply_bulk(client_t *c, const char *p, size_t len) {
    char hdr[32];
    size_t h;
    if (len < 10) { /* the most common lengths: no number formatting */
        hdr[0] = '$';
        hdr[1] = (char)('0' + len);
        hdr[2] = '\r';
        hdr[3] = '\n';
        h = 4;
    } else {
        hdr[0] = '$';
        h = 1 + (size_t)util_ll2str(hdr + 1, sizeof(hdr) - 3, (long long)len);
        hdr[h++] = '\r';
        hdr[h++] = '\n';
    }
    /* Element replies (LRANGE, HGETALL...) are many small bulks: copy the
     * whole frame into the static buffer at once when it fits. */
    if (!(c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) && !silenced(c) && !c->reply_head &&
        CLIENT_BUF_SIZE - c->bufpos >= h + len + 2) {
        char *dst = c->buf + c->bufpos;
        memcpy(dst, hdr, h);
        memcpy(dst + h, p, len);
        memcpy(dst + h + len, "\r\n", 2);
        c->bufpos += h + len + 2;
        reply_count(c);
        conn_mark_pending_write(c);
        return;
    }
    reply_raw(c, hdr, h);
    reply_raw(c, p, len);
    reply_raw(c, "\r\n", 2);
}

void reply_bulk_cstr(client_t *c, const char *s) {
    if (!s) reply_null(c);
    else reply_bulk(c, s, strlen(s));
}

void reply_bulk_sds_take(client_t *c, sds s) {
    reply_bulk(c, s, sds_len(s));
    sds_free(s);
}

void reply_bulk_obj(client_t *c, const robj *o) {
    char buf[32];
    size_t len;
    const char *p = obj_string_view(o, buf, sizeof(buf), &len);
    reply_bulk(c, p, len);
}

void reply_bulk_ll(client_t *c, long long v) {
    char buf[32];
    int n = util_ll2str(buf, sizeof(buf), v);
    reply_bulk(c, buf, (size_t)n);
}

void reply_null(client_t *c) {
    if (c->resp >= 3) reply_raw(c, "_\r\n", 3);
    else reply_raw(c, "$-1\r\n", 5);
}

void reply_null_array(client_t *c) {
    if (c->resp >= 3) reply_raw(c, "_\r\n", 3);
    else reply_raw(c, "*-1\r\n", 5);
}

void reply_array_len(client_t *c, long n) { reply_header(c, '*', n); }

void reply_scan_cursor(client_t *c, unsigned long cursor) {
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%lu", cursor);
    reply_bulk(c, buf, (size_t)n);
}
/* pubsub.c: out-of-band data (messages, subscribe confirmations). */
void reply_push_len(client_t *c, long n) { reply_header(c, c->resp >= 3 ? '>' : '*', n); }

unsigned reply_push_begin(client_t *c) {
    unsigned was = c->flags & CLIENT_PUSHING;
    c->flags |= CLIENT_PUSHING;
    return was;
}

void reply_push_end(client_t *c, unsigned was) {
    if (!was) c->flags &= ~CLIENT_PUSHING;
}
void reply_empty_array(client_t *c) { reply_raw(c, "*0\r\n", 4); }

void reply_map_len(client_t *c, long n) {
    if (c->resp >= 3) reply_header(c, '%', n);
    else reply_header(c, '*', n * 2);
}

void reply_attribute_len(client_t *c, long n) { reply_header(c, '|', n); }

void reply_set_len(client_t *c, long n) { reply_header(c, c->resp >= 3 ? '~' : '*', n); }

void reply_double(client_t *c, double d) {
    char buf[64];
    int n = util_d2str(buf, sizeof(buf), d);
    if (c->resp >= 3) {
        reply_raw(c, ",", 1);
        reply_raw(c, buf, (size_t)n);
        reply_raw(c, "\r\n", 2);
    } else {
        reply_bulk(c, buf, (size_t)n);
    }
}

void reply_big_number(client_t *c, const char *p, size_t len) {
    if (c->resp < 3) {
        reply_bulk(c, p, len);
        return;
    }
    reply_raw(c, "(", 1);
    reply_raw(c, p, len);
    reply_raw(c, "\r\n", 2);
}

void reply_bool(client_t *c, int b) {
    if (c->resp >= 3) reply_raw(c, b ? "#t\r\n" : "#f\r\n", 4);
    else reply_ll(c, b ? 1 : 0);
}

void reply_verbatim(client_t *c, const char *p, size_t len, const char *ext) {
    if (c->resp < 3) {
        reply_bulk(c, p, len);
        return;
    }
    reply_header(c, '=', (long long)len + 4);
    reply_raw(c, ext, 3);
    reply_raw(c, ":", 1);
    reply_raw(c, p, len);
    reply_raw(c, "\r\n", 2);
}

void reply_help(client_t *c, const char *cmdname, const char **lines) {
    long n = 0;
    while (lines[n]) n++;
    reply_array_len(c, n + 3); /* the head, the lines, HELP and its text */
    char head[128];
    snprintf(head, sizeof(head), "%s <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", cmdname);
    reply_simple(c, head);
    for (long i = 0; i < n; i++) reply_simple(c, lines[i]);
    reply_simple(c, "HELP");
    reply_simple(c, "    Print this help."); /* 7.4 text (7.0: "Prints") */
}

/* A deferred length is an empty block of its own in the block list; what
 * follows goes into a new block after it. */
void *reply_deferred_len(client_t *c) {
    reply_count(c);
    if (c->flags & (CLIENT_CLOSE_AFTER_REPLY | CLIENT_CLOSE_ASAP)) return NULL;
    if (silenced(c)) return NULL;
    reply_block *b = zmalloc(sizeof(*b) + 24);
    b->size = 0; /* full: nothing else is appended here */
    b->used = 0;
    b->next = NULL;
    if (c->reply_tail) c->reply_tail->next = b;
    else c->reply_head = b;
    c->reply_tail = b;
    return b;
}

static void set_deferred(client_t *c, void *slot, char prefix, long n) {
    reply_block *b = slot;
    if (!b) return;
    int len = snprintf(b->buf, 24, "%c%ld\r\n", prefix, n);
    b->used = (size_t)len;
    c->reply_bytes += (size_t)len;
    conn_mark_pending_write(c);
}

void reply_set_deferred_array_len(client_t *c, void *slot, long n) { set_deferred(c, slot, '*', n); }

void reply_set_deferred_map_len(client_t *c, void *slot, long n) {
    if (c->resp >= 3) set_deferred(c, slot, '%', n);
    else set_deferred(c, slot, '*', n * 2);
}

void reply_set_deferred_set_len(client_t *c, void *slot, long n) {
    set_deferred(c, slot, c->resp >= 3 ? '~' : '*', n);
}
