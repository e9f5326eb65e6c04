"""Diskless full sync to TLS replicas (issue 46): the RDB child writes the
EOF-marked stream into a pipe, the master relays it into each replica's
TLS session (repl_diskless.c).  Our master on both socket engines, with
TLS replicas of ours and Debian's redis-server 7.0.15 (and a plain one in
the same batch); no RDB file on the master's disk, every replica's DEBUG
DIGEST equal to the master's; a replica killed mid-transfer stalls
neither the master nor the other replica; redis-cli --functions-rdb over
TLS.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_tls_diskless.py"""
import os
import signal
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER
from repl_helpers import wait_for, wait_link_up
from test_tls import certs, start_tls, tls_client  # noqa: F401 (certs: the module's certificates fixture)

# About 100 s, both engines in itself: in `make test` only, not again in the
# epoll and sanitizer passes of .ci/run.
pytestmark = pytest.mark.slow

ENGINES = ["epoll", "io_uring"]
KEYS = 300000


def rdb_files(d):
    return [n for n in os.listdir(d) if n.endswith(".rdb")]


def tls_replica(start_server, certs, binary=None, engine="epoll"):
    """A server that replicates over TLS (Debian's when binary is given)."""
    extra = ("--tls-replication", "yes")
    if binary:
        extra += ("--enable-debug-command", "local")
    return start_tls(start_server, certs, engine, extra=extra, binary=binary)


def digest(c):
    return c.execute_command("DEBUG", "DIGEST")


def caught_up(m, r):
    return m.info("replication")["master_repl_offset"] == r.info("replication").get("slave_repl_offset")


def diskless_master(start_server, certs, engine, extra=(), value_size=24):
    master = start_tls(start_server, certs, engine,
                       extra=("--tls-replication", "yes", "--repl-diskless-sync", "yes", *extra))
    m = master.client()
    m.execute_command("DEBUG", "POPULATE", KEYS, "key", value_size)
    m.rpush("list", *range(1000))
    m.hset("hash", mapping={"f%d" % i: i for i in range(500)})
    return master, m


@pytest.mark.parametrize("engine", ENGINES)
def test_diskless_sync_to_tls_replicas(start_server, certs, engine):
    """One batch (repl-diskless-sync-max-replicas 3 starts it as the third
    arrives, well before the 30 s delay): our TLS replica, Redis 7.0.15's
    TLS replica and our plain replica share the relayed pipe."""
    master, m = diskless_master(start_server, certs, engine,
                                ("--repl-diskless-sync-delay", "30", "--repl-diskless-sync-max-replicas", "3"))
    ours = tls_replica(start_server, certs, engine=engine)
    ref = tls_replica(start_server, certs, binary=REDIS_SERVER)
    plain = start_server(args=("--io-engine", engine))
    t0 = time.time()
    ours.client().replicaof("127.0.0.1", master.tls_port)
    ref.client().replicaof("127.0.0.1", master.tls_port)
    time.sleep(0.5)
    assert "Starting BGSAVE for SYNC" not in master.read_log()  # waits for the third replica
    plain.client().replicaof("127.0.0.1", master.port)
    clients = [ours.client(), ref.client(), plain.client()]
    for c in clients:
        wait_link_up(c, timeout=60)
    assert time.time() - t0 < 25  # max-replicas, not the delay, started it
    log = master.read_log()
    assert log.count("Starting BGSAVE for SYNC with target: replicas sockets") == 1
    assert "the parent relays it" in log
    assert rdb_files(master.dir) == []
    m.set("after", "x")  # the stream after the sync
    want = digest(m)
    for c in clients:
        wait_for(lambda: caught_up(m, c), what="replica caught up")
        assert c.dbsize() == KEYS + 3
        assert digest(c) == want
    assert rdb_files(master.dir) == []
    assert m.info("stats")["sync_full"] == 3
    assert m.info("replication")["connected_slaves"] == 3


