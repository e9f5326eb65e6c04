/* geohash.c: geohash encoding, decoding, neighbours, distances and the
 * choice of cells for a search (see geohash.h for the format).
 *
 * Search cells: the step is the coarsest at which one cell is about as wide
 * as the search radius (found by doubling the radius until it reaches the
 * Mercator half-width), one step finer near the poles where cells narrow.
 * The center cell and its 8 neighbours then cover the shape; if a
 * neighbour does not reach the shape's bounding box edge the step is made
 * one coarser, and neighbours on the sides the bounding box does not reach
 * are dropped.  Every candidate is then checked against the exact shape,
 * so the cells only decide what is scanned and in which order (the order
 * unsorted replies come in).  The floating-point steps follow the same
 * formulas in the same order as Redis 7's, so scores, coordinates and
 * distances are bit-identical. */
#include "geohash.h"

#include <math.h>
#include <stddef.h>

#define EARTH_RADIUS_M 6372797.560856
#define MERCATOR_MAX 20037726.37
#define DEG_TO_RAD (M_PI / 180.0)

static inline double deg_rad(double d) { return d * DEG_TO_RAD; }
static inline double rad_deg(double r) { return r / DEG_TO_RAD; }

/* ------------------------------------------------------------ bits */

/* Spread the 32 bits of v over the even bits of a 64-bit word. */
static uint64_t spread(uint32_t v) {
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* Gather the even bits of x into 32 bits. */
static uint32_t squash(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

uint64_t geohash_interleave(uint32_t lat_part, uint32_t lon_part) { return spread(lat_part) | (spread(lon_part) << 1); }

uint64_t geohash_deinterleave(uint64_t bits) {
    return (uint64_t)squash(bits) | ((uint64_t)squash(bits >> 1) << 32);
}

uint64_t geohash_align52(geohash_bits_t hash) { return hash.bits << (52 - hash.step * 2); }

/* ------------------------------------------------------------ encode/decode */

bool geohash_encode(const geohash_range_t *lon_r, const geohash_range_t *lat_r, double lon, double lat,
                    uint8_t step, geohash_bits_t *out) {
    if (lon > GEO_LONG_MAX || lon < GEO_LONG_MIN || lat > GEO_LAT_MAX || lat < GEO_LAT_MIN) return false;
    out->bits = 0;
    out->step = step;
    if (lat < lat_r->min || lat > lat_r->max || lon < lon_r->min || lon > lon_r->max) return false;
    double lat_off = (lat - lat_r->min) / (lat_r->max - lat_r->min);
    double lon_off = (lon - lon_r->min) / (lon_r->max - lon_r->min);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    out->bits = geohash_interleave((uint32_t)lat_off, (uint32_t)lon_off);
    return true;
}

static const geohash_range_t WGS84_LON = {GEO_LONG_MIN, GEO_LONG_MAX};
static const geohash_range_t WGS84_LAT = {GEO_LAT_MIN, GEO_LAT_MAX};

bool geohash_encode_wgs84(double lon, double lat, uint8_t step, geohash_bits_t *out) {
    return geohash_encode(&WGS84_LON, &WGS84_LAT, lon, lat, step, out);
}

bool geohash_decode(geohash_range_t lon_r, geohash_range_t lat_r, geohash_bits_t hash, geohash_area_t *area) {
    area->hash = hash;
    uint64_t sep = geohash_deinterleave(hash.bits);
    uint32_t ilat = (uint32_t)sep, ilon = (uint32_t)(sep >> 32);
    double lat_scale = lat_r.max - lat_r.min, lon_scale = lon_r.max - lon_r.min;
    double cells = (double)(1ULL << hash.step);
    area->latitude.min = lat_r.min + (ilat * 1.0 / cells) * lat_scale;
    area->latitude.max = lat_r.min + ((ilat + 1) * 1.0 / cells) * lat_scale;
    area->longitude.min = lon_r.min + (ilon * 1.0 / cells) * lon_scale;
    area->longitude.max = lon_r.min + ((ilon + 1) * 1.0 / cells) * lon_scale;
    return true;
}

bool geohash_decode_wgs84(geohash_bits_t hash, double *xy) {
    geohash_area_t a;
    geohash_decode(WGS84_LON, WGS84_LAT, hash, &a);
    xy[0] = (a.longitude.min + a.longitude.max) / 2;
    if (xy[0] > GEO_LONG_MAX) xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN) xy[0] = GEO_LONG_MIN;
    xy[1] = (a.latitude.min + a.latitude.max) / 2;
    if (xy[1] > GEO_LAT_MAX) xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN) xy[1] = GEO_LAT_MIN;
    return true;
}

