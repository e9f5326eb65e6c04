/* test_sparkline.c: unit tests for lib/sparkline.c, the renderer behind
 * LATENCY GRAPH: exact pictures for small sequences (levels, '|' columns,
 * the blank row and vertical labels), a flat sequence, and the cut into
 * blocks of `columns` values separated by an empty line. */
#include "test_help.h"
#include "sparkline.h"

static int test_two_samples(void) {
    /* Redis's LATENCY GRAPH for samples 55 and 128 ms, 1 s and 0 s ago. */
    double v[] = {55, 128};
    const char *labels[] = {"1s", "0s"};
    sds out = sparkline_render(sds_empty(), v, labels, 2, 80, 4);
    CHECK(!strcmp(out, " #\n |\n |\n_|\n  \n10\nss\n"));
    sds_free(out);
    return 0;
}

static int test_levels_and_flat(void) {
    /* Heights 0..11 in steps of 1 over 4 rows of 3 levels. */
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i;
    sds out = sparkline_render(sds_empty(), v, NULL, 12, 80, 4);
    CHECK(!strcmp(out, "         _o#\n      _o#|||\n   _o#||||||\n_o#|||||||||\n"));
    sds_free(out);
    double flat[] = {7, 7, 7};
    out = sparkline_render(sds_empty(), flat, NULL, 3, 80, 4);
    CHECK(!strcmp(out, "   \n   \n   \n___\n"));
    sds_free(out);
    return 0;
}

static int test_blocks(void) {
    double v[5] = {1, 2, 3, 4, 5};
    const char *labels[] = {"a", "b", "c", "d", "e"};
    sds out = sparkline_render(sds_empty(), v, labels, 5, 2, 1);
    /* Rows of 1 (3 levels): heights 0, 0, 1, 2, 2 over range 4. */
    CHECK(!strcmp(out, "__\n  \nab\n\no#\n  \ncd\n\n#\n \ne\n"));
    sds_free(out);
    CHECK(sds_len(out = sparkline_render(sds_empty(), v, NULL, 0, 80, 4)) == 0);
    sds_free(out);
    return 0;
}

int main(void) {
    RUN_TEST(test_two_samples);
    RUN_TEST(test_levels_and_flat);
    RUN_TEST(test_blocks);
    return TEST_REPORT("test_sparkline");
}
