"""Cluster mode on one node (issue 45, layers 1 and 2): the cluster-*
directives, nodes.conf, hash slots, routing and the CLUSTER subcommands,
compared with Debian's redis-server 7.0.15 started in cluster mode.

Two nodes of a cluster are described by one nodes.conf (myself and a second
master that owns slots 8192-16383 but never runs): both servers load the
same file, so MOVED, ASK and TRYAGAIN can be compared without a cluster
bus.  Replies are compared after the node ids and ports, which differ
between the two servers, are replaced by names.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster.py"""
import os
import socket
import subprocess
import time

import pytest
import redis

from compat74 import as74  # 7.4's changed texts on 7.0's replies
from conftest import REDIS_SERVER, SERVER, free_port

pytestmark = pytest.mark.differential

ME = "a" * 40
OTHER = "b" * 40


def nodes_conf(other_port, other_bus_port):
    return ("%s 127.0.0.1:0@0 myself,master - 0 0 1 connected 0-8191\n"
            "%s 127.0.0.1:%d@%d master - 0 0 2 connected 8192-16383\n"
            "vars currentEpoch 2 lastVoteEpoch 0\n") % (ME, OTHER, other_port, other_bus_port)


def distinct_ports(n):
    """n free loopback ports, all different (each held bound until all are
    chosen: free_port() alone may hand the same one out twice)."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def wait_state(c, state="ok", timeout=5.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if c.execute_command("CLUSTER", "INFO").startswith("cluster_state:%s" % state):
            return
        time.sleep(0.05)
    raise AssertionError("cluster_state never became " + state)


def start_cluster_node(start_server, tmp_path, name, binary, conf_text=None, extra=()):
    path = tmp_path / ("%s-nodes.conf" % name)
    if conf_text is not None:
        path.write_text(conf_text)
    cport = free_port()
    s = start_server(args=["--cluster-enabled", "yes", "--cluster-config-file", str(path), "--cluster-port",
                           str(cport), "--cluster-node-timeout", "60000"] + list(extra), binary=binary)
    s.cport = cport
    s.myid = s.client().execute_command("CLUSTER", "MYID")
    return s, path


def normalize(reply, server):
    """Ids and ports of the server replaced by names, recursively."""
    if isinstance(reply, (list, tuple)):
        return [normalize(x, server) for x in reply]
    if isinstance(reply, dict):
        return {normalize(k, server): normalize(v, server) for k, v in reply.items()}
    if isinstance(reply, bytes):
        reply = reply.decode()
    if isinstance(reply, str):
        if getattr(server, "myid", None):
            reply = reply.replace(server.myid, "MYID")
        return reply.replace(str(getattr(server, "cport", "CPORT")), "CPORT").replace(str(server.port), "PORT")
    if reply == server.port:
        return "PORT"
    return reply


def run(c, server, *args):
    try:
        return normalize(c.execute_command(*args), server)
    except redis.ResponseError as e:
        return "ERR:" + normalize(str(e), server)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Ours and Redis, each loaded from the two-node nodes.conf."""
    import conftest
    tmp = tmp_path_factory.mktemp("cluster")
    # Six different ports: one shared by the fake node and a server would
    # be renamed by normalize() on one side only.
    other, other_bus, *own = distinct_ports(6)
    procs = []
    for name, binary in (("ours", SERVER), ("ref", REDIS_SERVER)):
        path = tmp / ("%s-nodes.conf" % name)
        path.write_text(nodes_conf(other, other_bus))
        port, cport = own.pop(), own.pop()
        procs.append(conftest.ServerProcess(binary, ["--cluster-enabled", "yes", "--cluster-config-file", str(path),
                                                     "--cluster-port", str(cport), "--cluster-node-timeout", "60000"],
                                            port=port))
        procs[-1].cport = cport
    clients = [p.client() for p in procs]
    for c in clients:
        wait_state(c)
    yield list(zip(clients, procs))
    for p in procs:
        p.stop()


def same(pair, *args):
    (ours, so), (ref, sr) = pair
    a, b = run(ours, so, *args), as74(run(ref, sr, *args))
    assert a == b, (args, a, b)
    return a


KEYS = ["", "foo", "bar", "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap",
        "foo{bar}{zap}", "{}", "a{b", "123456789", "hello world", "\xff\x00\x01"]


def test_keyslot_matches_redis(pair):
    for k in KEYS:
        same(pair, "CLUSTER", "KEYSLOT", k)


