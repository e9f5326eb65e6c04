/* latency.c: the latency monitor (see latency.h) and the LATENCY command.
 *
 * Events are few (one per instrumented code path), so they live in a small
 * array searched linearly; each holds a ring of LATENCY_SAMPLES samples.
 * Invariant: ring[(idx - 1) mod N] is the newest sample when count > 0;
 * count <= LATENCY_SAMPLES; max >= every sample recorded since the reset.
 * Besides the raw samples (LATEST, HISTORY) the command draws them (GRAPH,
 * through lib/sparkline.c) and reads them (DOCTOR: per-event statistics
 * and advice keyed on the event names); LATENCY HISTOGRAM is served by
 * latency_track.c. */
#include "latency.h"
#include "latency_track.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "commands.h"
#include "config.h"
#include "conn.h"
#include "reply.h"
#include "server.h"
#include "sparkline.h"
#include "zmalloc.h"

#define LATENCY_SAMPLES 160
#define LATENCY_MAX_EVENTS 32

typedef struct latency_sample {
    long long time;    /* unix seconds */
    long long latency; /* ms */
} latency_sample;

typedef struct latency_event {
    char name[64];
    latency_sample ring[LATENCY_SAMPLES];
    int idx;       /* next slot to write */
    int count;     /* samples held */
    long long max; /* ms, all-time for this event */
} latency_event;

struct latency {
    latency_event *events[LATENCY_MAX_EVENTS];
    int n;
    double fork_rate; /* GB/s of the last fork (child.c tells us) */
};

latency_t *latency_create(void) { return zcalloc(sizeof(latency_t)); }

void latency_note_fork_rate(server_t *srv, double gb_per_sec) { srv->latency->fork_rate = gb_per_sec; }

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
    int first = (e->idx + LATENCY_SAMPLES - e->count) % LATENCY_SAMPLES; /* oldest */
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

/* ------------------------------------------------------------ GRAPH */

#define GRAPH_COLUMNS 80
#define GRAPH_ROWS 4

/* "12s", "3m", "5h", "2d": how long ago, in the largest unit that fits. */
static void age_label(char *buf, size_t size, long long secs) {
    if (secs < 60) snprintf(buf, size, "%llds", secs);
    else if (secs < 3600) snprintf(buf, size, "%lldm", secs / 60);
    else if (secs < 86400) snprintf(buf, size, "%lldh", secs / 3600);
    else snprintf(buf, size, "%lldd", secs / 86400);
}

static void cmd_latency_graph(client_t *c) {
    latency_t *l = c->srv->latency;
    int i = find_event(l, c->argv[2]->ptr);
    if (i < 0 || l->events[i]->count == 0) {
        reply_error(c, "No samples available for event '%s'", (char *)c->argv[2]->ptr);
        return;
    }
    latency_event *e = l->events[i];
    double values[LATENCY_SAMPLES];
    char labels[LATENCY_SAMPLES][24];
    const char *label_ptrs[LATENCY_SAMPLES];
    long long lo = 0, hi = 0, now = (long long)time(NULL);
    int first = (e->idx + LATENCY_SAMPLES - e->count) % LATENCY_SAMPLES; /* oldest */
    for (int k = 0; k < e->count; k++) {
        latency_sample *smp = &e->ring[(first + k) % LATENCY_SAMPLES];
        if (k == 0 || smp->latency < lo) lo = smp->latency;
        if (k == 0 || smp->latency > hi) hi = smp->latency;
        values[k] = (double)smp->latency;
        age_label(labels[k], sizeof(labels[k]), now - smp->time);
        label_ptrs[k] = labels[k];
    }
    sds g = sds_catprintf(sds_empty(), "%s - high %lld ms, low %lld ms (all time high %lld ms)\n", e->name, hi, lo,
                          e->max);
    for (int k = 0; k < GRAPH_COLUMNS; k++) g = sds_catlen(g, "-", 1);
    g = sds_catlen(g, "\n", 1);
    g = sparkline_render(g, values, label_ptrs, e->count, GRAPH_COLUMNS, GRAPH_ROWS);
    reply_verbatim(c, g, sds_len(g), "txt");
    sds_free(g);
}

/* ------------------------------------------------------------ DOCTOR */

typedef struct event_stats {
    long long samples, avg, mad, min, max; /* ms; avg and mad rounded down */
    long long period;                      /* seconds since the oldest sample, at least 1 */
} event_stats;

