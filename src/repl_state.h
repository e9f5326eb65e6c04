/* repl_state.h: the state the repl_*.c files share (not for other modules:
 * they use repl.h).
 *
 * Offsets follow Redis: master_repl_offset counts every byte ever fed to the
 * stream under this history; the backlog keeps the last `size` bytes, whose
 * first one has offset first_off (1-based, as PSYNC's argument is "the
 * next byte I need").  Invariants:
 *   first_off + histlen == master_repl_offset + 1   (backlog present)
 *   histlen <= size
 * A replica keeps its master's replid and offset as its own, so after a
 * promotion it can serve PSYNCs of its former peers (replid2 = the old
 * history, valid up to second_replid_offset - 1). */
#ifndef RL_REPL_STATE_H
#define RL_REPL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "loading.h"
#include "persist.h"
#include "repl.h"

#define REPL_ID_LEN 40

/* ------------------------------------------------------------- backlog */
typedef struct repl_backlog {
    char *buf;
    size_t size;         /* bytes of buf */
    size_t idx;          /* next write position in buf */
    size_t histlen;      /* bytes of history held (<= size) */
    long long first_off; /* stream offset of the oldest byte held */
} repl_backlog_t;

repl_backlog_t *backlog_create(size_t size, long long first_off);
void backlog_free(repl_backlog_t *b);
void backlog_append(repl_backlog_t *b, const char *p, size_t len);
/* Whether the byte at offset `from` (1-based) up to the end is held. */
bool backlog_has(const repl_backlog_t *b, long long from);
/* Call fn for each contiguous piece from offset `from` to the end. */
void backlog_foreach_from(const repl_backlog_t *b, long long from, void (*fn)(void *arg, const char *p, size_t len),
                          void *arg);
/* Change the capacity, keeping the newest bytes that fit. */
void backlog_resize(repl_backlog_t *b, size_t size);

/* --------------------------------------------------------- replicas (us as master) */
enum {
    REPLICA_WAIT_BGSAVE_START = 1, /* needs a full sync; no fork for it yet */
    REPLICA_WAIT_BGSAVE_END,       /* attached to the running fork; stream held in `pending` */
    REPLICA_SEND_BULK,             /* the RDB file is being written to it */
    REPLICA_ONLINE_ON_ACK,         /* diskless: RDB sent, the stream starts at its first ACK */
    REPLICA_ONLINE,                /* receives the stream */
};

typedef struct repl_replica {
    client_t *c;
    int state; /* REPLICA_* */
    bool capa_eof, capa_psync2;
    bool rdb_only;               /* redis-cli --rdb: close after the RDB */
    bool functions_only;         /* REPLCONF rdb-filter-only functions: an RDB without keys */
    bool old_sync;               /* SYNC, not PSYNC: no +FULLRESYNC line */
    long long listening_port;    /* REPLCONF listening-port */
    char announced_ip[64];       /* REPLCONF ip-address, "" = the peer's address */
    long long ack_off;           /* last REPLCONF ACK offset */
    long long aof_off;           /* last REPLCONF ACK ... FACK offset (WAITAOF) */
    long long ack_ms;            /* when it arrived (lag) */
    long long psync_initial_off; /* offset it started from */
    bool acked_during_sync;      /* diskless: it loaded (and ACKed) before we reaped the child */
    sds pending;                 /* stream held while it syncs */
    /* the RDB transfer (disk) */
    int rdb_fd; /* the file, -1 when not sending */
    int wfd;    /* dup of c->fd, write-only watcher */
    evloop_io_t *wio;
    long long rdb_off, rdb_size; /* bytes sent / total */
    sds rdb_hdr;                 /* "$<size>\r\n" left to send */
    bool bulk_started;           /* the first bytes of the payload were written (TLS: records may be left to send) */
    bool relayed;                /* diskless through the pipe: the parent relays the child's RDB to it (repl_diskless.c);
                                    rdb_off is then its position in the relay's chunk, wfd/wio its write watcher */
    long long relay_progress_ms; /* relayed: when its socket last took bytes (or it was given a chunk) */
    struct repl_replica *next;
} repl_replica_t;

/* -------------------------------------------------- the link to our master */
enum {
    LINK_NONE = 0,   /* not a replica */
    LINK_CONNECT,    /* must connect (the cron retries every second) */
    LINK_CONNECTING, /* non-blocking connect in progress */
    LINK_TLS,        /* tls-replication: the TLS handshake */
    LINK_RECV_PONG,  /* the handshake: each state waits for one reply line */
    LINK_RECV_AUTH,
    LINK_RECV_PORT,
    LINK_RECV_IP,
    LINK_RECV_CAPA,
    LINK_RECV_PSYNC,
    LINK_TRANSFER,  /* reading the RDB payload */
    LINK_CONNECTED, /* the master client applies the stream */
};

