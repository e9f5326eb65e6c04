/* geo.c: the GEO commands (GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS,
 * GEORADIUSBYMEMBER and their _RO forms, GEOSEARCH, GEOSEARCHSTORE) on
 * sorted sets whose scores are 52-bit geohashes (lib/geohash.c).
 *
 * A search computes the cells to scan (center + up to 8 neighbours), walks
 * each cell's score range in the zset in order, keeps the points inside
 * the exact shape, then sorts (stable, by distance) and replies or stores.
 * Argument checking follows Redis 7.0 step by step, including its quirks
 * (GEORADIUSBYMEMBER on a missing key answers before parsing the radius),
 * so errors match.  Coordinates are replied as %.17Lf with trailing zeros
 * trimmed, distances as %.4f bulk strings.  Callers: the command table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "geohash.h"
#include "keyspace.h"
#include "notify.h"
#include "reply.h"
#include "util.h"
#include "zmalloc.h"
#include "zset.h"

#define ERR_UNIT "unsupported unit provided. please use M, KM, FT, MI"
#define ERR_DECODE_MEMBER "could not decode requested zset member"

/* ------------------------------------------------------------ argument helpers */

/* Longitude and latitude from argv[0], argv[1], within the Mercator band. */
static bool lonlat_or_reply(client_t *c, robj **argv, double *xy) {
    for (int i = 0; i < 2; i++) {
        if (!obj_get_double(argv[i], &xy[i])) {
            reply_error(c, RL_ERR_NOT_FLOAT);
            return false;
        }
    }
    if (xy[0] < GEO_LONG_MIN || xy[0] > GEO_LONG_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_error(c, "invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return false;
    }
    return true;
}

/* Metres per unit; negative after replying. */
static double unit_or_reply(client_t *c, robj *arg) {
    const char *u = arg->ptr;
    if (!strcasecmp(u, "m")) return 1;
    if (!strcasecmp(u, "km")) return 1000;
    if (!strcasecmp(u, "ft")) return 0.3048;
    if (!strcasecmp(u, "mi")) return 1609.34;
    reply_error(c, ERR_UNIT);
    return -1;
}

static bool number_or_reply(client_t *c, robj *arg, double *out, const char *msg) {
    if (!obj_get_double(arg, out)) {
        reply_error(c, "%s", msg);
        return false;
    }
    return true;
}

/* "<radius> <unit>" at argv. */
static bool radius_or_reply(client_t *c, robj **argv, geo_shape_t *s) {
    double r;
    if (!number_or_reply(c, argv[0], &r, "need numeric radius")) return false;
    if (r < 0) {
        reply_error(c, "radius cannot be negative");
        return false;
    }
    double conv = unit_or_reply(c, argv[1]);
    if (conv < 0) return false;
    s->type = GEO_SHAPE_CIRCLE;
    s->radius = r;
    s->conversion = conv;
    return true;
}

/* "<width> <height> <unit>" at argv. */
static bool box_or_reply(client_t *c, robj **argv, geo_shape_t *s) {
    double w, h;
    if (!number_or_reply(c, argv[0], &w, "need numeric width") ||
        !number_or_reply(c, argv[1], &h, "need numeric height"))
        return false;
    if (h < 0 || w < 0) {
        reply_error(c, "height or width cannot be negative");
        return false;
    }
    double conv = unit_or_reply(c, argv[2]);
    if (conv < 0) return false;
    s->type = GEO_SHAPE_BOX;
    s->width = w;
    s->height = h;
    s->conversion = conv;
    return true;
}

/* Position of a member; false when it is not in the zset. */
static bool member_lonlat(robj *zobj, robj *member, double *xy) {
    double score;
    if (!zset_score(zobj, member->ptr, sds_len(member->ptr), &score)) return false;
    return geohash_decode_score(score, xy);
}

/* A coordinate as Redis's "human" long double: %.17Lf, trailing zeros cut. */
static void reply_coord(client_t *c, double v) {
    char buf[128];
    int n = util_ld2str(buf, sizeof(buf), (long double)v);
    if (c->resp >= 3) {
        reply_raw(c, ",", 1);
        reply_raw(c, buf, (size_t)n);
        reply_raw(c, "\r\n", 2);
    } else {
        reply_bulk(c, buf, (size_t)n);
    }
}

static void reply_distance(client_t *c, double d) {
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "%.4f", d);
    reply_bulk(c, buf, (size_t)n);
}

/* ------------------------------------------------------------ GEOADD */