static event_stats analyze(const latency_event *e, long long now) {
    event_stats st = {0};
    long long sum = 0, oldest = 0;
    for (int k = 0; k < e->count; k++) {
        const latency_sample *smp = &e->ring[k];
        if (k == 0 || smp->latency < st.min) st.min = smp->latency;
        if (k == 0 || smp->latency > st.max) st.max = smp->latency;
        if (k == 0 || smp->time < oldest) oldest = smp->time;
        sum += smp->latency;
    }
    st.samples = e->count;
    if (!e->count) return st;
    st.avg = sum / e->count;
    st.period = now - oldest > 0 ? now - oldest : 1;
    long long dev = 0;
    for (int k = 0; k < e->count; k++) dev += st.avg > e->ring[k].latency ? st.avg - e->ring[k].latency
                                                                          : e->ring[k].latency - st.avg;
    st.mad = dev / e->count;
    return st;
}

/* The advice DOCTOR can give, each raised by the events that call for it. */
enum {
    ADV_BETTER_VM,
    ADV_SLOWLOG_ENABLE,
    ADV_SLOWLOG_TUNE,
    ADV_SLOWLOG_READ,
    ADV_SCHEDULER,
    ADV_HZ,
    ADV_BIG_OBJECTS,
    ADV_MASS_EVICTION,
    ADV_THP,
    ADV_COUNT
};

/* Bytes of transparent huge pages mapped by this process (0 if unknown). */
static long long anon_huge_pages(void) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return 0;
    char line[256];
    long long total = 0, kb;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1) total += kb * 1024;
    fclose(f);
    return total;
}

static const char *fork_quality(double rate, bool *advise) {
    *advise = rate < 25;
    return rate < 10 ? "terrible" : rate < 25 ? "poor"
                                : rate < 100  ? "good"
                                              : "excellent";
}

/* Appends one event's line and raises the advice it calls for. */
static sds doctor_event(server_t *srv, sds r, int num, const latency_event *e, bool adv[ADV_COUNT], int *advices) {
    event_stats st = analyze(e, (long long)time(NULL));
    r = sds_catprintf(r, "%d. %s: %lld latency spikes (average %lldms, mean deviation %lldms, period %.2f sec). Worst all "
                         "time event %lldms.",
                      num, e->name, st.samples, st.avg, st.mad,
                      st.samples ? (double)st.period / (double)st.samples : 0.0, e->max);
    const rl_config_t *cfg = &srv->cfg;
    if (!strcasecmp(e->name, "fork")) {
        bool slow;
        const char *q = fork_quality(srv->latency->fork_rate, &slow);
        r = sds_catprintf(r, " Fork rate is %.2f GB/sec (%s).", srv->latency->fork_rate, q);
        if (slow) adv[ADV_BETTER_VM] = true, (*advices)++;
    } else if (!strcasecmp(e->name, "command")) {
        if (cfg->slowlog_log_slower_than < 0) adv[ADV_SLOWLOG_ENABLE] = true, (*advices)++;
        else if (cfg->slowlog_log_slower_than / 1000 > cfg->latency_monitor_threshold)
            adv[ADV_SLOWLOG_TUNE] = true, (*advices)++;
        adv[ADV_SLOWLOG_READ] = adv[ADV_BIG_OBJECTS] = true;
        *advices += 2;
    } else if (!strcasecmp(e->name, "fast-command")) {
        adv[ADV_SCHEDULER] = true, (*advices)++;
    } else if (!strcasecmp(e->name, "expire-cycle")) {
        adv[ADV_HZ] = adv[ADV_BIG_OBJECTS] = true;
        *advices += 2;
    } else if (!strcasecmp(e->name, "eviction-del")) {
        adv[ADV_BIG_OBJECTS] = true, (*advices)++;
    } else if (!strcasecmp(e->name, "eviction-cycle")) {
        adv[ADV_MASS_EVICTION] = true, (*advices)++;
    }
    return sds_catlen(r, "\n", 1);
}

