/* t_set.h: read access to set values for other commands (ZUNION, ZINTER
 * and ZDIFF accept sets as inputs, every member scored 1).  Defined in
 * t_set.c, which owns the set encodings; callers never look inside them. */
#ifndef RL_T_SET_H
#define RL_T_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "object.h"

typedef void set_member_fn(void *arg, const char *s, size_t len);
void set_type_foreach(robj *set, set_member_fn *fn, void *arg);
bool set_type_is_member(robj *set, const char *s, size_t len);
unsigned long set_type_size(const robj *set);
/* RDB loading: an empty hashtable-encoded set presized for expected
 * members, and adding a member (copied) to it; false if already there. */
robj *set_type_create_ht(size_t expected);
bool set_type_ht_add(robj *set, const char *s, size_t len);

#endif
