/* rdb_stream.c: streams in the RDB file, as Redis 7.0 and 7.2+ write them.
 *
 * Type 19 (STREAM_LISTPACKS_2), in order: node count; per node the 16-byte
 * master ID and the listpack, both as strings; length; last ID, first ID,
 * max deleted ID (ms, seq lengths each); entries added; group count; per
 * group its name, last ID, entries read, the PEL (count, then per entry
 * the raw 16-byte ID, the delivery time as 8 little-endian bytes and the
 * delivery count) and the consumers (count, then name, seen time as 8
 * bytes, and the consumer's PEL as raw IDs that must be in the group's).
 * Type 21 (STREAM_LISTPACKS_3, Redis 7.2+, RDB version 11) adds each
 * consumer's active time as 8 bytes after its seen time; a loaded 19 or 15
 * takes the seen time for it, as Redis does.  So 19 loses nothing while
 * every consumer's two times are equal (rdb_stream_needs_v3 says when
 * not), and rdb_save.c writes 21 only then, keeping Redis 7.0's files
 * (version 10) for everything 7.0 can hold.
 * Type 15 lacks first/max-deleted IDs, entries added and entries read.
 * Loading checks every listpack's stream layout before adopting it, so a
 * corrupt file is refused with an error instead of crashing later.
 * Called by rdb_save.c / rdb_load.c through rdb_stream.h. */
#include "rdb_stream.h"

#include <endian.h>
#include <string.h>

#include "listpack.h"
#include "rdb.h"
#include "stream.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ save */

static void put_ms(rio_t *r, long long ms) {
    uint64_t le = htole64((uint64_t)ms);
    rio_write(r, &le, 8);
}

static void put_pel(rio_t *r, const rdb_out_ops_t *out, rax_t *pel, bool nacks) {
    out->len(r, rax_size(pel));
    rax_iter_t ri;
    rax_iter_start(&ri, pel);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        rio_write(r, ri.key, 16);
        if (nacks) {
            stream_nack_t *n = ri.data;
            put_ms(r, n->delivery_time);
            out->len(r, n->delivery_count);
        }
    }
    rax_iter_stop(&ri);
}

bool rdb_stream_needs_v3(robj *o) {
    stream_t *s = o->ptr;
    if (!s->cgroups) return false;
    bool differ = false;
    rax_iter_t gi;
    rax_iter_start(&gi, s->cgroups);
    for (bool ok = rax_seek(&gi, "^", NULL, 0); ok && !differ; ok = rax_next(&gi)) {
        stream_cg_t *cg = gi.data;
        rax_iter_t ci;
        rax_iter_start(&ci, cg->consumers);
        for (bool ok2 = rax_seek(&ci, "^", NULL, 0); ok2 && !differ; ok2 = rax_next(&ci)) {
            stream_consumer_t *c = ci.data;
            differ = c->active_time != c->seen_time;
        }
        rax_iter_stop(&ci);
    }
    rax_iter_stop(&gi);
    return differ;
}

void rdb_stream_save(rio_t *r, const rdb_out_ops_t *out, robj *o, bool compress, bool v3) {
    stream_t *s = o->ptr;
    out->len(r, rax_size(s->rax));
    rax_iter_t ri;
    rax_iter_start(&ri, s->rax);
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok; ok = rax_next(&ri)) {
        out->string(r, ri.key, 16, false);
        unsigned char *lp = ri.data;
        out->string(r, lp, lp_bytes(lp), compress);
    }
    rax_iter_stop(&ri);
    out->len(r, s->length);
    out->len(r, s->last_id.ms);
    out->len(r, s->last_id.seq);
    out->len(r, s->first_id.ms);
    out->len(r, s->first_id.seq);
    out->len(r, s->max_deleted_entry_id.ms);
    out->len(r, s->max_deleted_entry_id.seq);
    out->len(r, s->entries_added);
    out->len(r, s->cgroups ? rax_size(s->cgroups) : 0);
    if (!s->cgroups) return;
    rax_iter_t gi;
    rax_iter_start(&gi, s->cgroups);
    for (bool ok = rax_seek(&gi, "^", NULL, 0); ok; ok = rax_next(&gi)) {
        stream_cg_t *cg = gi.data;
        out->string(r, gi.key, gi.key_len, false);
        out->len(r, cg->last_id.ms);
        out->len(r, cg->last_id.seq);
        out->len(r, (uint64_t)cg->entries_read);
        put_pel(r, out, cg->pel, true);
        out->len(r, rax_size(cg->consumers));
        rax_iter_t ci;
        rax_iter_start(&ci, cg->consumers);
        for (bool ok2 = rax_seek(&ci, "^", NULL, 0); ok2; ok2 = rax_next(&ci)) {
            stream_consumer_t *c = ci.data;
            out->string(r, c->name, sds_len(c->name), false);
            put_ms(r, c->seen_time);
            if (v3) put_ms(r, c->active_time); /* -1: never active, as 8 bytes of ones */
            put_pel(r, out, c->pel, false);
        }
        rax_iter_stop(&ci);
    }
    rax_iter_stop(&gi);
}

