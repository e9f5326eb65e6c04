/* acl.c: the ACL registry (see acl.h): users by name, the default user,
 * authentication, the permission check before commands, the ACL log, and
 * users from the config file or the aclfile.
 *
 * The check is on every command's path, so it is built to cost nothing for
 * the common case: a user whose only selector allows every command, key
 * and channel (the default user unless restricted) is let through on one
 * flag.  Otherwise each selector is tried in turn; the keys are extracted
 * once (cmd_meta_get_keys) and shared by the selectors.
 *
 * Changes to a user follow Redis 7.0: ACL SETUSER edits the user in place
 * (its clients keep running under the new rules; pub/sub clients whose
 * channels were revoked are closed), ACL DELUSER and ACL LOAD close every
 * client of a user that goes away. */
#include "acl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "acl_user.h"
#include "command_meta.h"
#include "log.h"
#include "pubsub.h"
#include "rax.h"
#include "reply.h"
#include "rl_assert.h"
#include "sha256.h"
#include "util.h"
#include "zmalloc.h"

/* Denials within this many ms of an equal one bump its count instead. */
#define ACL_LOG_GROUPING_MS 60000
/* How many recent entries are compared with a new one. */
#define ACL_LOG_SCAN 10

typedef struct acl_log_entry {
    long long count; /* denials merged into this entry */
    int reason;      /* ACL_DENIED_* */
    int ctx;         /* ACL_CTX_* */
    sds object;      /* command, key, channel or user name */
    sds username;
    long long ctime_ms;   /* last update (unix ms): timestamp-last-updated */
    long long created_ms; /* unix ms of the first denial: timestamp-created */
    long long entry_id;   /* ids count up from 0 for the process's life; RESET keeps counting */
    sds cinfo;            /* CLIENT INFO text of the last client */
    struct acl_log_entry *next, *prev;
} acl_log_entry_t;

struct acl {
    rax_t *users;                         /* name -> acl_user_t *, in name order */
    acl_user_t *default_user;             /* also in users; never freed before acl_free */
    acl_log_entry_t *log_head, *log_tail; /* newest first */
    long log_len;
    long long log_next_id; /* entry-id of the next new entry (7.2+) */
    acl_stats_t stats;
};

static void acl_log_add(client_t *c, int reason, int ctx, const char *username, const char *object, size_t objlen);

/* ------------------------------------------------------------ users */

static acl_user_t *find_user(const acl_t *a, const char *name, size_t len) {
    void *u;
    return rax_find(a->users, (const unsigned char *)name, len, &u) ? u : NULL;
}

static acl_user_t *new_default_user(void) {
    acl_user_t *u = acl_user_new("default", 7);
    acl_user_set_rule(u, "+@all", 5);
    acl_user_set_rule(u, "~*", 2);
    acl_user_set_rule(u, "&*", 2);
    acl_user_set_rule(u, "on", 2);
    acl_user_set_rule(u, "nopass", 6);
    return u;
}

void acl_update_default_password(server_t *srv, const sds pass) {
    acl_user_t *d = srv->acl->default_user;
    acl_user_set_rule(d, "resetpass", 9);
    if (pass && sds_len(pass)) {
        sds op = sds_catsds(sds_new(">"), pass);
        acl_user_set_rule(d, op, sds_len(op));
        sds_free(op);
    } else {
        acl_user_set_rule(d, "nopass", 6);
    }
}

void acl_client_init(client_t *c) {
    acl_user_t *d = c->srv->acl->default_user;
    c->user = d;
    if ((d->flags & ACL_USER_NOPASS) && !(d->flags & ACL_USER_DISABLED)) c->flags |= CLIENT_AUTHENTICATED;
}

bool acl_default_nopass(const server_t *srv) { return srv->acl->default_user->flags & ACL_USER_NOPASS; }

bool acl_auth_required(const client_t *c) {
    if (c->flags & CLIENT_AUTHENTICATED) return false;
    const acl_user_t *d = c->srv->acl->default_user;
    return !(d->flags & ACL_USER_NOPASS) || (d->flags & ACL_USER_DISABLED);
}

bool acl_client_skips_sanitize(const client_t *c) { return c->user && (c->user->flags & ACL_USER_SANITIZE_SKIP); }

const char *acl_client_username(const client_t *c) { return c->user ? c->user->name : "default"; }

/* Close every client of u (it is being deleted or replaced): they fall
 * back to the default user, unauthenticated, until they are gone.  The
 * client running the command is closed once its reply is out. */
static void kill_clients_of(server_t *srv, acl_user_t *u) {
    for (client_t *c = srv->clients_head; c; c = c->next) {
        if (c->user != u) continue;
        c->user = srv->acl->default_user;
        c->flags &= ~CLIENT_AUTHENTICATED;
        if (c == srv->current_client) c->flags |= CLIENT_CLOSE_AFTER_COMMAND;
        else conn_close_async(c);
    }
}

/* ------------------------------------------------------------ auth */

