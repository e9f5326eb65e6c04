/* hyperloglog.c: the HyperLogLog commands (PFADD, PFCOUNT, PFMERGE,
 * PFDEBUG, PFSELFTEST) over string values in Redis 7's HLL format.
 *
 * The format, the sparse/dense encodings and the estimator live in
 * lib/hll.c; this file checks values (type, header), keeps the cached
 * cardinality in the header up to date, and replies.  A value whose header
 * is wrong gets Redis's WRONGTYPE text for HLLs; a sparse body that does
 * not cover exactly 16384 registers gets INVALIDOBJ, never a crash.
 * Callers: the command table. */
#include <string.h>

#include "commands.h"
#include "hll.h"
#include "keyspace.h"
#include "notify.h"
#include "persist.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

#define ERR_INVALID_HLL "INVALIDOBJ Corrupted HLL object detected"
#define ERR_NOT_HLL "WRONGTYPE Key is not a valid HyperLogLog string value."

/* o (a value that exists) is a string with an HLL header; else replied. */
static bool is_hll_or_reply(client_t *c, robj *o) {
    if (!db_check_type_or_reply(c, o, OBJ_STRING)) return false;
    if (!obj_is_sds_encoded(o) || !hll_header_ok((unsigned char *)o->ptr, sds_len(o->ptr))) {
        reply_error(c, ERR_NOT_HLL);
        return false;
    }
    return true;
}

/* The HLL at key made writable (an unshared raw string), replacing the
 * stored object if it had to be copied. */
static robj *writable_hll(client_t *c, robj *key, robj *o) {
    bool replaced;
    robj *w = obj_unshare_string(o, &replaced);
    if (replaced) db_overwrite(c->db, key, w);
    return w;
}

static size_t sparse_max(const client_t *c) { return (size_t)c->srv->cfg.hll_sparse_max_bytes; }

static void cmd_pfadd(client_t *c) {
    robj *key = c->argv[1];
    robj *o = db_lookup_write(c->db, key);
    long long updated = 0;
    if (!o) {
        o = obj_create_from_sds(hll_new());
        db_add(c->db, key, o);
        updated++;
    } else {
        if (!is_hll_or_reply(c, o)) return;
        o = writable_hll(c, key, o);
    }
    for (int j = 2; j < c->argc; j++) {
        sds e = c->argv[j]->ptr;
        sds s = o->ptr;
        int r = hll_add(&s, (unsigned char *)e, sds_len(e), sparse_max(c));
        o->ptr = s;
        if (r < 0) {
            reply_error(c, ERR_INVALID_HLL);
            return;
        }
        updated += r;
    }
    if (updated) {
        hll_cache_invalidate((unsigned char *)o->ptr);
        db_signal_modified(c->db, key);
        notify_keyspace_event(c->srv, NOTIFY_STRING, "pfadd", key, c->db->id);
    }
    reply_ll(c, updated ? 1 : 0);
}

/* PFCOUNT of several keys: the count of their union, nothing cached. */
static void pfcount_union(client_t *c) {
    uint8_t *max = zcalloc(HLL_REGISTERS);
    for (int j = 1; j < c->argc; j++) {
        robj *o = db_lookup_read(c->db, c->argv[j], LOOKUP_NONE);
        if (!o) continue; /* a missing key is an empty HLL */
        if (!is_hll_or_reply(c, o)) goto done;
        if (!hll_merge_max(max, (unsigned char *)o->ptr, sds_len(o->ptr))) {
            reply_error(c, ERR_INVALID_HLL);
            goto done;
        }
    }
    reply_ll(c, (long long)hll_count_registers(max));
done:
    zfree(max);
}

