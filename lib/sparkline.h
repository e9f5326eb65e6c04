/* sparkline.h: ASCII sparklines, as LATENCY GRAPH draws them.
 *
 * A sequence of values (each with an optional short label) becomes `rows`
 * text rows where every column is one value, drawn with three levels per
 * row ('_', 'o', '#') and '|' below the top of a column, followed by a
 * blank row and the labels written vertically, one character per row.
 * Sequences longer than `columns` are cut into blocks separated by an empty
 * line.  The scale runs from the sequence's minimum to its maximum.  Pure
 * module: sds only. */
#ifndef RL_SPARKLINE_H
#define RL_SPARKLINE_H

#include "sds.h"

/* Appends to out and returns it (may realloc).  labels may be NULL, and so
 * may any of its entries. */
sds sparkline_render(sds out, const double *values, const char *const *labels, int n, int columns, int rows);

#endif
