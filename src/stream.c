/* stream.c: the stream data structure (see stream.h for the node layout):
 * IDs, appending, deleting, trimming, range iteration, consumer groups,
 * consumers and pending entries, memory figures.
 *
 * Called by t_stream.c / t_stream_cg.c (commands), rdb_*.c and aof.c.  It
 * never replies to clients and reads no configuration itself: node limits
 * and the clock come in as arguments, so the same code serves loading. */
#include "stream.h"

#include <errno.h>
#include <string.h>

#include "listpack.h"
#include "util.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ IDs */

static void put_be64(unsigned char *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

static uint64_t get_be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
    return v;
}

void stream_id_encode(unsigned char buf[16], const stream_id_t *id) {
    put_be64(buf, id->ms);
    put_be64(buf + 8, id->seq);
}

void stream_id_decode(const unsigned char buf[16], stream_id_t *id) {
    id->ms = get_be64(buf);
    id->seq = get_be64(buf + 8);
}

int stream_id_cmp(const stream_id_t *a, const stream_id_t *b) {
    if (a->ms != b->ms) return a->ms > b->ms ? 1 : -1;
    if (a->seq != b->seq) return a->seq > b->seq ? 1 : -1;
    return 0;
}

bool stream_id_incr(stream_id_t *id) {
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return false;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return true;
}

