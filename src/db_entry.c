/* db_entry.c: building the keyspace's one-allocation entries (see
 * db_entry.h).  Layout: the header (value pointer, flags, key offset),
 * then an optional 8-byte expire time, then the key as an embedded sds,
 * so a 16-byte key without TTL takes 10 + 3 + 16 + 1 = 30 bytes. */
#include "db_entry.h"

#include <stddef.h>

#include "zmalloc.h"

db_entry *db_entry_new(const char *key, size_t len, robj *val, bool with_expire, long long when) {
    size_t pre = with_expire ? sizeof(int64_t) : 0;
    db_entry *e = zmalloc(offsetof(db_entry, buf) + pre + sds_embed_size(len));
    e->val = val;
    e->flags = with_expire ? DB_ENTRY_HAS_EXPIRE : 0;
    sds s = sds_embed(e->buf + pre, key, len);
    e->key_off = (uint8_t)(s - e->buf);
    if (with_expire) db_entry_set_expire(e, when);
    return e;
}

db_entry *db_entry_with_expire(const db_entry *e, long long when) {
    sds key = db_entry_key(e);
    return db_entry_new(key, sds_len(key), e->val, true, when);
}

size_t db_entry_mem(const db_entry *e) { return zmalloc_size(e); }
