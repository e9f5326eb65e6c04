"""Replication between our servers: WAIT, min-replicas-to-write, read-only
and stale-data refusals (Redis 7.0's texts), INFO memory figures, the
replica output buffer limit, chained replicas and promotion through the
PSYNC2 secondary ID, a backlog too small for the gap, and a replica killed
during a full sync."""
import os
import signal
import time

import pytest
import redis

from repl_helpers import (random_load, settle, snapshot, wait_caught_up,
                          wait_for, wait_link_up)


# Diskless sync is the default (as in Redis 7.0); its 5 s gathering delay
# is turned off so each test's full syncs start at once.
FAST = ["--repl-diskless-sync-delay", "0"]


def replica_of(start_server, master, args=()):
    s = start_server(args=FAST + list(args))
    c = s.client()
    c.replicaof("127.0.0.1", master.port)
    wait_link_up(c)
    return s, c


def fill(c, n, prefix="k", size=10):
    p = c.pipeline(transaction=False)
    for i in range(0, n, 1000):
        p.mset({"%s%d" % (prefix, j): "v" * size for j in range(i, min(n, i + 1000))})
    p.execute()


def test_wait_counts_acknowledged_replicas(start_server):
    m = start_server(args=FAST)
    rm = m.client()
    rm.set("a", 1)
    assert rm.wait(0, 0) == 0
    t = time.time()
    assert rm.wait(1, 200) == 0          # nobody to acknowledge: waits the timeout
    assert time.time() - t >= 0.18
    s1, r1 = replica_of(start_server, m)
    rm.set("b", 2)
    assert rm.wait(1, 5000) == 1
    assert r1.get("b") == "2"
    t = time.time()
    assert rm.wait(2, 300) == 1          # only one replica
    assert time.time() - t >= 0.25
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        rm.wait(1, -1)
    with pytest.raises(redis.ResponseError, match="WAIT cannot be used with replica instances"):
        r1.wait(1, 10)
    # Pipelined commands behind a blocked WAIT run after it.
    p = rm.pipeline(transaction=False)
    p.set("c", 3)
    p.wait(2, 200)
    p.get("c")
    assert p.execute() == [True, 1, "3"]


def test_min_replicas_to_write(start_server):
    m = start_server(args=FAST + ["--min-replicas-to-write", "1", "--min-replicas-max-lag", "10"])
    rm = m.client()
    with pytest.raises(redis.ResponseError) as e:
        rm.set("a", 1)
    assert str(e.value) == "NOREPLICAS Not enough good replicas to write."
    assert rm.get("a") is None            # reads are fine
    assert rm.info("replication")["min_slaves_good_slaves"] == 0
    s, rs = replica_of(start_server, m)
    wait_for(lambda: rm.info("replication")["min_slaves_good_slaves"] == 1, 10)
    assert rm.set("a", 1)
    s.stop()
    wait_for(lambda: rm.info("replication")["connected_slaves"] == 0, 10)
    with pytest.raises(redis.ResponseError, match="Not enough good replicas"):
        rm.set("a", 2)


def test_replica_is_read_only_and_serves_stale_data_by_choice(start_server):
    m = start_server(args=FAST)
    rm = m.client()
    rm.set("a", "1")
    s, rs = replica_of(start_server, m)
    wait_caught_up(rm, rs)
    with pytest.raises(redis.exceptions.ReadOnlyError) as e:
        rs.set("x", 1)
    assert str(e.value) == "You can't write against a read only replica."
    assert rs.info("replication")["slave_read_only"] == 1
    m.stop()
    wait_for(lambda: rs.info("replication")["master_link_status"] == "down", 15)
    assert rs.get("a") == "1"             # stale data served by default
    rs.config_set("replica-serve-stale-data", "no")
    with pytest.raises(redis.ResponseError) as e:
        rs.get("a")
    assert str(e.value) == "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
    with pytest.raises(redis.ResponseError, match="MASTERDOWN"):
        rs.ping()                         # as Redis 7.0.15: PING is not a stale command
    assert rs.config_get("replica-serve-stale-data")   # stale-allowed commands still run
    assert rs.info("replication")["master_link_down_since_seconds"] >= 0
    assert rs.replicaof("no", "one")
    assert rs.set("x", 1)                 # promoted: writable
    assert rs.role()[0] == "master"


