/* config_rewrite.c: CONFIG REWRITE (see config_rewrite.h).
 *
 * Lines are keyed by directive: its table name (aliases resolve to it), and
 * for client-output-buffer-limit, whose lines each set one client class,
 * the name plus the class.  A directive line is "current" when applying it
 * alone on top of the defaults gives the running value of its key; only
 * non-current lines are reformatted.  "user" lines are ACL users (acl.c):
 * the file's are replaced, in order, by the running users (none when an
 * aclfile holds them), the rest appended.  The new text goes to a temporary file
 * in the same directory, is fsynced, and renamed over the old one, so a
 * crash leaves either the old file or the new one. */
#include "config_rewrite.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "acl.h"
#include "log.h"
#include "reply.h"
#include "zmalloc.h"

#define OBUF_NAME "client-output-buffer-limit"
static const char *const obuf_classes[OBUF_CLASSES] = {"normal", "slave", "pubsub"};

/* A directive's running or default value, as CONFIG GET shows it. */
typedef struct kv {
    const char *name;
    sds cur, def;
    bool seen; /* a line of the file already carries it */
    bool class_seen[OBUF_CLASSES];
} kv;

typedef struct rewrite_state {
    kv *items;
    size_t n, cap;
    const rl_config_t *def_cfg;
    bool force_all; /* DEBUG CONFIG-REWRITE-FORCE-ALL: defaults written too */
    /* "user" lines (acl.c): the file's user lines are replaced in order by
     * these, the rest appended; with an aclfile the file keeps none. */
    sds *users;
    int nusers, users_used;
} rewrite_state;

static void collect(void *arg, const char *name, const char *value) {
    rewrite_state *st = arg;
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        st->items = zrealloc(st->items, st->cap * sizeof(kv));
    }
    kv *it = &st->items[st->n++];
    memset(it, 0, sizeof(*it));
    it->name = name;
    it->cur = sds_dup((sds)value); /* an sds: a password may hold any byte */
    it->def = config_get_value(st->def_cfg, name);
}

static kv *find_kv(rewrite_state *st, const char *name) {
    for (size_t i = 0; i < st->n; i++)
        if (!strcmp(st->items[i].name, name)) return &st->items[i];
    return NULL;
}

static int obuf_class_index(const char *s) {
    if (!strcasecmp(s, "replica")) return 1;
    for (int i = 0; i < OBUF_CLASSES; i++)
        if (!strcasecmp(s, obuf_classes[i])) return i;
    return -1;
}

/* The three numbers of one class inside the full obuf value text. */
static sds obuf_segment(const char *full, int cls) {
    int argc;
    sds *w = sds_splitargs(full, &argc);
    sds out = sds_empty();
    if (w && argc == OBUF_CLASSES * 4)
        out = sds_catprintf(out, "%s %s %s", w[cls * 4 + 1], w[cls * 4 + 2], w[cls * 4 + 3]);
    if (w) sds_free_splitres(w, argc);
    return out;
}

/* Value text as it must appear in a config file: quoted when it holds a
 * quote, a backslash or an unprintable byte, or a space in a value that
 * is one word (a password). */
static sds cat_value(sds s, const sds v, bool one_word) {
    bool plain = sds_len(v) > 0;
    for (size_t i = 0; i < sds_len(v); i++) {
        unsigned char ch = (unsigned char)v[i];
        if (ch == '"' || ch == '\'' || ch == '\\' || !isprint(ch) || (one_word && ch == ' ')) plain = false;
    }
    return plain ? sds_catsds(s, v) : sds_catrepr(s, v, sds_len(v));
}

static sds format_line(const kv *it, int cls) {
    sds line = sds_new(it->name);
    line = sds_cat(line, " ");
    if (cls >= 0) {
        sds seg = obuf_segment(it->cur, cls);
        line = sds_catprintf(line, "%s %s", obuf_classes[cls], seg);
        sds_free(seg);
        return line;
    }
    return cat_value(line, it->cur, config_is_secret(it->name));
}

/* The value argv[1..] gives when applied alone on top of the defaults. */
static sds line_value(const char *name, int argc, sds *argv) {
    rl_config_t tmp;
    config_init_defaults(&tmp);
    char **opts = zmalloc(sizeof(char *) * (size_t)argc);
    sds flag = sds_cat(sds_new("--"), name);
    opts[0] = flag;
    for (int i = 1; i < argc; i++) opts[i] = argv[i];
    sds v = config_load(&tmp, NULL, argc, opts) == 0 ? config_get_value(&tmp, name) : NULL;
    sds_free(flag);
    zfree(opts);
    config_free(&tmp);
    return v;
}

/* Decide the fate of one directive line: kept (returns NULL and *keep),
 * replaced (returns the new text), or dropped (NULL, !*keep). */
static sds rewrite_line(rewrite_state *st, int argc, sds *argv, bool *keep) {
    *keep = true;
    if (!strcasecmp(argv[0], "user")) {
        *keep = false;
        if (st->users_used == st->nusers) return NULL;
        return sds_cat(sds_new("user "), st->users[st->users_used++]);
    }
    const char *name = config_canonical_name(argv[0]);
    kv *it = name ? find_kv(st, name) : NULL;
    if (!it || argc < 2) return NULL; /* unknown to us: leave it alone */
    int cls = -1;
    if (!strcmp(name, OBUF_NAME)) {
        if (argc != 5 || (cls = obuf_class_index(argv[1])) < 0) return NULL;
        if (it->class_seen[cls]) {
            *keep = false;
            return NULL;
        }
        it->class_seen[cls] = true;
    } else {
        if (it->seen) {
            *keep = false;
            return NULL;
        }
        it->seen = true;
    }
    sds was = line_value(name, argc, argv);
    bool current;
    if (was && cls >= 0) {
        sds a = obuf_segment(was, cls), b = obuf_segment(it->cur, cls);
        current = !strcmp(a, b);
        sds_free(a);
        sds_free(b);
    } else {
        current = was && !strcmp(was, it->cur);
    }
    sds_free(was);
    return current ? NULL : format_line(it, cls);
}

