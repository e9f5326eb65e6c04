/* script_ldb.c: the Lua debugger's session (see script_ldb.h).
 *
 * Output: everything the debugger says is a log line queued in the
 * session; at each stop (and at the end) the queue leaves as one RESP
 * array of status replies, which redis-cli prints line by line.  Values
 * (print, eval, redis.debug) and replies are shown the way Redis's
 * debugger shows them, and trimmed to `maxlen` bytes (256 by default,
 * never fewer than 60) with a hint, once per session, that says how to
 * see them whole.
 *
 * Input: the prompt reads one RESP array at a time straight from the
 * socket, with the limits of Redis's debugger (1024 arguments of 1 to
 * 1024 bytes); anything else is a protocol error that ends the script.
 * A client that goes away leaves the script to finish on its own, with
 * nothing more logged (the effects of a synchronous session stay).
 *
 * Blocking: the session's reads and writes wait (ldb_io_t).  A synchronous
 * session blocks the whole server, as Redis's does; a forked one blocks
 * only its child. */
#include "script_ldb.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "zmalloc.h"

#define LDB_MAX_BREAKPOINTS 64
#define LDB_MAX_ARGC 1024
#define LDB_MAX_ARG_LEN 1024
#define LDB_MAX_INPUT (1024 * 1024)
#define LDB_DEFAULT_MAXLEN 256
#define LDB_MIN_MAXLEN 60
#define LDB_MAX_DEPTH 10 /* table nesting shown by print and eval */

struct ldb {
    ldb_io_t io;
    bool lost;             /* the client went away: no more stops, no output */
    bool step;             /* stop at the next line */
    bool luabp;            /* redis.breakpoint() asked to stop at the next line */
    bool in_redis;         /* the prompt's `redis` command is running */
    const char *abort_msg; /* abort or a protocol error: the script must end */
    int currentline;
    sds *lines; /* the script's source, lines[0] is line 1 */
    int nlines;
    int bp[LDB_MAX_BREAKPOINTS];
    int bpcount;
    size_t maxlen;  /* 0: unlimited */
    bool hint_sent; /* the trimming hint was shown */
    sds input;      /* bytes read, not yet parsed */
    sds *logs;      /* queued output lines */
    int nlogs, logcap;
    long long resumed_ms; /* when the script last ran on after a stop */
};

/* ------------------------------------------------------------ session */

ldb_t *ldb_new(ldb_io_t io, const char *body, size_t len, sds pending) {
    ldb_t *l = zcalloc(sizeof(*l));
    l->io = io;
    l->step = true; /* the first line stops */
    l->maxlen = LDB_DEFAULT_MAXLEN;
    l->input = pending ? pending : sds_empty();
    const char *p = body, *end = body + len;
    int cap = 16;
    l->lines = zmalloc(sizeof(sds) * (size_t)cap);
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        if (l->nlines == cap) {
            cap *= 2;
            l->lines = zrealloc(l->lines, sizeof(sds) * (size_t)cap);
        }
        l->lines[l->nlines++] = sds_newlen(p, (size_t)(stop - p));
        if (!nl) break;
        p = nl + 1;
    }
    l->resumed_ms = util_monotonic_us() / 1000;
    return l;
}

void ldb_free(ldb_t *l) {
    if (!l) return;
    for (int i = 0; i < l->nlines; i++) sds_free(l->lines[i]);
    zfree(l->lines);
    for (int i = 0; i < l->nlogs; i++) sds_free(l->logs[i]);
    zfree(l->logs);
    sds_free(l->input);
    zfree(l);
}

/* ------------------------------------------------------------ output */

static void log_line(ldb_t *l, sds line) {
    if (l->lost) {
        sds_free(line);
        return;
    }
    if (l->nlogs == l->logcap) {
        l->logcap = l->logcap ? l->logcap * 2 : 16;
        l->logs = zrealloc(l->logs, sizeof(sds) * (size_t)l->logcap);
    }
    l->logs[l->nlogs++] = line;
}

static void log_str(ldb_t *l, const char *s) { log_line(l, sds_new(s)); }

