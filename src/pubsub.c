/* pubsub.c: publish/subscribe (see pubsub.h).
 *
 * Data: three server dicts, channel -> sub_list, pattern -> sub_list and
 * shard channel -> sub_list, where a sub_list is an array of clients in
 * subscription order (messages reach subscribers in that order, as in
 * Redis); and per client a pubsub_client holding three sets (dicts with
 * NULL values) of its channels, patterns and shard channels.  Shard
 * channels (SSUBSCRIBE/SPUBLISH) are a namespace of their own, as in a
 * standalone Redis 7.0: no patterns match them, and their subscription
 * count in replies counts only them.
 *
 * Invariants: client c is in the sub_list of channel X iff X is in c's
 * channel set (same for patterns); a sub_list exists iff it is non-empty; c
 * has CLIENT_PUBSUB iff it holds at least one subscription; c->ps is NULL
 * until c first subscribes.  PUBLISH to a channel costs one dict lookup plus
 * one glob match per distinct pattern on the server. */
#include "pubsub.h"

#include <string.h>

#include "commands.h"
#include "conn.h"
#include "crc16.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

typedef struct sub_list {
    size_t n, cap;
    client_t **v; /* subscribers, oldest first */
} sub_list;

struct pubsub {
    dict *channels; /* sds channel -> sub_list */
    dict *patterns; /* sds pattern -> sub_list */
    dict *shard;    /* sds shard channel -> sub_list */
};

typedef struct pubsub_client {
    dict *channels; /* set of sds channels */
    dict *patterns; /* set of sds patterns */
    dict *shard;    /* set of sds shard channels */
} pubsub_client;

static void sub_list_free(void *p) {
    sub_list *l = p;
    zfree(l->v);
    zfree(l);
}

static dict_type server_set_type = {dict_sds_hash, dict_sds_eq, NULL, NULL, sub_list_free, true};
static dict_type client_set_type = {dict_sds_hash, dict_sds_eq, NULL, NULL, NULL, true};

pubsub_t *pubsub_create(void) {
    pubsub_t *ps = zmalloc(sizeof(*ps));
    ps->channels = dict_create(&server_set_type);
    ps->patterns = dict_create(&server_set_type);
    ps->shard = dict_create(&server_set_type);
    return ps;
}

void pubsub_free(pubsub_t *ps) {
    if (!ps) return;
    dict_release(ps->channels);
    dict_release(ps->patterns);
    dict_release(ps->shard);
    zfree(ps);
}

/* ------------------------------------------------------------ bookkeeping */

static pubsub_client *client_state(client_t *c) {
    if (!c->ps) {
        c->ps = zmalloc(sizeof(*c->ps));
        c->ps->channels = dict_create(&client_set_type);
        c->ps->patterns = dict_create(&client_set_type);
        c->ps->shard = dict_create(&client_set_type);
    }
    return c->ps;
}

size_t pubsub_client_channels(const client_t *c) { return c->ps ? dict_size(c->ps->channels) : 0; }
size_t pubsub_client_patterns(const client_t *c) { return c->ps ? dict_size(c->ps->patterns) : 0; }
size_t pubsub_client_shard_channels(const client_t *c) { return c->ps ? dict_size(c->ps->shard) : 0; }
size_t pubsub_channel_count(const server_t *srv) { return dict_size(srv->pubsub->channels); }
size_t pubsub_shard_channel_count(const server_t *srv) { return dict_size(srv->pubsub->shard); }
size_t pubsub_pattern_count(const server_t *srv) { return dict_size(srv->pubsub->patterns); }

/* The count a (un)subscribe frame reports: channels and patterns
 * together, shard channels on their own (Redis 7.0). */
static long frame_count(const client_t *c, int which) {
    if (which == PS_SHARD) return (long)pubsub_client_shard_channels(c);
    return (long)(pubsub_client_channels(c) + pubsub_client_patterns(c));
}

static void update_flag(client_t *c) {
    if (pubsub_client_channels(c) + pubsub_client_patterns(c) + pubsub_client_shard_channels(c) > 0)
        c->flags |= CLIENT_PUBSUB;
    else c->flags &= ~CLIENT_PUBSUB;
}

