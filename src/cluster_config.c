/* cluster_config.c: nodes.conf (cluster-config-file), in Redis 7.2's
 * format (7.0's with aux fields), so that a node's file moves between
 * redis-server 7.2+ and us; a file of Redis 7.0 loads too.
 *
 * One line per node, as CLUSTER NODES prints it (myself's migrating and
 * importing slots as "[slot->-id]" / "[slot-<-id]"; after the address and
 * hostname Redis 7.2's aux field ",shard-id=<id>"), then
 * "vars currentEpoch <n> lastVoteEpoch <n>".  The file is untrusted input
 * at start-up: every field is checked, and a line that does not parse
 * stops the start with its number and text.
 *
 * Writing: a temp file beside it, fsynced, renamed over it, and the
 * directory fsynced, so a crash leaves the old file or the new one.  The
 * file is held with flock(LOCK_EX) for the process's life: a second
 * server started on the same file stops at start-up.  Since a rename
 * replaces the inode, the temp file is locked before the rename and the
 * old descriptor closed after, so the lock never lapses. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include "cluster.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------------ parsing */

static bool is_node_name(const char *s) {
    if (strlen(s) != CLUSTER_NAMELEN) return false;
    for (int i = 0; i < CLUSTER_NAMELEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return true;
}

static bool parse_flags(const char *s, int *flags) {
    static const struct {
        const char *word;
        int flag;
    } words[] = {{"myself", CNODE_MYSELF}, {"master", CNODE_MASTER}, {"slave", CNODE_REPLICA}, {"fail?", CNODE_PFAIL}, {"fail", CNODE_FAIL}, {"handshake", CNODE_HANDSHAKE}, {"noaddr", CNODE_NOADDR}, {"nofailover", CNODE_NOFAILOVER}, {"noflags", 0}};
    *flags = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        size_t w = 0;
        while (w < sizeof(words) / sizeof(words[0]) && (strlen(words[w].word) != len || strncmp(s, words[w].word, len)))
            w++;
        if (w == sizeof(words) / sizeof(words[0])) return false;
        *flags |= words[w].flag;
        s += len;
        if (*s == ',') s++;
    }
    return true;
}

static bool parse_port(const char *s, int *port) {
    long long v;
    if (!util_str2ll(s, strlen(s), &v) || v < 0 || v > 65535) return false;
    *port = (int)v;
    return true;
}

/* Redis 7.2's aux fields after the hostname, ",key=value" each: the
 * shard id is kept; others (7.2's nodename, tcp-port, tls-port) are
 * skipped.  Without a shard-id, shard_id is left "" for the end of the
 * load (a file of Redis 7.0's). */
static bool parse_aux_fields(cluster_node_t *n, char *s) {
    n->shard_id[0] = '\0';
    while (s) {
        char *next = strchr(s, ',');
        if (next) *next++ = '\0';
        char *eq = strchr(s, '=');
        if (!eq || eq == s) return false;
        *eq = '\0';
        if (!strcmp(s, "shard-id")) {
            if (!is_node_name(eq + 1)) return false;
            memcpy(n->shard_id, eq + 1, CLUSTER_NAMELEN + 1);
        }
        s = next;
    }
    return true;
}

/* "ip:port@cport[,hostname[,aux=value...]]" (the ip may hold ':', IPv6). */
static bool parse_address(cluster_node_t *n, const char *s) {
    sds a = sds_new(s);
    bool ok = false;
    char *comma = strchr(a, ',');
    char *aux = NULL;
    if (comma) {
        *comma = '\0';
        aux = strchr(comma + 1, ',');
        if (aux) *aux++ = '\0';
        sds_free(n->hostname);
        n->hostname = sds_new(comma + 1);
    }
    n->shard_id[0] = '\0';
    char *at = strchr(a, '@'), *colon = strrchr(a, ':');
    if (at && colon && colon < at && (!aux || parse_aux_fields(n, aux))) {
        *at = '\0';
        *colon = '\0';
        if (strlen(a) < sizeof(n->ip) && parse_port(colon + 1, &n->port) && parse_port(at + 1, &n->cport)) {
            memcpy(n->ip, a, strlen(a) + 1);
            ok = true;
        }
    }
    sds_free(a);
    return ok;
}

static bool parse_slot(const char *s, size_t len, int *slot) {
    long long v;
    if (!util_str2ll(s, len, &v) || v < 0 || v >= CLUSTER_SLOTS) return false;
    *slot = (int)v;
    return true;
}

