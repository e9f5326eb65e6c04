/* function.h: Redis 7 Functions: libraries of Lua functions loaded with
 * FUNCTION LOAD, called with FCALL/FCALL_RO, saved in the RDB (opcode 245)
 * and in FUNCTION DUMP payloads.
 *
 * lifecycle.c calls functions_init after scripting_init (the registry
 * hangs off srv->scripting) and functions_free before scripting_free;
 * info.c asks for the INFO figures; rdb_save/rdb_load reach the RDB
 * functions through durability_hooks_t.  Libraries live in their own Lua
 * state, separate from EVAL's; FCALL runs through script.c's run. */
#ifndef RL_FUNCTION_H
#define RL_FUNCTION_H

#include <stddef.h>

#include "commands.h"

void functions_init(server_t *srv);
void functions_free(server_t *srv);

size_t functions_count(server_t *srv);         /* number_of_functions */
size_t functions_library_count(server_t *srv); /* number_of_libraries */
size_t functions_vm_memory(server_t *srv);     /* used_memory_vm_functions */
size_t functions_overhead(server_t *srv);      /* used_memory_functions */

/* RDB (opcode 245): every library's code, and loading one back (NULL or
 * the error text, caller frees; a server without scripting skips it). */
void functions_foreach_library(server_t *srv, void (*fn)(void *arg, const char *code, size_t len), void *arg);
sds functions_load_code(server_t *srv, const char *code, size_t len, bool replace);
/* Drop every library (FUNCTION FLUSH; a replica before a full sync). */
void functions_flush(server_t *srv);
/* FCALL/FCALL_RO naming a function: its flags (SCRIPT_FLAG_*), for
 * dispatch.c's checks (script.h: script_flags_as_command). */
bool functions_declared_flags(server_t *srv, const client_t *c, const command_t *cmd, int *flags);

#endif
