/* notify.c: keyspace notifications (see notify.h).
 *
 * The check against the configured flags comes first and costs one AND, so
 * handlers call notify_keyspace_event() unconditionally: with notifications
 * off (the default) nothing is formatted or allocated. */
#include "notify.h"

#include <stdio.h>
#include <string.h>

#include "pubsub.h"
#include "sds.h"

static const struct {
    char letter;
    int flag;
} letters[] = {
    {'g', NOTIFY_GENERIC},
    {'$', NOTIFY_STRING},
    {'l', NOTIFY_LIST},
    {'s', NOTIFY_SET},
    {'h', NOTIFY_HASH},
    {'z', NOTIFY_ZSET},
    {'x', NOTIFY_EXPIRED},
    {'e', NOTIFY_EVICTED},
    {'t', NOTIFY_STREAM},
    {'d', NOTIFY_MODULE},
    {'n', NOTIFY_NEW},
    {'K', NOTIFY_KEYSPACE},
    {'E', NOTIFY_KEYEVENT},
    {'m', NOTIFY_KEY_MISS},
};
#define N_LETTERS (sizeof(letters) / sizeof(letters[0]))

int notify_flags_from_string(const char *s) {
    int flags = 0;
    for (; *s; s++) {
        if (*s == 'A') {
            flags |= NOTIFY_ALL;
            continue;
        }
        size_t i;
        for (i = 0; i < N_LETTERS; i++)
            if (letters[i].letter == *s) break;
        if (i == N_LETTERS) return -1;
        flags |= letters[i].flag;
    }
    return flags;
}

/* Class letters first ("A" when all of them), then K, E and m. */
char *notify_flags_to_string(int flags) {
    sds s = sds_empty();
    bool all = (flags & NOTIFY_ALL) == NOTIFY_ALL;
    if (all) s = sds_cat(s, "A");
    for (size_t i = 0; i < N_LETTERS; i++) {
        int f = letters[i].flag;
        bool is_class = !(f & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT | NOTIFY_KEY_MISS));
        if (is_class && all) continue;
        if (flags & f) s = sds_catlen(s, &letters[i].letter, 1);
    }
    return s;
}

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
