"""What Redis 7.0.15's own cluster tests (tests/unit/cluster and the
tests/cluster harness, run by `utils/tools/redis-suite.py --cluster`) found,
each checked here against Debian's redis-server 7.0.15:

- DEBUG DROP-CLUSTER-PACKET-FILTER <type> (every harness unit resets it)
  and DEBUG CLUSTERLINK KILL <to|from|all> <node>, which the harness uses to
  cut gossip and links;
- a key past its TTL in a migrating slot is missing: -ASK, as Redis.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_redis_suite.py"""
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from test_cluster import OTHER, distinct_ports, nodes_conf, same, wait_state
from conftest import free_port
from test_cluster_bus import wait_until

pytestmark = pytest.mark.differential


@pytest.fixture
def pair(tmp_path):
    """Ours and Redis, each loaded from test_cluster's two-node nodes.conf
    (the other node never runs), DEBUG allowed."""
    import conftest
    other, other_bus, *own = distinct_ports(6)
    procs = []
    for name, binary in (("ours", SERVER), ("ref", REDIS_SERVER)):
        path = tmp_path / ("%s-nodes.conf" % name)
        path.write_text(nodes_conf(other, other_bus))
        port, cport = own.pop(), own.pop()
        procs.append(conftest.ServerProcess(binary, ["--cluster-enabled", "yes", "--cluster-config-file", str(path),
                                                     "--cluster-port", str(cport), "--enable-debug-command", "yes"],
                                            port=port))
    clients = [p.client() for p in procs]
    for c in clients:
        wait_state(c)
    yield list(zip(clients, procs))
    for p in procs:
        p.stop()


def test_lazy_expired_key_in_a_migrating_slot_asks(pair):
    (ours, _), (ref, _) = pair
    key = next(k for k in ("FOO", "foo", "k1", "k2", "k3", "k4") if ours.execute_command("CLUSTER", "KEYSLOT", k) < 8192)
    slot = ours.execute_command("CLUSTER", "KEYSLOT", key)
    same(pair, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        same(pair, "SET", key, "bar", "PX", 20)
        same(pair, "CLUSTER", "SETSLOT", slot, "MIGRATING", OTHER)
        time.sleep(0.05)
        got = same(pair, "GET", key)  # both: ASK, the key is gone
        assert got.startswith("ERR:ASK %d " % slot)
        assert same(pair, "DBSIZE") == 1  # not deleted by the check, as Redis
    finally:
        for c in (ours, ref):
            c.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
            c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_debug_drop_filter_and_clusterlink_kill(start_server, binary):
    def node():
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport, "--enable-debug-command", "yes",
                               "--cluster-node-timeout", "3000"], binary=binary)
        s.cport = cport
        return s

    a, b = node(), node()
    ca, cb = a.client(), b.client()
    bid = cb.execute_command("CLUSTER", "MYID")

    def received(c, what):
        info = c.execute_command("CLUSTER", "INFO")
        return int(dict(l.split(":") for l in info.split() if ":" in l).get(what, 0))

    def links(c):
        return sorted(dict(zip(l[::2], l[1::2]))["direction"] for l in c.execute_command("CLUSTER", "LINKS"))

    # Type 2 is MEET: B reads and counts A's MEET, then ignores it (B never
    # learns A); with the filter off (-1) a MEET joins them.
    assert cb.execute_command("DEBUG", "DROP-CLUSTER-PACKET-FILTER", 2) == "OK"
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    wait_until(lambda: received(cb, "cluster_stats_messages_meet_received") > 0, what="a MEET to B")
    time.sleep(0.3)
    assert received(cb, "cluster_known_nodes") == 1
    assert cb.execute_command("DEBUG", "DROP-CLUSTER-PACKET-FILTER", -1) == "OK"
    wait_until(lambda: ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport) and
               received(cb, "cluster_known_nodes") == 2, timeout=20, what="B meets A")
    wait_until(lambda: links(ca) == ["from", "to"] and links(cb) == ["from", "to"], timeout=20, what="both links")

    # A link killed is made again by the cron (ours: "to" at once, "from" when B reconnects).
    t0 = int(dict(zip(*[iter(next(l for l in ca.execute_command("CLUSTER", "LINKS")
                                  if "to" in l))] * 2))["create-time"])
    assert ca.execute_command("DEBUG", "CLUSTERLINK", "KILL", "all", bid) == "OK"
    wait_until(lambda: links(ca) == ["from", "to"], what="links again")
    newer = [int(dict(zip(l[::2], l[1::2]))["create-time"]) for l in ca.execute_command("CLUSTER", "LINKS")]
    assert all(t >= t0 for t in newer)
    for args, text in ((("CLUSTERLINK", "KILL", "sideways", bid), "Unknown direction sideways"),
                       (("CLUSTERLINK", "KILL", "to", "f" * 40), "Unknown node " + "f" * 40)):
        with pytest.raises(Exception) as e:
            ca.execute_command("DEBUG", *args)
        assert text in str(e.value)