/* ------------------------------------------------------------ listpack check */

/* Reads integers off a listpack walk, failing on strings or the end. */
typedef struct lpwalk {
    unsigned char *lp, *p;
    bool bad;
} lpwalk_t;

static bool walk_int(lpwalk_t *w, long long *v) {
    if (w->bad || !w->p || !lp_get_int(w->p, v)) return !(w->bad = true);
    w->p = lp_next(w->lp, w->p);
    return true;
}

static bool walk_skip(lpwalk_t *w, long long n) {
    for (long long i = 0; i < n; i++) {
        if (w->bad || !w->p) return !(w->bad = true);
        w->p = lp_next(w->lp, w->p);
    }
    return true;
}

/* The stream layout of stream.h: master entry, then entries whose counts,
 * lp-count fields and IDs (ascending, from the master ID on) agree.
 * *live gets the master's count. */
static bool stream_lp_valid(unsigned char *lp, size_t len, const stream_id_t *master, long long *live) {
    if (!lp_validate(lp, len, true, NULL, NULL)) return false;
    lpwalk_t w = {lp, lp_first(lp), false};
    long long count, deleted, mfields, zero;
    if (!w.p || !walk_int(&w, &count) || !walk_int(&w, &deleted) || !walk_int(&w, &mfields)) return false;
    if (count < 0 || deleted < 0 || mfields < 0 || mfields > (long long)len) return false;
    if (!walk_skip(&w, mfields) || !walk_int(&w, &zero) || zero != 0) return false;
    long long entries = 0, ndel = 0;
    stream_id_t prev = *master;
    while (w.p) {
        long long flags, dms, dseq, nf, lpcount;
        if (!walk_int(&w, &flags) || !walk_int(&w, &dms) || !walk_int(&w, &dseq)) return false;
        if (flags & ~(long long)(STREAM_ITEM_FLAG_DELETED | STREAM_ITEM_FLAG_SAMEFIELDS)) return false;
        stream_id_t id = {master->ms + (uint64_t)dms, master->seq + (uint64_t)dseq};
        if (stream_id_cmp(&id, &prev) < 0 || (entries && stream_id_cmp(&id, &prev) == 0)) return false;
        prev = id;
        long long expect;
        if (flags & STREAM_ITEM_FLAG_SAMEFIELDS) {
            if (!walk_skip(&w, mfields)) return false;
            expect = mfields + 3;
        } else {
            if (!walk_int(&w, &nf) || nf < 0 || nf > (long long)len) return false;
            if (!walk_skip(&w, nf * 2)) return false;
            expect = nf * 2 + 4;
        }
        if (!walk_int(&w, &lpcount) || lpcount != expect) return false;
        entries++;
        if (flags & STREAM_ITEM_FLAG_DELETED) ndel++;
    }
    if (entries == 0 || entries != count + deleted || ndel != deleted) return false;
    *live = count;
    return true;
}

/* ------------------------------------------------------------ load */

/* The caller's reader and the primitives it lends to read with. */
typedef struct {
    rdb_reader_t *r;
    const rdb_in_ops_t *op;
} in_t;

static bool get_id(in_t *r, stream_id_t *id) { return r->op->len(r->r, &id->ms) && r->op->len(r->r, &id->seq); }

static bool get_ms(in_t *r, long long *ms) {
    uint64_t le;
    if (!r->op->bytes(r->r, &le, 8)) return false;
    *ms = (long long)le64toh(le);
    return true;
}

static bool load_nodes(in_t *r, stream_t *s, uint64_t *live_total) {
    uint64_t nodes;
    if (!r->op->len(r->r, &nodes) || !r->op->plausible(r->r, nodes, 2)) return false;
    unsigned char lastkey[16];
    for (uint64_t i = 0; i < nodes; i++) {
        size_t klen, len;
        unsigned char *key = r->op->blob(r->r, &klen);
        if (!key) return false;
        if (klen != 16) {
            zfree(key);
            return r->op->fail(r->r, "Stream node key entry is not the size of a stream ID");
        }
        unsigned char *lp = r->op->blob(r->r, &len);
        if (!lp) {
            zfree(key);
            return false;
        }
        stream_id_t master;
        stream_id_decode(key, &master);
        long long live = 0;
        bool ok = (i == 0 || memcmp(key, lastkey, 16) > 0) && stream_lp_valid(lp, len, &master, &live);
        if (ok) {
            memcpy(lastkey, key, 16);
            rax_insert(s->rax, key, 16, lp, NULL);
            *live_total += (uint64_t)live;
        }
        zfree(key);
        if (!ok) {
            lp_free(lp);
            return r->op->fail(r->r, "Bad stream listpack (corrupt, empty or out of order)");
        }
    }
    return true;
}