typedef struct repl_link {
    char *host;
    int port;
    int state; /* LINK_* */
    int fd;    /* handshake and transfer socket (then the master client's) */
    evloop_io_t *io;
    struct tls_conn *tls;    /* tls-replication: the link's session (then the master client's) */
    sds line;                /* a reply line being read */
    long long last_io_ms;    /* last byte from the master */
    long long acked_fsynced; /* the FACK of our last REPLCONF ACK (WAITAOF) */
    long long down_since_ms; /* link down since (INFO master_link_down_since_seconds) */
    long long handshake_start_ms;
    /* the transfer */
    long long transfer_size; /* -1: EOF-marker form */
    long long transfer_read; /* payload bytes read so far (an EOF mark included) */
    char eof_mark[REPL_ID_LEN];
    char tail[REPL_ID_LEN]; /* the last bytes read, to spot the EOF mark */
    char *chunk;            /* read buffer of a transfer to a file */
    /* the file it goes to (repl_sync_file.c) */
    int sync_fd; /* -1 when none */
    sds sync_path;
    long long sync_written, sync_flushed; /* bytes written / handed to write-back */
    char fullsync_replid[REPL_ID_LEN + 1];
    long long fullsync_offset;
    long long transfer_last_ms;
    client_t *master;                    /* the master client when LINK_CONNECTED */
    bool psync_failover;                 /* FAILOVER: our PSYNC asks the target to take over */
    void (*on_connected)(server_t *srv); /* told once the link is up (FAILOVER), then cleared */
    sds applying;                        /* bytes of the request the master client is parsing/running */
    int resume_db;                       /* the master client's db when the link went down (a +CONTINUE resumes there) */
} repl_link_t;

/* ------------------------------------------------------------- WAIT */
typedef struct repl_waiter {
    client_t *c;
    long long offset; /* acknowledged up to here */
    long numreplicas;
    long long deadline_ms; /* 0 = forever */
    bool aof;              /* WAITAOF: replicas' fsynced offsets, and numlocal */
    int numlocal;
    struct repl_waiter *next;
} repl_waiter_t;

/* ------------------------------------------------------------- FAILOVER */
enum { FAILOVER_NONE = 0,
       FAILOVER_WAIT_SYNC,
       FAILOVER_IN_PROGRESS };

typedef struct repl_failover {
    int state;  /* FAILOVER_* */
    char *host; /* TO host port, or NULL: the first replica caught up */
    int port;
    bool force;            /* FORCE: hand over at the timeout even if behind */
    long long deadline_ms; /* TIMEOUT, 0 = none */
    long long started_ms;  /* when the handover (IN_PROGRESS) began */
} repl_failover_t;

typedef struct repl {
    char replid[REPL_ID_LEN + 1];
    char replid2[REPL_ID_LEN + 1];
    long long master_repl_offset;
    long long second_replid_offset;  /* -1 = no second history */
    repl_backlog_t *backlog;         /* NULL until the first replica (or sync) */
    long long backlog_idle_since_ms; /* no replica since (repl-backlog-ttl) */
    int stream_db;                   /* db of the last SELECT in the stream, -1 = must emit */
    repl_replica_t *replicas;
    int replica_count;
    bool rdb_child_for_repl;            /* the running RDB child serves replicas */
    bool rdb_child_diskless;            /* ...and writes straight to their sockets */
    persist_rdb_done_fn *diskless_done; /* told when that socket child ends (repl_master.c) */
    long long diskless_wait_since_ms;   /* first replica waiting for a diskless fork */
    struct rdb_relay *relay;            /* repl_diskless.c: the child's RDB pipe being relayed, NULL when none */
    repl_link_t link;
    repl_waiter_t *waiters;
    repl_failover_t failover;
    bool getack_pending;        /* a WAIT needs fresh ACKs */
    bool stream_held;           /* repl_hold_stream: no PING or GETACK fed now */
    long long aof_fsynced;      /* our AOF's fsynced offset as last read (WAITAOF; -1 AOF off) */
    long long last_cron_sec_ms; /* once-a-second work */
    long long last_ping_ms;     /* last PING fed to replicas */
    long long sync_full, sync_partial_ok, sync_partial_err;
    /* dbfilename as a disk-based full sync wrote it (repl_sync_file.c) */
    bool sync_file_known;
    dev_t sync_file_dev;
    ino_t sync_file_ino;
} repl_t;

