/* tracking.c: client-side caching (see tracking.h).
 *
 * State:
 *   table     key name (sds) -> id_set_t of client ids that read the key
 *             while tracking; an entry lives until the key changes (one
 *             invalidation per reader, then the entry goes), a flush, or the
 *             tracking-table-max-keys bound evicts it.
 *   prefixes  BCAST prefix (sds) -> bcast_t: the subscribed client ids and
 *             the keys changed under the prefix since the last before-sleep
 *             (key -> id of the client that changed it, for NOLOOP).
 *   by_id     id -> client for every client with tracking on, so a table
 *             entry's ids resolve in O(1); a stale id (client gone or
 *             tracking off) is skipped, as in Redis.
 *   pending   keys the executing client changed that it tracks itself:
 *             their invalidations go after its reply (NULL entry = flush).
 * Per client (client_t.tracking): mode flags, the redirect id, the
 * prefixes (sorted, as TRACKINGINFO lists them). */
#include "tracking.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "command_meta.h"
#include "commands.h"
#include "dict.h"
#include "evloop.h"
#include "reply.h"
#include "zmalloc.h"

#define TRK_ON (1u << 0)
#define TRK_BCAST (1u << 1)
#define TRK_OPTIN (1u << 2)
#define TRK_OPTOUT (1u << 3)
#define TRK_CACHING (1u << 4) /* CLIENT CACHING yes/no given for the next command */
#define TRK_NOLOOP (1u << 5)
#define TRK_BROKEN_REDIR (1u << 6)

struct tracking_client {
    unsigned flags;    /* TRK_* */
    uint64_t redirect; /* client id, 0 = none */
    sds *prefixes;     /* BCAST prefixes, sorted */
    int nprefixes;
};

typedef struct id_set {
    uint32_t n, cap;
    uint64_t ids[];
} id_set_t;

typedef struct bcast {
    dict *clients; /* id -> NULL */
    dict *keys;    /* changed key (sds) -> id of the changer (u64) */
} bcast_t;

typedef struct pending {
    sds *keys; /* NULL element: a flush */
    size_t n, cap;
} pending_t;

struct tracking {
    dict *table;
    size_t total_items; /* ids over all table entries */
    dict *prefixes;
    dict *by_id;
    pending_t pending;
    long long clients;     /* clients with tracking on */
    unsigned limit_rounds; /* before-sleeps spent over the max-keys bound */
};

/* ------------------------------------------------------------ tables */

static uint64_t id_hash(const void *key) {
    uint64_t id = (uint64_t)(uintptr_t)key;
    return dict_hash_bytes(&id, sizeof(id));
}
static bool id_eq(const void *a, const void *b) { return a == b; }
static void free_id_set(void *v) { zfree(v); }
static void free_bcast(void *v) {
    bcast_t *b = v;
    dict_release(b->clients);
    dict_release(b->keys);
    zfree(b);
}

static dict_type table_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, free_id_set, false};
static dict_type prefix_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, free_bcast, false};
static dict_type id_type = {id_hash, id_eq, NULL, NULL, NULL, false};
static dict_type bkeys_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};

#define ID_KEY(id) ((void *)(uintptr_t)(id))

tracking_t *tracking_create(void) {
    tracking_t *t = zcalloc(sizeof(*t));
    t->table = dict_create(&table_type);
    t->prefixes = dict_create(&prefix_type);
    t->by_id = dict_create(&id_type);
    return t;
}

static void pending_clear(pending_t *p) {
    for (size_t i = 0; i < p->n; i++) sds_free(p->keys[i]);
    p->n = 0;
}

void tracking_free(tracking_t *t) {
    if (!t) return;
    dict_release(t->table);
    dict_release(t->prefixes);
    dict_release(t->by_id);
    pending_clear(&t->pending);
    zfree(t->pending.keys);
    zfree(t);
}

static unsigned flags_of(const client_t *c) { return c->tracking ? c->tracking->flags : 0; }

bool tracking_client_enabled(const client_t *c) { return flags_of(c) & TRK_ON; }

