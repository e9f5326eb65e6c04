/* check_aof.c: redis-like-check-aof [--fix | --truncate-to-timestamp <t>]
 * <file.manifest | file.aof>: verify an append-only file and, with --fix,
 * cut it back to its last complete command (what a crash in the middle of
 * a write leaves behind).
 *
 * Given a manifest (Redis 7.0's multi-part AOF: the name ends in
 * ".manifest"), every file it names is checked in replay order, base first;
 * only the last file can be fixed or truncated, since a cut anywhere else
 * would drop the commands after it.  --truncate-to-timestamp cuts the AOF
 * before the first "#TS:" annotation later than t (aof-timestamp-enabled),
 * to restore the data as it was at that second.
 *
 * Uses the loader's own parser (aof_parse_command), so "valid" means
 * "redis-like-server would replay it".  A base that is an RDB image is
 * checked with the RDB loader.  Exit code 0 when the AOF is (or was made)
 * valid.  Built by check.mk. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aof.h"
#include "aof_manifest.h"
#include "commands.h"
#include "hooks.h"
#include "keyspace.h"
#include "rdb.h"

typedef struct scan_result {
    size_t good;     /* just past the last complete command */
    size_t bad;      /* offset of the error (or of the truncated command) */
    int state;       /* AOF_PARSE_* */
    long long count; /* complete commands */
    size_t ts_cut;   /* offset of the first annotation later than the timestamp */
    bool ts_found;
} scan_result_t;

/* "#TS:<seconds>" at buf[pos]: its time, or -1 for another annotation. */
static long long annotation_ts(const unsigned char *buf, size_t len, size_t pos) {
    if (len - pos < 5 || memcmp(buf + pos, "#TS:", 4)) return -1;
    char num[24];
    size_t n = 0;
    for (size_t i = pos + 4; i < len && n < sizeof(num) - 1 && buf[i] >= '0' && buf[i] <= '9'; i++)
        num[n++] = (char)buf[i];
    num[n] = '\0';
    return n ? atoll(num) : -1;
}

static void scan(const unsigned char *buf, size_t len, size_t start, long long ts_limit, scan_result_t *res) {
    aof_cmd_t cmd = {0};
    size_t pos = start;
    res->good = start;
    res->state = AOF_PARSE_OK;
    while (pos < len) {
        size_t at = pos;
        int rc;
        if (buf[pos] == '#') {
            long long ts = annotation_ts(buf, len, pos);
            if (ts_limit >= 0 && ts > ts_limit && !res->ts_found) {
                res->ts_found = true;
                res->ts_cut = pos;
            }
            rc = aof_skip_annotation(buf, len, &pos);
        } else {
            rc = aof_parse_command(buf, len, &pos, &cmd);
            if (rc == AOF_PARSE_OK) res->count++;
        }
        if (rc != AOF_PARSE_OK) {
            res->state = rc;
            res->bad = rc == AOF_PARSE_TRUNCATED ? at : pos;
            break;
        }
        res->good = pos;
    }
    aof_cmd_free(&cmd);
}

/* An RDB image at the start of a file: checked, *start past it.  false
 * when it is damaged. */
static bool check_rdb_part(const unsigned char *buf, size_t len, size_t *start) {
    static server_t srv;
    static bool ready;
    if (!ready) {
        config_init_defaults(&srv.cfg);
        hooks_register(&srv); /* the loader calls the layers above through these */
        srv.cfg.databases = 1024;
        obj_create_shared();
        commands_init(&srv);
        ready = true;
    }
    db_init_all(&srv);
    rdb_load_result_t res;
    int rc = rdb_load_buffer(&srv, buf, len, false, 0, &res);
    db_free_all(&srv); /* only checked; see check_rdb.c */
    if (rc != 0) {
        printf("RDB preamble of the AOF file is not valid: %s\n", res.err);
        return false;
    }
    printf("RDB preamble is OK (%lld keys)\n", res.keys);
    *start = res.consumed;
    return true;
}

typedef struct options {
    bool fix;
    long long ts; /* --truncate-to-timestamp, -1 when not given */
} options_t;

/* Check one file; last: the only one that may be fixed or cut.  Returns 0
 * valid (or made so), 1 not. */