@pytest.mark.parametrize("engine", ENGINES)
def test_killed_replica_mid_transfer(start_server, certs, engine):
    """rdb-key-save-delay stretches the transfer; one TLS replica is killed
    (SIGKILL) while it runs: the master keeps answering, the other replica
    (Redis 7.0.15) gets the whole RDB, its data equals the master's."""
    master, m = diskless_master(start_server, certs, engine,
                                ("--repl-diskless-sync-delay", "30", "--repl-diskless-sync-max-replicas", "2",
                                 "--rdb-key-save-delay", "10"))
    victim = tls_replica(start_server, certs, engine=engine)
    ref = tls_replica(start_server, certs, binary=REDIS_SERVER)
    v, r = victim.client(), ref.client()
    v.replicaof("127.0.0.1", master.tls_port)
    r.replicaof("127.0.0.1", master.tls_port)
    wait_for(lambda: "Starting BGSAVE for SYNC" in master.read_log(), what="the sync's fork")
    # the transfer is under way: the victim has received part of it
    wait_for(lambda: v.info("replication").get("master_sync_read_bytes", 0) > 100000, what="transfer started",
             timeout=30)
    os.kill(victim.proc.pid, signal.SIGKILL)
    victim.proc.wait(timeout=10)
    t = time.time()
    assert m.ping() and time.time() - t < 1
    wait_for(lambda: "Connection with replica" in master.read_log(), what="the master dropped the victim")
    assert "Diskless RDB relay" not in master.read_log()  # the other replica's transfer goes on
    wait_link_up(r, timeout=90)
    m.set("after", "y")
    wait_for(lambda: caught_up(m, r), what="replica caught up")
    assert r.get("after") == "y"
    assert digest(r) == digest(m)
    assert rdb_files(master.dir) == []
    assert m.info("replication")["connected_slaves"] == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_stopped_replica_times_out_of_the_relay(start_server, certs, engine):
    """A TLS replica that stops reading (SIGSTOP) holds up the relay (the
    next chunk waits for it) until repl-timeout: then it is dropped and the
    other replica's transfer completes."""
    master, m = diskless_master(start_server, certs, engine,
                                ("--repl-diskless-sync-delay", "30", "--repl-diskless-sync-max-replicas", "2",
                                 "--repl-timeout", "3"), value_size=120)  # ~45 MB of RDB: more than socket buffers
    stopped = tls_replica(start_server, certs, engine=engine)
    ref = tls_replica(start_server, certs, binary=REDIS_SERVER)
    s, r = stopped.client(), ref.client()
    s.replicaof("127.0.0.1", master.tls_port)
    wait_for(lambda: "asks for synchronization" in master.read_log(), what="its PSYNC")
    os.kill(stopped.proc.pid, signal.SIGSTOP)
    try:
        before = m.info("memory")["used_memory"]
        peak = [before]

        def dropped():
            peak[0] = max(peak[0], m.info("memory")["used_memory"])  # the master answers all along
            return "timeout during the diskless RDB relay" in master.read_log()
        r.replicaof("127.0.0.1", master.tls_port)
        wait_for(dropped, timeout=60, what="the stopped replica dropped")
        # backpressure: the pipe was not read ahead of the stopped replica
        # (a chunk at a time), so the master's memory did not take the RDB in
        assert peak[0] - before < 8 * 1024 * 1024, (before, peak[0])
        wait_link_up(r, timeout=90)
    finally:
        os.kill(stopped.proc.pid, signal.SIGCONT)
    m.set("after", "z")
    wait_for(lambda: caught_up(m, r), what="replica caught up")
    assert digest(r) == digest(m)
    assert rdb_files(master.dir) == []


def test_functions_rdb_over_tls(start_server, certs, tmp_path):
    """redis-cli --functions-rdb over TLS: REPLCONF rdb-filter-only
    functions; the filtered RDB (the library, no keys) comes through the
    relay, as from Redis 7.0.15."""
    lib = "#!lua name=tlslib\nredis.register_function('tlsfn', function() return 1 end)"
    files = {}
    for name, binary in (("ours", None), ("redis", REDIS_SERVER)):
        s = start_tls(start_server, certs, binary=binary)
        c = tls_client(certs, s.tls_port)
        c.function_load(lib)
        c.set("somekey", "somevalue")
        path = str(tmp_path / (name + ".rdb"))
        out = subprocess.run(["redis-cli", "-p", str(s.tls_port), "--tls", "--cacert", certs["ca.crt"], "--cert",
                              certs["client.crt"], "--key", certs["client.key"], "--functions-rdb", path],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stdout + out.stderr
        with open(path, "rb") as f:
            files[name] = f.read()
        assert c.ping()
        if binary is None:
            assert rdb_files(s.dir) == []
    for data in files.values():
        assert data.startswith(b"REDIS")
        assert b"tlsfn" in data and b"somekey" not in data
