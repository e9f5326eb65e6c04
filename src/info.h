/* info.h: the INFO command's text, formatted from each module's stats. */
#ifndef RL_INFO_H
#define RL_INFO_H

#include "server.h"

/* Build the INFO text for the requested sections (argv-style, may be
 * empty for "default"); caller frees. */
sds info_generate(server_t *srv, int nsections, char **sections);

#endif