static int check_file(const char *path, bool last, const options_t *o) {
    rdb_file_t f;
    if (rdb_file_open(path, &f) != 0) {
        printf("Cannot open file %s: %s\n", path, strerror(errno));
        return 1;
    }
    const unsigned char *buf = f.buf;
    size_t len = f.len, start = 0;
    if (len >= 5 && !memcmp(buf, "REDIS", 5) && !check_rdb_part(buf, len, &start)) {
        rdb_file_close(&f);
        return 1;
    }
    scan_result_t res = {0};
    scan(buf, len, start, o->ts, &res);
    rdb_file_close(&f);
    printf("AOF analyzed: filename=%s, size=%zu, ok_up_to=%zu, ok_up_to_line=%lld commands, diff=%zu\n", path, len,
           res.good, res.count, len - res.good);
    size_t cut = len;
    if (res.state != AOF_PARSE_OK) {
        printf("AOF %s: %s at offset %zu\n", path, res.state == AOF_PARSE_TRUNCATED ? "truncated command" : "format error",
               res.bad);
        if (!o->fix || !last) {
            printf("AOF %s is not valid. %s\n", path,
                   last ? "Use the --fix option to try fixing it." : "It is not the last file: it can't be fixed.");
            return 1;
        }
        cut = res.good;
    }
    if (res.ts_found) {
        if (!last) {
            printf("AOF %s has an annotation later than %lld but is not the last file: can't truncate it.\n", path,
                   o->ts);
            return 1;
        }
        if (res.ts_cut < cut) cut = res.ts_cut;
    }
    if (cut == len) {
        printf("AOF %s is valid\n", path);
        return 0;
    }
    if (truncate(path, (off_t)cut) != 0) {
        printf("Failed to truncate AOF %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("Successfully truncated AOF %s to %zu bytes (%zu bytes discarded)\n", path, cut, len - cut);
    return 0;
}

/* Every file of a manifest, in replay order. */
static int check_manifest(const char *path, const options_t *o) {
    char *copy = strdup(path), *copy2 = strdup(path);
    const char *dir = dirname(copy);
    char *base = basename(copy2);
    base[strlen(base) - strlen(".manifest")] = '\0'; /* appendfilename */
    aof_manifest_t *am = NULL;
    sds err = NULL;
    int rc = aof_manifest_load(dir, base, &am, &err);
    if (rc <= 0) {
        printf("Invalid AOF manifest %s: %s\n", path, rc < 0 ? err : "no such file");
        sds_free(err);
        free(copy);
        free(copy2);
        return 1;
    }
    int n = (am->base ? 1 : 0) + am->nincr, i = 0, bad = 0;
    printf("Start checking Multi Part AOF\n");
    if (am->base) {
        sds p = aof_path(dir, am->base->name);
        printf("Start to check BASE AOF (%s format).\n", strstr(p, ".rdb") ? "RDB" : "AOF");
        bad = check_file(p, ++i == n, o);
        sds_free(p);
    }
    for (int k = 0; k < am->nincr && !bad; k++) {
        sds p = aof_path(dir, am->incr[k]->name);
        printf("Start to check INCR files.\n");
        bad = check_file(p, ++i == n, o);
        sds_free(p);
    }
    if (!bad) printf("All AOF files and manifest are valid\n");
    aof_manifest_free(am);
    free(copy);
    free(copy2);
    return bad;
}

int main(int argc, char **argv) {
    options_t o = {false, -1};
    int i = 1;
    if (argc == 3 && !strcmp(argv[1], "--fix")) {
        o.fix = true;
        i = 2;
    } else if (argc == 4 && !strcmp(argv[1], "--truncate-to-timestamp")) {
        char *end;
        o.ts = strtoll(argv[2], &end, 10);
        if (*end || o.ts < 0) {
            printf("Invalid timestamp %s\n", argv[2]);
            return 1;
        }
        i = 3;
    }
    if (i != argc - 1) {
        fprintf(stderr, "Usage: %s [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>\n", argv[0]);
        return 1;
    }
    const char *path = argv[i];
    size_t plen = strlen(path), slen = strlen(".manifest");
    if (plen > slen && !strcmp(path + plen - slen, ".manifest")) return check_manifest(path, &o);
    return check_file(path, true, &o);
}