def test_nodes_slots_shards_info_match_redis(pair):
    same(pair, "CLUSTER", "MYID")
    assert same(pair, "CLUSTER", "MYID") == ME
    # The other node's link state and ping times are the bus's: compare
    # the columns our table holds, myself's line whole.
    (ours, so), (ref, sr) = pair
    mine = run(ours, so, "CLUSTER", "NODES").splitlines()
    theirs = run(ref, sr, "CLUSTER", "NODES").splitlines()
    assert sorted(line.split()[0] for line in mine) == sorted(line.split()[0] for line in theirs)
    me = [line for line in mine if "myself" in line][0]
    assert me == [line for line in theirs if "myself" in line][0]
    for lines in (mine, theirs):
        o = [line.split() for line in lines if line.startswith(OTHER)][0]
        assert o[2] == "master" and o[8] == "8192-16383" and o[6] == "2"
    same(pair, "CLUSTER", "SLOTS")
    info = same(pair, "CLUSTER", "COUNTKEYSINSLOT", 5)
    assert info == 0
    for line in ("cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:2", "cluster_size:2",
                 "cluster_current_epoch:2", "cluster_my_epoch:1"):
        assert line in run(ours, so, "CLUSTER", "INFO")
        assert line in run(ref, sr, "CLUSTER", "INFO")
    # SHARDS: the shard of myself as Redis prints it.
    shards = [normalize(s, so) for s in ours.execute_command("CLUSTER", "SHARDS")]
    ref_shards = [normalize(s, sr) for s in ref.execute_command("CLUSTER", "SHARDS")]
    assert len(shards) == len(ref_shards) == 2
    pick = lambda ss: [s for s in ss if s[1] == [0, 8191]][0]  # noqa: E731
    a, b = pick(shards), pick(ref_shards)
    assert a[0] == b[0] == "slots" and a[2] == b[2] == "nodes"
    assert a[3][0][:6] == b[3][0][:6]   # id, port
    assert a[3][0][8:] == b[3][0][8:]   # role, offset, health


def test_routing_moved_crossslot_matches_redis(pair):
    (ours, so), (ref, sr) = pair
    for c in (ours, ref):
        c.flushall()
    same(pair, "SET", "bar", "1")                  # slot 5061: ours
    same(pair, "GET", "foo")                       # slot 12182: MOVED to the other node
    same(pair, "MSET", "bar", "1", "foo", "2")     # CROSSSLOT
    same(pair, "MSET", "{bar}a", "1", "{bar}b", "2")
    same(pair, "GET", "{bar}a")
    same(pair, "PING")
    same(pair, "EVAL", "return redis.call('get', KEYS[1])", 1, "bar")
    same(pair, "EVAL", "return 1", 1, "foo")
    same(pair, "EVAL", "return 1", 2, "foo", "bar")
    same(pair, "SELECT", 0)
    same(pair, "SELECT", 1)
    same(pair, "SELECT", "x")
    same(pair, "SWAPDB", 0, 1)
    same(pair, "COPY", "bar", "{bar}c", "DB", 1)
    same(pair, "COPY", "bar", "{bar}c", "DB", 0)
    same(pair, "CLUSTER", "COUNTKEYSINSLOT", 5061)
    same(pair, "RPUSH", "{bar}l", 3, 1, 2)
    for args in (("BY", "w_*"), ("BY", "nosort"), ("GET", "#"), ("GET", "h_*"), ("BY", "x_*", "GET", "#")):
        same(pair, "SORT", "{bar}l", *args)
        same(pair, "SORT_RO", "{bar}l", *args)
    same(pair, "DEL", "{bar}l")
    # Redis lists a slot's keys newest first; ours come in table order.
    a, b = (sorted(run(c, s, "CLUSTER", "GETKEYSINSLOT", 5061, 10)) for c, s in pair)
    assert a == b == ["bar", "{bar}a", "{bar}b", "{bar}c"]


def test_multi_exec_routing_matches_redis(pair):
    for args in ([("SET", "bar", 1), ("SET", "foo", 2)],     # the queued MOVED flags the transaction
                 [("SET", "bar", 1), ("SET", "{bar}x", 2)],
                 [("SET", "bar", 1), ("GET", "hello world")]):
        results = []
        for c, s in pair:
            conn = c.connection_pool.get_connection("x")
            try:
                out = []
                for cmd in [("MULTI",)] + list(args) + [("EXEC",)]:
                    conn.send_command(*cmd)
                    try:
                        out.append(normalize(conn.read_response(), s))
                    except redis.ResponseError as e:
                        out.append("ERR:" + normalize(str(e), s))
                results.append(out)
            finally:
                c.connection_pool.release(conn)
        assert results[0] == results[1], results