/* Any client by id (redirect targets need not track themselves). */
static client_t *client_by_id(server_t *srv, uint64_t id) {
    client_t *c = dict_fetch_value(srv->tracking->by_id, ID_KEY(id));
    if (c) return c;
    for (c = srv->clients_head; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

/* ------------------------------------------------------------ messages */

/* A message is a push on the connection it goes to (reply_push_begin). */
/* Header of an invalidation for c (or the client it redirects to); false
 * when nothing can be sent (RESP2 without a subscribed redirect target).
 * On success *to is the connection the value must follow on, left in
 * pushing state (*was for message_done). */
static bool message_header_pushing(client_t *c, client_t **to, unsigned *was) {
    struct tracking_client *tc = c->tracking;
    client_t *dst = c;
    bool redirected = false;
    if (tc->redirect) {
        dst = client_by_id(c->srv, tc->redirect);
        if (!dst) {
            /* Tell the tracking client (RESP3) that its target is gone. */
            tc->flags |= TRK_BROKEN_REDIR;
            if (c->resp > 2) {
                *was = reply_push_begin(c);
                reply_push_len(c, 2);
                reply_bulk(c, "tracking-redir-broken", 21);
                reply_ll(c, (long long)tc->redirect);
                reply_push_end(c, *was);
            }
            return false;
        }
        redirected = true;
    }
    if (dst->resp > 2) {
        *was = reply_push_begin(dst);
        reply_push_len(dst, 2);
        reply_bulk(dst, "invalidate", 10);
    } else if (redirected && (dst->flags & CLIENT_PUBSUB)) {
        *was = reply_push_begin(dst);
        reply_array_len(dst, 3);
        reply_bulk(dst, "message", 7);
        reply_bulk(dst, "__redis__:invalidate", 20);
    } else {
        return false;
    }
    *to = dst;
    return true;
}

static void send_key(client_t *c, const char *key, size_t len) {
    client_t *dst;
    unsigned was = 0;
    if (!message_header_pushing(c, &dst, &was)) return;
    reply_array_len(dst, 1);
    reply_bulk(dst, key, len);
    reply_push_end(dst, was);
}

/* A flush: the null of the tracking client's protocol, as Redis sends it. */
static void send_flush(client_t *c) {
    client_t *dst;
    unsigned was = 0;
    if (!message_header_pushing(c, &dst, &was)) return;
    if (c->resp > 2) reply_raw(dst, "_\r\n", 3);
    else reply_raw(dst, "$-1\r\n", 5);
    reply_push_end(dst, was);
}

static void pending_add(pending_t *p, const char *key, size_t len, bool flush) {
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 8;
        p->keys = zrealloc(p->keys, p->cap * sizeof(sds));
    }
    p->keys[p->n++] = flush ? NULL : sds_newlen(key, len);
}

void tracking_flush_pending(server_t *srv) {
    tracking_t *t = srv->tracking;
    if (!t->pending.n) return;
    client_t *c = srv->pending_tracking_client;
    srv->pending_tracking_client = NULL;
    for (size_t i = 0; c && i < t->pending.n; i++) {
        if (!(flags_of(c) & TRK_ON)) break;
        if (t->pending.keys[i]) send_key(c, t->pending.keys[i], sds_len(t->pending.keys[i]));
        else send_flush(c);
    }
    pending_clear(&t->pending);
}

/* The client whose command changes keys: a script's caller, not the
 * script's own client (NOLOOP and the deferral below are the caller's, as
 * in Redis). */
static client_t *changer_client(const server_t *srv) {
    return srv->top_client ? srv->top_client : srv->current_client;
}

/* The executing client's own invalidations wait for its reply. */
static bool defer_for_current(server_t *srv, client_t *target, const char *key, size_t len, bool flush) {
    if (target != changer_client(srv)) return false;
    srv->pending_tracking_client = target;
    pending_add(&srv->tracking->pending, key, len, flush);
    return true;
}

/* ------------------------------------------------------------ invalidation */

static void remember_for_bcast(server_t *srv, const sds key) {
    tracking_t *t = srv->tracking;
    dict_iter it;
    dict_entry *de;
    client_t *by = changer_client(srv);
    uint64_t changer = by ? by->id : 0;
    dict_iter_init(&it, t->prefixes, false);
    while ((de = dict_next(&it))) {
        sds prefix = dict_get_key(t->prefixes, de);
        if (sds_len(prefix) > sds_len(key) || memcmp(prefix, key, sds_len(prefix))) continue;
        bcast_t *b = dict_get_val(de);
        dict_entry *existing;
        dict_entry *ke = dict_add_raw(b->keys, sds_dup(key), &existing);
        if (!ke) ke = existing;
        ke->v.u64 = changer;
    }
    dict_iter_release(&it);
    /* sent at the next before-sleep, which a key expired by the cron (no
     * command running) must ask for, else it waits for the next command */
    evloop_request_before_sleep(srv->loop);
}

static void invalidate(server_t *srv, const char *key, size_t len, bool bcast) {
    tracking_t *t = srv->tracking;
    sds k = sds_newlen(key, len);
    if (bcast && dict_size(t->prefixes)) remember_for_bcast(srv, k);
    dict_entry *de = dict_unlink(t->table, k);
    sds_free(k);
    if (!de) return;
    id_set_t *ids = dict_get_val(de);
    for (uint32_t i = 0; i < ids->n; i++) {
        client_t *target = dict_fetch_value(t->by_id, ID_KEY(ids->ids[i]));
        /* Gone, tracking off, or switched to BCAST since it read the key. */
        if (!target || (flags_of(target) & TRK_BCAST)) continue;
        if ((flags_of(target) & TRK_NOLOOP) && target == changer_client(srv)) continue;
        if (!defer_for_current(srv, target, key, len, false)) send_key(target, key, len);
    }
    t->total_items -= ids->n;
    dict_free_unlinked(t->table, de);
}

void tracking_invalidate_key(server_t *srv, const sds key) {
    tracking_t *t = srv->tracking;
    if (!dict_size(t->table) && !dict_size(t->prefixes)) return;
    invalidate(srv, key, sds_len(key), true);
}

void tracking_on_flush(server_t *srv) {
    tracking_t *t = srv->tracking;
    if (t->clients) {
        for (client_t *c = srv->clients_head; c; c = c->next) {
            if (!(flags_of(c) & TRK_ON)) continue;
            if (!defer_for_current(srv, c, NULL, 0, true)) send_flush(c);
        }
    }
    dict_empty(t->table);
    t->total_items = 0;
}

/* ------------------------------------------------------------ reads */

static void remember_key(tracking_t *t, uint64_t id, sds key) {
    dict_entry *de = dict_find(t->table, key);
    id_set_t *ids;
    if (!de) {
        ids = zmalloc(sizeof(*ids) + 2 * sizeof(uint64_t));
        ids->n = 0;
        ids->cap = 2;
        dict_add(t->table, sds_dup(key), ids);
    } else {
        ids = dict_get_val(de);
        for (uint32_t i = 0; i < ids->n; i++)
            if (ids->ids[i] == id) return;
        if (ids->n == ids->cap) {
            ids->cap *= 2;
            ids = zrealloc(ids, sizeof(*ids) + ids->cap * sizeof(uint64_t));
            de->v.ptr = ids;
        }
    }
    ids->ids[ids->n++] = id;
    t->total_items++;
}

/* EVAL_RO, EVALSHA_RO, FCALL_RO: tracked only through what they read. */
static bool is_script_ro(const command_t *cmd) {
    return !strcmp(cmd->name, "eval_ro") || !strcmp(cmd->name, "evalsha_ro") || !strcmp(cmd->name, "fcall_ro");
}

void tracking_after_command(client_t *c, const command_t *cmd) {
    /* A script's read makes its caller track the keys the script declared
     * (Redis's rule; the script's own keys are not tracked). */
    client_t *top = c->srv->top_client;
    if (top && c != top && (c->flags & CLIENT_FAKE)) {
        if (!(cmd->flags & CMD_READONLY) || !top->cmd) return;
        c = top;
        cmd = top->cmd;
    } else if (!(cmd->flags & CMD_READONLY) || is_script_ro(cmd)) {
        return;
    }
    unsigned f = flags_of(c);
    if (!(f & TRK_ON) || (f & TRK_BCAST) || (cmd->flags & CMD_PUBSUB)) return;
    /* OPTIN tracks only after CACHING yes, OPTOUT all but after CACHING no. */
    if (((f & TRK_OPTIN) && !(f & TRK_CACHING)) || ((f & TRK_OPTOUT) && (f & TRK_CACHING))) return;
    cmd_key_ref_t small[16], *refs = small;
    int n = cmd_meta_get_keys(cmd, c->argv, c->argc, refs, 16);
    if (n > 16) {
        refs = zmalloc(sizeof(*refs) * (size_t)n);
        n = cmd_meta_get_keys(cmd, c->argv, c->argc, refs, n);
    }
    for (int i = 0; i < n; i++) remember_key(c->srv->tracking, c->id, c->argv[refs[i].pos]->ptr);
    if (refs != small) zfree(refs);
}

void tracking_command_done(client_t *c, const command_t *cmd) {
    if (!c->tracking || c->mstate) return;
    if (cmd && cmd->parent && !strcmp(cmd->parent->name, "client")) return;
    c->tracking->flags &= ~TRK_CACHING;
}

/* ------------------------------------------------------------ before sleep */

static int cmp_sds(const void *a, const void *b) {
    sds x = *(sds const *)a, y = *(sds const *)b;
    size_t lx = sds_len(x), ly = sds_len(y);
    int r = memcmp(x, y, lx < ly ? lx : ly);
    return r ? r : (lx > ly) - (lx < ly);
}

/* One prefix's changed keys to each of its subscribers (NOLOOP ones skip
 * the keys they changed themselves). */
static void broadcast_prefix(server_t *srv, bcast_t *b) {
    size_t n = dict_size(b->keys), i = 0;
    sds *keys = zmalloc(n * sizeof(sds));
    uint64_t *by = zmalloc(n * sizeof(uint64_t));
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, b->keys, false);
    while ((de = dict_next(&it))) keys[i++] = dict_get_key(b->keys, de);
    dict_iter_release(&it);
    qsort(keys, n, sizeof(sds), cmp_sds);
    for (i = 0; i < n; i++) by[i] = dict_find(b->keys, keys[i])->v.u64;
    dict_iter_init(&it, b->clients, false);
    while ((de = dict_next(&it))) {
        client_t *c = dict_fetch_value(srv->tracking->by_id, dict_get_key(b->clients, de));
        if (!c) continue;
        bool noloop = flags_of(c) & TRK_NOLOOP;
        size_t count = 0;
        for (i = 0; i < n; i++) count += !(noloop && by[i] == c->id);
        client_t *dst;
        unsigned was = 0;
        if (!count || !message_header_pushing(c, &dst, &was)) continue;
        reply_array_len(dst, (long)count);
        for (i = 0; i < n; i++)
            if (!(noloop && by[i] == c->id)) reply_bulk(dst, keys[i], sds_len(keys[i]));
        reply_push_end(dst, was);
    }
    dict_iter_release(&it);
    zfree(keys);
    zfree(by);
    dict_empty(b->keys);
}

