/* cluster_msg.h: the layout of a cluster bus message, byte for byte as
 * Redis 7.0 sends it (its header is 2256 bytes; the static_asserts pin
 * every field's offset, so a Redis node and ours read each other).
 *
 * Every integer is in network byte order.  A message is the header, then
 * the type's data: for PING, PONG and MEET `count` gossip entries of 104
 * bytes and then `extensions` extensions (each 8-byte aligned, its first
 * 8 bytes its length and type); for FAIL a node name; for PUBLISH two
 * lengths and the channel and message; for UPDATE an epoch, a node name
 * and a slot bitmap.  The bus's files include it
 * (cluster_bus_internal.h); cluster_wire.c checks and builds messages. */
#ifndef RL_CLUSTER_MSG_H
#define RL_CLUSTER_MSG_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

#define CMSG_IP_LEN 46
#define CMSG_PROTO_VER 1

enum { CMSG_PING = 0,
       CMSG_PONG = 1,
       CMSG_MEET = 2,
       CMSG_FAIL = 3,
       CMSG_PUBLISH = 4,
       CMSG_FAILOVER_AUTH_REQUEST = 5,
       CMSG_FAILOVER_AUTH_ACK = 6,
       CMSG_UPDATE = 7,
       CMSG_MFSTART = 8,
       CMSG_MODULE = 9,
       CMSG_PUBLISHSHARD = 10,
       CMSG_TYPES = 11 };

#define CMSG_FLAG0_PAUSED 1
#define CMSG_FLAG0_FORCEACK 2
#define CMSG_FLAG0_EXT_DATA 4

/* Extension types of PING, PONG and MEET: Redis 7.0 has the hostname
 * only; 7.2 added the forgotten node (obeyed here, not sent) and the
 * shard id (sent in every PING, PONG and MEET, as 7.2 does: a 7.0 node
 * logs a warning for it and goes on); other types are skipped by their
 * length. */
enum { CMSG_EXT_HOSTNAME = 0,
       CMSG_EXT_FORGOTTEN_NODE = 2,
       CMSG_EXT_SHARDID = 3 };

#define CMSG_EXT_SHARDID_LEN 48 /* the 8-byte header and 40 hex digits */

typedef struct cmsg_ext_forgotten {
    char name[CLUSTER_NAMELEN];
    uint64_t ttl; /* seconds */
} cmsg_ext_forgotten_t;
static_assert(sizeof(cmsg_ext_forgotten_t) == 48, "forgotten node extension size");

typedef struct cmsg_gossip {
    char nodename[CLUSTER_NAMELEN];
    uint32_t ping_sent;     /* seconds */
    uint32_t pong_received; /* seconds */
    char ip[CMSG_IP_LEN];
    uint16_t port, cport, flags, pport, unused;
} cmsg_gossip_t;
static_assert(sizeof(cmsg_gossip_t) == 104, "gossip entry size");

typedef struct cmsg_ext {
    uint32_t length; /* of the whole extension, header included */
    uint16_t type;
    uint16_t unused;
    char data[]; /* 8-byte aligned */
} cmsg_ext_t;
static_assert(sizeof(cmsg_ext_t) == 8, "extension header size");

typedef struct cmsg_update {
    uint64_t config_epoch;
    char nodename[CLUSTER_NAMELEN];
    uint8_t slots[CLUSTER_SLOTS / 8];
} cmsg_update_t;

typedef struct cmsg_publish {
    uint32_t channel_len, message_len;
    uint8_t bulk_data[8]; /* channel then message; 8 is a placeholder */
} cmsg_publish_t;

typedef struct cmsg_header {
    char sig[4]; /* "RCmb" */
    uint32_t totlen;
    uint16_t ver, port, type, count;
    uint64_t current_epoch, config_epoch, offset;
    char sender[CLUSTER_NAMELEN];
    uint8_t myslots[CLUSTER_SLOTS / 8];
    char slaveof[CLUSTER_NAMELEN];
    char myip[CMSG_IP_LEN];
    uint16_t extensions;
    char unused[30];
    uint16_t pport, cport, flags;
    uint8_t state;
    uint8_t mflags[3];
} cmsg_header_t;

static_assert(offsetof(cmsg_header_t, totlen) == 4, "totlen");
static_assert(offsetof(cmsg_header_t, current_epoch) == 16, "currentEpoch");
static_assert(offsetof(cmsg_header_t, sender) == 40, "sender");
static_assert(offsetof(cmsg_header_t, myslots) == 80, "myslots");
static_assert(offsetof(cmsg_header_t, slaveof) == 2128, "slaveof");
static_assert(offsetof(cmsg_header_t, myip) == 2168, "myip");
static_assert(offsetof(cmsg_header_t, extensions) == 2214, "extensions");
static_assert(offsetof(cmsg_header_t, pport) == 2246, "pport");
static_assert(offsetof(cmsg_header_t, flags) == 2250, "flags");
static_assert(offsetof(cmsg_header_t, state) == 2252, "state");
static_assert(sizeof(cmsg_header_t) == 2256, "the data starts at 2256");

#define CMSG_HEADER_LEN sizeof(cmsg_header_t)
#define CMSG_MAX_LEN (1u << 20) /* no message of ours or Redis's is near this: a longer one is an attack */

#endif