def test_info_memory_counts_backlog_and_replica_buffers(start_server):
    m = start_server(args=FAST + ["--repl-backlog-size", "2mb"])
    rm = m.client()
    assert rm.info("memory")["mem_replication_backlog"] == 0
    s, rs = replica_of(start_server, m)
    mem = rm.info("memory")
    assert mem["mem_replication_backlog"] >= 2 * 1024 * 1024
    assert mem["mem_not_counted_for_evict"] >= mem["mem_replication_backlog"]
    assert "mem_clients_slaves" in mem
    info = rm.info("replication")
    assert info["repl_backlog_active"] == 1 and info["repl_backlog_size"] == 2 * 1024 * 1024
    rm.config_set("repl-backlog-size", "1mb")
    wait_for(lambda: rm.info("memory")["mem_replication_backlog"] < 2 * 1024 * 1024, 5)


def test_backlog_and_buffers_are_not_evicted_for(start_server):
    """maxmemory counts the dataset, not the replication buffers."""
    m = start_server(args=FAST + ["--repl-backlog-size", "8mb", "--maxmemory-policy", "allkeys-lru"])
    rm = m.client()
    s, rs = replica_of(start_server, m)
    fill(rm, 2000)
    used = rm.info("memory")["used_memory"]
    # The limit sits below used_memory but above used_memory - backlog.
    rm.config_set("maxmemory", used - 4 * 1024 * 1024)
    rm.set("one-more", "x")
    assert rm.info("stats")["evicted_keys"] == 0
    assert rm.dbsize() == 2001


def test_replica_output_buffer_limit_drops_and_resyncs(start_server):
    m = start_server(args=FAST + ["--client-output-buffer-limit", "replica 256kb 128kb 1", "--repl-backlog-size", "64kb"])
    rm = m.client()
    s, rs = replica_of(start_server, m)
    os.kill(s.proc.pid, signal.SIGSTOP)   # the replica stops reading
    try:
        fill(rm, 20000, prefix="big", size=1000)   # ~20 MB of stream: more than the sockets hold
        wait_for(lambda: rm.info("replication")["connected_slaves"] == 0, 15, what="replica dropped")
    finally:
        os.kill(s.proc.pid, signal.SIGCONT)
    assert "output buffer limit" in m.read_log() or "overcoming of output buffer limits" in m.read_log()
    wait_link_up(rs)
    wait_caught_up(rm, rs)
    assert rs.dbsize() == rm.dbsize() == 20000
    assert rm.info("stats")["sync_full"] >= 2   # the gap was beyond the 64kb backlog


def test_backlog_too_small_falls_back_to_full_sync(start_server):
    m = start_server(args=FAST + ["--repl-backlog-size", "16kb"])
    rm = m.client()
    s, rs = replica_of(start_server, m)
    fill(rm, 100)
    wait_caught_up(rm, rs)
    before = rm.info("stats")
    rs.client_kill_filter(_type="master")
    fill(rm, 3000, prefix="gap", size=20)    # far more than 16kb while cut off
    wait_link_up(rs)
    wait_caught_up(rm, rs)
    after = rm.info("stats")
    assert after["sync_full"] == before["sync_full"] + 1
    assert after["sync_partial_err"] >= before["sync_partial_err"] + 1
    assert snapshot(rs) == snapshot(rm)


def test_chained_replicas_and_promotion_continue(start_server):
    a = start_server(args=FAST)
    ra = a.client()
    random_load(ra, 300, seed=11)
    b, rb = replica_of(start_server, a)
    c, rc = replica_of(start_server, b)
    random_load(ra, 600, seed=12)
    wait_caught_up(ra, rb)
    wait_caught_up(rb, rc)
    assert snapshot(rc) == snapshot(ra)
    assert rb.info("replication")["connected_slaves"] == 1
    # Promote B: C continues from B's new history through replid2.
    old_id = rb.info("replication")["master_replid"]
    before = rb.info("stats")
    a.stop()
    rb.replicaof("no", "one")
    info = rb.info("replication")
    assert info["master_replid2"] == old_id
    wait_link_up(rc)
    random_load(rb, 200, seed=13)
    wait_caught_up(rb, rc)
    after = rb.info("stats")
    assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
    assert after["sync_full"] == before["sync_full"]
    assert snapshot(rc) == snapshot(rb)


