/* aof_manifest.c: the multi-part AOF's manifest (see aof_manifest.h).
 *
 * The text format is Redis 7.0's, so a directory written by either server
 * loads in the other: one "file <name> seq <n> type <b|h|i>" line per file
 * (keys in any order, unknown keys skipped so a later version's additions
 * do not stop us), base first, then history, then the incr files in replay
 * order. */
#include "aof_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rio.h"
#include "util.h"
#include "zmalloc.h"

#define MANIFEST_MAX_LINE 1024

aof_manifest_t *aof_manifest_create(void) { return zcalloc(sizeof(aof_manifest_t)); }

static aof_file_t *file_new(const char *name, size_t len, long long seq, aof_file_type_t type) {
    aof_file_t *f = zmalloc(sizeof(*f));
    f->name = sds_newlen(name, len);
    f->seq = seq;
    f->type = type;
    return f;
}

static void file_free(aof_file_t *f) {
    if (!f) return;
    sds_free(f->name);
    zfree(f);
}

static aof_file_t *file_dup(const aof_file_t *f) {
    return f ? file_new(f->name, sds_len(f->name), f->seq, f->type) : NULL;
}

static void list_push(aof_file_t ***list, int *n, aof_file_t *f) {
    *list = zrealloc(*list, sizeof(**list) * (size_t)(*n + 1));
    (*list)[(*n)++] = f;
}

/* History is kept most recent first, as Redis lists it. */
static void history_push_front(aof_manifest_t *am, aof_file_t *f) {
    f->type = AOF_FILE_HISTORY;
    am->history = zrealloc(am->history, sizeof(*am->history) * (size_t)(am->nhistory + 1));
    memmove(am->history + 1, am->history, sizeof(*am->history) * (size_t)am->nhistory);
    am->history[0] = f;
    am->nhistory++;
}

static void list_free(aof_file_t **list, int n) {
    for (int i = 0; i < n; i++) file_free(list[i]);
    zfree(list);
}

void aof_manifest_free(aof_manifest_t *am) {
    if (!am) return;
    file_free(am->base);
    list_free(am->incr, am->nincr);
    list_free(am->history, am->nhistory);
    zfree(am);
}

aof_manifest_t *aof_manifest_dup(const aof_manifest_t *am) {
    aof_manifest_t *d = aof_manifest_create();
    d->base = file_dup(am->base);
    for (int i = 0; i < am->nincr; i++) list_push(&d->incr, &d->nincr, file_dup(am->incr[i]));
    for (int i = 0; i < am->nhistory; i++) list_push(&d->history, &d->nhistory, file_dup(am->history[i]));
    d->base_seq = am->base_seq;
    d->incr_seq = am->incr_seq;
    return d;
}

/* ---------------------------------------------------------------- parse */

/* One line's words into a file entry; NULL with *err. */
static aof_file_t *parse_entry(sds *w, int n, const char **err) {
    const char *name = NULL, *type = NULL;
    size_t name_len = 0;
    long long seq = -1;
    if (n < 2 || n % 2) {
        *err = "Invalid AOF manifest file format";
        return NULL;
    }
    for (int i = 0; i < n; i += 2) {
        if (!strcasecmp(w[i], "file")) {
            name = w[i + 1];
            name_len = sds_len(w[i + 1]);
        } else if (!strcasecmp(w[i], "seq")) {
            if (!util_str2ll(w[i + 1], sds_len(w[i + 1]), &seq) || seq < 0) seq = -1;
        } else if (!strcasecmp(w[i], "type")) {
            type = w[i + 1];
        }
    }
    if (!name || !type || seq < 0 || name_len == 0) {
        *err = "Invalid AOF manifest file format";
        return NULL;
    }
    if (memchr(name, '/', name_len)) {
        *err = "File can't be a path, just a filename";
        return NULL;
    }
    if (strlen(type) != 1 || (type[0] != AOF_FILE_BASE && type[0] != AOF_FILE_HISTORY && type[0] != AOF_FILE_INCR)) {
        *err = "Unknown AOF file type";
        return NULL;
    }
    return file_new(name, name_len, seq, (aof_file_type_t)type[0]);
}

/* Place a parsed entry; false with *err when the list would be invalid. */
static bool add_entry(aof_manifest_t *am, aof_file_t *f, const char **err) {
    switch (f->type) {
        case AOF_FILE_BASE:
            if (am->base) {
                *err = "Found duplicate base file information";
                return false;
            }
            am->base = f;
            am->base_seq = f->seq;
            return true;
        case AOF_FILE_INCR:
            if (f->seq <= am->incr_seq) {
                *err = "Found a non-monotonic sequence number";
                return false;
            }
            list_push(&am->incr, &am->nincr, f);
            am->incr_seq = f->seq;
            return true;
        case AOF_FILE_HISTORY:
            list_push(&am->history, &am->nhistory, f);
            return true;
    }
    return false;
}

aof_manifest_t *aof_manifest_parse(const char *text, size_t len, const char **err) {
    aof_manifest_t *am = aof_manifest_create();
    size_t pos = 0;
    if (len == 0) { /* a comment alone is a valid, empty list (as in Redis) */
        *err = "Found an empty AOF manifest";
        goto bad;
    }
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (end - pos > MANIFEST_MAX_LINE) {
            *err = "The AOF manifest file contains too long line";
            goto bad;
        }
        char line[MANIFEST_MAX_LINE + 1];
        memcpy(line, text + pos, end - pos);
        line[end - pos] = '\0';
        pos = nl ? end + 1 : len;
        if (line[0] == '#' || line[0] == '\0' || (line[0] == '\r' && line[1] == '\0')) continue;
        if (!nl) { /* a last line without its newline (cut mid-write): Redis's words for it */
            *err = "The AOF manifest file contains too long line";
            goto bad;
        }
        int n = 0;
        sds *w = sds_splitargs(line, &n);
        aof_file_t *f = w ? parse_entry(w, n, err) : NULL;
        if (!w) *err = "Invalid AOF manifest file format";
        sds_free_splitres(w, n);
        if (!f) goto bad;
        if (!add_entry(am, f, err)) {
            file_free(f);
            goto bad;
        }
    }
    return am;
