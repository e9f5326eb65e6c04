/* bench_workload.c: the tests, their command templates, key/size drawing and
 * the per-connection pre-built request buffers (see bench_workload.h).
 *
 * The command shapes and key names are redis-benchmark 7's, so results are
 * comparable: SET key:__rand_int__ <value>, INCR counter:__rand_int__, LPUSH
 * mylist <value>, SADD myset element:__rand_int__, HSET myhash element:...,
 * ZADD myzset <score> element:..., MSET with 10 keys, LRANGE mylist 0 N-1.
 * "__rand_int__" is exactly 12 bytes, the width of the number replacing it,
 * so a pre-built request is patched in place and never changes length. */
#include "bench_workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char WL_VALUE[] = "<value>"; /* marks the payload argument */

/* ---- templates ---------------------------------------------------------- */

static int wl_cmd(bench_cmd_t *c, const bench_opts_t *o, const char *const *args, int argc) {
    c->argc = argc;
    c->argv = calloc((size_t)argc, sizeof(bench_arg_t));
    if (!c->argv)
        return -1;
    c->weight = 1;
    for (int i = 0; i < argc; i++) {
        bench_arg_t *a = &c->argv[i];
        if (args[i] == WL_VALUE) {
            a->is_value = 1;
            continue;
        }
        a->text = args[i];
        a->len = (uint32_t)strlen(args[i]);
        if (!o->keyspace)
            continue; /* without -r the tag stays literal, as redis-benchmark does */
        for (const char *p = a->text; (p = strstr(p, BENCH_RAND_TAG)) != NULL; p += BENCH_RAND_LEN) {
            if (a->nrand == BENCH_MAX_RAND_PER_ARG)
                break;
            a->rand_pos[a->nrand++] = (uint32_t)(p - a->text);
        }
    }
    return 0;
}