def test_scripts_keep_to_one_slot_and_no_cluster_is_refused(pair):
    (ours, _), _ = pair
    keys = [k for k in ("a", "b", "c", "d", "e", "f", "g", "h") if ours.execute_command("CLUSTER", "KEYSLOT", k) < 8192]
    k1, k2 = keys[:2]  # both ours, two slots
    assert ours.execute_command("CLUSTER", "KEYSLOT", k1) != ours.execute_command("CLUSTER", "KEYSLOT", k2)
    two = "redis.call('set', '%s', 1); redis.call('set', '%s', 2); return 'OK'" % (k1, k2)
    same(pair, "EVAL", two, 0)                                      # an old script roams: OK
    got = same(pair, "EVAL", "#!lua\n" + two, 0)                    # a shebang keeps to one slot
    assert "do not hash to the same slot" in got
    got = same(pair, "EVAL", "#!lua\nredis.call('get', KEYS[1]); return redis.call('get', '%s')" % k2, 1, k1)
    assert "do not hash to the same slot" in got                    # nor strays from its declared keys
    assert same(pair, "EVAL", "#!lua flags=allow-cross-slot-keys\n" + two, 0) == "OK"
    got = same(pair, "EVAL", "#!lua flags=no-cluster\nreturn 1", 0)
    assert "'no-cluster' flag is set" in got
    same(pair, "FUNCTION", "LOAD", "REPLACE", "#!lua name=lib\nredis.register_function('f', function() "
         "redis.call('set', '%s', 1); redis.call('set', '%s', 2); return 'OK' end)" % (k1, k2))
    assert "do not hash to the same slot" in same(pair, "FCALL", "f", 0)
    same(pair, "FUNCTION", "FLUSH")
    same(pair, "FLUSHALL")


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_relative_logfile_is_in_dir(start_server, tmp_path, binary):
    """The harness gives each instance `dir ./redis_N` and `logfile log.txt`:
    the log is redis_N/log.txt, not one file shared by all."""
    d = tmp_path / "node"
    d.mkdir()
    s = start_server(args=["--dir", str(d), "--logfile", "log.txt"], binary=binary)
    s.client().ping()
    assert "Ready to accept connections" in (d / "log.txt").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_a_replica_restarted_from_nodes_conf_follows_its_master(start_server, tmp_path, binary):
    """tests/cluster/03-failover-loop kills a replica and restarts it: it
    comes back a replica, replicating its master, from nodes.conf alone."""
    nodes = []
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        cport = free_port()
        args = ["--cluster-enabled", "yes", "--cluster-port", str(cport), "--dir", str(d),
                "--cluster-node-timeout", "3000"]
        s = start_server(args=args, binary=binary)
        s.cport, s.args = cport, args
        nodes.append(s)
    a, b = nodes
    ca = a.client()
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    aid = ca.execute_command("CLUSTER", "MYID")
    wait_until(lambda: aid in b.client().execute_command("CLUSTER", "NODES"), what="B knows A")
    b.client().execute_command("CLUSTER", "REPLICATE", aid)
    wait_until(lambda: ca.execute_command("CLUSTER", "INFO").startswith("cluster_state:ok"), what="cluster ok")
    ca.set("foo", "bar")

    def synced(s):
        info = s.client().info("replication")
        return info["role"] == "slave" and info.get("master_link_status") == "up"

    wait_until(lambda: synced(b), timeout=20, what="B replicating")
    port = b.port
    b.stop()
    ca.set("foo", "baz")  # written while B was away
    b2 = start_server(args=b.args, binary=binary, port=port)
    wait_until(lambda: synced(b2), timeout=20, what="B replicating again",
               show=lambda: repr(b2.client().info("replication")))
    cb = b2.client()
    cb.execute_command("READONLY")
    wait_until(lambda: cb.get("foo") == "baz", what="B has the new value")


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_cluster_slots_lists_a_replica_once_it_has_data(start_server, binary):
    """Redis 7.0 leaves a replica whose offset is still 0 out of CLUSTER
    SLOTS, so every node answers the same while replicas do their first
    sync (the unit tests' cluster_setup waits for that)."""
    nodes = []
    for _ in range(2):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport, "--repl-ping-replica-period", "60"], binary=binary)
        s.cport = cport
        nodes.append(s)
    a, b = nodes
    ca, cb = a.client(), b.client()
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    aid = ca.execute_command("CLUSTER", "MYID")
    wait_until(lambda: aid in cb.execute_command("CLUSTER", "NODES"), what="B knows A")
    cb.execute_command("CLUSTER", "REPLICATE", aid)
    wait_until(lambda: cb.info("replication").get("master_link_status") == "up", timeout=20, what="B synced")
    time.sleep(1.5)  # a few pings carry B's offset
    bid = cb.execute_command("CLUSTER", "MYID")

    def b_in_shards(c):  # (replication-offset, health) of B in CLUSTER SHARDS
        for shard in c.execute_command("CLUSTER", "SHARDS"):
            for node in dict(zip(shard[::2], shard[1::2]))["nodes"]:
                node = dict(zip(node[::2], node[1::2]))
                if node["id"] == bid:
                    return node["replication-offset"], node["health"]

    for c in (ca, cb):
        assert [len(r) for r in c.execute_command("CLUSTER", "SLOTS")] == [3]  # the master only
        assert b_in_shards(c) == (0, "loading")
    ca.set("foo", "bar")
    for c in (ca, cb):
        wait_until(lambda: [len(r) for r in c.execute_command("CLUSTER", "SLOTS")] == [4], what="B listed")
        wait_until(lambda: b_in_shards(c)[0] > 0 and b_in_shards(c)[1] == "online", what="B online",
                   show=lambda: repr(b_in_shards(c)))


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_a_master_giving_its_last_slot_away_becomes_a_replica(start_server, binary):
    """unit/cluster's "Migrate the last slot away from a node": SETSLOT NODE
    of its last slot turns the master into a replica of the new owner."""
    nodes = []
    for _ in range(2):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport], binary=binary)
        s.cport = cport
        nodes.append(s)
    a, b = nodes
    ca, cb = a.client(), b.client()
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16382)
    cb.execute_command("CLUSTER", "ADDSLOTS", 16383)
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    aid, bid = ca.execute_command("CLUSTER", "MYID"), cb.execute_command("CLUSTER", "MYID")
    wait_until(lambda: aid in cb.execute_command("CLUSTER", "NODES") and bid in ca.execute_command("CLUSTER", "NODES"),
               what="A and B know each other")
    assert ca.execute_command("CLUSTER", "SETSLOT", 16383, "IMPORTING", bid) == "OK"
    assert cb.execute_command("CLUSTER", "SETSLOT", 16383, "MIGRATING", aid) == "OK"
    assert ca.execute_command("CLUSTER", "SETSLOT", 16383, "NODE", aid) == "OK"
    # A's PONG announcing the slot may reach B first (both servers): B has
    # then turned replica by gossip and refuses the SETSLOT a master takes.
    try:
        assert cb.execute_command("CLUSTER", "SETSLOT", 16383, "NODE", aid) == "OK"
    except redis.ResponseError as e:
        assert str(e) == "Please use SETSLOT only with masters."
    wait_until(lambda: "slave" in next(l for l in cb.execute_command("CLUSTER", "NODES").splitlines()
                                       if l.startswith(bid)).split()[2], what="B a replica in its view")
    me = next(l for l in cb.execute_command("CLUSTER", "NODES").splitlines() if l.startswith(bid)).split()
    assert "slave" in me[2] and me[3] == aid
    wait_until(lambda: cb.info("replication")["role"] == "slave", what="B a replica")
    wait_until(lambda: "slave" in " ".join(ca.execute_command("CLUSTER", "REPLICAS", aid)), what="A knows it")