/* "[slot->-id]" or "[slot-<-id]": myself's slot migrating or importing. */
static bool parse_moving_slot(cluster_t *cl, const char *s) {
    size_t len = strlen(s);
    if (len < 6 || s[len - 1] != ']') return false;
    const char *arrow = strstr(s, "->-");
    bool migrating = arrow != NULL;
    if (!arrow) arrow = strstr(s, "-<-");
    if (!arrow) return false;
    int slot;
    if (!parse_slot(s + 1, (size_t)(arrow - s - 1), &slot)) return false;
    const char *id = arrow + 3;
    if ((size_t)(s + len - 1 - id) != CLUSTER_NAMELEN) return false;
    cluster_node_t *n = cluster_lookup_node(cl, id, CLUSTER_NAMELEN);
    if (!n) {
        char name[CLUSTER_NAMELEN + 1];
        memcpy(name, id, CLUSTER_NAMELEN);
        name[CLUSTER_NAMELEN] = '\0';
        if (!is_node_name(name)) return false;
        n = cluster_node_create(cl, name, 0);
    }
    if (migrating) cl->migrating_to[slot] = n;
    else cl->importing_from[slot] = n;
    return true;
}

static bool parse_slots(cluster_t *cl, cluster_node_t *n, int argc, sds *argv) {
    for (int i = 8; i < argc; i++) {
        if (argv[i][0] == '[') {
            if (!parse_moving_slot(cl, argv[i])) return false;
            continue;
        }
        int start, end;
        char *dash = strchr(argv[i], '-');
        if (dash) {
            if (!parse_slot(argv[i], (size_t)(dash - argv[i]), &start) || !parse_slot(dash + 1, strlen(dash + 1), &end) ||
                start > end)
                return false;
        } else if (!parse_slot(argv[i], strlen(argv[i]), &start)) {
            return false;
        } else {
            end = start;
        }
        for (int s = start; s <= end; s++) {
            if (cl->slots[s] && cl->slots[s] != n) return false; /* two owners of one slot */
            cluster_add_slot(cl, n, s);
        }
    }
    return true;
}

/* A node's line: false if any field is wrong. */
static bool parse_node_line(cluster_t *cl, int argc, sds *argv) {
    if (argc < 8 || !is_node_name(argv[0])) return false;
    cluster_node_t *n = cluster_lookup_node(cl, argv[0], CLUSTER_NAMELEN);
    if (n && (n->flags || n->port)) return false; /* the same id twice */
    if (!n) n = cluster_node_create(cl, argv[0], 0);
    int flags;
    if (!parse_address(n, argv[1]) || !parse_flags(argv[2], &flags)) return false;
    n->flags = flags & ~(CNODE_HANDSHAKE | CNODE_MEET);
    if (flags & CNODE_MYSELF) {
        if (cl->myself) return false;
        cl->myself = n;
    }
    if (strcmp(argv[3], "-")) {
        if (!is_node_name(argv[3]) || !strcmp(argv[3], argv[0])) return false;
        cluster_node_t *m = cluster_lookup_node(cl, argv[3], CLUSTER_NAMELEN);
        if (!m) m = cluster_node_create(cl, argv[3], 0);
        n->replicaof = m;
    }
    long long ping, pong, epoch;
    if (!util_str2ll(argv[4], sds_len(argv[4]), &ping) || !util_str2ll(argv[5], sds_len(argv[5]), &pong) ||
        !util_str2ll(argv[6], sds_len(argv[6]), &epoch) || epoch < 0)
        return false;
    n->ping_sent = ping ? util_mstime() : 0;
    n->pong_received = pong ? util_mstime() : 0;
    n->config_epoch = (uint64_t)epoch;
    if (strcmp(argv[7], "connected") && strcmp(argv[7], "disconnected")) return false;
    return parse_slots(cl, n, argc, argv);
}

static bool parse_vars_line(cluster_t *cl, int argc, sds *argv) {
    if (argc % 2 == 0) return false;
    for (int i = 1; i < argc; i += 2) {
        long long v;
        if (!util_str2ll(argv[i + 1], sds_len(argv[i + 1]), &v) || v < 0) return false;
        if (!strcasecmp(argv[i], "currentEpoch")) cl->current_epoch = (uint64_t)v;
        else if (!strcasecmp(argv[i], "lastVoteEpoch")) cl->last_vote_epoch = (uint64_t)v;
        /* other variables of later versions are skipped, as Redis does */
    }
    return true;
}

