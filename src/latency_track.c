/* latency_track.c: per-command latency histograms (latency-tracking).
 *
 * Each command and subcommand gets a histogram (lib/hdr_hist.h, 2
 * significant digits over 1 ns .. 1 s) the first time it runs while
 * `latency-tracking` is on; dispatch.c records every finished call here,
 * CONFIG RESETSTAT drops them.  Two readers: LATENCY HISTOGRAM (a
 * cumulative distribution per command at 1, 2, 4, 8, 16, 33 ... us, Redis
 * 7.0's reply shape) and INFO latencystats (the percentiles listed in
 * `latency-tracking-info-percentiles`).
 *
 * Durations are measured in microseconds, like commandstats, and recorded
 * as nanoseconds (us * 1000), which is what Redis 7.0 records too: the same
 * durations give the same keys and percentiles on both servers.  The cost
 * per call is one index computation and two increments; a histogram is
 * 24 KB, allocated only for commands that ran. */
#include "latency_track.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hdr_hist.h"
#include "reply.h"
#include "server.h"

#define TRACK_LOWEST_NS 1LL
#define TRACK_HIGHEST_NS 1000000000LL
#define TRACK_DIGITS 2
#define TRACK_FIRST_LEVEL_NS 1024 /* LATENCY HISTOGRAM's first reported edge */

void latency_track_record(server_t *srv, command_t *cmd, long long duration_us) {
    if (!srv->cfg.latency_tracking) return;
    if (!cmd->latency_hist) cmd->latency_hist = hdr_hist_create(TRACK_HIGHEST_NS, TRACK_DIGITS);
    long long ns = duration_us * 1000;
    if (ns < TRACK_LOWEST_NS) ns = TRACK_LOWEST_NS;
    hdr_hist_record(cmd->latency_hist, ns);
}

/* ------------------------------------------------------------ INFO */

typedef struct info_ctx {
    sds s;
    double pct[128]; /* the configured percentiles, in order */
    sds label[128];  /* their names as shown: "50", "99.9" */
    int n;
} info_ctx;

static void info_one(void *arg, command_t *cmd) {
    info_ctx *ctx = arg;
    if (!cmd->latency_hist) return;
    ctx->s = sds_catprintf(ctx->s, "latency_percentiles_usec_%s:", cmd->fullname);
    for (int i = 0; i < ctx->n; i++) {
        double us = (double)hdr_hist_percentile(cmd->latency_hist, ctx->pct[i]) / 1000.0;
        ctx->s = sds_catprintf(ctx->s, "%sp%s=%.3f", i ? "," : "", ctx->label[i], us);
    }
    ctx->s = sds_cat(ctx->s, "\r\n");
}

sds latency_track_info(server_t *srv, sds s) {
    s = sds_cat(s, "# Latencystats\r\n");
    info_ctx ctx = {.s = s};
    /* The config keeps the list valid and normalized (config.c). */
    const char *p = srv->cfg.latency_tracking_info_percentiles;
    while (p && *p && ctx.n < (int)(sizeof(ctx.pct) / sizeof(ctx.pct[0]))) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        ctx.label[ctx.n] = sds_newlen(p, len);
        ctx.pct[ctx.n] = strtod(ctx.label[ctx.n], NULL);
        ctx.n++;
        p = sp ? sp + 1 : p + len;
    }
    commands_foreach(srv, info_one, &ctx);
    for (int i = 0; i < ctx.n; i++) sds_free(ctx.label[i]);
    return ctx.s;
}

/* ------------------------------------------------------------ LATENCY HISTOGRAM */

static void cdf_point(void *arg, int64_t high, int64_t cum) {
    client_t *c = arg;
    reply_ll(c, high / 1000);
    reply_ll(c, cum);
}

/* "name" => {"calls": n, "histogram_usec": {us: cumulative, ...}} */
static void reply_command_cdf(client_t *c, command_t *cmd) {
    reply_bulk_cstr(c, cmd->fullname);
    reply_map_len(c, 2);
    reply_bulk_cstr(c, "calls");
    reply_ll(c, cmd->latency_hist->total);
    reply_bulk_cstr(c, "histogram_usec");
    void *slot = reply_deferred_len(c);
    int n = hdr_hist_log_cdf(cmd->latency_hist, TRACK_FIRST_LEVEL_NS, cdf_point, c);
    reply_set_deferred_map_len(c, slot, n);
}

typedef struct all_ctx {
    client_t *c;
    long n;
} all_ctx;

static void all_one(void *arg, command_t *cmd) {
    all_ctx *ctx = arg;
    if (!cmd->latency_hist) return;
    reply_command_cdf(ctx->c, cmd);
    ctx->n++;
}

/* LATENCY HISTOGRAM [command ...]: every tracked command, or the named
 * ones (a container names itself and its subcommands; unknown names and
 * commands without calls are skipped). */
void latency_track_cmd_histogram(client_t *c) {
    all_ctx ctx = {c, 0};
    void *slot = reply_deferred_len(c);
    if (c->argc == 2) {
        commands_foreach(c->srv, all_one, &ctx);
    } else {
        for (int j = 2; j < c->argc; j++) {
            const char *name = c->argv[j]->ptr;
            command_t *cmd;
            const char *bar = strchr(name, '|');
            if (bar) { /* "config|get" */
                command_t *parent = commands_lookup(c->srv, name, (size_t)(bar - name));
                cmd = NULL;
                if (parent && parent->subcommands)
                    for (command_t *sub = parent->subcommands; sub->name && !cmd; sub++)
                        if (!strcasecmp(sub->name, bar + 1)) cmd = sub;
            } else {
                cmd = commands_lookup(c->srv, name, strlen(name));
            }
            if (!cmd) continue;
            all_one(&ctx, cmd);
            if (!bar && cmd->subcommands)
                for (command_t *sub = cmd->subcommands; sub->name; sub++) all_one(&ctx, sub);
        }
    }
    reply_set_deferred_map_len(c, slot, ctx.n);
}
