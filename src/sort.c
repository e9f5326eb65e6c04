/* sort.c: SORT and SORT_RO.
 *
 * The elements of a list, set or sorted set are copied into a vector of
 * items (element, numeric score, ALPHA comparison string), weighted by the
 * element itself or by a BY pattern ("w_*" names a string key, "h_*->f" a
 * hash field), sorted, cut to LIMIT, and replied or stored as a list, with
 * GET patterns ("#" is the element itself) looked up per element.  A BY
 * pattern without '*' means "do not sort": lists and sorted sets keep their
 * order (reversed by DESC), a set its iteration order, except under STORE,
 * where a set is sorted ALPHA so the stored result is deterministic.
 * Ordering, ties, LIMIT clamping and errors follow Redis 7.0's sort.c:
 * numeric ties fall back to comparing the elements' bytes; ALPHA uses
 * strcoll, or plain bytes under STORE.  Reads collections through
 * listpack/quicklist/zset cursors, t_set.h and t_hash.h; writes only the
 * STORE key. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "command_meta.h"
#include "commands.h"
#include "keyspace.h"
#include "listpack.h"
#include "notify.h"
#include "quicklist.h"
#include "reply.h"
#include "t_hash.h"
#include "t_set.h"
#include "zset.h"

typedef struct sort_item {
    sds ele;      /* the element (owned) */
    double score; /* numeric weight (0 when the BY key is missing) */
    sds cmp;      /* ALPHA + BY: the weight string (owned), NULL if missing */
} sort_item_t;

typedef struct sort_spec {
    bool desc, alpha, dontsort;
    sds by;      /* BY pattern, or NULL */
    robj *store; /* STORE destination, or NULL */
    sds *gets;   /* GET patterns */
    int ngets;
    long long limit_start, limit_count;
} sort_spec_t;

typedef struct sort_vec {
    sort_item_t *v;
    size_t n, cap;
} sort_vec_t;

static void vec_push(sort_vec_t *vec, const char *s, size_t len) {
    if (vec->n == vec->cap) {
        vec->cap = vec->cap ? vec->cap * 2 : 16;
        vec->v = zrealloc(vec->v, vec->cap * sizeof(sort_item_t));
    }
    vec->v[vec->n++] = (sort_item_t){sds_newlen(s, len), 0, NULL};
}

static void vec_push_fn(void *arg, const char *s, size_t len) { vec_push(arg, s, len); }

static void vec_free(sort_vec_t *vec) {
    for (size_t i = 0; i < vec->n; i++) {
        sds_free(vec->v[i].ele);
        if (vec->v[i].cmp) sds_free(vec->v[i].cmp);
    }
    zfree(vec->v);
}

/* ---------------------------------------------------------------- patterns */

/* The value a BY/GET pattern names for element ele, as a new sds, or NULL
 * when the pattern has no '*', the key is missing or of the wrong type, or
 * the hash has no such field.  "#" is the element itself. */
static sds pattern_value(db_t *db, sds pat, sds ele) {
    if (pat[0] == '#' && pat[1] == '\0') return sds_dup(ele);
    const char *star = strchr(pat, '*');
    if (!star) return NULL;
    const char *arrow = strstr(star + 1, "->");
    const char *field = arrow && arrow[2] ? arrow + 2 : NULL;
    size_t patlen = sds_len(pat);
    size_t keyend = field ? (size_t)(arrow - pat) : patlen;
    sds name = sds_newlen(pat, (size_t)(star - pat));
    name = sds_catlen(name, ele, sds_len(ele));
    name = sds_catlen(name, star + 1, keyend - (size_t)(star - pat) - 1);
    robj key = {.type = OBJ_STRING, .encoding = OBJ_ENCODING_RAW, .refcount = 1, .ptr = name};
    robj *o = db_lookup_read(db, &key, LOOKUP_NONE);
    sds out = NULL;
    char buf[LP_INTBUF_SIZE];
    size_t len;
    if (o && field && o->type == OBJ_HASH) {
        const char *v = hash_type_get(o, field, patlen - (size_t)(field - pat), &len, buf);
        if (v) out = sds_newlen(v, len);
    } else if (o && !field && o->type == OBJ_STRING) {
        const char *v = obj_string_view(o, buf, sizeof(buf), &len);
        out = sds_newlen(v, len);
    }
    sds_free(name);
    return out;
}

/* ---------------------------------------------------------------- parsing */