static void cmd_pfcount(client_t *c) {
    if (c->argc > 2) {
        pfcount_union(c);
        return;
    }
    robj *key = c->argv[1];
    robj *o = db_lookup_read(c->db, key, LOOKUP_NONE);
    if (!o) {
        reply_ll(c, 0);
        return;
    }
    if (!is_hll_or_reply(c, o)) return;
    unsigned char *p = o->ptr;
    if (hll_cache_valid(p)) {
        reply_ll(c, (long long)hll_cache_get(p));
        return;
    }
    bool invalid = false;
    uint64_t card = hll_count(p, sds_len(o->ptr), &invalid);
    if (invalid) {
        reply_error(c, ERR_INVALID_HLL);
        return;
    }
    /* Refreshing the cache writes the value, as in Redis (a read command
     * that modifies: WATCH sees it, and it is logged so that a replica's
     * copy stays byte for byte the same: DEBUG DIGEST compares them). */
    o = writable_hll(c, key, o);
    hll_cache_set((unsigned char *)o->ptr, card);
    db_signal_modified(c->db, key);
    c->srv->dirty++;
    persist_propagate(c, c->argv, c->argc); /* PFCOUNT is not a write: dispatch would not log it */
    reply_ll(c, (long long)card);
}

static void cmd_pfmerge(client_t *c) {
    uint8_t *max = zcalloc(HLL_REGISTERS);
    bool dense = false;
    /* The destination (argv[1]) is a source too. */
    for (int j = 1; j < c->argc; j++) {
        robj *o = db_lookup_read(c->db, c->argv[j], LOOKUP_NONE);
        if (!o) continue;
        if (!is_hll_or_reply(c, o)) goto done;
        if (hll_encoding(o->ptr) == HLL_DENSE) dense = true;
        if (!hll_merge_max(max, (unsigned char *)o->ptr, sds_len(o->ptr))) {
            reply_error(c, ERR_INVALID_HLL);
            goto done;
        }
    }
    robj *key = c->argv[1];
    robj *o = db_lookup_write(c->db, key);
    if (!o) {
        o = obj_create_from_sds(hll_new());
        db_add(c->db, key, o);
    } else {
        o = writable_hll(c, key, o); /* checked as a source above */
    }
    sds s = o->ptr;
    if (dense && !hll_to_dense(&s)) {
        o->ptr = s;
        reply_error(c, ERR_INVALID_HLL);
        goto done;
    }
    for (long i = 0; i < HLL_REGISTERS; i++)
        if (max[i]) hll_raise(&s, i, max[i], sparse_max(c));
    o->ptr = s;
    hll_cache_invalidate((unsigned char *)o->ptr);
    db_signal_modified(c->db, key);
    notify_keyspace_event(c->srv, NOTIFY_STRING, "pfadd", key, c->db->id);
    reply_ok(c);
done:
    zfree(max);
}

/* ------------------------------------------------------------ PFDEBUG */

/* Convert the HLL in o to dense; false after replying INVALIDOBJ. */
static bool to_dense_or_reply(client_t *c, robj *o) {
    sds s = o->ptr;
    bool ok = hll_to_dense(&s);
    o->ptr = s;
    if (!ok) reply_error(c, ERR_INVALID_HLL);
    return ok;
}

static void cmd_pfdebug(client_t *c) {
    const char *sub = c->argv[1]->ptr;
    robj *key = c->argv[2];
    robj *o = db_lookup_write(c->db, key);
    if (!o) {
        reply_error(c, "The specified key does not exist");
        return;
    }
    if (!is_hll_or_reply(c, o)) return;
    o = writable_hll(c, key, o);
    unsigned char *p = o->ptr;
    if (!strcasecmp(sub, "getreg")) {
        if (hll_encoding(p) == HLL_SPARSE && !to_dense_or_reply(c, o)) return;
        const unsigned char *regs = (unsigned char *)o->ptr + HLL_HDR_SIZE;
        reply_array_len(c, HLL_REGISTERS);
        for (long i = 0; i < HLL_REGISTERS; i++) reply_ll(c, hll_dense_get(regs, i));
    } else if (!strcasecmp(sub, "decode")) {
        if (hll_encoding(p) != HLL_SPARSE) {
            reply_error(c, "HLL encoding is not sparse");
            return;
        }
        reply_bulk_sds_take(c, hll_sparse_decode(p, sds_len(o->ptr)));
    } else if (!strcasecmp(sub, "encoding")) {
        reply_simple(c, hll_encoding(p) == HLL_DENSE ? "dense" : "sparse");
    } else if (!strcasecmp(sub, "todense")) {
        bool conv = hll_encoding(p) == HLL_SPARSE;
        if (conv && !to_dense_or_reply(c, o)) return;
        reply_ll(c, conv);
    } else {
        reply_error(c, "Unknown PFDEBUG subcommand '%s'", sub);
    }
}

