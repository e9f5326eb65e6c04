/* conn_cmds.c: connection commands: PING, ECHO, QUIT, RESET, AUTH, HELLO,
 * CLIENT.  They change the calling client's own state (protocol, name,
 * authentication, database) or, for CLIENT KILL/LIST, other clients'. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "blocking.h"
#include "commands.h"
#include "monitor.h"
#include "pubsub.h"
#include "multi.h"
#include "pause.h"
#include "reply.h"
#include "tracking.h"
#include "util.h"

static void cmd_ping(client_t *c) {
    if (c->argc > 2) {
        reply_error_arity(c);
        return;
    }
    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2) {
        /* Subscribed mode (pubsub.c): the answer is a frame like a message's. */
        reply_array_len(c, 2);
        reply_bulk(c, "pong", 4);
        if (c->argc == 2) reply_bulk_obj(c, c->argv[1]);
        else reply_bulk(c, "", 0);
        return;
    }
    if (c->argc == 2) reply_bulk_obj(c, c->argv[1]);
    else reply_raw(c, "+PONG\r\n", 7);
}

static void cmd_echo(client_t *c) { reply_bulk_obj(c, c->argv[1]); }

static void cmd_quit(client_t *c) {
    reply_ok(c);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* Check user/password (acl.c); replies with the error and returns false on
 * failure. */
static bool authenticate_or_reply(client_t *c, robj *user, robj *pass) {
    if (acl_authenticate(c, user, pass)) return true;
    reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
    return false;
}

static void cmd_auth(client_t *c) {
    if (c->argc > 3) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    robj *user = c->argc == 3 ? c->argv[1] : NULL;
    if (!user) {
        /* The one-argument form means the default user, and is refused
         * when that user needs no password (a likely misconfiguration). */
        if (acl_default_nopass(c->srv)) {
            reply_error(c, "AUTH <password> called without any password configured for the default user. "
                           "Are you sure your configuration is correct?");
            return;
        }
    }
    robj *name = user ? user : obj_create_string("default", 7);
    bool ok = authenticate_or_reply(c, name, c->argv[c->argc - 1]);
    if (!user) obj_decref(name);
    if (ok) reply_ok(c);
}

static void cmd_hello(client_t *c) {
    long long ver = 0;
    int j = 1;
    if (c->argc >= 2) {
        if (!obj_get_ll(c->argv[1], &ver)) {
            reply_error(c, "Protocol version is not an integer or out of range");
            return;
        }
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
        j = 2;
    }
    robj *user = NULL, *pass = NULL, *name = NULL;
    for (; j < c->argc; j++) {
        bool more = c->argc - j - 1;
        if (!strcasecmp(c->argv[j]->ptr, "auth") && c->argc - j - 1 >= 2) {
            user = c->argv[j + 1];
            pass = c->argv[j + 2];
            j += 2;
        } else if (!strcasecmp(c->argv[j]->ptr, "setname") && more) {
            name = c->argv[++j];
        } else {
            reply_error(c, "Syntax error in HELLO option '%s'", (char *)c->argv[j]->ptr);
            return;
        }
    }
    if (user && !authenticate_or_reply(c, user, pass)) return;
    if (!(c->flags & CLIENT_AUTHENTICATED)) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                       "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
                       "RESP protocol version at the same time");
        return;
    }
    if (name) {
        sds_free(c->name);
        c->name = sds_len(name->ptr) ? sds_dup(name->ptr) : NULL;
    }
    if (ver) c->resp = (int)ver;
    reply_map_len(c, 7);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "redis");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, RL_REDIS_COMPAT_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_ll(c, c->resp);
    reply_bulk_cstr(c, "id");
    reply_ll(c, (long long)c->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, c->srv->cfg.cluster_enabled ? "cluster" : "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_empty_array(c);
}

static void cmd_reset(client_t *c) {
    multi_client_free(c);
    pubsub_client_freed(c); /* leave subscribed mode without replies */
    monitor_stop(c);
    tracking_client_freed(c); /* tracking off */
    c->db = &c->srv->dbs[0];
    c->resp = 2;
    sds_free(c->name);
    c->name = NULL;
    c->flags &= ~CLIENT_AUTHENTICATED;
    acl_client_init(c); /* back to the default user */
    reply_simple(c, "RESET");
}