def test_migrating_importing_ask_tryagain_match_redis(pair):
    (ours, so), (ref, sr) = pair
    for c in (ours, ref):
        c.flushall()
    same(pair, "SET", "bar", "1")
    same(pair, "CLUSTER", "SETSLOT", 5061, "MIGRATING", OTHER)
    same(pair, "GET", "bar")                         # present: served
    same(pair, "GET", "{bar}missing")                # missing: ASK
    same(pair, "MGET", "bar", "{bar}missing")
    same(pair, "CLUSTER", "SETSLOT", 5061, "STABLE")
    # Importing a slot of the other node: only with ASKING.
    same(pair, "CLUSTER", "SETSLOT", 12182, "IMPORTING", OTHER)
    same(pair, "GET", "foo")
    for c, s in pair:
        conn = c.connection_pool.get_connection("x")
        try:
            got = []
            for cmd in (("ASKING",), ("SET", "foo", "1"), ("GET", "foo"), ("ASKING",), ("GET", "foo"),
                        ("ASKING",), ("MGET", "foo", "{foo}nope")):
                conn.send_command(*cmd)
                try:
                    got.append(normalize(conn.read_response(), s))
                except redis.ResponseError as e:
                    got.append("ERR:" + normalize(str(e), s))
            c._asking_result = got
        finally:
            c.connection_pool.release(conn)
    assert ours._asking_result == ref._asking_result, (ours._asking_result, ref._asking_result)
    got = ours._asking_result
    assert got[:2] == ["OK", "OK"] and got[2].startswith("ERR:MOVED")   # ASKING lets one command in
    assert got[3:5] == ["OK", "1"]
    assert got[6].startswith("ERR:TRYAGAIN")                            # one key still missing
    same(pair, "GET", "foo")                                 # without ASKING: MOVED again
    same(pair, "CLUSTER", "SETSLOT", 12182, "STABLE")
    for c in (ours, ref):
        c.flushall()


ERROR_CASES = [
    ("CLUSTER", "ADDSLOTS", 0), ("CLUSTER", "ADDSLOTS", 16384), ("CLUSTER", "ADDSLOTS", -1),
    ("CLUSTER", "ADDSLOTS", "abc"), ("CLUSTER", "DELSLOTS", 10, 10), ("CLUSTER", "ADDSLOTSRANGE", 5, 4),
    ("CLUSTER", "ADDSLOTSRANGE", 1, 2, 3), ("CLUSTER", "COUNTKEYSINSLOT", 16384), ("CLUSTER", "COUNTKEYSINSLOT", "x"),
    ("CLUSTER", "GETKEYSINSLOT", 16384, 1), ("CLUSTER", "GETKEYSINSLOT", 1, -1), ("CLUSTER", "GETKEYSINSLOT", "x", 1),
    ("CLUSTER", "KEYSLOT"), ("CLUSTER", "SETSLOT", 0, "foo"), ("CLUSTER", "SETSLOT", 0, "MIGRATING", "abc"),
    ("CLUSTER", "SETSLOT", 9000, "MIGRATING", "abc"), ("CLUSTER", "SETSLOT", 0, "IMPORTING", "abc"),
    ("CLUSTER", "SETSLOT", 9000, "IMPORTING", "abc"), ("CLUSTER", "SETSLOT", 0, "NODE", "abc"),
    ("CLUSTER", "SETSLOT", "x", "STABLE"), ("CLUSTER", "FORGET", "abc"), ("CLUSTER", "FORGET", ME),
    ("CLUSTER", "REPLICATE", "abc"), ("CLUSTER", "REPLICATE", ME), ("CLUSTER", "REPLICAS", "abc"),
    ("CLUSTER", "REPLICAS", ME), ("CLUSTER", "SLAVES", OTHER), ("CLUSTER", "COUNT-FAILURE-REPORTS", "abc"),
    ("CLUSTER", "FAILOVER"), ("CLUSTER", "FAILOVER", "x"), ("CLUSTER", "SET-CONFIG-EPOCH", -1),
    ("CLUSTER", "SET-CONFIG-EPOCH", "x"), ("CLUSTER", "SET-CONFIG-EPOCH", 5), ("CLUSTER", "RESET", "x"),
    ("CLUSTER", "MEET", "127.0.0.1", "x"), ("CLUSTER", "FOO"), ("CLUSTER", "INFO", "x"),
    ("READONLY",), ("READWRITE",), ("ASKING",), ("MOVE", "bar", 1), ("CLUSTER", "HELP"),
    ("CLUSTER", "FLUSHSLOTS", "x"), ("CLUSTER", "SETSLOT", 8192, "NODE", ME),
]


