/* t_stream_cg.c: placeholder */
#include "commands.h"
command_t stream_cg_commands[] = {{0}};
