"""A replica's full sync through a file (repl-diskless-load disabled, the
default; src/repl_sync_file.c): the master's RDB is written to a temp file
that replaces dbfilename and is loaded from there, as Redis 7.0 does.  So
a replica stopped without saving finds its master's data and replication
history on disk and continues with a partial resync; rdb-del-sync-files
removes the file when no persistence is configured; a transfer cut short
leaves no temp file and never replaces dbfilename; a disk that fails
mid-transfer aborts the attempt and a later one succeeds.  On a master,
rdb-del-sync-files removes the RDB a disk-based sync wrote.  Each behaviour
runs on our replica and, as the reference, on Debian's redis-server 7.0.15
(with our server as the master in both cases)."""
import glob
import os
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, sockets_of, start_under_shim
from repl_helpers import wait_caught_up, wait_for, wait_link_up
from repl_proxy import Proxy

pytestmark = pytest.mark.differential

REPLICAS = [SERVER, REDIS_SERVER]
IDS = ["our-replica", "redis-replica"]


def _sync(start_server, replica_bin, master_args=(), replica_args=(), keys=300):
    m = start_server(args=["--repl-diskless-sync-delay", "0"] + list(master_args))   # no 5 s wait for more replicas
    mc = m.client()
    for i in range(keys):
        mc.set("key:%d" % i, "v%d" % i)
    s = start_server(args=list(replica_args), binary=replica_bin)
    sc = s.client()
    assert sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    wait_caught_up(mc, sc)
    return m, mc, s, sc


def _stop_nosave(proc):
    try:
        proc.client().execute_command("SHUTDOWN", "NOSAVE")
    except redis.exceptions.ConnectionError:
        pass
    assert proc.proc.wait(20) == 0


def _temps(d):
    return glob.glob(os.path.join(d, "temp-*.rdb"))


@pytest.mark.parametrize("replica_bin", REPLICAS, ids=IDS)
@pytest.mark.parametrize("diskless_sync", ["yes", "no"])
def test_synced_file_lets_a_restarted_replica_continue(start_server, replica_bin, diskless_sync):
    """After a full sync the replica's dbfilename holds the master's data
    (and no temp file is left); stopped with NOSAVE and started again, it
    loads that file and the master answers +CONTINUE, not a full sync."""
    m, mc, s, sc = _sync(start_server, replica_bin,
                         master_args=["--repl-diskless-sync", diskless_sync, "--repl-diskless-sync-delay", "0"])
    path = os.path.join(s.dir, "dump.rdb")
    assert os.path.getsize(path) > 0
    assert _temps(s.dir) == []
    _stop_nosave(s)
    mc.set("while-down", "x")
    full_before = mc.info("stats")["sync_full"]
    s2 = start_server(args=["--dir", s.dir, "--replicaof", "127.0.0.1", str(m.port)], binary=replica_bin)
    sc2 = s2.client()
    wait_link_up(sc2)
    wait_caught_up(mc, sc2)
    stats = mc.info("stats")
    assert stats["sync_full"] == full_before and stats["sync_partial_ok"] == 1
    assert sc2.dbsize() == 301 and sc2.get("key:7") == "v7" and sc2.get("while-down") == "x"


@pytest.mark.parametrize("replica_bin", REPLICAS, ids=IDS)
@pytest.mark.parametrize("save", ["", "3600 1"])
def test_rdb_del_sync_files(start_server, replica_bin, save):
    """rdb-del-sync-files yes removes the synced file after the load when no
    persistence is configured (no save points, no AOF); with save points
    the file stays."""
    m, mc, s, sc = _sync(start_server, replica_bin, replica_args=["--rdb-del-sync-files", "yes", "--save", save])
    assert sc.dbsize() == 300
    assert sc.config_get("rdb-del-sync-files") == {"rdb-del-sync-files": "yes"}
    path = os.path.join(s.dir, "dump.rdb")
    if save:
        assert os.path.getsize(path) > 0
    else:  # Redis removes it on its background thread: not at once
        wait_for(lambda: not os.path.exists(path), 10, what="dump.rdb removed")
    assert _temps(s.dir) == []


@pytest.mark.parametrize("replica_bin", REPLICAS, ids=IDS)
def test_cut_transfer_leaves_no_temp_and_keeps_the_old_file(start_server, replica_bin):
    """A transfer cut in the middle removes its temp file and leaves the
    replica's own dbfilename as it was; the next attempt completes."""
    m = start_server(args=["--repl-diskless-sync", "no", "--rdbcompression", "no"])  # a 4 MB file
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", 20000, "big", 200)
    s = start_server(binary=replica_bin)
    sc = s.client()
    sc.set("mine", "1")
    sc.save()
    path = os.path.join(s.dir, "dump.rdb")
    before = open(path, "rb").read()
    px = Proxy(m.port, cut_after=1_000_000)
    try:
        sc.replicaof("127.0.0.1", px.port)
        assert px.stalled.wait(30)
        wait_link_up(sc, timeout=60)          # the second connection goes through
        wait_caught_up(mc, sc)
        assert sc.dbsize() == 20000 and sc.get("mine") is None
        assert _temps(s.dir) == []
    finally:
        px.close()
    assert open(path, "rb").read() != before  # replaced by the complete transfer only
    assert "to disk" in s.read_log()


