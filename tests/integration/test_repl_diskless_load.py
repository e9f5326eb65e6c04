"""repl-diskless-load (repl_load.c): a replica loading its master's RDB
from the socket as it arrives, against our master and Debian's
redis-server 7.0.15 as master, disk ("$<len>") and diskless ("$EOF:")
transfers.  swapdb loads into a temporary database set and keeps the old
data when the transfer fails; on-empty-db loads into the live (empty)
databases; disabled reads the whole payload first.  A transfer cut in the
middle (tests/integration/repl_proxy.py ends the master's bytes after
1.5 MB) leaves our replica as it leaves Redis's; a slowed transfer shows
the loading state (INFO, -LOADING) and, when the master's replication ID
is already ours, async loading (reads served from the old data)."""
import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import random_load, snapshot, wait_caught_up, wait_for, wait_link_up
from repl_proxy import Proxy

pytestmark = pytest.mark.differential

LIB = "#!lua name=repllib\nredis.register_function('one', function() return 1 end)"


def _master(start_server, binary, diskless, extra=()):
    args = ["--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0"] + list(extra)
    if binary == REDIS_SERVER:
        args += ["--enable-debug-command", "yes"]
    m = start_server(args=args, binary=binary)
    # DEBUG POPULATE of 60,000 keys outlasts the usual 10 s under a
    # sanitizer on a loaded machine.
    return m, redis.Redis(host="127.0.0.1", port=m.port, decode_responses=True, socket_timeout=60)


def _info(c, section, field):
    return c.info(section).get(field)


@pytest.mark.parametrize("mode", ["swapdb", "on-empty-db"])
@pytest.mark.parametrize("diskless", ["yes", "no"])
@pytest.mark.parametrize("master_bin", [SERVER, REDIS_SERVER], ids=["our-master", "redis-master"])
def test_full_sync_loaded_from_socket(start_server, master_bin, diskless, mode):
    m, mc = _master(start_server, master_bin, diskless)
    random_load(mc, 600, seed=31)
    mc.execute_command("FUNCTION", "LOAD", LIB)
    # ~450 KB of RDB: the loader's 256 KB window slides more than once.
    mc.execute_command("DEBUG", "POPULATE", 4000, "pop", 80)
    s = start_server(args=["--repl-diskless-load", mode])
    sc = s.client()
    if mode == "swapdb":
        sc.set("stale", "replaced by the master's data")
    assert sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc, 60)
    random_load(mc, 800, seed=32)      # the stream after the load
    wait_caught_up(mc, sc)
    log = s.read_log()
    assert "to parser" in log
    if mode == "swapdb":
        assert "Swapping active DB with loaded DB" in log
    assert sc.get("stale") is None
    assert sc.dbsize() == mc.dbsize()
    assert snapshot(sc) == snapshot(mc)
    libs = sc.execute_command("FUNCTION", "LIST")
    assert [l[1] for l in libs] == ["repllib"]
    assert _info(sc, "persistence", "loading") == 0


def _cut_scenario(start_server, master_bin, replica_bin, mode):
    """The master's bytes end 1.5 MB into the transfer; the replica must
    give the attempt up with its data as the mode says, then sync fully
    once it reaches the master."""
    m, mc = _master(start_server, master_bin, "yes")
    mc.execute_command("DEBUG", "POPULATE", 60000, "k", 100)   # ~7 MB of RDB
    s = start_server(args=["--repl-diskless-load", mode], binary=replica_bin)
    sc = s.client()
    keeps_old = mode != "on-empty-db"
    if keeps_old:
        sc.set("old", "1")
    px = Proxy(m.port, cut_after=1_500_000, refuse_after_cut=True)
    try:
        assert sc.replicaof("127.0.0.1", px.port)
        assert px.stalled.wait(60), "the transfer never reached the cut"

        def gave_up():
            try:
                return (_info(sc, "persistence", "loading") == 0
                        and _info(sc, "replication", "master_sync_in_progress") == 0)
            except redis.exceptions.BusyLoadingError:
                return False
        wait_for(gave_up, 30, what="the replica giving up the cut transfer")
        assert s.proc.poll() is None
        if keeps_old:
            assert sc.dbsize() == 1 and sc.get("old") == "1"   # swapdb and disabled keep it
        else:
            assert sc.dbsize() == 0                            # the half-load was dropped
        assert _info(sc, "replication", "master_link_status") == "down"
        if mode != "disabled":
            assert "Failed trying to load the MASTER synchronization DB from socket" in s.read_log()
        # The link back: a full sync straight from the master.
        assert sc.replicaof("127.0.0.1", m.port)
        wait_link_up(sc, 90)
        assert sc.dbsize() == 60000 and sc.get("old") is None
        assert sc.get("k:123") == mc.get("k:123")
    finally:
        px.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["swapdb", "on-empty-db", "disabled"])
