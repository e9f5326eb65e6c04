"""What a replica inherits besides the keys, as Redis 7.0 does it:
PUBLISH (and SPUBLISH) reach the replicas' subscribers through the stream
(not the AOF); a +CONTINUE goes on in the database the master's stream
last selected; and the replication ID and offset saved in the RDB's aux
fields (repl-id, repl-offset, repl-stream-db) let a restarted replica or
master continue with a partial resync instead of a full one.  Each
scenario runs with our servers and, where it crosses implementations,
with Debian's redis-server 7.0.15 on the other side."""
import os
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_caught_up, wait_for, wait_link_up

pytestmark = pytest.mark.differential

PAIRS = [(SERVER, SERVER), (SERVER, REDIS_SERVER), (REDIS_SERVER, SERVER)]
IDS = ["ours-ours", "ours-to-redis-replica", "redis-to-our-replica"]


def _pair(start_server, master_bin, replica_bin, master_args=(), replica_args=()):
    m = start_server(args=["--repl-diskless-sync-delay", "0"] + list(master_args), binary=master_bin)   # no 5 s wait for more replicas
    s = start_server(args=list(replica_args), binary=replica_bin)
    mc, sc = m.client(), s.client()
    assert sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    return m, mc, s, sc


def _next_message(ps, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        msg = ps.get_message(ignore_subscribe_messages=True, timeout=0.2)
        if msg:
            return msg
    return None


@pytest.mark.parametrize("master_bin,replica_bin", PAIRS, ids=IDS)
def test_publish_reaches_replica_subscribers(start_server, master_bin, replica_bin):
    m, mc, s, sc = _pair(start_server, master_bin, replica_bin)
    ps = sc.pubsub()
    ps.subscribe("news")
    assert _next_message(ps, 0.5) is None
    assert mc.publish("news", "hello") == 0            # nobody listens on the master
    msg = _next_message(ps)
    assert msg and msg["channel"] == "news" and msg["data"] == "hello"
    # Inside a transaction and a script too.
    with mc.pipeline(transaction=True) as p:
        p.set("k", "v")
        p.publish("news", "in-multi")
        p.execute()
    assert _next_message(ps)["data"] == "in-multi"
    mc.eval("redis.call('publish', 'news', ARGV[1]); return 1", 0, "from-script")
    assert _next_message(ps)["data"] == "from-script"
    wait_caught_up(mc, sc)
    assert sc.get("k") == "v"
    ps.close()


def test_publish_not_in_aof(start_server):
    m = start_server(args=["--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"])
    s = start_server()
    mc, sc = m.client(), s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    mc.publish("chan", "not-logged")
    mc.set("logged", "1")
    wait_caught_up(mc, sc)
    aof = b""
    for root, _, files in os.walk(m.dir):
        for f in files:
            if ".aof" in f:
                with open(os.path.join(root, f), "rb") as fh:
                    aof += fh.read()
    assert b"logged" in aof and b"not-logged" not in aof


@pytest.mark.parametrize("master_bin,replica_bin", PAIRS, ids=IDS)
def test_continue_resumes_in_the_selected_db(start_server, master_bin, replica_bin):
    m, mc, s, sc = _pair(start_server, master_bin, replica_bin)
    m3 = m.client(db=3)
    m3.set("a", "1")                     # the stream selects db 3
    wait_caught_up(mc, sc)
    assert sc.client_kill_filter(_type="master") == 1
    m3.set("b", "2")                     # no new SELECT: the stream is still on db 3
    wait_link_up(sc)
    wait_caught_up(mc, sc)
    s3 = s.client(db=3)
    assert s3.get("b") == "2" and sc.get("b") is None
    assert mc.info("stats")["sync_partial_ok"] == 1


def _restart(start_server, proc, binary, extra, same_port=False):
    """Stop proc with SHUTDOWN SAVE and start the same binary in its dir
    (and, for a master, on its port)."""
    c = proc.client()
    try:
        c.execute_command("SHUTDOWN", "SAVE")
    except redis.exceptions.ConnectionError:
        pass
    proc.proc.wait(20)
    return start_server(args=["--dir", proc.dir, "--dbfilename", "dump.rdb"] + list(extra), binary=binary,
                        port=proc.port if same_port else None)


@pytest.mark.slow
@pytest.mark.parametrize("master_bin,replica_bin", PAIRS, ids=IDS)
def test_restarted_replica_continues_partially(start_server, master_bin, replica_bin):
    m, mc, s, sc = _pair(start_server, master_bin, replica_bin)
    for i in range(200):
        mc.set("key:%d" % i, i)
    m.client(db=2).set("in-db2", "x")
    wait_caught_up(mc, sc)
    full_before = mc.info("stats")["sync_full"]
    s2 = _restart(start_server, s, replica_bin, ["--replicaof", "127.0.0.1", str(m.port)])
    m.client(db=2).set("while-down", "y")   # still on db 2: no SELECT in the stream
    sc2 = s2.client()
    wait_link_up(sc2)
    wait_caught_up(mc, sc2)
    stats = mc.info("stats")
    assert stats["sync_full"] == full_before and stats["sync_partial_ok"] == 1
    assert sc2.dbsize() == 200 and s2.client(db=2).get("while-down") == "y"
    assert sc2.info("replication")["master_replid"] == mc.info("replication")["master_replid"]


@pytest.mark.slow
@pytest.mark.parametrize("master_bin,replica_bin", PAIRS, ids=IDS)
def test_restarted_master_continues_partially(start_server, master_bin, replica_bin):
    m, mc, s, sc = _pair(start_server, master_bin, replica_bin)
    for i in range(200):
        mc.set("key:%d" % i, i)
    wait_caught_up(mc, sc)
    old = mc.info("replication")
    m2 = _restart(start_server, m, master_bin, [], same_port=True)
    mc2 = m2.client()
    rep = mc2.info("replication")
    assert rep["master_replid2"] == old["master_replid"]
    assert rep["master_repl_offset"] >= old["master_repl_offset"]   # Redis adds the GETACK its SHUTDOWN sends
    wait_for(lambda: mc2.info("replication")["connected_slaves"] == 1 and
             sc.info("replication").get("master_link_status") == "up", 30, what="the replica back")
    stats = mc2.info("stats")
    assert stats["sync_partial_ok"] == 1 and stats["sync_full"] == 0
    mc2.set("after", "restart")
    wait_caught_up(mc2, sc)
    assert sc.get("after") == "restart" and sc.dbsize() == 201
