/* conf.c: runtime settings from the EBBMALLOC_CONF environment variable.
 *
 * Syntax: comma-separated key:value pairs, e.g.
 *   EBBMALLOC_CONF=decay_ms:5000,purge:free,tcache_bytes:262144
 * Keys: decay_ms (-1 = never purge by age), purge (dontneed|free),
 * tcache_bytes (0 disables thread caches), stats_print (true|false),
 * background_thread (true|false), thp (never|default), arenas (1..16, 0
 * for the default of one per CPU).
 * Unknown keys and bad values are reported on stderr and ignored.
 * Called once from init.c before anything allocates, so parsing must not
 * allocate: it walks the getenv() string in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

ebb_conf_t _ebb_conf = {
    .decay_ms = 10000,
    .purge_free = 0,
    .tcache_bytes = 512 * 1024,
    .stats_print = 0,
    .background_thread = 1,
    .thp = 0,
    .arenas = 0,
};

static bool key_is(const char *k, size_t klen, const char *name) {
    return strlen(name) == klen && memcmp(k, name, klen) == 0;
}

static bool parse_bool(const char *v, size_t vlen, int *out) {
    if (key_is(v, vlen, "true") || key_is(v, vlen, "1")) {
        *out = 1;
        return true;
    }
    if (key_is(v, vlen, "false") || key_is(v, vlen, "0")) {
        *out = 0;
        return true;
    }
    return false;
}

/* A decimal integer, optionally negative, fitting in a long. */
static bool parse_long(const char *v, size_t vlen, long *out) {
    long sign = 1, n = 0;
    size_t i = 0;
    if (vlen > 0 && v[0] == '-') {
        sign = -1;
        i = 1;
    }
    if (i == vlen || vlen - i > 15)
        return false;
    for (; i < vlen; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        n = n * 10 + (v[i] - '0');
    }
    *out = sign * n;
    return true;
}

static bool apply(const char *k, size_t klen, const char *v, size_t vlen) {
    long n;
    if (key_is(k, klen, "decay_ms")) {
        if (!parse_long(v, vlen, &n) || n < -1)
            return false;
        _ebb_conf.decay_ms = n;
        return true;
    }
    if (key_is(k, klen, "purge")) {
        if (key_is(v, vlen, "dontneed")) _ebb_conf.purge_free = 0;
        else if (key_is(v, vlen, "free")) _ebb_conf.purge_free = 1;
        else return false;
        return true;
    }
    if (key_is(k, klen, "tcache_bytes")) {
        if (!parse_long(v, vlen, &n) || n < 0 || n > (1L << 30))
            return false;
        _ebb_conf.tcache_bytes = (size_t)n;
        return true;
    }
    if (key_is(k, klen, "arenas")) {
        if (!parse_long(v, vlen, &n) || n < 0 || n > EBB_MAX_ARENAS)
            return false;
        _ebb_conf.arenas = n;
        return true;
    }
    if (key_is(k, klen, "stats_print"))
        return parse_bool(v, vlen, &_ebb_conf.stats_print);
    if (key_is(k, klen, "background_thread"))
        return parse_bool(v, vlen, &_ebb_conf.background_thread);
    if (key_is(k, klen, "thp")) {
        if (key_is(v, vlen, "never")) _ebb_conf.thp = 0;
        else if (key_is(v, vlen, "default")) _ebb_conf.thp = 1;
        else return false;
        return true;
    }
    return false;
}

void _ebb_conf_init(void) {
    const char *s = getenv("EBBMALLOC_CONF");
    if (s == NULL)
        return;
    while (*s) {
        const char *item = s, *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *colon = memchr(item, ':', len);
        if (len > 0 && (colon == NULL ||
                        !apply(item, (size_t)(colon - item), colon + 1,
                               len - (size_t)(colon - item) - 1))) {
            _ebb_os_write_err("ebbmalloc: ignoring bad EBBMALLOC_CONF item: ");
            char tmp[128];
            size_t n = len < sizeof(tmp) - 2 ? len : sizeof(tmp) - 2;
            memcpy(tmp, item, n);
            tmp[n] = '\n';
            tmp[n + 1] = '\0';
            _ebb_os_write_err(tmp);
        }
        s = end ? end + 1 : item + len;
    }
}

/* The settings in EBBMALLOC_CONF syntax, for the stats report. */
size_t _ebb_conf_describe(char *buf, size_t len) {
    int n = snprintf(buf, len,
                     "decay_ms:%ld,purge:%s,tcache_bytes:%zu,stats_print:%s,"
                     "background_thread:%s,thp:%s,arenas:%u",
                     _ebb_conf.decay_ms, _ebb_conf.purge_free ? "free" : "dontneed",
                     _ebb_conf.tcache_bytes, _ebb_conf.stats_print ? "true" : "false",
                     _ebb_conf.background_thread ? "true" : "false",
                     _ebb_conf.thp ? "default" : "never", _ebb_narenas);
    return n < 0 ? 0 : (size_t)n;
}
