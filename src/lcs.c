/* lcs.c: LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN].
 *
 * The longest common subsequence of two string values by the classic
 * dynamic programme: table[i][j] is the LCS length of the first i bytes of
 * a and the first j bytes of b ((|a|+1) * (|b|+1) uint32 cells, refused
 * above proto-max-bulk-len as Redis 7.0 does).  Walking back from the
 * bottom-right corner yields the LCS from its end, and IDX reports the
 * contiguous matched ranges in that same order (last range first).  On a
 * mismatch the walk moves up when the cell above is strictly larger, else
 * left: that tie rule picks which of several LCSs is reported, and it is
 * Redis's, so replies are identical.  Reads two keys, writes nothing. */
#include <stdint.h>
#include <string.h>

#include "commands.h"
#include "keyspace.h"
#include "reply.h"

typedef struct lcs_opts {
    bool len, idx, withmatchlen;
    long long minmatchlen;
} lcs_opts_t;

/* A string key's bytes as a new sds ("" when missing); false and an error
 * reply when it holds another type. */
static bool string_arg_or_reply(client_t *c, robj *o, sds *out) {
    if (o && o->type != OBJ_STRING) {
        reply_error(c, "The specified keys must contain string values");
        return false;
    }
    *out = o ? obj_to_sds(o) : sds_empty();
    return true;
}

static bool lcs_opts_or_reply(client_t *c, lcs_opts_t *o) {
    memset(o, 0, sizeof(*o));
    for (int j = 3; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        if (!strcasecmp(a, "idx")) {
            o->idx = true;
        } else if (!strcasecmp(a, "len")) {
            o->len = true;
        } else if (!strcasecmp(a, "withmatchlen")) {
            o->withmatchlen = true;
        } else if (!strcasecmp(a, "minmatchlen") && j + 1 < c->argc) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &o->minmatchlen, NULL)) return false;
            if (o->minmatchlen < 0) o->minmatchlen = 0;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    if (o->len && o->idx) {
        reply_error(c, "If you want both the length and indexes, please just use IDX.");
        return false;
    }
    return true;
}

/* The table, or NULL with an error reply. */
static uint32_t *lcs_table_or_reply(client_t *c, sds a, sds b) {
    size_t alen = sds_len(a), blen = sds_len(b);
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(c, "String too long for LCS");
        return NULL;
    }
    unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
    unsigned long long bytes = cells * sizeof(uint32_t);
    if (bytes / sizeof(uint32_t) != cells || bytes > (unsigned long long)c->srv->cfg.proto_max_bulk_len) {
        reply_error(c, "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return NULL;
    }
    uint32_t *t = ztrymalloc((size_t)bytes);
    if (!t) {
        reply_error(c, "Insufficient memory, failed allocating transient memory for LCS");
        return NULL;
    }
    size_t w = blen + 1;
    for (size_t i = 0; i <= alen; i++) {
        for (size_t j = 0; j <= blen; j++) {
            if (i == 0 || j == 0) t[i * w + j] = 0;
            else if (a[i - 1] == b[j - 1]) t[i * w + j] = t[(i - 1) * w + j - 1] + 1;
            else {
                uint32_t up = t[(i - 1) * w + j], left = t[i * w + j - 1];
                t[i * w + j] = up > left ? up : left;
            }
        }
    }
    return t;
}

static void reply_range(client_t *c, const lcs_opts_t *o, size_t as, size_t ae, size_t bs, size_t be) {
    reply_array_len(c, 2 + o->withmatchlen);
    reply_array_len(c, 2);
    reply_ll(c, (long long)as);
    reply_ll(c, (long long)ae);
    reply_array_len(c, 2);
    reply_ll(c, (long long)bs);
    reply_ll(c, (long long)be);
    if (o->withmatchlen) reply_ll(c, (long long)(ae - as + 1));
}

/* Walk back through the table: fill the LCS into result (its length is
 * known) and, with IDX, reply each maximal range of consecutive matches. */
static long walk_back(client_t *c, const lcs_opts_t *o, const uint32_t *t, sds a, sds b, sds result) {
    size_t alen = sds_len(a), blen = sds_len(b), w = blen + 1;
    size_t i = alen, j = blen, k = t[alen * w + blen];
    bool open = false;
    size_t as = 0, ae = 0, bs = 0, be = 0;
    long ranges = 0;
    while (i > 0 && j > 0) {
        bool emit = false;
        if (a[i - 1] == b[j - 1]) {
            result[--k] = a[i - 1];
            if (!open) {
                open = true;
                as = ae = i - 1;
                bs = be = j - 1;
            } else if (as == i && bs == j) {
                as--;
                bs--;
            } else {
                emit = true;
            }
            if (as == 0 || bs == 0) emit = true; /* the walk ends here */
            i--;
            j--;
        } else {
            if (t[(i - 1) * w + j] > t[i * w + j - 1]) i--;
            else j--;
            if (open) emit = true;
        }
        if (emit) {
            if (o->idx && (o->minmatchlen == 0 || (long long)(ae - as + 1) >= o->minmatchlen)) {
                reply_range(c, o, as, ae, bs, be);
                ranges++;
            }
            open = false;
        }
    }
    return ranges;
}

static void cmd_lcs(client_t *c) {
    robj *oa = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    robj *ob = db_lookup_read(c->db, c->argv[2], LOOKUP_NONE);
    sds a = NULL, b = NULL;
    uint32_t *t = NULL;
    lcs_opts_t o;
    if (!string_arg_or_reply(c, oa, &a) || !string_arg_or_reply(c, ob, &b)) goto done;
    if (!lcs_opts_or_reply(c, &o)) goto done;
    if (!(t = lcs_table_or_reply(c, a, b))) goto done;
    uint32_t total = t[sds_len(a) * (sds_len(b) + 1) + sds_len(b)];
    if (o.len) {
        reply_ll(c, total);
        goto done;
    }
    sds result = sds_newlen(NULL, total);
    if (o.idx) {
        reply_map_len(c, 2);
        reply_bulk_cstr(c, "matches");
        void *slot = reply_deferred_len(c);
        long n = walk_back(c, &o, t, a, b, result);
        reply_bulk_cstr(c, "len");
        reply_ll(c, total);
        reply_set_deferred_array_len(c, slot, n);
        sds_free(result);
    } else {
        walk_back(c, &o, t, a, b, result);
        reply_bulk_sds_take(c, result);
    }
done:
    zfree(t);
    if (a) sds_free(a);
    if (b) sds_free(b);
}

command_t lcs_commands[] = {
    {"lcs", cmd_lcs, -3, CMD_READONLY, 1, 2, 1, "string", "Find longest common substring", "7.0.0", NULL},
    {0},
};
