/* bench_cluster.c: the cluster map of --cluster (see bench_cluster.h).
 *
 * CRC16 here is the XMODEM variant Redis Cluster uses (polynomial 0x1021,
 * initial value 0, no reflection), computed from a 256-entry table derived
 * once from the polynomial.  The tool cannot include the server's copy (only
 * this folder is on its include path). */
#include "bench_cluster.h"
#include "bench_net.h"
#include "bench_tls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t crc16_table[256];
static pthread_once_t crc16_once = PTHREAD_ONCE_INIT;

static void crc16_build(void) {
    for (unsigned i = 0; i < 256; i++) {
        uint16_t v = (uint16_t)(i << 8);
        for (int b = 0; b < 8; b++)
            v = (uint16_t)((v & 0x8000) ? (v << 1) ^ 0x1021 : v << 1);
        crc16_table[i] = v;
    }
}

uint16_t bench_crc16(const char *buf, size_t len) {
    pthread_once(&crc16_once, crc16_build);
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++)
        crc = (uint16_t)((crc << 8) ^ crc16_table[((crc >> 8) ^ (unsigned char)buf[i]) & 0xff]);
    return crc;
}

/* The part between the first '{' and the next '}' when it is not empty,
 * else the whole key. */
unsigned bench_key_slot(const char *key, size_t len) {
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t from = (size_t)(open - key) + 1;
        const char *close = memchr(open + 1, '}', len - from);
        if (close && close > open + 1)
            return bench_crc16(open + 1, (size_t)(close - open - 1)) & (BENCH_CLUSTER_SLOTS - 1);
    }
    return bench_crc16(key, len) & (BENCH_CLUSTER_SLOTS - 1);
}

/* Reads "$<len>\r\n" at *p; returns the length or -1. */
static long req_bulk_len(const char **p, const char *end) {
    const char *s = *p;
    long n = 0;
    if (s >= end || *s++ != '$')
        return -1;
    while (s < end && *s >= '0' && *s <= '9')
        n = n * 10 + (*s++ - '0');
    if (end - s < 2 || s[0] != '\r')
        return -1;
    *p = s + 2;
    return n;
}

int bench_request_slot(const char *req, size_t len) {
    const char *p = req, *end = req + len;
    if (len < 4 || *p != '*')
        return -1;
    long argc = 0;
    for (p++; p < end && *p >= '0' && *p <= '9'; p++)
        argc = argc * 10 + (*p - '0');
    if (argc < 2 || end - p < 2)
        return -1;
    p += 2;
    long n = req_bulk_len(&p, end);
    if (n < 0 || end - p < n + 2)
        return -1;
    p += n + 2;
    n = req_bulk_len(&p, end);
    if (n < 0 || end - p < n)
        return -1;
    return (int)bench_key_slot(p, (size_t)n);
}

int bench_cluster_find(const bench_cluster_t *cl, const char *host, size_t hostlen, int port) {
    for (int i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i].port == port && strlen(cl->nodes[i].host) == hostlen &&
            memcmp(cl->nodes[i].host, host, hostlen) == 0)
            return i;
    return -1;
}

/* "<from>-<to>" or "<slot>" into the table; "[...]" (a migration in
 * progress) is skipped: the owner still serves the slot. */
static void cluster_add_slots(bench_cluster_t *cl, const char *tok, int node) {
    if (tok[0] == '[')
        return;
    char *dash;
    long from = strtol(tok, &dash, 10), to = from;
    if (*dash == '-')
        to = strtol(dash + 1, NULL, 10);
    for (long s = from; s <= to && s < BENCH_CLUSTER_SLOTS; s++)
        if (s >= 0)
            cl->slot_node[s] = (uint8_t)node;
}

