/* test_rdb_load.c: the RDB loader (rdb_load_buffer in src/rdb_load.c) on
 * images built byte by byte: a valid file loads its keys and expiries, every
 * truncation is an error (never a crash or a silent partial success), a bad
 * header is refused, a RESIZEDB hint that announces billions of keys
 * sizes nothing beyond what the file can hold, and an empty blob that ends
 * the image is never read past (found by tests/fuzz/fuzz_aof.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commands.h"
#include "hooks.h"
#include "keyspace.h"
#include "rdb.h"
#include "test_help.h"
#include "zmalloc.h"

typedef struct {
    unsigned char b[4096];
    size_t n;
} img_t;

static void put(img_t *m, const void *p, size_t n) {
    memcpy(m->b + m->n, p, n);
    m->n += n;
}
static void put_byte(img_t *m, unsigned v) { m->b[m->n++] = (unsigned char)v; }
static void put_str(img_t *m, const char *s) { /* 6-bit length strings only */
    put_byte(m, (unsigned)strlen(s));
    put(m, s, strlen(s));
}

/* Header, one aux field, db 0 with a RESIZEDB hint, `keys`, EOF and a zero
 * checksum (meaning "not computed", as with rdbchecksum no). */
static void build(img_t *m, unsigned resize_hint_32bit, bool huge_hint) {
    m->n = 0;
    put(m, "REDIS0010", 9);
    put_byte(m, RDB_OPCODE_AUX);
    put_str(m, "redis-ver");
    put_str(m, "7.0.15");
    put_byte(m, RDB_OPCODE_SELECTDB);
    put_byte(m, 0);
    put_byte(m, RDB_OPCODE_RESIZEDB);
    if (huge_hint) {
        put_byte(m, RDB_32BITLEN);
        unsigned char be[4] = {(unsigned char)(resize_hint_32bit >> 24), (unsigned char)(resize_hint_32bit >> 16),
                               (unsigned char)(resize_hint_32bit >> 8), (unsigned char)resize_hint_32bit};
        put(m, be, 4);
    } else {
        put_byte(m, 2);
    }
    put_byte(m, 1); /* one key with an expiry */
    put_byte(m, RDB_OPCODE_EXPIRETIME_MS);
    long long when = 4102444800000LL; /* 2100-01-01, little-endian */
    put(m, &when, 8);
    put_byte(m, RDB_TYPE_STRING);
    put_str(m, "k1");
    put_str(m, "hello");
    put_byte(m, RDB_TYPE_STRING);
    put_str(m, "k2");
    put_byte(m, 0xC0); /* integer-encoded string, 8 bits */
    put_byte(m, 42);
    put_byte(m, RDB_OPCODE_EOF);
    unsigned char zero[8] = {0};
    put(m, zero, 8);
}

static server_t *new_server(void) {
    server_t *srv = zcalloc(sizeof(*srv));
    config_init_defaults(&srv->cfg);
    hooks_register(srv); /* keyspace.c tells the layers above through these */
    db_init_all(srv);
    commands_init(srv);
    return srv;
}

static void free_server(server_t *srv) {
    db_free_all(srv);
    commands_free(srv);
    config_free(&srv->cfg);
    zfree(srv);
}

