/* aof_load.c: replaying an AOF image into the databases (see aof.h).
 *
 * One file at a time (aof.c walks the manifest: base, then each incr
 * file): an RDB image when it starts with "REDIS" (a base written with
 * aof-use-rdb-preamble), then commands in RESP, replayed through the
 * command table by a client of our own whose replies are dropped.  Lines
 * starting with '#' are annotations (aof-timestamp-enabled's "#TS:")
 * and are skipped.  A file that ends early (a partial last command, a
 * MULTI without its EXEC) is cut back to its last whole command when it
 * is the last file and aof-load-truncated is on; anything else damaged
 * stops the load with the file and offset. */
#include "aof.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "conn.h"
#include "db_views.h"
#include "durability_hooks.h"
#include "keyspace.h"
#include "loading.h"
#include "log.h"
#include "rdb.h"
#include "util.h"

#define AOF_MIN_ARG_BYTES 6 /* "$0\r\n\r\n": the shortest argument in a file */

void aof_cmd_free(aof_cmd_t *cmd) {
    zfree(cmd->off);
    zfree(cmd->len);
    memset(cmd, 0, sizeof(*cmd));
}

/* "<prefix><digits>\r\n" at *pos; TRUNCATED when the line is not complete. */
static int parse_line_num(const unsigned char *buf, size_t len, size_t *pos, char prefix, long long *v) {
    size_t p = *pos;
    if (p >= len) return AOF_PARSE_TRUNCATED;
    if (buf[p] != prefix) return AOF_PARSE_CORRUPT;
    const unsigned char *nl = memchr(buf + p, '\n', len - p);
    if (!nl) {
        /* Digits only so far: a cut-off line, else garbage. */
        for (size_t i = p + 1; i < len; i++)
            if ((buf[i] < '0' || buf[i] > '9') && buf[i] != '\r') return AOF_PARSE_CORRUPT;
        return AOF_PARSE_TRUNCATED;
    }
    size_t end = (size_t)(nl - buf);
    if (end < p + 2 || buf[end - 1] != '\r') return AOF_PARSE_CORRUPT;
    if (!util_str2ll((const char *)buf + p + 1, end - 1 - (p + 1), v) || *v < 0) return AOF_PARSE_CORRUPT;
    *pos = end + 1;
    return AOF_PARSE_OK;
}

int aof_parse_command(const unsigned char *buf, size_t len, size_t *pos, aof_cmd_t *cmd) {
    size_t p = *pos;
    long long argc;
    int rc = parse_line_num(buf, len, &p, '*', &argc);
    if (rc == AOF_PARSE_CORRUPT || (rc == AOF_PARSE_OK && argc < 1)) {
        return AOF_PARSE_CORRUPT;
    }
    if (rc != AOF_PARSE_OK) return rc;
    /* argc sizes two arrays: it must be an int and every argument needs at
     * least "$0\r\n\r\n" in the rest of the file, else the file ends (or
     * was cut) before the command does. */
    if (argc > INT_MAX) return AOF_PARSE_CORRUPT;
    if (!util_count_fits((uint64_t)argc, AOF_MIN_ARG_BYTES, len - p, INT_MAX)) return AOF_PARSE_TRUNCATED;
    if (argc > cmd->cap) {
        cmd->cap = (int)argc;
        cmd->off = zrealloc(cmd->off, sizeof(size_t) * (size_t)argc);
        cmd->len = zrealloc(cmd->len, sizeof(size_t) * (size_t)argc);
    }
    cmd->argc = (int)argc;
    for (long long i = 0; i < argc; i++) {
        long long blen;
        size_t at = p;
        rc = parse_line_num(buf, len, &p, '$', &blen);
        if (rc != AOF_PARSE_OK) {
            if (rc == AOF_PARSE_CORRUPT) *pos = at;
            return rc;
        }
        if ((unsigned long long)blen + 2 > len - p) return AOF_PARSE_TRUNCATED;
        if (buf[p + (size_t)blen] != '\r' || buf[p + (size_t)blen + 1] != '\n') {
            *pos = p + (size_t)blen;
            return AOF_PARSE_CORRUPT;
        }
        cmd->off[i] = p;
        cmd->len[i] = (size_t)blen;
        p += (size_t)blen + 2;
    }
    *pos = p;
    return AOF_PARSE_OK;
}

