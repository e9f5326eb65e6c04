/* geohash.h: 52-bit interleaved geohashes, their neighbours, great-circle
 * distances, and the cells a radius or box search must scan.
 *
 * A position is quantised to `step` bits per axis (26 for stored points):
 * longitude over [-180, 180], latitude over the Web Mercator band
 * [-85.05112878, 85.05112878].  The two integers are interleaved, latitude
 * on the even bits and longitude on the odd bits, and a full-precision hash
 * (52 bits) is what a geo sorted set stores as the member's score.  A hash
 * of fewer steps names a cell; its 52-bit-aligned score range [min, max)
 * holds exactly the points inside the cell.
 *
 * Callers: src/geo.c (the GEO* commands), the unit test.  Pure functions,
 * no allocation, no server state. */
#ifndef RL_GEOHASH_H
#define RL_GEOHASH_H

#include <stdbool.h>
#include <stdint.h>

#define GEO_STEP_MAX 26
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN -180.0
#define GEO_LONG_MAX 180.0

typedef struct geohash_bits {
    uint64_t bits; /* 2*step interleaved bits */
    uint8_t step;  /* bits per axis; 0 marks an unused cell */
} geohash_bits_t;

typedef struct geohash_range {
    double min, max;
} geohash_range_t;

typedef struct geohash_area {
    geohash_bits_t hash;
    geohash_range_t longitude, latitude;
} geohash_area_t;

typedef struct geohash_neighbors {
    geohash_bits_t north, east, west, south, north_east, south_east, north_west, south_west;
} geohash_neighbors_t;

/* What a search looks for: a circle (radius) or a box (width x height)
 * around xy (longitude, latitude); sizes are in the unit given by
 * `conversion` (metres per unit). */
enum { GEO_SHAPE_CIRCLE = 1,
       GEO_SHAPE_BOX = 2 };
typedef struct geo_shape {
    int type;
    double xy[2];
    double conversion;
    double radius;        /* circle, in units */
    double width, height; /* box, in units */
} geo_shape_t;

/* The center cell, its 8 neighbours (some zeroed when not needed) and the
 * center cell's area, as the search scans them. */
typedef struct geohash_radius {
    geohash_bits_t hash;
    geohash_area_t area;
    geohash_neighbors_t neighbors;
} geohash_radius_t;

uint64_t geohash_interleave(uint32_t lat_part, uint32_t lon_part);
/* Inverse: latitude part in the low 32 bits, longitude in the high 32. */
uint64_t geohash_deinterleave(uint64_t bits);

/* Encode in the given ranges; false when the point is outside them (or
 * outside the Mercator band). */
bool geohash_encode(const geohash_range_t *lon_r, const geohash_range_t *lat_r, double lon, double lat,
                    uint8_t step, geohash_bits_t *out);
bool geohash_encode_wgs84(double lon, double lat, uint8_t step, geohash_bits_t *out);
bool geohash_decode(geohash_range_t lon_r, geohash_range_t lat_r, geohash_bits_t hash, geohash_area_t *area);
/* The center of a full-precision hash (a stored score) as (lon, lat). */
bool geohash_decode_wgs84(geohash_bits_t hash, double *xy);
bool geohash_decode_score(double score, double *xy);
/* The hash shifted to 52 bits: the lowest score inside the cell. */
uint64_t geohash_align52(geohash_bits_t hash);
void geohash_neighbors(const geohash_bits_t *hash, geohash_neighbors_t *n);

/* Haversine distance in metres between two (lon, lat) points on a sphere
 * of radius 6372797.560856 m. */
double geohash_distance(double lon1, double lat1, double lon2, double lat2);
/* Distance from the shape's center to (lon, lat) when the point lies
 * inside the shape; false otherwise. */
bool geohash_within_shape(const geo_shape_t *shape, double lon, double lat, double *dist);
/* The cells to scan for the shape. */
geohash_radius_t geohash_search_areas(const geo_shape_t *shape);

#endif