static void cmd_geoadd(client_t *c) {
    int in = 0, idx = 2;
    bool ch = false;
    for (; idx < c->argc; idx++) {
        const char *opt = c->argv[idx]->ptr;
        if (!strcasecmp(opt, "nx")) in |= ZADD_IN_NX;
        else if (!strcasecmp(opt, "xx")) in |= ZADD_IN_XX;
        else if (!strcasecmp(opt, "ch")) ch = true;
        else break;
    }
    int rest = c->argc - idx;
    if (rest % 3 || ((in & ZADD_IN_NX) && (in & ZADD_IN_XX)) || rest == 0) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    int n = rest / 3;
    double *scores = zmalloc(sizeof(double) * (size_t)n);
    for (int j = 0; j < n; j++) {
        double xy[2];
        if (!lonlat_or_reply(c, c->argv + idx + 3 * j, xy)) goto done;
        geohash_bits_t h;
        geohash_encode_wgs84(xy[0], xy[1], GEO_STEP_MAX, &h);
        scores[j] = (double)geohash_align52(h);
    }
    bool err;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, true, &err);
    if (err) goto done;
    zset_limits_t l = {c->srv->cfg.zset_max_listpack_entries, c->srv->cfg.zset_max_listpack_value};
    long long added = 0, updated = 0;
    if (!o) {
        if (in & ZADD_IN_XX) goto reply;
        bool big = l.max_entries == 0 || (long long)sds_len(c->argv[idx + 2]->ptr) > l.max_value;
        o = big ? zset_create_skiplist() : zset_create_listpack();
        db_add(c->db, c->argv[1], o);
    }
    for (int j = 0; j < n; j++) {
        sds m = c->argv[idx + 3 * j + 2]->ptr;
        int out;
        double ns = scores[j];
        zset_add(o, &l, scores[j], m, sds_len(m), in, &out, &ns);
        added += (out & ZADD_OUT_ADDED) != 0;
        updated += (out & ZADD_OUT_UPDATED) != 0;
    }
    if (added + updated) {
        db_signal_modified(c->db, c->argv[1]);
        notify_keyspace_event(c->srv, NOTIFY_ZSET, "zadd", c->argv[1], c->db->id);
    }
reply:
    reply_ll(c, ch ? added + updated : added);
done:
    zfree(scores);
}

/* ------------------------------------------------------------ GEODIST / GEOHASH / GEOPOS */

static void cmd_geodist(client_t *c) {
    double conv = 1;
    if (c->argc == 5) {
        conv = unit_or_reply(c, c->argv[4]);
        if (conv < 0) return;
    } else if (c->argc > 5) {
        reply_error(c, RL_ERR_SYNTAX);
        return;
    }
    bool err;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &err);
    if (err) return;
    double a[2], b[2];
    if (!o || !member_lonlat(o, c->argv[2], a) || !member_lonlat(o, c->argv[3], b)) {
        reply_null(c);
        return;
    }
    reply_distance(c, geohash_distance(a[0], a[1], b[0], b[1]) / conv);
}

static void cmd_geohash(client_t *c) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    bool err;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &err);
    if (err) return;
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (!o || !member_lonlat(o, c->argv[j], xy)) {
            reply_null(c);
            continue;
        }
        /* The standard geohash uses latitude -90..90, not the Mercator
         * band of the stored scores: re-encode before printing. */
        geohash_range_t lon_r = {-180, 180}, lat_r = {-90, 90};
        geohash_bits_t h;
        geohash_encode(&lon_r, &lat_r, xy[0], xy[1], GEO_STEP_MAX, &h);
        char buf[11];
        for (int i = 0; i < 10; i++) buf[i] = alphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
        buf[10] = alphabet[0]; /* 52 bits fill 10.4 characters; the 11th is 0 */
        reply_bulk(c, buf, 11);
    }
}

static void cmd_geopos(client_t *c) {
    bool err;
    robj *o = db_lookup_typed_or_reply(c, c->argv[1], OBJ_ZSET, false, &err);
    if (err) return;
    reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) {
        double xy[2];
        if (!o || !member_lonlat(o, c->argv[j], xy)) {
            reply_null_array(c);
            continue;
        }
        reply_array_len(c, 2);
        reply_coord(c, xy[0]);
        reply_coord(c, xy[1]);
    }
}

/* ------------------------------------------------------------ searches */

typedef struct geo_point {
    double xy[2];
    double dist; /* metres until the reply divides by the unit */
    double score;
    sds member;
} geo_point_t;

typedef struct geo_points {
    geo_point_t *v;
    size_t used, cap;
} geo_points_t;