/* Over tracking-table-max-keys: invalidate random entries, with more
 * effort each cron tick the table stays over the bound. */
void tracking_cron(server_t *srv) {
    tracking_t *t = srv->tracking;
    size_t max = (size_t)srv->cfg.tracking_table_max_keys;
    if (!max || dict_size(t->table) <= max) {
        t->limit_rounds = 0;
        return;
    }
    int effort = 100 * (int)(t->limit_rounds + 1);
    while (effort-- > 0 && dict_size(t->table) > max) {
        dict_entry *de = dict_random_entry(t->table);
        sds key = sds_dup(dict_get_key(t->table, de));
        invalidate(srv, key, sds_len(key), false);
        sds_free(key);
    }
    if (dict_size(t->table) > max) t->limit_rounds++;
    else t->limit_rounds = 0;
}

/* Prefixes are served in byte order, as Redis walks its radix tree. */
void tracking_before_sleep(server_t *srv) {
    tracking_t *t = srv->tracking;
    if (!dict_size(t->prefixes)) return;
    size_t n = 0;
    sds *busy = zmalloc(dict_size(t->prefixes) * sizeof(sds));
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, t->prefixes, false);
    while ((de = dict_next(&it)))
        if (dict_size(((bcast_t *)dict_get_val(de))->keys)) busy[n++] = dict_get_key(t->prefixes, de);
    dict_iter_release(&it);
    qsort(busy, n, sizeof(sds), cmp_sds);
    for (size_t i = 0; i < n; i++) broadcast_prefix(srv, dict_fetch_value(t->prefixes, busy[i]));
    zfree(busy);
}

