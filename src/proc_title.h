/* proc_title.h: the process title ps shows, made from proc-title-template
 * (see proc_title.c).  No server types here, so config.c can check a
 * template without depending on the server. */
#ifndef RL_PROC_TITLE_H
#define RL_PROC_TITLE_H

#include <stdbool.h>

#include "sds.h"

/* Where the server listens and what it was started with: the template's
 * variables other than {title}. */
typedef struct proc_title_place {
    const char *bind0;  /* the first bind address, or NULL (shown as "*") */
    long long port;     /* 0: no TCP listener */
    long long tls_port; /* {listen-addr} shows it when there is no TCP port, as Redis */
    const char *unixsocket;
    const char *config_file; /* absolute path, or NULL */
} proc_title_place_t;

#define PROC_TITLE_ERR_TEMPLATE "template format is invalid or contains unknown variables"

/* Once, first thing in main(): moves the environment and the arguments'
 * strings out of the block the kernel shows as the command line, so that
 * block can hold a title.  argv[] then points at copies. */
void proc_title_init(int argc, char **argv);
/* argv[0] as the program was run (before any title replaced it). */
const char *proc_title_program(void);
/* The template filled in, spaces trimmed off both ends; NULL when it is
 * malformed, names a variable there is none of, or (with title "", as
 * Redis checks a template) comes out blank. */
sds proc_title_make(const char *tpl, const char *title, const proc_title_place_t *where);
/* Show title as the command line (cut to the space there is). */
void proc_title_set(const char *title);

#endif
