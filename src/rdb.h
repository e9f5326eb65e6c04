/* rdb.h: snapshots in Redis's RDB format (version 10, as Redis 7.0 writes;
 * 11 or 12 where values need newer types: see RDB_VERSION).
 *
 * rdb_save.c writes a whole dataset through a rio_t (header, aux fields,
 * per database SELECTDB + RESIZEDB + keys with EXPIRETIME_MS, EOF, CRC-64
 * trailer) using the simple type encodings every Redis 7 loads.
 * rdb_load.c reads what Redis 7.0 writes, including listpack, intset,
 * quicklist-2 and ziplist blobs and LZF strings, into our own objects.
 * persist.c calls both (SAVE, BGSAVE, start-up, SHUTDOWN); the check tool
 * (check_rdb.c) calls the loader.  Neither touches clients or the loop. */
#ifndef RL_RDB_H
#define RL_RDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rio.h"
#include "server.h"

/* Files and DUMP payloads are version 10 (Redis 7.0 loads them, and so
 * does 7.4) unless they hold what 7.0's types cannot: a stream whose
 * consumers have active times (type 21, version 11's: Redis 7.2) or a hash
 * with field TTLs (types 24/25, version 12's: Redis 7.4); then they say
 * the newest version needed.  Loading takes up to 12. */
#define RDB_VERSION 10
#define RDB_VERSION_STREAM3 11
#define RDB_VERSION_HFE 12
#define RDB_VERSION_LOAD_MAX 12

/* Binary doubles and integers are written as they lie in memory. */
_Static_assert(sizeof(double) == 8, "RDB binary doubles are 8 bytes");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "RDB encodings are little-endian");
#define RDB_VERSION_MIN 1

/* Object types (the byte before each key). */
enum {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_MODULE = 6,
    RDB_TYPE_MODULE_2 = 7,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_STREAM_LISTPACKS = 15,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    RDB_TYPE_SET_LISTPACK = 20,
    RDB_TYPE_STREAM_LISTPACKS_3 = 21,      /* Redis 7.2: consumers' active time */
    RDB_TYPE_HASH_METADATA_PRE_GA = 22,    /* 7.4 RCs: [ttl][field][value], ttl absolute */
    RDB_TYPE_HASH_LISTPACK_EX_PRE_GA = 23, /* 7.4 RCs: listpack of field, value, ttl */
    RDB_TYPE_HASH_METADATA = 24,           /* 7.4: min TTL, then [ttl - min + 1 or 0][field][value] */
    RDB_TYPE_HASH_LISTPACK_EX = 25,        /* 7.4: min TTL (8 bytes), then the listpackex blob */
};

/* Opcodes (in place of a type byte). */
enum {
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_FUNCTION = 246,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255,
};

/* Length encodings: the top two bits of the first byte. */
#define RDB_6BITLEN 0
#define RDB_14BITLEN 1
#define RDB_32BITLEN 0x80
#define RDB_64BITLEN 0x81
#define RDB_ENCVAL 3
#define RDB_ENC_INT8 0
#define RDB_ENC_INT16 1
#define RDB_ENC_INT32 2
#define RDB_ENC_LZF 3

/* Quicklist-2 node containers. */
#define RDB_QL_PLAIN 1
#define RDB_QL_PACKED 2

typedef struct rdb_save_opts {
    bool compress;          /* rdbcompression */
    bool checksum;          /* rdbchecksum (no: the trailer is zero) */
    bool aof_base;          /* aux aof-base 1 (an AOF preamble) */
    long long key_delay_us; /* rdb-key-save-delay: sleep per key (tests slow a save down) */
    bool functions_only;    /* no keys: REPLCONF rdb-filter-only functions (redis-cli --functions-rdb) */
} rdb_save_opts_t;

/* Write every database of srv to r, trailer included; 0 or -1 (r->err). */
int rdb_write_dataset(server_t *srv, rio_t *r, const rdb_save_opts_t *opts);

/* Replication state in the aux fields repl-id, repl-offset and
 * repl-stream-db (Redis 7.0 writes them for a master with a backlog and
 * for a replica): a restarted server continues that history
 * (repl_restore_from_rdb), so its peers can resynchronise partially. */
typedef struct rdb_repl_info {
    bool valid; /* all of id and offset were present */
    char id[41];
    long long offset;
    int stream_db;
} rdb_repl_info_t;