/* ------------------------------------------------------------ on / off */

static void bcast_unsubscribe(client_t *c) {
    tracking_t *t = c->srv->tracking;
    struct tracking_client *tc = c->tracking;
    for (int i = 0; i < tc->nprefixes; i++) {
        dict_entry *de = dict_find(t->prefixes, tc->prefixes[i]);
        if (de) {
            bcast_t *b = dict_get_val(de);
            dict_delete(b->clients, ID_KEY(c->id));
            if (!dict_size(b->clients)) dict_delete(t->prefixes, tc->prefixes[i]);
        }
        sds_free(tc->prefixes[i]);
    }
    zfree(tc->prefixes);
    tc->prefixes = NULL;
    tc->nprefixes = 0;
}

static void disable(client_t *c) {
    struct tracking_client *tc = c->tracking;
    if (!tc) return;
    if (tc->flags & TRK_BCAST) bcast_unsubscribe(c);
    if (tc->flags & TRK_ON) {
        c->srv->tracking->clients--;
        dict_delete(c->srv->tracking->by_id, ID_KEY(c->id));
        tc->flags = 0;
    }
}

void tracking_client_freed(client_t *c) {
    if (!c->tracking) return;
    disable(c);
    if (c->srv->pending_tracking_client == c) c->srv->pending_tracking_client = NULL;
    zfree(c->tracking);
    c->tracking = NULL;
}