#define WL_ARGS(...) ((const char *const[]){__VA_ARGS__}), \
                     (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static int wl_selected(const bench_opts_t *o, const char *a, const char *b) {
    char key[64];
    if (!o->tests)
        return 1;
    snprintf(key, sizeof(key), ",%s,", a);
    if (strstr(o->tests, key))
        return 1;
    if (!b)
        return 0;
    snprintf(key, sizeof(key), ",%s,", b);
    return strstr(o->tests, key) != NULL;
}

static bench_test_t *wl_add(bench_test_t *v, int *n, const char *name) {
    bench_test_t *t = &v[(*n)++];
    memset(t, 0, sizeof(*t));
    t->name = strdup(name);
    t->ncmds = 1;
    return t;
}

static int wl_custom(const bench_opts_t *o, bench_test_t *v, int *n) {
    size_t len = 0;
    for (int i = 0; i < o->custom_argc; i++)
        len += strlen(o->custom_argv[i]) + 1;
    char *name = malloc(len + 1);
    if (!name)
        return -1;
    name[0] = '\0';
    for (int i = 0; i < o->custom_argc; i++) {
        if (i)
            strcat(name, " ");
        strcat(name, o->custom_argv[i]);
    }
    bench_test_t *t = wl_add(v, n, name);
    free(name);
    return wl_cmd(&t->cmds[0], o, (const char *const *)o->custom_argv, o->custom_argc);
}

static int wl_ratio(const bench_opts_t *o, bench_test_t *v, int *n) {
    bench_test_t *t = wl_add(v, n, "SET:GET");
    t->ncmds = 2;
    t->variable = 1;
    if (wl_cmd(&t->cmds[0], o, WL_ARGS("SET", "key:__rand_int__", WL_VALUE)) < 0 ||
        wl_cmd(&t->cmds[1], o, WL_ARGS("GET", "key:__rand_int__")) < 0)
        return -1;
    t->cmds[0].weight = o->ratio_set;
    t->cmds[1].weight = o->ratio_get;
    return 0;
}

static int wl_defaults(const bench_opts_t *o, bench_test_t *v, int *n) {
    const char *score = o->keyspace ? "__rand_int__" : "0";
    int rc = 0;
#define WL_TEST(sel, alt, name, ...) \
    if (wl_selected(o, sel, alt))    \
    rc |= wl_cmd(&wl_add(v, n, name)->cmds[0], o, WL_ARGS(__VA_ARGS__))
    if (wl_selected(o, "ping_inline", "ping")) {
        bench_test_t *t = wl_add(v, n, "PING_INLINE");
        rc |= wl_cmd(&t->cmds[0], o, WL_ARGS("PING"));
        t->cmds[0].is_inline = 1;
    }
    WL_TEST("ping_mbulk", "ping", "PING_MBULK", "PING");
    WL_TEST("set", NULL, "SET", "SET", "key:__rand_int__", WL_VALUE);
    WL_TEST("get", NULL, "GET", "GET", "key:__rand_int__");
    WL_TEST("incr", NULL, "INCR", "INCR", "counter:__rand_int__");
    WL_TEST("lpush", NULL, "LPUSH", "LPUSH", "mylist", WL_VALUE);
    WL_TEST("rpush", NULL, "RPUSH", "RPUSH", "mylist", WL_VALUE);
    WL_TEST("lpop", NULL, "LPOP", "LPOP", "mylist");
    WL_TEST("rpop", NULL, "RPOP", "RPOP", "mylist");
    WL_TEST("sadd", NULL, "SADD", "SADD", "myset", "element:__rand_int__");
    WL_TEST("hset", NULL, "HSET", "HSET", "myhash", "element:__rand_int__", WL_VALUE);
    WL_TEST("spop", NULL, "SPOP", "SPOP", "myset");
    WL_TEST("zadd", NULL, "ZADD", "ZADD", "myzset", score, "element:__rand_int__");
    WL_TEST("zpopmin", NULL, "ZPOPMIN", "ZPOPMIN", "myzset");
    if (wl_selected(o, "lrange", "lrange_100") || wl_selected(o, "lrange_300", "lrange_500") ||
        wl_selected(o, "lrange_600", NULL))
        rc |= wl_cmd(&wl_add(v, n, "LPUSH (needed to benchmark LRANGE)")->cmds[0], o,
                     WL_ARGS("LPUSH", "mylist", WL_VALUE));
    WL_TEST("lrange", "lrange_100", "LRANGE_100 (first 100 elements)", "LRANGE", "mylist", "0", "99");
    WL_TEST("lrange", "lrange_300", "LRANGE_300 (first 300 elements)", "LRANGE", "mylist", "0", "299");
    WL_TEST("lrange", "lrange_500", "LRANGE_500 (first 500 elements)", "LRANGE", "mylist", "0", "499");
    WL_TEST("lrange", "lrange_600", "LRANGE_600 (first 600 elements)", "LRANGE", "mylist", "0", "599");
    if (o->cluster && wl_selected(o, "mset", NULL)) {
        /* A cluster takes a multi-key command only inside one slot: ten
         * keys of one hash tag, one number drawn per request. */
        bench_test_t *t = wl_add(v, n, "MSET (10 keys)");
        t->one_draw = 1;
        rc |= wl_cmd(&t->cmds[0], o,
                     WL_ARGS("MSET", "{key:__rand_int__}:0", WL_VALUE, "{key:__rand_int__}:1", WL_VALUE,
                             "{key:__rand_int__}:2", WL_VALUE, "{key:__rand_int__}:3", WL_VALUE,
                             "{key:__rand_int__}:4", WL_VALUE, "{key:__rand_int__}:5", WL_VALUE,
                             "{key:__rand_int__}:6", WL_VALUE, "{key:__rand_int__}:7", WL_VALUE,
                             "{key:__rand_int__}:8", WL_VALUE, "{key:__rand_int__}:9", WL_VALUE));
    } else
        WL_TEST("mset", NULL, "MSET (10 keys)", "MSET",
                "key:__rand_int__", WL_VALUE, "key:__rand_int__", WL_VALUE,
                "key:__rand_int__", WL_VALUE, "key:__rand_int__", WL_VALUE,
                "key:__rand_int__", WL_VALUE, "key:__rand_int__", WL_VALUE,
                "key:__rand_int__", WL_VALUE, "key:__rand_int__", WL_VALUE,
                "key:__rand_int__", WL_VALUE, "key:__rand_int__", WL_VALUE);
#undef WL_TEST
    return rc ? -1 : 0;
}

int bench_tests_build(const bench_opts_t *o, bench_test_t **out) {
    bench_test_t *v = calloc(32, sizeof(*v));
    int n = 0, rc;
    if (!v)
        return -1;
    if (o->custom_argc)
        rc = wl_custom(o, v, &n);
    else if (o->ratio_set + o->ratio_get)
        rc = wl_ratio(o, v, &n);
    else
        rc = wl_defaults(o, v, &n);
    if (rc < 0)
        return -1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < v[i].ncmds; c++)
            for (int a = 0; a < v[i].cmds[c].argc; a++)
                if (v[i].cmds[c].argv[a].is_value && bench_opts_variable_size(o))
                    v[i].variable = 1;
    *out = v;
    return n;
}

