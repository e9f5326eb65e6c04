/* slowlog.c: the slow log (see slowlog.h).
 *
 * A doubly linked list, newest at the head; adding trims the tail down to
 * slowlog-max-len, so a lowered limit takes effect at the next entry (and
 * at SLOWLOG GET).  Entries own copies of their (truncated) arguments: the
 * request's objects are freed right after the command. */
#include "slowlog.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "conn.h"
#include "monitor.h"
#include "reply.h"
#include "zmalloc.h"

#define SLOWLOG_MAX_ARGC 32    /* arguments kept per entry */
#define SLOWLOG_MAX_ARGLEN 128 /* bytes kept per argument */

typedef struct slowlog_entry {
    struct slowlog_entry *prev, *next;
    long long id;
    long long time;     /* unix seconds */
    long long duration; /* microseconds */
    int argc;
    sds *argv;
    sds addr, name;
} slowlog_entry;

struct slowlog {
    slowlog_entry *head, *tail; /* head = newest */
    long long len;
    long long next_id;
};

slowlog_t *slowlog_create(void) { return zcalloc(sizeof(slowlog_t)); }

static void entry_free(slowlog_entry *e) {
    for (int i = 0; i < e->argc; i++) sds_free(e->argv[i]);
    zfree(e->argv);
    sds_free(e->addr);
    sds_free(e->name);
    zfree(e);
}

static void drop_tail(slowlog_t *sl) {
    slowlog_entry *e = sl->tail;
    sl->tail = e->prev;
    if (sl->tail) sl->tail->next = NULL;
    else sl->head = NULL;
    sl->len--;
    entry_free(e);
}

static void trim(slowlog_t *sl, long long max) {
    while (sl->len > max) drop_tail(sl);
}

void slowlog_free(slowlog_t *sl) {
    if (!sl) return;
    trim(sl, 0);
    zfree(sl);
}

/* Copy argv[j], cut to SLOWLOG_MAX_ARGLEN bytes with a note of the rest. */
static sds copy_arg(client_t *c, int j) {
    if (monitor_arg_redacted(c, j)) return sds_new("(redacted)");
    char buf[32];
    size_t len;
    const char *p = obj_string_view(c->argv[j], buf, sizeof(buf), &len);
    if (len <= SLOWLOG_MAX_ARGLEN) return sds_newlen(p, len);
    sds s = sds_newlen(p, SLOWLOG_MAX_ARGLEN);
    return sds_catprintf(s, "... (%zu more bytes)", len - SLOWLOG_MAX_ARGLEN);
}

static slowlog_entry *entry_new(client_t *c, long long duration_us) {
    slowlog_entry *e = zcalloc(sizeof(*e));
    /* Past the limit, the last slot says how many arguments were left out. */
    int argc = c->argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : c->argc;
    e->argv = zmalloc(sizeof(sds) * (size_t)argc);
    for (int j = 0; j < argc; j++) {
        if (argc != c->argc && j == argc - 1)
            e->argv[j] = sds_catprintf(sds_empty(), "... (%d more arguments)", c->argc - argc + 1);
        else
            e->argv[j] = copy_arg(c, j);
    }
    e->argc = argc;
    e->time = c->srv->mstime / 1000;
    e->duration = duration_us;
    e->addr = sds_new(c->addr);
    e->name = c->name ? sds_dup(c->name) : sds_empty();
    return e;
}

void slowlog_record(client_t *c, long long duration_us) {
    server_t *srv = c->srv;
    long long limit = srv->cfg.slowlog_log_slower_than;
    if (limit < 0 || duration_us < limit) return;
    /* EXEC, AUTH...: Redis's SKIP_SLOWLOG commands (EXEC's commands are
     * logged one by one instead) */
    if (c->cmd && (c->cmd->flags & CMD_SKIP_SLOWLOG)) return;
    slowlog_t *sl = srv->slowlog;
    slowlog_entry *e = entry_new(c, duration_us);
    e->id = sl->next_id++;
    e->next = sl->head;
    if (sl->head) sl->head->prev = e;
    else sl->tail = e;
    sl->head = e;
    sl->len++;
    trim(sl, srv->cfg.slowlog_max_len);
}

/* ------------------------------------------------------------ commands */

static void reply_entry(client_t *c, const slowlog_entry *e) {
    reply_array_len(c, 6);
    reply_ll(c, e->id);
    reply_ll(c, e->time);
    reply_ll(c, e->duration);
    reply_array_len(c, e->argc);
    for (int j = 0; j < e->argc; j++) reply_bulk(c, e->argv[j], sds_len(e->argv[j]));
    reply_bulk(c, e->addr, sds_len(e->addr));
    reply_bulk(c, e->name, sds_len(e->name));
}

static void cmd_slowlog_get(client_t *c) {
    slowlog_t *sl = c->srv->slowlog;
    long long count = 10;
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 3) {
        if (!cmd_get_range_or_reply(c, c->argv[2], -1, LONG_MAX, &count,
                                    "count should be greater than or equal to -1"))
            return;
        if (count == -1) count = sl->len;
    }
    trim(sl, c->srv->cfg.slowlog_max_len);
    if (count > sl->len) count = sl->len;
    reply_array_len(c, (long)count);
    const slowlog_entry *e = sl->head;
    for (long long i = 0; i < count; i++, e = e->next) reply_entry(c, e);
}

static void cmd_slowlog_len(client_t *c) {
    trim(c->srv->slowlog, c->srv->cfg.slowlog_max_len);
    reply_ll(c, c->srv->slowlog->len);
}

static void cmd_slowlog_reset(client_t *c) {
    trim(c->srv->slowlog, 0);
    reply_ok(c);
}

static void cmd_slowlog_help(client_t *c) {
    static const char *help[] = {
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        NULL};
    reply_help(c, "SLOWLOG", help);
}

static command_t slowlog_subcommands[] = {
    {"get", cmd_slowlog_get, -2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get the slow log's entries", "2.2.12", NULL},
    {"len", cmd_slowlog_len, 2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Get the slow log's length", "2.2.12", NULL},
    {"reset", cmd_slowlog_reset, 2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Clear all entries from the slow log", "2.2.12", NULL},
    {"help", cmd_slowlog_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "6.2.0", NULL},
    {0},
};

command_t slowlog_commands[] = {
    {"slowlog", NULL, -2, 0, 0, 0, 0, "server", "A container for slow log commands", "2.2.12", slowlog_subcommands},
    {0},
};