/* Compare two hex digests without an early exit. */
static bool same_hash(const char *a, const char *b) {
    unsigned diff = 0;
    for (int i = 0; i < SHA256_HEX_LEN; i++) diff |= (unsigned char)a[i] ^ (unsigned char)b[i];
    return diff == 0;
}

static bool credentials_ok(const acl_user_t *u, const robj *password) {
    if (!u || (u->flags & ACL_USER_DISABLED)) return false;
    if (u->flags & ACL_USER_NOPASS) return true;
    char hash[SHA256_HEX_LEN + 1];
    sha256_hex(password->ptr, sds_len(password->ptr), hash);
    bool ok = false;
    /* Every stored hash is compared, so the time says nothing about which
     * one (if any) matched. */
    for (int i = 0; i < u->npasswords; i++) ok |= same_hash(hash, u->passwords[i]);
    return ok;
}

bool acl_authenticate(client_t *c, robj *username, robj *password) {
    acl_user_t *u = find_user(c->srv->acl, username->ptr, sds_len(username->ptr));
    if (credentials_ok(u, password)) {
        c->user = u;
        c->flags |= CLIENT_AUTHENTICATED;
        return true;
    }
    /* The object is the command as typed ("AUTH", "hello"). */
    sds cmdname = c->argv[0]->ptr;
    acl_log_add(c, ACL_DENIED_AUTH, c->mstate ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL, username->ptr, cmdname,
                sds_len(cmdname));
    return false;
}

/* ------------------------------------------------------------ checks */

/* One selector's verdicts on a command, a key and a channel. */

static bool selector_allows_cmd(const acl_selector_t *s, const command_t *cmd, robj **argv, int argc) {
    if ((s->flags & ACL_SEL_ALLCOMMANDS) || (cmd->flags & CMD_NO_AUTH)) return true;
    int id = cmd->acl_id;
    if (acl_sel_bit(s, id)) return true;
    /* Blocked, unless this first argument was allowed ("+select|0"). */
    if (argc < 2 || !s->firstargs || !s->firstargs[id]) return false;
    int idx = cmd->parent ? 2 : 1;
    if (idx >= argc) return false;
    for (sds *a = s->firstargs[id]; *a; a++)
        if (!strcasecmp(argv[idx]->ptr, *a)) return true;
    return false;
}

/* Key-spec flags to the permission they need: reading the value needs R;
 * inserting, deleting or updating needs W. */
static unsigned needed_perm(unsigned ksf) {
    unsigned p = 0;
    if (ksf & KSF_ACCESS) p |= ACL_KEY_READ;
    if (ksf & (KSF_INSERT | KSF_DELETE | KSF_UPDATE)) p |= ACL_KEY_WRITE;
    return p;
}

static bool selector_allows_key(const acl_selector_t *s, const char *key, size_t len, unsigned ksf_flags) {
    if (s->flags & ACL_SEL_ALLKEYS) return true;
    unsigned need = needed_perm(ksf_flags);
    for (int i = 0; i < s->nkeys; i++) {
        const acl_keypat_t *k = &s->keys[i];
        if ((k->perm & need) != need) continue;
        bool hit;
        switch (k->kind) {
            case ACL_PAT_EXACT: hit = sds_len(k->pattern) == len && !memcmp(k->pattern, key, len); break;
            case ACL_PAT_PREFIX: hit = len >= k->prefix_len && !memcmp(k->pattern, key, k->prefix_len); break;
            default: hit = util_glob_match(k->pattern, sds_len(k->pattern), key, len, false); break;
        }
        rl_assert_internal(hit == util_glob_match(k->pattern, sds_len(k->pattern), key, len, false));
        if (hit) return true;
    }
    return false;
}

static bool selector_all_keys(const acl_selector_t *s, unsigned ksf_flags) {
    if (s->flags & ACL_SEL_ALLKEYS) return true;
    unsigned need = needed_perm(ksf_flags);
    for (int i = 0; i < s->nkeys; i++)
        if ((s->keys[i].perm & need) == need && !strcmp(s->keys[i].pattern, "*")) return true;
    return false;
}

static bool selector_allows_channel(const acl_selector_t *s, const char *chan, size_t len, bool is_pattern) {
    if (s->flags & ACL_SEL_ALLCHANNELS) return true;
    for (int i = 0; i < s->nchannels; i++) {
        sds p = s->channels[i];
        if (is_pattern ? (sds_len(p) == len && !memcmp(p, chan, len))
                       : util_glob_match(p, sds_len(p), chan, len, false))
            return true;
    }
    return false;
}

/* Keys of one command, extracted once for all selectors. */
typedef struct key_cache {
    bool ready;
    int n;
    cmd_key_ref_t *refs, local[8];
} key_cache_t;

/* A plain range spec, walked as cmd_meta_get_keys walks it; false if the
 * keys do not fit in out (the caller then asks the general extractor). */
