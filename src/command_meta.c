/* command_meta.c: serves the generated command metadata (see command_meta.h).
 *
 * Lookup of a row by full name, the COMMAND INFO and COMMAND DOCS replies in
 * Redis 7.0's exact shape (which reply types are sets, maps or simple
 * strings matters to RESP3 clients), ACL category bits, and key extraction
 * from key specs.  Called by commands.c at start-up and by command_cmds.c;
 * it must not modify the table or reach into the keyspace. */
#include "command_meta.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "crc16.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"

const char *const acl_category_names[ACL_CAT_COUNT] = {
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
};

/* COMMAND INFO's flag names in Redis 7.0's order (may_replicate and the
 * sentinel flags are not shown by Redis 7.0). */
static const struct {
    uint32_t bit;
    const char *name;
} cmd_flag_names[] = {
    {CMD_WRITE, "write"},
    {CMD_READONLY, "readonly"},
    {CMD_DENYOOM, "denyoom"},
    {CMD_MODULE, "module"},
    {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"},
    {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"},
    {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"},
    {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_ASKING, "asking"},
    {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MULTI, "no_multi"},
    {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
};

static const char *const key_flag_names[] = {"RO", "RW", "OW", "RM", "access", "update",
                                             "insert", "delete", "not_key", "incomplete", "variable_flags"};
static const char *const arg_type_names[] = {"string", "integer", "double", "key", "pattern",
                                             "unix-time", "pure-token", "oneof", "block"};
static const char *const arg_flag_names[] = {"optional", "multiple", "multiple_token"};
static const char *const doc_flag_names[] = {"deprecated", "syscmd"};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static int cmp_name(const void *key, const void *row) {
    return strcasecmp(key, ((const cmd_meta_t *)row)->fullname);
}

const cmd_meta_t *cmd_meta_lookup(const char *fullname) {
    return bsearch(fullname, cmd_meta_table, cmd_meta_count, sizeof(cmd_meta_t), cmp_name);
}

uint64_t cmd_meta_acl_categories(const command_t *cmd) { return cmd->meta ? cmd->meta->acl_categories : 0; }

int cmd_meta_acl_category_index(const char *name) {
    for (int i = 0; i < ACL_CAT_COUNT; i++)
        if (!strcasecmp(name, acl_category_names[i])) return i;
    return -1;
}

/* ------------------------------------------------------------ COMMAND INFO */

/* A set of simple strings: the names of the bits set in mask. */
static void reply_flag_set(client_t *c, unsigned mask, const char *const *names, size_t n) {
    long count = 0;
    for (size_t i = 0; i < n; i++)
        if (mask & (1u << i)) count++;
    reply_set_len(c, count);
    for (size_t i = 0; i < n; i++)
        if (mask & (1u << i)) reply_simple(c, names[i]);
}

void cmd_meta_reply_key_flags(client_t *c, unsigned flags) {
    reply_flag_set(c, flags, key_flag_names, COUNT_OF(key_flag_names));
}

static void reply_cmd_flags(client_t *c, uint32_t flags) {
    long n = 0;
    for (size_t i = 0; i < COUNT_OF(cmd_flag_names); i++)
        if (flags & cmd_flag_names[i].bit) n++;
    reply_set_len(c, n);
    for (size_t i = 0; i < COUNT_OF(cmd_flag_names); i++)
        if (flags & cmd_flag_names[i].bit) reply_simple(c, cmd_flag_names[i].name);
}

static void reply_categories(client_t *c, uint64_t cats) {
    long n = 0;
    for (int i = 0; i < ACL_CAT_COUNT; i++)
        if (cats & (1ull << i)) n++;
    reply_set_len(c, n);
    char buf[32];
    for (int i = 0; i < ACL_CAT_COUNT; i++) {
        if (!(cats & (1ull << i))) continue;
        snprintf(buf, sizeof(buf), "@%s", acl_category_names[i]);
        reply_simple(c, buf);
    }
}

static void reply_key_spec(client_t *c, const cmd_key_spec_t *ks) {
    reply_map_len(c, ks->notes ? 4 : 3);
    if (ks->notes) {
        reply_bulk_cstr(c, "notes");
        reply_bulk_cstr(c, ks->notes);
    }
    reply_bulk_cstr(c, "flags");
    reply_flag_set(c, ks->flags, key_flag_names, COUNT_OF(key_flag_names));
    reply_bulk_cstr(c, "begin_search");
    reply_map_len(c, 2);
    reply_bulk_cstr(c, "type");
    if (ks->begin == KS_BEGIN_INDEX) {
        reply_bulk_cstr(c, "index");
        reply_bulk_cstr(c, "spec");
        reply_map_len(c, 1);
        reply_bulk_cstr(c, "index");
        reply_ll(c, ks->begin_pos);
    } else if (ks->begin == KS_BEGIN_KEYWORD) {
        reply_bulk_cstr(c, "keyword");
        reply_bulk_cstr(c, "spec");
        reply_map_len(c, 2);
        reply_bulk_cstr(c, "keyword");
        reply_bulk_cstr(c, ks->keyword);
        reply_bulk_cstr(c, "startfrom");
        reply_ll(c, ks->begin_pos);
    } else {
        reply_bulk_cstr(c, "unknown");
        reply_bulk_cstr(c, "spec");
        reply_map_len(c, 0);
    }
    reply_bulk_cstr(c, "find_keys");
    reply_map_len(c, 2);
    reply_bulk_cstr(c, "type");
    static const char *const range_names[] = {"lastkey", "keystep", "limit"};
    static const char *const keynum_names[] = {"keynumidx", "firstkey", "keystep"};
    const char *const *names = NULL;
    if (ks->find == KS_FIND_RANGE) {
        reply_bulk_cstr(c, "range");
        names = range_names;
    } else if (ks->find == KS_FIND_KEYNUM) {
        reply_bulk_cstr(c, "keynum");
        names = keynum_names;
    } else {
        reply_bulk_cstr(c, "unknown");
    }
    reply_bulk_cstr(c, "spec");
    if (!names) {
        reply_map_len(c, 0);
        return;
    }
    int vals[3] = {ks->fk_a, ks->fk_b, ks->fk_c};
    reply_map_len(c, 3);
    for (int i = 0; i < 3; i++) {
        reply_bulk_cstr(c, names[i]);
        reply_ll(c, vals[i]);
    }
}

/* Subcommands COMMAND shows: under a command Redis 7.0 describes, only
 * those it describes too (DEBUG's internal split and CLIENT SETINFO, which
 * is Redis 7.2's, stay callable but unlisted, as in Redis 7.0). */
bool cmd_meta_listed(const command_t *cmd) { return cmd->meta || !cmd->parent || !cmd->parent->meta; }


static long count_subcommands(const command_t *cmd) {
    long n = 0;
    if (cmd->subcommands)
        for (const command_t *s = cmd->subcommands; s->name; s++) n += cmd_meta_listed(s);
    return n;
}

void cmd_meta_reply_info(client_t *c, const command_t *cmd) {
    const cmd_meta_t *m = cmd->meta;
    reply_array_len(c, 10);
    reply_bulk_cstr(c, cmd->fullname);
    reply_ll(c, cmd->arity);
    reply_cmd_flags(c, cmd->flags);
    reply_ll(c, cmd->first_key);
    reply_ll(c, cmd->last_key);
    reply_ll(c, cmd->key_step);
    reply_categories(c, m ? m->acl_categories : 0);
    reply_set_len(c, m ? m->ntips : 0);
    for (int i = 0; m && i < m->ntips; i++) reply_bulk_cstr(c, m->tips[i]);
    reply_set_len(c, m ? m->nkey_specs : 0);
    for (int i = 0; m && i < m->nkey_specs; i++) reply_key_spec(c, &m->key_specs[i]);
    /* Redis 7.0 answers an empty set for a plain command and an array of
     * entries for a container. */
    long nsub = count_subcommands(cmd);
    if (!nsub) {
        reply_set_len(c, 0);
        return;
    }
    reply_array_len(c, nsub);
    for (const command_t *s = cmd->subcommands; s->name; s++)
        if (cmd_meta_listed(s)) cmd_meta_reply_info(c, s);
}

/* ------------------------------------------------------------ COMMAND DOCS */

static void reply_args(client_t *c, const cmd_arg_t *args, int nargs) {
    reply_array_len(c, nargs);
    for (int i = 0; i < nargs; i++) {
        const cmd_arg_t *a = &args[i];
        long fields = 2 + (a->display_text != NULL) + (a->key_spec_index >= 0) + (a->token != NULL) + (a->since != NULL) + (a->flags != 0) +
                      (a->deprecated_since != NULL) + (a->nargs > 0);
        reply_map_len(c, fields);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, a->name);
        reply_bulk_cstr(c, "type");
        reply_bulk_cstr(c, arg_type_names[a->type]);
        if (a->display_text) {
            reply_bulk_cstr(c, "display_text");
            reply_bulk_cstr(c, a->display_text);
        }
        if (a->key_spec_index >= 0) {
            reply_bulk_cstr(c, "key_spec_index");
            reply_ll(c, a->key_spec_index);
        }
        if (a->token) {
            reply_bulk_cstr(c, "token");
            reply_bulk_cstr(c, a->token);
        }
        if (a->since) {
            reply_bulk_cstr(c, "since");
            reply_bulk_cstr(c, a->since);
        }
        if (a->flags) {
            reply_bulk_cstr(c, "flags");
            reply_flag_set(c, a->flags, arg_flag_names, COUNT_OF(arg_flag_names));
        }
        if (a->deprecated_since) {
            reply_bulk_cstr(c, "deprecated_since");
            reply_bulk_cstr(c, a->deprecated_since);
        }
        if (a->nargs > 0) {
            reply_bulk_cstr(c, "arguments");
            reply_args(c, a->args, a->nargs);
        }
    }
}

/* Docs of a command that has no metadata row (a command Redis 7.0 lacks). */
static void reply_docs_without_meta(client_t *c, const command_t *cmd, long nsub) {
    reply_map_len(c, nsub ? 4 : 3);
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, cmd->summary ? cmd->summary : "");
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, cmd->since ? cmd->since : "1.0.0");
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, cmd->group ? cmd->group : "server");
}

