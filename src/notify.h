/* notify.h: keyspace notifications (notify-keyspace-events).
 *
 * Command handlers call notify_keyspace_event() after they change a key;
 * when the configured flags select the event's class, it is published on
 * __keyspace@<db>__:<key> (message: the event name) and/or
 * __keyevent@<db>__:<event> (message: the key) through pubsub.c.
 * The NOTIFY_* classes and their letters are notify_flags.h's. */
#ifndef RL_NOTIFY_H
#define RL_NOTIFY_H

#include "notify_flags.h"
#include "server.h"

/* Publish event `event` of class type_flag (one NOTIFY_* class) about key
 * in database dbid, if the configuration asks for it.  Borrows everything. */
void notify_keyspace_event(server_t *srv, int type_flag, const char *event, robj *key, int dbid);

#endif
