/* resp.h: the request parser, bytes in, argv out (and its inverse,
 * resp_cat_command, an argv as request bytes).
 *
 * Understands RESP multibulk requests (*<n>\r\n$<len>\r\n<bytes>\r\n...) and
 * inline commands (a text line split like a shell).  It is pure: no sockets,
 * no server state, no mutable statics (each parser is independent, so
 * parsers may run on several threads).  The caller owns the buffer and gives the parser a
 * callback that turns argument bytes into whatever it wants to keep (the
 * server makes string objects); the parser only stores the returned
 * pointers.  State survives between calls, so a request arriving over many
 * reads is scanned once.
 *
 * Limits (from the caller, Redis's names): proto-max-bulk-len; 64 KB for an
 * inline line; 1M elements per multibulk; and while the connection is not yet
 * authenticated, 10 elements and 16 KB per bulk.  A violation returns
 * RESP_ERR with the text to send after "-ERR " (e.g. "Protocol error:
 * invalid bulk length"); the connection must then be closed. */
#ifndef RL_RESP_H
#define RL_RESP_H

#include <stdbool.h>
#include <stddef.h>

#include "sds.h"

#define RESP_INLINE_MAX (64 * 1024)
#define RESP_MBULK_MAX (1024 * 1024)

enum { RESP_NEED_MORE = 0,
       RESP_DONE = 1,
       RESP_ERR = -1 };

typedef void *resp_make_arg_fn(void *ctx, const char *p, size_t len);
typedef void resp_free_arg_fn(void *ctx, void *arg);

typedef struct resp_limits {
    long long max_bulk_len; /* proto-max-bulk-len */
    bool unauthenticated;   /* tighter limits before AUTH */
} resp_limits_t;

typedef struct resp_parser {
    int kind;           /* 0 = between requests, '*' multibulk, 'i' inline */
    long pending;       /* multibulk elements still to read */
    long long bulk_len; /* length of the bulk being read, -1 = header next */
    int argc, argv_cap;
    void **argv; /* made by make_arg, owned by the parser until taken */
    resp_make_arg_fn *make_arg;
    resp_free_arg_fn *free_arg;
    void *ctx;
    const char *error; /* text of the last RESP_ERR: a constant or errbuf */
    char errbuf[64];   /* the parser's own messages that quote input */
} resp_parser_t;

void resp_parser_init(resp_parser_t *p, resp_make_arg_fn *make, resp_free_arg_fn *free_arg, void *ctx);
/* Frees held arguments and the argv array. */
void resp_parser_free(resp_parser_t *p);

/* Parse from buf[*pos..len).  On RESP_DONE one request is complete: take it
 * with resp_take_argv.  *pos advances past what was consumed. */
int resp_parse(resp_parser_t *p, const char *buf, size_t len, size_t *pos, const resp_limits_t *lim);

/* Hand the completed argv to the caller, who must free each argument; the
 * array stays owned by the parser and is reused for the next request. */
void **resp_take_argv(resp_parser_t *p, int *argc);
/* After the caller is done with the argv returned by resp_take_argv. */
void resp_reset(resp_parser_t *p);

/* True while the parser is in the middle of a request. */
static inline bool resp_in_request(const resp_parser_t *p) { return p->kind != 0; }

/* The other direction: a command as a request, appended to buf (the AOF,
 * the replication stream and our replica's own requests write this). */
sds resp_cat_command(sds buf, int argc, const char **argv, const size_t *lens);

#endif
