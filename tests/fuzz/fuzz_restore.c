/* fuzz_restore.c: libFuzzer target for RESTORE's payload path (dump.c and
 * rdb_load.c's value reader).
 *
 * The input is taken two ways: as a whole payload (footer included), which
 * mostly exercises the version/CRC gate; and as a value body to which a
 * correct footer is appended, so the checksum passes and the fuzzer reaches
 * the RDB value decoders, listpack/intset/ziplist validation and adoption,
 * both as a client's payload and with sanitize-dump-payload yes.  A value
 * that loads is written back out (DUMP) and freed.  Built and run by `make
 * fuzz` (clang's -fsanitize=fuzzer,address,undefined) against the server's
 * own sources; the input never reaches a socket. */
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "commands.h"
#include "conn.h"
#include "crc64.h"
#include "dump.h"
#include "hooks.h"
#include "keyspace.h"
#include "rdb.h"
#include "server.h"

static server_t srv;
static client_t caller; /* RESTORE's caller: no ACL user, so no skip-sanitize-payload */

static void setup(void) {
    static int done;
    if (done) return;
    done = 1;
    config_init_defaults(&srv.cfg);
    hooks_register(&srv); /* keyspace.c tells the layers above through these */
    caller.srv = &srv;
    obj_create_shared();
    db_init_all(&srv);
    commands_init(&srv); /* registers the value types' free functions */
}

static void try_payload(const unsigned char *p, size_t len) {
    if (!dump_payload_verify(p, len)) return;
    char err[256];
    robj *o = dump_payload_load(&caller, p, len, err);
    if (!o) return;
    sds again = dump_payload_create(&srv, o); /* a loaded value must write back */
    if (!dump_payload_verify((unsigned char *)again, sds_len(again))) __builtin_trap();
    sds_free(again);
    obj_decref(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    try_payload(data, size);
    /* The same bytes as a value with a valid footer. */
    unsigned char *buf = zmalloc(size + 10);
    memcpy(buf, data, size);
    buf[size] = RDB_VERSION & 0xff;
    buf[size + 1] = 0;
    uint64_t crc = htole64(crc64_update(0, buf, size + 2));
    memcpy(buf + size + 2, &crc, 8);
    for (int mode = 0; mode < 2; mode++) {
        srv.cfg.sanitize_dump_payload = mode ? SANITIZE_YES : SANITIZE_NO;
        try_payload(buf, size + 10);
    }
    zfree(buf);
    return 0;
}