static int test_valid_image_loads(void) {
    server_t *srv = new_server();
    img_t m;
    build(&m, 0, false);
    rdb_load_result_t res;
    int rc = rdb_load_buffer(srv, m.b, m.n, true, 0, &res);
    if (rc != 0) fprintf(stderr, "  %s\n", res.err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(res.keys, 2);
    CHECK_EQ_INT(res.version, 10);
    CHECK_EQ_INT(db_size(&srv->dbs[0]), 2);
    robj *k = obj_create_string("k2", 2);
    robj *v = db_lookup_read(&srv->dbs[0], k, 0);
    long long n = 0;
    CHECK(v && obj_get_ll(v, &n) && n == 42);
    obj_decref(k);
    free_server(srv);
    return 0;
}

static int test_every_truncation_fails(void) {
    img_t m;
    build(&m, 0, false);
    for (size_t cut = 0; cut < m.n - 8; cut++) {
        server_t *srv = new_server();
        rdb_load_result_t res;
        int rc = rdb_load_buffer(srv, m.b, cut, true, 0, &res);
        free_server(srv);
        if (rc != -1) {
            fprintf(stderr, "  cut at %zu loaded\n", cut);
            CHECK_EQ_INT(rc, -1);
        }
        CHECK(res.err[0] != '\0');
    }
    return 0;
}

static int test_bad_header_refused(void) {
    server_t *srv = new_server();
    img_t m;
    build(&m, 0, false);
    memcpy(m.b, "RADIS", 5);
    rdb_load_result_t res;
    CHECK_EQ_INT(rdb_load_buffer(srv, m.b, m.n, true, 0, &res), -1);
    build(&m, 0, false);
    memcpy(m.b + 5, "9999", 4); /* a version from the future */
    CHECK_EQ_INT(rdb_load_buffer(srv, m.b, m.n, true, 0, &res), -1);
    free_server(srv);
    return 0;
}

static int test_resizedb_hint_is_bounded(void) {
    /* 0xFFFFFFF0 keys announced in a file that holds two: the table must be
     * sized by what the file can hold, not by the hint. */
    server_t *srv = new_server();
    img_t m;
    build(&m, 0xFFFFFFF0u, true);
    size_t before = zmalloc_used_memory();
    rdb_load_result_t res;
    int rc = rdb_load_buffer(srv, m.b, m.n, true, 0, &res);
    if (rc != 0) fprintf(stderr, "  %s\n", res.err);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(res.keys, 2);
    CHECK(zmalloc_used_memory() - before < 1024 * 1024);
    free_server(srv);
    return 0;
}

/* The image ends exactly where an unmapped page begins, so a read one
 * byte past it faults in any build, not only under ASan. */
static unsigned char *at_page_end(const unsigned char *p, size_t n, size_t *map_len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + page, page, PROT_NONE) != 0) abort();
    *map_len = 2 * page;
    memcpy(map + page - n, p, n);
    return map + page - n;
}

static int test_empty_blob_at_end_is_not_read_past(void) {
    /* Each blob-encoded type (and a stream's node key), then a zero length
     * as the file's last byte: an error, without touching the next byte. */
    static const unsigned types[] = {RDB_TYPE_SET_INTSET, RDB_TYPE_HASH_LISTPACK, RDB_TYPE_ZSET_LISTPACK,
                                     RDB_TYPE_SET_LISTPACK, RDB_TYPE_HASH_ZIPLIST, RDB_TYPE_LIST_ZIPLIST,
                                     RDB_TYPE_STREAM_LISTPACKS};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        img_t m = {.n = 0};
        put(&m, types[i] == RDB_TYPE_SET_LISTPACK ? "REDIS0011" : "REDIS0010", 9);
        put_byte(&m, types[i]);
        put_str(&m, "k");
        if (types[i] == RDB_TYPE_STREAM_LISTPACKS) put_byte(&m, 1); /* one node, its key blob empty */
        put_byte(&m, 0);
        size_t map_len;
        unsigned char *p = at_page_end(m.b, m.n, &map_len);
        server_t *srv = new_server();
        rdb_load_result_t res;
        int rc = rdb_load_buffer(srv, p, m.n, true, 0, &res);
        free_server(srv);
        munmap(p - ((uintptr_t)p % (uintptr_t)sysconf(_SC_PAGESIZE)), map_len);
        if (rc != -1) fprintf(stderr, "  type %u loaded\n", types[i]);
        CHECK_EQ_INT(rc, -1);
        CHECK(res.err[0] != '\0');
    }
    return 0;
}

/* "REDIS0010", type, key "k", then a length that announces far more than
 * the few bytes after it (32-bit or 64-bit form). */
static void hostile(img_t *m, unsigned type, bool wide) {
    m->n = 0;
    put(m, "REDIS0010", 9);
    put_byte(m, type);
    put_str(m, "k");
    if (wide) {
        put_byte(m, RDB_64BITLEN);
        static const unsigned char be[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0};
        put(m, be, 8);
    } else {
        put_byte(m, RDB_32BITLEN);
        static const unsigned char be[4] = {0xFF, 0xFF, 0xFF, 0xF0};
        put(m, be, 4);
    }
    for (int i = 0; i < 4; i++) put_str(m, "a");
    put_byte(m, RDB_OPCODE_EOF);
    static const unsigned char zero[8] = {0};
    put(m, zero, 8);
}

