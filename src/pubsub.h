/* pubsub.h: publish/subscribe: channels, glob patterns, and the commands
 * SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB and the
 * sharded SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH.
 *
 * The server keeps channel -> subscribers and pattern -> subscribers; each
 * client keeps the set of its own channels and patterns.  Messages are
 * queued on subscribers through reply.c (RESP2 arrays, RESP3 push frames):
 * nothing here touches a socket.  Callers: dispatch.c (subscribed-mode rule),
 * conn.c (pubsub_client_freed, subscription counts), notify.c (publishing
 * keyspace events), lifecycle.c (create/free), info.c (counts). */
#ifndef RL_PUBSUB_H
#define RL_PUBSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands.h"

typedef struct pubsub pubsub_t;


/* The three subscription namespaces. */
enum { PS_CHANNEL = 0,
       PS_PATTERN = 1,
       PS_SHARD = 2 };

pubsub_t *pubsub_create(void);
void pubsub_free(pubsub_t *ps);

/* Deliver msg on channel to every subscriber (channel and matching
 * patterns); returns how many received it. */
long long pubsub_publish(server_t *srv, const char *chan, size_t clen, const char *msg, size_t mlen);
/* The same for a shard channel: its SSUBSCRIBE subscribers only
 * ("smessage"; SPUBLISH, and PUBLISHSHARD from the cluster bus). */
long long pubsub_publish_shard(server_t *srv, const char *chan, size_t clen, const char *msg, size_t mlen);
/* Drop every subscription of c without replying (conn_free, RESET). */
void pubsub_client_freed(client_t *c);
/* c's subscriptions: channels, patterns. */
size_t pubsub_client_channels(const client_t *c);
size_t pubsub_client_patterns(const client_t *c);
size_t pubsub_client_shard_channels(const client_t *c);
/* Server-wide counts for INFO stats. */
size_t pubsub_channel_count(const server_t *srv);
size_t pubsub_pattern_count(const server_t *srv);
size_t pubsub_shard_channel_count(const server_t *srv);
/* Cluster mode: drop every shard channel whose hash slot is set in
 * `slots` (a 16384-bit bitmap, borrowed); each subscriber gets an
 * sunsubscribe frame, as Redis 7.0 does when a slot leaves the node's
 * shard.  Returns how many channels went. */
size_t pubsub_shard_drop_slots(server_t *srv, const uint8_t *slots);
/* May cmd run on a RESP2 client in subscribed mode? */
bool pubsub_allowed_in_context(const command_t *cmd);
/* Visit every channel, pattern and shard channel c is subscribed to
 * (acl.c: which subscriptions a changed user may keep). */
void pubsub_foreach_subscription(client_t *c, void (*fn)(void *arg, const char *name, size_t len, bool is_pattern),
                                 void *arg);


#endif
