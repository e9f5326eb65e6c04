/* reply.h: reply builders (RESP2 and RESP3) and the sole writer of errors.
 *
 * Handlers call these to queue output on a client; nothing here touches a
 * socket (conn.c flushes).  Error replies go through reply_error*: they get
 * the "-ERR " prefix unless the text starts with its own code, have CR/LF
 * replaced by spaces, and are counted per code for INFO errorstats.
 * Redis 7's fixed error texts are the RL_ERR_* constants below. */
#ifndef RL_REPLY_H
#define RL_REPLY_H

#include <stdarg.h>
#include <stddef.h>

#include "conn.h"
#include "object.h"

#define RL_ERR_SYNTAX "syntax error"
#define RL_ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define RL_ERR_NOT_INT "value is not an integer or out of range"
#define RL_ERR_NOT_FLOAT "value is not a valid float"
#define RL_ERR_OVERFLOW "increment or decrement would overflow"
#define RL_ERR_NO_KEY "no such key"
#define RL_ERR_OUT_OF_RANGE "index out of range"
#define RL_ERR_NOAUTH "NOAUTH Authentication required."
#define RL_ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define RL_ERR_DB_INDEX "DB index is out of range"
#define RL_ERR_POSITIVE "value is out of range, must be positive"

void reply_raw(client_t *c, const char *p, size_t len);
void reply_simple(client_t *c, const char *s); /* +s */
void reply_ok(client_t *c);
void reply_error(client_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_error_arity(client_t *c);
/* An error line exactly as given (no "ERR " added): scripts' {err=...}
 * replies, whose first word is the code whatever it is. */
void reply_error_raw(client_t *c, const char *msg, size_t len);
/* A script's call met an error (a refusal, its command's error reply):
 * note counts it in errorstats then, whether or not the script lets it
 * through; raw_noted replies it without counting it again (Redis's
 * ignore_error_stats_update), only as the script command's failure. */
void reply_note_error(server_t *srv, const char *msg, size_t len);
void reply_error_raw_noted(client_t *c, const char *msg, size_t len);
void reply_ll(client_t *c, long long v); /* :v */
void reply_bulk(client_t *c, const char *p, size_t len);
void reply_bulk_cstr(client_t *c, const char *s); /* NULL -> null */
void reply_bulk_sds_take(client_t *c, sds s);     /* takes s */
void reply_bulk_obj(client_t *c, const robj *o);
void reply_bulk_ll(client_t *c, long long v);
void reply_null(client_t *c);       /* $-1 / _ */
void reply_null_array(client_t *c); /* *-1 / _ */
void reply_array_len(client_t *c, long n);
void reply_push_len(client_t *c, long n); /* RESP2 '*', RESP3 '>' */
/* Around an out-of-band message (a push): CLIENT REPLY OFF/SKIP do not
 * silence it, as in Redis 7.0.  begin returns what end restores. */
unsigned reply_push_begin(client_t *c);
void reply_push_end(client_t *c, unsigned was);
void reply_map_len(client_t *c, long n);                       /* RESP2: n*2 array */
void reply_set_len(client_t *c, long n);                       /* RESP2: array */
void reply_double(client_t *c, double d);                      /* RESP2 bulk, RESP3 ',' */
void reply_bool(client_t *c, int b);                           /* RESP2 :0/:1, RESP3 #t/#f */
void reply_big_number(client_t *c, const char *p, size_t len); /* RESP2 bulk, RESP3 '(' */
void reply_attribute_len(client_t *c, long n);                 /* RESP3 '|' only: callers skip it on RESP2 */
void reply_verbatim(client_t *c, const char *p, size_t len, const char *ext);
void reply_help(client_t *c, const char *cmdname, const char **lines);
void reply_subcommand_syntax_error(client_t *c);
void reply_empty_array(client_t *c);
/* A SCAN-family cursor: a bulk string holding the unsigned number. */
void reply_scan_cursor(client_t *c, unsigned long cursor);

/* A length that is only known after the elements: reserve a slot, fill it
 * later.  The slot must be filled before the handler returns. */
void *reply_deferred_len(client_t *c);
void reply_set_deferred_array_len(client_t *c, void *slot, long n);
void reply_set_deferred_map_len(client_t *c, void *slot, long n);
void reply_set_deferred_set_len(client_t *c, void *slot, long n);

#endif