/* Add c to the server-side list of name (which c did not hold). */
static void server_add(dict *d, sds name, client_t *c) {
    dict_entry *existing;
    dict_entry *de = dict_add_raw(d, name, &existing);
    sub_list *l;
    if (de) {
        l = zcalloc(sizeof(*l));
        de->v.ptr = l;
    } else {
        l = dict_get_val(existing);
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = zrealloc(l->v, l->cap * sizeof(client_t *));
    }
    l->v[l->n++] = c;
}

/* Remove c from the server-side list of name; drops an emptied list. */
static void server_remove(dict *d, sds name, client_t *c) {
    sub_list *l = dict_fetch_value(d, name);
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i] == c) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(client_t *));
            l->n--;
            break;
        }
    }
    if (l->n == 0) dict_delete(d, name);
}

/* ------------------------------------------------------------ replies */

/* One subscribed-mode frame: [kind, name or null, count].  Frames and
 * messages are pushes (reply_push_begin): CLIENT REPLY OFF does not stop
 * them, as in Redis. */
static void reply_sub_frame(client_t *c, const char *kind, const char *name, size_t nlen, long count) {
    unsigned was = reply_push_begin(c);
    reply_push_len(c, 3);
    reply_bulk_cstr(c, kind);
    if (name) reply_bulk(c, name, nlen);
    else reply_null(c);
    reply_ll(c, count);
    reply_push_end(c, was);
}

/* kind: "message", or "smessage" for a shard channel. */
static void deliver_message(client_t *c, const char *kind, const char *chan, size_t clen, const char *msg, size_t mlen) {
    unsigned was = reply_push_begin(c);
    reply_push_len(c, 3);
    reply_bulk_cstr(c, kind);
    reply_bulk(c, chan, clen);
    reply_bulk(c, msg, mlen);
    reply_push_end(c, was);
}

static void deliver_pmessage(client_t *c, sds pat, const char *chan, size_t clen, const char *msg, size_t mlen) {
    unsigned was = reply_push_begin(c);
    reply_push_len(c, 4);
    reply_bulk(c, "pmessage", 8);
    reply_bulk(c, pat, sds_len(pat));
    reply_bulk(c, chan, clen);
    reply_bulk(c, msg, mlen);
    reply_push_end(c, was);
}

/* ------------------------------------------------------------ (un)subscribe */

static const char *const subscribe_kind[] = {[PS_CHANNEL] = "subscribe", [PS_PATTERN] = "psubscribe", [PS_SHARD] = "ssubscribe"};
static const char *const unsubscribe_kind[] = {[PS_CHANNEL] = "unsubscribe", [PS_PATTERN] = "punsubscribe", [PS_SHARD] = "sunsubscribe"};

static dict *server_dict(client_t *c, int which) {
    pubsub_t *ps = c->srv->pubsub;
    return which == PS_PATTERN ? ps->patterns : which == PS_SHARD ? ps->shard
                                                                  : ps->channels;
}

static dict *client_dict(client_t *c, int which) {
    pubsub_client *pc = client_state(c);
    return which == PS_PATTERN ? pc->patterns : which == PS_SHARD ? pc->shard
                                                                  : pc->channels;
}

static void subscribe_generic(client_t *c, int which) {
    const char *kind = subscribe_kind[which];
    dict *mine = client_dict(c, which);
    for (int j = 1; j < c->argc; j++) {
        sds name = c->argv[j]->ptr;
        if (dict_add(mine, name, NULL) == DICT_OK) server_add(server_dict(c, which), name, c);
        update_flag(c);
        reply_sub_frame(c, kind, name, sds_len(name), frame_count(c, which));
    }
}

/* Unsubscribe from one name; reply a frame if `reply`.  name must not be
 * the client set's own key (callers pass argv or a copy). */