void bench_tests_free(bench_test_t *v, int n) {
    for (int i = 0; i < n; i++) {
        free(v[i].name);
        for (int c = 0; c < v[i].ncmds; c++)
            free(v[i].cmds[c].argv);
    }
    free(v);
}

static size_t wl_cmd_max(const bench_cmd_t *c, uint32_t maxval) {
    if (c->is_inline)
        return c->argv[0].len + 2;
    size_t n = 16;
    for (int i = 0; i < c->argc; i++)
        n += 16 + (c->argv[i].is_value ? maxval : c->argv[i].len);
    return n;
}

size_t bench_test_max_request(const bench_opts_t *o, const bench_test_t *t) {
    size_t m = 0;
    for (int i = 0; i < t->ncmds; i++) {
        size_t n = wl_cmd_max(&t->cmds[i], bench_opts_max_value(o));
        if (n > m)
            m = n;
    }
    return m;
}

/* ---- random draws ------------------------------------------------------- */

uint64_t bench_gen_rand(bench_gen_t *g) {
    uint64_t z = (g->rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double wl_unit(bench_gen_t *g) {
    return (double)(bench_gen_rand(g) >> 11) * (1.0 / 9007199254740992.0);
}

#define WL_ZIPF_S 0.99

static uint64_t wl_gcd(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Zipf draws ranks, and rank 0 is the hottest.  Used as key numbers, the
 * hot keys would all sit at the bottom of the range (key:000000000000,
 * ...001, ...), which flatters a server whose hash or order depends on the
 * key.  rank -> (rank * mul + add) mod r is a bijection when gcd(mul, r) = 1,
 * and a multiplier near r times the golden ratio sends consecutive ranks
 * far apart.  It depends on r only, so every thread and every run agree on
 * which keys are hot. */
static void wl_zipf_scramble(bench_gen_t *g, uint64_t r) {
    uint64_t mul = (uint64_t)((double)r * 0.6180339887498949);
    if (mul == 0)
        mul = 1;
    while (wl_gcd(mul, r) != 1)
        mul++;
    g->zipf_mul = mul % r ? mul % r : 1;
    g->zipf_add = (uint64_t)((double)r * 0.3819660112501051) % r;
}

void bench_gen_init(bench_gen_t *g, const bench_opts_t *o, const bench_test_t *t,
                    const char *payload, int thread_idx, int nthreads) {
    memset(g, 0, sizeof(*g));
    g->o = o;
    g->t = t;
    g->rng = o->seed * 0x100000001B3ULL + (uint64_t)thread_idx * 0x9E3779B97F4A7C15ULL + 1;
    g->seq = (uint64_t)thread_idx;
    g->seq_step = (uint64_t)nthreads;
    g->payload = payload;
    if (o->keyspace) {
        g->zipf_a = pow((double)o->keyspace, 1.0 - WL_ZIPF_S) - 1.0;
        wl_zipf_scramble(g, o->keyspace);
    }
    for (int i = 0; i < t->ncmds; i++)
        g->cmd_weight_total += t->cmds[i].weight;
    for (int i = 0; i < o->dlist_len; i++)
        g->size_weight_total += o->dlist[i].weight;
}

uint64_t bench_gen_key(bench_gen_t *g) {
    uint64_t r = g->o->keyspace;
    switch (g->o->keypat) {
        case BENCH_KEYS_SEQUENTIAL: {
            uint64_t k = g->seq % r;
            g->seq += g->seq_step;
            return k;
        }
        case BENCH_KEYS_GAUSSIAN: {
            /* Box-Muller; mean r/2, sigma r/6, so 99.7% fall inside. */
            double u1 = wl_unit(g), u2 = wl_unit(g);
            double z = sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
            double k = (double)r / 2 + z * (double)r / 6;
            if (k < 0)
                k = 0;
            return k >= (double)r ? r - 1 : (uint64_t)k;
        }
        case BENCH_KEYS_ZIPF: {
            /* Inverse of the continuous approximation of a zipf(s) CDF: rank 0
         * is the hottest; wl_zipf_scramble() spreads ranks over the range. */
            double x = pow(g->zipf_a * wl_unit(g) + 1.0, 1.0 / (1.0 - WL_ZIPF_S)) - 1.0;
            uint64_t rank = x >= (double)r ? r - 1 : (uint64_t)x;
            return (uint64_t)(((unsigned __int128)rank * g->zipf_mul + g->zipf_add) % r);
        }
        default:
            return bench_gen_rand(g) % r;
    }
}

static uint32_t wl_value_size(bench_gen_t *g) {
    const bench_opts_t *o = g->o;
    if (o->dlist_len) {
        uint64_t w = bench_gen_rand(g) % g->size_weight_total;
        for (int i = 0; i < o->dlist_len; i++) {
            if (w < o->dlist[i].weight)
                return o->dlist[i].size;
            w -= o->dlist[i].weight;
        }
    }
    if (o->dsize_max)
        return o->dsize_min + (uint32_t)(bench_gen_rand(g) % (o->dsize_max - o->dsize_min + 1));
    return o->datasize;
}

char *bench_payload_create(uint32_t size, uint64_t seed) {
    char *p = malloc((size_t)size + 1);
    if (!p)
        return NULL;
    uint64_t x = seed | 1;
    for (uint32_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint32_t c = (uint32_t)(x % 52);
        p[i] = (char)(c < 26 ? 'A' + c : 'a' + c - 26);
    }
    p[size] = '\0';
    return p;
}

/* ---- request buffers ---------------------------------------------------- */

static char *wl_u64(char *p, uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* Writes one request at dst with literal tags; appends the absolute offsets
 * of its tags (relative to base) to offs.  Returns the end pointer. */
static char *wl_emit(const bench_cmd_t *c, uint32_t vsize, const char *payload,
                     char *dst, const char *base, uint32_t *offs, uint32_t *noffs) {
    char *p = dst;
    if (!c->is_inline) {
        *p++ = '*';
        p = wl_u64(p, (uint64_t)c->argc);
        *p++ = '\r';
        *p++ = '\n';
    }
    for (int i = 0; i < c->argc; i++) {
        const bench_arg_t *a = &c->argv[i];
        uint32_t len = a->is_value ? vsize : a->len;
        if (!c->is_inline) {
            *p++ = '$';
            p = wl_u64(p, len);
            *p++ = '\r';
            *p++ = '\n';
        } else if (i) {
            *p++ = ' ';
        }
        memcpy(p, a->is_value ? payload : a->text, len);
        for (int r = 0; r < a->nrand; r++)
            offs[(*noffs)++] = (uint32_t)(p - base) + a->rand_pos[r];
        p += len;
        if (!c->is_inline) {
            *p++ = '\r';
            *p++ = '\n';
        }
    }
    if (c->is_inline) {
        *p++ = '\r';
        *p++ = '\n';
    }
    return p;
}

static int wl_cmd_nrand(const bench_cmd_t *c) {
    int n = 0;
    for (int i = 0; i < c->argc; i++)
        n += c->argv[i].nrand;
    return n;
}

static int wl_pick(bench_gen_t *g) {
    if (g->t->ncmds == 1)
        return 0;
    uint64_t w = bench_gen_rand(g) % g->cmd_weight_total;
    for (int i = 0; i < g->t->ncmds; i++) {
        if (w < g->t->cmds[i].weight)
            return i;
        w -= g->t->cmds[i].weight;
    }
    return 0;
}

static void wl_build_slots(bench_batch_t *b, bench_gen_t *g, int from, int to) {
    char *p = from ? b->buf + b->slot_end[from - 1] : b->buf;
    uint32_t nr = from ? b->rand_end[from - 1] : 0;
    for (int i = from; i < to; i++) {
        int k = wl_pick(g);
        const bench_cmd_t *c = &g->t->cmds[k];
        p = wl_emit(c, wl_value_size(g), g->payload, p, b->buf, b->rand_offs, &nr);
        b->kinds[i] = (uint8_t)k;
        b->slot_end[i] = (size_t)(p - b->buf);
        b->rand_end[i] = nr;
    }
}

int bench_batch_init(bench_batch_t *b, bench_gen_t *g, int slots) {
    const bench_test_t *t = g->t;
    memset(b, 0, sizeof(*b));
    int maxr = 0;
    for (int i = 0; i < t->ncmds; i++)
        if (wl_cmd_nrand(&t->cmds[i]) > maxr)
            maxr = wl_cmd_nrand(&t->cmds[i]);
    b->slots = slots;
    b->cap = bench_test_max_request(g->o, t) * (size_t)slots;
    b->rand_cap = (uint32_t)(maxr * slots);
    b->buf = malloc(b->cap);
    b->slot_end = calloc((size_t)slots, sizeof(size_t));
    b->rand_end = calloc((size_t)slots, sizeof(uint32_t));
    b->rand_offs = calloc((size_t)b->rand_cap + 1, sizeof(uint32_t));
    b->kinds = calloc((size_t)slots, 1);
    if (!b->buf || !b->slot_end || !b->rand_end || !b->rand_offs || !b->kinds) {
        bench_batch_free(b);
        return -1;
    }
    if (!t->variable)
        wl_build_slots(b, g, 0, slots); /* built once, patched per batch */
    return 0;
}

void bench_batch_free(bench_batch_t *b) {
    free(b->buf);
    free(b->slot_end);
    free(b->rand_end);
    free(b->rand_offs);
    free(b->kinds);
    memset(b, 0, sizeof(*b));
}

size_t bench_batch_next(bench_batch_t *b, bench_gen_t *g, int k) {
    if (g->t->variable)
        wl_build_slots(b, g, 0, k);
    uint32_t n = b->rand_end[k - 1];
    uint64_t drawn = 0;
    int req = 0;
    for (uint32_t i = 0; i < n; i++) {
        char *d = b->buf + b->rand_offs[i] + BENCH_RAND_LEN;
        if (g->t->one_draw) {
            while (i >= b->rand_end[req])
                req++;
            if (i == (req ? b->rand_end[req - 1] : 0))
                drawn = bench_gen_key(g); /* the request's first number */
        } else {
            drawn = bench_gen_key(g);
        }
        uint64_t v = drawn;
        for (int j = 0; j < BENCH_RAND_LEN; j++) {
            *--d = (char)('0' + v % 10);
            v /= 10;
        }
    }
    return b->slot_end[k - 1];
}