static sds doctor_advice(server_t *srv, sds r, const bool adv[ADV_COUNT]) {
    unsigned long long us = (unsigned long long)srv->cfg.latency_monitor_threshold * 1000;
    r = sds_cat(r, "\nI have a few advices for you:\n\n");
    if (adv[ADV_BETTER_VM])
        r = sds_cat(r, "- fork() is slow on this machine. Virtual machines differ a lot in how fast they copy page "
                       "tables; a faster instance type or another hypervisor shortens the pause of every BGSAVE and "
                       "BGREWRITEAOF.\n");
    if (adv[ADV_SLOWLOG_ENABLE])
        r = sds_catprintf(r, "- Slow commands cause latency here, but the slow log is off, so it cannot name them. "
                             "Turn it on with 'CONFIG SET slowlog-log-slower-than %llu'.\n",
                          us);
    if (adv[ADV_SLOWLOG_TUNE])
        r = sds_catprintf(r, "- The slow log threshold is above the latency monitor's, so the slow commands seen here "
                             "are not in the slow log. Use 'CONFIG SET slowlog-log-slower-than %llu'.\n",
                          us);
    if (adv[ADV_SLOWLOG_READ])
        r = sds_cat(r, "- Read the slow log (SLOWLOG GET) to find which commands take long; "
                       "https://redis.io/commands/slowlog explains its fields.\n");
    if (adv[ADV_SCHEDULER])
        r = sds_cat(r, "- Even O(1) commands were slow, so the process did not get the CPU when it needed it. Lower "
                       "the load of the machine, give the server a machine or VM of its own, look for noisy "
                       "neighbours, and measure the system's own latency with 'redis-cli --intrinsic-latency 100'.\n");
    if (adv[ADV_HZ] && srv->cfg.hz < 100)
        r = sds_cat(r, "- A higher 'hz' (CONFIG SET hz 100) splits the expiry of keys into smaller steps.\n");
    if (adv[ADV_BIG_OBJECTS])
        r = sds_cat(r, "- Deleting, expiring or evicting a very large key takes time in proportion to its size. Keep "
                       "values that are often removed small, split big ones into several keys, or let UNLINK and "
                       "the lazyfree-lazy-* settings free them in the background.\n");
    if (adv[ADV_MASS_EVICTION])
        r = sds_cat(r, "- Many keys were evicted at once. Lowering maxmemory in one step, or a command that stores "
                       "a large result (SUNIONSTORE, SORT ... STORE, RESTORE), makes the server evict until it fits; "
                       "change maxmemory gradually.\n");
    if (adv[ADV_THP])
        r = sds_cat(r, "- This process uses transparent huge pages, which make fork() and copy-on-write slow. "
                       "Disable them ('echo never > /sys/kernel/mm/transparent_hugepage/enabled', also at boot) "
                       "and restart the server.\n");
    return r;
}

static void cmd_latency_doctor(client_t *c) {
    server_t *srv = c->srv;
    latency_t *l = srv->latency;
    sds r = sds_empty();
    if (l->n == 0 && srv->cfg.latency_monitor_threshold == 0) {
        r = sds_cat(r, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You "
                       "may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we "
                       "weren't in a deep space mission I'd suggest to take a look at "
                       "https://redis.io/topics/latency-monitor.\n");
    } else {
        bool adv[ADV_COUNT] = {false};
        int advices = 0, num = 0;
        for (int i = 0; i < l->n; i++) {
            if (++num == 1)
                r = sds_cat(r, "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
                               "about it, do you Dave?\n\n");
            r = doctor_event(srv, r, num, l->events[i], adv, &advices);
        }
        if (anon_huge_pages() > 0) adv[ADV_THP] = true, advices++;
        if (num == 0 && advices == 0)
            r = sds_cat(r, "Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
                           "the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and "
                           "think things over.\n");
        else if (advices == 0)
            r = sds_cat(r, "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please "
                           "use the Redis community to get some help, providing this report in your help "
                           "request.\n");
        else
            r = doctor_advice(srv, r, adv);
    }
    reply_verbatim(c, r, sds_len(r), "txt");
    sds_free(r);
}

static void cmd_latency_help(client_t *c) {
    static const char *help[] = {
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
        NULL};
    reply_help(c, "LATENCY", help);
}

static command_t latency_subcommands[] = {
    {"latest", cmd_latency_latest, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return the latest latency samples for all events", "2.8.13", NULL},
    {"history", cmd_latency_history, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return timestamp-latency samples for an event", "2.8.13", NULL},
    {"reset", cmd_latency_reset, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Reset latency data for one or more events", "2.8.13", NULL},
    {"graph", cmd_latency_graph, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return a latency graph for the event", "2.8.13", NULL},
    {"doctor", cmd_latency_doctor, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return a human readable latency analysis report", "2.8.13", NULL},
    {"histogram", latency_track_cmd_histogram, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Return the cumulative distribution of latencies of a subset of commands or all commands", "7.0.0", NULL}, /* latency_track.c */
    {"help", cmd_latency_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "Show helpful text about the different subcommands", "2.8.13", NULL},
    {0},
};

command_t latency_commands[] = {
    {"latency", NULL, -2, 0, 0, 0, 0, "server", "A container for latency diagnostics commands", "2.8.13", latency_subcommands},
    {0},
};