/* Whether the comma-separated flags hold flag itself. */
static int cluster_flag(const char *flags, const char *flag) {
    size_t len = strlen(flag);
    for (const char *p = flags; p; p = strchr(p, ',')) {
        if (*p == ',')
            p++;
        if (strncmp(p, flag, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return 1;
    }
    return 0;
}

/* One line of CLUSTER NODES: id addr flags master ping pong epoch link slots... */
static int cluster_parse_line(bench_cluster_t *cl, char *line, const bench_opts_t *o) {
    char *save = NULL, *tok[8], *t;
    int n = 0;
    while (n < 8 && (t = strtok_r(n ? NULL : line, " ", &save)) != NULL)
        tok[n++] = t;
    if (n < 8 || !cluster_flag(tok[2], "master") || cluster_flag(tok[2], "fail") ||
        cluster_flag(tok[2], "noaddr") || cluster_flag(tok[2], "handshake"))
        return 0; /* a master suspected down ("fail?") is still one */
    if (cl->nnodes == BENCH_CLUSTER_MAX_NODES)
        return -1;
    bench_cnode_t *nd = &cl->nodes[cl->nnodes];
    char *at = strchr(tok[1], '@');
    if (at)
        *at = '\0';
    char *colon = strrchr(tok[1], ':');
    if (!colon)
        return 0;
    *colon = '\0';
    nd->port = atoi(colon + 1);
    /* A node that has not learnt its own address yet prints ":port". */
    snprintf(nd->host, sizeof(nd->host), "%s", tok[1][0] ? tok[1] : o->host);
    int idx = cl->nnodes++;
    while ((t = strtok_r(NULL, " ", &save)) != NULL)
        cluster_add_slots(cl, t, idx);
    return 0;
}

int bench_cluster_load(const bench_opts_t *o, bench_cluster_t *cl, char *err, size_t errlen) {
    size_t cap = 1 << 20;
    char *reply = malloc(cap);
    if (!reply) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(cl, 0, sizeof(*cl));
    memset(cl->slot_node, BENCH_NO_NODE, sizeof(cl->slot_node));
    int fd = bench_net_connect(o, err, errlen);
    if (fd < 0 || bench_net_handshake(fd, o, err, errlen) < 0) {
        free(reply);
        return -1;
    }
    const char *argv[] = {"CLUSTER", "NODES"};
    int type = bench_net_call(fd, reply, cap, 2, argv);
    bench_sock_close(fd);
    if (type != '$' && type != '=') {
        snprintf(err, errlen, "Cluster node %s:%d replied to CLUSTER NODES with: %.120s", o->host,
                 o->port, type < 0 ? "(connection error)" : reply);
        free(reply);
        return -1;
    }
    /* Skip the "$<len>\r\n" header. */
    char *body = strstr(reply, "\r\n");
    body = body ? body + 2 : reply;
    if (type == '=' && strlen(body) > 4)
        body += 4; /* RESP3 verbatim: "txt:" */
    char *save = NULL;
    for (char *line = strtok_r(body, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        char *copy = strdup(line);
        int rc = copy ? cluster_parse_line(cl, copy, o) : -1;
        free(copy);
        if (rc < 0) {
            snprintf(err, errlen, "cluster map: more than %d masters", BENCH_CLUSTER_MAX_NODES);
            free(reply);
            return -1;
        }
    }
    free(reply);
    if (cl->nnodes == 0) {
        snprintf(err, errlen, "Cluster node %s:%d lists no master", o->host, o->port);
        return -1;
    }
    for (int s = 0; s < BENCH_CLUSTER_SLOTS; s++) {
        if (cl->slot_node[s] == BENCH_NO_NODE) {
            snprintf(err, errlen, "Cluster has unassigned slots (slot %d has no master)", s);
            return -1;
        }
    }
    return 0;
}

int bench_cluster_redirect(const bench_cluster_t *cl, const char *e, size_t len, int *ask,
                           unsigned *slot, int *node) {
    size_t skip;
    if (len > 6 && memcmp(e, "MOVED ", 6) == 0) {
        *ask = 0;
        skip = 6;
    } else if (len > 4 && memcmp(e, "ASK ", 4) == 0) {
        *ask = 1;
        skip = 4;
    } else {
        return 0;
    }
    const char *p = e + skip, *end = e + len;
    unsigned s = 0;
    while (p < end && *p >= '0' && *p <= '9')
        s = s * 10 + (unsigned)(*p++ - '0');
    if (p == end || *p != ' ' || s >= BENCH_CLUSTER_SLOTS)
        return 0;
    const char *host = ++p, *colon = NULL;
    for (const char *q = p; q < end; q++)
        if (*q == ':')
            colon = q;
    if (!colon)
        return 0;
    int port = 0;
    for (const char *q = colon + 1; q < end && *q >= '0' && *q <= '9'; q++)
        port = port * 10 + (*q - '0');
    *slot = s;
    *node = bench_cluster_find(cl, host, (size_t)(colon - host), port);
    return 1;
}