static void reply_subcommand_docs(client_t *c, const command_t *cmd, long nsub) {
    reply_bulk_cstr(c, "subcommands");
    reply_map_len(c, nsub);
    for (const command_t *s = cmd->subcommands; s->name; s++) {
        if (!cmd_meta_listed(s)) continue;
        reply_bulk_cstr(c, s->fullname);
        cmd_meta_reply_docs(c, s);
    }
}

void cmd_meta_reply_docs(client_t *c, const command_t *cmd) {
    const cmd_meta_t *m = cmd->meta;
    long nsub = count_subcommands(cmd);
    if (!m) {
        reply_docs_without_meta(c, cmd, nsub);
        if (nsub) reply_subcommand_docs(c, cmd, nsub);
        return;
    }
    long fields = 3 + (m->complexity != NULL) + (m->doc_flags != 0) + (m->deprecated_since != NULL) +
                  (m->replaced_by != NULL) + (m->nhistory > 0) + (m->nargs > 0) + (nsub > 0);
    reply_map_len(c, fields);
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, m->summary);
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, m->since);
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, m->group);
    if (m->complexity) {
        reply_bulk_cstr(c, "complexity");
        reply_bulk_cstr(c, m->complexity);
    }
    if (m->doc_flags) {
        reply_bulk_cstr(c, "doc_flags");
        reply_flag_set(c, m->doc_flags, doc_flag_names, COUNT_OF(doc_flag_names));
    }
    if (m->deprecated_since) {
        reply_bulk_cstr(c, "deprecated_since");
        reply_bulk_cstr(c, m->deprecated_since);
    }
    if (m->replaced_by) {
        reply_bulk_cstr(c, "replaced_by");
        reply_bulk_cstr(c, m->replaced_by);
    }
    if (m->nhistory > 0) {
        reply_bulk_cstr(c, "history");
        reply_set_len(c, m->nhistory);
        for (int i = 0; i < m->nhistory; i++) {
            reply_array_len(c, 2);
            reply_bulk_cstr(c, m->history[i].since);
            reply_bulk_cstr(c, m->history[i].text);
        }
    }
    if (m->nargs > 0) {
        reply_bulk_cstr(c, "arguments");
        reply_args(c, m->args, m->nargs);
    }
    if (nsub) reply_subcommand_docs(c, cmd, nsub);
}

