/* client_evict.c: maxmemory-clients, as Redis 7.0 evicts clients.
 *
 * Client buffers are memory the keyspace limit cannot control: a thousand
 * clients each with a megabyte of pipelined input or unread replies can
 * take a server past maxmemory while eviction empties the dataset to make
 * room.  maxmemory-clients (bytes, or a share of maxmemory) bounds the sum
 * of what the normal and pub/sub clients hold; past it the largest are
 * closed until the sum is back under the limit, each logged and counted
 * (INFO evicted_clients).  Clients that said CLIENT NO-EVICT on are never
 * chosen, though their bytes count, as in Redis: one such client over the
 * limit has every other one closed.  Replication links neither count nor
 * go.
 *
 * conn.c keeps the sum as it measures each client (client_t.evict_mem,
 * conn_track_memory): after a batch of input (its query buffer and the
 * replies it made), after output leaves it, and in the cron, which also
 * catches replies pushed to a client by others (pub/sub, MONITOR); this
 * file decides whom to close.  It walks and sorts the clients only when
 * the sum is over the limit, which Redis avoids with size buckets: over
 * the limit is the rare case (it lasts while NO-EVICT clients alone hold
 * more than the limit, a walk per loop round then), so a sort there costs
 * less than keeping buckets on every change. */
#include "client_evict.h"

#include <stdlib.h>

#include "log.h"
#include "zmalloc.h"

/* Redis's floor: a limit so small that no client could send a command
 * would lock everyone out. */
#define CLIENT_EVICT_MIN_LIMIT (128 * 1024)

size_t client_evict_limit(const server_t *srv) {
    long long v = srv->cfg.maxmemory_clients;
    unsigned long long limit;
    if (v > 0) limit = (unsigned long long)v;
    else if (v < 0 && srv->cfg.maxmemory > 0) limit = (unsigned long long)((double)srv->cfg.maxmemory * (double)-v / 100);
    else return 0;
    return limit < CLIENT_EVICT_MIN_LIMIT ? CLIENT_EVICT_MIN_LIMIT : (size_t)limit;
}

static int larger_first(const void *a, const void *b) {
    size_t x = (*(client_t *const *)a)->evict_mem, y = (*(client_t *const *)b)->evict_mem;
    return (x < y) - (x > y);
}

static void evict(client_t *c) {
    sds info = conn_info_string(sds_empty(), c);
    log_msg(LL_NOTICE, "Evicting client: %s", info);
    sds_free(info);
    c->srv->stats.evictedclients++;
    conn_close_async(c);
    conn_track_memory(c); /* closing: its bytes leave the sum now */
}

void client_evict_run(server_t *srv) {
    size_t limit = client_evict_limit(srv);
    if (!limit) {
        srv->clients_evict_measured = false;
        return;
    }
    if (!srv->clients_evict_measured) { /* just turned on: conn.c measured no one while it was off */
        for (client_t *c = srv->clients_head; c; c = c->next) conn_track_memory(c);
        srv->clients_evict_measured = true;
    }
    if (srv->clients_evict_mem < limit) return;
    size_t n = 0;
    client_t **v = zmalloc(sizeof(*v) * (srv->client_count ? srv->client_count : 1));
    for (client_t *c = srv->clients_head; c && n < srv->client_count; c = c->next)
        if (c->evict_mem && !(c->flags & CLIENT_NO_EVICT)) v[n++] = c;
    qsort(v, n, sizeof(*v), larger_first);
    for (size_t i = 0; i < n && srv->clients_evict_mem >= limit; i++) evict(v[i]);
    zfree(v);
}