static bool parse_or_reply(client_t *c, bool readonly, sort_spec_t *sp) {
    memset(sp, 0, sizeof(*sp));
    sp->limit_count = -1;
    sp->gets = zmalloc(sizeof(sds) * (size_t)c->argc);
    /* acl.c: BY and GET patterns reach keys no key spec names, so they
     * need a user that may read every key. */
    bool all_keys = acl_check_unrestricted_keys(c->user, c->cmd, c->argv, c->argc, KSF_ACCESS);
    for (int j = 2; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        int left = c->argc - j - 1;
        if (!strcasecmp(a, "asc")) {
            sp->desc = false;
        } else if (!strcasecmp(a, "desc")) {
            sp->desc = true;
        } else if (!strcasecmp(a, "alpha")) {
            sp->alpha = true;
        } else if (!strcasecmp(a, "limit") && left >= 2) {
            if (!cmd_get_ll_or_reply(c, c->argv[j + 1], &sp->limit_start, NULL) ||
                !cmd_get_ll_or_reply(c, c->argv[j + 2], &sp->limit_count, NULL))
                return false;
            j += 2;
        } else if (!readonly && !strcasecmp(a, "store") && left >= 1) {
            sp->store = c->argv[++j];
        } else if (!strcasecmp(a, "by") && left >= 1) {
            sp->by = c->argv[++j]->ptr;
            sp->dontsort = strchr(sp->by, '*') == NULL;
            /* A pattern names keys of any slot: Redis 7.0 refuses it in a cluster. */
            if (!sp->dontsort && c->srv->cfg.cluster_enabled) {
                reply_error(c, "BY option of SORT denied in Cluster mode.");
                return false;
            }
            if (!sp->dontsort && !all_keys) {
                reply_error(c, "BY option of SORT denied due to insufficient ACL permissions.");
                return false;
            }
        } else if (!strcasecmp(a, "get") && left >= 1) {
            if (c->srv->cfg.cluster_enabled) {
                reply_error(c, "GET option of SORT denied in Cluster mode.");
                return false;
            }
            if (!all_keys) {
                reply_error(c, "GET option of SORT denied due to insufficient ACL permissions.");
                return false;
            }
            sp->gets[sp->ngets++] = c->argv[++j]->ptr;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- loading */

static void load_list(robj *o, sort_vec_t *vec) {
    char buf[LP_INTBUF_SIZE];
    if (o->encoding == OBJ_ENCODING_LISTPACK) {
        for (unsigned char *p = lp_first(o->ptr); p; p = lp_next(o->ptr, p)) {
            size_t len;
            const unsigned char *s = lp_get_str(p, &len, buf);
            vec_push(vec, (const char *)s, len);
        }
        return;
    }
    ql_iter_t *it = ql_iter_new(o->ptr, QL_HEAD);
    ql_entry_t e;
    while (ql_next(it, &e)) {
        if (e.str) {
            vec_push(vec, (const char *)e.str, e.len);
        } else {
            int n = snprintf(buf, sizeof(buf), "%lld", e.ival);
            vec_push(vec, buf, (size_t)n);
        }
    }
    ql_iter_free(it);
}

static void load_zset(robj *o, sort_vec_t *vec) {
    zset_cursor_t cur;
    for (zset_cursor_at_rank(&cur, o, 0, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        size_t len;
        const char *m = zset_cursor_member(&cur, &len);
        vec_push(vec, m, len);
    }
}

static void load_all(robj *o, sort_vec_t *vec) {
    if (!o) return;
    if (o->type == OBJ_LIST) load_list(o, vec);
    else if (o->type == OBJ_SET) set_type_foreach(o, vec_push_fn, vec);
    else load_zset(o, vec);
}

static void reverse(sort_vec_t *vec) {
    for (size_t i = 0, j = vec->n; i + 1 < j; i++, j--) {
        sort_item_t t = vec->v[i];
        vec->v[i] = vec->v[j - 1];
        vec->v[j - 1] = t;
    }
}

/* ---------------------------------------------------------------- sorting */

typedef struct sort_cmp_ctx {
    bool desc, alpha, by, store;
} sort_cmp_ctx_t;

static int bytes_cmp(sds a, sds b) {
    size_t la = sds_len(a), lb = sds_len(b);
    int r = memcmp(a, b, la < lb ? la : lb);
    if (r) return r;
    return la < lb ? -1 : la > lb;
}

static int item_cmp(const void *pa, const void *pb, void *arg) {
    const sort_item_t *a = pa, *b = pb;
    const sort_cmp_ctx_t *ctx = arg;
    int r;
    if (!ctx->alpha) {
        r = a->score > b->score ? 1 : a->score < b->score ? -1
                                                          : bytes_cmp(a->ele, b->ele);
    } else if (ctx->by) {
        if (!a->cmp || !b->cmp) r = a->cmp == b->cmp ? 0 : !a->cmp ? -1
                                                                   : 1;
        else r = ctx->store ? bytes_cmp(a->cmp, b->cmp) : strcoll(a->cmp, b->cmp);
    } else {
        r = ctx->store ? bytes_cmp(a->ele, b->ele) : strcoll(a->ele, b->ele);
    }
    return ctx->desc ? -r : r;
}

/* Weigh every item; false when a numeric weight is not a number. */
static bool weigh(db_t *db, const sort_spec_t *sp, sort_vec_t *vec) {
    bool ok = true;
    for (size_t i = 0; i < vec->n; i++) {
        sort_item_t *it = &vec->v[i];
        sds w = sp->by ? pattern_value(db, sp->by, it->ele) : it->ele;
        if (!w) continue;
        if (sp->alpha) {
            if (sp->by) it->cmp = w;
            continue;
        }
        char *end;
        errno = 0;
        it->score = strtod(w, &end);
        if (*end != '\0' || errno == ERANGE || isnan(it->score)) ok = false;
        if (sp->by) sds_free(w);
    }
    return ok;
}

/* ---------------------------------------------------------------- output */

static robj *list_from_ql(quicklist *ql) {
    robj *o;
    if (ql->len == 1) { /* one node: the listpack encoding a new list has */
        o = obj_create(OBJ_LIST, ql->head->lp);
        o->encoding = OBJ_ENCODING_LISTPACK;
        ql->head->lp = NULL;
        ql_free(ql);
    } else {
        o = obj_create(OBJ_LIST, ql);
        o->encoding = OBJ_ENCODING_QUICKLIST;
    }
    return o;
}

static void store_result(client_t *c, const sort_spec_t *sp, sort_vec_t *vec, long start, long end) {
    quicklist *ql = ql_new((int)c->srv->cfg.list_max_listpack_size, (int)c->srv->cfg.list_compress_depth);
    for (long j = start; j <= end; j++) {
        sds ele = vec->v[j].ele;
        if (!sp->ngets) ql_push(ql, ele, sds_len(ele), QL_TAIL);
        for (int g = 0; g < sp->ngets; g++) {
            sds v = pattern_value(c->db, sp->gets[g], ele);
            ql_push(ql, v ? v : "", v ? sds_len(v) : 0, QL_TAIL);
            if (v) sds_free(v);
        }
    }
    long long n = (long long)ql->count;
    if (n) {
        db_set_key(c->db, sp->store, list_from_ql(ql), false);
        notify_keyspace_event(c->srv, NOTIFY_LIST, "sortstore", sp->store, c->db->id);
    } else {
        ql_free(ql);
        if (db_delete(c->db, sp->store)) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", sp->store, c->db->id);
    }
    reply_ll(c, n);
}

static void reply_result(client_t *c, const sort_spec_t *sp, sort_vec_t *vec, long start, long end) {
    long rows = end - start + 1;
    reply_array_len(c, sp->ngets ? rows * sp->ngets : rows);
    for (long j = start; j <= end; j++) {
        sds ele = vec->v[j].ele;
        if (!sp->ngets) reply_bulk(c, ele, sds_len(ele));
        for (int g = 0; g < sp->ngets; g++) {
            sds v = pattern_value(c->db, sp->gets[g], ele);
            if (v) reply_bulk_sds_take(c, v);
            else reply_null(c);
        }
    }
}

static void sort_generic(client_t *c, bool readonly) {
    sort_spec_t sp;
    sort_vec_t vec = {0};
    if (!parse_or_reply(c, readonly, &sp)) goto done;
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (o && o->type != OBJ_LIST && o->type != OBJ_SET && o->type != OBJ_ZSET) {
        reply_error(c, RL_ERR_WRONGTYPE);
        goto done;
    }
    if (sp.dontsort && o && o->type == OBJ_SET && (sp.store || (c->flags & CLIENT_FAKE))) {
        /* a stored set, or a script's reply (its effects must be the same
         * on a replica), must not depend on hash order: sorted as strings */
        sp.dontsort = false;
        sp.alpha = true;
        sp.by = NULL;
    }
    load_all(o, &vec);
    /* LIMIT clamped to the vector as Redis does; an empty range is
     * start = len-1, end = len-2. */
    long len = (long)vec.n;
    long long start = sp.limit_start < 0 ? 0 : sp.limit_start > len ? len
                                                                    : sp.limit_start;
    long long count = sp.limit_count < -1 ? -1 : sp.limit_count > len ? len
                                                                      : sp.limit_count;
    long long end = count < 0 ? len - 1 : start + count - 1;
    if (start >= len) {
        start = len - 1;
        end = len - 2;
    }
    if (end >= len) end = len - 1;
    if (sp.dontsort) {
        if (sp.desc && o && o->type != OBJ_SET) reverse(&vec);
    } else {
        if (!weigh(c->db, &sp, &vec)) {
            reply_error(c, "One or more scores can't be converted into double");
            goto done;
        }
        sort_cmp_ctx_t ctx = {sp.desc, sp.alpha, sp.by != NULL, sp.store != NULL};
        if (vec.n > 1) qsort_r(vec.v, vec.n, sizeof(sort_item_t), item_cmp, &ctx);
    }
    if (sp.store) store_result(c, &sp, &vec, (long)start, (long)end);
    else reply_result(c, &sp, &vec, (long)start, (long)end);
done:
    vec_free(&vec);
    zfree(sp.gets);
}

static void cmd_sort(client_t *c) { sort_generic(c, false); }
static void cmd_sort_ro(client_t *c) { sort_generic(c, true); }

command_t sort_commands[] = {
    {"sort", cmd_sort, -2, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "generic", "Sort the elements in a list, set or sorted set", "1.0.0", NULL},
    {"sort_ro", cmd_sort_ro, -2, CMD_READONLY, 1, 1, 1, "generic", "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0", NULL},
    {0},
};