static client_t *fake_client(server_t *srv) {
    client_t *c = zcalloc(sizeof(*c));
    c->srv = srv;
    c->db = &srv->dbs[0];
    c->fd = -1;
    c->resp = 2;
    /* PENDING_WRITE keeps it off the write list: its replies are dropped. */
    c->flags = CLIENT_AUTHENTICATED | CLIENT_PENDING_WRITE | CLIENT_DENY_BLOCKING | CLIENT_AOF_LOADER;
    return c;
}

static void fake_client_drop_replies(client_t *c) {
    while (c->reply_head) {
        reply_block *b = c->reply_head;
        c->reply_head = b->next;
        zfree(b);
    }
    c->reply_tail = NULL;
    c->reply_bytes = 0;
    c->bufpos = 0;
}

/* Run one parsed command; false for an unknown command or one with the
 * wrong number of arguments (fatal: handlers index argv by their arity, so
 * a damaged file must not reach them; Redis would crash here). */
static bool replay(server_t *srv, client_t *c, const unsigned char *buf, aof_cmd_t *cmd, const char *path,
                   size_t at) {
    robj *argv_stack[16];
    robj **argv = cmd->argc <= 16 ? argv_stack : zmalloc(sizeof(robj *) * (size_t)cmd->argc);
    for (int i = 0; i < cmd->argc; i++) argv[i] = obj_create_string((const char *)buf + cmd->off[i], cmd->len[i]);
    command_t *cc = commands_lookup_argv(srv, argv, cmd->argc); /* subcommands too (XGROUP CREATE) */
    bool ok = cc && cc->proc;
    if (!ok) {
        log_msg(LL_WARNING, "Unknown command '%.64s' reading the append only file %s", (char *)argv[0]->ptr, path);
    } else if (!commands_arity_ok(cc, cmd->argc)) {
        log_msg(LL_WARNING, "Wrong number of arguments for '%s' reading the append only file %s at offset %zu",
                cc->fullname, path, at);
        ok = false;
    } else {
        c->argc = cmd->argc;
        c->argv = argv;
        c->cmd = cc;
        srv->mstime = util_mstime();
        /* Inside MULTI the commands wait for their EXEC, as they did when
         * they ran: a transaction the file does not finish never applies. */
        size_t views_mark = db_views_mark(db_views_of(srv)); /* db_views.h */
        if (!srv->durability_hooks->replay_queue(c, cc)) cc->proc(c);
        db_views_release(srv->views, views_mark);
        c->cmd = NULL;
        c->argv = NULL;
        c->argc = 0;
        fake_client_drop_replies(c);
    }
    for (int i = 0; i < cmd->argc; i++) obj_decref(argv[i]);
    if (argv != argv_stack) zfree(argv);
    return ok;
}

/* The file ends early (a partial last command, or a MULTI without its
 * EXEC): with aof-load-truncated the file is cut at `at`, the last offset
 * that ends a whole command outside a transaction; else loading fails.
 * 1 loaded, -1 fatal. */
static int load_cut(server_t *srv, const char *path, size_t at, bool last_file) {
    if (!last_file) {
        log_msg(LL_WARNING, "Unexpected end of file reading the append only file %s, which is not the last file "
                            "of the AOF: it can't be truncated. Use ./redis-like-check-aof on its manifest.",
                path);
        return -1;
    }
    if (!srv->cfg.aof_load_truncated) {
        log_msg(LL_WARNING, "Unexpected end of file reading the append only file %s. You can: "
                            "1) Make a backup of your AOF file, then use ./redis-like-check-aof --fix <filename>. "
                            "2) Alternatively you can set the 'aof-load-truncated' configuration option to yes "
                            "and restart the server.",
                path);
        return -1;
    }
    log_msg(LL_WARNING, "!!! Warning: short read while loading the AOF file %s!!!", path);
    log_msg(LL_WARNING, "!!! Truncating the AOF at offset %zu !!!", at);
    if (truncate(path, (off_t)at) != 0) {
        log_msg(LL_WARNING, "Error truncating the AOF file: %s", strerror(errno));
        return -1;
    }
    log_msg(LL_WARNING, "AOF loaded anyway because aof-load-truncated is enabled");
    return 1;
}

