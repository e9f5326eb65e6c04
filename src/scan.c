/* scan.c: the SCAN engine shared by SCAN, HSCAN, SSCAN and ZSCAN (scan.h).
 *
 * Called by keyspace_cmds.c and the type files with a scan_source_t; it
 * parses the options, steps the dict or walks the compact encoding, applies
 * MATCH and replies.  It knows no data type: the source's callbacks do. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "commands.h"
#include "reply.h"
#include "scan.h"
#include "util.h"
#include "zmalloc.h"

bool scan_parse_cursor_or_reply(client_t *c, robj *o, unsigned long *cursor) {
    /* strtoul's rules, as Redis: a sign, leading zeros and even an empty
     * string (cursor 0) are accepted, "-1" wraps to the largest cursor;
     * leading spaces, trailing junk and overflow are not. */
    const char *s = o->ptr;
    char *end;
    errno = 0;
    *cursor = strtoul(s, &end, 10);
    if (isspace((unsigned char)s[0]) || *end != '\0' || errno == ERANGE) {
        reply_error(c, "invalid cursor");
        return false;
    }
    return true;
}

bool scan_args_parse_or_reply(client_t *c, int cursor_arg, int opts, scan_args_t *a) {
    bool allow_type = opts & SCAN_OPT_TYPE;
    if (!scan_parse_cursor_or_reply(c, c->argv[cursor_arg], &a->cursor)) return false;
    a->count = 10;
    a->pat = NULL;
    a->patlen = 0;
    a->type = NULL;
    a->novalues = false;
    for (int j = cursor_arg + 1; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        bool more = j + 1 < c->argc;
        if (!strcasecmp(opt, "count") && more) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &a->count, NULL)) return false;
            if (a->count < 1) {
                reply_error(c, RL_ERR_SYNTAX);
                return false;
            }
        } else if (!strcasecmp(opt, "match") && more) {
            sds p = c->argv[++j]->ptr;
            bool all = sds_len(p) == 1 && p[0] == '*';
            a->pat = all ? NULL : p;
            a->patlen = all ? 0 : sds_len(p);
        } else if (allow_type && !strcasecmp(opt, "type") && more) {
            a->type = c->argv[++j]->ptr;
        } else if (!strcasecmp(opt, "novalues")) { /* Redis 7.4 */
            if (!(opts & SCAN_OPT_NOVALUES)) {
                reply_error(c, "NOVALUES option can only be used in HSCAN");
                return false;
            }
            a->novalues = true;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

bool scan_match(const scan_args_t *a, const char *s, size_t len) {
    return !a->pat || util_glob_match(a->pat, a->patlen, s, len, false);
}

void scan_reply_empty(client_t *c) {
    reply_array_len(c, 2);
    reply_bulk_cstr(c, "0");
    reply_empty_array(c);
}

/* A compact encoding: everything in one call, cursor 0. */
static void scan_compact(client_t *c, const scan_args_t *a, const scan_source_t *src) {
    reply_bulk_cstr(c, "0");
    void *slot = reply_deferred_len(c);
    long n = 0;
    const char *s;
    size_t len;
    while (src->next(src->state, &s, &len)) {
        if (scan_match(a, s, len)) n += src->emit(c, src->state, NULL, s, len);
    }
    reply_set_deferred_array_len(c, slot, n);
}

static void scan_dict(client_t *c, const scan_args_t *a, const scan_source_t *src) {
    dict_entry **des;
    size_t found;
    unsigned long cursor = dict_scan_some(src->d, a->cursor, (size_t)a->count, &des, &found);
    reply_scan_cursor(c, cursor);
    void *slot = reply_deferred_len(c);
    long n = 0;
    for (size_t i = 0; i < found; i++) {
        sds key = dict_get_key(src->d, des[i]);
        if (!scan_match(a, key, sds_len(key))) continue;
        if (src->keep && !src->keep(c, a, des[i])) continue;
        n += src->emit(c, src->state, des[i], key, sds_len(key));
    }
    reply_set_deferred_array_len(c, slot, n);
    zfree(des);
}

typedef struct gathered {
    void **v;
    size_t n, cap;
} gathered_t;

static void gather(void *priv, void *entry) {
    gathered_t *g = priv;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->v = zrealloc(g->v, g->cap * sizeof(void *));
    }
    g->v[g->n++] = entry;
}

/* A hashtable source (the keyspace): steps of one home bucket until COUNT
 * entries were gathered, or 10*COUNT steps were taken (so a sparse table
 * cannot make one call walk everything).  The entries stay valid while
 * replying: nothing here modifies the table. */
static void scan_ht(client_t *c, const scan_args_t *a, const scan_source_t *src) {
    gathered_t g = {NULL, 0, 0};
    size_t cursor = a->cursor, want = (size_t)a->count, steps = 0;
    do {
        cursor = ht_scan(src->t, cursor, gather, &g);
        steps++;
    } while (cursor && g.n < want && steps < want * 10);
    reply_scan_cursor(c, cursor);
    void *slot = reply_deferred_len(c);
    long n = 0;
    for (size_t i = 0; i < g.n; i++) {
        sds key = src->t_name(g.v[i]);
        if (!scan_match(a, key, sds_len(key))) continue;
        if (src->t_keep && !src->t_keep(c, a, g.v[i], src->state)) continue;
        if (src->t_emit) {
            n += src->t_emit(c, g.v[i]);
        } else {
            reply_bulk(c, key, sds_len(key));
            n++;
        }
    }
    reply_set_deferred_array_len(c, slot, n);
    zfree(g.v);
}

void scan_reply(client_t *c, const scan_args_t *a, const scan_source_t *src) {
    reply_array_len(c, 2);
    if (src->t) scan_ht(c, a, src);
    else if (src->d) scan_dict(c, a, src);
    else scan_compact(c, a, src);
}