def test_errors_and_small_replies_match_redis(pair):
    (ours, so), (ref, sr) = pair
    for c in (ours, ref):
        c.flushall()
        c.set("bar", 1)
    for args in ERROR_CASES:
        same(pair, *args)


def test_slot_changes_match_redis(pair):
    (ours, so), (ref, sr) = pair
    for c in (ours, ref):
        c.flushall()
    for args in (("CLUSTER", "DELSLOTSRANGE", 100, 200, 300, 300), ("CLUSTER", "DELSLOTS", 100),
                 ("CLUSTER", "ADDSLOTS", 100, 101, 101), ("CLUSTER", "ADDSLOTSRANGE", 100, 150),
                 ("CLUSTER", "ADDSLOTS", 300), ("CLUSTER", "SLOTS"), ("CLUSTER", "SETSLOT", 151, "NODE", ME),
                 ("CLUSTER", "SETSLOT", 152, "NODE", OTHER), ("CLUSTER", "SLOTS"), ("GET", "bar"),
                 ("CLUSTER", "BUMPEPOCH"), ("CLUSTER", "SET-CONFIG-EPOCH", 10)):
        same(pair, *args)
    for c in (ours, ref):
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", 153, 200)
        c.execute_command("CLUSTER", "SETSLOT", 152, "NODE", ME)
        c.execute_command("CLUSTER", "SETSLOT", 151, "NODE", ME)
    same(pair, "CLUSTER", "SLOTS")


def test_cluster_down_replies_match_redis(start_server, tmp_path):
    servers = []
    for name, binary in (("ours", SERVER), ("ref", REDIS_SERVER)):
        s, _ = start_cluster_node(start_server, tmp_path, name, binary)
        servers.append((s.client(), s))
    pair = servers
    same(pair, "CLUSTER", "INFO")                       # fresh: fail, nothing assigned
    same(pair, "SET", "foo", 1)                         # not served
    same(pair, "CLUSTER", "ADDSLOTSRANGE", 0, 8000)
    same(pair, "SET", "bar", 1)                         # served slot, cluster down
    same(pair, "GET", "bar")
    same(pair, "CONFIG", "SET", "cluster-allow-reads-when-down", "yes")
    same(pair, "GET", "bar")
    same(pair, "SET", "bar", 1)
    same(pair, "CONFIG", "SET", "cluster-require-full-coverage", "no")
    for c, _ in pair:
        wait_state(c)
    same(pair, "SET", "bar", 1)
    same(pair, "GET", "bar")
    same(pair, "CLUSTER", "COUNTKEYSINSLOT", 5061)
    same(pair, "CLUSTER", "RESET")                      # a master with keys
    same(pair, "CLUSTER", "FLUSHSLOTS")
    same(pair, "FLUSHALL")
    same(pair, "CLUSTER", "FLUSHSLOTS")
    same(pair, "CLUSTER", "SLOTS")


def test_cluster_disabled_matches_redis(server, redis_ref):
    pair = [(server.client(), server), (redis_ref.client(), redis_ref)]
    for args in (("CLUSTER", "INFO"), ("CLUSTER", "KEYSLOT", "x"), ("READONLY",), ("READWRITE",), ("ASKING",),
                 ("CLUSTER", "HELP")):
        same(pair, *args)
    assert server.client().info("cluster") == {"cluster_enabled": 0}


