/* alloc_advice.h: what each supported allocator would need for the live
 * allocations (MEMORY ALLOCATOR-ADVICE) and the size histogram itself
 * (MEMORY SIZES); see alloc_advice.c.  memory.c lists both handlers in the
 * MEMORY container. */
#ifndef RL_ALLOC_ADVICE_H
#define RL_ALLOC_ADVICE_H

#include "alloc_classes.h"
#include "server.h"

/* One allocator's prediction, in bytes (fractions from the estimated split
 * of live blocks by requested size). */
typedef struct alloc_prediction {
    ac_id_t id;
    double usable;    /* sum of usable sizes: used_memory on that build */
    double active;    /* allocator_active (glibc: allocator_allocated) */
    double metadata;  /* bookkeeping outside the active pages */
    double predicted; /* active + metadata */
} alloc_prediction_t;

typedef struct alloc_advice {
    double requested;                  /* bytes asked for by the live blocks */
    double blocks;                     /* live blocks */
    ac_id_t current;                   /* this build's allocator model */
    alloc_prediction_t pred[AC_COUNT]; /* indexed by ac_id_t */
} alloc_advice_t;

void alloc_advice_compute(alloc_advice_t *adv);

void cmd_memory_allocator_advice(client_t *c);
void cmd_memory_sizes(client_t *c);

#endif