static bool prefix_overlap(const char *a, size_t la, const char *b, size_t lb) {
    return memcmp(a, b, la < lb ? la : lb) == 0;
}

static void bcast_subscribe(client_t *c, const char *p, size_t len) {
    tracking_t *t = c->srv->tracking;
    struct tracking_client *tc = c->tracking;
    sds prefix = sds_newlen(p, len);
    for (int i = 0; i < tc->nprefixes; i++) {
        if (!cmp_sds(&tc->prefixes[i], &prefix)) {
            sds_free(prefix);
            return;
        }
    }
    dict_entry *de = dict_find(t->prefixes, prefix);
    bcast_t *b;
    if (de) {
        b = dict_get_val(de);
    } else {
        b = zmalloc(sizeof(*b));
        b->clients = dict_create(&id_type);
        b->keys = dict_create(&bkeys_type);
        dict_add(t->prefixes, sds_dup(prefix), b);
    }
    dict_add(b->clients, ID_KEY(c->id), NULL);
    tc->prefixes = zrealloc(tc->prefixes, sizeof(sds) * (size_t)(tc->nprefixes + 1));
    tc->prefixes[tc->nprefixes++] = prefix;
    qsort(tc->prefixes, (size_t)tc->nprefixes, sizeof(sds), cmp_sds);
}

