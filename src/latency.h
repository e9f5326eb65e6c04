/* latency.h: the latency monitor (LATENCY LATEST/HISTORY/RESET/HELP).
 *
 * Code paths that may be slow report their duration under an event name
 * ("command", "fast-command" from dispatch.c); a sample is kept only when
 * latency-monitor-threshold (ms) is non-zero and the duration reaches it.
 * Each event keeps its last 160 samples (one per second: a second sample in
 * the same second keeps the larger) and its all-time maximum. */
#ifndef RL_LATENCY_H
#define RL_LATENCY_H

#include "commands.h"

typedef struct latency latency_t;


latency_t *latency_create(void);
void latency_free(latency_t *l);
/* Record duration_ms under event if it reaches the threshold. */
void latency_add_sample_if_needed(server_t *srv, const char *event, long long duration_ms);
/* child.c after each fork: GB of used memory per second of the fork,
 * which LATENCY DOCTOR judges (kept here, so latency.c needs nothing of
 * child.c above it). */
void latency_note_fork_rate(server_t *srv, double gb_per_sec);
/* dispatch.c: after a command ran for duration_us. */
void latency_record_command(server_t *srv, const command_t *cmd, long long duration_us);


#endif
