/* version.h: the version we report, and the Redis version we are
 * compatible with (INFO, HELLO, LOLWUT, the RDB's redis-ver, Lua's
 * redis.REDIS_VERSION, config errors).
 *
 * A header of constants at the bottom of the layers: config.c prints the
 * version without seeing the server's state.  server.h includes it. */
#ifndef RL_VERSION_H
#define RL_VERSION_H

#define RL_VERSION "0.1.0"
#define RL_REDIS_COMPAT_VERSION "7.4.1" /* issue 47: Redis 7.4's surface (docs/compatibility-74.md) */

#endif