static bool plain_range_keys(const acl_cmd_info_t *ki, const command_t *cmd, int argc, cmd_key_ref_t *out,
                             int max, int *n) {
    int first = ki->kfirst, last;
    if (ki->klast >= 0) last = first + ki->klast;
    else if (!ki->klimit) last = argc + ki->klast;
    else last = first + ((argc - first) / ki->klimit + ki->klast);
    *n = 0;
    if (first >= argc || last < first || last >= argc) return true; /* no key here: none at all */
    for (int i = first; i <= last; i += ki->kstep) {
        if (i >= argc) {
            if (cmd->arity < 0) continue;
            *n = 0; /* arguments that contradict the spec name no key */
            return true;
        }
        if (*n == max) return false;
        out[*n].pos = i;
        out[(*n)++].flags = ki->kflags;
    }
    return true;
}

/* Debug builds: the fast paths below must name exactly the keys (and
 * flags) the general extractor names. */
static void check_against_meta(const key_cache_t *kc, const command_t *cmd, robj **argv, int argc) {
#if RL_DEBUG >= 2
    cmd_key_ref_t check[8];
    int m = cmd_meta_get_keys(cmd, argv, argc, check, 8);
    rl_assert_internal((m < 0 ? 0 : m) == kc->n);
    for (int j = 0; j < kc->n && j < 8; j++)
        rl_assert_internal(check[j].pos == kc->refs[j].pos && check[j].flags == kc->refs[j].flags);
#else
    (void)kc, (void)cmd, (void)argv, (void)argc;
#endif
}

static void key_cache_fill(key_cache_t *kc, const command_t *cmd, robj **argv, int argc) {
    kc->ready = true;
    kc->refs = kc->local;
    const acl_cmd_info_t *ki = &acl_cmd_infos[cmd->acl_id];
    int n;
    switch (ki->keys) {
        case ACL_KEYS_NONE:
            kc->n = 0;
            check_against_meta(kc, cmd, argv, argc);
            return;
        case ACL_KEYS_SET:
            kc->local[0].pos = 1;
            kc->local[0].flags = cmd_meta_set_key_flags(argv, argc);
            kc->n = 1;
            check_against_meta(kc, cmd, argv, argc);
            return;
        case ACL_KEYS_RANGE:
            if (plain_range_keys(ki, cmd, argc, kc->local, 8, &n)) {
                kc->n = n;
                check_against_meta(kc, cmd, argv, argc);
                return;
            }
            break;
        case ACL_KEYS_GENERAL: break;
    }
    n = cmd_meta_get_keys(cmd, argv, argc, kc->local, 8);
    if (n > 8) {
        kc->refs = zmalloc(sizeof(cmd_key_ref_t) * (size_t)n);
        n = cmd_meta_get_keys(cmd, argv, argc, kc->refs, n);
    }
    /* Arguments that cannot be parsed for keys name none: the command
     * refuses them itself (as Redis's key specs fall back). */
    kc->n = n < 0 ? 0 : n;
}

static void key_cache_free(key_cache_t *kc) {
    if (kc->ready && kc->refs != kc->local) zfree(kc->refs);
}

/* Channel arguments of cmd, from the command table; false if none. */
static bool channel_args(const command_t *cmd, int argc, int *first, int *last, bool *pattern) {
    acl_chan_kind_t k = acl_cmd_infos[cmd->acl_id].chan;
    if (k == ACL_CHAN_NONE) return false;
    *first = 1;
    *last = k == ACL_CHAN_FIRST ? 1 : argc - 1;
    *pattern = k == ACL_CHAN_ALL_PATTERNS;
    return *first < argc;
}

/* Inlined into its callers: it runs for every command of a restricted
 * user, and a call layer costs as much as the bit test it wraps. */