/* What a load found; err is set when the load fails. */
typedef struct rdb_load_result {
    long long keys;    /* keys added */
    long long expired; /* keys skipped because already expired */
    int version;
    bool checksum_verified;
    size_t consumed;      /* bytes up to and including the trailer */
    rdb_repl_info_t repl; /* repl-id / repl-offset / repl-stream-db, if written */
    long long used_mem;   /* aux used-mem: the writer's used_memory, 0 if absent */
    char err[256];        /* "why" with the byte offset */
} rdb_load_result_t;

/* Load an RDB image held in memory into srv's databases (which should be
 * empty).  verify_checksum: compare the trailer first (a zero trailer
 * means "not computed").  now_ms: keys expiring before it are skipped
 * (0 keeps everything).  Returns 0 or -1 (res->err says why; keys already
 * added stay, the caller decides to exit). */
int rdb_load_buffer(server_t *srv, const unsigned char *buf, size_t len, bool verify_checksum, long long now_ms,
                    rdb_load_result_t *res);
/* A byte source for rdb_load_stream (a replica's socket while the
 * master's RDB arrives).  read: up to len bytes into buf, waiting as needed;
 * >0 bytes, 0 at the end of the source, -1 on error (err says why). */
typedef struct rdb_source {
    ssize_t (*read)(void *arg, void *buf, size_t len);
    void *arg;
    long long left; /* bytes the source will still deliver, -1 unknown (kept up to date by read) */
    char err[128];
    sds rest; /* out: bytes read past the RDB's trailer (caller frees) */
} rdb_source_t;

/* Function libraries (FUNCTION2 opcodes) kept as code instead of loaded. */
typedef struct rdb_libs {
    sds *code;
    size_t n;
} rdb_libs_t;
void rdb_libs_free(rdb_libs_t *libs);

/* Load an RDB from src as it arrives into dbs (srv->dbnum databases,
 * empty beforehand), the libraries into libs (not loaded).  The CRC-64 is
 * checked at the end; on -1 (res->err) whatever was added stays in dbs
 * for the caller to drop.  On 0, src->rest holds the bytes after it. */
int rdb_load_stream(server_t *srv, rdb_source_t *src, db_t *dbs, rdb_libs_t *libs, long long now_ms,
                    rdb_load_result_t *res);

/* One value as DUMP carries it: the type byte, then the value's encoding
 * (buf holds nothing else; trailing bytes are ignored, as Redis does).
 * trusted: a checksum vouched for the bytes (see rdb_load.c).  Returns a
 * new object, or NULL with err (256 bytes) saying why. */
robj *rdb_load_value(server_t *srv, const unsigned char *buf, size_t len, bool trusted, char *err);
/* The RDB version a DUMP payload of val says: RDB_VERSION, 11 for a
 * stream needing type 21 (rdb_stream_needs_v3), 12 for a hash with field
 * TTLs. */
int rdb_value_version(robj *val);
/* Write the type byte and the encoding of val (no key, no expire), in the
 * types of rdb_value_version(val). */
void rdb_write_value(rio_t *r, robj *val, bool compress);

/* A file mapped read-only for loading (an RDB, or an AOF with its
 * preamble): the bytes stay in the page cache instead of being copied to
 * the heap.  open: 0, or -1 with errno (an empty file maps to len 0).
 * A file must not be truncated while it is open (our own files only). */
typedef struct rdb_file {
    const unsigned char *buf;
    size_t len;
    bool mapped;
    size_t dropped; /* bytes at the start already handed back */
} rdb_file_t;
int rdb_file_open(const char *path, rdb_file_t *f);
void rdb_file_close(rdb_file_t *f);
/* rdb_load_buffer over an open file, handing back its pages as the load
 * passes them (the file cannot be used for anything else afterwards
 * without faulting them in again).  flags: RDB_LOAD_VERIFY compares the
 * checksum first; RDB_LOAD_MERGE replaces keys and function libraries
 * already there (DEBUG RELOAD MERGE) where a load otherwise fails. */
#define RDB_LOAD_VERIFY 1u
#define RDB_LOAD_MERGE 2u
int rdb_load_file(server_t *srv, rdb_file_t *f, unsigned flags, long long now_ms, rdb_load_result_t *res);

#endif
