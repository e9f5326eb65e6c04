/* lolwut.c: LOLWUT [VERSION v].
 *
 * Redis 7.0 answers LOLWUT with a verbatim text naming its version (its
 * generative-art pieces belong to versions 5 and 6); we answer the same
 * line with the Redis version we report in INFO (redis_version), for every
 * VERSION, which is still parsed and checked as Redis parses it. */
#include <string.h>

#include "commands.h"
#include "reply.h"
#include "server.h"

static void cmd_lolwut(client_t *c) {
    if (c->argc >= 3 && !strcasecmp(c->argv[1]->ptr, "version")) {
        long long v;
        if (!cmd_get_ll_or_reply(c, c->argv[2], &v, NULL)) return;
    }
    sds text = sds_catprintf(sds_empty(), "Redis ver. %s\n", RL_REDIS_COMPAT_VERSION);
    reply_verbatim(c, text, sds_len(text), "txt");
    sds_free(text);
}

command_t lolwut_commands[] = {
    {"lolwut", cmd_lolwut, -1, CMD_READONLY | CMD_FAST, 0, 0, 0, "server", "Display some computer art and the Redis version", "5.0.0", NULL},
    {0},
};
