/* sparkline.c: ASCII sparklines (see sparkline.h).
 *
 * Scale: a column's height in steps is trunc(trunc((v - min) * steps) /
 * (max - min)), with steps = 3 * rows and a flat sequence treated as a
 * range of 1, kept within 0 .. steps - 1.  Row r (0 = top) shows level
 * height - 3 * (rows - 1 - r) of a column: '_', 'o' or '#' for 0, 1, 2,
 * '|' above 2 (the column continues up), blank below 0.  These rules give
 * the same picture as Redis's LATENCY GRAPH for the same samples. */
#include "sparkline.h"

#include <stdbool.h>
#include <string.h>

#include "zmalloc.h"

static const char levels[] = "_o#";
#define LEVELS 3

static int height(double v, double min, double range, int steps) {
    int h = (int)((double)(int)((v - min) * steps) / range);
    if (h < 0) h = 0;
    if (h >= steps) h = steps - 1;
    return h;
}

/* One block: columns [from, from + len). */
static sds render_block(sds out, const double *values, const char *const *labels, int from, int len, int rows,
                        double min, double range) {
    int steps = LEVELS * rows;
    bool any_label = false;
    size_t longest = 0;
    for (int j = from; labels && j < from + len; j++) {
        size_t l = labels[j] ? strlen(labels[j]) : 0;
        if (l) any_label = true;
        if (l > longest) longest = l;
    }
    char *line = zmalloc((size_t)len);
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < len; j++) {
            int lvl = height(values[from + j], min, range, steps) - LEVELS * (rows - 1 - r);
            line[j] = lvl < 0 ? ' ' : lvl < LEVELS ? levels[lvl]
                                                   : '|';
        }
        out = sds_catlen(out, line, (size_t)len);
        out = sds_catlen(out, "\n", 1);
    }
    if (any_label) {
        memset(line, ' ', (size_t)len); /* the gap above the labels */
        out = sds_catlen(out, line, (size_t)len);
        out = sds_catlen(out, "\n", 1);
        for (size_t k = 0; k < longest; k++) {
            for (int j = 0; j < len; j++) {
                const char *l = labels[from + j];
                line[j] = l && strlen(l) > k ? l[k] : ' ';
            }
            out = sds_catlen(out, line, (size_t)len);
            out = sds_catlen(out, "\n", 1);
        }
    }
    zfree(line);
    return out;
}

sds sparkline_render(sds out, const double *values, const char *const *labels, int n, int columns, int rows) {
    if (n <= 0) return out;
    double min = values[0], max = values[0];
    for (int i = 1; i < n; i++) {
        if (values[i] < min) min = values[i];
        if (values[i] > max) max = values[i];
    }
    double range = max - min == 0 ? 1 : max - min;
    for (int from = 0; from < n; from += columns) {
        if (from) out = sds_catlen(out, "\n", 1);
        int len = n - from < columns ? n - from : columns;
        out = render_block(out, values, labels, from, len, rows, min, range);
    }
    return out;
}