/* An annotation line ("#TS:1700000000\r\n") at *pos: skipped.  TRUNCATED
 * when its newline is missing (a write cut short). */
int aof_skip_annotation(const unsigned char *buf, size_t len, size_t *pos) {
    const unsigned char *nl = memchr(buf + *pos, '\n', len - *pos);
    if (!nl) return AOF_PARSE_TRUNCATED;
    *pos = (size_t)(nl - buf) + 1;
    return AOF_PARSE_OK;
}

static int load_commands(server_t *srv, const unsigned char *buf, size_t len, size_t pos, const char *path,
                         bool last_file) {
    client_t *c = fake_client(srv);
    aof_cmd_t cmd = {0};
    int result = 1;
    size_t multi_at = 0;   /* offset of the open transaction's MULTI */
    bool ended = true;     /* the loop read the whole file */
    size_t reported = pos; /* bytes told to loading.c (the preamble told its own) */
    while (pos < len) {
        size_t at = pos;
        /* Between two commands, outside a transaction: the clients may be
         * served here (loading.h); a SHUTDOWN meanwhile stops the load. */
        if (loading_active(srv) && !c->mstate) {
            bool go_on = loading_advance(srv, (long long)(pos - reported));
            reported = pos;
            if (!go_on) {
                log_msg(LL_WARNING, "Loading the append only file stopped: the server is shutting down");
                result = -1;
                ended = false;
                break;
            }
        }
        int rc = buf[pos] == '#' ? aof_skip_annotation(buf, len, &pos) : aof_parse_command(buf, len, &pos, &cmd);
        if (rc == AOF_PARSE_OK && buf[at] == '#') continue;
        if (rc == AOF_PARSE_OK) {
            bool in_multi = c->mstate != NULL;
            if (!replay(srv, c, buf, &cmd, path, at)) {
                result = -1;
                ended = false;
                break;
            }
            if (!in_multi && c->mstate) multi_at = at;
            continue;
        }
        if (rc == AOF_PARSE_TRUNCATED) {
            result = load_cut(srv, path, c->mstate ? multi_at : at, last_file);
            ended = false;
            break;
        }
        log_msg(LL_WARNING, "Bad file format reading the append only file %s at offset %zu: make a backup of your "
                            "AOF file, then use ./redis-like-check-aof --fix <filename>",
                path, pos);
        result = -1;
        ended = false;
        break;
    }
    if (ended && c->mstate) {
        log_msg(LL_WARNING, "Revert incomplete MULTI/EXEC transaction in AOF file %s", path);
        result = load_cut(srv, path, multi_at, last_file);
    }
    srv->durability_hooks->replay_end(c); /* an unfinished transaction is dropped, never run */
    aof_cmd_free(&cmd);
    fake_client_drop_replies(c);
    zfree(c);
    return result;
}

int aof_load_buffer(server_t *srv, const unsigned char *buf, size_t len, const char *path) {
    return aof_load_image(srv, buf, len, path, true);
}

int aof_load_image(server_t *srv, const unsigned char *buf, size_t len, const char *path, bool last_file) {
    size_t pos = 0;
    int rc = 1;
    if (len >= 5 && !memcmp(buf, "REDIS", 5)) {
        rdb_load_result_t res;
        if (rdb_load_buffer(srv, buf, len, false, util_mstime(), &res) != 0) {
            log_msg(LL_WARNING, "Error reading the RDB preamble of the AOF file %s: %s", path, res.err);
            rc = -1;
        }
        pos = res.consumed;
    }
    if (rc > 0) rc = load_commands(srv, buf, len, pos, path, last_file);
    return rc;
}
