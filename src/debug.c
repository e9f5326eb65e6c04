/* debug.c: the DEBUG command, behind `enable-debug-command`.
 *
 * Redis 7.0's default is `no`: DEBUG is refused unless the setting (which
 * only a config file or the command line can change) is `yes`, or `local`
 * and the client came over a Unix socket or the loopback interface.  The
 * subcommands are those that tools and client test suites send: SEGFAULT
 * (crash.c's report), SLEEP
 * (parsed as leniently as Redis parses it: hiredis sends DEBUG SLEEP 0),
 * ERROR, POPULATE, RELOAD, LOADAOF, OBJECT, DIGEST and DIGEST-VALUE
 * (digest.h), PROTOCOL, LOG, SET-ACTIVE-EXPIRE, LISTPACK,
 * QUICKLIST-PACKED-THRESHOLD (validated; lists here never use plain nodes),
 * LISTPACK-SAFETY-LIMIT (ours: lowers the 1 GB bound of packed encodings),
 * LAZYFREE-PAUSE (ours: holds the lazy-free thread so tests need no timing),
 * HTSTATS (Redis's sections and table sizes, with our table's own figures
 * in place of chain lengths), TTL-INDEX (ours: the index of keys with a
 * TTL, ttl_index.h),
 * DEFRAG-PASS (ours: one defrag pass moving every block, defrag.h),
 * CHANGE-REPL-ID (no replication IDs to change yet), HELP.  Anything else
 * gets Redis's unknown-subcommand error, as JMAP and STRINGMATCH-LEN do on
 * Redis 7.0.15.  DEBUG is one command with its subcommand in argv[1], as
 * in Redis (COMMAND INFO lists no subcommands for it). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commands.h"
#include "cluster_bus.h"
#include "config.h"
#include "config_rewrite.h"
#include "listpack.h"
#include "defrag.h"
#include "db_entry.h"
#include "digest.h"
#include "function.h"
#include "io_engine.h"
#include "keyspace.h"
#include "lazyfree.h"
#include "loading.h"
#include "log.h"
#include "object.h"
#include "quicklist.h"
#include "persist.h"
#include "reply.h"
#include "server.h"
#include "ttl_index.h"
#include "util.h"

/* DEBUG SLEEP <seconds>: strtod without checks, like Redis ("abc" is 0). */
static void debug_sleep(client_t *c) {
    double secs = strtod(c->argv[2]->ptr, NULL);
    if (secs > 0) usleep((useconds_t)(secs * 1e6));
    reply_ok(c);
}

/* DEBUG SEGFAULT: a write to a read-only page, the crash a bug would
 * cause (crash.c's report, then death by SIGSEGV). */
static void debug_segfault(client_t *c) {
    (void)c;
    /* Memory outside zmalloc: one read-only page never made resident. */
    volatile char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) *page = 'x';
}

/* DEBUG ERROR <text>: the text as the whole error line, no code added. */
static void debug_error(client_t *c) {
    reply_error_raw(c, c->argv[2]->ptr, sds_len(c->argv[2]->ptr));
}

/* DEBUG OBJECT <key>: a key past its TTL is still shown (as Redis, no
 * lookup expires it: a replica holds such keys until its master's DEL). */
static void debug_object(client_t *c) {
    db_entry *de = db_find(c->db, c->argv[2]->ptr);
    robj view, *o = de ? db_entry_val(de, &view) : NULL;
    if (!o) {
        reply_error(c, RL_ERR_NO_KEY);
        return;
    }
    char buf[512];
    /* An embedded value lives in its key's entry: that is where it is. */
    void *at = obj_is_embedded(o) ? (void *)de : (void *)o;
    int n = snprintf(buf, sizeof(buf),
                     "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%u lru_seconds_idle:%llu", at,
                     obj_is_embedded(o) ? 1 : o->refcount, obj_encoding_name_of(o),
                     o->type == OBJ_STRING ? obj_string_len(o) + 1 : 0, o->lru, obj_idle_ms(o) / 1000);
    if (o->encoding == OBJ_ENCODING_QUICKLIST) { /* Redis's quicklist figures */
        const quicklist *ql = o->ptr;
        snprintf(buf + n, sizeof(buf) - (size_t)n,
                 " ql_nodes:%lu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d ql_uncompressed_size:%zu",
                 ql->len, ql->len ? (double)ql->count / (double)ql->len : 0.0, ql->fill, ql->compress != 0,
                 ql_raw_bytes(ql));
    }
    reply_simple(c, buf);
}

