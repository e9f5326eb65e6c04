/* digest.c: the data set's fingerprint (see digest.h).
 *
 * Two steps build everything: "xor" adds the SHA1 of some bytes into a
 * digest (order does not matter), "mix" does the same and then replaces the
 * digest by its own SHA1 (order matters).  Numbers are digested as the
 * strings Redis prints them as, so an integer-encoded member and the same
 * member as a string give the same digest. */
#include "digest.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "db_entry.h"
#include "intset.h"
#include "keyspace.h"
#include "listpack.h"
#include "quicklist.h"
#include "sha1.h"
#include "stream.h"
#include "t_hash.h"
#include "t_set.h"
#include "util.h"
#include "zset.h"

static void xor_in(unsigned char *d, const void *p, size_t len) {
    unsigned char h[DIGEST_LEN];
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, p, len);
    sha1_final(&c, h);
    for (int i = 0; i < DIGEST_LEN; i++) d[i] ^= h[i];
}

static void mix_in(unsigned char *d, const void *p, size_t len) {
    xor_in(d, p, len);
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, d, DIGEST_LEN);
    sha1_final(&c, d);
}

/* Every element of a listpack, chained (a list's order counts). */
static void mix_listpack(unsigned char *d, unsigned char *lp) {
    for (unsigned char *p = lp_first(lp); p; p = lp_next(lp, p)) {
        char tmp[LP_INTBUF_SIZE];
        size_t len;
        const unsigned char *s = lp_get_str(p, &len, tmp);
        mix_in(d, s, len);
    }
}

static void digest_list(unsigned char *d, robj *o) {
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        mix_listpack(d, o->ptr);
        return;
    }
    quicklist *ql = o->ptr;
    for (ql_node_t *n = ql->head; n; n = n->next) mix_listpack(d, ql_node_listpack(ql, n));
}

static void xor_member(void *arg, const char *s, size_t len) { xor_in(arg, s, len); }

/* A field and its value (or a member and its score) make one digest of
 * their own, xor-ed in: pairs are unordered, each pair is not. */
static void xor_pair(unsigned char *d, const void *a, size_t alen, const void *b, size_t blen) {
    unsigned char e[DIGEST_LEN] = {0};
    mix_in(e, a, alen);
    mix_in(e, b, blen);
    xor_in(d, e, DIGEST_LEN);
}

static void digest_zset(unsigned char *d, robj *o) {
    zset_cursor_t cur;
    for (zset_cursor_at_rank(&cur, o, 0, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t mlen;
        const char *m = zset_cursor_member(&cur, &mlen);
        char score[64];
        int n = snprintf(score, sizeof(score), "%.17g", zset_cursor_score(&cur)); /* as Redis 7.0 prints it */
        xor_pair(d, m, mlen, score, (size_t)n);
    }
}

/* A field with a TTL adds Redis 7.4's marker to its pair's digest (the
 * time itself is not part of it, as in Redis). */
static void xor_hash_pair(void *arg, const char *f, size_t flen, const char *v, size_t vlen, uint64_t ttl) {
    unsigned char e[DIGEST_LEN] = {0};
    mix_in(e, f, flen);
    mix_in(e, v, vlen);
    if (ttl != HASH_TTL_NONE) xor_in(e, (const unsigned char *)"!!hexpire!!", 11);
    xor_in(arg, e, DIGEST_LEN);
}

static void digest_hash(unsigned char *d, robj *o) { hash_type_foreach(o, xor_hash_pair, d); }

/* Entries in ID order, each ID as "ms.seq" then its fields and values;
 * consumer groups are not part of it (as in Redis). */
static void digest_stream(unsigned char *d, robj *o) {
    stream_iter_t it;
    stream_id_t id;
    int64_t nfields;
    stream_iter_start(&it, o->ptr, NULL, NULL, false);
    while (stream_iter_next(&it, &id, &nfields)) {
        char idstr[48];
        int n = snprintf(idstr, sizeof(idstr), "%llu.%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
        mix_in(d, idstr, (size_t)n);
        while (nfields--) {
            const unsigned char *f, *v;
            size_t flen, vlen;
            stream_iter_field(&it, &f, &flen, &v, &vlen);
            mix_in(d, f, flen);
            mix_in(d, v, vlen);
        }
    }
    stream_iter_stop(&it);
}

void digest_value(robj *val, long long expire_ms, unsigned char out[DIGEST_LEN]) {
    uint32_t type = htonl((uint32_t)val->type);
    mix_in(out, &type, sizeof(type));
    switch (val->type) {
        case OBJ_STRING: {
            char tmp[LP_INTBUF_SIZE];
            size_t len;
            const char *s = obj_string_view(val, tmp, sizeof(tmp), &len);
            mix_in(out, s, len);
            break;
        }
        case OBJ_LIST: digest_list(out, val); break;
        case OBJ_SET: set_type_foreach(val, xor_member, out); break;
        case OBJ_ZSET: digest_zset(out, val); break;
        case OBJ_HASH: digest_hash(out, val); break;
        case OBJ_STREAM: digest_stream(out, val); break;
    }
    if (expire_ms >= 0) xor_in(out, "!!expire!!", 10);
}

void digest_dataset(server_t *srv, unsigned char out[DIGEST_LEN]) {
    memset(out, 0, DIGEST_LEN);
    for (int j = 0; j < srv->dbnum; j++) {
        ht *keys = srv->dbs[j].keys;
        if (ht_size(keys) == 0) continue;
        uint32_t dbid = htonl((uint32_t)j); /* the same data in another db differs */
        mix_in(out, &dbid, sizeof(dbid));
        ht_iter it;
        void *e;
        ht_iter_init(&it, keys, false);
        while (ht_next(&it, &e)) {
            const db_entry *de = e;
            unsigned char kd[DIGEST_LEN] = {0};
            sds key = db_entry_key(de);
            robj view;
            mix_in(kd, key, sds_len(key));
            digest_value(db_entry_val(de, &view), db_entry_expire(de), kd);
            xor_in(out, kd, DIGEST_LEN);
        }
        ht_iter_release(&it);
    }
}

void digest_hex(const unsigned char d[DIGEST_LEN], char out[2 * DIGEST_LEN + 1]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < DIGEST_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * DIGEST_LEN] = '\0';
}
