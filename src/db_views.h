/* db_views.h: the robj headers that lookups hand out for values embedded
 * in their keyspace entry (db_entry.h).
 *
 * An embedded string or integer has no robj of its own: its entry keeps a
 * 4-byte header (encoding, LRU/LFU stamp) in place of the 16-byte robj.
 * Commands still read values through robj (type, encoding, ptr), so each
 * lookup of such a key fills one of these views, whose ptr points into the
 * entry.  A view lives until the end of the command that obtained it:
 * dispatch (and the other places that run a command handler) take a mark
 * before the handler and release back to it after, so a nested command
 * (EXEC, a script's redis.call) keeps its caller's views intact.  Lookups
 * outside any command (cron, loading) are released at before-sleep.
 *
 * A view is read-only as far as the entry is concerned: writing its lru or
 * ptr changes nothing stored (keyspace.c writes stamps back to the entry),
 * and its refcount is OBJ_EMBEDDED_REFCOUNT so obj_incref/decref ignore it
 * and storing it under another key copies the bytes. */
#ifndef RL_DB_VIEWS_H
#define RL_DB_VIEWS_H

#include <stddef.h>

#include "object.h"
#include "server.h"

typedef struct db_views db_views_t;

/* The server's stack (server_t.views), created on first use. */
db_views_t *db_views_of(server_t *srv);
db_views_t *db_views_create(void);
void db_views_free(db_views_t *v);
/* A fresh view slot, valid until the enclosing mark is released. */
robj *db_views_take(db_views_t *v);
/* Open a command's scope; pass the result to db_views_release after it. */
size_t db_views_mark(db_views_t *v);
void db_views_release(db_views_t *v, size_t mark);
/* Between commands (before-sleep): drop every view when no command is
 * running, and the spare blocks a large command left behind. */
void db_views_idle(db_views_t *v);
/* Views handed out and not released (tests, DEBUG). */
size_t db_views_in_use(const db_views_t *v);

#endif
