/* db_entry.c: building, changing and freeing the keyspace's one-allocation
 * entries (see db_entry.h for the two layouts and why they are safe to
 * tell apart). */
#include "db_entry.h"

#include <stddef.h>

#include "rl_assert.h"
#include "zmalloc.h"

/* A value is copied into the entry when it is a string that cannot change
 * in place: EMBSTR (immutable by contract, of any length obj_try_encoding
 * gives that encoding) or an unshared INT.  RAW strings are edited in
 * place by APPEND, SETRANGE or SETBIT, and shared integers cost only the
 * pointer. */
static bool embeddable(const robj *val) {
    if (val->type != OBJ_STRING) return false;
    if (val->encoding == OBJ_ENCODING_EMBSTR) return true; /* views of other keys' values too */
    return val->encoding == OBJ_ENCODING_INT && val->refcount != OBJ_SHARED_REFCOUNT;
}

static unsigned hdr_code(size_t hdr) {
    for (unsigned c = 0; c < 5; c++)
        if (db_entry_hdr_size(c) == hdr) return c;
    rl_assert(!"unknown sds header size");
    return 0;
}

static size_t key_part(size_t keylen, bool with_expire) {
    return (with_expire ? sizeof(int64_t) : 0) + sds_embed_size(keylen);
}

/* Write [expire?][key sds] at buf; returns the flags for it and sets
 * *after to the byte after the key's NUL. */
static uint8_t put_key(char *buf, char **after, const char *key, size_t len, bool with_expire, long long when) {
    size_t pre = with_expire ? sizeof(int64_t) : 0;
    if (with_expire) {
        int64_t w = when;
        memcpy(buf, &w, sizeof(w));
    }
    sds s = sds_embed(buf + pre, key, len);
    *after = s + len + 1;
    unsigned code = hdr_code((size_t)(s - (buf + pre)));
    return (uint8_t)((with_expire ? DB_ENTRY_HAS_EXPIRE : 0) | (code << DB_ENTRY_KEYHDR_SHIFT));
}

static void put_lru(db_entry *e, unsigned lru) {
    uint8_t *p = (uint8_t *)e;
    p[1] = (uint8_t)lru;
    p[2] = (uint8_t)(lru >> 8);
    p[3] = (uint8_t)(lru >> 16);
}

unsigned db_entry_lru(const db_entry *e) {
    if (!db_entry_is_embedded(e)) return db_entry_val(e, NULL)->lru;
    const uint8_t *p = (const uint8_t *)e;
    return (unsigned)p[1] | (unsigned)p[2] << 8 | (unsigned)p[3] << 16;
}

void db_entry_set_lru(db_entry *e, unsigned lru) {
    if (db_entry_is_embedded(e)) put_lru(e, lru & LRU_CLOCK_MAX);
    else db_entry_val(e, NULL)->lru = lru & LRU_CLOCK_MAX;
}

robj *db_entry_val(const db_entry *e, robj *view) {
    if (!db_entry_is_embedded(e)) return (robj *)(((const db_entry_ptr *)e)->tagged_val & ~(uintptr_t)1);
    uint8_t f = *(const uint8_t *)e;
    sds key = db_entry_key(e);
    char *v = key + sds_len(key) + 1;
    unsigned kind = f >> DB_ENTRY_VAL_SHIFT;
    view->type = OBJ_STRING;
    view->lru = db_entry_lru(e);
    view->refcount = OBJ_EMBEDDED_REFCOUNT;
    if (kind == DB_ENTRY_VAL_INT) {
        int64_t x;
        memcpy(&x, v, sizeof(x));
        view->encoding = OBJ_ENCODING_INT;
        view->ptr = (void *)(intptr_t)x;
    } else {
        view->encoding = OBJ_ENCODING_EMBSTR;
        view->ptr = v + db_entry_hdr_size(kind);
    }
    return view;
}

