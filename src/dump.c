/* dump.c: DUMP and RESTORE, and the serialized value they exchange.
 *
 * A payload is what Redis 7.0 produces for DUMP: the RDB type byte and the
 * value's RDB encoding (written by rdb_save.c's value writer), then the RDB
 * version as 2 little-endian bytes, then the CRC-64 of everything before it
 * (8 bytes, little-endian).  RESTORE checks the version and the CRC before
 * reading a single byte of the value with rdb_load.c's value reader, which
 * bounds-checks every read, so a bad payload gets an error, never a crash.
 * keycopy.c (COPY) duplicates values through the same pair.  Nothing here
 * keeps state between calls. */
#include "dump.h"

#include <endian.h>
#include <string.h>

#include "acl.h"
#include "commands.h"
#include "crc64.h"
#include "evict_stamp.h"
#include "keyspace.h"
#include "notify.h"
#include "rdb.h"
#include "reply.h"

#define DUMP_FOOTER_LEN 10 /* 2 bytes of RDB version + 8 of CRC-64 */

sds dump_payload_create(server_t *srv, robj *val) {
    rio_t r; /* memory mode: its inline buffer stays untouched */
    rio_init_mem(&r, true);
    rdb_write_value(&r, val, srv->cfg.rdbcompression);
    unsigned char footer[DUMP_FOOTER_LEN];
    int version = rdb_value_version(val);
    footer[0] = (unsigned char)(version & 0xff);
    footer[1] = (unsigned char)((version >> 8) & 0xff);
    rio_write(&r, footer, 2);
    uint64_t crc = htole64(r.crc);
    rio_write(&r, &crc, 8);
    return rio_take_mem(&r);
}

bool dump_payload_verify(const unsigned char *p, size_t len) {
    if (len < DUMP_FOOTER_LEN) return false;
    const unsigned char *footer = p + len - DUMP_FOOTER_LEN;
    unsigned version = (unsigned)footer[0] | (unsigned)footer[1] << 8;
    if (version > RDB_VERSION_LOAD_MAX) return false;
    uint64_t crc = htole64(crc64_update(0, p, len - 8));
    return memcmp(&crc, footer + 2, 8) == 0;
}

robj *dump_payload_load(client_t *c, const unsigned char *p, size_t len, char *err) {
    server_t *srv = c->srv;
    /* "clients" sanitizes what clients send unless their ACL user says
     * skip-sanitize-payload (acl.c), as in Redis 7.0. */
    bool trusted = srv->cfg.sanitize_dump_payload == SANITIZE_NO ||
                   (srv->cfg.sanitize_dump_payload == SANITIZE_CLIENTS && acl_client_skips_sanitize(c));
    /* The footer is not part of the value: a value running into it is
     * truncated, not a value that happens to end with CRC bytes. */
    return rdb_load_value(srv, p, len - DUMP_FOOTER_LEN, trusted, err);
}

robj *dump_copy_value(server_t *srv, robj *val) {
    sds payload = dump_payload_create(srv, val);
    char err[256];
    robj *copy = rdb_load_value(srv, (unsigned char *)payload, sds_len(payload) - DUMP_FOOTER_LEN, true, err);
    sds_free(payload);
    return copy;
}

/* ---------------------------------------------------------------- commands */

static void cmd_dump(client_t *c) {
    robj *o = db_lookup_read(c->db, c->argv[1], LOOKUP_NONE);
    if (!o) {
        reply_null(c);
        return;
    }
    reply_bulk_sds_take(c, dump_payload_create(c->srv, o));
}

typedef struct restore_opts {
    bool replace, absttl;
    long long idle, freq; /* -1 = not given */
} restore_opts_t;

/* Options after the payload, checked in Redis's order; IDLETIME and FREQ
 * exclude each other (the second one is a syntax error). */
static bool restore_opts_or_reply(client_t *c, restore_opts_t *o) {
    o->replace = o->absttl = false;
    o->idle = o->freq = -1;
    for (int j = 4; j < c->argc; j++) {
        const char *a = c->argv[j]->ptr;
        bool more = j + 1 < c->argc;
        if (!strcasecmp(a, "replace")) {
            o->replace = true;
        } else if (!strcasecmp(a, "absttl")) {
            o->absttl = true;
        } else if (!strcasecmp(a, "idletime") && more && o->freq == -1) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &o->idle, NULL)) return false;
            if (o->idle < 0) {
                reply_error(c, "Invalid IDLETIME value, must be >= 0");
                return false;
            }
        } else if (!strcasecmp(a, "freq") && more && o->idle == -1) {
            if (!cmd_get_ll_or_reply(c, c->argv[++j], &o->freq, NULL)) return false;
            if (o->freq < 0 || o->freq > 255) {
                reply_error(c, "Invalid FREQ value, must be >= 0 and <= 255");
                return false;
            }
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

static void cmd_restore(client_t *c) {
    restore_opts_t opt;
    if (!restore_opts_or_reply(c, &opt)) return;
    robj *key = c->argv[1];
    if (!opt.replace && db_lookup_write(c->db, key)) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        return;
    }
    long long ttl;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &ttl, NULL)) return;
    if (ttl < 0) {
        reply_error(c, "Invalid TTL value, must be >= 0");
        return;
    }
    const unsigned char *p = (const unsigned char *)c->argv[3]->ptr;
    size_t len = sds_len(c->argv[3]->ptr);
    if (!obj_is_sds_encoded(c->argv[3]) || !dump_payload_verify(p, len)) {
        reply_error(c, "DUMP payload version or checksum are wrong");
        return;
    }
    char err[256];
    robj *val = dump_payload_load(c, p, len, err);
    if (!val) {
        reply_error(c, "Bad data format");
        return;
    }
    bool deleted = opt.replace && db_delete(c->db, key);
    if (ttl && !opt.absttl) ttl += c->srv->mstime;
    if (ttl && ttl <= c->srv->mstime) {
        /* Already expired: the key is gone, as if restored and expired. */
        if (deleted) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", key, c->db->id);
        obj_decref(val);
        reply_ok(c);
        return;
    }
    db_add(c->db, key, val);
    if (ttl) db_set_expire(c->db, key, ttl);
    /* The stored value, not val: a short string was copied into the key's
     * entry, and a TTL may have moved that entry (db_entry.h). */
    db_entry *de = db_find(c->db, key->ptr);
    robj view;
    robj *stored = db_entry_val(de, &view);
    evict_stamp_restore(c->srv, stored, opt.freq, opt.idle);
    if (db_entry_is_embedded(de)) db_entry_set_lru(de, stored->lru); /* a view's stamp goes back to the entry */
    notify_keyspace_event(c->srv, NOTIFY_GENERIC, "restore", key, c->db->id);
    reply_ok(c);
}

command_t dump_commands[] = {
    {"dump", cmd_dump, 2, CMD_READONLY, 1, 1, 1, "generic", "Return a serialized version of the value stored at the specified key.", "2.6.0", NULL},
    {"restore", cmd_restore, -4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "generic", "Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0", NULL},
    /* What MIGRATE sends in a cluster; outside one it is RESTORE (Redis 7.0). */
    {"restore-asking", cmd_restore, -4, CMD_WRITE | CMD_DENYOOM | CMD_ASKING, 1, 1, 1, "server", "An internal command for migrating keys in a cluster", "3.0.0", NULL},
    {0},
};