static void unsubscribe_one(client_t *c, int which, sds name, bool reply) {
    dict *mine = client_dict(c, which);
    if (dict_find(mine, name)) {
        server_remove(server_dict(c, which), name, c);
        dict_delete(mine, name);
        update_flag(c);
    }
    if (reply) reply_sub_frame(c, unsubscribe_kind[which], name, sds_len(name), frame_count(c, which));
}

/* Unsubscribe from everything of one kind: one frame per name, or a single
 * frame with a null name when there was nothing. */
static void unsubscribe_all(client_t *c, int which, bool reply) {
    if (!c->ps) {
        if (reply) reply_sub_frame(c, unsubscribe_kind[which], NULL, 0, 0);
        return;
    }
    dict *mine = client_dict(c, which);
    if (dict_size(mine) == 0) {
        if (reply) reply_sub_frame(c, unsubscribe_kind[which], NULL, 0, frame_count(c, which));
        return;
    }
    while (dict_size(mine) > 0) {
        dict_entry *de = dict_random_entry(mine);
        sds name = sds_dup(dict_get_key(mine, de));
        unsubscribe_one(c, which, name, reply);
        sds_free(name);
    }
}

static void unsubscribe_generic(client_t *c, int which) {
    if (c->argc == 1) {
        unsubscribe_all(c, which, true);
        return;
    }
    for (int j = 1; j < c->argc; j++) unsubscribe_one(c, which, c->argv[j]->ptr, true);
}

void pubsub_client_freed(client_t *c) {
    if (!c->ps) return;
    unsubscribe_all(c, PS_CHANNEL, false);
    unsubscribe_all(c, PS_PATTERN, false);
    unsubscribe_all(c, PS_SHARD, false);
    dict_release(c->ps->channels);
    dict_release(c->ps->patterns);
    dict_release(c->ps->shard);
    zfree(c->ps);
    c->ps = NULL;
    c->flags &= ~CLIENT_PUBSUB;
}

size_t pubsub_shard_drop_slots(server_t *srv, const uint8_t *slots) {
    dict *d = srv->pubsub->shard;
    if (dict_size(d) == 0) return 0;
    /* The names first: unsubscribing changes the dict being walked. */
    sds *names = NULL;
    size_t n = 0, cap = 0;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, d, false);
    while ((de = dict_next(&it))) {
        sds name = dict_get_key(d, de);
        unsigned slot = crc16_key_slot(name, sds_len(name));
        if (!(slots[slot >> 3] & (1u << (slot & 7)))) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            names = zrealloc(names, cap * sizeof(*names));
        }
        names[n++] = sds_dup(name);
    }
    dict_iter_release(&it);
    for (size_t i = 0; i < n; i++) {
        /* Subscribers in subscription order; the list goes with the last. */
        sub_list *l;
        while ((l = dict_fetch_value(d, names[i])) != NULL) unsubscribe_one(l->v[0], PS_SHARD, names[i], true);
        sds_free(names[i]);
    }
    zfree(names);
    return n;
}

void pubsub_foreach_subscription(client_t *c, void (*fn)(void *arg, const char *name, size_t len, bool is_pattern),
                                 void *arg) {
    if (!c->ps) return;
    dict *sets[3] = {c->ps->channels, c->ps->patterns, c->ps->shard};
    for (int i = 0; i < 3; i++) {
        dict_iter it;
        dict_entry *de;
        dict_iter_init(&it, sets[i], false);
        while ((de = dict_next(&it))) {
            sds name = dict_get_key(sets[i], de);
            fn(arg, name, sds_len(name), i == 1);
        }
        dict_iter_release(&it);
    }
}

/* ------------------------------------------------------------ publishing */