bool geohash_decode_score(double score, double *xy) {
    geohash_bits_t h = {(uint64_t)score, GEO_STEP_MAX};
    return geohash_decode_wgs84(h, xy);
}

/* ------------------------------------------------------------ neighbours */

/* Move a cell by dx, dy (-1, 0, 1) cells, wrapping around each axis. */
static geohash_bits_t move(geohash_bits_t h, int dx, int dy) {
    uint64_t sep = geohash_deinterleave(h.bits);
    uint32_t mask = h.step >= 32 ? UINT32_MAX : (uint32_t)((1ULL << h.step) - 1);
    uint32_t lat = (uint32_t)sep, lon = (uint32_t)(sep >> 32);
    lon = (uint32_t)(lon + (uint32_t)dx) & mask;
    lat = (uint32_t)(lat + (uint32_t)dy) & mask;
    h.bits = geohash_interleave(lat, lon);
    return h;
}

void geohash_neighbors(const geohash_bits_t *h, geohash_neighbors_t *n) {
    n->east = move(*h, 1, 0);
    n->west = move(*h, -1, 0);
    n->south = move(*h, 0, -1);
    n->north = move(*h, 0, 1);
    n->north_west = move(*h, -1, 1);
    n->south_west = move(*h, -1, -1);
    n->north_east = move(*h, 1, 1);
    n->south_east = move(*h, 1, -1);
}

/* ------------------------------------------------------------ distances */

/* Along a meridian the haversine reduces to the latitude difference. */
static double lat_distance(double lat1, double lat2) { return EARTH_RADIUS_M * fabs(deg_rad(lat2) - deg_rad(lat1)); }

double geohash_distance(double lon1, double lat1, double lon2, double lat2) {
    double lon1r = deg_rad(lon1), lon2r = deg_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    if (v == 0.0) return lat_distance(lat1, lat2);
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * EARTH_RADIUS_M * asin(sqrt(a));
}

/* geohash_distance(lon1, lat, lon2, lat) with the terms that are zero or
 * repeated on one parallel computed once: the same operations in the same
 * order, so the same bits, for 2 transcendental calls instead of 5 (the
 * box test runs it for every candidate point). */
static double parallel_distance(double lon1, double lon2, double lat) {
    double v = sin((deg_rad(lon2) - deg_rad(lon1)) / 2);
    if (v == 0.0) return 0.0;
    double c = cos(deg_rad(lat));
    double a = 0.0 * 0.0 + c * c * v * v;
    return 2.0 * EARTH_RADIUS_M * asin(sqrt(a));
}

bool geohash_within_shape(const geo_shape_t *s, double lon, double lat, double *dist) {
    if (s->type == GEO_SHAPE_CIRCLE) {
        *dist = geohash_distance(s->xy[0], s->xy[1], lon, lat);
        return *dist <= s->radius * s->conversion;
    }
    /* Box: the north-south offset first (cheap), then the east-west offset
     * measured along the point's own parallel. */
    double w = s->width * s->conversion, h = s->height * s->conversion;
    if (lat_distance(lat, s->xy[1]) > h / 2) return false;
    if (parallel_distance(lon, s->xy[0], lat) > w / 2) return false;
    *dist = geohash_distance(s->xy[0], s->xy[1], lon, lat);
    return true;
}

