/* test_rdb_load.c: the RDB loader (rdb_load_buffer in src/rdb_load.c) on
 * images built byte by byte: a valid file loads its keys and expiries, every
 * truncation is an error (never a crash or a silent partial success), a bad
 * header is refused, a RESIZEDB hint that announces billions of keys
 * sizes nothing beyond what the file can hold, and an empty blob that ends
 * the image is never read past (found by tests/fuzz/fuzz_aof.c).
 * rdb_load_stream (a replica loading from its master's socket) gets the
 * same images through a source that hands out a few bytes per read: the
 * same keys, every truncation an error, the CRC-64 checked at the end, the
 * bytes after the trailer handed back, a string longer than its window. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commands.h"
#include "hooks.h"
#include "crc64.h"
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

/* ------------------------------------------------------------ streaming */

typedef struct {
    const unsigned char *p;
    size_t n, pos;
    size_t chunk; /* most bytes per read */
} chunks_t;

static ssize_t chunk_read(void *arg, void *buf, size_t len) {
    chunks_t *c = arg;
    size_t k = c->n - c->pos;
    if (k > len) k = len;
    if (k > c->chunk) k = c->chunk;
    memcpy(buf, c->p + c->pos, k);
    c->pos += k;
    return (ssize_t)k;
}

static int stream_load(server_t *srv, const unsigned char *p, size_t n, size_t chunk, rdb_load_result_t *res,
                       sds *rest) {
    chunks_t c = {p, n, 0, chunk};
    rdb_source_t src = {.read = chunk_read, .arg = &c, .left = -1};
    rdb_libs_t libs = {0};
    int rc = rdb_load_stream(srv, &src, srv->dbs, &libs, 0, res);
    rdb_libs_free(&libs);
    if (rest) *rest = src.rest;
    else sds_free(src.rest);
    return rc;
}

static void set_crc(img_t *m) {
    uint64_t crc = crc64_update(0, m->b, m->n - 8);
    memcpy(m->b + m->n - 8, &crc, 8); /* little-endian */
}

static int test_stream_loads_in_any_chunking(void) {
    img_t m;
    build(&m, 0, false);
    set_crc(&m);
    static const unsigned char tail[] = "0123456789"; /* an EOF mark would follow */
    put(&m, tail, 10);
    size_t chunks[] = {1, 3, 7, 4096};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        server_t *srv = new_server();
        rdb_load_result_t res;
        sds rest = NULL;
        int rc = stream_load(srv, m.b, m.n, chunks[i], &res, &rest);
        if (rc != 0) fprintf(stderr, "  chunk %zu: %s\n", chunks[i], res.err);
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(res.keys, 2);
        CHECK(res.checksum_verified);
        CHECK_EQ_INT(db_size(&srv->dbs[0]), 2);
        /* What the loader read past the trailer (the start of the tail) comes back. */
        CHECK(rest != NULL);
        CHECK(sds_len(rest) <= 10 && !memcmp(rest, tail, sds_len(rest)));
        sds_free(rest);
        free_server(srv);
    }
    return 0;
}

static int test_stream_truncation_and_crc_fail(void) {
    img_t m;
    build(&m, 0, false);
    set_crc(&m);
    for (size_t cut = 0; cut < m.n; cut++) {
        server_t *srv = new_server();
        rdb_load_result_t res;
        int rc = stream_load(srv, m.b, cut, 5, &res, NULL);
        free_server(srv);
        if (rc != -1) fprintf(stderr, "  cut at %zu loaded\n", cut);
        CHECK_EQ_INT(rc, -1);
        CHECK(res.err[0] != '\0');
    }
    m.b[m.n - 12] ^= 1; /* inside the last value: only the CRC can tell */
    server_t *srv = new_server();
    rdb_load_result_t res;
    CHECK_EQ_INT(stream_load(srv, m.b, m.n, 64, &res, NULL), -1);
    CHECK(strstr(res.err, "Wrong RDB checksum") != NULL);
    free_server(srv);
    return 0;
}

static int test_stream_string_longer_than_window(void) {
    size_t vlen = 600 * 1024; /* more than twice the loader's window */
    size_t cap = vlen + 128, n = 0;
    unsigned char *b = zmalloc(cap);
    memcpy(b, "REDIS0010", 9);
    n = 9;
    b[n++] = RDB_OPCODE_SELECTDB;
    b[n++] = 0;
    b[n++] = RDB_TYPE_STRING;
    b[n++] = 3;
    memcpy(b + n, "big", 3);
    n += 3;
    b[n++] = RDB_32BITLEN;
    b[n++] = (unsigned char)(vlen >> 24);
    b[n++] = (unsigned char)(vlen >> 16);
    b[n++] = (unsigned char)(vlen >> 8);
    b[n++] = (unsigned char)vlen;
    for (size_t i = 0; i < vlen; i++) b[n++] = (unsigned char)('a' + i % 26);
    b[n++] = RDB_OPCODE_EOF;
    uint64_t crc = crc64_update(0, b, n);
    memcpy(b + n, &crc, 8);
    n += 8;
    server_t *srv = new_server();
    rdb_load_result_t res;
    int rc = stream_load(srv, b, n, 100000, &res, NULL);
    if (rc != 0) fprintf(stderr, "  %s\n", res.err);
    CHECK_EQ_INT(rc, 0);
    robj *k = obj_create_string("big", 3);
    robj *v = db_lookup_read(&srv->dbs[0], k, 0);
    char tmp[32];
    size_t len = 0;
    const char *sv = v ? obj_string_view(v, tmp, sizeof(tmp), &len) : NULL;
    CHECK(sv && len == vlen && sv[vlen - 1] == (char)('a' + (vlen - 1) % 26));
    obj_decref(k);
    free_server(srv);
    zfree(b);
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
    RUN_TEST(test_stream_loads_in_any_chunking);
    RUN_TEST(test_stream_truncation_and_crc_fail);
    RUN_TEST(test_stream_string_longer_than_window);
    return TEST_REPORT("rdb_load");
}