@pytest.mark.slow
def test_replica_killed_during_full_sync(start_server):
    m = start_server(args=["--repl-diskless-sync", "no"])   # the disk form: the RDB file is sent
    rm = m.client()
    fill(rm, 200000, size=50)
    s = start_server(args=FAST)
    rs = s.client()
    rs.replicaof("127.0.0.1", m.port)
    wait_for(lambda: rm.info("replication")["connected_slaves"] == 1, 10)
    s.proc.kill()
    s.proc.wait()
    wait_for(lambda: rm.info("replication")["connected_slaves"] == 0, 15)
    assert rm.ping() and rm.dbsize() == 200000
    s2, rs2 = replica_of(start_server, m)
    rm.set("after", "1")
    wait_caught_up(rm, rs2)
    assert rs2.dbsize() == 200001


@pytest.mark.slow
def test_master_killed_during_diskless_transfer(start_server):
    m = start_server(args=["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"])
    rm = m.client()
    fill(rm, 200000, size=50)
    s = start_server(args=FAST)
    rs = s.client()
    rs.replicaof("127.0.0.1", m.port)
    wait_for(lambda: rm.info("replication")["connected_slaves"] == 1, 10)
    m.proc.kill()
    m.proc.wait()
    wait_for(lambda: rs.info("replication")["master_link_status"] == "down", 15)
    assert rs.ping()
    assert rs.role()[0] == "slave"


def test_scripts_respect_replica_and_min_replicas_refusals(start_server):
    """Texts as Redis 7.0.15 gives them (checked against it by hand)."""
    m = start_server(args=FAST)
    rm = m.client()
    s, rs = replica_of(start_server, m)
    # redis-py turns the READONLY code into ReadOnlyError and drops it from the text.
    with pytest.raises(redis.exceptions.ReadOnlyError) as e:
        rs.eval("return redis.call('set','a',1)", 0)
    assert str(e.value).startswith("You can't write against a read only replica. script:")
    with pytest.raises(redis.exceptions.ReadOnlyError) as e:
        rs.eval("return redis.pcall('set','a',1)", 0)   # the error table, returned as the reply
    assert str(e.value) == "You can't write against a read only replica."
    with pytest.raises(redis.exceptions.ReadOnlyError) as e:
        rs.eval("#!lua\nreturn redis.call('set','a',1)", 0)
    assert str(e.value) == "You can't write against a read only replica."
    assert rs.eval("#!lua flags=no-writes\nreturn redis.call('get','a')", 0) is None
    assert rs.get("a") is None
    rm.config_set("min-replicas-to-write", 2)
    with pytest.raises(redis.ResponseError) as e:
        rm.eval("#!lua\nreturn redis.call('set','a',1)", 0)
    assert str(e.value) == "NOREPLICAS Not enough good replicas to write."
    with pytest.raises(redis.ResponseError) as e:
        rm.eval("return redis.call('set','a',1)", 0)
    assert str(e.value).startswith("NOREPLICAS Not enough good replicas to write. script:")
    rm.config_set("min-replicas-to-write", 1)
    # Online once the master has reaped the sync's child (its cron).
    wait_for(lambda: rm.info("replication")["min_slaves_good_slaves"] == 1, 10)
    assert rm.eval("return redis.call('set','a',1)", 0) == "OK"
    wait_caught_up(rm, rs)
    assert rs.get("a") == "1"


