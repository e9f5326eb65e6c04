/* notify_flags.c: the letters of notify-keyspace-events (see notify_flags.h).
 *
 * Kept apart from notify.c, which publishes through pubsub.c, so that
 * config.c can parse and print the directive without depending on the
 * messaging layer above it. */
#include "notify_flags.h"

#include <stdbool.h>
#include <stddef.h>

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