static inline repl_t *R(const server_t *srv) { return srv->repl; }

/* repl_stream.c: the history and the stream, below everything else here */
void master_feed_raw(server_t *srv, const char *p, size_t len);
void master_disconnect_replicas(server_t *srv);
void master_ensure_backlog(server_t *srv);
void master_check_waiters(server_t *srv);
/* A master turning replica: WAIT and WAITAOF are refused (-UNBLOCKED). */
void master_release_waiters(server_t *srv);
/* New history (a promotion): the old one stays reachable as replid2. */
void master_shift_replid(server_t *srv);
void repl_replica_close(repl_replica_t *rep, const char *why);
/* Online replicas that acknowledged offset off or beyond (aof: whose AOF
 * fsynced it, their FACK: WAITAOF). */
int repl_acked_count(const server_t *srv, long long off, bool aof);

/* repl_diskless.c: a diskless sync whose batch holds a TLS replica goes
 * through a pipe the parent relays.  active: the relay runs (no new sync
 * may start); gone: a relayed replica was freed (the others may go on);
 * cron: a replica whose socket took nothing for repl-timeout seconds while
 * it holds up the relay is dropped (Redis's "streaming sync" timeout). */
bool repl_relay_active(const server_t *srv);
void repl_relay_replica_gone(server_t *srv);
void repl_relay_cron(server_t *srv);

/* repl_master.c */
void master_cron(server_t *srv);
int master_good_replicas(const server_t *srv);

/* repl_failover.c */
void failover_cron(server_t *srv);
const char *failover_state_name(const server_t *srv);
void failover_free(server_t *srv);

/* repl_load.c: repl-diskless-load.  wanted: this transfer is to be loaded
 * from the socket.  from_socket: load it (size bytes, or up to eof_mark);
 * *rest gets the bytes read past it (caller frees), *keys the keys loaded;
 * false: the transfer failed and the databases are as the mode leaves
 * them (swapdb: untouched; on-empty-db: empty). */
bool repl_load_wanted(server_t *srv);
/* rd: read(2) on the link (repl_replica.c's, which decrypts a TLS link's
 * bytes); EAGAIN only once nothing is buffered, so polling fd is right. */
typedef ssize_t (*repl_link_reader_t)(repl_link_t *l, void *buf, size_t n);
bool repl_load_from_socket(server_t *srv, int fd, repl_link_reader_t rd, long long size, const char *eof_mark,
                           sds *rest, long long *keys, loading_keepalive_fn *keepalive);

/* repl_sync_file.c: repl-diskless-load disabled.  open: a new temp file
 * (false: logged).  write: append a chunk (false: logged, the caller
 * aborts).  install: cut it to rdb_len bytes, fsync and rename it over
 * dbfilename (false: logged, the temp file removed).  load: load
 * dbfilename into the (emptied) databases, *keys the keys added (false:
 * logged).  discard: close and remove an unfinished temp file. */
bool repl_sync_file_open(server_t *srv);
bool repl_sync_file_write(server_t *srv, const char *p, size_t len);
bool repl_sync_file_install(server_t *srv, long long rdb_len);
bool repl_sync_file_load(server_t *srv, long long *keys, loading_keepalive_fn *keepalive);
void repl_sync_file_discard(repl_link_t *l);
/* Master: written is called when a BGSAVE for replicas wrote dbfilename;
 * the cron removes that file under rdb-del-sync-files once unused. */
void repl_sync_file_written(server_t *srv);
void repl_sync_file_cron(server_t *srv);

/* repl_replica.c */
void replica_cron(server_t *srv);
void replica_set_master(server_t *srv, const char *host, int port);
void replica_unset_master(server_t *srv);
void replica_send_ack(server_t *srv);
void replica_free_link(server_t *srv);

/* command handlers (repl_cmds.c registers them) */
void cmd_sync(client_t *c);      /* repl_master.c */
void cmd_psync(client_t *c);     /* repl_master.c */
void cmd_replconf(client_t *c);  /* repl_master.c */
void cmd_wait(client_t *c);      /* repl_master.c */
void cmd_waitaof(client_t *c);   /* repl_master.c */
void cmd_replicaof(client_t *c); /* repl_replica.c */
void cmd_failover(client_t *c);  /* repl_failover.c */
void cmd_role(client_t *c);      /* repl_info.c */

#endif
