/* notify_flags.h: the classes of keyspace notifications (NOTIFY_*) and
 * the letters notify-keyspace-events spells them with.
 *
 * config.c parses and prints the directive with the two helpers below;
 * notify.h (which publishes) includes this header for the classes.  Pure
 * functions over a table: nothing here sees the server. */
#ifndef RL_NOTIFY_FLAGS_H
#define RL_NOTIFY_FLAGS_H

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

/* Flag letters -> bits; -1 on a letter outside the set. */
int notify_flags_from_string(const char *s);
/* Bits -> flag letters in Redis's canonical order (caller frees, sds). */
char *notify_flags_to_string(int flags);

#endif
