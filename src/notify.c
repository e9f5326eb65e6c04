/* notify.c: keyspace notifications (see notify.h).
 *
 * The check against the configured flags comes first and costs one AND, so
 * handlers call notify_keyspace_event() unconditionally: with notifications
 * off (the default) nothing is formatted or allocated. */
#include "notify.h"

#include <stdio.h>
#include <string.h>

#include "pubsub.h"

void notify_keyspace_event(server_t *srv, int type_flag, const char *event, robj *key, int dbid) {
    int flags = srv->cfg.notify_keyspace_flags;
    if (!(flags & type_flag) || !(flags & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT))) return;
    char kbuf[32];
    size_t klen;
    const char *k = obj_string_view(key, kbuf, sizeof(kbuf), &klen);
    size_t elen = strlen(event);
    char prefix[64];
    if (flags & NOTIFY_KEYSPACE) {
        int n = snprintf(prefix, sizeof(prefix), "__keyspace@%d__:", dbid);
        sds chan = sds_catlen(sds_newlen(prefix, (size_t)n), k, klen);
        pubsub_publish(srv, chan, sds_len(chan), event, elen);
        sds_free(chan);
    }
    if (flags & NOTIFY_KEYEVENT) {
        int n = snprintf(prefix, sizeof(prefix), "__keyevent@%d__:", dbid);
        sds chan = sds_catlen(sds_newlen(prefix, (size_t)n), event, elen);
        pubsub_publish(srv, chan, sds_len(chan), k, klen);
        sds_free(chan);
    }
}