bad:
    aof_manifest_free(am);
    return NULL;
}

/* ---------------------------------------------------------------- write */

static sds cat_entry(sds s, const aof_file_t *f) {
    s = sds_cat(s, "file ");
    bool plain = sds_len(f->name) > 0;
    for (size_t i = 0; i < sds_len(f->name) && plain; i++) {
        unsigned char ch = (unsigned char)f->name[i];
        plain = ch > ' ' && ch < 127 && ch != '"' && ch != '\'' && ch != '\\';
    }
    s = plain ? sds_catsds(s, f->name) : sds_catrepr(s, f->name, sds_len(f->name));
    return sds_catprintf(s, " seq %lld type %c\n", f->seq, (char)f->type);
}

sds aof_manifest_format(const aof_manifest_t *am) {
    sds s = sds_empty();
    if (am->base) s = cat_entry(s, am->base);
    for (int i = 0; i < am->nhistory; i++) s = cat_entry(s, am->history[i]);
    for (int i = 0; i < am->nincr; i++) s = cat_entry(s, am->incr[i]);
    return s;
}

sds aof_path(const char *dir, const char *name) { return sds_catprintf(sds_empty(), "%s/%s", dir, name); }

static sds manifest_path(const char *dir, const char *appendfilename, bool temp) {
    return sds_catprintf(sds_empty(), "%s/%s%s.manifest", dir, temp ? "temp-" : "", appendfilename);
}

/* The whole of a small file; NULL with errno set. */
static sds read_small_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    sds text = sds_empty();
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            sds_free(text);
            close(fd);
            errno = e;
            return NULL;
        }
        text = sds_catlen(text, chunk, (size_t)n);
    }
    close(fd);
    return text;
}

int aof_manifest_load(const char *dir, const char *appendfilename, aof_manifest_t **out, sds *err) {
    sds path = manifest_path(dir, appendfilename, false);
    sds text = read_small_file(path);
    if (!text) {
        int e = errno;
        if (e != ENOENT) *err = sds_catprintf(sds_empty(), "Can't open the AOF manifest %s: %s", path, strerror(e));
        sds_free(path);
        return e == ENOENT ? 0 : -1;
    }
    const char *why = NULL;
    *out = aof_manifest_parse(text, sds_len(text), &why);
    if (!*out) *err = sds_catprintf(sds_empty(), "%s (%s)", why, path);
    sds_free(text);
    sds_free(path);
    return *out ? 1 : -1;
}

bool aof_manifest_persist(const aof_manifest_t *am, const char *dir, const char *appendfilename) {
    sds tmp = manifest_path(dir, appendfilename, true);
    sds path = manifest_path(dir, appendfilename, false);
    sds text = aof_manifest_format(am);
    bool ok = false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ok = rio_write_all(fd, text, sds_len(text)) == 0 && fsync(fd) == 0;
        int e = errno;
        close(fd);
        ok = ok && rename(tmp, path) == 0;
        if (!ok) {
            e = errno;
            unlink(tmp);
        }
        errno = e;
    }
    if (ok) (void)rio_fsync_dir(path); /* the rename is done; its durability is best effort */
    sds_free(text);
    sds_free(tmp);
    sds_free(path);
    return ok;
}

/* ---------------------------------------------------------------- names */

const char *aof_manifest_new_base(aof_manifest_t *am, const char *appendfilename, bool rdb) {
    if (am->base) history_push_front(am, am->base);
    sds name = sds_catprintf(sds_empty(), "%s.%lld.base.%s", appendfilename, am->base_seq + 1, rdb ? "rdb" : "aof");
    am->base = file_new(name, sds_len(name), ++am->base_seq, AOF_FILE_BASE);
    sds_free(name);
    return am->base->name;
}

void aof_manifest_adopt_base(aof_manifest_t *am, const char *name) {
    file_free(am->base);
    am->base = file_new(name, strlen(name), 1, AOF_FILE_BASE);
    am->base_seq = 1;
}

const char *aof_manifest_new_incr(aof_manifest_t *am, const char *appendfilename) {
    sds name = sds_catprintf(sds_empty(), "%s.%lld.incr.aof", appendfilename, am->incr_seq + 1);
    aof_file_t *f = file_new(name, sds_len(name), ++am->incr_seq, AOF_FILE_INCR);
    sds_free(name);
    list_push(&am->incr, &am->nincr, f);
    return f->name;
}

const char *aof_manifest_last_incr(aof_manifest_t *am, const char *appendfilename) {
    return am->nincr ? am->incr[am->nincr - 1]->name : aof_manifest_new_incr(am, appendfilename);
}

void aof_manifest_retire_incrs(aof_manifest_t *am, bool keep_last) {
    int keep = keep_last && am->nincr > 0 ? 1 : 0;
    for (int i = 0; i < am->nincr - keep; i++) history_push_front(am, am->incr[i]);
    if (keep) am->incr[0] = am->incr[am->nincr - 1];
    am->nincr = keep;
}

void aof_manifest_clear_history(aof_manifest_t *am) {
    list_free(am->history, am->nhistory);
    am->history = NULL;
    am->nhistory = 0;
}

sds aof_manifest_temp_incr_name(const char *appendfilename) {
    return sds_catprintf(sds_empty(), "temp-%s.incr", appendfilename);
}