bool stream_id_decr(stream_id_t *id) {
    if (id->seq == 0) {
        if (id->ms == 0) return false;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return true;
}

static size_t u64_format(char *buf, uint64_t v) {
    char tmp[21];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    return n;
}

size_t stream_id_format(char *buf, const stream_id_t *id) {
    size_t n = u64_format(buf, id->ms);
    buf[n++] = '-';
    n += u64_format(buf + n, id->seq);
    buf[n] = '\0';
    return n;
}

/* ------------------------------------------------------------ the type */

stream_t *stream_new(void) {
    stream_t *s = zcalloc(sizeof(*s));
    s->rax = rax_new();
    return s;
}

static void free_lp(void *lp) { lp_free(lp); }

static void free_consumer(void *p) {
    stream_consumer_t *c = p;
    rax_free(c->pel, NULL); /* the nacks belong to the group's PEL */
    sds_free(c->name);
    zfree(c);
}

static void free_cg(void *p) {
    stream_cg_t *cg = p;
    rax_free(cg->pel, stream_nack_free);
    rax_free(cg->consumers, free_consumer);
    zfree(cg);
}

void stream_free(stream_t *s) {
    rax_free(s->rax, free_lp);
    if (s->cgroups) rax_free(s->cgroups, free_cg);
    zfree(s);
}

robj *stream_create_object(void) {
    robj *o = obj_create(OBJ_STREAM, stream_new());
    o->encoding = OBJ_ENCODING_STREAM;
    return o;
}

static void stream_free_value(robj *o) { stream_free(o->ptr); }
static size_t stream_mem_usage_op(robj *o, size_t samples) { return stream_mem_usage(o->ptr, samples); }
const obj_type_ops_t stream_type_ops = {stream_free_value, stream_mem_usage_op};

/* ------------------------------------------------------------ listpack helpers */

static int64_t lp_int(const unsigned char *p) {
    long long v = 0;
    if (!lp_get_int(p, &v)) {
        /* Only integers are written in these positions; a string here means
         * a node we did not write (validated RDB input prevents it). */
        size_t len;
        char buf[LP_INTBUF_SIZE];
        const unsigned char *s = lp_get_str(p, &len, buf);
        util_str2ll((const char *)s, len, &v);
    }
    return v;
}

/* Skip the master entry: returns the first entry's flags (or NULL) and
 * fills the master fields' count and position. */
static unsigned char *lp_skip_master(unsigned char *lp, int64_t *nfields, unsigned char **fields,
                                     unsigned char **terminator) {
    unsigned char *p = lp_first(lp); /* count */
    p = lp_next(lp, p);              /* deleted */
    p = lp_next(lp, p);              /* nfields */
    int64_t n = lp_int(p);
    if (nfields) *nfields = n;
    p = lp_next(lp, p);
    if (fields) *fields = p;
    for (int64_t i = 0; i < n; i++) p = lp_next(lp, p);
    if (terminator) *terminator = p; /* the 0 */
    return lp_next(lp, p);
}

/* Read one entry at flags pointer p: ID, flags, field count, the position
 * of its first field (or value for SAMEFIELDS) and the entry that follows. */
typedef struct entry_view {
    int64_t flags;
    stream_id_t id;
    int64_t nfields;
    unsigned char *fields; /* first field, or first value when SAMEFIELDS */
    unsigned char *next;   /* next entry's flags, or NULL */
} entry_view_t;

static void read_entry(unsigned char *lp, unsigned char *p, const stream_id_t *master, int64_t master_fields,
                       entry_view_t *e) {
    e->flags = lp_int(p);
    p = lp_next(lp, p);
    e->id.ms = master->ms + (uint64_t)lp_int(p);
    p = lp_next(lp, p);
    e->id.seq = master->seq + (uint64_t)lp_int(p);
    p = lp_next(lp, p);
    int64_t skip;
    if (e->flags & STREAM_ITEM_FLAG_SAMEFIELDS) {
        e->nfields = master_fields;
        skip = master_fields;
    } else {
        e->nfields = lp_int(p);
        p = lp_next(lp, p);
        skip = e->nfields * 2;
    }
    e->fields = p;
    for (int64_t i = 0; i < skip; i++) p = lp_next(lp, p);
    e->next = lp_next(lp, p); /* skip lp-count */
}

/* ------------------------------------------------------------ append */

static void next_auto_id(const stream_id_t *last, stream_id_t *id, long long now_ms) {
    uint64_t ms = (uint64_t)now_ms;
    if (ms > last->ms) {
        id->ms = ms;
        id->seq = 0;
    } else {
        *id = *last;
        stream_id_incr(id);
    }
}

int stream_append(stream_t *s, const stream_limits_t *lim, robj **argv, int64_t nfields, stream_id_t *added,
                  const stream_id_t *use_id, bool seq_given, long long now_ms) {
    stream_id_t id;
    if (use_id) {
        if (seq_given) {
            id = *use_id;
        } else if (s->last_id.ms == use_id->ms) {
            if (s->last_id.seq == UINT64_MAX) return -1;
            id = s->last_id;
            id.seq++;
        } else {
            id = *use_id;
        }
        if (stream_id_cmp(&id, &s->last_id) <= 0) return -1;
    } else {
        next_auto_id(&s->last_id, &id, now_ms);
    }
    size_t totlen = 0;
    for (int64_t i = 0; i < nfields * 2; i++) totlen += sds_len(argv[i]->ptr);
    if (!lp_safe_to_add(NULL, totlen)) return -2; /* one record past the 1 GB listpack limit */

    rax_iter_t ri;
    rax_iter_start(&ri, s->rax);
    unsigned char *lp = NULL;
    unsigned char key[16];
    if (rax_seek(&ri, "$", NULL, 0)) {
        lp = ri.data;
        memcpy(key, ri.key, 16);
        size_t max_bytes = lim->max_bytes > 0 && (size_t)lim->max_bytes <= lp_safety_limit()
                               ? (size_t)lim->max_bytes
                               : lp_safety_limit();
        bool full = lp_bytes(lp) + totlen >= max_bytes;
        if (!full && lim->max_entries > 0) {
            unsigned char *p = lp_first(lp);
            int64_t count = lp_int(p) + lp_int(lp_next(lp, p)); /* live + deleted */
            full = count >= lim->max_entries;
        }
        if (full) {
            unsigned char *shrunk = lp_shrink_to_fit(lp);
            if (shrunk != lp) rax_insert(s->rax, key, 16, shrunk, NULL);
            lp = NULL;
        }
    }
    rax_iter_stop(&ri);

    int flags = STREAM_ITEM_FLAG_NONE;
    stream_id_t master;
    bool changed = !lp; /* the rax must learn a new pointer */
    lp_item_t stack[40];
    size_t nitems = (size_t)nfields * 2 + 6; /* the largest of both uses below */
    lp_item_t *it = nitems <= 40 ? stack : zmalloc(sizeof(*it) * nitems);
    size_t n = 0;
    if (!lp) {
        master = id;
        stream_id_encode(key, &id);
        /* Master entry: count 1, deleted 0, the fields, the 0 terminator. */
        it[n++] = (lp_item_t){NULL, 0, 1};
        it[n++] = (lp_item_t){NULL, 0, 0};
        it[n++] = (lp_item_t){NULL, 0, nfields};
        for (int64_t i = 0; i < nfields; i++) it[n++] = (lp_item_t){argv[i * 2]->ptr, sds_len(argv[i * 2]->ptr), 0};
        it[n++] = (lp_item_t){NULL, 0, 0};
        lp = lp_append_batch(lp_new(), it, n);
        n = 0;
        flags |= STREAM_ITEM_FLAG_SAMEFIELDS;
    } else {
        stream_id_decode(key, &master);
        unsigned char *p = lp_first(lp);
        unsigned char *before = lp;
        lp = lp_replace_int(lp, &p, lp_int(p) + 1);
        changed = lp != before;
        p = lp_next(lp, p);
        p = lp_next(lp, p);
        int64_t mfields = lp_int(p);
        p = lp_next(lp, p);
        if (mfields == nfields) {
            int64_t i;
            for (i = 0; i < mfields; i++) {
                if (!lp_entry_equal(p, argv[i * 2]->ptr, sds_len(argv[i * 2]->ptr))) break;
                p = lp_next(lp, p);
            }
            if (i == mfields) flags |= STREAM_ITEM_FLAG_SAMEFIELDS;
        }
    }
    bool same = flags & STREAM_ITEM_FLAG_SAMEFIELDS;
    it[n++] = (lp_item_t){NULL, 0, flags};
    it[n++] = (lp_item_t){NULL, 0, (long long)(id.ms - master.ms)};
    it[n++] = (lp_item_t){NULL, 0, (long long)(id.seq - master.seq)};
    if (!same) it[n++] = (lp_item_t){NULL, 0, nfields};
    for (int64_t i = 0; i < nfields; i++) {
        if (!same) it[n++] = (lp_item_t){argv[i * 2]->ptr, sds_len(argv[i * 2]->ptr), 0};
        it[n++] = (lp_item_t){argv[i * 2 + 1]->ptr, sds_len(argv[i * 2 + 1]->ptr), 0};
    }
    it[n++] = (lp_item_t){NULL, 0, nfields + 3 + (same ? 0 : nfields + 1)}; /* lp-count */
    unsigned char *before = lp;
    lp = lp_append_batch(lp, it, n);
    if (it != stack) zfree(it);
    if (changed || lp != before) rax_insert(s->rax, key, 16, lp, NULL);
    s->length++;
    s->entries_added++;
    s->last_id = id;
    if (s->length == 1) s->first_id = id;
    if (added) *added = id;
    return 0;
}

/* ------------------------------------------------------------ iteration */

void stream_iter_start(stream_iter_t *it, stream_t *s, const stream_id_t *start, const stream_id_t *end, bool rev) {
    memset(it, 0, sizeof(*it));
    it->s = s;
    if (start) it->start = *start;
    if (end) it->end = *end;
    else it->end.ms = it->end.seq = UINT64_MAX;
    it->rev = rev;
    rax_iter_start(&it->ri, s->rax);
}

void stream_iter_stop(stream_iter_t *it) { rax_iter_stop(&it->ri); }

/* Move to the next node in the iteration direction; false when none. */
static bool iter_next_node(stream_iter_t *it) {
    bool ok;
    unsigned char key[16];
    if (!it->started) {
        it->started = true;
        stream_id_encode(key, it->rev ? &it->end : &it->start);
        ok = rax_seek(&it->ri, "<=", key, 16);
        if (!ok && !it->rev) ok = rax_seek(&it->ri, "^", NULL, 0);
    } else {
        ok = it->rev ? rax_prev(&it->ri) : rax_next(&it->ri);
    }
    if (!ok) return false;
    it->lp = it->ri.data;
    stream_id_decode(it->ri.key, &it->master_id);
    unsigned char *first = lp_skip_master(it->lp, &it->master_fields, &it->master_fields_p, &it->master_end);
    it->p = it->rev ? lp_last(it->lp) : first;
    if (it->rev && it->p == it->master_end) it->p = NULL;
    return true;
}

bool stream_iter_next(stream_iter_t *it, stream_id_t *id, int64_t *nfields) {
    while (!it->done) {
        if (!it->lp || !it->p) {
            if (!iter_next_node(it)) {
                it->done = true;
                return false;
            }
            continue;
        }
        entry_view_t e;
        unsigned char *flags_p;
        if (!it->rev) {
            flags_p = it->p;
            read_entry(it->lp, flags_p, &it->master_id, it->master_fields, &e);
            it->p = e.next;
        } else {
            int64_t count = lp_int(it->p);
            flags_p = it->p;
            for (int64_t i = 0; i < count; i++) flags_p = lp_prev(it->lp, flags_p);
            read_entry(it->lp, flags_p, &it->master_id, it->master_fields, &e);
            unsigned char *prev = lp_prev(it->lp, flags_p);
            it->p = prev == it->master_end ? NULL : prev;
        }
        if (e.flags & STREAM_ITEM_FLAG_DELETED) continue;
        if (!it->rev) {
            if (stream_id_cmp(&e.id, &it->start) < 0) continue;
            if (stream_id_cmp(&e.id, &it->end) > 0) {
                it->done = true;
                return false;
            }
        } else {
            if (stream_id_cmp(&e.id, &it->end) > 0) continue;
            if (stream_id_cmp(&e.id, &it->start) < 0) {
                it->done = true;
                return false;
            }
        }
        it->entry_flags_p = flags_p;
        it->entry_flags = e.flags;
        it->fields_left = e.nfields;
        if (e.flags & STREAM_ITEM_FLAG_SAMEFIELDS) {
            it->fp = it->master_fields_p;
            it->vp = e.fields;
        } else {
            it->fp = e.fields;
            it->vp = NULL;
        }
        *id = e.id;
        *nfields = e.nfields;
        return true;
    }
    return false;
}

void stream_iter_field(stream_iter_t *it, const unsigned char **f, size_t *flen, const unsigned char **v,
                       size_t *vlen) {
    *f = lp_get_str(it->fp, flen, it->fbuf);
    if (it->entry_flags & STREAM_ITEM_FLAG_SAMEFIELDS) {
        *v = lp_get_str(it->vp, vlen, it->vbuf);
        it->fp = lp_next(it->lp, it->fp);
        it->vp = lp_next(it->lp, it->vp);
    } else {
        unsigned char *vp = lp_next(it->lp, it->fp);
        *v = lp_get_str(vp, vlen, it->vbuf);
        it->fp = lp_next(it->lp, vp);
    }
    it->fields_left--;
}

bool stream_edge_id(stream_t *s, bool first, stream_id_t *id) {
    stream_iter_t it;
    int64_t n;
    stream_iter_start(&it, s, NULL, NULL, !first);
    bool ok = stream_iter_next(&it, id, &n);
    stream_iter_stop(&it);
    return ok;
}

/* ------------------------------------------------------------ delete */

/* Flag the entry whose flags are at *flags_p in node lp (key) deleted and
 * fix the node counters; frees the node when it held the last live entry. */
static void mark_deleted(stream_t *s, const unsigned char *key, unsigned char *lp, unsigned char *flags_p) {
    int64_t flags = lp_int(flags_p) | STREAM_ITEM_FLAG_DELETED;
    lp = lp_replace_int(lp, &flags_p, flags);
    unsigned char *p = lp_first(lp);
    int64_t live = lp_int(p);
    if (live == 1) {
        lp_free(lp);
        rax_remove(s->rax, key, 16, NULL);
    } else {
        lp = lp_replace_int(lp, &p, live - 1);
        p = lp_next(lp, p);
        lp = lp_replace_int(lp, &p, lp_int(p) + 1);
        rax_insert(s->rax, key, 16, lp, NULL);
    }
    s->length--;
}

bool stream_delete(stream_t *s, const stream_id_t *id) {
    rax_iter_t ri;
    unsigned char key[16];
    stream_id_encode(key, id);
    rax_iter_start(&ri, s->rax);
    bool found = false;
    if (rax_seek(&ri, "<=", key, 16)) {
        unsigned char *lp = ri.data;
        stream_id_t master;
        int64_t mfields;
        stream_id_decode(ri.key, &master);
        memcpy(key, ri.key, 16);
        unsigned char *p = lp_skip_master(lp, &mfields, NULL, NULL);
        while (p) {
            entry_view_t e;
            read_entry(lp, p, &master, mfields, &e);
            int c = stream_id_cmp(&e.id, id);
            if (c > 0) break;
            if (c == 0) {
                if (!(e.flags & STREAM_ITEM_FLAG_DELETED)) {
                    mark_deleted(s, key, lp, p);
                    found = true;
                }
                break;
            }
            p = e.next;
        }
    }
    rax_iter_stop(&ri);
    return found;
}

/* ------------------------------------------------------------ trim */

int64_t stream_trim(stream_t *s, int strategy, long long maxlen, const stream_id_t *minid, bool approx, long long limit) {
    if (strategy == STREAM_TRIM_NONE) return 0;
    int64_t deleted = 0;
    rax_iter_t ri;
    rax_iter_start(&ri, s->rax);
    bool ok = rax_seek(&ri, "^", NULL, 0);
    while (ok) {
        if (strategy == STREAM_TRIM_MAXLEN && s->length <= (uint64_t)maxlen) break;
        unsigned char *lp = ri.data;
        unsigned char key[16];
        memcpy(key, ri.key, 16);
        int64_t entries = lp_int(lp_first(lp));
        if (limit && deleted + entries > limit) break;
        stream_id_t master;
        stream_id_decode(key, &master);
        int64_t mfields;
        unsigned char *first = lp_skip_master(lp, &mfields, NULL, NULL);
        bool remove_node;
        if (strategy == STREAM_TRIM_MAXLEN) {
            remove_node = s->length - (uint64_t)entries >= (uint64_t)maxlen;
        } else {
            /* The node's last entry (deleted or not) bounds all of it. */
            unsigned char *lastcount = lp_last(lp);
            int64_t back = lp_int(lastcount);
            unsigned char *fp = lastcount;
            for (int64_t i = 0; i < back; i++) fp = lp_prev(lp, fp);
            entry_view_t e;
            read_entry(lp, fp, &master, mfields, &e);
            remove_node = stream_id_cmp(&e.id, minid) < 0;
        }
        if (remove_node) {
            lp_free(lp);
            rax_remove(s->rax, key, 16, NULL);
            s->length -= (uint64_t)entries;
            deleted += entries;
            ok = rax_seek(&ri, ">=", key, 16);
            continue;
        }
        if (approx) break;
        /* Flag entries inside this node until the target is met. */
        int64_t flagged = 0;
        unsigned char *p = first;
        while (p) {
            entry_view_t e;
            read_entry(lp, p, &master, mfields, &e);
            bool stop = strategy == STREAM_TRIM_MAXLEN ? s->length <= (uint64_t)maxlen
                                                       : stream_id_cmp(&e.id, minid) >= 0;
            if (stop) break;
            if (!(e.flags & STREAM_ITEM_FLAG_DELETED)) {
                size_t next_off = e.next ? (size_t)(e.next - lp) : 0;
                lp = lp_replace_int(lp, &p, e.flags | STREAM_ITEM_FLAG_DELETED);
                flagged++;
                s->length--;
                e.next = next_off ? lp + next_off : NULL;
            }
            p = e.next;
        }
        deleted += flagged;
        unsigned char *c = lp_first(lp);
        lp = lp_replace_int(lp, &c, entries - flagged);
        c = lp_next(lp, c);
        lp = lp_replace_int(lp, &c, lp_int(c) + flagged);
        rax_insert(s->rax, key, 16, lp, NULL);
        break;
    }
    rax_iter_stop(&ri);
    if (s->length == 0) {
        s->first_id.ms = s->first_id.seq = 0;
    } else {
        stream_edge_id(s, true, &s->first_id);
    }
    return deleted;
}

/* ------------------------------------------------------------ 7.0 lag helpers */

bool stream_range_has_tombstones(stream_t *s, const stream_id_t *start, const stream_id_t *end) {
    stream_id_t zero = {0, 0}, max = {UINT64_MAX, UINT64_MAX};
    if (!s->length || stream_id_cmp(&s->max_deleted_entry_id, &zero) == 0) return false;
    if (stream_id_cmp(&s->first_id, &s->max_deleted_entry_id) > 0) return false;
    const stream_id_t *a = start ? start : &zero, *b = end ? end : &max;
    return stream_id_cmp(a, &s->max_deleted_entry_id) <= 0 && stream_id_cmp(&s->max_deleted_entry_id, b) <= 0;
}

long long stream_estimate_distance(stream_t *s, const stream_id_t *id) {
    stream_id_t zero = {0, 0};
    if (!s->entries_added) return 0;
    if (!s->length && stream_id_cmp(id, &s->last_id) < 1) return (long long)s->entries_added;
    int cmp_last = stream_id_cmp(id, &s->last_id);
    if (cmp_last == 0) return (long long)s->entries_added;
    if (cmp_last > 0) return SCG_INVALID_ENTRIES_READ;
    int cmp_first = stream_id_cmp(id, &s->first_id);
    if (stream_id_cmp(&s->max_deleted_entry_id, &zero) == 0 ||
        stream_id_cmp(&s->max_deleted_entry_id, &s->first_id) < 0) {
        if (cmp_first < 0) return (long long)(s->entries_added - s->length);
        if (cmp_first == 0) return (long long)(s->entries_added - s->length + 1);
    }
    return SCG_INVALID_ENTRIES_READ;
}

/* ------------------------------------------------------------ groups */

stream_cg_t *stream_cg_lookup(stream_t *s, const char *name, size_t len) {
    void *v;
    if (!s->cgroups || !rax_find(s->cgroups, (const unsigned char *)name, len, &v)) return NULL;
    return v;
}

stream_cg_t *stream_cg_create(stream_t *s, const char *name, size_t len, const stream_id_t *id, long long entries_read) {
    if (!s->cgroups) s->cgroups = rax_new();
    if (rax_find(s->cgroups, (const unsigned char *)name, len, NULL)) return NULL;
    stream_cg_t *cg = zmalloc(sizeof(*cg));
    cg->pel = rax_new();
    cg->consumers = rax_new();
    cg->last_id = *id;
    cg->entries_read = entries_read;
    rax_insert(s->cgroups, (const unsigned char *)name, len, cg, NULL);
    return cg;
}

bool stream_cg_destroy(stream_t *s, const char *name, size_t len) {
    void *v;
    if (!s->cgroups || !rax_remove(s->cgroups, (const unsigned char *)name, len, &v)) return false;
    free_cg(v);
    return true;
}

stream_consumer_t *stream_consumer_lookup(stream_cg_t *cg, const char *name, size_t len) {
    void *v;
    if (!rax_find(cg->consumers, (const unsigned char *)name, len, &v)) return NULL;
    return v;
}

stream_consumer_t *stream_consumer_create(stream_cg_t *cg, const char *name, size_t len, long long now_ms) {
    if (rax_find(cg->consumers, (const unsigned char *)name, len, NULL)) return NULL;
    stream_consumer_t *c = zmalloc(sizeof(*c));
    c->name = sds_newlen(name, len);
    c->pel = rax_new();
    c->seen_time = now_ms;
    c->active_time = -1;
    rax_insert(cg->consumers, (const unsigned char *)name, len, c, NULL);
    return c;
}

uint64_t stream_consumer_delete(stream_cg_t *cg, stream_consumer_t *consumer) {
    uint64_t pending = rax_size(consumer->pel);
    rax_iter_t ri;
    rax_iter_start(&ri, consumer->pel);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        void *nack;
        rax_remove(cg->pel, ri.key, ri.key_len, &nack);
        stream_nack_free(nack);
    }
    rax_iter_stop(&ri);
    rax_remove(cg->consumers, (const unsigned char *)consumer->name, sds_len(consumer->name), NULL);
    free_consumer(consumer);
    return pending;
}

