/* loading.c: the load clients wait for (see loading.h).  Counts the bytes
 * read, serves the other clients at each interval, and answers for
 * dispatch.c and INFO.  It never touches the keyspace. */
#include "loading.h"

#include <string.h>

#include "command_def.h"
#include "conn.h"
#include "util.h"

void loading_begin(server_t *srv, bool async, long long total, loading_keepalive_fn *keepalive) {
    load_progress_t *ld = &srv->load;
    memset(ld, 0, sizeof(*ld));
    ld->active = true;
    ld->async = async;
    ld->start_ms = util_mstime();
    ld->start_sec = ld->start_ms / 1000;
    ld->total = total > 0 ? total : 0;
    ld->next_serve = srv->cfg.loading_process_events_interval_bytes;
    ld->last_serve_ms = ld->keepalive_ms = ld->start_ms;
    ld->keepalive = keepalive;
    srv->rdb_last_load_keys_loaded = srv->rdb_last_load_keys_expired = 0; /* counted as it goes, as in Redis */
}

void loading_end(server_t *srv) {
    srv->load.active = false;
    srv->mstime = util_mstime();
}

void loading_serve(server_t *srv) {
    load_progress_t *ld = &srv->load;
    srv->mstime = util_mstime();
    ld->last_serve_ms = srv->mstime;
    ld->next_serve = ld->loaded + srv->cfg.loading_process_events_interval_bytes;
    if (ld->keepalive && srv->mstime - ld->keepalive_ms >= 1000) {
        ld->keepalive_ms = srv->mstime;
        ld->keepalive(srv);
    }
    conn_serve_while_busy(srv, NULL);
}

bool loading_advance(server_t *srv, long long n) {
    load_progress_t *ld = &srv->load;
    ld->loaded += n;
    if (ld->active && ld->loaded >= ld->next_serve) loading_serve(srv);
    return !srv->shutdown_asap;
}

bool loading_poll(server_t *srv) {
    if (srv->load.active && util_mstime() - srv->load.last_serve_ms >= LOADING_SERVE_MS) loading_serve(srv);
    return !srv->shutdown_asap;
}

const char *loading_refusal(const client_t *c, uint32_t flags) {
    const load_progress_t *ld = &c->srv->load;
    if (!ld->active || (c->flags & (CLIENT_MASTER | CLIENT_FAKE | CLIENT_AOF_LOADER))) return NULL;
    bool refused = ld->async ? (flags & CMD_NO_ASYNC_LOADING) != 0 : !(flags & CMD_LOADING);
    return refused ? LOADING_ERR : NULL;
}

/* Redis 7.0's figures: the share read of the bytes announced (else of the
 * RDB's used-mem, capped below 100%), the ETA at the rate so far (a fake
 * 1 s in the first second). */
sds loading_info(const server_t *srv, sds s) {
    const load_progress_t *ld = &srv->load;
    if (!ld->active) return s;
    double perc = 0;
    long long remaining = 1;
    if (ld->total) {
        perc = (double)ld->loaded * 100 / (double)ld->total;
        remaining = ld->total - ld->loaded;
    } else if (ld->rdb_used_mem) {
        perc = (double)ld->loaded * 100 / (double)ld->rdb_used_mem;
        if (perc > 99.99) perc = 99.99;
        remaining = ld->rdb_used_mem - ld->loaded;
        if (remaining < 1) remaining = 1;
    }
    long long elapsed = util_mstime() / 1000 - ld->start_sec;
    long long eta = elapsed == 0 ? 1 : elapsed * remaining / (ld->loaded + 1);
    return sds_catprintf(s,
                         "loading_start_time:%lld\r\n"
                         "loading_total_bytes:%lld\r\n"
                         "loading_rdb_used_mem:%lld\r\n"
                         "loading_loaded_bytes:%lld\r\n"
                         "loading_loaded_perc:%.2f\r\n"
                         "loading_eta_seconds:%lld\r\n",
                         ld->start_sec, ld->total, ld->rdb_used_mem, ld->loaded, perc, eta);
}