int cluster_config_load(server_t *srv) {
    cluster_t *cl = srv->cluster;
    FILE *fp = fopen(cl->config_path, "r");
    if (!fp) {
        if (errno == ENOENT) return 0;
        log_msg(LL_WARNING, "Loading the cluster node config from %s: %s", cl->config_path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    bool ok = true, empty = true;
    while (ok && (len = getline(&line, &cap, fp)) != -1) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue;
        empty = false;
        int argc;
        sds *argv = sds_splitargs(line, &argc);
        if (!argv) ok = false;
        else if (argc == 0) ok = true;
        else if (!strcmp(argv[0], "vars")) ok = parse_vars_line(cl, argc, argv);
        else ok = parse_node_line(cl, argc, argv);
        if (argv) sds_free_splitres(argv, argc);
    }
    free(line);
    fclose(fp);
    if (empty) return 0; /* an empty file is a fresh start, as in Redis */
    if (ok && !cl->myself) {
        log_msg(LL_WARNING, "Unrecoverable error: the cluster config file %s names no node as myself.", cl->config_path);
        return -1;
    }
    for (int i = 0; ok && i < cl->node_count; i++)
        if (!cl->nodes[i]->flags && !cl->nodes[i]->port) cl->nodes[i]->flags = CNODE_NOADDR; /* only named */
    if (!ok) {
        log_msg(LL_WARNING, "Unrecoverable error: corrupted cluster config file %s, line %d.", cl->config_path, lineno);
        return -1;
    }
    /* Shard ids: a master whose line has none (a file of Redis 7.0) gets
     * a new one; a replica takes its master's, as Redis 7.2 does. */
    for (int i = 0; i < cl->node_count; i++)
        if (!cl->nodes[i]->shard_id[0]) cluster_random_name(cl->nodes[i]->shard_id);
    for (int i = 0; i < cl->node_count; i++)
        if (cl->nodes[i]->replicaof) memcpy(cl->nodes[i]->shard_id, cl->nodes[i]->replicaof->shard_id, CLUSTER_NAMELEN + 1);
    /* Our configEpoch can be no newer than the current epoch. */
    for (int i = 0; i < cl->node_count; i++)
        if (cl->nodes[i]->config_epoch > cl->current_epoch) cl->current_epoch = cl->nodes[i]->config_epoch;
    log_msg(LL_NOTICE, "Node configuration loaded, I'm %.40s", cl->myself->name);
    return 1;
}

/* ------------------------------------------------------------- saving */

static bool write_all(int fd, const char *p, size_t len) {
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* The first save: no other process may hold the existing file. */
static bool check_not_locked(cluster_t *cl, const char **err) {
    int fd = open(cl->config_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return true; /* none yet */
    bool ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    if (!ok) {
        static char msg[512];
        snprintf(msg, sizeof(msg),
                 "Sorry, the cluster configuration file %s is already used by a different Redis Cluster node. "
                 "Please make sure that different nodes use different cluster configuration files.",
                 cl->config_path);
        *err = msg;
    }
    return ok;
}

static void fsync_dir_of(const char *path) {
    sds dir = sds_new(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    sds_free(dir);
}

bool cluster_config_save(server_t *srv, const char **err) {
    cluster_t *cl = srv->cluster;
    if (cl->lock_fd < 0 && !check_not_locked(cl, err)) return false;
    sds text = cluster_nodes_text(srv, true);
    text = sds_catprintf(text, "vars currentEpoch %llu lastVoteEpoch %llu\n", (unsigned long long)cl->current_epoch,
                         (unsigned long long)cl->last_vote_epoch);
    sds tmp = sds_catprintf(sds_new(cl->config_path), ".tmp-%d", (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && write_all(fd, text, sds_len(text)) && fsync(fd) == 0 &&
              rename(tmp, cl->config_path) == 0;
    if (ok) {
        fsync_dir_of(cl->config_path);
        if (cl->lock_fd >= 0) close(cl->lock_fd);
        cl->lock_fd = fd;
    } else {
        static char msg[512];
        snprintf(msg, sizeof(msg), "Could not save the cluster node config %s: %s", cl->config_path, strerror(errno));
        *err = msg;
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
    }
    sds_free(tmp);
    sds_free(text);
    return ok;
}