def test_failover_command_hands_over_without_data_loss(start_server):
    m = start_server(args=FAST)
    rm = m.client()
    # Errors, texts as Redis 7.0.15.
    for args, text in ((["FAILOVER"], "FAILOVER requires connected replicas."),
                       (["FAILOVER", "ABORT"], "No failover in progress."),
                       (["FAILOVER", "TIMEOUT", "0"], "FAILOVER timeout must be greater than 0"),
                       (["FAILOVER", "ABORT", "TIMEOUT", "5"], "syntax error"),
                       (["FAILOVER", "TO", "127.0.0.1"], "syntax error")):
        with pytest.raises(redis.ResponseError) as e:
            rm.execute_command(*args)
        assert str(e.value) == text
    s1, r1 = replica_of(start_server, m)
    s2, r2 = replica_of(start_server, m)
    with pytest.raises(redis.ResponseError, match="FAILOVER target HOST and PORT is not a replica."):
        rm.execute_command("FAILOVER", "TO", "127.0.0.1", "1")
    with pytest.raises(redis.ResponseError, match="FAILOVER is not valid when server is a replica."):
        r1.execute_command("FAILOVER")
    random_load(rm, 300, seed=21)
    wait_for(lambda: rm.info("replication")["slave0"]["state"] == "online" and
             rm.info("replication")["slave1"]["state"] == "online", 10)
    settle(rm)   # the load's short-lived keys gone (and their DELs sent)
    before = snapshot(rm)
    assert rm.execute_command("FAILOVER", "TO", "127.0.0.1", str(s1.port), "TIMEOUT", "10000") == "OK"
    wait_for(lambda: r1.role()[0] == "master", 20, what="target promoted")
    wait_for(lambda: rm.info("replication").get("master_port") == s1.port and
             rm.info("replication")["master_link_status"] == "up", 20, what="old master follows the target")
    assert rm.info("replication")["master_failover_state"] == "no-failover"
    with pytest.raises(redis.exceptions.ReadOnlyError):
        rm.set("x", 1)
    assert snapshot(r1) == before
    stats = r1.info("stats")
    assert stats["sync_partial_ok"] >= 1   # the old master continued, no full sync
    r1.set("after", "1")
    wait_caught_up(r1, rm)
    assert rm.get("after") == "1"
    # The other replica ends up following the new history too (through us, chained).
    wait_for(lambda: r2.info("replication")["master_link_status"] == "up", 20)
    wait_for(lambda: r2.get("after") == "1", 20, what="second replica has the new write")


def test_replica_applies_the_stream_whatever_its_default_user_may_do(start_server):
    """The master link runs as no user (as in Redis): a replica whose default
    user may only read app:* keys still applies every write it is sent."""
    m = start_server(args=FAST)
    rm = m.client()
    s = start_server(args=FAST)
    admin = s.client()
    admin.execute_command("ACL", "SETUSER", "admin", "on", ">pw", "allkeys", "allcommands")
    admin.execute_command("ACL", "SETUSER", "default", "resetkeys", "~app:*", "-@all", "+@read", "+ping")
    a = redis.Redis(port=s.port, username="admin", password="pw", decode_responses=True)
    a.replicaof("127.0.0.1", m.port)
    wait_link_up(a)
    rm.set("other:1", "x")
    rm.hset("h", mapping={"f": "v"})
    assert rm.wait(1, 5000) == 1
    assert a.get("other:1") == "x"
    assert a.hgetall("h") == {"f": "v"}
    with pytest.raises(redis.exceptions.NoPermissionError, match="^No permissions to access a key$"):
        admin.get("other:1")             # the default user itself still cannot


def test_replica_authenticates_as_masteruser(start_server):
    """masteruser/masterauth: the replica logs in as an ACL user of the
    master that may only replicate (Redis's minimal +psync +replconf +ping)."""
    m = start_server(args=FAST)
    rm = m.client()
    rm.execute_command("ACL", "SETUSER", "repl", "on", ">rp", "+psync", "+replconf", "+ping")
    rm.execute_command("ACL", "SETUSER", "admin", "on", ">pw", "allkeys", "allcommands")
    rm.execute_command("ACL", "SETUSER", "default", "off")
    adm = redis.Redis(port=m.port, username="admin", password="pw", decode_responses=True)
    s = start_server(args=FAST + ["--masteruser", "repl", "--masterauth", "rp"])
    rs = s.client()
    rs.replicaof("127.0.0.1", m.port)
    wait_link_up(rs)
    adm.set("k", "v")
    assert adm.wait(1, 5000) == 1
    assert rs.get("k") == "v"
    # A wrong password keeps the link down.
    rs.config_set("masterauth", "wrong")
    rs.replicaof("no", "one")
    rs.replicaof("127.0.0.1", m.port)
    time.sleep(1.5)
    assert rs.info("replication")["master_link_status"] == "down"
