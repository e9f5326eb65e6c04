/* db_entry.c: building, changing and freeing the keyspace's one-allocation
 * entries (see db_entry.h for the two layouts and why they are safe to
 * tell apart). */
#include "db_entry.h"

#include <stddef.h>

#include "rl_assert.h"
#include "zmalloc.h"

/* A value is copied into the entry when it is a string that cannot change
 * in place: EMBSTR (immutable by contract) or an unshared INT.  RAW strings
 * are edited in place by APPEND, SETRANGE or SETBIT, and shared integers
 * cost only the pointer. */
static bool embeddable(const robj *val) {
    if (val->type != OBJ_STRING) return false;
    if (obj_is_embedded(val) || val->encoding == OBJ_ENCODING_EMBSTR) return true; /* embedded: another key's */
    return val->encoding == OBJ_ENCODING_INT && val->refcount != OBJ_SHARED_REFCOUNT;
}

static size_t key_part(size_t keylen, bool with_expire) {
    return (with_expire ? sizeof(int64_t) : 0) + sds_embed_size(keylen);
}

/* Write [expire?][key sds] at buf and the flags; returns the byte after
 * the key's NUL. */
static char *put_key(char *buf, uint8_t *flags, const char *key, size_t len, bool with_expire, long long when) {
    size_t pre = with_expire ? sizeof(int64_t) : 0;
    if (with_expire) {
        int64_t w = when;
        memcpy(buf, &w, sizeof(w));
    }
    sds s = sds_embed(buf + pre, key, len);
    size_t hdr = (size_t)(s - (buf + pre));
    *flags = (uint8_t)((with_expire ? DB_ENTRY_HAS_EXPIRE : 0) | (hdr << DB_ENTRY_KEYHDR_SHIFT));
    return s + len + 1;
}

static db_entry *new_embedded(const char *key, size_t len, const robj *val, bool with_expire, long long when) {
    size_t vlen = val->encoding == OBJ_ENCODING_EMBSTR ? sds_len(val->ptr) : 0;
    size_t vbytes = val->encoding == OBJ_ENCODING_EMBSTR ? sds_embed_size(vlen) : 0;
    db_entry_emb *e = zmalloc(offsetof(db_entry_emb, buf) + key_part(len, with_expire) + vbytes);
    e->obj = *val;
    e->obj.refcount = OBJ_EMBEDDED_REFCOUNT;
    char *after_key = put_key(e->buf, &e->flags, key, len, with_expire, when);
    if (val->encoding == OBJ_ENCODING_EMBSTR) e->obj.ptr = sds_embed(after_key, val->ptr, vlen);
    rl_assert(db_entry_is_embedded((db_entry *)e)); /* the type bits start the entry */
    return (db_entry *)e;
}

static db_entry *new_pointer(const char *key, size_t len, robj *val, bool with_expire, long long when) {
    db_entry_ptr *e = zmalloc(offsetof(db_entry_ptr, buf) + key_part(len, with_expire));
    rl_assert(((uintptr_t)val & 1) == 0);
    e->tagged_val = (uintptr_t)val | 1;
    put_key(e->buf, &e->flags, key, len, with_expire, when);
    return (db_entry *)e;
}

db_entry *db_entry_new(const char *key, size_t len, robj *val, bool with_expire, long long when) {
    if (!embeddable(val)) return new_pointer(key, len, val, with_expire, when);
    db_entry *e = new_embedded(key, len, val, with_expire, when);
    obj_decref(val); /* copied in (a no-op for an embedded source) */
    return e;
}

db_entry *db_entry_with_expire(const db_entry *e, long long when) {
    sds key = db_entry_key(e);
    robj *val = db_entry_val(e);
    if (db_entry_is_embedded(e)) return new_embedded(key, sds_len(key), val, true, when);
    return new_pointer(key, sds_len(key), val, true, when);
}

db_entry *db_entry_set_val(db_entry *e, robj *val) {
    if (!db_entry_is_embedded(e) && !embeddable(val)) {
        db_entry_ptr *p = (db_entry_ptr *)e;
        rl_assert(((uintptr_t)val & 1) == 0);
        p->tagged_val = (uintptr_t)val | 1;
        return e;
    }
    sds key = db_entry_key(e);
    return db_entry_new(key, sds_len(key), val, db_entry_has_expire_slot(e), db_entry_expire(e));
}

robj *db_entry_take_val(db_entry *e) { return db_entry_is_embedded(e) ? NULL : db_entry_val(e); }

void db_entry_free_shell(db_entry *e) { zfree(e); }

void db_entry_free(db_entry *e) {
    robj *val = db_entry_take_val(e);
    if (val) obj_decref(val);
    zfree(e);
}

void db_entry_moved(const void *old, db_entry *new_e) {
    if (!db_entry_is_embedded(new_e)) return;
    db_entry_emb *n = (db_entry_emb *)new_e;
    if (n->obj.encoding == OBJ_ENCODING_EMBSTR) n->obj.ptr = (char *)n + ((char *)n->obj.ptr - (const char *)old);
}

size_t db_entry_mem(const db_entry *e) { return zmalloc_size((void *)e); }