static bool load_pel(in_t *r, stream_cg_t *cg) {
    uint64_t n;
    if (!r->op->len(r->r, &n) || !r->op->plausible(r->r, n, 17)) return false;
    for (uint64_t i = 0; i < n; i++) {
        unsigned char id[16];
        long long when;
        uint64_t count;
        if (!r->op->bytes(r->r, id, 16) || !get_ms(r, &when) || !r->op->len(r->r, &count)) return false;
        stream_nack_t *nack = stream_nack_new(NULL, when);
        nack->delivery_count = count;
        if (!rax_try_insert(cg->pel, id, 16, nack)) {
            stream_nack_free(nack);
            return r->op->fail(r->r, "Duplicated global PEL entry loading stream consumer group");
        }
    }
    return true;
}

/* v3 (type 21, Redis 7.2+): each consumer's active time follows its seen
 * time; older types have none and take the seen time (as Redis does). */
static bool load_consumers(in_t *r, stream_cg_t *cg, bool v3) {
    uint64_t n;
    if (!r->op->len(r->r, &n) || !r->op->plausible(r->r, n, 10)) return false;
    for (uint64_t i = 0; i < n; i++) {
        size_t nlen;
        unsigned char *name = r->op->blob(r->r, &nlen);
        if (!name) return false;
        long long seen, active;
        if (!get_ms(r, &seen) || (v3 && !get_ms(r, &active))) {
            zfree(name);
            return false;
        }
        stream_consumer_t *c = stream_consumer_create(cg, (const char *)name, nlen, seen);
        zfree(name);
        if (!c) return r->op->fail(r->r, "Duplicate stream consumer detected");
        c->active_time = v3 ? active : seen;
        uint64_t npel;
        if (!r->op->len(r->r, &npel) || !r->op->plausible(r->r, npel, 16)) return false;
        for (uint64_t j = 0; j < npel; j++) {
            unsigned char id[16];
            void *v;
            if (!r->op->bytes(r->r, id, 16)) return false;
            if (!rax_find(cg->pel, id, 16, &v)) return r->op->fail(r->r, "Consumer entry not found in group global PEL");
            stream_nack_t *nack = v;
            if (nack->consumer) return r->op->fail(r->r, "Stream PEL entry owned by two consumers");
            nack->consumer = c;
            rax_insert(c->pel, id, 16, nack, NULL);
        }
    }
    /* Every pending entry needs an owner. */
    rax_iter_t ri;
    rax_iter_start(&ri, cg->pel);
    bool orphan = false;
    for (bool ok = rax_seek(&ri, "^", NULL, 0); ok && !orphan; ok = rax_next(&ri))
        orphan = ((stream_nack_t *)ri.data)->consumer == NULL;
    rax_iter_stop(&ri);
    return orphan ? r->op->fail(r->r, "Stream CG PEL entry without consumer") : true;
}

static bool load_groups(in_t *r, stream_t *s, bool v2, bool r_v3) {
    uint64_t ngroups;
    if (!r->op->len(r->r, &ngroups) || !r->op->plausible(r->r, ngroups, 4)) return false;
    for (uint64_t i = 0; i < ngroups; i++) {
        size_t nlen;
        unsigned char *name = r->op->blob(r->r, &nlen);
        if (!name) return false;
        stream_id_t last;
        uint64_t read = 0;
        bool ok = get_id(r, &last) && (!v2 || r->op->len(r->r, &read));
        long long entries_read = v2 ? (long long)read : stream_estimate_distance(s, &last);
        stream_cg_t *cg = ok ? stream_cg_create(s, (const char *)name, nlen, &last, entries_read) : NULL;
        zfree(name);
        if (!ok) return false;
        if (!cg) return r->op->fail(r->r, "Duplicated consumer group name");
        if (!load_pel(r, cg) || !load_consumers(r, cg, r_v3)) return false;
    }
    return true;
}

robj *rdb_stream_load(rdb_reader_t *reader, const rdb_in_ops_t *ops, int type) {
    in_t in = {reader, ops}, *r = &in;
    bool v2 = type == RDB_TYPE_STREAM_LISTPACKS_2 || type == RDB_TYPE_STREAM_LISTPACKS_3;
    robj *o = stream_create_object();
    stream_t *s = o->ptr;
    uint64_t live = 0;
    if (!load_nodes(r, s, &live) || !r->op->len(r->r, &s->length) || !get_id(r, &s->last_id)) goto err;
    if (v2) {
        if (!get_id(r, &s->first_id) || !get_id(r, &s->max_deleted_entry_id) || !r->op->len(r->r, &s->entries_added))
            goto err;
    } else {
        s->entries_added = s->length;
        if (!stream_edge_id(s, true, &s->first_id)) s->first_id.ms = s->first_id.seq = 0;
    }
    if (s->length != live) {
        r->op->fail(r->r, "Stream length does not match its nodes");
        goto err;
    }
    if (!load_groups(r, s, v2, type == RDB_TYPE_STREAM_LISTPACKS_3)) goto err;
    return o;
err:
    obj_decref(o);
    return NULL;
}