/* A value or reply line: cut at maxlen, with the hint the first time. */
static void log_trimmed(ldb_t *l, sds line) {
    if (l->maxlen && sds_len(line) > l->maxlen) {
        sds_setlen(line, l->maxlen);
        line = sds_cat(line, " ...");
        log_line(l, line);
        if (!l->hint_sent) {
            l->hint_sent = true;
            log_str(l, "<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
        }
        return;
    }
    log_line(l, line);
}

/* The queue as one array of status replies (CR and LF inside a line would
 * break the framing: they become spaces). */
static void send_logs(ldb_t *l) {
    if (l->lost) return;
    sds out = sds_catprintf(sds_empty(), "*%d\r\n", l->nlogs);
    for (int i = 0; i < l->nlogs; i++) {
        sds s = l->logs[i];
        for (size_t j = 0; j < sds_len(s); j++)
            if (s[j] == '\r' || s[j] == '\n') s[j] = ' ';
        out = sds_catlen(out, "+", 1);
        out = sds_catlen(out, s, sds_len(s));
        out = sds_catlen(out, "\r\n", 2);
        sds_free(s);
    }
    l->nlogs = 0;
    if (!l->io.send(l->io.ctx, out, sds_len(out))) l->lost = true;
    sds_free(out);
}

void ldb_end(ldb_t *l) {
    log_str(l, "<endsession>");
    send_logs(l);
}

/* ------------------------------------------------------------ source */

static bool is_breakpoint(const ldb_t *l, int line) {
    for (int i = 0; i < l->bpcount; i++)
        if (l->bp[i] == line) return true;
    return false;
}

/* "->#12  text": the current line's arrow, a breakpoint's mark. */
static void log_source_line(ldb_t *l, int line) {
    const char *text = line >= 1 && line <= l->nlines ? l->lines[line - 1] : "<out of range source code line>";
    const char *arrow = line == l->currentline ? "->" : "  ";
    log_line(l, sds_catprintf(sds_empty(), "%s%c%-3d %s", arrow, is_breakpoint(l, line) ? '#' : ' ', line, text));
}

/* Lines within ctx of `around` (0: every line). */
static void list_source(ldb_t *l, int around, int ctx) {
    for (int j = 1; j <= l->nlines; j++) {
        if (around != 0 && abs(around - j) > ctx) continue;
        log_source_line(l, j);
    }
}

/* ------------------------------------------------------------ values */

static sds cat_value(sds s, lua_State *L, int idx, int depth);

/* A table: "{1; 2}" when its keys are 1..n in order, else "{[k]=v; ...}". */
static sds cat_table(sds s, lua_State *L, int idx, int depth) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    sds as_array = sds_empty(), as_map = sds_empty();
    bool is_array = true;
    lua_Number expected = 1;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (!(lua_type(L, -2) == LUA_TNUMBER && lua_tonumber(L, -2) == expected)) is_array = false;
        expected++;
        as_array = cat_value(as_array, L, -1, depth + 1);
        as_array = sds_cat(as_array, "; ");
        as_map = sds_cat(as_map, "[");
        as_map = cat_value(as_map, L, -2, depth + 1);
        as_map = sds_cat(as_map, "]=");
        as_map = cat_value(as_map, L, -1, depth + 1);
        as_map = sds_cat(as_map, "; ");
        lua_pop(L, 1);
    }
    sds body = is_array ? as_array : as_map;
    if (sds_len(body) >= 2) sds_setlen(body, sds_len(body) - 2); /* the last "; " */
    s = sds_cat(s, "{");
    s = sds_catlen(s, body, sds_len(body));
    s = sds_cat(s, "}");
    sds_free(as_array);
    sds_free(as_map);
    return s;
}