/* DEBUG POPULATE <count> [<prefix>] [<size>]: string keys prefix:N with
 * "value:N" (zero-padded or cut to size); keys that exist are kept. */
static void debug_populate(client_t *c) {
    long long count, size = 0;
    if (!obj_get_ll(c->argv[2], &count) || count < 0) {
        reply_error(c, "value is out of range, must be positive");
        return;
    }
    if (c->argc == 5 && (!obj_get_ll(c->argv[4], &size) || size < 0)) {
        reply_error(c, "value is out of range, must be positive");
        return;
    }
    const char *prefix = c->argc >= 4 ? c->argv[3]->ptr : "key";
    for (long long i = 0; i < count; i++) {
        sds name = sds_catprintf(sds_empty(), "%s:%lld", prefix, i);
        robj *key = obj_create_from_sds(name);
        if (!db_lookup_read(c->db, key, LOOKUP_NOTOUCH | LOOKUP_NOSTATS)) {
            char text[64];
            int n = snprintf(text, sizeof(text), "value:%lld", i);
            robj *val;
            if (size == 0) {
                val = obj_create_string(text, (size_t)n);
            } else {
                sds v = sds_newlen(NULL, (size_t)size); /* zero-filled */
                memcpy(v, text, (size_t)(n < size ? n : size));
                val = obj_create_stored_string(v, (size_t)size); /* embedded when short */
                sds_free(v);
            }
            db_add(c->db, key, val); /* takes val */
        }
        obj_decref(key);
    }
    reply_ok(c);
}

/* DEBUG RELOAD [NOSAVE] [NOFLUSH] [MERGE]: save the RDB, empty the
 * databases, load the file again.  NOSAVE loads the file as it is;
 * NOFLUSH keeps what is in memory, so that a key or library the file
 * holds too fails the load, or with MERGE replaces the one in memory.  A
 * load failed by a duplicate key stops there, the keys before it loaded
 * (Redis 7.0 aborts the server on a duplicate key). */