def test_config_directives_match_redis(start_server, tmp_path):
    servers = []
    for name, binary in (("ours", SERVER), ("ref", REDIS_SERVER)):
        s, _ = start_cluster_node(start_server, tmp_path, name, binary)
        servers.append((s.client(), s))
    pair = servers
    (ours, so), (ref, sr) = pair
    mine, theirs = ours.config_get("cluster*"), ref.config_get("cluster*")
    for name in ("cluster-config-file", "cluster-port"):
        mine.pop(name), theirs.pop(name)
    assert mine == theirs
    for name, value in (("cluster-enabled", "no"), ("cluster-port", "5"), ("cluster-config-file", "x"),
                        ("cluster-node-timeout", "5000"), ("cluster-announce-ip", "10.0.0.1"),
                        ("cluster-link-sendbuf-limit", "1mb"), ("cluster-preferred-endpoint-type", "hostname"),
                        ("cluster-preferred-endpoint-type", "bogus"), ("cluster-slave-validity-factor", "3"),
                        ("cluster-migration-barrier", "-1")):
        same(pair, "CONFIG", "SET", name, value)
    a, b = ours.config_get("cluster*"), ref.config_get("cluster*")
    for name in ("cluster-config-file", "cluster-port"):
        a.pop(name), b.pop(name)
    assert a == b
    # Redirections name the endpoint cluster-preferred-endpoint-type asks for.
    for c in (ours, ref):
        c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        c.config_set("cluster-require-full-coverage", "no")
    same(pair, "CONFIG", "SET", "cluster-preferred-endpoint-type", "unknown-endpoint")
    same(pair, "CLUSTER", "SLOTS")
    same(pair, "CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname")
    same(pair, "CONFIG", "SET", "cluster-announce-hostname", "me.example")
    same(pair, "CLUSTER", "SLOTS")


def test_config_rewrite_keeps_cluster_settings(start_server, tmp_path):
    conf = "cluster-enabled yes\ncluster-config-file %s\ncluster-port %d\n" % (tmp_path / "n.conf", free_port())
    s = start_server(config_text=conf)
    c = s.client()
    c.config_set("cluster-node-timeout", "4321")
    c.config_set("cluster-announce-hostname", "node-a.example")
    c.config_set("cluster-require-full-coverage", "no")
    c.config_rewrite()
    text = open(os.path.join(s.dir, "test.conf")).read()
    assert "cluster-node-timeout 4321" in text
    assert "cluster-announce-hostname node-a.example" in text
    assert "cluster-require-full-coverage no" in text
    assert "cluster-enabled yes" in text


def test_nodes_conf_survives_restart(start_server, tmp_path):
    s, path = start_cluster_node(start_server, tmp_path, "n", SERVER)
    c = s.client()
    myid = c.execute_command("CLUSTER", "MYID")
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 99, 200, 16383)
    c.execute_command("CLUSTER", "SET-CONFIG-EPOCH", 7)
    c.execute_command("CLUSTER", "SETSLOT", 300, "MIGRATING", myid)
    assert "[300->-%s]" % myid in path.read_text()
    c.execute_command("CLUSTER", "SAVECONFIG")
    before = c.execute_command("CLUSTER", "NODES")
    s.stop()
    s2 = start_server(args=["--cluster-enabled", "yes", "--cluster-config-file", str(path), "--cluster-port",
                            str(s.cport)], port=s.port)
    c2 = s2.client()
    assert c2.execute_command("CLUSTER", "MYID") == myid
    assert c2.execute_command("CLUSTER", "NODES") == before
    assert "cluster_current_epoch:7" in c2.execute_command("CLUSTER", "INFO")
    # No temp file left behind.
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_nodes_conf_is_readable_by_redis(start_server, tmp_path):
    s, path = start_cluster_node(start_server, tmp_path, "n", SERVER)
    c = s.client()
    myid = c.execute_command("CLUSTER", "MYID")
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 5460)
    c.execute_command("CLUSTER", "BUMPEPOCH")
    c.execute_command("CLUSTER", "SAVECONFIG")
    s.stop()
    r = start_server(args=["--cluster-enabled", "yes", "--cluster-config-file", str(path), "--cluster-port",
                           str(free_port())], binary=REDIS_SERVER)
    rc = r.client()
    assert rc.execute_command("CLUSTER", "MYID") == myid
    me = rc.execute_command("CLUSTER", "NODES").split()
    assert me[0] == myid and me[6] == "1" and me[8] == "0-5460"