@pytest.mark.slow
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_a_failed_master_back_without_failover_is_cleared(start_server, binary):
    """tests/cluster/01-faildet: a master with slots and no replica, marked
    FAIL, that answers again: after twice the node timeout with nobody
    serving its slots the others clear its FAIL, and the cluster is ok."""
    import os
    import signal
    nodes = []
    for _ in range(3):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport, "--cluster-node-timeout", "1000"], binary=binary)
        s.cport = cport
        nodes.append(s)
    clients = [n.client() for n in nodes]
    for i, (lo, hi) in enumerate(((0, 5460), (5461, 10922), (10923, 16383))):
        clients[i].execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
    for n in nodes[1:]:
        clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", n.port, n.cport)

    def state(c):
        return c.execute_command("CLUSTER", "INFO").split()[0]

    wait_until(lambda: all(state(c) == "cluster_state:ok" for c in clients), timeout=20, what="cluster ok")
    os.kill(nodes[2].pid, signal.SIGSTOP)
    try:
        wait_until(lambda: all(state(c) == "cluster_state:fail" for c in clients[:2]), timeout=20, what="C failing")
    finally:
        os.kill(nodes[2].pid, signal.SIGCONT)
    t0 = time.monotonic()
    wait_until(lambda: all(state(c) == "cluster_state:ok" for c in clients), timeout=30, what="cluster ok again")
    assert time.monotonic() - t0 > 1.0  # not at once: after twice the node timeout


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_cluster_reset_of_a_replica_makes_an_empty_master(start_server, binary):
    """Every harness unit starts with CLUSTER RESET HARD on all nodes: a
    replica stops replicating and drops its data, as Redis."""
    nodes = []
    for _ in range(2):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport], binary=binary)
        s.cport = cport
        nodes.append(s)
    a, b = nodes
    ca, cb = a.client(), b.client()
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    aid = ca.execute_command("CLUSTER", "MYID")
    wait_until(lambda: aid in cb.execute_command("CLUSTER", "NODES"), what="B knows A")
    cb.execute_command("CLUSTER", "REPLICATE", aid)
    wait_until(lambda: ca.execute_command("CLUSTER", "INFO").startswith("cluster_state:ok"), what="cluster ok")
    ca.set("foo", "bar")
    wait_until(lambda: cb.dbsize() == 1, timeout=20, what="B has the key")
    assert cb.execute_command("CLUSTER", "RESET", "HARD") == "OK"
    info = cb.info("replication")
    assert info["role"] == "master" and info["connected_slaves"] == 0
    assert cb.dbsize() == 0
    ca.set("foo", "baz")
    time.sleep(0.5)
    assert cb.dbsize() == 0  # no longer fed by A