static void enable(client_t *c, uint64_t redirect, unsigned options, robj **prefixes, int nprefixes) {
    if (!c->tracking) c->tracking = zcalloc(sizeof(*c->tracking));
    struct tracking_client *tc = c->tracking;
    if (!(tc->flags & TRK_ON)) {
        c->srv->tracking->clients++;
        dict_add(c->srv->tracking->by_id, ID_KEY(c->id), c);
    }
    tc->flags |= TRK_ON;
    tc->flags &= ~(TRK_BROKEN_REDIR | TRK_BCAST | TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP);
    tc->redirect = redirect;
    if (options & TRK_BCAST) {
        tc->flags |= TRK_BCAST;
        if (nprefixes == 0) bcast_subscribe(c, "", 0);
        for (int i = 0; i < nprefixes; i++) bcast_subscribe(c, prefixes[i]->ptr, sds_len(prefixes[i]->ptr));
    }
    tc->flags |= options & (TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP);
}

/* ------------------------------------------------------------ commands */

/* New prefixes must not overlap the client's nor each other. */
static bool prefixes_ok_or_reply(client_t *c, robj **p, int n) {
    struct tracking_client *tc = c->tracking;
    for (int i = 0; i < n; i++) {
        sds a = p[i]->ptr;
        for (int j = 0; tc && j < tc->nprefixes; j++) {
            if (prefix_overlap(tc->prefixes[j], sds_len(tc->prefixes[j]), a, sds_len(a))) {
                reply_error(c, "Prefix '%s' overlaps with an existing prefix '%s'. Prefixes for a single client "
                               "must not overlap.",
                            a, tc->prefixes[j]);
                return false;
            }
        }
        for (int j = i + 1; j < n; j++) {
            sds b = p[j]->ptr;
            if (prefix_overlap(a, sds_len(a), b, sds_len(b))) {
                reply_error(c, "Prefix '%s' overlaps with another provided prefix '%s'. Prefixes for a single "
                               "client must not overlap.",
                            a, b);
                return false;
            }
        }
    }
    return true;
}

/* The ON-mode checks, in Redis's order. */
static bool on_options_ok_or_reply(client_t *c, unsigned options, robj **prefixes, int n) {
    unsigned cur = flags_of(c);
    if (!(options & TRK_BCAST) && n) {
        reply_error(c, "PREFIX option requires BCAST mode to be enabled");
        return false;
    }
    if ((cur & TRK_ON) && !!(cur & TRK_BCAST) != !!(options & TRK_BCAST)) {
        reply_error(c, "You can't switch BCAST mode on/off before disabling tracking for this client, and then "
                       "re-enabling it with a different mode.");
        return false;
    }
    if ((options & TRK_BCAST) && (options & (TRK_OPTIN | TRK_OPTOUT))) {
        reply_error(c, "OPTIN and OPTOUT are not compatible with BCAST");
        return false;
    }
    if ((options & TRK_OPTIN) && (options & TRK_OPTOUT)) {
        reply_error(c, "You can't specify both OPTIN mode and OPTOUT mode");
        return false;
    }
    if (((options & TRK_OPTIN) && (cur & TRK_OPTOUT)) || ((options & TRK_OPTOUT) && (cur & TRK_OPTIN))) {
        reply_error(c, "You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
                       "re-enabling it with a different mode.");
        return false;
    }
    return !(options & TRK_BCAST) || prefixes_ok_or_reply(c, prefixes, n);
}

/* CLIENT TRACKING on|off [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN]
 * [OPTOUT] [NOLOOP] */
