/* latency_track.h: per-command latency histograms (latency-tracking):
 * recorded by dispatch.c, read by LATENCY HISTOGRAM (latency.c's
 * subcommand table) and INFO latencystats (info.c).  See latency_track.c. */
#ifndef RL_LATENCY_TRACK_H
#define RL_LATENCY_TRACK_H

#include "commands.h"
#include "sds.h"

/* After cmd ran for duration_us (not called for a call that blocked). */
void latency_track_record(server_t *srv, command_t *cmd, long long duration_us);
/* Append the "# Latencystats" INFO section to s; returns it (may realloc). */
sds latency_track_info(server_t *srv, sds s);
/* LATENCY HISTOGRAM [command ...] */
void latency_track_cmd_histogram(client_t *c);

#endif