/* ------------------------------------------------------------ PFSELFTEST */

/* Checks of the format code on private values: register packing, sparse
 * against dense after the same additions, and the estimator's error. */
static const char *hll_selftest(void) {
    static char msg[128];
    unsigned char *regs = zcalloc(HLL_DENSE_SIZE);
    uint8_t *want = zmalloc(HLL_REGISTERS);
    const char *fail = NULL;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 100 && !fail; round++) {
        for (long i = 0; i < HLL_REGISTERS; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            want[i] = (uint8_t)((seed >> 33) & HLL_REGISTER_MAX);
            hll_dense_put(regs, i, want[i]);
        }
        for (long i = 0; i < HLL_REGISTERS; i++) {
            if (hll_dense_get(regs, i) != want[i]) {
                snprintf(msg, sizeof(msg), "TESTFAILED Register error at %ld", i);
                fail = msg;
                break;
            }
        }
    }
    sds sparse = hll_new(), dense = hll_new();
    hll_to_dense(&dense);
    char ele[32];
    for (long n = 1; n <= 20000 && !fail; n++) {
        int len = snprintf(ele, sizeof(ele), "selftest:%ld", n);
        hll_add(&sparse, (unsigned char *)ele, (size_t)len, 1u << 30);
        hll_add(&dense, (unsigned char *)ele, (size_t)len, 0);
        if (n % 500 && n != 1 && n != 10 && n != 100) continue;
        bool inv = false;
        uint64_t a = hll_count((unsigned char *)sparse, sds_len(sparse), &inv);
        uint64_t b = hll_count((unsigned char *)dense, sds_len(dense), &inv);
        double err = (double)b > (double)n ? (double)b - (double)n : (double)n - (double)b;
        if (inv || a != b) {
            snprintf(msg, sizeof(msg), "TESTFAILED sparse count %llu != dense %llu at %ld",
                     (unsigned long long)a, (unsigned long long)b, n);
            fail = msg;
        } else if (err > (double)n * 0.05 + 1) { /* ~6 standard errors of 0.81% */
            snprintf(msg, sizeof(msg), "TESTFAILED estimate %llu for %ld elements", (unsigned long long)b, n);
            fail = msg;
        }
    }
    sds_free(sparse);
    sds_free(dense);
    zfree(regs);
    zfree(want);
    return fail;
}

static void cmd_pfselftest(client_t *c) {
    const char *fail = hll_selftest();
    if (fail) reply_error(c, "%s", fail);
    else reply_ok(c);
}

command_t hll_commands[] = {
    {"pfadd", cmd_pfadd, -2, CMD_WRITE | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "hyperloglog", "Adds the specified elements to the specified HyperLogLog.", "2.8.9", NULL},
    {"pfcount", cmd_pfcount, -2, CMD_READONLY | CMD_MAY_REPLICATE, 1, -1, 1, "hyperloglog", "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "2.8.9", NULL},
    {"pfmerge", cmd_pfmerge, -2, CMD_WRITE | CMD_DENYOOM, 1, -1, 1, "hyperloglog", "Merge N different HyperLogLogs into a single one.", "2.8.9", NULL},
    {"pfdebug", cmd_pfdebug, 3, CMD_WRITE | CMD_ADMIN, 2, 2, 1, "hyperloglog", "Internal commands for debugging HyperLogLog values", "2.8.9", NULL},
    {"pfselftest", cmd_pfselftest, 1, CMD_ADMIN, 0, 0, 0, "hyperloglog", "An internal command for testing HyperLogLog values", "2.8.9", NULL},
    {0},
};