/* ---------------------------------------------------------------- CLIENT */

/* Names and SETINFO values: printable ASCII without spaces. */
static bool valid_name(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] < '!' || s[i] > '~') return false;
    return true;
}

static void cmd_client_id(client_t *c) { reply_ll(c, (long long)c->id); }

static void cmd_client_setname(client_t *c) {
    sds name = c->argv[2]->ptr;
    if (!valid_name(name, sds_len(name))) {
        reply_error(c, "Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    sds_free(c->name);
    c->name = sds_len(name) ? sds_dup(name) : NULL;
    reply_ok(c);
}

static void cmd_client_getname(client_t *c) {
    if (c->name) reply_bulk(c, c->name, sds_len(c->name));
    else reply_null(c);
}

static void cmd_client_setinfo(client_t *c) {
    const char *attr = c->argv[2]->ptr;
    sds val = c->argv[3]->ptr;
    sds *slot;
    if (!strcasecmp(attr, "lib-name")) slot = &c->lib_name;
    else if (!strcasecmp(attr, "lib-ver")) slot = &c->lib_ver;
    else {
        reply_error(c, "Unrecognized option '%s'", attr);
        return;
    }
    if (!valid_name(val, sds_len(val))) {
        reply_error(c, "%s cannot contain spaces, newlines or special characters.", attr);
        return;
    }
    sds_free(*slot);
    *slot = sds_len(val) ? sds_dup(val) : NULL;
    reply_ok(c);
}

static void cmd_client_info(client_t *c) {
    sds s = conn_info_string(sds_empty(), c);
    s = sds_cat(s, "\n");
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* CLIENT LIST/KILL TYPE classes: 0 normal, 1 pubsub, 2 replica, 3 master
 * (our master's link). */
static int client_class(const client_t *o) {
    if (o->flags & CLIENT_MASTER) return 3;
    if (o->flags & CLIENT_REPLICA) return 2;
    return (o->flags & CLIENT_PUBSUB) ? 1 : 0;
}

static int class_by_name(const char *t) {
    if (!strcasecmp(t, "pubsub")) return 1;
    if (!strcasecmp(t, "normal")) return 0;
    if (!strcasecmp(t, "master")) return 3;
    return 2;
}

static void cmd_client_list(client_t *c) {
    sds s = sds_empty();
    bool filter_ids = false;
    int want_type = -1; /* -1 any, else client_class() */
    if (c->argc >= 4 && !strcasecmp(c->argv[2]->ptr, "type")) {
        const char *t = c->argv[3]->ptr;
        if (strcasecmp(t, "normal") && strcasecmp(t, "master") && strcasecmp(t, "replica") && strcasecmp(t, "slave") &&
            strcasecmp(t, "pubsub")) {
            reply_error(c, "Unknown client type '%s'", t);
            sds_free(s);
            return;
        }
        want_type = class_by_name(t);
    } else if (c->argc >= 4 && !strcasecmp(c->argv[2]->ptr, "id")) {
        filter_ids = true;
    } else if (c->argc != 2) {
        reply_error(c, RL_ERR_SYNTAX);
        sds_free(s);
        return;
    }
    for (client_t *o = c->srv->clients_head; o; o = o->next) {
        if (want_type >= 0 && want_type != client_class(o)) continue;
        if (filter_ids) {
            bool hit = false;
            for (int j = 3; j < c->argc; j++) {
                long long id;
                if (!obj_get_ll(c->argv[j], &id) || id <= 0) {
                    reply_error(c, "Invalid client ID");
                    sds_free(s);
                    return;
                }
                if ((uint64_t)id == o->id) hit = true;
            }
            if (!hit) continue;
        }
        s = conn_info_string(s, o);
        s = sds_cat(s, "\n");
    }
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* Another client is closed at the next before-sleep.  Killing oneself
 * must wait until the reply is queued (the reply layer drops output for a
 * client marked to close), so the caller marks itself after replying. */
static bool kill_client(client_t *self, client_t *victim) {
    if (victim == self) return true;
    conn_close_async(victim);
    return false;
}

static void close_after_reply(client_t *c) { c->flags |= CLIENT_CLOSE_AFTER_REPLY; }

static void cmd_client_kill(client_t *c) {
    if (c->argc == 3) { /* old form: CLIENT KILL ip:port */
        for (client_t *o = c->srv->clients_head; o; o = o->next) {
            if (!strcmp(o->addr, c->argv[2]->ptr)) {
                reply_ok(c);
                if (kill_client(c, o)) close_after_reply(c);
                return;
            }
        }
        reply_error(c, "No such client");
        return;
    }
    if (c->argc % 2 != 0) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    long long id = 0, max_age = 0;
    const char *addr = NULL, *laddr = NULL;
    acl_user_t *user = NULL;
    bool skipme = true;
    int kill_type = -1; /* -1 any, else client_class() */
    for (int j = 2; j < c->argc; j += 2) {
        const char *k = c->argv[j]->ptr, *v = c->argv[j + 1]->ptr;
        if (!strcasecmp(k, "id")) {
            if (!obj_get_ll(c->argv[j + 1], &id) || id <= 0) {
                reply_error(c, "client-id should be greater than 0");
                return;
            }
        } else if (!strcasecmp(k, "maxage")) { /* Redis 7.4: connected at least this many seconds */
            if (!cmd_get_ll_or_reply(c, c->argv[j + 1], &max_age, "maxage is not an integer or out of range")) return;
            if (max_age <= 0) {
                reply_error(c, "maxage should be greater than 0");
                return;
            }
        } else if (!strcasecmp(k, "addr")) addr = v;
        else if (!strcasecmp(k, "laddr")) laddr = v;
        else if (!strcasecmp(k, "user")) {
            user = acl_find_user(c->srv, v, strlen(v));
            if (!user) {
                reply_error(c, "No such user '%s'", v);
                return;
            }
        } else if (!strcasecmp(k, "type")) {
            if (strcasecmp(v, "normal") && strcasecmp(v, "master") && strcasecmp(v, "replica") &&
                strcasecmp(v, "slave") && strcasecmp(v, "pubsub")) {
                reply_error(c, "Unknown client type '%s'", v);
                return;
            }
            kill_type = class_by_name(v);
        } else if (!strcasecmp(k, "skipme")) {
            if (!strcasecmp(v, "yes")) skipme = true;
            else if (!strcasecmp(v, "no")) skipme = false;
            else {
                reply_error(c, RL_ERR_SYNTAX);
                return;
            }
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    long long killed = 0;
    bool self = false;
    for (client_t *o = c->srv->clients_head; o; o = o->next) {
        if (id && o->id != (uint64_t)id) continue;
        if (addr && strcmp(o->addr, addr)) continue;
        if (laddr && strcmp(o->laddr, laddr)) continue;
        if (user && o->user != user) continue;
        if (o == c && skipme) continue;
        if (kill_type >= 0 && kill_type != client_class(o)) continue;
        if (max_age && c->srv->mstime / 1000 - o->ctime_ms / 1000 < max_age) continue;
        self |= kill_client(c, o);
        killed++;
    }
    reply_ll(c, killed);
    if (self) close_after_reply(c);
}

/* CLIENT REPLY ON|OFF|SKIP: OFF and SKIP are silent themselves. */
static void cmd_client_reply(client_t *c) {
    const char *mode = c->argv[2]->ptr;
    if (!strcasecmp(mode, "on")) {
        c->flags &= ~(CLIENT_REPLY_SKIP | CLIENT_REPLY_OFF);
        reply_ok(c);
    } else if (!strcasecmp(mode, "off")) {
        c->flags |= CLIENT_REPLY_OFF;
    } else if (!strcasecmp(mode, "skip")) {
        if (!(c->flags & CLIENT_REPLY_OFF)) c->flags |= CLIENT_REPLY_SKIP_NEXT;
    } else {
        reply_error(c, RL_ERR_SYNTAX);
    }
}

/* CLIENT NO-EVICT ON|OFF: the flag shows in CLIENT LIST ('e') and keeps
 * the client out of maxmemory-clients' eviction (client_evict.c). */
/* CLIENT NO-TOUCH ON|OFF (Redis 7.2): the client's commands leave the
 * keys' LRU/LFU stamps alone (keyspace.c), TOUCH excepted; 'T' in CLIENT
 * LIST. */
static void cmd_client_no_touch(client_t *c) {
    const char *v = c->argv[2]->ptr;
    if (!strcasecmp(v, "on")) c->flags |= CLIENT_NO_TOUCH;
    else if (!strcasecmp(v, "off")) c->flags &= ~CLIENT_NO_TOUCH;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    reply_ok(c);
}

static void cmd_client_no_evict(client_t *c) {
    const char *v = c->argv[2]->ptr;
    if (!strcasecmp(v, "on")) c->flags |= CLIENT_NO_EVICT;
    else if (!strcasecmp(v, "off")) c->flags &= ~CLIENT_NO_EVICT;
    else {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    conn_track_memory(c);
    reply_ok(c);
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR] -> 1 if a blocked client was released. */
static void cmd_client_unblock(client_t *c) {
    bool error = false;
    if (c->argc == 4) {
        if (!strcasecmp(c->argv[3]->ptr, "error")) error = true;
        else if (strcasecmp(c->argv[3]->ptr, "timeout")) {
            reply_error(c, "CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    long long id;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &id, NULL)) return;
    for (client_t *o = c->srv->clients_head; o; o = o->next) {
        if (o->id != (uint64_t)id) continue;
        reply_ll(c, blocking_unblock_client(o, error) ? 1 : 0);
        return;
    }
    reply_ll(c, 0);
}

static void cmd_client_help(client_t *c) {
    /* Redis 7.4's text, line for line. */
    static const char *help[] = {
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "    * ID <client-id>",
        "      Kill connections by client id.",
        "    * MAXAGE <maxage>",
        "      Kill connections older than the specified age.",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        NULL};
    reply_help(c, "CLIENT", help);
}

static command_t client_subcommands[] = {
    {"id", cmd_client_id, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Returns the client ID for the current connection", "5.0.0", NULL},
    {"setname", cmd_client_setname, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Set the current connection name", "2.6.9", NULL},
    {"getname", cmd_client_getname, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Get the current connection name", "2.6.9", NULL},
    {"setinfo", cmd_client_setinfo, 4, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Set client or connection specific info", "7.2.0", NULL},
    {"info", cmd_client_info, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Returns information about the current client connection.", "6.2.0", NULL},
    {"list", cmd_client_list, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Get the list of client connections", "2.4.0", NULL},
    {"kill", cmd_client_kill, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Kill the connection of a client", "2.4.0", NULL},
    {"reply", cmd_client_reply, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"no-evict", cmd_client_no_evict, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"no-touch", cmd_client_no_touch, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"unblock", cmd_client_unblock, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"pause", cmd_client_pause, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL}, /* pause.c */
    {"unpause", cmd_client_unpause, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"tracking", cmd_client_tracking, -3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL}, /* tracking.c */
    {"caching", cmd_client_caching, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"getredir", cmd_client_getredir, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"trackinginfo", cmd_client_trackinginfo, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", NULL, NULL, NULL},
    {"help", cmd_client_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "Show helpful text about the different subcommands", "5.0.0", NULL},
    {0},
};

command_t conn_commands[] = {
    {"ping", cmd_ping, -1, CMD_FAST, 0, 0, 0, "connection", "Ping the server", "1.0.0", NULL},
    {"echo", cmd_echo, 2, CMD_FAST, 0, 0, 0, "connection", "Echo the given string", "1.0.0", NULL},
    {"quit", cmd_quit, -1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0, "connection", "Close the connection", "1.0.0", NULL},
    {"reset", cmd_reset, 1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0, "connection", "Reset the connection", "6.2.0", NULL},
    {"auth", cmd_auth, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0, "connection", "Authenticate to the server", "1.0.0", NULL},
    {"hello", cmd_hello, -1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0, "connection", "Handshake with Redis", "6.0.0", NULL},
    {"client", NULL, -2, CMD_NOSCRIPT, 0, 0, 0, "connection", "A container for client connection commands", "2.4.0", client_subcommands},
    {0},
};