long long pubsub_publish(server_t *srv, const char *chan, size_t clen, const char *msg, size_t mlen) {
    pubsub_t *ps = srv->pubsub;
    long long receivers = 0;
    if (dict_size(ps->channels)) {
        sds key = sds_newlen(chan, clen);
        sub_list *l = dict_fetch_value(ps->channels, key);
        sds_free(key);
        if (l) {
            for (size_t i = 0; i < l->n; i++) deliver_message(l->v[i], "message", chan, clen, msg, mlen);
            receivers += (long long)l->n;
        }
    }
    if (dict_size(ps->patterns)) {
        dict_iter it;
        dict_entry *de;
        dict_iter_init(&it, ps->patterns, false);
        while ((de = dict_next(&it))) {
            sds pat = dict_get_key(ps->patterns, de);
            if (!util_glob_match(pat, sds_len(pat), chan, clen, false)) continue;
            sub_list *l = dict_get_val(de);
            for (size_t i = 0; i < l->n; i++) deliver_pmessage(l->v[i], pat, chan, clen, msg, mlen);
            receivers += (long long)l->n;
        }
        dict_iter_release(&it);
    }
    return receivers;
}

/* ------------------------------------------------------------ commands */

bool pubsub_allowed_in_context(const command_t *cmd) {
    static const char *const allowed[] = {"ping", "subscribe", "unsubscribe", "psubscribe", "punsubscribe",
                                          "ssubscribe", "sunsubscribe", "quit", "reset", NULL};
    if (cmd->parent) cmd = cmd->parent;
    for (const char *const *a = allowed; *a; a++)
        if (!strcmp(cmd->name, *a)) return true;
    return false;
}

static void cmd_subscribe(client_t *c) { subscribe_generic(c, PS_CHANNEL); }
static void cmd_psubscribe(client_t *c) { subscribe_generic(c, PS_PATTERN); }
static void cmd_unsubscribe(client_t *c) { unsubscribe_generic(c, PS_CHANNEL); }
static void cmd_punsubscribe(client_t *c) { unsubscribe_generic(c, PS_PATTERN); }
static void cmd_sunsubscribe(client_t *c) { unsubscribe_generic(c, PS_SHARD); }

/* Unlike SUBSCRIBE, Redis 7.0 refuses SSUBSCRIBE inside a transaction. */
static void cmd_ssubscribe(client_t *c) {
    if (c->flags & CLIENT_DENY_BLOCKING) {
        reply_error(c, "SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        return;
    }
    subscribe_generic(c, PS_SHARD);
}

/* SPUBLISH: shard channel subscribers only ("smessage"; no patterns). */
static void cmd_spublish(client_t *c) {
    sds chan = c->argv[1]->ptr;
    char buf[32];
    size_t mlen;
    const char *msg = obj_string_view(c->argv[2], buf, sizeof(buf), &mlen);
    reply_ll(c, pubsub_publish_shard(c->srv, chan, sds_len(chan), msg, mlen));
    /* As PUBLISH; in a cluster the bus takes it to the other nodes of
     * this shard instead (PUBLISHSHARD, dispatch.c hands it over). */
    if (!c->srv->cfg.cluster_enabled) c->flags |= CLIENT_PROPAGATE_REPL;
}

long long pubsub_publish_shard(server_t *srv, const char *chan, size_t clen, const char *msg, size_t mlen) {
    if (!dict_size(srv->pubsub->shard)) return 0;
    sds key = sds_newlen(chan, clen);
    sub_list *l = dict_fetch_value(srv->pubsub->shard, key);
    sds_free(key);
    long long n = l ? (long long)l->n : 0;
    for (long long i = 0; i < n; i++) deliver_message(l->v[i], "smessage", chan, clen, msg, mlen);
    return n;
}

static void cmd_publish(client_t *c) {
    sds chan = c->argv[1]->ptr;
    char buf[32];
    size_t mlen;
    const char *msg = obj_string_view(c->argv[2], buf, sizeof(buf), &mlen);
    reply_ll(c, pubsub_publish(c->srv, chan, sds_len(chan), msg, mlen));
    /* Replicas deliver it to their own subscribers (not logged in the AOF):
     * persist.c sends it after the command, pubsub sits below that layer.
     * In a cluster the bus takes it to every node, replicas included
     * (dispatch.c hands it to cluster_relay.c), as Redis does. */
    if (!c->srv->cfg.cluster_enabled) c->flags |= CLIENT_PROPAGATE_REPL;
}

static void channel_list(client_t *c, dict *d) {
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    sds pat = c->argc == 3 ? c->argv[2]->ptr : NULL;
    void *slot = reply_deferred_len(c);
    long n = 0;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, d, false);
    while ((de = dict_next(&it))) {
        sds name = dict_get_key(d, de);
        if (pat && !util_glob_match(pat, sds_len(pat), name, sds_len(name), false)) continue;
        reply_bulk(c, name, sds_len(name));
        n++;
    }
    dict_iter_release(&it);
    reply_set_deferred_array_len(c, slot, n);
}

