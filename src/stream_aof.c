/* stream_aof.c: the commands an AOF rewrite emits to rebuild one stream
 * exactly: XADD per live entry (or "XADD key MAXLEN 0 0-1 x y" for an
 * empty stream, which leaves the key), XSETID with the last ID, entries
 * added and max deleted ID, then per group XGROUP CREATE ... ENTRIESREAD,
 * and per consumer either XGROUP CREATECONSUMER (nothing pending) or one
 * XCLAIM ... TIME RETRYCOUNT JUSTID FORCE per pending entry, the same
 * sequence Redis 7.0 writes.  Called by aof.c (aof_emit_key); reads only. */
#include <string.h>

#include "aof.h"
#include "resp.h"
#include "stream.h"
#include "util.h"

#define MAX_ARGS 16

typedef struct cmd {
    int argc;
    const char *argv[MAX_ARGS];
    size_t lens[MAX_ARGS];
    char nums[MAX_ARGS][STREAM_ID_STR_MAX];
} cmd_t;

static void arg(cmd_t *c, const char *s, size_t len) {
    c->argv[c->argc] = s;
    c->lens[c->argc++] = len;
}

static void arg_c(cmd_t *c, const char *s) { arg(c, s, strlen(s)); }

static void arg_id(cmd_t *c, const stream_id_t *id) {
    char *slot = c->nums[c->argc];
    arg(c, slot, stream_id_format(slot, id));
}

static void arg_ll(cmd_t *c, long long v) {
    char *slot = c->nums[c->argc];
    arg(c, slot, (size_t)util_ll2str(slot, STREAM_ID_STR_MAX, v));
}

static sds emit_entries(sds buf, sds key, stream_t *s) {
    stream_iter_t it;
    stream_id_t id;
    int64_t nf;
    stream_iter_start(&it, s, NULL, NULL, false);
    while (stream_iter_next(&it, &id, &nf)) {
        int argc = 3 + (int)nf * 2;
        const char **argv = zmalloc(sizeof(char *) * (size_t)argc);
        size_t *lens = zmalloc(sizeof(size_t) * (size_t)argc);
        sds *copies = zmalloc(sizeof(sds) * (size_t)nf * 2 + 1);
        char idbuf[STREAM_ID_STR_MAX];
        argv[0] = "XADD";
        lens[0] = 4;
        argv[1] = key;
        lens[1] = sds_len(key);
        argv[2] = idbuf;
        lens[2] = stream_id_format(idbuf, &id);
        for (int64_t i = 0; i < nf; i++) {
            const unsigned char *f, *v;
            size_t fl, vl;
            stream_iter_field(&it, &f, &fl, &v, &vl);
            /* Copies: integer fields are formatted into the iterator's
             * buffers, which the next field reuses. */
            copies[i * 2] = sds_newlen(f, fl);
            copies[i * 2 + 1] = sds_newlen(v, vl);
            argv[3 + i * 2] = copies[i * 2];
            lens[3 + i * 2] = fl;
            argv[4 + i * 2] = copies[i * 2 + 1];
            lens[4 + i * 2] = vl;
        }
        buf = resp_cat_command(buf, argc, argv, lens);
        for (int64_t i = 0; i < nf * 2; i++) sds_free(copies[i]);
        zfree(copies);
        zfree(lens);
        zfree(argv);
    }
    stream_iter_stop(&it);
    return buf;
}

static sds emit_group(sds buf, sds key, const unsigned char *name, size_t nlen, stream_cg_t *cg) {
    cmd_t c = {0};
    arg_c(&c, "XGROUP");
    arg_c(&c, "CREATE");
    arg(&c, key, sds_len(key));
    arg(&c, (const char *)name, nlen);
    arg_id(&c, &cg->last_id);
    arg_c(&c, "ENTRIESREAD");
    arg_ll(&c, cg->entries_read);
    buf = resp_cat_command(buf, c.argc, c.argv, c.lens);
    rax_iter_t ci;
    rax_iter_start(&ci, cg->consumers);
    for (bool ok = rax_seek(&ci, "^", NULL, 0); ok; ok = rax_next(&ci)) {
        stream_consumer_t *cons = ci.data;
        if (rax_size(cons->pel) == 0) {
            cmd_t k = {0};
            arg_c(&k, "XGROUP");
            arg_c(&k, "CREATECONSUMER");
            arg(&k, key, sds_len(key));
            arg(&k, (const char *)name, nlen);
            arg(&k, cons->name, sds_len(cons->name));
            buf = resp_cat_command(buf, k.argc, k.argv, k.lens);
            continue;
        }
        rax_iter_t pi;
        rax_iter_start(&pi, cons->pel);
        for (bool ok2 = rax_seek(&pi, "^", NULL, 0); ok2; ok2 = rax_next(&pi)) {
            stream_nack_t *nack = pi.data;
            stream_id_t id;
            stream_id_decode(pi.key, &id);
            cmd_t k = {0};
            arg_c(&k, "XCLAIM");
            arg(&k, key, sds_len(key));
            arg(&k, (const char *)name, nlen);
            arg(&k, cons->name, sds_len(cons->name));
            arg_c(&k, "0");
            arg_id(&k, &id);
            arg_c(&k, "TIME");
            arg_ll(&k, nack->delivery_time);
            arg_c(&k, "RETRYCOUNT");
            arg_ll(&k, (long long)nack->delivery_count);
            arg_c(&k, "JUSTID");
            arg_c(&k, "FORCE");
            buf = resp_cat_command(buf, k.argc, k.argv, k.lens);
        }
        rax_iter_stop(&pi);
    }
    rax_iter_stop(&ci);
    return buf;
}

sds stream_aof_emit(sds buf, sds key, robj *val) {
    stream_t *s = val->ptr;
    if (s->length) {
        buf = emit_entries(buf, key, s);
    } else {
        cmd_t c = {0};
        const char *fixed[] = {"XADD", NULL, "MAXLEN", "0", "0-1", "x", "y"};
        for (int i = 0; i < 7; i++) {
            if (i == 1) arg(&c, key, sds_len(key));
            else arg_c(&c, fixed[i]);
        }
        buf = resp_cat_command(buf, c.argc, c.argv, c.lens);
    }
    cmd_t c = {0};
    arg_c(&c, "XSETID");
    arg(&c, key, sds_len(key));
    arg_id(&c, &s->last_id);
    arg_c(&c, "ENTRIESADDED");
    arg_ll(&c, (long long)s->entries_added);
    arg_c(&c, "MAXDELETEDID");
    arg_id(&c, &s->max_deleted_entry_id);
    buf = resp_cat_command(buf, c.argc, c.argv, c.lens);
    if (s->cgroups) {
        rax_iter_t gi;
        rax_iter_start(&gi, s->cgroups);
        for (bool ok = rax_seek(&gi, "^", NULL, 0); ok; ok = rax_next(&gi))
            buf = emit_group(buf, key, gi.key, gi.key_len, gi.data);
        rax_iter_stop(&gi);
    }
    return buf;
}