static sds cat_value(sds s, lua_State *L, int idx, int depth) {
    if (depth > LDB_MAX_DEPTH) return sds_cat(s, "<max recursion level reached! Nested table?>");
    switch (lua_type(L, idx)) {
        case LUA_TSTRING: {
            size_t len;
            const char *p = lua_tolstring(L, idx, &len);
            return sds_catrepr(s, p, len);
        }
        case LUA_TNUMBER: return sds_catprintf(s, "%g", (double)lua_tonumber(L, idx));
        case LUA_TBOOLEAN: return sds_cat(s, lua_toboolean(L, idx) ? "true" : "false");
        case LUA_TNIL: return sds_cat(s, "nil");
        case LUA_TTABLE: return cat_table(s, L, idx, depth);
        default: {
            /* functions, userdata, threads: their type and address, quoted */
            char buf[64];
            int n = snprintf(buf, sizeof(buf), "%s@%p", lua_typename(L, lua_type(L, idx)), lua_topointer(L, idx));
            return sds_catrepr(s, buf, (size_t)n);
        }
    }
}

/* ------------------------------------------------------------ replies */

/* One RESP element as the debugger shows it; returns what follows it. */
static const char *cat_reply(sds *s, const char *p, const char *end);

static const char *line_end(const char *p, const char *end) {
    const char *cr = p;
    while (cr + 1 < end && !(cr[0] == '\r' && cr[1] == '\n')) cr++;
    return cr + 1 < end ? cr : NULL;
}

static const char *cat_aggregate(sds *s, const char *p, const char *end, long long n, const char *open,
                                 const char *close, bool pairs) {
    *s = sds_cat(*s, open);
    for (long long i = 0; i < n && p; i++) {
        if (i) *s = sds_cat(*s, ",");
        p = cat_reply(s, p, end);
        if (pairs && p) {
            *s = sds_cat(*s, " => ");
            p = cat_reply(s, p, end);
        }
    }
    *s = sds_cat(*s, close);
    return p;
}

static const char *cat_reply(sds *s, const char *p, const char *end) {
    if (p >= end) return NULL;
    const char *le = line_end(p, end);
    if (!le) return NULL;
    const char *next = le + 2;
    long long n = strtoll(p + 1, NULL, 10);
    switch (*p) {
        case '+':
        case '-': *s = sds_catrepr(*s, p, (size_t)(le - p)); return next;
        case ':': *s = sds_catlen(*s, p + 1, (size_t)(le - p - 1)); return next;
        case '$':
            if (n < 0) {
                *s = sds_cat(*s, "NULL");
                return next;
            }
            if (next + n + 2 > end) return NULL;
            *s = sds_catrepr(*s, next, (size_t)n);
            return next + n + 2;
        case '=': /* verbatim: the text after its "txt:" format */
            if (n < 4 || next + n + 2 > end) return NULL;
            *s = sds_catrepr(*s, next + 4, (size_t)n - 4);
            return next + n + 2;
        case '*':
        case '>':
            if (n < 0) {
                *s = sds_cat(*s, "NULL");
                return next;
            }
            return cat_aggregate(s, next, end, n, "[", "]", false);
        case '~': return cat_aggregate(s, next, end, n, "~(", ")", false);
        case '%': return cat_aggregate(s, next, end, n, "{", "}", true);
        case '|': { /* attributes: shown, then the value they describe */
            sds ignored = sds_empty();
            next = cat_aggregate(&ignored, next, end, n, "", "", true);
            sds_free(ignored);
            return next ? cat_reply(s, next, end) : NULL;
        }
        case '_': *s = sds_cat(*s, "(null)"); return next;
        case ',':
            *s = sds_cat(*s, "(double) ");
            *s = sds_catlen(*s, p + 1, (size_t)(le - p - 1));
            return next;
        case '(':
            *s = sds_cat(*s, "(bignum) ");
            *s = sds_catlen(*s, p + 1, (size_t)(le - p - 1));
            return next;
        case '#': *s = sds_cat(*s, p[1] == 't' ? "#true" : "#false"); return next;
        default: return NULL;
    }
}

/* ------------------------------------------------------------ logging API */

bool ldb_logs_calls(const ldb_t *l) { return !l->lost && (l->step || l->in_redis); }

void ldb_log_command(ldb_t *l, sds args) {
    log_line(l, sds_catlen(sds_new("<redis> "), args, sds_len(args)));
    sds_free(args);
}