stream_nack_t *stream_nack_new(stream_consumer_t *consumer, long long now_ms) {
    stream_nack_t *n = zmalloc(sizeof(*n));
    n->delivery_time = now_ms;
    n->delivery_count = 1;
    n->consumer = consumer;
    return n;
}

void stream_nack_free(void *n) { zfree(n); }

/* ------------------------------------------------------------ memory */

static size_t rax_usage(const rax_t *r) { return sizeof(*r) + r->alloc_bytes; }

size_t stream_mem_usage(const stream_t *s, size_t samples) {
    size_t total = sizeof(*s) + rax_usage(s->rax);
    rax_iter_t ri;
    rax_iter_start(&ri, s->rax);
    size_t lpsize = 0, n = 0;
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok && (samples == 0 || n < samples); ok = rax_next(&ri)) {
        lpsize += lp_mem_usage(ri.data);
        n++;
    }
    if (rax_size(s->rax) <= n) {
        total += lpsize;
    } else {
        total += (lpsize / n) * (rax_size(s->rax) - 1);
        if (rax_seek(&ri, "$", NULL, 0)) total += lp_mem_usage(ri.data);
    }
    if (s->cgroups) {
        total += rax_usage(s->cgroups);
        rax_iter_t gi;
        rax_iter_start(&gi, s->cgroups);
        for (bool ok = rax_seek(&gi, "^", NULL, 0); ok; ok = rax_next(&gi)) {
            stream_cg_t *cg = gi.data;
            total += sizeof(*cg) + rax_usage(cg->pel) + rax_usage(cg->consumers);
            total += sizeof(stream_nack_t) * rax_size(cg->pel);
            rax_iter_t ci;
            rax_iter_start(&ci, cg->consumers);
            for (bool ok2 = rax_seek(&ci, "^", NULL, 0); ok2; ok2 = rax_next(&ci)) {
                stream_consumer_t *c = ci.data;
                total += sizeof(*c) + sds_len(c->name) + rax_usage(c->pel);
            }
            rax_iter_stop(&ci);
        }
        rax_iter_stop(&gi);
    }
    rax_iter_stop(&ri);
    return total;
}

size_t stream_free_effort(const stream_t *s) {
    size_t effort = (size_t)rax_size(s->rax);
    if (s->cgroups) {
        rax_iter_t gi;
        rax_iter_start(&gi, s->cgroups);
        for (bool ok = rax_seek(&gi, "^", NULL, 0); ok; ok = rax_next(&gi)) {
            stream_cg_t *cg = gi.data;
            effort += 1 + (size_t)rax_size(cg->pel);
        }
        rax_iter_stop(&gi);
    }
    return effort;
}
