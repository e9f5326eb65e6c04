/* evict.c: maxmemory check (see evict.h).  used_memory here excludes
 * nothing yet; client output buffers will be subtracted when replicas and
 * AOF buffers exist, as Redis does. */
#include "evict.h"

int evict_perform(server_t *srv) {
    if (srv->cfg.maxmemory <= 0) return RL_OK;
    if (zmalloc_used_memory() <= (size_t)srv->cfg.maxmemory) return RL_OK;
    return RL_ERR;
}