void ldb_log_error(ldb_t *l, const char *msg) { log_line(l, sds_catprintf(sds_empty(), "<error> %s", msg)); }

void ldb_log_reply(ldb_t *l, const char *p, size_t len) {
    const char *end = p + len;
    if (len > 0 && p[0] == '-') {
        const char *le = line_end(p, end);
        sds e = sds_new("<error> ");
        log_line(l, sds_catlen(e, p, le ? (size_t)(le - p) : len));
    }
    sds s = sds_new("<reply> ");
    cat_reply(&s, p, end);
    log_trimmed(l, s);
}

/* The line is the script's current one (also when eval's code calls it),
 * and the values are not trimmed: both as Redis's debugger has them. */
void ldb_log_debug(ldb_t *l, lua_State *L) {
    sds s = sds_catprintf(sds_empty(), "<debug> line %d: ", l->currentline);
    int argc = lua_gettop(L);
    for (int i = 1; i <= argc; i++) {
        if (i > 1) s = sds_cat(s, ", ");
        s = cat_value(s, L, i, 1);
    }
    log_line(l, s);
}

void ldb_request_break(ldb_t *l) { l->luabp = true; }

/* ------------------------------------------------------------ input */

enum { PARSE_MORE,
       PARSE_DONE,
       PARSE_ERROR };

/* One "*N\r\n$len\r\ndata\r\n..." array off l->input into argv. */
static int parse_command(ldb_t *l, sds **argv, int *argc) {
    const char *p = l->input, *end = p + sds_len(l->input);
    if (p == end) return PARSE_MORE;
    if (*p != '*') return PARSE_ERROR;
    const char *le = line_end(p, end);
    if (!le) return sds_len(l->input) > 32 ? PARSE_ERROR : PARSE_MORE;
    long long n = strtoll(p + 1, NULL, 10);
    if (n <= 0 || n > LDB_MAX_ARGC) return PARSE_ERROR;
    p = le + 2;
    sds *args = zcalloc(sizeof(sds) * (size_t)n);
    int got = 0, rc = PARSE_DONE;
    for (; got < n; got++) {
        if (p == end) {
            rc = PARSE_MORE;
            break;
        }
        if (*p != '$') {
            rc = PARSE_ERROR;
            break;
        }
        le = line_end(p, end);
        if (!le) {
            rc = end - p > 32 ? PARSE_ERROR : PARSE_MORE;
            break;
        }
        long long len = strtoll(p + 1, NULL, 10);
        if (len <= 0 || len > LDB_MAX_ARG_LEN) {
            rc = PARSE_ERROR;
            break;
        }
        if (le + 2 + len + 2 > end) {
            rc = PARSE_MORE;
            break;
        }
        if (le[2 + len] != '\r' || le[3 + len] != '\n') { /* a bulk longer than it said */
            rc = PARSE_ERROR;
            break;
        }
        args[got] = sds_newlen(le + 2, (size_t)len);
        p = le + 2 + len + 2;
    }
    if (rc != PARSE_DONE) {
        for (int i = 0; i < got; i++) sds_free(args[i]);
        zfree(args);
        return rc;
    }
    sds_range(l->input, p - l->input, -1); /* empty when all of it was taken */
    *argv = args;
    *argc = (int)n;
    return PARSE_DONE;
}

/* Wait for the next command: PARSE_DONE, PARSE_ERROR, or PARSE_MORE when
 * the client is gone. */
static int read_command(ldb_t *l, sds **argv, int *argc) {
    for (;;) {
        int rc = parse_command(l, argv, argc);
        if (rc != PARSE_MORE) return rc;
        if (sds_len(l->input) > LDB_MAX_INPUT) return PARSE_ERROR;
        char buf[4096];
        long n = l->io.recv(l->io.ctx, buf, sizeof(buf));
        if (n <= 0) return PARSE_MORE; /* closed or failed */
        l->input = sds_catlen(l->input, buf, (size_t)n);
    }
}

/* ------------------------------------------------------------ commands */