/* ------------------------------------------------------------ keys */

typedef struct {
    cmd_key_ref_t *out;
    int max, n;
} key_sink_t;

static void sink_add(key_sink_t *s, int pos, unsigned flags) {
    if (s->n < s->max) {
        s->out[s->n].pos = pos;
        s->out[s->n].flags = flags;
    }
    s->n++;
}

static bool arg_is(robj *o, const char *word) { return !strcasecmp(o->ptr, word); }

/* Index of the first candidate key of a spec, 0 if its keyword is absent. */
static int spec_begin(const cmd_key_spec_t *ks, robj **argv, int argc) {
    if (ks->begin == KS_BEGIN_INDEX) return ks->begin_pos;
    int start = ks->begin_pos > 0 ? ks->begin_pos : argc + ks->begin_pos;
    int step = ks->begin_pos > 0 ? 1 : -1;
    for (int i = start; i >= 1 && i < argc; i += step)
        if (arg_is(argv[i], ks->keyword)) return i + 1;
    return 0;
}

/* Keys of one spec; false if the arguments contradict it (a bad count). */
static bool spec_keys(const command_t *cmd, const cmd_key_spec_t *ks, robj **argv, int argc, key_sink_t *s) {
    int first = spec_begin(ks, argv, argc), last, step;
    if (first <= 0) return true;
    if (ks->find == KS_FIND_RANGE) {
        int lastkey = ks->fk_a, limit = ks->fk_c;
        if (lastkey >= 0) last = first + lastkey;
        else if (!limit) last = argc + lastkey;
        else last = first + ((argc - first) / limit + lastkey);
        step = ks->fk_b;
    } else {
        if (first + ks->fk_a >= argc) return false;
        long long numkeys;
        robj *count = argv[first + ks->fk_a];
        if (!util_str2ll(count->ptr, sds_len(count->ptr), &numkeys) || numkeys < 0) return false;
        step = ks->fk_c;
        first += ks->fk_b;
        if (numkeys > (argc - first + step - 1) / step) return false;
        last = first + (int)(numkeys - 1) * step;
    }
    /* A spec with no key in these arguments (PFMERGE's sources in "PFMERGE
     * k", numkeys 0) makes the whole command name none, as Redis's key
     * specs do: so ACL DRYRUN of "PFMERGE k" is allowed without key rights
     * (Redis 7.0 and 7.4). */
    if (first >= argc || last < first || last >= argc) return false;
    for (int i = first; i <= last; i += step) {
        if (i >= argc || i < first) {
            /* Variadic commands check their own syntax: no key here. */
            if (cmd->arity < 0) continue;
            return false;
        }
        sink_add(s, i, ks->flags);
    }
    return true;
}