static int test_every_collection_count_is_checked_against_the_file(void) {
    /* Issue 14: a count read from the file is checked against the bytes
     * left before it sizes anything; the error says so. */
    static const unsigned types[] = {RDB_TYPE_LIST, RDB_TYPE_SET,
                                     RDB_TYPE_ZSET, RDB_TYPE_ZSET_2,
                                     RDB_TYPE_HASH, RDB_TYPE_LIST_QUICKLIST,
                                     RDB_TYPE_LIST_QUICKLIST_2, RDB_TYPE_STREAM_LISTPACKS,
                                     RDB_TYPE_STREAM_LISTPACKS_2};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        for (int wide = 0; wide < 2; wide++) {
            img_t m;
            hostile(&m, types[i], wide);
            server_t *srv = new_server();
            size_t before = zmalloc_used_memory();
            rdb_load_result_t res;
            int rc = rdb_load_buffer(srv, m.b, m.n, true, 0, &res);
            size_t grown = zmalloc_used_memory() - before;
            free_server(srv);
            if (rc != -1 || !strstr(res.err, "larger than the file"))
                fprintf(stderr, "  type %u wide %d: rc %d, %s\n", types[i], wide, rc, res.err);
            CHECK_EQ_INT(rc, -1);
            CHECK(strstr(res.err, "larger than the file") != NULL);
            CHECK(grown < 64 * 1024);
        }
    }
    return 0;
}

static int test_lzf_lengths_are_checked(void) {
    /* A 4-byte LZF payload announcing 4 GB, then one announcing more than
     * LZF can expand its input to: refused before the output buffer. */
    static const unsigned char ulen_4g[] = {RDB_32BITLEN, 0xFF, 0xFF, 0xFF, 0xF0};
    static const unsigned char ulen_2k[] = {0x40 | 0x08, 0x00}; /* 14-bit length 2048 */
    const unsigned char *ulens[] = {ulen_4g, ulen_2k};
    size_t ulen_sizes[] = {sizeof(ulen_4g), sizeof(ulen_2k)};
    for (int i = 0; i < 2; i++) {
        img_t m = {.n = 0};
        put(&m, "REDIS0010", 9);
        put_byte(&m, RDB_TYPE_STRING);
        put_str(&m, "k");
        put_byte(&m, 0xC0 | RDB_ENC_LZF);
        put_byte(&m, 4);                  /* compressed length */
        put(&m, ulens[i], ulen_sizes[i]); /* uncompressed length */
        static const unsigned char payload[4] = {0x01, 'a', 'b', 0x00};
        put(&m, payload, sizeof(payload));
        put_byte(&m, RDB_OPCODE_EOF);
        static const unsigned char zero[8] = {0};
        put(&m, zero, 8);
        server_t *srv = new_server();
        size_t before = zmalloc_used_memory();
        rdb_load_result_t res;
        CHECK_EQ_INT(rdb_load_buffer(srv, m.b, m.n, true, 0, &res), -1);
        CHECK(zmalloc_used_memory() - before < 64 * 1024);
        free_server(srv);
        if (!strstr(res.err, "Invalid LZF lengths")) fprintf(stderr, "  %s\n", res.err);
        CHECK(strstr(res.err, "Invalid LZF lengths") != NULL);
    }
    return 0;
}

int main(void) {
    obj_create_shared();
    RUN_TEST(test_valid_image_loads);
    RUN_TEST(test_every_truncation_fails);
    RUN_TEST(test_bad_header_refused);
    RUN_TEST(test_resizedb_hint_is_bounded);
    RUN_TEST(test_empty_blob_at_end_is_not_read_past);
    RUN_TEST(test_every_collection_count_is_checked_against_the_file);
    RUN_TEST(test_lzf_lengths_are_checked);
    return TEST_REPORT("rdb_load");
}