static void points_push(geo_points_t *a, const char *m, size_t len, double score, const double *xy, double dist) {
    if (a->used == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = zrealloc(a->v, sizeof(*a->v) * a->cap);
    }
    geo_point_t *p = &a->v[a->used++];
    p->xy[0] = xy[0];
    p->xy[1] = xy[1];
    p->dist = dist;
    p->score = score;
    p->member = sds_newlen(m, len);
}

static void points_free(geo_points_t *a) {
    for (size_t i = 0; i < a->used; i++) sds_free(a->v[i].member);
    zfree(a->v);
}

/* Points of one cell (score range [min, max)) inside the shape, in score
 * order, until `limit` points in all (0: no limit). */
static void scan_cell(robj *zobj, geohash_bits_t cell, const geo_shape_t *s, geo_points_t *out, size_t limit) {
    geohash_bits_t next = cell;
    next.bits++;
    zsl_range_t r = {(double)geohash_align52(cell), (double)geohash_align52(next), false, true};
    zset_cursor_t cur;
    for (zset_cursor_in_range(&cur, zobj, &r, false); zset_cursor_valid(&cur); zset_cursor_next(&cur)) {
        double score = zset_cursor_score(&cur);
        if (!zsl_value_lte_max(score, &r)) break;
        double xy[2], dist;
        geohash_decode_score(score, xy);
        if (!geohash_within_shape(s, xy[0], xy[1], &dist)) continue;
        size_t len;
        const char *m = zset_cursor_member(&cur, &len);
        points_push(out, m, len, score, xy, dist);
        if (limit && out->used >= limit) break;
    }
}

/* The center cell and its neighbours in Redis's order; a neighbour equal
 * to the one scanned just before it (huge radii) is skipped. */
static void scan_cells(robj *zobj, const geohash_radius_t *r, const geo_shape_t *s, geo_points_t *out,
                       size_t limit) {
    const geohash_neighbors_t *n = &r->neighbors;
    geohash_bits_t cells[9] = {r->hash, n->north, n->south, n->east, n->west,
                               n->north_east, n->north_west, n->south_east, n->south_west};
    int last = 0;
    for (int i = 0; i < 9; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0) continue;
        /* As in Redis, the comparison is only with a scanned neighbour,
         * never with the center cell (index 0). */
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
        if (limit && out->used >= limit) break;
        scan_cell(zobj, cells[i], s, out, limit);
        last = i;
    }
}

static int cmp_asc(const void *a, const void *b) {
    double x = ((const geo_point_t *)a)->dist, y = ((const geo_point_t *)b)->dist;
    return x < y ? -1 : x > y ? 1
                              : 0;
}

static int cmp_desc(const void *a, const void *b) { return -cmp_asc(a, b); }

#define GEO_COORDS (1 << 0)  /* GEORADIUS: center from argv */
#define GEO_MEMBER (1 << 1)  /* GEORADIUSBYMEMBER: center from a member */
#define GEO_NOSTORE (1 << 2) /* _RO forms */
#define GEO_SEARCH (1 << 3)  /* GEOSEARCH syntax */
#define GEO_SEARCHSTORE (1 << 4)

enum { SORT_NONE,
       SORT_ASC,
       SORT_DESC };

typedef struct geo_opts {
    bool withdist, withhash, withcoord, any, storedist;
    bool frommember, fromloc, byradius, bybox;
    int sort;
    long long count;
    robj *storekey;
} geo_opts_t;

/* Options after the fixed arguments.  For GEOSEARCH they include the
 * center and the shape.  False after replying. */