@pytest.mark.parametrize("master_bin", [SERVER, REDIS_SERVER], ids=["our-master", "redis-master"])
def test_transfer_cut_midway(start_server, master_bin, mode):
    _cut_scenario(start_server, master_bin, SERVER, mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["swapdb", "on-empty-db", "disabled"])
def test_transfer_cut_midway_redis_replica(start_server, mode):
    """The same cut with Redis 7.0.15 as the replica: the reference for
    what our replica keeps and drops."""
    _cut_scenario(start_server, SERVER, REDIS_SERVER, mode)


def test_loading_state_and_async_loading(start_server):
    m, mc = _master(start_server, SERVER, "yes", ["--repl-backlog-size", "16384"])
    mc.execute_command("DEBUG", "POPULATE", 15000, "k", 100)   # a 413 KB RDB
    s = start_server(args=["--repl-diskless-load", "swapdb"])
    sc = s.client()
    # After the stall the rest flows at 100 KB/s: each load lasts about 2 s,
    # time for the checks below (a loading server answers between reads).
    px = Proxy(m.port, stall_after=200_000, rate=100_000)
    try:
        # 1. A first sync (a new history for the replica): synchronous loading.
        sc.replicaof("127.0.0.1", px.port)
        assert px.stalled.wait(30)
        wait_for(lambda: _info(sc, "persistence", "loading") == 1, 20, what="loading:1")
        p = sc.info("persistence")
        assert p["async_loading"] == 0 and p["loading_loaded_bytes"] > 0 and "loading_eta_seconds" in p
        rep = sc.info("replication")
        assert rep["master_sync_in_progress"] == 1 and rep["master_link_status"] == "down"
        with pytest.raises(redis.exceptions.BusyLoadingError):
            sc.ping()
        px.release()
        wait_link_up(sc, 60)
        assert sc.dbsize() == 15000 and _info(sc, "persistence", "loading") == 0
        # 2. The same history again (the backlog cannot cover the gap):
        #    async loading, reads answered from the old data meanwhile.
        px.accepting = False
        assert mc.client_kill_filter(_type="slave") == 1
        wait_for(lambda: _info(sc, "replication", "master_link_status") == "down", 20, what="link down")
        mc.set("k:1", "changed")
        for i in range(400):
            mc.set("filler:%d" % i, "x" * 100)                    # 40 KB > the 16 KB backlog
        px.rearm(1)
        px.accepting = True
        assert px.stalled.wait(30)
        wait_for(lambda: _info(sc, "persistence", "async_loading") == 1, 20, what="async_loading:1")
        assert sc.get("k:1").startswith("value:1\x00")             # the old data serves reads
        with pytest.raises(redis.exceptions.BusyLoadingError):
            sc.execute_command("SAVE")                             # no-async-loading commands wait
        px.release()
        wait_link_up(sc, 60)
        wait_caught_up(mc, sc)
        assert sc.get("k:1") == "changed" and sc.dbsize() == mc.dbsize()
        assert _info(sc, "persistence", "async_loading") == 0
    finally:
        px.close()


def test_shutdown_while_loading_saves_nothing(start_server):
    """SHUTDOWN SAVE during a load from the socket exits without writing
    the half-loaded dataset (Redis turns it into NOSAVE as well)."""
    import os
    m, mc = _master(start_server, SERVER, "yes")
    mc.execute_command("DEBUG", "POPULATE", 15000, "k", 100)
    s = start_server(args=["--repl-diskless-load", "on-empty-db"])
    sc = s.client()
    px = Proxy(m.port, stall_after=300_000, rate=200_000)
    try:
        sc.replicaof("127.0.0.1", px.port)
        assert px.stalled.wait(30)
        wait_for(lambda: _info(sc, "persistence", "loading") == 1, 20, what="loading:1")
        try:
            sc.execute_command("SHUTDOWN", "SAVE")
        except redis.exceptions.ConnectionError:
            pass
        assert s.proc.wait(20) == 0
        assert not os.path.exists(os.path.join(s.dir, "dump.rdb"))
    finally:
        px.close()