static void debug_reload(client_t *c) {
    server_t *srv = c->srv;
    bool save = true, flush = true, merge = false;
    for (int j = 2; j < c->argc; j++) {
        const char *opt = c->argv[j]->ptr;
        if (!strcasecmp(opt, "nosave")) save = false;
        else if (!strcasecmp(opt, "noflush")) flush = false;
        else if (!strcasecmp(opt, "merge")) merge = true;
        else {
            reply_error(c, "DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    if (save && persist_save(srv) != 0) {
        reply_error(c, "ERR");
        return;
    }
    /* everything the file holds goes first, the function libraries too
     * (as Redis empties them): else loading them back fails as duplicates */
    if (flush) {
        for (int i = 0; i < srv->dbnum; i++) db_empty(&srv->dbs[i]);
        functions_flush(srv);
    }
    if (!persist_reload_rdb(srv, merge)) {
        reply_error(c, "Error trying to load the RDB dump");
        return;
    }
    log_msg(LL_NOTICE, "DB reloaded by DEBUG RELOAD");
    reply_ok(c);
}

/* DEBUG LOADAOF: the AOF's files replayed into emptied databases (Redis
 * exits when they do not load; we reply an error and keep running, the
 * databases holding what loaded). */
static void debug_loadaof(client_t *c) {
    if (!persist_reload_aof(c->srv)) {
        reply_error(c, "Error trying to load the AOF files, check server logs.");
        return;
    }
    log_msg(LL_WARNING, "Append Only File loaded by DEBUG LOADAOF");
    reply_ok(c);
}

/* DEBUG CONFIG-REWRITE-FORCE-ALL: CONFIG REWRITE writing every directive,
 * defaults too (a file that must read back to the same configuration). */
static void debug_config_rewrite_force_all(client_t *c) {
    const char *err;
    if (config_rewrite(c->srv, true, &err) != 0) {
        reply_error(c, "CONFIG-REWRITE-FORCE-ALL failed: %s", err);
        return;
    }
    reply_ok(c);
}

/* DEBUG SET-DISABLE-DENY-SCRIPTS <0|1>: scripts may call the commands
 * scripts may not call (CLIENT LIST in a loop, Redis's tests do so). */
static void debug_set_disable_deny_scripts(client_t *c) {
    c->srv->scripts_call_anything = atoi(c->argv[2]->ptr) != 0;
    reply_ok(c);
}

/* DEBUG SET-ACTIVE-EXPIRE <0|1>: read as atoi reads it ("x" is 0). */
static void debug_set_active_expire(client_t *c) {
    c->srv->active_expire_off = atoi(c->argv[2]->ptr) == 0;
    reply_ok(c);
}

static void debug_drop_cluster_packets(client_t *c) {
    long long type;
    if (!obj_get_ll(c->argv[2], &type) || type < INT_MIN || type > INT_MAX) {
        reply_error(c, "value is not an integer or out of range");
        return;
    }
    cluster_bus_set_drop_type(c->srv, (int)type);
    reply_ok(c);
}

static void debug_clusterlink(client_t *c) {
    if (strcasecmp(c->argv[2]->ptr, "kill")) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (!c->srv->cluster) {
        reply_error(c, "Debug option only available for cluster mode enabled setup!");
        return;
    }
    const char *dir = c->argv[3]->ptr, *name = c->argv[4]->ptr;
    cluster_node_t *n = cluster_lookup_node(c->srv->cluster, name, sds_len(c->argv[4]->ptr));
    if (!n) {
        reply_error(c, "Unknown node %s", name);
        return;
    }
    bool all = !strcasecmp(dir, "all"), to = all || !strcasecmp(dir, "to"), from = all || !strcasecmp(dir, "from");
    if (!to && !from) {
        reply_error(c, "Unknown direction %s", dir);
        return;
    }
    cluster_bus_kill_links(c->srv, n, to, from);
    reply_ok(c);
}

static void debug_quicklist_threshold(client_t *c) {
    unsigned long long bytes;
    if (!util_memtoull(c->argv[2]->ptr, &bytes) || bytes > (1ULL << 32)) {
        reply_error(c, "argument must be a memory value bigger than 1 and smaller than 4gb");
        return;
    }
    reply_ok(c);
}

/* DEBUG LISTPACK-SAFETY-LIMIT <bytes> (ours): lower the 1 GB bound of
 * packed encodings (0 restores it), so that tests replay CVE-2021-32627/
 * 32628's multi-GB elements with a few MB. */
static void debug_listpack_safety_limit(client_t *c) {
    unsigned long long bytes;
    if (!util_memtoull(c->argv[2]->ptr, &bytes) || bytes > LP_SAFETY_SIZE) {
        reply_error(c, "argument must be a memory value of at most 1gb (0: the default)");
        return;
    }
    lp_set_safety_limit((size_t)bytes);
    reply_ok(c);
}

static void debug_listpack(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[2], LOOKUP_NOTOUCH | LOOKUP_NOSTATS);
    if (!o) {
        reply_error(c, RL_ERR_NO_KEY);
        return;
    }
    if (o->encoding != OBJ_ENCODING_LISTPACK) {
        reply_error(c, "Not a listpack encoded object.");
        return;
    }
    log_msg(LL_NOTICE, "DEBUG LISTPACK %s: %zu bytes",
            c->srv->cfg.hide_user_data_from_log ? "*redacted*" : (char *)c->argv[2]->ptr, obj_mem_usage(o, 0));
    reply_simple(c, "Listpack structure printed on stdout");
}

/* DEBUG LAZYFREE-PAUSE <0|1>: hold the lazy-free thread (1) or let it go
 * (0), so a test can see a big value queued but not yet freed. */
static void debug_lazyfree_pause(client_t *c) {
    const char *v = c->argv[2]->ptr;
    if (strcmp(v, "0") && strcmp(v, "1")) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    if (!lazyfree_pause(c->srv->lazyfree, v[0] == '1')) {
        reply_error(c, "ERR no lazy-free thread");
        return;
    }
    reply_ok(c);
}

/* DEBUG DEFRAG-PASS: one active-defrag pass now with every block moved
 * (defrag.h); replies the blocks moved. */
static void debug_defrag_pass(client_t *c) {
    long long moved = defrag_debug_pass(c->srv);
    if (moved < 0) {
        reply_error(c, "ERR an active defrag cycle is running");
        return;
    }
    reply_ll(c, moved);
}

/* DEBUG TTL-INDEX [AUTO|ALWAYS|NEVER]: with no argument, the state of
 * the current db's index of keys with a TTL (ttl_index.h), checked
 * against the keys table; with one, force it on or off on every db (tests
 * and benchmarks) or give the decision back to the thresholds. */
static void debug_ttl_index(client_t *c) {
    if (c->argc == 3) {
        static const char *modes[] = {"auto", "always", "never"};
        for (int m = 0; m < 3; m++) {
            if (strcasecmp(c->argv[2]->ptr, modes[m])) continue;
            ttl_index_set_mode(c->srv, m);
            reply_ok(c);
            return;
        }
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    char buf[256];
    ttl_index_describe(c->db, buf, sizeof(buf));
    reply_bulk_cstr(c, buf);
}

/* One table of a keys table, in Redis's layout; our table has buckets of
 * HT_BUCKET_SLOTS slots where Redis has chains, so those figures replace
 * Redis's chain-length lines. */
static sds table_stats(sds s, const ht *t, int i) {
    size_t buckets = t->exp[i] < 0 ? 0 : (size_t)1 << t->exp[i];
    s = sds_catprintf(s, "Hash table %d stats (%s):\n", i, i == 0 ? "main hash table" : "rehashing target");
    if (t->used[i] == 0) return sds_cat(s, "No stats available for empty dictionaries\n");
    return sds_catprintf(s,
                         " table size: %zu\n number of elements: %zu\n buckets: %zu of %d bytes, %d slots each\n"
                         " buckets marked ever-full: %zu\n",
                         buckets * HT_BUCKET_SLOTS, t->used[i], buckets, HT_BUCKET_BYTES, HT_BUCKET_SLOTS,
                         t->everfull[i]);
}

/* DEBUG HTSTATS <dbid>: the db's keys table (both tables while it
 * resizes: "rehashing target" is the new one) and its keys with a TTL,
 * whose expire times live in the keys table's entries, not in a table of
 * their own. */
static void debug_htstats(client_t *c) {
    long long id;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &id, NULL)) return;
    if (id < 0 || id >= c->srv->dbnum) {
        reply_error(c, "ERR Out of range database");
        return;
    }
    const db_t *db = &c->srv->dbs[id];
    sds s = table_stats(sds_new("[Dictionary HT]\n"), db->keys, 0);
    if (ht_is_resizing(db->keys)) s = table_stats(s, db->keys, 1);
    s = sds_cat(s, "[Expires HT]\nHash table 0 stats (main hash table):\n");
    if (db->expires_count == 0) s = sds_cat(s, "No stats available for empty dictionaries\n");
    else s = sds_catprintf(s, " number of elements: %zu (their expire times are in the keys table)\n", db->expires_count);
    reply_verbatim(c, s, sds_len(s), "txt");
    sds_free(s);
}