static db_entry *new_embedded(const char *key, size_t len, const robj *val, bool with_expire, long long when) {
    bool is_int = val->encoding == OBJ_ENCODING_INT;
    size_t vlen = is_int ? 0 : sds_len(val->ptr);
    size_t vbytes = is_int ? sizeof(int64_t) : sds_embed_size(vlen);
    db_entry *e = zmalloc(DB_ENTRY_EMB_HDR + key_part(len, with_expire) + vbytes);
    char *after;
    uint8_t f = put_key((char *)e + DB_ENTRY_EMB_HDR, &after, key, len, with_expire, when);
    unsigned kind;
    if (is_int) {
        int64_t x = (intptr_t)val->ptr;
        memcpy(after, &x, sizeof(x));
        kind = DB_ENTRY_VAL_INT;
    } else {
        sds s = sds_embed(after, val->ptr, vlen);
        kind = hdr_code((size_t)(s - after));
    }
    *(uint8_t *)e = (uint8_t)(f | (kind << DB_ENTRY_VAL_SHIFT)); /* bit 0 clear: embedded */
    put_lru(e, val->lru);
    return e;
}

static db_entry *new_pointer(const char *key, size_t len, robj *val, bool with_expire, long long when) {
    db_entry_ptr *e = zmalloc(offsetof(db_entry_ptr, buf) + key_part(len, with_expire));
    rl_assert(((uintptr_t)val & 1) == 0);
    e->tagged_val = (uintptr_t)val | 1;
    char *after;
    e->flags = put_key(e->buf, &after, key, len, with_expire, when);
    return (db_entry *)e;
}

db_entry *db_entry_new(const char *key, size_t len, robj *val, bool with_expire, long long when) {
    if (!embeddable(val)) return new_pointer(key, len, val, with_expire, when);
    db_entry *e = new_embedded(key, len, val, with_expire, when);
    obj_decref(val); /* copied in (a no-op for a view) */
    return e;
}

db_entry *db_entry_with_expire(const db_entry *e, long long when) {
    sds key = db_entry_key(e);
    robj view;
    robj *val = db_entry_val(e, &view);
    if (db_entry_is_embedded(e)) return new_embedded(key, sds_len(key), val, true, when);
    return new_pointer(key, sds_len(key), val, true, when);
}

/* Overwrite an embedded value with one of the same stored size in place
 * (INCR, SET of a same-length string): no new block.  False when the
 * sizes differ. */
static bool replace_in_place(db_entry *e, robj *val) {
    uint8_t f = *(uint8_t *)e;
    unsigned kind = f >> DB_ENTRY_VAL_SHIFT;
    sds key = db_entry_key(e);
    char *v = key + sds_len(key) + 1;
    if (val->encoding == OBJ_ENCODING_INT) {
        if (kind != DB_ENTRY_VAL_INT) return false;
        int64_t x = (intptr_t)val->ptr;
        memcpy(v, &x, sizeof(x));
    } else {
        if (kind == DB_ENTRY_VAL_INT) return false;
        sds old = v + db_entry_hdr_size(kind);
        size_t len = sds_len(val->ptr);
        if (sds_len(old) != len) return false;
        memmove(old, val->ptr, len); /* val may be a view of e itself */
    }
    put_lru(e, val->lru);
    obj_decref(val);
    return true;
}

db_entry *db_entry_set_val(db_entry *e, robj *val) {
    if (db_entry_is_embedded(e) && embeddable(val) && replace_in_place(e, val)) return e;
    if (!db_entry_is_embedded(e) && !embeddable(val)) {
        db_entry_ptr *p = (db_entry_ptr *)e;
        rl_assert(((uintptr_t)val & 1) == 0);
        p->tagged_val = (uintptr_t)val | 1;
        return e;
    }
    sds key = db_entry_key(e);
    return db_entry_new(key, sds_len(key), val, db_entry_has_expire_slot(e), db_entry_expire(e));
}

robj *db_entry_take_val(db_entry *e) { return db_entry_is_embedded(e) ? NULL : db_entry_val(e, NULL); }

void db_entry_free_shell(db_entry *e) { zfree(e); }

void db_entry_free(db_entry *e) {
    robj *val = db_entry_take_val(e);
    if (val) obj_decref(val);
    zfree(e);
}

size_t db_entry_mem(const db_entry *e) { return zmalloc_size((void *)e); }
