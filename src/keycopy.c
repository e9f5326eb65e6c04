/* keycopy.c: COPY and MOVE, the commands that put a key's value under
 * another name or into another database.
 *
 * MOVE hands the very object over (one reference changes owner); COPY
 * needs an independent value and gets it from dump.c (the value written in
 * RDB encoding and read back, so every type and encoding is covered by the
 * one reader and writer that persistence already tests).  Replies, errors
 * and keyspace events follow Redis 7.0's db.c. */
#include <limits.h>
#include <string.h>

#include "commands.h"
#include "dump.h"
#include "keyspace.h"
#include "notify.h"
#include "reply.h"

#define ERR_SAME_OBJECT "source and destination objects are the same"

/* A destination database index: an int naming an existing database. */
static db_t *target_db_or_reply(client_t *c, robj *arg, bool int_range) {
    long long id;
    if (!cmd_get_ll_or_reply(c, arg, &id, NULL)) return NULL;
    if (int_range && (id < INT_MIN || id > INT_MAX)) {
        reply_error(c, "value is out of range, value must between %d and %d", INT_MIN, INT_MAX);
        return NULL;
    }
    if (id < 0 || id >= c->srv->dbnum) {
        reply_error(c, RL_ERR_DB_INDEX);
        return NULL;
    }
    return &c->srv->dbs[id];
}

static void cmd_move(client_t *c) {
    if (c->srv->cfg.cluster_enabled) {
        reply_error(c, "MOVE is not allowed in cluster mode");
        return;
    }
    db_t *src = c->db, *dst = target_db_or_reply(c, c->argv[2], true);
    if (!dst) return;
    if (src == dst) {
        reply_error(c, ERR_SAME_OBJECT);
        return;
    }
    robj *key = c->argv[1];
    robj *o = db_lookup_write(src, key);
    if (!o || db_lookup_write(dst, key)) {
        reply_ll(c, 0);
        return;
    }
    long long expire = db_get_expire(src, key);
    obj_incref(o);
    db_add(dst, key, o);
    if (expire != -1) db_set_expire(dst, key, expire);
    db_delete(src, key);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "move_from", key, src->id);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "move_to", key, dst->id);
    reply_ll(c, 1);
}

static void cmd_copy(client_t *c) {
    db_t *src = c->db, *dst = c->db;
    bool replace = false;
    for (int j = 3; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        if (!strcasecmp(a, "replace")) {
            replace = true;
        } else if (!strcasecmp(a, "db") && j + 1 < c->argc) {
            if (!(dst = target_db_or_reply(c, c->argv[++j], false))) return;
            if (c->srv->cfg.cluster_enabled && dst->id != 0) {
                reply_error(c, "Copying to another database is not allowed in cluster mode");
                return;
            }
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return;
        }
    }
    robj *key = c->argv[1], *newkey = c->argv[2];
    if (src == dst && sds_cmp(key->ptr, newkey->ptr) == 0) {
        reply_error(c, ERR_SAME_OBJECT);
        return;
    }
    robj *o = db_lookup_read(src, key, LOOKUP_NONE);
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    long long expire = db_get_expire(src, key);
    bool exists = db_lookup_write(dst, newkey) != NULL;
    if (exists && !replace) {
        reply_ll(c, 0);
        return;
    }
    robj *copy = dump_copy_value(c->srv, o);
    if (!copy) { /* cannot happen for the types we store */
        reply_error(c, "Unable to copy the value of this key");
        return;
    }
    if (exists) db_delete(dst, newkey);
    db_add(dst, newkey, copy);
    if (expire != -1) db_set_expire(dst, newkey, expire);
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "copy_to", newkey, dst->id);
    reply_ll(c, 1);
}

command_t keycopy_commands[] = {
    {"move", cmd_move, 3, CMD_WRITE | CMD_FAST, 1, 1, 1, "generic", "Move a key to another database", "1.0.0", NULL},
    {"copy", cmd_copy, -3, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, "generic", "Copy a key", "6.2.0", NULL},
    {0},
};