/* SORT [BY p] [LIMIT o c] [GET p ...] [ASC|DESC] [ALPHA] [STORE dst]: the
 * sorted key, and the last STORE's destination (the patterns are not keys
 * a client can route). */
static void sort_keys(const cmd_meta_t *m, robj **argv, int argc, key_sink_t *s) {
    sink_add(s, 1, m->key_specs[0].flags);
    int store = 0;
    for (int i = 2; i < argc; i++) {
        int skip = 0;
        if (arg_is(argv[i], "limit")) skip = 2;
        else if (arg_is(argv[i], "get") || arg_is(argv[i], "by")) skip = 1;
        else if (arg_is(argv[i], "store") && m->nkey_specs > 2) {
            if (i + 1 < argc) store = i + 1;
            skip = 1;
        }
        i += skip;
    }
    if (store) sink_add(s, store, m->key_specs[2].flags);
}

/* MIGRATE host port key|"" db timeout [... KEYS k ...]. */
static void migrate_keys(const cmd_meta_t *m, robj **argv, int argc, key_sink_t *s) {
    for (int i = 6; i < argc; i++) {
        if (arg_is(argv[i], "auth")) i++;
        else if (arg_is(argv[i], "auth2")) i += 2;
        else if (arg_is(argv[i], "keys")) {
            /* The keys are all found here, so not "incomplete" (as Redis). */
            if (sds_len(argv[3]->ptr) == 0)
                for (int j = i + 1; j < argc; j++) sink_add(s, j, m->key_specs[1].flags & ~KSF_INCOMPLETE);
            return;
        }
    }
    sink_add(s, 3, m->key_specs[0].flags);
}