static sds read_file(const char *path) {
    sds text = sds_empty();
    FILE *f = fopen(path, "r");
    if (!f) return text; /* a missing file is rewritten from nothing */
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text = sds_catlen(text, buf, n);
    fclose(f);
    return text;
}

static sds rewrite_text(rewrite_state *st, const char *text) {
    sds out = sds_empty();
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sds line = sds_newlen(p, len);
        p += len + (nl ? 1 : 0);
        int argc = 0;
        sds *argv = NULL;
        const char *q = line;
        while (isspace((unsigned char)*q)) q++;
        if (*q && *q != '#') argv = sds_splitargs(line, &argc);
        bool keep = true;
        sds repl = argv && argc > 0 ? rewrite_line(st, argc, argv, &keep) : NULL;
        if (argv) sds_free_splitres(argv, argc);
        if (repl) out = sds_cat(sds_catsds(out, repl), "\n");
        else if (keep) out = sds_cat(sds_catsds(out, line), "\n");
        sds_free(repl);
        sds_free(line);
    }
    return out;
}

/* Directives changed from their defaults that no line carried (with
 * force_all every one with a value: an empty default reads back the same
 * unwritten, and "replicaof" cannot be written empty). */
static sds append_missing(rewrite_state *st, sds out) {
    bool header = false;
    for (size_t i = 0; i < st->n; i++) {
        kv *it = &st->items[i];
        bool obuf = !strcmp(it->name, OBUF_NAME);
        for (int cls = 0; cls < (obuf ? OBUF_CLASSES : 1); cls++) {
            bool differs;
            if (obuf) {
                if (it->class_seen[cls]) continue;
                sds a = obuf_segment(it->cur, cls), b = obuf_segment(it->def, cls);
                differs = strcmp(a, b) != 0 || st->force_all;
                sds_free(a);
                sds_free(b);
            } else {
                if (it->seen) continue;
                differs = strcmp(it->cur, it->def) != 0 || (st->force_all && sds_len(it->cur) > 0);
            }
            if (!differs) continue;
            if (!header) {
                if (sds_len(out) && out[sds_len(out) - 1] != '\n') out = sds_cat(out, "\n");
                out = sds_cat(out, "# Generated by CONFIG REWRITE\n");
                header = true;
            }
            sds line = format_line(it, obuf ? cls : -1);
            out = sds_cat(sds_catsds(out, line), "\n");
            sds_free(line);
        }
    }
    for (; st->users_used < st->nusers; st->users_used++) {
        if (!header) {
            if (sds_len(out) && out[sds_len(out) - 1] != '\n') out = sds_cat(out, "\n");
            out = sds_cat(out, "# Generated by CONFIG REWRITE\n");
            header = true;
        }
        out = sds_cat(sds_cat(sds_cat(out, "user "), st->users[st->users_used]), "\n");
    }
    return out;
}

static int write_atomically(const char *path, const char *data, size_t len) {
    sds tmp = sds_catprintf(sds_empty(), "%s.rewrite-%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = -1;
    if (fd >= 0) {
        size_t off = 0;
        while (off < len) {
            ssize_t n = write(fd, data + off, len - off);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            off += (size_t)n;
        }
        if (off == len && fsync(fd) == 0) rc = 0;
        close(fd);
        if (rc == 0 && rename(tmp, path) != 0) rc = -1;
        if (rc != 0) unlink(tmp);
    }
    sds_free(tmp);
    return rc;
}

int config_rewrite(server_t *srv, bool force_all, const char **err) {
    if (!srv->config_file) {
        *err = "The server is running without a config file";
        return -1;
    }
    rl_config_t def;
    config_init_defaults(&def);
    rewrite_state st = {NULL, 0, 0, &def, force_all};
    config_foreach_match(&srv->cfg, "*", collect, &st);
    if (!srv->cfg.aclfile || !srv->cfg.aclfile[0]) st.users = acl_config_lines(srv, &st.nusers);
    sds text = read_file(srv->config_file);
    sds out = rewrite_text(&st, text);
    out = append_missing(&st, out);
    int rc = write_atomically(srv->config_file, out, sds_len(out));
    if (rc != 0) {
        log_msg(LL_WARNING, "CONFIG REWRITE failed: %s", strerror(errno));
        *err = "Rewriting config file failed";
    }
    sds_free(out);
    sds_free(text);
    for (size_t i = 0; i < st.n; i++) {
        sds_free(st.items[i].cur);
        sds_free(st.items[i].def);
    }
    zfree(st.items);
    if (st.users) sds_free_splitres(st.users, st.nusers);
    config_free(&def);
    return rc;
}

void cmd_config_rewrite(client_t *c) {
    const char *err;
    if (config_rewrite(c->srv, false, &err) != 0) {
        reply_error(c, "%s", err);
        return;
    }
    log_msg(LL_NOTICE, "CONFIG REWRITE executed with success.");
    reply_ok(c);
}