static bool parse_opts_or_reply(client_t *c, int base, int flags, robj *zobj, geo_shape_t *s, geo_opts_t *o) {
    int remaining = c->argc - base;
    for (int i = 0; i < remaining; i++) {
        robj **argv = c->argv + base + i;
        const char *a = argv[0]->ptr;
        bool search = flags & GEO_SEARCH;
        if (!strcasecmp(a, "withdist")) o->withdist = true;
        else if (!strcasecmp(a, "withhash")) o->withhash = true;
        else if (!strcasecmp(a, "withcoord")) o->withcoord = true;
        else if (!strcasecmp(a, "any")) o->any = true;
        else if (!strcasecmp(a, "asc")) o->sort = SORT_ASC;
        else if (!strcasecmp(a, "desc")) o->sort = SORT_DESC;
        else if (!strcasecmp(a, "count") && i + 1 < remaining) {
            if (!cmd_get_ll_or_reply(c, argv[1], &o->count, NULL)) return false;
            if (o->count <= 0) {
                reply_error(c, "COUNT must be > 0");
                return false;
            }
            i++;
        } else if ((!strcasecmp(a, "store") || !strcasecmp(a, "storedist")) && i + 1 < remaining &&
                   !(flags & GEO_NOSTORE) && !search) {
            o->storekey = argv[1];
            o->storedist = !strcasecmp(a, "storedist");
            i++;
        } else if (!strcasecmp(a, "storedist") && search && (flags & GEO_SEARCHSTORE)) {
            o->storedist = true;
        } else if (!strcasecmp(a, "frommember") && i + 1 < remaining && search && !o->fromloc) {
            /* Without a key the member cannot be looked up; parsing goes on
             * and the missing key answers at the end. */
            if (zobj && !member_lonlat(zobj, argv[1], s->xy)) {
                reply_error(c, ERR_DECODE_MEMBER);
                return false;
            }
            o->frommember = true;
            i++;
        } else if (!strcasecmp(a, "fromlonlat") && i + 2 < remaining && search && !o->frommember) {
            if (!lonlat_or_reply(c, argv + 1, s->xy)) return false;
            o->fromloc = true;
            i += 2;
        } else if (!strcasecmp(a, "byradius") && i + 2 < remaining && search && !o->bybox) {
            if (!radius_or_reply(c, argv + 1, s)) return false;
            o->byradius = true;
            i += 2;
        } else if (!strcasecmp(a, "bybox") && i + 3 < remaining && search && !o->byradius) {
            if (!box_or_reply(c, argv + 1, s)) return false;
            o->bybox = true;
            i += 3;
        } else {
            reply_error(c, RL_ERR_SYNTAX);
            return false;
        }
    }
    if (o->storekey && (o->withdist || o->withhash || o->withcoord)) {
        reply_error(c, "%s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                    (flags & GEO_SEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        return false;
    }
    if ((flags & GEO_SEARCH) && !(o->frommember || o->fromloc)) {
        reply_error(c, "exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", (char *)c->argv[0]->ptr);
        return false;
    }
    if ((flags & GEO_SEARCH) && !(o->byradius || o->bybox)) {
        reply_error(c, "exactly one of BYRADIUS and BYBOX can be specified for %s", (char *)c->argv[0]->ptr);
        return false;
    }
    if (o->any && !o->count) {
        reply_error(c, "the ANY argument requires COUNT argument");
        return false;
    }
    return true;
}

static void reply_points(client_t *c, geo_points_t *pts, size_t n, const geo_shape_t *s, const geo_opts_t *o) {
    int extra = o->withdist + o->withhash + o->withcoord;
    reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        geo_point_t *p = &pts->v[i];
        if (extra) reply_array_len(c, extra + 1);
        reply_bulk(c, p->member, sds_len(p->member));
        if (o->withdist) reply_distance(c, p->dist / s->conversion);
        if (o->withhash) reply_ll(c, (long long)p->score);
        if (o->withcoord) {
            reply_array_len(c, 2);
            reply_coord(c, p->xy[0]);
            reply_coord(c, p->xy[1]);
        }
    }
}

static void store_points(client_t *c, geo_points_t *pts, size_t n, const geo_shape_t *s, const geo_opts_t *o,
                         int flags) {
    robj *dst = o->storekey;
    if (n == 0) {
        if (db_delete(c->db, dst)) notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", dst, c->db->id);
        reply_ll(c, 0);
        return;
    }
    zset_limits_t l = {c->srv->cfg.zset_max_listpack_entries, c->srv->cfg.zset_max_listpack_value};
    zset_limits_t unlimited = {0, 0}; /* build as a skiplist, then fit */
    robj *z = zset_create_skiplist();
    size_t maxlen = 0, totlen = 0;
    for (size_t i = 0; i < n; i++) {
        geo_point_t *p = &pts->v[i];
        double score = o->storedist ? p->dist / s->conversion : p->score;
        size_t len = sds_len(p->member);
        if (len > maxlen) maxlen = len;
        totlen += len;
        int out;
        double ns;
        zset_add(z, &unlimited, score, p->member, len, 0, &out, &ns);
    }
    zset_convert_to_listpack_if_fits(z, &l, maxlen, totlen);
    db_set_key(c->db, dst, z, false);
    notify_keyspace_event(c->srv, NOTIFY_ZSET, (flags & GEO_SEARCH) ? "geosearchstore" : "georadiusstore", dst,
                          c->db->id);
    reply_ll(c, (long long)n);
}

