/* check_aof.c: redis-like-check-aof [--fix] <file.aof>: verify an
 * append-only file and, with --fix, cut it back to its last complete
 * command (what a crash in the middle of a write leaves behind).
 *
 * Uses the loader's own parser (aof_parse_command), so "valid" means
 * "redis-like-server would replay it".  An RDB preamble is checked with the
 * RDB loader.  Exit code 0 when the file is (or was made) valid.  Built by
 * check.mk. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aof.h"
#include "commands.h"
#include "hooks.h"
#include "keyspace.h"
#include "rdb.h"

/* Offset just past the last complete command; *bad the offset of a
 * format error (or of the truncated command). */
static size_t scan(const unsigned char *buf, size_t len, size_t start, size_t *bad, int *state, long long *count) {
    aof_cmd_t cmd = {0};
    size_t pos = start, good = start;
    *state = AOF_PARSE_OK;
    while (pos < len) {
        size_t at = pos;
        int rc = aof_parse_command(buf, len, &pos, &cmd);
        if (rc != AOF_PARSE_OK) {
            *state = rc;
            *bad = rc == AOF_PARSE_TRUNCATED ? at : pos;
            break;
        }
        good = pos;
        (*count)++;
    }
    aof_cmd_free(&cmd);
    return good;
}

int main(int argc, char **argv) {
    bool fix = argc == 3 && !strcmp(argv[1], "--fix");
    if (argc != 2 && !fix) {
        fprintf(stderr, "Usage: %s [--fix] <file.aof>\n", argv[0]);
        return 1;
    }
    const char *path = argv[argc - 1];
    rdb_file_t f;
    if (rdb_file_open(path, &f) != 0) {
        printf("Cannot open file %s: %s\n", path, strerror(errno));
        return 1;
    }
    const unsigned char *buf = f.buf;
    size_t len = f.len;
    size_t start = 0;
    if (len >= 5 && !memcmp(buf, "REDIS", 5)) {
        static server_t srv;
        config_init_defaults(&srv.cfg);
        hooks_register(&srv); /* the loader calls the layers above through these */
        srv.cfg.databases = 1024;
        obj_create_shared();
        db_init_all(&srv);
        commands_init(&srv);
        rdb_load_result_t res;
        int rc = rdb_load_buffer(&srv, buf, len, false, 0, &res);
        db_free_all(&srv); /* only checked; see check_rdb.c */
        if (rc != 0) {
            printf("RDB preamble of the AOF file is not valid: %s\n", res.err);
            rdb_file_close(&f);
            return 1;
        }
        printf("RDB preamble is OK (%lld keys)\n", res.keys);
        start = res.consumed;
    }
    size_t bad = 0;
    int state;
    long long count = 0;
    size_t good = scan(buf, len, start, &bad, &state, &count);
    rdb_file_close(&f);
    printf("AOF analyzed: filename=%s, size=%zu, ok_up_to=%zu, ok_up_to_line=%lld commands, diff=%zu\n", path, len,
           good, count, len - good);
    if (state == AOF_PARSE_OK) {
        printf("AOF %s is valid\n", path);
        return 0;
    }
    printf("AOF %s: %s at offset %zu\n", path, state == AOF_PARSE_TRUNCATED ? "truncated command" : "format error",
           bad);
    if (!fix) {
        printf("AOF %s is not valid. Use the --fix option to try fixing it.\n", path);
        return 1;
    }
    if (truncate(path, (off_t)good) != 0) {
        printf("Failed to truncate AOF %s: %s\n", path, strerror(errno));
        return 1;
    }
    printf("Successfully truncated AOF %s to %zu bytes (%zu bytes discarded)\n", path, good, len - good);
    return 0;
}
