/* test_geohash.c: the geohash library (lib/geohash.c) against values
 * Redis 7.0 documents and replies: scores of known places, their decoded
 * positions, distances, the 11-character geohash, bit interleaving,
 * neighbours wrapping around, and the cells chosen for a search. */
#include <math.h>
#include <stdio.h>

#include "geohash.h"
#include "test_help.h"

static int test_interleave_roundtrip(void) {
    CHECK(geohash_interleave(1, 0) == 1);
    CHECK(geohash_interleave(0, 1) == 2);
    CHECK(geohash_interleave(0xFFFFFFFF, 0) == 0x5555555555555555ULL);
    uint32_t a = 0x12345678, b = 0x9abcdef0;
    uint64_t x = geohash_deinterleave(geohash_interleave(a, b));
    CHECK((uint32_t)x == a && (uint32_t)(x >> 32) == b);
    return 0;
}

static int test_known_scores(void) {
    /* GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania */
    geohash_bits_t h;
    CHECK(geohash_encode_wgs84(13.361389, 38.115556, GEO_STEP_MAX, &h));
    CHECK(geohash_align52(h) == 3479099956230698ULL);
    CHECK(geohash_encode_wgs84(15.087269, 37.502669, GEO_STEP_MAX, &h));
    CHECK(geohash_align52(h) == 3479447370796909ULL);
    CHECK(!geohash_encode_wgs84(13, 86, GEO_STEP_MAX, &h));
    CHECK(!geohash_encode_wgs84(181, 0, GEO_STEP_MAX, &h));
    return 0;
}

static int test_decode_and_distance(void) {
    double p[2], c[2];
    CHECK(geohash_decode_score(3479099956230698.0, p));
    CHECK(geohash_decode_score(3479447370796909.0, c));
    char buf[64];
    snprintf(buf, sizeof(buf), "%.17Lf", (long double)p[0]);
    CHECK(strcmp(buf, "13.36138933897018433") == 0);
    snprintf(buf, sizeof(buf), "%.17Lf", (long double)p[1]);
    CHECK(strcmp(buf, "38.11555639549629859") == 0);
    snprintf(buf, sizeof(buf), "%.4f", geohash_distance(p[0], p[1], c[0], c[1]));
    CHECK(strcmp(buf, "166274.1516") == 0);
    /* Same meridian: the shortcut equals the full formula's value. */
    double d = geohash_distance(10, 0, 10, 1);
    CHECK(fabs(d - 6372797.560856 * M_PI / 180) < 1e-6);
    CHECK(geohash_distance(5, 5, 5, 5) == 0);
    return 0;
}

static int test_neighbors_wrap(void) {
    geohash_bits_t h = {0, 3}; /* south-west corner cell at 3 steps */
    geohash_neighbors_t n;
    geohash_neighbors(&h, &n);
    uint64_t w = geohash_deinterleave(n.west.bits), s = geohash_deinterleave(n.south.bits);
    CHECK((uint32_t)(w >> 32) == 7 && (uint32_t)w == 0); /* longitude wrapped */
    CHECK((uint32_t)(s >> 32) == 0 && (uint32_t)s == 7); /* latitude wrapped */
    uint64_t ne = geohash_deinterleave(n.north_east.bits);
    CHECK((uint32_t)(ne >> 32) == 1 && (uint32_t)ne == 1);
    CHECK(n.east.step == 3);
    return 0;
}

static int test_search_cells_cover(void) {
    /* Every point within the radius must fall in one of the scanned cells. */
    geo_shape_t s = {GEO_SHAPE_CIRCLE, {15, 37}, 1000, 200, 0, 0};
    geohash_radius_t r = geohash_search_areas(&s);
    const geohash_bits_t cells[9] = {r.hash, r.neighbors.north, r.neighbors.south, r.neighbors.east,
                                     r.neighbors.west, r.neighbors.north_east, r.neighbors.north_west,
                                     r.neighbors.south_east, r.neighbors.south_west};
    for (int i = 0; i < 360; i += 5) {
        double lon = 15 + 1.9 * cos(i * M_PI / 180), lat = 37 + 1.7 * sin(i * M_PI / 180), dist;
        if (!geohash_within_shape(&s, lon, lat, &dist)) continue;
        geohash_bits_t p;
        CHECK(geohash_encode_wgs84(lon, lat, GEO_STEP_MAX, &p));
        uint64_t score = geohash_align52(p);
        bool found = false;
        for (int k = 0; k < 9; k++) {
            if (!cells[k].step) continue;
            geohash_bits_t next = cells[k];
            next.bits++;
            if (score >= geohash_align52(cells[k]) && score < geohash_align52(next)) found = true;
        }
        CHECK(found);
    }
    /* Radius 0 searches at full precision. */
    geo_shape_t z = {GEO_SHAPE_CIRCLE, {15, 37}, 1, 0, 0, 0};
    CHECK_EQ_INT(geohash_search_areas(&z).hash.step, GEO_STEP_MAX);
    return 0;
}

static int test_box_shape(void) {
    geo_shape_t b = {GEO_SHAPE_BOX, {0, 0}, 1000, 0, 200, 100};
    double d;
    CHECK(geohash_within_shape(&b, 0.8, 0.3, &d));  /* ~89 km E, ~33 km N */
    CHECK(!geohash_within_shape(&b, 0.0, 0.5, &d)); /* ~56 km N > 50 */
    CHECK(!geohash_within_shape(&b, 1.0, 0.0, &d)); /* ~111 km E > 100 */
    return 0;
}

int main(void) {
    RUN_TEST(test_interleave_roundtrip);
    RUN_TEST(test_known_scores);
    RUN_TEST(test_decode_and_distance);
    RUN_TEST(test_neighbors_wrap);
    RUN_TEST(test_search_cells_cover);
    RUN_TEST(test_box_shape);
    return TEST_REPORT("geohash");
}
