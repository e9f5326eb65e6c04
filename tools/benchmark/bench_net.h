/* bench_net.h: blocking connection helpers of the benchmark.
 *
 * Connect (TCP or unix socket) with redis-benchmark's error wording, the
 * session handshake (AUTH, HELLO 3, SELECT) and simple request/reply calls
 * used outside the hot path: the start-up probe in main, connection set-up
 * in bench_engine.c, and the INFO poller in bench_memsample.c. */
#ifndef RL_BENCH_NET_H
#define RL_BENCH_NET_H

#include <stddef.h>

#include "bench_opts.h"

/* Returns a blocking fd or -1 with a message in err. */
int bench_net_connect(const bench_opts_t *o, char *err, size_t errlen);
/* AUTH / HELLO 3 / SELECT as the options ask; 0 or -1 with err filled. */
int bench_net_handshake(int fd, const bench_opts_t *o, char *err, size_t errlen);
/* Sends argv as one multibulk request and reads one whole reply, raw, into
 * reply (NUL-terminated, truncated to cap-1).  Returns the reply's type byte
 * ('+', '-', '$', '*', ...) or -1 on an I/O or protocol error. */
int bench_net_call(int fd, char *reply, size_t cap, int argc, const char **argv);
/* The idx-th bulk string of a raw array reply into out; 0 or -1. */
int bench_net_array_bulk(const char *reply, int idx, char *out, size_t cap);
/* Value of "field:" in a raw INFO reply into out; 0 or -1 if absent. */
int bench_net_info_field(const char *info, const char *field, char *out, size_t cap);
/* True when the target is this machine (unix socket or loopback). */
int bench_net_is_local(const bench_opts_t *o);

#endif