static inline __attribute__((always_inline)) int selector_check(const acl_selector_t *s, const command_t *cmd,
                                                                robj **argv, int argc, key_cache_t *kc, int *argpos) {
    if (!selector_allows_cmd(s, cmd, argv, argc)) return ACL_DENIED_CMD;
    if (!(s->flags & ACL_SEL_ALLKEYS)) {
        if (!kc->ready) key_cache_fill(kc, cmd, argv, argc);
        for (int j = 0; j < kc->n; j++) {
            int pos = kc->refs[j].pos;
            if (!selector_allows_key(s, argv[pos]->ptr, sds_len(argv[pos]->ptr), kc->refs[j].flags)) {
                *argpos = pos;
                return ACL_DENIED_KEY;
            }
        }
    }
    int first, last;
    bool pattern;
    if (!(s->flags & ACL_SEL_ALLCHANNELS) && channel_args(cmd, argc, &first, &last, &pattern)) {
        for (int j = first; j <= last; j++) {
            if (!selector_allows_channel(s, argv[j]->ptr, sds_len(argv[j]->ptr), pattern)) {
                *argpos = j;
                return ACL_DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

static inline __attribute__((always_inline)) int check_cmd(acl_user_t *u, const command_t *cmd, robj **argv,
                                                           int argc, int *argpos) {
    if (!u || u->unrestricted) return ACL_OK;
    /* No selector allows it: report the command unless some selector got
     * past it, then the latest key or channel argument that failed. */
    key_cache_t kc;
    kc.ready = false;
    if (u->nsel == 1) { /* the usual restricted user: one verdict */
        int pos = 0;
        int r = selector_check(u->sel[0], cmd, argv, argc, &kc, &pos);
        key_cache_free(&kc);
        if (r != ACL_OK) *argpos = pos;
        return r;
    }
    int worst = ACL_DENIED_CMD, worst_pos = 0;
    for (int i = 0; i < u->nsel; i++) {
        int pos = 0;
        int r = selector_check(u->sel[i], cmd, argv, argc, &kc, &pos);
        if (r == ACL_OK) {
            key_cache_free(&kc);
            return ACL_OK;
        }
        if (r > worst || (r == worst && pos > worst_pos)) {
            worst = r;
            worst_pos = pos;
        }
    }
    key_cache_free(&kc);
    *argpos = worst_pos;
    return worst;
}

int acl_check_cmd(acl_user_t *u, const command_t *cmd, robj **argv, int argc, int *argpos) {
    return check_cmd(u, cmd, argv, argc, argpos);
}

const char *acl_cmd_name(const command_t *cmd) {
    /* Our subcommands of a command Redis does not split (DEBUG OBJECT) go
     * by the command's name, as Redis names them. */
    if (cmd->parent && !cmd->meta && cmd->parent->meta) return cmd->parent->fullname;
    return cmd->fullname;
}

sds acl_cat_denial(sds s, int r, const acl_user_t *u, const command_t *cmd, const char *arg, size_t arglen,
                   bool verbose) {
    const char *uname = u ? u->name : "default";
    if (r == ACL_DENIED_CMD)
        return sds_catprintf(s, "User %s has no permissions to run the '%s' command", uname, acl_cmd_name(cmd));
    const char *what = r == ACL_DENIED_KEY ? "key" : "channel";
    if (!verbose) return sds_catprintf(s, "No permissions to access a %s", what);
    s = sds_catprintf(s, "User %s has no permissions to access the '", uname);
    s = sds_catlen(s, arg, arglen);
    return sds_catprintf(s, "' %s", what);
}

int acl_check_and_log(client_t *c, acl_user_t *u, const command_t *cmd, robj **argv, int argc, int ctx,
                      int *argpos) {
    int pos = 0;
    int r = check_cmd(u, cmd, argv, argc, &pos);
    if (r == ACL_OK) return r;
    const char *uname = u ? u->name : "default";
    if (r == ACL_DENIED_CMD) acl_log_add(c, r, ctx, uname, acl_cmd_name(cmd), strlen(acl_cmd_name(cmd)));
    else acl_log_add(c, r, ctx, uname, argv[pos]->ptr, sds_len(argv[pos]->ptr));
    if (argpos) *argpos = pos;
    return r;
}

bool acl_check_unrestricted_keys(acl_user_t *u, const command_t *cmd, robj **argv, int argc, unsigned ksf_flags) {
    if (!u || u->unrestricted) return true;
    key_cache_t kc;
    kc.ready = false;
    bool ok = false;
    for (int i = 0; i < u->nsel && !ok; i++) {
        int pos;
        ok = selector_check(u->sel[i], cmd, argv, argc, &kc, &pos) == ACL_OK &&
             selector_all_keys(u->sel[i], ksf_flags);
    }
    key_cache_free(&kc);
    return ok;
}

/* ------------------------------------------------------------ log */

static void log_entry_free(acl_log_entry_t *e) {
    sds_free(e->object);
    sds_free(e->username);
    sds_free(e->cinfo);
    zfree(e);
}

static void log_unlink(acl_t *a, acl_log_entry_t *e) {
    if (e->prev) e->prev->next = e->next;
    else a->log_head = e->next;
    if (e->next) e->next->prev = e->prev;
    else a->log_tail = e->prev;
    e->next = e->prev = NULL;
    a->log_len--;
}

static void log_push_head(acl_t *a, acl_log_entry_t *e) {
    e->prev = NULL;
    e->next = a->log_head;
    if (a->log_head) a->log_head->prev = e;
    else a->log_tail = e;
    a->log_head = e;
    a->log_len++;
}

static void log_clear(acl_t *a) {
    while (a->log_head) {
        acl_log_entry_t *e = a->log_head;
        log_unlink(a, e);
        log_entry_free(e);
    }
}

static void count_denial(acl_t *a, int reason) {
    switch (reason) {
        case ACL_DENIED_AUTH: a->stats.denied_auth++; break;
        case ACL_DENIED_CMD: a->stats.denied_cmd++; break;
        case ACL_DENIED_KEY: a->stats.denied_key++; break;
        case ACL_DENIED_CHANNEL: a->stats.denied_channel++; break;
    }
}

static bool log_same(const acl_log_entry_t *e, int reason, int ctx, const char *obj, size_t olen, const char *user,
                     long long now) {
    long long delta = now - e->ctime_ms;
    if (delta < 0) delta = -delta;
    return e->reason == reason && e->ctx == ctx && delta <= ACL_LOG_GROUPING_MS && sds_len(e->object) == olen &&
           !memcmp(e->object, obj, olen) && !strcmp(e->username, user);
}

/* Record one denial: reason ACL_DENIED_*, object the command, key,
 * channel or (auth) user name; client-info from c. */
static void acl_log_add(client_t *c, int reason, int ctx, const char *username, const char *object, size_t objlen) {
    server_t *srv = c->srv;
    acl_t *a = srv->acl;
    count_denial(a, reason);
    if (srv->cfg.acllog_max_len <= 0) {
        /* Nothing is kept, and (as 7.4 does) no entry-id is used up. */
        log_clear(a);
        return;
    }
    long long now = util_mstime();
    sds cinfo = conn_info_string(sds_empty(), c);
    /* A recent equal denial is bumped and moved to the front. */
    int scan = ACL_LOG_SCAN;
    for (acl_log_entry_t *e = a->log_head; e && scan--; e = e->next) {
        if (!log_same(e, reason, ctx, object, objlen, username, now)) continue;
        log_unlink(a, e);
        log_push_head(a, e);
        sds_free(e->cinfo);
        e->cinfo = cinfo;
        e->ctime_ms = now;
        e->count++;
        return;
    }
    acl_log_entry_t *e = zcalloc(sizeof(*e));
    e->count = 1;
    e->reason = reason;
    e->ctx = ctx;
    e->object = sds_newlen(object, objlen);
    e->username = sds_new(username);
    e->ctime_ms = now;
    e->created_ms = now;
    e->entry_id = a->log_next_id++;
    e->cinfo = cinfo;
    log_push_head(a, e);
    while (a->log_len > srv->cfg.acllog_max_len && a->log_tail) {
        acl_log_entry_t *old = a->log_tail;
        log_unlink(a, old);
        log_entry_free(old);
    }
}

const acl_stats_t *acl_get_stats(const server_t *srv) { return &srv->acl->stats; }
void acl_reset_stats(server_t *srv) { memset(&srv->acl->stats, 0, sizeof(srv->acl->stats)); }

/* ------------------------------------------------------------ ACL LOG reply */

void acl_reply_log(client_t *c, long count) {
    acl_t *a = c->srv->acl;
    if (count > a->log_len) count = a->log_len;
    if (count < 0) count = 0;
    static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel"};
    static const char *const ctxs[] = {"toplevel", "multi", "lua"};
    long long now = util_mstime();
    reply_array_len(c, count);
    acl_log_entry_t *e = a->log_head;
    for (long i = 0; i < count && e; i++, e = e->next) {
        reply_map_len(c, 10);
        reply_bulk_cstr(c, "count");
        reply_ll(c, e->count);
        reply_bulk_cstr(c, "reason");
        reply_bulk_cstr(c, reasons[e->reason]);
        reply_bulk_cstr(c, "context");
        reply_bulk_cstr(c, ctxs[e->ctx]);
        reply_bulk_cstr(c, "object");
        reply_bulk(c, e->object, sds_len(e->object));
        reply_bulk_cstr(c, "username");
        reply_bulk(c, e->username, sds_len(e->username));
        reply_bulk_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime_ms) / 1000);
        reply_bulk_cstr(c, "client-info");
        reply_bulk(c, e->cinfo, sds_len(e->cinfo));
        reply_bulk_cstr(c, "entry-id");
        reply_ll(c, e->entry_id);
        reply_bulk_cstr(c, "timestamp-created");
        reply_ll(c, e->created_ms);
        reply_bulk_cstr(c, "timestamp-last-updated");
        reply_ll(c, e->ctime_ms);
    }
}

void acl_log_reset(server_t *srv) { log_clear(srv->acl); }

/* ------------------------------------------------------------ changing users */

static bool selector_has_all_channels(const acl_user_t *u) {
    for (int i = 0; i < u->nsel; i++)
        if (u->sel[i]->flags & ACL_SEL_ALLCHANNELS) return true;
    return false;
}

/* Whether every channel pattern of old is still granted, literally, by
 * new (Redis's test before it looks at any client). */
static bool channels_kept(const acl_user_t *new_u, const acl_user_t *old_u) {
    for (int i = 0; i < old_u->nsel; i++) {
        const acl_selector_t *s = old_u->sel[i];
        if (s->flags & ACL_SEL_ALLCHANNELS) return false;
        for (int j = 0; j < s->nchannels; j++) {
            bool found = false;
            for (int k = 0; k < new_u->nsel && !found; k++)
                for (int m = 0; m < new_u->sel[k]->nchannels && !found; m++)
                    found = !strcmp(new_u->sel[k]->channels[m], s->channels[j]);
            if (!found) return false;
        }
    }
    return true;
}

typedef struct {
    const acl_user_t *u;
    bool denied;
} sub_check_t;

static void check_one_sub(void *arg, const char *name, size_t len, bool is_pattern) {
    sub_check_t *sc = arg;
    if (sc->denied) return;
    /* Subscriptions are judged by the new channel list alone, patterns
     * literally, as the subscribe-time check does. */
    bool ok = false;
    for (int i = 0; i < sc->u->nsel && !ok; i++) {
        const acl_selector_t *s = sc->u->sel[i];
        for (int j = 0; j < s->nchannels && !ok; j++) {
            sds p = s->channels[j];
            ok = is_pattern ? (sds_len(p) == len && !memcmp(p, name, len))
                            : util_glob_match(p, sds_len(p), name, len, false);
        }
    }
    if (!ok) sc->denied = true;
}

/* ACL SETUSER narrowed the channels of old_u to those of new_u: its
 * subscribed clients that lost one of their channels are closed. */
static void kill_pubsub_clients_if_needed(server_t *srv, const acl_user_t *new_u, acl_user_t *old_u) {
    if (selector_has_all_channels(new_u) || channels_kept(new_u, old_u)) return;
    client_t *next;
    for (client_t *c = srv->clients_head; c; c = next) {
        next = c->next;
        if (c->user != old_u || !(c->flags & CLIENT_PUBSUB)) continue;
        sub_check_t sc = {new_u, false};
        pubsub_foreach_subscription(c, check_one_sub, &sc);
        if (!sc.denied) continue;
        if (c == srv->current_client) c->flags |= CLIENT_CLOSE_AFTER_COMMAND;
        else conn_close_async(c);
    }
}

acl_user_t *acl_find_user(server_t *srv, const char *name, size_t len) { return find_user(srv->acl, name, len); }

sds acl_setuser(server_t *srv, const char *name, size_t namelen, sds *rules, int nrules) {
    int merged = 0, bad = 0;
    sds *args = acl_merge_selector_args(rules, nrules, &merged, &bad);
    if (!args)
        return sds_catprintf(sds_empty(), "Unmatched parenthesis in acl selector starting at '%s'.", rules[bad]);
    acl_user_t *u = find_user(srv->acl, name, namelen);
    /* Every rule is staged on a copy: one bad rule changes nothing. */
    acl_user_t *tmp = acl_user_new(name, namelen);
    if (u) acl_user_copy(tmp, u);
    sds err = NULL;
    for (int j = 0; j < merged && !err; j++) {
        acl_rule_err_t e = acl_user_set_rule(tmp, args[j], sds_len(args[j]));
        if (e != ACL_RULE_OK)
            err = sds_catprintf(sds_empty(), "Error in ACL SETUSER modifier '%s': %s", args[j], acl_rule_error_text(e));
    }
    if (!err) {
        if (u) {
            kill_pubsub_clients_if_needed(srv, tmp, u);
        } else {
            u = acl_user_new(name, namelen);
            rax_insert(srv->acl->users, (const unsigned char *)name, namelen, u, NULL);
        }
        acl_user_copy(u, tmp);
    }
    acl_user_free(tmp);
    for (int j = 0; j < merged; j++) sds_free(args[j]);
    zfree(args);
    return err;
}

bool acl_deluser(server_t *srv, const char *name, size_t len) {
    void *old;
    if (!rax_remove(srv->acl->users, (const unsigned char *)name, len, &old)) return false;
    kill_clients_of(srv, old);
    acl_user_free(old);
    return true;
}

void acl_foreach_user(server_t *srv, void (*fn)(void *arg, acl_user_t *u), void *arg) {
    rax_iter_t it;
    rax_iter_start(&it, srv->acl->users);
    for (bool ok = rax_seek(&it, "^", NULL, 0); ok; ok = rax_next(&it)) fn(arg, it.data);
    rax_iter_stop(&it);
}

size_t acl_user_count(const server_t *srv) { return (size_t)rax_size(srv->acl->users); }

/* ------------------------------------------------------------ aclfile */

/* Split s on every sep (empty pieces kept, as Redis splits aclfile lines:
 * two spaces make an empty rule, which is a no-op). */
static sds *split_char(const char *s, size_t len, char sep, int *count) {
    int n = 1;
    for (size_t i = 0; i < len; i++) n += s[i] == sep;
    sds *out = zmalloc(sizeof(sds) * (size_t)n);
    size_t start = 0;
    int k = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == sep) {
            out[k++] = sds_newlen(s + start, i - start);
            start = i + 1;
        }
    }
    *count = k;
    return out;
}

