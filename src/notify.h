/* notify.h: keyspace notifications (notify-keyspace-events).
 *
 * Command handlers call notify_keyspace_event() after they change a key;
 * when the configured flags select the event's class, it is published on
 * __keyspace@<db>__:<key> (message: the event name) and/or
 * __keyevent@<db>__:<event> (message: the key) through pubsub.c.
 * config.c parses and prints the flag letters with the two helpers below. */
#ifndef RL_NOTIFY_H
#define RL_NOTIFY_H

#include "server.h"

#define NOTIFY_KEYSPACE (1 << 0)  /* K */
#define NOTIFY_KEYEVENT (1 << 1)  /* E */
#define NOTIFY_GENERIC (1 << 2)   /* g */
#define NOTIFY_STRING (1 << 3)    /* $ */
#define NOTIFY_LIST (1 << 4)      /* l */
#define NOTIFY_SET (1 << 5)       /* s */
#define NOTIFY_HASH (1 << 6)      /* h */
#define NOTIFY_ZSET (1 << 7)      /* z */
#define NOTIFY_EXPIRED (1 << 8)   /* x */
#define NOTIFY_EVICTED (1 << 9)   /* e */
#define NOTIFY_STREAM (1 << 10)   /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m (not part of A) */
#define NOTIFY_MODULE (1 << 12)   /* d */
#define NOTIFY_NEW (1 << 13)      /* n (not part of A) */
/* A: every class except key misses and new keys, as in Redis 7. */
#define NOTIFY_ALL (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET | \
                    NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

/* The error text CONFIG SET gives for a letter outside the set. */
#define NOTIFY_ERR_FLAGS "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

/* Publish event `event` of class type_flag (one NOTIFY_* class) about key
 * in database dbid, if the configuration asks for it.  Borrows everything. */
void notify_keyspace_event(server_t *srv, int type_flag, const char *event, robj *key, int dbid);
/* Flag letters -> bits; -1 on a letter outside the set. */
int notify_flags_from_string(const char *s);
/* Bits -> flag letters in Redis's canonical order (caller frees, sds). */
char *notify_flags_to_string(int flags);

#endif