/* DEBUG DIGEST: the whole data set's fingerprint (digest.h), as Redis's
 * status reply of 40 hex digits. */
static void debug_digest(client_t *c) {
    unsigned char d[DIGEST_LEN];
    char hex[2 * DIGEST_LEN + 1];
    digest_dataset(c->srv, d);
    digest_hex(d, hex);
    reply_simple(c, hex);
}

/* DEBUG DIGEST-VALUE <key>...: each value's fingerprint, all zeroes for a
 * missing key; a key past its TTL still counts (no lookup expires it). */
static void debug_digest_value(client_t *c) {
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        unsigned char d[DIGEST_LEN] = {0};
        char hex[2 * DIGEST_LEN + 1];
        db_entry *de = db_find(c->db, c->argv[j]->ptr);
        robj view;
        if (de) digest_value(db_entry_val(de, &view), db_entry_expire(de), d);
        digest_hex(d, hex);
        reply_simple(c, hex);
    }
}

/* DEBUG PROTOCOL <type>: one reply of each RESP type, Redis's fixed
 * values, for client libraries to test their parsers against. */
static void debug_protocol(client_t *c) {
    const char *name = c->argv[2]->ptr;
    if (!strcasecmp(name, "string")) {
        reply_bulk_cstr(c, "Hello World");
    } else if (!strcasecmp(name, "integer")) {
        reply_ll(c, 12345);
    } else if (!strcasecmp(name, "double")) {
        reply_double(c, 3.141);
    } else if (!strcasecmp(name, "bignum")) {
        reply_big_number(c, "1234567999999999999999999999999999999", 37);
    } else if (!strcasecmp(name, "null")) {
        reply_null(c);
    } else if (!strcasecmp(name, "array") || !strcasecmp(name, "set")) {
        if (!strcasecmp(name, "set")) reply_set_len(c, 3);
        else reply_array_len(c, 3);
        for (int j = 0; j < 3; j++) reply_ll(c, j);
    } else if (!strcasecmp(name, "map")) {
        reply_map_len(c, 3);
        for (int j = 0; j < 3; j++) {
            reply_ll(c, j);
            reply_bool(c, j == 1);
        }
    } else if (!strcasecmp(name, "attrib")) {
        if (c->resp >= 3) { /* an attribute only annotates the reply after it */
            reply_attribute_len(c, 1);
            reply_bulk_cstr(c, "key-popularity");
            reply_array_len(c, 2);
            reply_bulk_cstr(c, "key:123");
            reply_ll(c, 90);
        }
        reply_bulk_cstr(c, "Some real reply following the attribute");
    } else if (!strcasecmp(name, "push")) {
        if (c->resp < 3) {
            reply_error(c, "RESP2 is not supported by this command");
            return;
        }
        unsigned was = reply_push_begin(c); /* a push, then the reply the client waits for */
        reply_push_len(c, 2);
        reply_bulk_cstr(c, "server-cpu-usage");
        reply_ll(c, 42);
        reply_push_end(c, was);
        reply_bulk_cstr(c, "Some real reply following the push reply");
    } else if (!strcasecmp(name, "true") || !strcasecmp(name, "false")) {
        reply_bool(c, !strcasecmp(name, "true"));
    } else if (!strcasecmp(name, "verbatim")) {
        reply_verbatim(c, "This is a verbatim\nstring", 25, "txt");
    } else {
        reply_error(c, "Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
}

/* DEBUG LOG <message>: a line in the log, to mark a point in it. */
static void debug_log(client_t *c) {
    log_msg(LL_WARNING, "DEBUG LOG: %s", (char *)c->argv[2]->ptr);
    reply_ok(c);
}

static void debug_help(client_t *c) {
    static const char *help[] = {
        "CLUSTERLINK KILL <to|from|all> <node-id>", "    Close our link to the node (to), its link to us (from), or both.",
        "CHANGE-REPL-ID", "    Change the replication IDs of the instance (none here yet: a no-op).",
        "CONFIG-REWRITE-FORCE-ALL", "    Like CONFIG REWRITE but writes all configuration options, including defaults.",
        "DEFRAG-PASS", "    Run one active-defrag pass now, moving every block; reply the blocks moved.",
        "DIGEST", "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]", "    Output a hex signature of the values of all the specified keys.",
        "DROP-CLUSTER-PACKET-FILTER <packet-type>", "    Drop all cluster bus messages of that type. -1 drops none.",
        "ERROR <string>", "    Return a Redis protocol error with <string> as message.",
        "HTSTATS <dbid>", "    Return hash table statistics of the specified database.",
        "LAZYFREE-PAUSE <0|1>", "    Hold (1) or release (0) the lazy-free thread; big frees queue while held.",
        "LOADAOF", "    Flush the AOF buffers on disk and reload the AOF in memory.",
        "LISTPACK <key>", "    Show low level info about the listpack encoding of <key>.",
        "LOG <message>", "    Write <message> to the server log.",
        "OBJECT <key>", "    Show low level info about the key and associated value.",
        "POPULATE <count> [<prefix>] [<size>]", "    Create <count> string keys named key:<num> (or <prefix>:<num>).",
        "PROTOCOL <type>", "    Reply with a test value of the specified type: string|integer|double|bignum|null|",
        "    array|set|map|attrib|push|verbatim|true|false.",
        "LISTPACK-SAFETY-LIMIT <bytes>", "    Lower the 1gb bound of packed encodings, for tests (0: the default).",
        "QUICKLIST-PACKED-THRESHOLD <size>", "    Check a plain-node threshold (lists here never use plain nodes).",
        "RELOAD [MERGE] [NOFLUSH] [NOSAVE]", "    Save the RDB on disk and reload it back to memory. By default the current dataset",
        "    is emptied first. MERGE: keys and libraries of the file replace those in memory.",
        "    NOFLUSH: keep the current dataset. NOSAVE: load the file as it is on disk.",
        "SEGFAULT", "    Crash the server with sigsegv.",
        "SET-ACTIVE-EXPIRE <0|1>", "    Stop (0) or resume (1) expiring keys in the background.",
        "SET-DISABLE-DENY-SCRIPTS <0|1>", "    Let scripts call (1) the commands scripts may not call, or not (0).",
        "SLEEP <seconds>", "    Stop the server for <seconds>. Decimals allowed.",
        "TTL-INDEX [AUTO|ALWAYS|NEVER]", "    Show (or force) the index of the current db's keys with a TTL.", NULL};
    reply_help(c, "DEBUG", help);
}

typedef struct debug_sub {
    const char *name;
    void (*fn)(client_t *c);
    int min_argc, max_argc; /* including DEBUG and the subcommand; max -1: any */
} debug_sub;

static const debug_sub subs[] = {
    {"help", debug_help, 2, 2},
    {"sleep", debug_sleep, 3, 3},
    {"segfault", debug_segfault, 2, 2},
    {"error", debug_error, 3, 3},
    {"digest", debug_digest, 2, 2},
    {"digest-value", debug_digest_value, 2, -1},
    {"protocol", debug_protocol, 3, 3},
    {"log", debug_log, 3, 3},
    {"object", debug_object, 3, 3},
    {"populate", debug_populate, 3, 5},
    {"reload", debug_reload, 2, 5},
    {"loadaof", debug_loadaof, 2, 2},
    {"set-active-expire", debug_set_active_expire, 3, 3},
    {"drop-cluster-packet-filter", debug_drop_cluster_packets, 3, 3},
    {"clusterlink", debug_clusterlink, 5, 5},
    {"set-disable-deny-scripts", debug_set_disable_deny_scripts, 3, 3},
    {"config-rewrite-force-all", debug_config_rewrite_force_all, 2, 2},
    {"quicklist-packed-threshold", debug_quicklist_threshold, 3, 3},
    {"listpack", debug_listpack, 3, 3},
    {"listpack-safety-limit", debug_listpack_safety_limit, 3, 3},
    {"lazyfree-pause", debug_lazyfree_pause, 3, 3},
    {"change-repl-id", reply_ok, 2, 2},
    {"ttl-index", debug_ttl_index, 2, 3},
    {"htstats", debug_htstats, 3, 3},
    {"defrag-pass", debug_defrag_pass, 2, 2},
};

/* The subcommands that read or change the keyspace: refused while a load
 * serves the clients (loading.h), where DEBUG itself may run as in Redis. */
static bool touches_keys(const char *name) {
    static const char *const names[] = {"digest", "digest-value", "object", "populate", "reload", "loadaof",
                                        "listpack", "htstats", "defrag-pass", "ttl-index"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcasecmp(name, names[i])) return true;
    return false;
}

static void cmd_debug(client_t *c) {
    /* enable-debug-command was checked by the dispatcher (CMD_PROTECTED). */
    const char *name = c->argv[1]->ptr;
    if (loading_active(c->srv) && touches_keys(name)) {
        reply_error(c, LOADING_ERR);
        return;
    }
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        if (strcasecmp(name, subs[i].name) || c->argc < subs[i].min_argc ||
            (subs[i].max_argc >= 0 && c->argc > subs[i].max_argc)) continue;
        subs[i].fn(c);
        return;
    }
    reply_subcommand_syntax_error(c);
}

command_t debug_commands[] = {
    {"debug", cmd_debug, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_PROTECTED, 0, 0, 0, "server", "A container for debugging commands", "1.0.0", NULL},
    {0},
};