/* Remove the characters of set from both ends of s. */
static void trim_set(sds s, const char *set) {
    size_t len = sds_len(s), a = 0;
    while (a < len && strchr(set, s[a])) a++;
    while (len > a && strchr(set, s[len - 1])) len--;
    memmove(s, s + a, len - a);
    sds_setlen(s, len - a);
}

static void free_user_cb(void *u) { acl_user_free(u); }

static void cat_user_line(void *arg, acl_user_t *u) {
    sds *out = arg;
    *out = sds_catprintf(*out, "user %s %s\n", u->name, acl_user_describe(u));
}

/* Write to a temporary file, flush it to disk, then rename it over the
 * aclfile: a crash at any point leaves either the old file or the new
 * one, never a truncated one. */
bool acl_save_file(server_t *srv, const char *path) {
    sds text = sds_empty();
    acl_foreach_user(srv, cat_user_line, &text);
    sds full = server_path(srv, path); /* a relative aclfile is in dir, as in Redis */
    sds tmp = sds_catprintf(sds_empty(), "%s.tmp-%d-%lld", full, (int)getpid(), util_mstime());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool r = false;
    if (fd < 0) {
        log_msg(LL_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
        goto done;
    }
    size_t off = 0;
    while (off < sds_len(text)) {
        ssize_t n = write(fd, text + off, sds_len(text) - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            log_msg(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
            goto done;
        }
        off += (size_t)n;
    }
    if (fsync(fd) != 0) {
        log_msg(LL_WARNING, "Syncing ACL file for ACL SAVE: %s", strerror(errno));
        goto done;
    }
    close(fd);
    fd = -1;
    if (rename(tmp, full) != 0) {
        log_msg(LL_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
        goto done;
    }
    r = true;
done:
    if (fd >= 0) close(fd);
    if (!r) unlink(tmp);
    sds_free(tmp);
    sds_free(full);
    sds_free(text);
    return r;
}

/* One aclfile line into users; errors are appended to *errors (Redis's
 * texts, file:line first). */
static void load_line(rax_t *users, const char *path, int lineno, sds line, sds *errors) {
    int argc = 0;
    sds *argv = split_char(line, sds_len(line), ' ', &argc);
    if (argc == 0) goto out;
    if (strcmp(argv[0], "user") || argc < 2) {
        *errors = sds_catprintf(*errors, "%s:%d should start with user keyword followed by the username. ", path,
                                lineno);
        goto out;
    }
    if (acl_has_spaces(argv[1], sds_len(argv[1]))) {
        *errors = sds_catprintf(*errors, "'%s:%d: username '%s' contains invalid characters. ", path, lineno,
                                argv[1]);
        goto out;
    }
    acl_user_t *u = acl_user_new(argv[1], sds_len(argv[1]));
    if (!rax_try_insert(users, (const unsigned char *)argv[1], sds_len(argv[1]), u)) {
        acl_user_free(u);
        *errors = sds_catprintf(*errors, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], lineno);
        goto out;
    }
    int merged = 0;
    sds *rules = acl_merge_selector_args(argv + 2, argc - 2, &merged, NULL);
    if (!rules) {
        *errors = sds_catprintf(*errors, "%s:%d: Unmatched parenthesis in selector definition.", path, lineno);
        goto out;
    }
    bool syntax_reported = false;
    for (int j = 0; j < merged; j++) {
        trim_set(rules[j], "\t\r\n");
        acl_rule_err_t e = acl_user_set_rule(u, rules[j], sds_len(rules[j]));
        if (e == ACL_RULE_NO_SUCH_CMD) {
            *errors = sds_catprintf(*errors, "%s:%d: Error in applying operation '%s': %s. ", path, lineno, rules[j],
                                    acl_rule_error_text(e));
        } else if (e != ACL_RULE_OK && !syntax_reported) {
            /* Other errors may leak a password: only the first, no rule. */
            *errors = sds_catprintf(*errors, "%s:%d: %s. ", path, lineno, acl_rule_error_text(e));
            syntax_reported = true;
        }
    }
    for (int j = 0; j < merged; j++) sds_free(rules[j]);
    zfree(rules);
out:
    sds_free_splitres(argv, argc);
}

sds acl_load_file(server_t *srv, const char *path) {
    sds full = server_path(srv, path); /* a relative aclfile is in dir, as in Redis */
    FILE *f = fopen(full, "r");
    sds_free(full);
    if (!f) return sds_catprintf(sds_empty(), "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
    sds text = sds_empty();
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text = sds_catlen(text, buf, n);
    fclose(f);
    int nlines = 0;
    sds *lines = split_char(text, sds_len(text), '\n', &nlines);
    sds_free(text);
    /* Loaded into a fresh table; the running users change only if every
     * line is good. */
    rax_t *users = rax_new();
    sds errors = sds_empty();
    for (int i = 0; i < nlines; i++) {
        trim_set(lines[i], " \t\r\n");
        if (sds_len(lines[i]) == 0) continue;
        load_line(users, path, i + 1, lines[i], &errors);
    }
    sds_free_splitres(lines, nlines);
    if (sds_len(errors)) {
        rax_free(users, free_user_cb);
        return sds_cat(errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was "
                               "performed");
    }
    sds_free(errors);
    acl_t *a = srv->acl;
    /* The default user keeps its identity (clients point at it); it takes
     * the file's rules, or the built-in ones when the file has none. */
    void *nd = NULL;
    if (!rax_remove(users, (const unsigned char *)"default", 7, &nd)) nd = new_default_user();
    acl_user_copy(a->default_user, nd);
    acl_user_free(nd);
    rax_remove(a->users, (const unsigned char *)"default", 7, NULL);
    rax_insert(users, (const unsigned char *)"default", 7, a->default_user, NULL);
    rax_t *old = a->users;
    a->users = users;
    rax_iter_t it;
    rax_iter_start(&it, old);
    for (bool ok = rax_seek(&it, "^", NULL, 0); ok; ok = rax_next(&it)) kill_clients_of(srv, it.data);
    rax_iter_stop(&it);
    rax_free(old, free_user_cb);
    return NULL;
}

/* ------------------------------------------------------------ start-up */

static void fatal_user_line(const rl_config_t *cfg, int i, const char *reason) {
    fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (redis-like %s) ***\n", RL_VERSION);
    fprintf(stderr, "Reading the configuration file, at line %d\n", cfg->acl_user_linenos[i]);
    fprintf(stderr, ">>> 'user %s'\n", cfg->acl_user_lines[i]);
    fprintf(stderr, "%s\n", reason);
}

/* The config's "user" lines, in order; the default user may be redefined
 * (it is reset first), any other user only once. */
static bool load_config_users(server_t *srv) {
    rl_config_t *cfg = &srv->cfg;
    rax_t *seen = rax_new();
    bool r = true;
    for (int i = 0; i < cfg->acl_user_count && r; i++) {
        int argc = 0;
        sds *argv = sds_splitargs(cfg->acl_user_lines[i], &argc);
        if (!argv || argc < 1) {
            fatal_user_line(cfg, i, "Error in user declaration: wrong number of arguments");
            r = false;
        } else if (!rax_try_insert(seen, (unsigned char *)argv[0], sds_len(argv[0]), NULL)) {
            sds msg = sds_catprintf(sds_empty(), "Error in user declaration '%s': %s", argv[0],
                                    acl_rule_error_text(ACL_RULE_DUP_USER));
            fatal_user_line(cfg, i, msg);
            sds_free(msg);
            r = false;
        } else if (acl_has_spaces(argv[0], sds_len(argv[0]))) {
            fatal_user_line(cfg, i, "Spaces not allowed in ACL usernames");
            r = false;
        } else {
            if (!strcmp(argv[0], "default")) acl_user_set_rule(srv->acl->default_user, "reset", 5);
            sds err = acl_setuser(srv, argv[0], sds_len(argv[0]), argv + 1, argc - 1);
            if (err) {
                fatal_user_line(cfg, i, err);
                sds_free(err);
                r = false;
            }
        }
        if (argv) sds_free_splitres(argv, argc);
    }
    rax_free(seen, NULL);
    return r;
}

bool acl_init(server_t *srv) {
    acl_t *a = zcalloc(sizeof(*a));
    srv->acl = a;
    acl_cmdtab_init(srv);
    acl_set_pubsub_default(srv->cfg.acl_pubsub_default == ACL_PUBSUB_ALLCHANNELS);
    a->users = rax_new();
    a->default_user = new_default_user();
    rax_insert(a->users, (const unsigned char *)"default", 7, a->default_user, NULL);
    acl_update_default_password(srv, srv->cfg.requirepass);
    const char *aclfile = srv->cfg.aclfile;
    if (aclfile && aclfile[0] && srv->cfg.acl_user_count) {
        log_msg(LL_WARNING, "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
                            "path is invalid. This setup is very likely to lead to configuration errors and "
                            "security holes, please define either an ACL file or declare users directly in your "
                            "redis.conf, but not both.");
        return false;
    }
    if (!load_config_users(srv)) return false;
    if (aclfile && aclfile[0]) {
        sds errors = acl_load_file(srv, aclfile);
        if (errors) {
            log_msg(LL_WARNING, "Aborting Redis startup because of ACL errors: %s", errors);
            fprintf(stderr, "Aborting Redis startup because of ACL errors: %s\n", errors);
            sds_free(errors);
            return false;
        }
    }
    return true;
}

void acl_free(server_t *srv) {
    acl_t *a = srv->acl;
    if (!a) return;
    rax_free(a->users, free_user_cb);
    log_clear(a);
    zfree(a);
    srv->acl = NULL;
    acl_cmdtab_free();
}

static void collect_line(void *arg, acl_user_t *u) {
    sds *lines = arg;
    *lines = sds_catprintf(*lines, "%s %s\n", u->name, acl_user_describe(u));
}

sds *acl_config_lines(server_t *srv, int *count) {
    sds all = sds_empty();
    acl_foreach_user(srv, collect_line, &all);
    sds *lines = split_char(all, sds_len(all), '\n', count);
    sds_free(all);
    /* The split leaves one empty string after the final newline. */
    if (*count > 0 && sds_len(lines[*count - 1]) == 0) sds_free(lines[--(*count)]);
    return lines;
}

void acl_config_changed(server_t *srv, const char *name) {
    if (!strcasecmp(name, "requirepass")) acl_update_default_password(srv, srv->cfg.requirepass);
    else if (!strcasecmp(name, "acl-pubsub-default"))
        acl_set_pubsub_default(srv->cfg.acl_pubsub_default == ACL_PUBSUB_ALLCHANNELS);
}