def test_full_disk_aborts_the_attempt_and_a_later_one_succeeds(start_server, fault_shim, tmp_path, monkeypatch):
    """ENOSPC while the RDB is written: the attempt ends with Redis's log
    line, the temp file is removed, no key is lost or half-loaded, and once
    the disk has room the next attempt completes."""
    m = start_server(args=["--repl-diskless-sync", "no"])
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", 5000, "k", 100)
    ctl = tmp_path / "faults"
    ctl.write_text("write ENOSPC 1000 temp-\n")
    s = start_under_shim(start_server, fault_shim, ctl, [], monkeypatch)
    sc = s.client()
    sc.set("mine", "1")
    sc.replicaof("127.0.0.1", m.port)
    wait_for(lambda: "Write error or short write writing to the DB dump file" in s.read_log(), 30,
             what="the write error in the log")
    assert sc.info("replication")["master_link_status"] == "down"
    assert sc.get("mine") == "1"              # nothing flushed before the file was complete
    ctl.write_text("")
    wait_link_up(sc, timeout=60)
    wait_caught_up(mc, sc)
    assert sc.dbsize() == 5000 and sc.get("mine") is None
    assert _temps(s.dir) == []


@pytest.mark.parametrize("master_bin", REPLICAS, ids=["our-master", "redis-master"])
@pytest.mark.parametrize("save", ["", "3600 1"])
def test_master_rdb_del_sync_files(start_server, master_bin, save):
    """On a master, the RDB a disk-based full sync wrote is removed once the
    replica has it, under rdb-del-sync-files with no persistence; with save
    points it stays.  A SAVE afterwards is the user's file and stays."""
    m = start_server(args=["--repl-diskless-sync", "no", "--rdb-del-sync-files", "yes", "--save", save],
                     binary=master_bin)
    mc = m.client()
    for i in range(100):
        mc.set("key:%d" % i, i)
    s = start_server()
    sc = s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    wait_caught_up(mc, sc)
    assert sc.dbsize() == 100
    path = os.path.join(m.dir, "dump.rdb")
    if save:
        assert os.path.getsize(path) > 0
        return
    wait_for(lambda: not os.path.exists(path), 10, what="the sync's dump.rdb removed")
    assert mc.save()
    time.sleep(2)                             # replication crons later (once a second in Redis)
    assert os.path.getsize(path) > 0


@pytest.mark.parametrize("replica_bin", REPLICAS, ids=IDS)
@pytest.mark.parametrize("ignore", ["no", "yes"])
def test_replica_that_cannot_persist(start_server, replica_bin, ignore):
    """A replica whose last BGSAVE failed (save points, stop-writes-on-
    bgsave-error) refuses its own clients' writes and PING with MISCONF; a write
    from its master stops it with replica-ignore-disk-write-errors no (the
    default), and is applied (and logged) with yes."""
    m = start_server(args=["--repl-diskless-sync-delay", "0"])
    mc = m.client()
    s = start_server(args=["--save", "3600 1", "--replica-ignore-disk-write-errors", ignore], binary=replica_bin)
    sc = s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    mc.set("before", "1")
    wait_caught_up(mc, sc)
    # A directory where the snapshot must go: the rename fails (even as root).
    os.remove(os.path.join(s.dir, "dump.rdb"))
    os.makedirs(os.path.join(s.dir, "dump.rdb", "in-the-way"))
    sc.bgsave()
    wait_for(lambda: sc.info("persistence")["rdb_last_bgsave_status"] == "err", 20, what="a failed BGSAVE")
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        sc.set("mine", "2")
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        sc.ping()                              # Redis 7.0 refuses PING too
    mc.set("from-master", "x")
    if ignore == "no":
        assert s.proc.wait(20) != 0
        assert "nable to write command to disk" in s.read_log()
    else:
        wait_for(lambda: sc.get("from-master") == "x", 20, what="the master's write applied")
        assert "unable to write to disk" in s.read_log()
        s.kill()    # a SIGTERM's final save would fail too, and it would refuse to exit


def _socket_of(pid, peer_port):
    """The socket of process pid whose peer is 127.0.0.1:peer_port."""
    import socket
    for s in sockets_of(pid):
        try:
            if s.family == socket.AF_INET and s.getpeername()[1] == peer_port:
                return s
        except OSError:
            pass
        s.close()
    raise AssertionError("no socket of %d talks to port %d" % (pid, peer_port))


@pytest.mark.parametrize("master_bin", REPLICAS, ids=["our-master", "redis-master"])
@pytest.mark.parametrize("disable", ["no", "yes"])
def test_repl_disable_tcp_nodelay(start_server, master_bin, disable):
    """repl-disable-tcp-nodelay yes turns TCP_NODELAY off on the master's
    socket to a replica that did a full sync; no leaves it on (read from
    the master process's own socket)."""
    import socket
    m = start_server(args=["--repl-disable-tcp-nodelay", disable, "--repl-diskless-sync-delay", "0"], binary=master_bin)
    s = start_server()
    sc = s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    link = _socket_of(s.pid, m.port)          # the replica's end: its local port
    local_port = link.getsockname()[1]
    link.close()
    master_side = _socket_of(m.pid, local_port)
    try:
        on = master_side.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        master_side.close()
    assert bool(on) == (disable == "no")