/* GEORADIUS(BYMEMBER) key ... [STORE k | STOREDIST k]: the last one wins. */
static void georadius_keys(const cmd_meta_t *m, robj **argv, int argc, key_sink_t *s) {
    sink_add(s, 1, m->key_specs[0].flags);
    int store = 0;
    for (int i = 2; i + 1 < argc; i++)
        if (arg_is(argv[i], "store") || arg_is(argv[i], "storedist")) store = ++i;
    if (store) sink_add(s, store, m->nkey_specs > 1 ? m->key_specs[1].flags : KSF_OW | KSF_UPDATE);
}

/* SET reads the old value only with GET. */
unsigned cmd_meta_set_key_flags(robj **argv, int argc) {
    for (int i = 3; i < argc; i++)
        if (arg_is(argv[i], "get")) return KSF_RW | KSF_ACCESS | KSF_UPDATE;
    return KSF_OW | KSF_UPDATE;
}

/* BITFIELD only reads when every operation is a GET. */
static unsigned bitfield_key_flags(robj **argv, int argc) {
    for (int i = 2; i < argc; i++) {
        if (arg_is(argv[i], "set") || arg_is(argv[i], "incrby")) return KSF_RW | KSF_ACCESS | KSF_UPDATE;
        if (arg_is(argv[i], "get")) i += 2;
        else if (arg_is(argv[i], "overflow")) i += 1;
    }
    return KSF_RO | KSF_ACCESS;
}

int cmd_meta_get_keys(const command_t *cmd, robj **argv, int argc, cmd_key_ref_t *out, int max) {
    key_sink_t s = {out, max, 0};
    const cmd_meta_t *m = cmd->meta;
    if (!m) {
        if (cmd->first_key <= 0) return 0;
        int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
        for (int i = cmd->first_key; i <= last && i < argc; i += cmd->key_step ? cmd->key_step : 1)
            sink_add(&s, i, 0);
        return s.n;
    }
    const char *name = m->fullname;
    if (!strcmp(name, "sort") || !strcmp(name, "sort_ro")) sort_keys(m, argv, argc, &s);
    else if (!strcmp(name, "set")) sink_add(&s, 1, cmd_meta_set_key_flags(argv, argc));
    else if (!strcmp(name, "bitfield")) sink_add(&s, 1, bitfield_key_flags(argv, argc));
    else if (!strcmp(name, "migrate")) migrate_keys(m, argv, argc, &s);
    else if (!strcmp(name, "georadius") || !strcmp(name, "georadiusbymember")) georadius_keys(m, argv, argc, &s);
    else {
        for (int j = 0; j < m->nkey_specs; j++) {
            const cmd_key_spec_t *ks = &m->key_specs[j];
            if (ks->flags & KSF_NOT_KEY) continue;
            if (!spec_keys(cmd, ks, argv, argc, &s)) return -1;
        }
    }
    return s.n;
}

int cmd_meta_keys_slot(const command_t *cmd, robj **argv, int argc) {
    cmd_key_ref_t local[16], *refs = local;
    int n = cmd_meta_get_keys(cmd, argv, argc, local, 16);
    if (n > 16) {
        refs = zmalloc(sizeof(*refs) * (size_t)n);
        n = cmd_meta_get_keys(cmd, argv, argc, refs, n);
    }
    int slot = -1;
    for (int i = 0; i < n && slot != -2; i++) {
        sds k = argv[refs[i].pos]->ptr;
        int s = (int)crc16_key_slot(k, sds_len(k));
        slot = slot == -1 || slot == s ? s : -2;
    }
    if (refs != local) zfree(refs);
    return slot;
}