void cmd_client_tracking(client_t *c) {
    long long redir = 0;
    unsigned options = 0;
    robj **prefixes = zmalloc(sizeof(robj *) * (size_t)c->argc);
    int nprefixes = 0;
    for (int j = 3; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        bool more = j < c->argc - 1;
        if (!strcasecmp(a, "redirect") && more) {
            j++;
            if (redir != 0) {
                reply_error(c, "A client can only redirect to a single other client");
                goto done;
            }
            if (!cmd_get_ll_or_reply(c, c->argv[j], &redir, NULL)) goto done;
            if (!client_by_id(c->srv, (uint64_t)redir)) {
                reply_error(c, "The client ID you want redirect to does not exist");
                goto done;
            }
        } else if (!strcasecmp(a, "bcast")) options |= TRK_BCAST;
        else if (!strcasecmp(a, "optin")) options |= TRK_OPTIN;
        else if (!strcasecmp(a, "optout")) options |= TRK_OPTOUT;
        else if (!strcasecmp(a, "noloop")) options |= TRK_NOLOOP;
        else if (!strcasecmp(a, "prefix") && more) prefixes[nprefixes++] = c->argv[++j];
        else {
            reply_error(c, RL_ERR_SYNTAX);
            goto done;
        }
    }
    if (!strcasecmp(c->argv[2]->ptr, "on")) {
        if (!on_options_ok_or_reply(c, options, prefixes, nprefixes)) goto done;
        enable(c, (uint64_t)redir, options, prefixes, nprefixes);
    } else if (!strcasecmp(c->argv[2]->ptr, "off")) {
        disable(c);
    } else {
        reply_error(c, RL_ERR_SYNTAX);
        goto done;
    }
    reply_ok(c);
done:
    zfree(prefixes);
}

void cmd_client_caching(client_t *c) {
    unsigned f = flags_of(c);
    if (!(f & TRK_ON)) {
        reply_error(c, "CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                       "OPTOUT mode enabled");
        return;
    }
    const char *opt = c->argv[2]->ptr;
    if (!strcasecmp(opt, "yes")) {
        if (!(f & TRK_OPTIN)) {
            reply_error(c, "CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (!strcasecmp(opt, "no")) {
        if (!(f & TRK_OPTOUT)) {
            reply_error(c, "CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    c->tracking->flags |= TRK_CACHING;
    reply_ok(c);
}

long long tracking_client_redirect(const client_t *c) {
    return (flags_of(c) & TRK_ON) ? (long long)c->tracking->redirect : -1;
}

void cmd_client_getredir(client_t *c) { reply_ll(c, tracking_client_redirect(c)); }

void cmd_client_trackinginfo(client_t *c) {
    unsigned f = flags_of(c);
    reply_map_len(c, 3);
    reply_bulk_cstr(c, "flags");
    const char *names[8];
    int n = 0;
    names[n++] = (f & TRK_ON) ? "on" : "off";
    if (f & TRK_BCAST) names[n++] = "bcast";
    if (f & TRK_OPTIN) {
        names[n++] = "optin";
        if (f & TRK_CACHING) names[n++] = "caching-yes";
    }
    if (f & TRK_OPTOUT) {
        names[n++] = "optout";
        if (f & TRK_CACHING) names[n++] = "caching-no";
    }
    if (f & TRK_NOLOOP) names[n++] = "noloop";
    if (f & TRK_BROKEN_REDIR) names[n++] = "broken_redirect";
    reply_set_len(c, n);
    for (int i = 0; i < n; i++) reply_bulk_cstr(c, names[i]);
    reply_bulk_cstr(c, "redirect");
    reply_ll(c, tracking_client_redirect(c));
    reply_bulk_cstr(c, "prefixes");
    int np = c->tracking ? c->tracking->nprefixes : 0;
    reply_array_len(c, np);
    for (int i = 0; i < np; i++) reply_bulk(c, c->tracking->prefixes[i], sds_len(c->tracking->prefixes[i]));
}

/* ------------------------------------------------------------ introspection */

int tracking_client_flag_letters(const client_t *c, char *buf, int len) {
    unsigned f = flags_of(c);
    if (f & TRK_ON) buf[len++] = 't';
    if (f & TRK_BROKEN_REDIR) buf[len++] = 'R';
    if (f & TRK_BCAST) buf[len++] = 'B';
    return len;
}

long long tracking_clients(const server_t *srv) { return srv->tracking->clients; }
long long tracking_total_keys(const server_t *srv) { return (long long)dict_size(srv->tracking->table); }
long long tracking_total_items(const server_t *srv) { return (long long)srv->tracking->total_items; }
long long tracking_total_prefixes(const server_t *srv) { return (long long)dict_size(srv->tracking->prefixes); }