static bool is_cmd(const char *arg, const char *shortname, const char *longname) {
    return !strcasecmp(arg, shortname) || !strcasecmp(arg, longname);
}

static void cmd_help(ldb_t *l) {
    static const char *const lines[] = {
        "Redis Lua debugger help:",
        "[h]elp               Show this help.",
        "[s]tep               Run current line and stop again.",
        "[n]ext               Alias for step.",
        "[c]ontinue           Run till next breakpoint.",
        "[l]ist               List source code around current line.",
        "[l]ist [line]        List source code around [line].",
        "                     line = 0 means: current position.",
        "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
        "                     to show before/after [line].",
        "[w]hole              List all source code. Alias for 'list 1 1000000'.",
        "[p]rint              Show all the local variables.",
        "[p]rint <var>        Show the value of the specified variable.",
        "                     Can also show global vars KEYS and ARGV.",
        "[b]reak              Show all breakpoints.",
        "[b]reak <line>       Add a breakpoint to the specified line.",
        "[b]reak -<line>      Remove breakpoint from the specified line.",
        "[b]reak 0            Remove all breakpoints.",
        "[t]race              Show a backtrace.",
        "[e]val <code>        Execute some Lua code (in a different callframe).",
        "[r]edis <cmd>        Execute a Redis command.",
        "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
        "                     Specifying zero as <len> means unlimited.",
        "[a]bort              Stop the execution of the script. In sync",
        "                     mode dataset changes will be retained.",
        "",
        "Debugger functions you can call from Lua scripts:",
        "redis.debug()        Produce logs in the debugger console.",
        "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
        "                     next line of code.",
        NULL};
    for (int i = 0; lines[i]; i++) log_str(l, lines[i]);
}

static void cmd_list(ldb_t *l, sds *argv, int argc) {
    int around = l->currentline, ctx = 5;
    if (argc > 1) {
        int num = atoi(argv[1]);
        if (num > 0) around = num;
    }
    if (argc > 2) ctx = atoi(argv[2]);
    list_source(l, around, ctx);
}

static void cmd_maxlen(ldb_t *l, sds *argv, int argc) {
    if (argc == 2) {
        long v = atol(argv[1]);
        if (v != 0 && v <= LDB_MIN_MAXLEN) v = LDB_MIN_MAXLEN;
        l->maxlen = (size_t)v;
    }
    if (l->maxlen) log_line(l, sds_catprintf(sds_empty(), "<value> replies are truncated at %zu bytes.", l->maxlen));
    else log_str(l, "<value> replies are unlimited.");
}

static bool add_breakpoint(ldb_t *l, int line) {
    if (line <= 0 || line > l->nlines || is_breakpoint(l, line) || l->bpcount == LDB_MAX_BREAKPOINTS) return false;
    l->bp[l->bpcount++] = line;
    return true;
}

static bool del_breakpoint(ldb_t *l, int line) {
    for (int i = 0; i < l->bpcount; i++) {
        if (l->bp[i] != line) continue;
        memmove(l->bp + i, l->bp + i + 1, sizeof(int) * (size_t)(l->bpcount - i - 1));
        l->bpcount--;
        return true;
    }
    return false;
}

static void cmd_break(ldb_t *l, sds *argv, int argc) {
    if (argc == 1) {
        if (l->bpcount == 0) {
            log_str(l, "No breakpoints set. Use 'b <line>' to add one.");
            return;
        }
        log_line(l, sds_catprintf(sds_empty(), "%i breakpoints set:", l->bpcount));
        for (int i = 0; i < l->bpcount; i++) log_source_line(l, l->bp[i]);
        return;
    }
    for (int i = 1; i < argc; i++) {
        char *endp;
        long line = strtol(argv[i], &endp, 10);
        if (endp == argv[i] || *endp) {
            log_line(l, sds_catprintf(sds_empty(), "Invalid argument:'%s'", argv[i]));
        } else if (line > 0) {
            if (add_breakpoint(l, (int)line)) list_source(l, (int)line, 1);
            else log_str(l, "Wrong line number.");
        } else if (line < 0) {
            log_str(l, del_breakpoint(l, (int)-line) ? "Breakpoint removed." : "No breakpoint in the specified line.");
        } else {
            l->bpcount = 0;
            log_str(l, "All breakpoints removed.");
        }
    }
}

