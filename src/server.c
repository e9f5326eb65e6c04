/* server.c: the few operations on server_t itself that every layer may
 * call: the cached clock, the memory sample, a shutdown request, the path
 * of a file in the configured dir, the process title.
 *
 * Kept apart from lifecycle.c (start-up, cron, shutdown order), which sits
 * at the top and includes every module; this file includes only server.h
 * and libraries, so calling it from any layer adds no upward dependency. */
#include "server.h"

#include "evloop.h"
#include "proc_title.h"
#include "util.h"

void server_update_clock(server_t *srv) {
    srv->mstime = util_mstime();
    obj_set_lru_clock((unsigned)(srv->mstime / LRU_CLOCK_RESOLUTION));
}

/* The cron's rate: hz, doubled (up to 500) while there are more than
 * CLIENTS_PER_TICK clients per tick, with dynamic-hz as in Redis, so that
 * conn_cron's share of the clients per tick and the timeouts it checks
 * stay small when there are thousands.  Sets the cron timer when it
 * changes.  Called by the cron each tick and by CONFIG SET hz|dynamic-hz. */
#define CLIENTS_PER_TICK 200
#define MAX_HZ 500
void server_adapt_hz(server_t *srv) {
    int hz = (int)srv->cfg.hz;
    if (srv->cfg.dynamic_hz)
        while (hz < MAX_HZ && srv->client_count / (size_t)hz > CLIENTS_PER_TICK) hz = hz * 2 < MAX_HZ ? hz * 2 : MAX_HZ;
    if (hz == srv->hz) return;
    srv->hz = hz;
    if (srv->cron_timer) evloop_timer_set_interval(srv->cron_timer, 1000000 / hz);
}

void server_sample_memory(server_t *srv) {
    srv->mem.rss = zmalloc_get_rss();
    /* An allocator whose stats cost a heap walk (glibc) reports 0 in INFO,
     * as Redis does, rather than stalling the cron ten times a second. */
    if (zmalloc_allocator_stats_cheap()) zmalloc_get_allocator_stats(&srv->mem.alloc);
    srv->mem.zmalloc_used = zmalloc_used_memory();
    if (srv->mem.zmalloc_used > srv->peak_memory) srv->peak_memory = srv->mem.zmalloc_used;
}

void server_request_shutdown(server_t *srv) {
    srv->shutdown_asap = true;
    evloop_stop(srv->loop);
}

sds server_path(const server_t *srv, const char *name) {
    const char *dir = srv->cfg.dir && srv->cfg.dir[0] ? srv->cfg.dir : ".";
    if (name[0] == '/') return sds_new(name);
    return sds_catprintf(sds_empty(), "%s/%s", dir, name);
}

void server_set_proc_title(const server_t *srv, const char *title) {
    const rl_config_t *cfg = &srv->cfg;
    if (!cfg->set_proc_title) return;
    proc_title_place_t where = {cfg->bind_count ? cfg->bind[0] : NULL, cfg->port, cfg->tls_port, cfg->unixsocket,
                                srv->config_file};
    sds s = proc_title_make(cfg->proc_title_template, title ? title : proc_title_program(), &where);
    if (s) proc_title_set(s); /* config.c took only templates that expand */
    sds_free(s);
}