static void geo_search_generic(client_t *c, int srcidx, int flags) {
    bool err;
    robj *zobj = db_lookup_typed_or_reply(c, c->argv[srcidx], OBJ_ZSET, false, &err);
    if (err) return;
    geo_shape_t shape = {0};
    geo_opts_t o = {0};
    int base;
    if (flags & GEO_COORDS) {
        base = 6;
        if (!lonlat_or_reply(c, c->argv + 2, shape.xy)) return;
        if (!radius_or_reply(c, c->argv + 4, &shape)) return;
    } else if (flags & GEO_MEMBER) {
        base = 5;
        /* Without the key Redis parses neither the member nor the radius. */
        if (zobj) {
            if (!member_lonlat(zobj, c->argv[2], shape.xy)) {
                reply_error(c, ERR_DECODE_MEMBER);
                return;
            }
            if (!radius_or_reply(c, c->argv + 3, &shape)) return;
        }
    } else {
        base = (flags & GEO_SEARCHSTORE) ? 3 : 2;
        if (flags & GEO_SEARCHSTORE) o.storekey = c->argv[1];
    }
    if (!parse_opts_or_reply(c, base, flags, zobj, &shape, &o)) return;

    if (!zobj) {
        if (o.storekey) {
            if (db_delete(c->db, o.storekey))
                notify_keyspace_event(c->srv, NOTIFY_GENERIC, "del", o.storekey, c->db->id);
            reply_ll(c, 0);
        } else {
            reply_empty_array(c);
        }
        return;
    }
    /* COUNT without ANY means the nearest ones. */
    if (o.count && o.sort == SORT_NONE && !o.any) o.sort = SORT_ASC;

    geohash_radius_t cells = geohash_search_areas(&shape);
    geo_points_t pts = {0};
    scan_cells(zobj, &cells, &shape, &pts, o.any ? (size_t)o.count : 0);
    if (pts.used == 0 && !o.storekey) {
        reply_empty_array(c);
        points_free(&pts);
        return;
    }
    size_t n = (o.count == 0 || pts.used < (size_t)o.count) ? pts.used : (size_t)o.count;
    /* Stable (glibc's qsort is a merge sort here): equal distances keep
     * the scan order, as Redis's replies do. */
    if (o.sort != SORT_NONE && pts.used > 0) qsort(pts.v, pts.used, sizeof(*pts.v), o.sort == SORT_ASC ? cmp_asc : cmp_desc);
    if (o.storekey) store_points(c, &pts, n, &shape, &o, flags);
    else reply_points(c, &pts, n, &shape, &o);
    points_free(&pts);
}

static void cmd_georadius(client_t *c) { geo_search_generic(c, 1, GEO_COORDS); }
static void cmd_georadius_ro(client_t *c) { geo_search_generic(c, 1, GEO_COORDS | GEO_NOSTORE); }
static void cmd_georadiusbymember(client_t *c) { geo_search_generic(c, 1, GEO_MEMBER); }
static void cmd_georadiusbymember_ro(client_t *c) { geo_search_generic(c, 1, GEO_MEMBER | GEO_NOSTORE); }
static void cmd_geosearch(client_t *c) { geo_search_generic(c, 1, GEO_SEARCH); }
static void cmd_geosearchstore(client_t *c) { geo_search_generic(c, 2, GEO_SEARCH | GEO_SEARCHSTORE); }

command_t geo_commands[] = {
    {"geoadd", cmd_geoadd, -5, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "geo", "Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0", NULL},
    {"geodist", cmd_geodist, -4, CMD_READONLY, 1, 1, 1, "geo", "Returns the distance between two members of a geospatial index", "3.2.0", NULL},
    {"geohash", cmd_geohash, -2, CMD_READONLY, 1, 1, 1, "geo", "Returns members of a geospatial index as standard geohash strings", "3.2.0", NULL},
    {"geopos", cmd_geopos, -2, CMD_READONLY, 1, 1, 1, "geo", "Returns longitude and latitude of members of a geospatial index", "3.2.0", NULL},
    {"georadius", cmd_georadius, -6, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "geo", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "3.2.0", NULL},
    {"georadius_ro", cmd_georadius_ro, -6, CMD_READONLY, 1, 1, 1, "geo", "A read-only variant for GEORADIUS", "3.2.10", NULL},
    {"georadiusbymember", cmd_georadiusbymember, -5, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "geo", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "3.2.0", NULL},
    {"georadiusbymember_ro", cmd_georadiusbymember_ro, -5, CMD_READONLY, 1, 1, 1, "geo", "A read-only variant for GEORADIUSBYMEMBER", "3.2.10", NULL},
    {"geosearch", cmd_geosearch, -7, CMD_READONLY, 1, 1, 1, "geo", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "6.2.0", NULL},
    {"geosearchstore", cmd_geosearchstore, -8, CMD_WRITE | CMD_DENYOOM, 1, 2, 1, "geo", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "6.2.0", NULL},
    {0},
};