/* ------------------------------------------------------------ search cells */

static int steps_for_radius(double range_m, double lat) {
    if (range_m == 0) return GEO_STEP_MAX;
    int step = 1;
    while (range_m < MERCATOR_MAX) {
        range_m *= 2;
        step++;
    }
    step -= 2; /* so that the radius fits in most cases */
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > GEO_STEP_MAX) step = GEO_STEP_MAX;
    return step;
}

/* Bounding box of the shape: min lon, min lat, max lon, max lat. */
static void bounding_box(const geo_shape_t *s, double *b) {
    double lon = s->xy[0], lat = s->xy[1];
    double half_h = s->conversion * (s->type == GEO_SHAPE_CIRCLE ? s->radius : s->height / 2);
    double half_w = s->conversion * (s->type == GEO_SHAPE_CIRCLE ? s->radius : s->width / 2);
    double dlat = rad_deg(half_h / EARTH_RADIUS_M);
    double dlon_top = rad_deg(half_w / EARTH_RADIUS_M / cos(deg_rad(lat + dlat)));
    double dlon_bottom = rad_deg(half_w / EARTH_RADIUS_M / cos(deg_rad(lat - dlat)));
    /* The wider edge is the one nearer the pole. */
    bool south = lat < 0;
    b[0] = south ? lon - dlon_bottom : lon - dlon_top;
    b[2] = south ? lon + dlon_bottom : lon + dlon_top;
    b[1] = lat - dlat;
    b[3] = lat + dlat;
}

static const geohash_bits_t NO_CELL = {0, 0};

geohash_radius_t geohash_search_areas(const geo_shape_t *s) {
    double b[4];
    bounding_box(s, b);
    double min_lon = b[0], min_lat = b[1], max_lon = b[2], max_lat = b[3];
    double lon = s->xy[0], lat = s->xy[1];
    double radius_m = s->type == GEO_SHAPE_CIRCLE
                          ? s->radius
                          : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius_m *= s->conversion;
    int steps = steps_for_radius(radius_m, lat);

    geohash_radius_t r;
    geohash_encode(&WGS84_LON, &WGS84_LAT, lon, lat, (uint8_t)steps, &r.hash);
    geohash_neighbors(&r.hash, &r.neighbors);
    geohash_decode(WGS84_LON, WGS84_LAT, r.hash, &r.area);

    /* A neighbour that does not reach the bounding box's edge means the
     * cells are too small: go one step coarser. */
    geohash_area_t north, south, east, west;
    geohash_decode(WGS84_LON, WGS84_LAT, r.neighbors.north, &north);
    geohash_decode(WGS84_LON, WGS84_LAT, r.neighbors.south, &south);
    geohash_decode(WGS84_LON, WGS84_LAT, r.neighbors.east, &east);
    geohash_decode(WGS84_LON, WGS84_LAT, r.neighbors.west, &west);
    bool coarser = north.latitude.max < max_lat || south.latitude.min > min_lat ||
                   east.longitude.max < max_lon || west.longitude.min > min_lon;
    if (steps > 1 && coarser) {
        steps--;
        geohash_encode(&WGS84_LON, &WGS84_LAT, lon, lat, (uint8_t)steps, &r.hash);
        geohash_neighbors(&r.hash, &r.neighbors);
        geohash_decode(WGS84_LON, WGS84_LAT, r.hash, &r.area);
    }

    /* Drop the neighbours on sides the bounding box does not reach. */
    if (steps >= 2) {
        geohash_neighbors_t *n = &r.neighbors;
        if (r.area.latitude.min < min_lat) n->south = n->south_west = n->south_east = NO_CELL;
        if (r.area.latitude.max > max_lat) n->north = n->north_east = n->north_west = NO_CELL;
        if (r.area.longitude.min < min_lon) n->west = n->south_west = n->north_west = NO_CELL;
        if (r.area.longitude.max > max_lon) n->east = n->south_east = n->north_east = NO_CELL;
    }
    return r;
}
