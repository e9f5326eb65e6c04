/* object.c: value objects, string encodings, reference counting. */
#include "object.h"

#include <math.h>
#include <string.h>

#include "util.h"
#include "zmalloc.h"

robj *shared_integers[OBJ_SHARED_INTEGERS];
static const obj_type_ops_t *type_ops[OBJ_TYPE_MAX];
static unsigned lru_clock;

void obj_register_type(int type, const obj_type_ops_t *ops) { type_ops[type] = ops; }
void obj_set_lru_clock(unsigned clock) { lru_clock = clock & LRU_CLOCK_MAX; }
unsigned obj_lru_clock(void) { return lru_clock; }

unsigned long long obj_idle_ms(const robj *o) {
    unsigned now = lru_clock;
    unsigned long long ticks = now >= o->lru ? now - o->lru : (LRU_CLOCK_MAX - o->lru) + now;
    return ticks * LRU_CLOCK_RESOLUTION;
}

robj *obj_create(int type, void *ptr) {
    robj *o = zmalloc(sizeof(*o));
    o->type = (unsigned)type;
    o->encoding = OBJ_ENCODING_RAW;
    o->ptr = ptr;
    o->refcount = 1;
    o->lru = lru_clock;
    return o;
}

robj *obj_create_raw_string(const char *p, size_t len) { return obj_create(OBJ_STRING, sds_newlen(p, len)); }

robj *obj_create_from_sds(sds s) { return obj_create(OBJ_STRING, s); }

size_t obj_embstr_size(size_t len) { return sizeof(robj) + sds_embed_size(len); }

/* One allocation: [robj][sds header][bytes][NUL]. */
robj *obj_create_embstr(const char *p, size_t len) {
    size_t need = obj_embstr_size(len);
    robj *o = zmalloc(need);
    o->type = OBJ_STRING;
    o->encoding = OBJ_ENCODING_EMBSTR;
    o->refcount = 1;
    o->lru = lru_clock;
    o->ptr = sds_embed(o + 1, p ? p : "", p ? len : 0);
    if (!p) memset(o->ptr, 0, len);
    return o;
}

size_t obj_reusable_embstr(const robj *o) {
    if (o->refcount != 1 || o->type != OBJ_STRING || o->encoding != OBJ_ENCODING_EMBSTR) return 0;
    /* The string starts right after its 1- or 3-byte header, inside o's
     * block (not a view into some other memory). */
    const char *body = (const char *)(o + 1);
    if ((const char *)o->ptr <= body || (const char *)o->ptr > body + 3) return 0;
    return obj_embstr_size(sds_len(o->ptr));
}

robj *obj_reuse_embstr(robj *o, const char *p, size_t len) {
    o->lru = lru_clock;
    o->ptr = sds_embed(o + 1, p, len);
    return o;
}

robj *obj_create_string(const char *p, size_t len) {
    return len <= OBJ_EMBSTR_MAX ? obj_create_embstr(p, len) : obj_create_raw_string(p, len);
}

robj *obj_create_stored_string(const char *p, size_t len) {
    return len <= OBJ_EMBED_MAX ? obj_create_embstr(p, len) : obj_create_raw_string(p, len);
}

robj *obj_create_from_ll(long long v) {
    if (v >= 0 && v < OBJ_SHARED_INTEGERS) return shared_integers[v];
    robj *o = obj_create(OBJ_STRING, NULL);
    o->encoding = OBJ_ENCODING_INT;
    o->ptr = (void *)(intptr_t)v;
    return o;
}

void obj_create_shared(void) {
    for (long i = 0; i < OBJ_SHARED_INTEGERS; i++) {
        robj *o = obj_create(OBJ_STRING, (void *)(intptr_t)i);
        o->encoding = OBJ_ENCODING_INT;
        o->refcount = OBJ_SHARED_REFCOUNT;
        shared_integers[i] = o;
    }
}

void obj_incref(robj *o) {
    if (o->refcount < OBJ_EMBEDDED_REFCOUNT) o->refcount++;
}

static void free_value(robj *o) {
    if (o->type == OBJ_STRING) {
        if (o->encoding == OBJ_ENCODING_RAW) sds_free(o->ptr);
        return;
    }
    if (type_ops[o->type] && type_ops[o->type]->free_value) type_ops[o->type]->free_value(o);
}

void obj_decref(robj *o) {
    if (o->refcount >= OBJ_EMBEDDED_REFCOUNT) return; /* shared, or freed with its entry */
    if (o->refcount == 1) {
        free_value(o);
        zfree(o);
    } else {
        o->refcount--;
    }
}

void obj_decref_void(void *o) { obj_decref(o); }

