/* latency.c: the latency monitor (see latency.h).
 *
 * Events are few (one per instrumented code path), so they live in a small
 * array searched linearly; each holds a ring of LATENCY_SAMPLES samples.
 * Invariant: ring[(idx - 1) mod N] is the newest sample when count > 0;
 * count <= LATENCY_SAMPLES; max >= every sample recorded since the reset. */
#include "latency.h"

#include <string.h>
#include <strings.h>

#include "commands.h"
#include "conn.h"
#include "reply.h"
#include "zmalloc.h"

#define LATENCY_SAMPLES 160
#define LATENCY_MAX_EVENTS 32

typedef struct latency_sample {
    long long time;              /* unix seconds */
    long long latency;           /* ms */
} latency_sample;

typedef struct latency_event {
    char name[64];
    latency_sample ring[LATENCY_SAMPLES];
    int idx;                     /* next slot to write */
    int count;                   /* samples held */
    long long max;               /* ms, all-time for this event */
} latency_event;

struct latency {
    latency_event *events[LATENCY_MAX_EVENTS];
    int n;
};

latency_t *latency_create(void) { return zcalloc(sizeof(latency_t)); }

void latency_free(latency_t *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) zfree(l->events[i]);
    zfree(l);
}

static int find_event(latency_t *l, const char *name) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->events[i]->name, name)) return i;
    return -1;
}

static latency_sample *newest(latency_event *e) {
    return &e->ring[(e->idx + LATENCY_SAMPLES - 1) % LATENCY_SAMPLES];
}

void latency_add_sample_if_needed(server_t *srv, const char *event, long long duration_ms) {
    long long threshold = srv->cfg.latency_monitor_threshold;
    if (threshold == 0 || duration_ms < threshold) return;
    latency_t *l = srv->latency;
    int i = find_event(l, event);
    if (i < 0) {
        if (l->n == LATENCY_MAX_EVENTS) return;
        i = l->n++;
        l->events[i] = zcalloc(sizeof(latency_event));
        strncpy(l->events[i]->name, event, sizeof(l->events[i]->name) - 1);
    }
    latency_event *e = l->events[i];
    long long now = srv->mstime / 1000;
    if (duration_ms > e->max) e->max = duration_ms;
    if (e->count > 0 && newest(e)->time == now) {
        if (duration_ms > newest(e)->latency) newest(e)->latency = duration_ms;
        return;
    }
    e->ring[e->idx] = (latency_sample){now, duration_ms};
    e->idx = (e->idx + 1) % LATENCY_SAMPLES;
    if (e->count < LATENCY_SAMPLES) e->count++;
}

void latency_record_command(server_t *srv, const command_t *cmd, long long duration_us) {
    if (srv->cfg.latency_monitor_threshold == 0) return;
    latency_add_sample_if_needed(srv, (cmd->flags & CMD_FAST) ? "fast-command" : "command", duration_us / 1000);
}

/* ------------------------------------------------------------ commands */

static void cmd_latency_latest(client_t *c) {
    latency_t *l = c->srv->latency;
    long n = 0;
    for (int i = 0; i < l->n; i++) n += l->events[i]->count > 0;
    reply_array_len(c, n);
    for (int i = 0; i < l->n; i++) {
        latency_event *e = l->events[i];
        if (e->count == 0) continue;
        reply_array_len(c, 4);
        reply_bulk_cstr(c, e->name);
        reply_ll(c, newest(e)->time);
        reply_ll(c, newest(e)->latency);
        reply_ll(c, e->max);
    }
}

static void cmd_latency_history(client_t *c) {
    latency_t *l = c->srv->latency;
    int i = find_event(l, c->argv[2]->ptr);
    if (i < 0) {
        reply_empty_array(c);
        return;
    }
    latency_event *e = l->events[i];
    reply_array_len(c, e->count);
    int first = (e->idx + LATENCY_SAMPLES - e->count) % LATENCY_SAMPLES;   /* oldest */
    for (int k = 0; k < e->count; k++) {
        latency_sample *s = &e->ring[(first + k) % LATENCY_SAMPLES];
        reply_array_len(c, 2);
        reply_ll(c, s->time);
        reply_ll(c, s->latency);
    }
}

static void reset_event(latency_t *l, int i) {
    zfree(l->events[i]);
    l->events[i] = l->events[--l->n];
}

static void cmd_latency_reset(client_t *c) {
    latency_t *l = c->srv->latency;
    long long resets = 0;
    if (c->argc == 2) {
        resets = l->n;
        while (l->n) reset_event(l, 0);
    } else {
        for (int j = 2; j < c->argc; j++) {
            int i = find_event(l, c->argv[j]->ptr);
            if (i < 0) continue;
            reset_event(l, i);
            resets++;
        }
    }
    reply_ll(c, resets);
}

static void cmd_latency_help(client_t *c) {
    static const char *help[] = {
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        NULL};
    reply_help(c, "LATENCY", help);
}

static command_t latency_subcommands[] = {
    {"latest", cmd_latency_latest, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return the latest latency samples for all events", "2.8.13", NULL},
    {"history", cmd_latency_history, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return timestamp-latency samples for an event", "2.8.13", NULL},
    {"reset", cmd_latency_reset, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Reset latency data for one or more events", "2.8.13", NULL},
    {"help", cmd_latency_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "2.8.13", NULL},
    {0},
};

command_t latency_commands[] = {
    {"latency", NULL, -2, 0, 0, 0, 0, "server", "A container for latency diagnostics commands", "2.8.13", latency_subcommands},
    {0},
};
