/* fuzz_rdb.c: libFuzzer target for the RDB loader (rdb_load_buffer in
 * src/rdb_load.c), the code the server runs at start-up and
 * redis-like-check-rdb runs on an operator's file.
 *
 * Each input is loaded twice: as it is, the way the server loads a file
 * (a zero or wrong trailer: no checksum vouches for it, every blob is
 * checked deeply); and with a correct CRC-64 trailer appended, so the
 * fuzzer also reaches the trusted path where well-formed blobs are adopted
 * after the shallow checks only, and that path again with
 * sanitize-dump-payload yes.  A file that loads must write back out
 * (rdb_write_dataset) to an image that loads again with the same number of
 * keys: a value the loader accepted but cannot serialise, or serialises
 * into something it refuses, is a bug even if nothing crashed.  Functions
 * are skipped (no scripting engine here, as in the check tool).  Built and
 * run by `make fuzz`; nothing reaches a socket or the disk. */
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "commands.h"
#include "crc64.h"
#include "hooks.h"
#include "keyspace.h"
#include "log.h"
#include "rdb.h"
#include "rio.h"
#include "server.h"

static server_t srv;

static void setup(void) {
    static int done;
    if (done) return;
    done = 1;
    config_init_defaults(&srv.cfg);
    hooks_register(&srv);          /* keyspace.c tells the layers above through these */
    log_set_level(LL_WARNING + 1); /* the loader's warnings would drown libFuzzer's output */
    obj_create_shared();
    db_init_all(&srv);
    commands_init(&srv); /* registers the value types' free functions */
}

static long long empty_all(void) {
    long long n = 0;
    for (int i = 0; i < srv.dbnum; i++) n += db_empty(&srv.dbs[i]);
    return n;
}

/* Save what was loaded and load the image again: same key count or trap. */
static void round_trip(long long keys) {
    rio_t r;
    rio_init_mem(&r, true);
    rdb_save_opts_t opts = {.compress = true, .checksum = true};
    if (rdb_write_dataset(&srv, &r, &opts) != 0) __builtin_trap();
    sds img = rio_take_mem(&r);
    if (empty_all() != keys) __builtin_trap();
    rdb_load_result_t res;
    if (rdb_load_buffer(&srv, (unsigned char *)img, sds_len(img), true, 0, &res) != 0) __builtin_trap();
    if (res.keys != keys || !res.checksum_verified) __builtin_trap();
    sds_free(img);
}

static void load(const unsigned char *p, size_t len) {
    rdb_load_result_t res;
    if (rdb_load_buffer(&srv, p, len, true, 0, &res) == 0) round_trip(res.keys);
    empty_all();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    srv.cfg.sanitize_dump_payload = SANITIZE_NO;
    load(data, size);
    /* The same bytes with a trailer that vouches for them. */
    unsigned char *buf = zmalloc(size + 8);
    memcpy(buf, data, size);
    uint64_t crc = htole64(crc64_update(0, buf, size));
    memcpy(buf + size, &crc, 8);
    for (int mode = 0; mode < 2; mode++) {
        srv.cfg.sanitize_dump_payload = mode ? SANITIZE_YES : SANITIZE_NO;
        load(buf, size + 8);
    }
    zfree(buf);
    return 0;
}