/* Locals of the running function whose names are not Lua's internals
 * ("(for index)" and the like). */
static void cmd_print(ldb_t *l, lua_State *L, const char *name) {
    lua_Debug ar;
    bool found = false;
    if (lua_getstack(L, 0, &ar)) {
        const char *var;
        for (int i = 1; (var = lua_getlocal(L, &ar, i)) != NULL; i++) {
            if (var[0] == '(' || (name && strcmp(var, name))) {
                lua_pop(L, 1);
                continue;
            }
            sds s = name ? sds_new("<value> ") : sds_catprintf(sds_empty(), "<value> %s = ", var);
            log_trimmed(l, cat_value(s, L, -1, 1));
            lua_pop(L, 1);
            found = true;
            if (name) return;
        }
    }
    if (found) return;
    if (name && (!strcmp(name, "KEYS") || !strcmp(name, "ARGV"))) {
        lua_getfield(L, LUA_GLOBALSINDEX, name);
        log_trimmed(l, cat_value(sds_new("<value> "), L, -1, 1));
        lua_pop(L, 1);
        return;
    }
    log_str(l, name ? "No such variable." : "No local variables in the current context.");
}

static void cmd_trace(ldb_t *l, lua_State *L) {
    lua_Debug ar;
    bool first = true;
    for (int level = 0; lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "Snl", &ar);
        if (strcmp(ar.source, "@user_script")) continue;
        log_line(l, sds_catprintf(sds_empty(), "%s %s:", first ? "In" : "From", ar.name ? ar.name : "top level"));
        log_source_line(l, ar.currentline);
        first = false;
    }
}

static sds join_args(sds *argv, int argc, int from) {
    sds s = sds_empty();
    for (int i = from; i < argc; i++) {
        if (i > from) s = sds_catlen(s, " ", 1);
        s = sds_catlen(s, argv[i], sds_len(argv[i]));
    }
    return s;
}