robj *obj_try_encoding(robj *o) {
    if (o->type != OBJ_STRING || !obj_is_sds_encoded(o) || o->refcount > 1) return o;
    sds s = o->ptr;
    size_t len = sds_len(s);
    long long v;
    if (len <= 20 && util_str2ll(s, len, &v)) {
        if (v >= 0 && v < OBJ_SHARED_INTEGERS) {
            obj_decref(o);
            return shared_integers[v];
        }
        if (o->encoding == OBJ_ENCODING_RAW) sds_free(s);
        if (o->encoding == OBJ_ENCODING_EMBSTR) {
            /* The embedded bytes go with the object: make a plain one. */
            robj *n = obj_create_from_ll(v);
            obj_decref(o);
            return n;
        }
        o->encoding = OBJ_ENCODING_INT;
        o->ptr = (void *)(intptr_t)v;
        return o;
    }
    if (len <= OBJ_EMBED_MAX) {
        if (o->encoding == OBJ_ENCODING_EMBSTR) return o;
        robj *e = obj_create_embstr(s, len);
        obj_decref(o);
        return e;
    }
    /* Trim the free space a growing buffer left behind, if it is large. */
    if (o->encoding == OBJ_ENCODING_RAW && sds_avail(s) > len / 10) o->ptr = sds_remove_free(s);
    return o;
}

const char *obj_string_view(const robj *o, char *buf, size_t bufsize, size_t *len) {
    if (o->encoding == OBJ_ENCODING_INT) {
        *len = (size_t)util_ll2str(buf, bufsize, (long long)(intptr_t)o->ptr);
        return buf;
    }
    *len = sds_len(o->ptr);
    return o->ptr;
}

size_t obj_string_len(const robj *o) {
    char buf[32];
    size_t len;
    obj_string_view(o, buf, sizeof(buf), &len);
    return len;
}

sds obj_to_sds(const robj *o) {
    char buf[32];
    size_t len;
    const char *p = obj_string_view(o, buf, sizeof(buf), &len);
    return sds_newlen(p, len);
}

robj *obj_unshare_string(robj *o, bool *replaced) {
    *replaced = false;
    if (o->refcount == 1 && o->encoding == OBJ_ENCODING_RAW) return o;
    sds s = obj_to_sds(o);
    *replaced = true;
    return obj_create_from_sds(s);
}

bool obj_get_ll(const robj *o, long long *out) {
    if (o->encoding == OBJ_ENCODING_INT) {
        *out = (long long)(intptr_t)o->ptr;
        return true;
    }
    return util_str2ll(o->ptr, sds_len(o->ptr), out);
}

bool obj_get_double(const robj *o, double *out) {
    if (o->encoding == OBJ_ENCODING_INT) {
        *out = (double)(intptr_t)o->ptr;
        return true;
    }
    return util_str2d(o->ptr, sds_len(o->ptr), out);
}

bool obj_get_long_double(const robj *o, long double *out) {
    if (o->encoding == OBJ_ENCODING_INT) {
        *out = (long double)(intptr_t)o->ptr;
        return true;
    }
    return util_str2ld(o->ptr, sds_len(o->ptr), out);
}

const char *obj_type_name(int type) {
    static const char *names[] = {"string", "list", "set", "zset", "hash", "none", "stream"};
    return (type >= 0 && type < OBJ_TYPE_MAX && type != 5) ? names[type] : "unknown";
}

const char *obj_encoding_name(int encoding) {
    switch (encoding) {
        case OBJ_ENCODING_RAW: return "raw";
        case OBJ_ENCODING_INT: return "int";
        case OBJ_ENCODING_HT: return "hashtable";
        case OBJ_ENCODING_INTSET: return "intset";
        case OBJ_ENCODING_SKIPLIST: return "skiplist";
        case OBJ_ENCODING_EMBSTR: return "embstr";
        case OBJ_ENCODING_QUICKLIST: return "quicklist";
        case OBJ_ENCODING_LISTPACK: return "listpack";
        case OBJ_ENCODING_LISTPACK_EX: return "listpackex";
        case OBJ_ENCODING_STREAM: return "stream";
        default: return "unknown";
    }
}

const char *obj_encoding_name_of(const robj *o) {
    if (o->encoding == OBJ_ENCODING_EMBSTR && sds_len(o->ptr) > OBJ_EMBSTR_MAX) return "raw";
    return obj_encoding_name(o->encoding);
}

/* Bytes held by a value: the object plus its encoded data.  Collections
 * sample `samples` elements (0 = all) through their registered callback. */
bool obj_has_field_ttl(const robj *o) {
    if (o->type != OBJ_HASH) return false;
    const obj_type_ops_t *ops = type_ops[o->type];
    return ops && ops->has_field_ttl && ops->has_field_ttl(o);
}

size_t obj_mem_usage(robj *o, size_t samples) {
    size_t n = obj_is_embedded(o) ? 0 : zmalloc_size(o); /* embedded: counted with its entry */
    if (o->type == OBJ_STRING) {
        if (o->encoding == OBJ_ENCODING_RAW) n += sds_alloc_size(o->ptr);
        return n;
    }
    if (type_ops[o->type] && type_ops[o->type]->mem_usage) n += type_ops[o->type]->mem_usage(o, samples);
    return n;
}
