/* monitor.c: the MONITOR feed (see monitor.h).
 *
 * The monitors are an array of clients; each executed command is formatted
 * once and queued as the same status line on every monitor.  Commands
 * flagged admin (CONFIG, DEBUG, MONITOR itself...) are not shown, as in
 * Redis.  Invariant: c is in the array iff c has CLIENT_MONITOR. */
#include "monitor.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "commands.h"
#include "config.h"
#include "conn.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

struct monitors {
    size_t n, cap;
    client_t **v;
};

monitors_t *monitor_create(void) { return zcalloc(sizeof(monitors_t)); }

void monitor_free(monitors_t *m) {
    if (!m) return;
    zfree(m->v);
    zfree(m);
}

size_t monitor_count(const server_t *srv) { return srv->monitors->n; }

void monitor_stop(client_t *c) {
    if (!(c->flags & CLIENT_MONITOR)) return;
    monitors_t *m = c->srv->monitors;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i] == c) {
            memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(client_t *));
            m->n--;
            break;
        }
    }
    c->flags &= ~CLIENT_MONITOR;
}

void monitor_client_freed(client_t *c) { monitor_stop(c); }

bool monitor_arg_redacted(const client_t *c, int j) {
    if (!c->cmd || j < 1) return false;
    const char *name = c->cmd->parent ? c->cmd->parent->name : c->cmd->name;
    if (!strcmp(name, "auth")) return true;
    /* ACL SETUSER: the user name and every rule (a rule may be a password). */
    if (c->cmd->parent && !strcmp(name, "acl") && !strcmp(c->cmd->name, "setuser")) return j >= 2;
    if (!strcmp(name, "migrate")) {
        /* MIGRATE ... AUTH password / AUTH2 username password */
        for (int i = 6; i < j && i < c->argc; i++) {
            if (!strcasecmp(c->argv[i]->ptr, "auth") && j == i + 1) return true;
            if (!strcasecmp(c->argv[i]->ptr, "auth2") && (j == i + 1 || j == i + 2)) return true;
        }
    }
    /* CONFIG SET name value ...: the value of a password or master user */
    if (c->cmd->parent && !strcmp(name, "config") && !strcmp(c->cmd->name, "set"))
        return j >= 3 && j % 2 == 1 && j < c->argc && config_is_sensitive(c->argv[j - 1]->ptr);
    if (!strcmp(name, "hello")) {
        /* HELLO [protover [AUTH username password] [SETNAME name]] */
        for (int i = 1; i < j && i < c->argc; i++)
            if (!strcasecmp(c->argv[i]->ptr, "auth") && (j == i + 1 || j == i + 2)) return true;
    }
    return false;
}

/* The line without "+" and CRLF. */
static sds format_line(client_t *c) {
    long long us = util_ustime();
    sds s = sds_catprintf(sds_empty(), "%lld.%06lld ", us / 1000000, us % 1000000);
    if (c->flags & CLIENT_UNIX_SOCKET)
        s = sds_catprintf(s, "[%d unix:%s] ", c->db->id, c->srv->cfg.unixsocket ? c->srv->cfg.unixsocket : "");
    else
        s = sds_catprintf(s, "[%d %s] ", c->db->id, c->addr);
    for (int j = 0; j < c->argc; j++) {
        if (j) s = sds_cat(s, " ");
        if (monitor_arg_redacted(c, j)) {
            s = sds_cat(s, "\"(redacted)\"");
            continue;
        }
        char buf[32];
        size_t len;
        const char *p = obj_string_view(c->argv[j], buf, sizeof(buf), &len);
        s = sds_catrepr(s, p, len);
    }
    return s;
}

void monitor_feed(client_t *c) {
    monitors_t *m = c->srv->monitors;
    if (m->n == 0 || !c->cmd || (c->cmd->flags & CMD_ADMIN)) return;
    if (c->cmd->parent && (c->cmd->parent->flags & CMD_ADMIN)) return;
    sds line = format_line(c);
    for (size_t i = 0; i < m->n; i++) {
        reply_raw(m->v[i], "+", 1);
        reply_raw(m->v[i], line, sds_len(line));
        reply_raw(m->v[i], "\r\n", 2);
    }
    sds_free(line);
}

static void cmd_monitor(client_t *c) {
    if (c->flags & CLIENT_MONITOR) return; /* already one: Redis stays silent */
    monitors_t *m = c->srv->monitors;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 4;
        m->v = zrealloc(m->v, m->cap * sizeof(client_t *));
    }
    m->v[m->n++] = c;
    c->flags |= CLIENT_MONITOR;
    reply_ok(c);
}

command_t monitor_commands[] = {
    {"monitor", cmd_monitor, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Listen for all requests received by the server in real time", "1.0.0", NULL},
    {0},
};