/* The text of a Lua error value: a string, or an error table's err. */
static sds error_text(lua_State *L) {
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        sds s = sds_new(lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error");
        lua_pop(L, 1);
        return s;
    }
    return sds_new(lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error");
}

/* `eval <code>`: as an expression first ("return <code>"), else as
 * statements, in a frame of its own over the script's globals. */
static void cmd_eval(ldb_t *l, lua_State *L, sds *argv, int argc) {
    sds code = join_args(argv, argc, 1);
    sds expr = sds_catlen(sds_new("return "), code, sds_len(code));
    if (luaL_loadbuffer(L, expr, sds_len(expr), "@ldb_eval")) {
        lua_pop(L, 1);
        if (luaL_loadbuffer(L, code, sds_len(code), "@ldb_eval")) {
            sds e = error_text(L);
            log_line(l, sds_catprintf(sds_empty(), "<error> %s", e));
            sds_free(e);
            lua_pop(L, 1);
            sds_free(expr);
            sds_free(code);
            return;
        }
    }
    sds_free(expr);
    sds_free(code);
    if (lua_pcall(L, 0, 1, 0)) {
        sds e = error_text(L);
        log_line(l, sds_catprintf(sds_empty(), "<error> %s", e));
        sds_free(e);
    } else {
        log_trimmed(l, cat_value(sds_new("<retval> "), L, -1, 1));
    }
    lua_pop(L, 1);
}

/* `redis <cmd> ...`: through redis.call, which logs the call and reply. */
static void cmd_redis(ldb_t *l, lua_State *L, sds *argv, int argc) {
    /* redis.call and its arguments: room for them first (Lua guarantees
     * only 20 free slots; pushing past them writes beyond the stack) */
    if (!lua_checkstack(L, argc + 1)) {
        ldb_log_error(l, "max lua stack reached");
        return;
    }
    l->in_redis = true;
    /* redis.call as the script sees it, looked up in its globals: the
     * debugger sits below the engine and reaches up only through Lua */
    lua_getglobal(L, "redis");
    lua_getfield(L, -1, "call");
    lua_remove(L, -2);
    for (int i = 1; i < argc; i++) lua_pushlstring(L, argv[i], sds_len(argv[i]));
    lua_pcall(L, argc - 1, 1, 0); /* an error was logged by redis.call */
    lua_pop(L, 1);
    l->in_redis = false;
}

enum { REPL_RESUME,
       REPL_ABORT,
       REPL_PROTOCOL };

/* The prompt, until a command resumes the script. */
static int repl(ldb_t *l, lua_State *L) {
    for (;;) {
        send_logs(l);
        sds *argv = NULL;
        int argc = 0;
        int rc = read_command(l, &argv, &argc);
        if (rc == PARSE_ERROR) return REPL_PROTOCOL;
        if (rc == PARSE_MORE) { /* gone: the script runs on alone */
            l->lost = true;
            l->step = l->luabp = false;
            l->bpcount = 0;
            return REPL_RESUME;
        }
        int result = -1;
        const char *c = argv[0];
        if (is_cmd(c, "h", "help")) cmd_help(l);
        else if (is_cmd(c, "s", "step") || is_cmd(c, "n", "next")) {
            l->step = true;
            result = REPL_RESUME;
        } else if (is_cmd(c, "c", "continue")) result = REPL_RESUME;
        else if (is_cmd(c, "t", "trace")) cmd_trace(l, L);
        else if (is_cmd(c, "m", "maxlen")) cmd_maxlen(l, argv, argc);
        else if (is_cmd(c, "b", "break")) cmd_break(l, argv, argc);
        else if (is_cmd(c, "e", "eval")) cmd_eval(l, L, argv, argc);
        else if (is_cmd(c, "a", "abort")) result = REPL_ABORT;
        else if (is_cmd(c, "l", "list")) cmd_list(l, argv, argc);
        else if (is_cmd(c, "w", "whole")) list_source(l, 1, 1000000);
        else if (argc > 1 && is_cmd(c, "r", "redis")) cmd_redis(l, L, argv, argc);
        else if (argc <= 2 && is_cmd(c, "p", "print")) cmd_print(l, L, argc == 2 ? argv[1] : NULL);
        else log_str(l, "<error> Unknown Redis Lua debugger command or wrong number of arguments.");
        for (int i = 0; i < argc; i++) sds_free(argv[i]);
        zfree(argv);
        if (result >= 0) return result;
    }
}

/* ------------------------------------------------------------ the hook */

const char *ldb_hook_stop(ldb_t *l, lua_State *L, lua_Debug *ar, long long busy_ms) {
    /* Raised again at every event: a pcall in the script cannot keep it. */
    if (l->abort_msg) return l->abort_msg;
    if (l->lost) return NULL;
    lua_getinfo(L, "Sl", ar);
    if (strcmp(ar->source, "@user_script")) return NULL; /* eval's own code, or a C function */
    l->currentline = ar->currentline;
    const char *reason = NULL;
    if (ar->event == LUA_HOOKLINE) {
        if (is_breakpoint(l, ar->currentline)) reason = "break point";
        else if (l->luabp) reason = "redis.breakpoint() called";
        else if (l->step) reason = "step over";
    } else if (ar->event == LUA_HOOKCOUNT && util_monotonic_us() / 1000 - l->resumed_ms >= busy_ms) {
        reason = "timeout reached, infinite loop?";
    }
    if (!reason) return NULL;
    l->step = l->luabp = false;
    log_line(l, sds_catprintf(sds_empty(), "* Stopped at %d, stop reason = %s", l->currentline, reason));
    list_source(l, l->currentline, 0);
    int rc = repl(l, L);
    l->resumed_ms = util_monotonic_us() / 1000;
    if (rc == REPL_ABORT) l->abort_msg = "ERR script aborted for user request";
    else if (rc == REPL_PROTOCOL) l->abort_msg = "ERR protocol error";
    return l->abort_msg;
}