def test_second_process_on_same_nodes_conf_refused(start_server, tmp_path):
    s, path = start_cluster_node(start_server, tmp_path, "n", SERVER)
    out = subprocess.run([SERVER, "--port", str(free_port()), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                          "--cluster-port", str(free_port()), "--cluster-config-file", str(path)],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    assert "is already used by a different Redis Cluster node" in out.stdout + out.stderr
    assert s.client().ping()


@pytest.mark.parametrize("bad", [
    "zzz 127.0.0.1:1@2 myself,master - 0 0 0 connected\n",                       # not an id
    ("%s 127.0.0.1:1@2 myself,master - 0 0 0 connected 0-99999\n" % ME),       # slot out of range
    ("%s 127.0.0.1:1@2 myself,bogus - 0 0 0 connected\n" % ME),                 # unknown flag
    ("%s 127.0.0.1:1 myself,master - 0 0 0 connected\n" % ME),                  # no bus port
    ("%s 127.0.0.1:1@2 myself,master - 0 0\n" % ME),                            # too few fields
    ("%s 127.0.0.1:1@2 master - 0 0 0 connected\n" % ME),                       # no myself
    ("%s 127.0.0.1:1@2 myself,master - 0 0 0 connected 5\n"
     "%s 127.0.0.1:3@4 master - 0 0 0 connected 5\n" % (ME, OTHER)),           # one slot, two owners
])
def test_corrupt_nodes_conf_stops_start(tmp_path, bad):
    path = tmp_path / "nodes.conf"
    path.write_text("vars currentEpoch 0 lastVoteEpoch 0\n" + bad if "too" in bad else bad)
    out = subprocess.run([SERVER, "--port", str(free_port()), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                          "--cluster-port", str(free_port()), "--cluster-config-file", str(path)],
                         capture_output=True, text=True, timeout=10)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "Unrecoverable error" in text and str(path) in text


def test_corrupt_line_is_named(tmp_path):
    path = tmp_path / "nodes.conf"
    path.write_text("%s 127.0.0.1:1@2 myself,master - 0 0 0 connected 0-10\n"
                    "this line is wrong\nvars currentEpoch 0 lastVoteEpoch 0\n" % ME)
    out = subprocess.run([SERVER, "--port", str(free_port()), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                          "--cluster-port", str(free_port()), "--cluster-config-file", str(path)],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    assert "line 2" in out.stdout + out.stderr


def test_slot_counts_follow_the_keyspace(start_server, tmp_path):
    s, _ = start_cluster_node(start_server, tmp_path, "n", SERVER, extra=["--cluster-require-full-coverage", "no"])
    c = s.client()
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    wait_state(c)
    keys = ["{t}%d" % i for i in range(300)] + ["k%d" % i for i in range(300)]
    for k in keys:
        c.set(k, "v")
    slot_t = c.execute_command("CLUSTER", "KEYSLOT", "{t}")
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot_t) == 300
    got = c.execute_command("CLUSTER", "GETKEYSINSLOT", slot_t, 1000)
    assert sorted(got) == sorted(keys[:300])
    assert len(c.execute_command("CLUSTER", "GETKEYSINSLOT", slot_t, 7)) == 7
    c.delete(*keys[:100])
    c.pexpire(keys[100], 1)
    c.rename(keys[101], "{t}renamed")
    time.sleep(0.05)
    c.get(keys[100])                           # lazy expiry
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot_t) == 199
    total = sum(c.execute_command("CLUSTER", "COUNTKEYSINSLOT", c.execute_command("CLUSTER", "KEYSLOT", k))
                for k in set(keys[300:]))
    assert total >= 300
    c.flushall()
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot_t) == 0
    # Keys loaded from an RDB are counted too.
    for k in keys:
        c.set(k, "v")
    c.save()
    c.execute_command("DEBUG", "RELOAD")
    assert c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot_t) == 300


def test_blocked_client_redirected_when_its_slot_moves_as_redis(pair):
    got = []
    for c, s in pair:
        c.delete("bar")
        blocked = redis.Redis(port=s.port, decode_responses=True)
        conn = blocked.connection_pool.get_connection("x")
        conn.send_command("BLPOP", "bar", 0)
        time.sleep(0.2)                                  # it is blocked now
        c.execute_command("CLUSTER", "SETSLOT", 5061, "NODE", OTHER)
        try:
            got.append(normalize(conn.read_response(), s))
        except redis.ResponseError as e:
            got.append("ERR:" + normalize(str(e), s))
        blocked.connection_pool.release(conn)
        blocked.close()
        c.execute_command("CLUSTER", "SETSLOT", 5061, "NODE", ME)
    assert got[0] == got[1] and got[0].startswith("ERR:MOVED 5061 127.0.0.1:"), got