@pytest.mark.slow
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_a_promoted_replica_left_alone_gets_a_migrated_replica(start_server, binary):
    """tests/cluster/07-replica-migration: a replica that failed over, its
    old master gone and no replica of its own, is an orphan: a replica of
    the master with two moves to it."""
    import os
    import signal
    nodes = []
    for _ in range(6):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport, "--cluster-node-timeout", "1000"], binary=binary)
        s.cport = cport
        nodes.append(s)
    c = [n.client() for n in nodes]
    for i, (lo, hi) in enumerate(((0, 5460), (5461, 10922), (10923, 16383))):
        c[i].execute_command("CLUSTER", "ADDSLOTSRANGE", lo, hi)
    for n in nodes[1:]:
        c[0].execute_command("CLUSTER", "MEET", "127.0.0.1", n.port, n.cport)
    ids = [x.execute_command("CLUSTER", "MYID") for x in c]
    wait_until(lambda: all(len(x.execute_command("CLUSTER", "NODES").splitlines()) == 6 for x in c), timeout=20,
               what="all meet")
    for r, m in ((3, 0), (4, 0), (5, 1)):  # #0 has two replicas, #1 one
        c[r].execute_command("CLUSTER", "REPLICATE", ids[m])

    def replicas_of(i, via=0):
        return [l.split()[0] for l in c[via].execute_command("CLUSTER", "NODES").splitlines()
                if l.split()[3] == ids[i] and "fail" not in l.split()[2]]

    wait_until(lambda: len(replicas_of(0)) == 2 and len(replicas_of(1)) == 1, timeout=20, what="replicas known")
    wait_until(lambda: all(c[r].info("replication").get("master_link_status") == "up" for r in (3, 4, 5)),
               timeout=20, what="replicas synced")
    os.kill(nodes[1].pid, signal.SIGSTOP)
    try:
        wait_until(lambda: c[5].info("replication")["role"] == "master", timeout=30, what="#5 fails over")
        # #5 serves #1's slots with no replica: #3 or #4 (the smaller id) moves to it
        wait_until(lambda: len(replicas_of(5, via=5)) == 1 and len(replicas_of(0, via=5)) == 1, timeout=30,
                   what="a replica migrated to #5", show=lambda: c[5].execute_command("CLUSTER", "NODES"))
    finally:
        os.kill(nodes[1].pid, signal.SIGCONT)


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_replica_nofailover_flag_and_script_writes_on_a_replica(start_server, binary):
    """tests/cluster/13-no-failover-option: a replica's
    cluster-replica-no-failover shows as `nofailover` on the other nodes;
    16-transactions-on-replica: a script that declares writes (a shebang
    without no-writes) is redirected by a READONLY replica, as a write."""
    nodes = []
    for _ in range(2):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport], binary=binary)
        s.cport = cport
        nodes.append(s)
    a, b = nodes
    ca, cb = a.client(), b.client()
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    aid, bid = ca.execute_command("CLUSTER", "MYID"), cb.execute_command("CLUSTER", "MYID")
    wait_until(lambda: aid in cb.execute_command("CLUSTER", "NODES"), what="B knows A")
    cb.execute_command("CLUSTER", "REPLICATE", aid)
    cb.config_set("cluster-replica-no-failover", "yes")

    def b_flags():
        return next(l for l in ca.execute_command("CLUSTER", "NODES").splitlines() if l.startswith(bid)).split()[2]

    wait_until(lambda: b_flags() == "slave,nofailover", timeout=20, what="nofailover on A", show=b_flags)
    cb.config_set("cluster-replica-no-failover", "no")
    wait_until(lambda: b_flags() == "slave", timeout=20, what="nofailover gone on A", show=b_flags)

    wait_until(lambda: cb.info("replication").get("master_link_status") == "up", timeout=20, what="B synced")
    conn = b.client()
    conn.execute_command("READONLY")
    with pytest.raises(Exception, match="MOVED"):
        conn.eval("#!lua\nreturn redis.call('del', 'a')", 1, "a")
    assert conn.eval("#!lua flags=no-writes\nreturn redis.call('get', 'a')", 1, "a") is None
    assert conn.eval("return redis.call('get', 'a')", 1, "a") is None  # no shebang: read as EVAL's flags say


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_a_removed_announced_hostname_is_removed_on_the_others(start_server, binary):
    """tests/cluster/27-endpoints: a node that stops announcing a hostname
    (no hostname extension in its pings) has none on the other nodes."""
    nodes = []
    for _ in range(2):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport], binary=binary)
        s.cport = cport
        nodes.append(s)
    a, b = nodes
    ca, cb = a.client(), b.client()
    ca.execute_command("CLUSTER", "MEET", "127.0.0.1", b.port, b.cport)
    aid = ca.execute_command("CLUSTER", "MYID")

    def a_addr():
        return next((l.split()[1] for l in cb.execute_command("CLUSTER", "NODES").splitlines()
                     if l.startswith(aid)), "")

    ca.config_set("cluster-announce-hostname", "host-a.example")
    wait_until(lambda: a_addr().endswith(",host-a.example"), timeout=20, what="hostname on B", show=a_addr)
    ca.config_set("cluster-announce-hostname", "")
    wait_until(lambda: a_addr() == "127.0.0.1:%d@%d" % (a.port, a.cport), timeout=20, what="hostname gone on B",
               show=a_addr)


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_no_replica_migration_keeps_replicas_of_an_emptied_master(start_server, binary):
    """tests/cluster/12.1-replica-migration-3: with
    cluster-allow-replica-migration no, a master that gives its last slot
    away stays a master and its replica stays with it."""
    nodes = []
    for _ in range(3):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-config-file",
                               "nodes-%d.conf" % cport, "--cluster-allow-replica-migration", "no"], binary=binary)
        s.cport = cport
        nodes.append(s)
    ca, cb, cr = [n.client() for n in nodes]
    ca.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16382)
    cb.execute_command("CLUSTER", "ADDSLOTS", 16383)
    for n in nodes[1:]:
        ca.execute_command("CLUSTER", "MEET", "127.0.0.1", n.port, n.cport)
    aid, bid, rid = [x.execute_command("CLUSTER", "MYID") for x in (ca, cb, cr)]
    wait_until(lambda: all(len(x.execute_command("CLUSTER", "NODES").splitlines()) == 3 for x in (ca, cb, cr)),
               what="all meet")
    cr.execute_command("CLUSTER", "REPLICATE", bid)
    wait_until(lambda: cr.info("replication").get("master_link_status") == "up", timeout=20, what="R synced")
    assert ca.execute_command("CLUSTER", "SETSLOT", 16383, "IMPORTING", bid) == "OK"
    assert cb.execute_command("CLUSTER", "SETSLOT", 16383, "MIGRATING", aid) == "OK"
    assert ca.execute_command("CLUSTER", "SETSLOT", 16383, "NODE", aid) == "OK"
    assert cb.execute_command("CLUSTER", "SETSLOT", 16383, "NODE", aid) == "OK"
    wait_until(lambda: "16383" in next(l for l in cr.execute_command("CLUSTER", "NODES").splitlines()
                                       if l.startswith(aid)), what="R sees A own every slot")
    time.sleep(1.5)  # a few more pings
    me = next(l for l in cr.execute_command("CLUSTER", "NODES").splitlines() if l.startswith(rid)).split()
    assert "slave" in me[2] and me[3] == bid
    assert cb.info("replication")["role"] == "master"