/* Channel, count, channel, count ...: a flat array in RESP3 too (Redis
 * 7.0; redis-py's pubsub_numsub expects it). */
static void numsub(client_t *c, dict *d) {
    reply_array_len(c, (long)(c->argc - 2) * 2);
    for (int j = 2; j < c->argc; j++) {
        sub_list *l = dict_fetch_value(d, c->argv[j]->ptr);
        reply_bulk_obj(c, c->argv[j]);
        reply_ll(c, l ? (long long)l->n : 0);
    }
}

static void cmd_pubsub_channels(client_t *c) { channel_list(c, c->srv->pubsub->channels); }
static void cmd_pubsub_shardchannels(client_t *c) { channel_list(c, c->srv->pubsub->shard); }
static void cmd_pubsub_numsub(client_t *c) { numsub(c, c->srv->pubsub->channels); }
static void cmd_pubsub_shardnumsub(client_t *c) { numsub(c, c->srv->pubsub->shard); }

/* Redis counts patterns, not pattern subscriptions. */
static void cmd_pubsub_numpat(client_t *c) { reply_ll(c, (long long)pubsub_pattern_count(c->srv)); }

static void cmd_pubsub_help(client_t *c) {
    static const char *help[] = {
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        NULL};
    reply_help(c, "PUBSUB", help);
}

static command_t pubsub_subcommands[] = {
    {"channels", cmd_pubsub_channels, -2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "List active channels", "2.8.0", NULL},
    {"numsub", cmd_pubsub_numsub, -2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Get the count of subscribers for channels", "2.8.0", NULL},
    {"numpat", cmd_pubsub_numpat, 2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Get the count of unique patterns pattern subscriptions", "2.8.0", NULL},
    {"shardchannels", cmd_pubsub_shardchannels, -2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "List active shard channels", "7.0.0", NULL},
    {"shardnumsub", cmd_pubsub_shardnumsub, -2, CMD_PUBSUB | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Get the count of subscribers for shard channels", "7.0.0", NULL},
    {"help", cmd_pubsub_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Show helpful text about the different subcommands", "6.2.0", NULL},
    {0},
};

command_t pubsub_commands[] = {
    {"subscribe", cmd_subscribe, -2, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Listen for messages published to the given channels", "2.0.0", NULL},
    {"unsubscribe", cmd_unsubscribe, -1, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Stop listening for messages posted to the given channels", "2.0.0", NULL},
    {"psubscribe", cmd_psubscribe, -2, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Listen for messages published to channels matching the given patterns", "2.0.0", NULL},
    {"punsubscribe", cmd_punsubscribe, -1, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "pubsub", "Stop listening for messages posted to channels matching the given patterns", "2.0.0", NULL},
    {"publish", cmd_publish, 3, CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_MAY_REPLICATE, 0, 0, 0, "pubsub", "Post a message to a channel", "2.0.0", NULL},
    {"ssubscribe", cmd_ssubscribe, -2, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 1, -1, 1, "pubsub", "Listen for messages published to the given shard channels", "7.0.0", NULL},
    {"sunsubscribe", cmd_sunsubscribe, -1, CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 1, -1, 1, "pubsub", "Stop listening for messages posted to the given shard channels", "7.0.0", NULL},
    {"spublish", cmd_spublish, 3, CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_MAY_REPLICATE, 1, 1, 1, "pubsub", "Post a message to a shard channel", "7.0.0", NULL},
    {"pubsub", NULL, -2, 0, 0, 0, 0, "pubsub", "A container for Pub/Sub commands", "2.8.0", pubsub_subcommands},
    {0},
};
