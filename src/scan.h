/* scan.h: the one SCAN engine behind SCAN, HSCAN, SSCAN and ZSCAN.
 *
 * A caller parses "<cursor> [MATCH p] [COUNT n] [TYPE t]" with
 * scan_args_parse_or_reply(), describes what it walks with a scan_source_t,
 * and scan_reply() sends the two-element reply.  A source is either a dict
 * (hashtable encodings) stepped by cursor with dict_scan_some, or a
 * hashtable (the keyspace) stepped with ht_scan, both with the guarantee
 * that every element present for the whole scan is returned at least once,
 * or a compact encoding (listpack, intset), returned whole with
 * cursor 0 as Redis does.  What differs per type is only how an element is
 * named and what is replied for it: the callbacks. */
#ifndef RL_SCAN_H
#define RL_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"
#include "dict.h"
#include "hashtable.h"

typedef struct scan_args {
    unsigned long cursor;
    long long count; /* COUNT, default 10 */
    const char *pat; /* MATCH pattern; NULL when absent or "*" */
    size_t patlen;
    const char *type; /* TYPE (SCAN only); NULL when absent */
    bool novalues;    /* NOVALUES (HSCAN only, Redis 7.4): fields without their values */
} scan_args_t;

/* Parse the cursor at argv[cursor_arg] and the options after it; TYPE is
 * accepted only with SCAN_OPT_TYPE in opts (SCAN), NOVALUES only with
 * SCAN_OPT_NOVALUES (HSCAN).  Replies and returns false on error. */
#define SCAN_OPT_TYPE 1
#define SCAN_OPT_NOVALUES 2
bool scan_args_parse_or_reply(client_t *c, int cursor_arg, int opts, scan_args_t *a);
/* Parse a SCAN cursor the way Redis does (strtoul rules). */
bool scan_parse_cursor_or_reply(client_t *c, robj *o, unsigned long *cursor);
bool scan_match(const scan_args_t *a, const char *s, size_t len);

typedef struct scan_source scan_source_t;
struct scan_source {
    dict *d; /* dict source; NULL for a compact one */
    /* Compact source: advance to the next element, naming it in s and len;
     * false at the end.  `state` is the caller's iterator. */
    bool (*next)(void *state, const char **s, size_t *len);
    /* Reply for the element just named (de: its dict entry, NULL for a
     * compact source, where `state` holds the position); returns how many
     * bulk strings were sent. */
    long (*emit)(client_t *c, void *state, dict_entry *de, const char *s, size_t len);
    /* Optional extra filter (the keyspace: expired keys, TYPE). */
    bool (*keep)(client_t *c, const scan_args_t *a, dict_entry *de);
    void *state;
    /* Hashtable source (the keyspace, hashtable sets and hashes): the
     * table, each entry's name, an optional filter, and an optional reply
     * (returns how many bulk strings it sent; default: the name). */
    ht *t;
    sds (*t_name)(void *entry);
    bool (*t_keep)(client_t *c, const scan_args_t *a, void *entry, void *state);
    long (*t_emit)(client_t *c, void *entry);
};

/* Send [cursor, elements] for one step of the scan described by src. */
void scan_reply(client_t *c, const scan_args_t *a, const scan_source_t *src);
/* The reply for a missing key: cursor 0, no elements. */
void scan_reply_empty(client_t *c);

#endif
