/* proc_title.c: the process title, as Redis 7.0's set-proc-title and
 * proc-title-template make it: `ps` shows "redis-like-server
 * 127.0.0.1:6379" for the server and "redis-rdb-bgsave ..." for its
 * forked child, where it would otherwise show the command line.
 *
 * Linux shows as a process's command line the block of memory where
 * the kernel put argv's strings, with the environment's strings right
 * after them.  proc_title_init copies both elsewhere (environ and argv[]
 * point at the copies), and the block, argv's part and the environment's
 * part together, is then free to be overwritten with a title.  The block
 * is the process's own, so this module's state is too: one static struct,
 * set once before any thread starts.
 *
 * A template is text with {name} variables; "{{" stands for a literal
 * "{" (a lone "}" is itself).  server.c shows the title with where the
 * server listens (server_set_proc_title); config.c refuses a template
 * that does not expand, by the same function (proc_title_make). */
#include "proc_title.h"

#include <errno.h> /* program_invocation_name */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static struct {
    char *start;   /* the block the kernel shows, NULL until init */
    size_t len;    /* its bytes, the last NUL included */
    char *program; /* argv[0] as run */
    char **env;    /* the environment's new home (kept here too: setenv may move environ off it) */
} area;

/* Where the strings of strs (n of them) that follow each other from end
 * on (each starting right after the previous one's NUL) stop. */
static char *contiguous_end(char *end, char **strs, int n) {
    for (int i = 0; i < n && strs[i]; i++) {
        if (strs[i] != end) break;
        end = strs[i] + strlen(strs[i]) + 1;
    }
    return end;
}

static int count_strings(char **strs) {
    int n = 0;
    while (strs && strs[n]) n++;
    return n;
}

void proc_title_init(int argc, char **argv) {
    if (argc < 1 || !argv[0] || area.start) return;
    char *start = argv[0];
    int nenv = count_strings(environ);
    char *end = contiguous_end(contiguous_end(start, argv, argc), environ, nenv);
    /* Copies first: if one fails, nothing has moved and no title is set.
     * libc's malloc, not zmalloc: the environment is libc's from here on
     * (setenv keeps these strings or moves environ off them), and it is
     * not the dataset's memory that used_memory reports.  A few KB once:
     * INFO counts them among the anonymous pages (rss_allocator on libc). */
    char **env = malloc(sizeof(char *) * (size_t)(nenv + 1));
    char *program = strdup(start);
    bool ok = env && program;
    for (int i = 0; ok && i < nenv; i++) ok = (env[i] = strdup(environ[i])) != NULL;
    char **args = ok ? malloc(sizeof(char *) * (size_t)argc) : NULL;
    ok = args != NULL;
    for (int i = 0; ok && i < argc; i++) ok = (args[i] = strdup(argv[i])) != NULL;
    if (!ok) return; /* out of memory at start-up: no title (the copies made leak, once) */
    env[nenv] = NULL;
    environ = area.env = env;
    for (int i = 0; i < argc; i++) argv[i] = args[i];
    free(args);
    area.start = start;
    area.len = (size_t)(end - start);
    area.program = program;
    /* glibc names the program in its messages through these, which
     * pointed into the block. */
    program_invocation_name = program;
    char *slash = strrchr(program, '/');
    program_invocation_short_name = slash ? slash + 1 : program;
}

const char *proc_title_program(void) { return area.program ? area.program : "redis-like-server"; }

void proc_title_set(const char *title) {
    if (!area.start || area.len < 2) return;
    size_t n = strlen(title);
    if (n > area.len - 1) n = area.len - 1;
    memcpy(area.start, title, n);
    /* Zero the rest: the kernel stops the command line at the end of
     * argv's part when that part ends in a NUL, else at the first NUL. */
    memset(area.start + n, 0, area.len - n);
}

/* The template's variables, as Redis 7.0 names them. */
typedef struct vars {
    const char *title, *listen_addr, *server_mode, *port, *tls_port, *unixsocket, *config_file;
} vars_t;

static const char *lookup(const vars_t *v, const char *name, size_t len) {
    static const struct {
        const char *name;
        size_t off;
    } names[] = {
        {"title", offsetof(vars_t, title)},
        {"listen-addr", offsetof(vars_t, listen_addr)},
        {"server-mode", offsetof(vars_t, server_mode)},
        {"port", offsetof(vars_t, port)},
        {"tls-port", offsetof(vars_t, tls_port)},
        {"unixsocket", offsetof(vars_t, unixsocket)},
        {"config-file", offsetof(vars_t, config_file)},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i].name) == len && !strncmp(names[i].name, name, len))
            return *(const char *const *)((const char *)v + names[i].off);
    return NULL;
}

static sds expand(const char *tpl, const vars_t *v) {
    sds out = sds_empty();
    for (const char *p = tpl; *p;) {
        if (p[0] == '{' && p[1] == '{') { /* an escaped brace */
            out = sds_catlen(out, "{", 1);
            p += 2;
            continue;
        }
        if (*p != '{') {
            size_t n = strcspn(p, "{");
            out = sds_catlen(out, p, n);
            p += n;
            continue;
        }
        const char *close = strchr(p + 1, '}');
        const char *val = close ? lookup(v, p + 1, (size_t)(close - p - 1)) : NULL;
        if (!val) {
            sds_free(out);
            return NULL;
        }
        out = sds_cat(out, val);
        p = close + 1;
    }
    return out;
}

static sds make(const char *tpl, const char *title, const proc_title_place_t *where) {
    char port[24], tls_port[24], listen[512];
    snprintf(port, sizeof(port), "%lld", where->port);
    snprintf(tls_port, sizeof(tls_port), "%lld", where->tls_port);
    const char *sock = where->unixsocket ? where->unixsocket : "";
    if (where->port || where->tls_port)
        snprintf(listen, sizeof(listen), "%s:%lld", where->bind0 ? where->bind0 : "*",
                 where->port ? where->port : where->tls_port);
    else
        snprintf(listen, sizeof(listen), "unixsocket:%s", sock);
    vars_t v = {title, listen, "", port, tls_port, sock, where->config_file ? where->config_file : "-"};
    sds s = expand(tpl, &v);
    if (!s) return NULL;
    size_t len = sds_len(s), lead = strspn(s, " ");
    while (len > lead && s[len - 1] == ' ') len--;
    if (lead == len) sds_clear(s);
    else sds_range(s, (ssize_t)lead, (ssize_t)len - 1);
    return s;
}

sds proc_title_make(const char *tpl, const char *title, const proc_title_place_t *where) {
    /* Redis's check: the template must say something even where {title}
     * says nothing. */
    sds probe = make(tpl, "", where);
    bool blank = !probe || !sds_len(probe);
    sds_free(probe);
    return blank ? NULL : make(tpl, title, where);
}
