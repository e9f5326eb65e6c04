"""The cluster bus (issue 45, layer 3): clusters made by Debian's
redis-cli 7.0.15 (`--cluster create`, `--cluster check`) from our nodes
alone and mixed with Debian's redis-server 7.0.15, failure detection, and
bad input on the bus port.

Every node gets its own free port and bus port (--cluster-port), on
127.0.0.1; each is stopped by its pid.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_bus.py"""
import os
import signal
import socket
import struct
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, free_port

HEADER_LEN = 2256


def start_node(start_server, binary=SERVER, timeout_ms=5000):
    cport = free_port()
    s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-node-timeout",
                           str(timeout_ms), "--cluster-config-file", "nodes-%d.conf" % cport], binary=binary)
    s.cport = cport
    return s


def create(nodes, replicas=0):
    out = subprocess.run(["redis-cli", "--cluster", "create"] + ["127.0.0.1:%d" % n.port for n in nodes]
                         + ["--cluster-replicas", str(replicas), "--cluster-yes"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def check(node):
    return subprocess.run(["redis-cli", "--cluster", "check", "127.0.0.1:%d" % node.port],
                          capture_output=True, text=True, timeout=30)


def wait_until(pred, timeout=10.0, what="condition", show=None):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(what + " never held" + ("\n" + show() if show else ""))


def slot_view(node):
    """Each node's view: id -> (flags without myself, epoch, slots).  A
    replica's epoch column is whatever epoch that node last heard for it
    (its own before it became a replica, or its master's), in Redis too:
    its master's id stands there instead."""
    view = {}
    for line in node.client().execute_command("CLUSTER", "NODES").splitlines():
        f = line.split()
        flags = ",".join(x for x in f[2].split(",") if x != "myself")
        view[f[0]] = (flags, f[3] if "slave" in flags else f[6], tuple(f[8:]))
    return view


def all_agree(nodes):
    views = [slot_view(n) for n in nodes]
    return all(v == views[0] for v in views) and len(views[0]) == len(nodes)


def states_ok(nodes):
    return all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok") for n in nodes)


def test_create_three_masters_of_ours(start_server):
    nodes = [start_node(start_server) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement")
    out = check(nodes[1])
    assert "[OK] All nodes agree about slots configuration." in out.stdout
    assert "[OK] All 16384 slots covered." in out.stdout
    epochs = sorted(v[1] for v in slot_view(nodes[0]).values())
    assert epochs == ["1", "2", "3"]
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    for i in range(2000):
        rc.set("key:%d" % i, i)
    assert all(rc.get("key:%d" % i) == str(i) for i in range(2000))
    counts = [n.client().dbsize() for n in nodes]
    assert sum(counts) == 2000 and all(c > 500 for c in counts)
    rc.close()


@pytest.mark.slow
def test_mixed_cluster_with_redis_agrees(start_server):
    nodes = [start_node(start_server, REDIS_SERVER), start_node(start_server), start_node(start_server)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement with redis-server")
    for n in nodes:
        info = n.client().execute_command("CLUSTER", "INFO")
        assert "cluster_current_epoch:3" in info and "cluster_known_nodes:3" in info
    assert "[OK] All nodes agree" in check(nodes[2]).stdout
    # A key written through one node is read through another, whoever owns it.
    out = subprocess.run(["redis-cli", "-c", "-p", str(nodes[1].port), "set", "foo", "bar"], capture_output=True,
                         text=True, timeout=10)
    assert out.stdout.strip() == "OK"
    out = subprocess.run(["redis-cli", "-c", "-p", str(nodes[0].port), "get", "foo"], capture_output=True,
                         text=True, timeout=10)
    assert out.stdout.strip() == "bar"


def test_a_killed_master_is_marked_failing(start_server):
    nodes = [start_node(start_server, timeout_ms=600) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement")
    victim = nodes[2]
    vid = victim.client().execute_command("CLUSTER", "MYID")
    victim.kill()

    def failed_everywhere():
        return all("fail" in slot_view(n)[vid][0].split(",") for n in nodes[:2])
    wait_until(failed_everywhere, timeout=8, what="FAIL on both survivors")
    # Its slots have no live node: the cluster is down for its keys.
    wait_until(lambda: not states_ok(nodes[:2]), timeout=3, what="cluster_state:fail")


@pytest.mark.slow
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER])
def test_a_failed_master_that_comes_back_with_its_slots_is_cleared(start_server, binary):
    # Nobody took its slots over (no replica): once it answers again, FAIL
    # is lifted after twice the node timeout from when it was set, as in
    # Redis (clearNodeFailureIfNeeded), and the cluster is ok again.
    nodes = [start_node(start_server, binary=binary, timeout_ms=600) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement")
    victim = nodes[2]
    vid = victim.client().execute_command("CLUSTER", "MYID")
    port = victim.port
    victim.kill()
    wait_until(lambda: all("fail" in slot_view(n)[vid][0].split(",") for n in nodes[:2]), timeout=8,
               what="FAIL on both survivors")
    back = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(victim.cport), "--cluster-node-timeout",
                              "600", "--cluster-config-file", os.path.join(victim.dir, "nodes-%d.conf" % victim.cport)],
                        port=port, binary=binary)
    everyone = nodes[:2] + [back]
    wait_until(lambda: all_agree(everyone) and states_ok(everyone), timeout=10, what="FAIL lifted everywhere",
               show=lambda: "\n".join(n.client().execute_command("CLUSTER", "NODES") for n in everyone))
    assert slot_view(nodes[0])[vid][0] == "master"


def bus_send(port, data, wait=0.3, read=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(data)
    if not read:
        s.close()
        return None
    time.sleep(wait)
    s.settimeout(0.5)
    try:
        got = s.recv(65536)
    except socket.timeout:
        got = None
    s.close()
    return got


def ping_header(totlen, msgtype=0, count=0, sender=b"c" * 40):
    h = bytearray(HEADER_LEN)
    h[0:4] = b"RCmb"
    struct.pack_into("!IHHHH", h, 4, totlen, 1, 1234, msgtype, count)
    h[40:80] = sender
    struct.pack_into("!H", h, 2248, 11234)
    return bytes(h)


def test_bad_input_on_the_bus_port(start_server):
    node = start_node(start_server)
    c = node.client()
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    before = c.execute_command("CLUSTER", "NODES")
    # Not a cluster message: the link is closed (recv sees the end).
    assert bus_send(node.cport, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n") == b""
    # A header that claims 100 MB: closed before anything is buffered.
    assert bus_send(node.cport, b"RCmb" + struct.pack("!I", 100 << 20) + b"\0" * 64) == b""
    # Lying lengths: a PING whose gossip count overruns it is ignored (no PONG).
    assert bus_send(node.cport, ping_header(HEADER_LEN, count=50)) is None
    # A truncated message just waits for the rest.
    assert bus_send(node.cport, ping_header(HEADER_LEN + 104, count=1)[:1000]) is None
    # A PING with our own name is not a peer: closed.
    me = c.execute_command("CLUSTER", "MYID").encode()
    assert bus_send(node.cport, ping_header(HEADER_LEN, sender=me)) == b""
    # A well-formed PING from an unknown node gets a PONG and changes nothing.
    pong = bus_send(node.cport, ping_header(HEADER_LEN))
    assert pong[:4] == b"RCmb" and struct.unpack_from("!H", pong, 12)[0] == 1
    assert pong[40:80] == me
    assert c.ping()
    # (A PING teaches a node its own address, as in Redis: the rest stays.)
    nodes_now = lambda: c.execute_command("CLUSTER", "NODES").replace("127.0.0.1:", ":")  # noqa: E731
    assert nodes_now() == before
    # Random bytes after a valid signature, many times: still alive.
    import random
    rnd = random.Random(45)
    for _ in range(50):
        body = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(0, 3000)))
        bus_send(node.cport, b"RCmb" + struct.pack("!I", 8 + len(body)) + body, read=False)
    assert c.ping()
    assert nodes_now() == before


def test_meet_validates_the_address(start_server):
    node = start_node(start_server)
    c = node.client()
    with pytest.raises(redis.ResponseError, match="Invalid node address specified: 1.2.3.x:5"):
        c.execute_command("CLUSTER", "MEET", "1.2.3.x", 5)
    with pytest.raises(redis.ResponseError, match="Invalid TCP base port specified: x"):
        c.execute_command("CLUSTER", "MEET", "127.0.0.1", "x")
    # A MEET to nothing listening stays a handshake, then goes.
    c.execute_command("CLUSTER", "MEET", "127.0.0.1", free_port(), free_port())
    assert c.execute_command("CLUSTER", "INFO").count("cluster_known_nodes:2") == 1


@pytest.mark.slow
def test_reshard_moves_keys_and_slots(start_server):
    nodes = [start_node(start_server) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement")
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    for i in range(500):
        rc.set("k%d" % i, i)
    src, dst = (n.client().execute_command("CLUSTER", "MYID") for n in nodes[:2])
    before = nodes[0].client().dbsize()
    out = subprocess.run(["redis-cli", "--cluster", "reshard", "127.0.0.1:%d" % nodes[0].port, "--cluster-from", src,
                          "--cluster-to", dst, "--cluster-slots", "100", "--cluster-yes"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    wait_until(lambda: all_agree(nodes), what="agreement after the reshard")
    view = slot_view(nodes[2])
    assert view[dst][2][0] == "0-99" and view[src][2] == ("100-5460",)
    assert nodes[0].client().dbsize() < before
    assert "[OK] All nodes agree" in check(nodes[2]).stdout
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=nodes[2].port, decode_responses=True)
    assert all(rc.get("k%d" % i) == str(i) for i in range(500))
    assert sum(n.client().dbsize() for n in nodes) == 500


@pytest.mark.slow
def test_six_nodes_with_replicas(start_server):
    nodes = [start_node(start_server) for _ in range(6)]
    create(nodes, replicas=1)

    def settled():
        views = [slot_view(n) for n in nodes]
        return all(v == views[0] for v in views) and len(views[0]) == 6 and states_ok(nodes)
    wait_until(settled, timeout=15, what="six nodes agreeing",
               show=lambda: "\n".join(n.client().execute_command("CLUSTER", "NODES") for n in nodes))
    out = check(nodes[0]).stdout
    assert "[OK] All nodes agree about slots configuration." in out and out.count("1 additional replica(s)") == 3
    roles = sorted(f[0].split(",")[0] for f in slot_view(nodes[0]).values())
    assert roles == ["master"] * 3 + ["slave"] * 3
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    for i in range(1000):
        rc.set("r%d" % i, i)
    # Every replica catches up with its master (replication is PSYNC's).
    masters = {n.client().execute_command("CLUSTER", "MYID"): n for n in nodes}

    def replicas_caught_up():
        for n in nodes:
            me = [line for line in n.client().execute_command("CLUSTER", "NODES").splitlines() if "myself" in line][0]
            f = me.split()
            if "slave" in f[2] and n.client().dbsize() != masters[f[3]].client().dbsize():
                return False
        return True
    wait_until(replicas_caught_up, timeout=10, what="replicas in sync")
    with pytest.raises(redis.ResponseError, match="REPLICAOF not allowed in cluster mode."):
        nodes[0].client().execute_command("REPLICAOF", "127.0.0.1", nodes[1].port)


@pytest.mark.slow
def test_replica_takes_over_a_killed_master_which_rejoins_as_replica(start_server):
    nodes = []
    for _ in range(6):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-node-timeout",
                               "1000", "--cluster-config-file", "nodes-%d.conf" % cport,
                               "--repl-diskless-sync-delay", "0"])
        s.cport = cport
        nodes.append(s)
    create(nodes, replicas=1)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), timeout=15, what="six nodes agreeing",
               show=lambda: "\n".join(n.client().execute_command("CLUSTER", "NODES") for n in nodes))
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=nodes[0].port, decode_responses=True)
    slot = rc.keyslot("foo")
    view = slot_view(nodes[0])
    owner_id = [i for i, v in view.items() if "master" in v[0] and any(
        int(r.split("-")[0]) <= slot <= int(r.split("-")[-1]) for r in v[2])][0]
    owner = [n for n in nodes if n.client().execute_command("CLUSTER", "MYID") == owner_id][0]
    for i in range(100):
        rc.set("{foo}%d" % i, i)
    assert owner.client().execute_command("WAIT", 1, 5000) == 1
    port = owner.port
    owner.kill()
    t0 = time.monotonic()
    survivors = [n for n in nodes if n is not owner]

    def promoted():
        v = slot_view(survivors[0])
        return v[owner_id][0].split(",")[-1] == "fail" and states_ok(survivors)
    wait_until(promoted, timeout=1 + 2 + 5, what="a replica promoted")
    assert time.monotonic() - t0 < 1 + 2 + 3        # node timeout + election, with room for a loaded machine
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=survivors[0].port, decode_responses=True)
    assert all(rc.get("{foo}%d" % i) == str(i) for i in range(100))
    # The old master comes back (same nodes.conf) and follows the new one.
    back = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(owner.cport), "--cluster-node-timeout",
                              "1000", "--cluster-config-file", os.path.join(owner.dir, "nodes-%d.conf" % owner.cport)],
                        port=port)
    wait_until(lambda: "slave" in [line for line in back.client().execute_command("CLUSTER", "NODES").splitlines()
                                   if "myself" in line][0], timeout=10, what="the old master a replica")
    assert "[OK] All nodes agree" in check(survivors[0]).stdout
    # TAKEOVER gives it its slots back at once, under a new epoch.
    assert back.client().execute_command("CLUSTER", "FAILOVER", "TAKEOVER") == "OK"
    everyone = survivors + [back]
    wait_until(lambda: all_agree(everyone) and slot_view(survivors[0])[owner_id][0] == "master", timeout=20,
               what="the takeover seen by all",
               show=lambda: "\n".join(n.client().execute_command("CLUSTER", "NODES") for n in everyone))
    assert "[OK] All nodes agree" in check(back).stdout


@pytest.mark.slow
def test_takeover_seen_by_a_node_that_missed_the_rejoin(start_server):
    # A replica that is stopped while the killed master comes back and
    # takes its slots back (TAKEOVER) still has it FAIL when it wakes up,
    # now as a master with slots: the FAIL is lifted once it answers (its
    # FAIL older than twice the node timeout, as in Redis) and every view
    # converges.  It used to stay FAIL there for good.
    nodes = []
    for _ in range(6):
        cport = free_port()
        s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-node-timeout",
                               "1000", "--cluster-config-file", "nodes-%d.conf" % cport,
                               "--repl-diskless-sync-delay", "0"])
        s.cport = cport
        nodes.append(s)
    create(nodes, replicas=1)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), timeout=15, what="six nodes agreeing")
    ids = {n.client().execute_command("CLUSTER", "MYID"): n for n in nodes}
    view = slot_view(nodes[0])
    owner_id = [i for i, v in view.items() if v[0] == "master"][0]
    owner = ids[owner_id]
    sleeper = [ids[i] for i, v in view.items() if v[0] == "slave" and v[1] != owner_id][0]
    owner.kill()
    survivors = [n for n in nodes if n is not owner]
    wait_until(lambda: slot_view(survivors[0])[owner_id][0] == "master,fail" and states_ok(survivors),
               timeout=10, what="a replica promoted")
    wait_until(lambda: slot_view(sleeper)[owner_id][0] == "master,fail", timeout=5, what="FAIL on the sleeper")
    os.kill(sleeper.pid, signal.SIGSTOP)
    try:
        back = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(owner.cport),
                                  "--cluster-node-timeout", "1000", "--cluster-config-file",
                                  os.path.join(owner.dir, "nodes-%d.conf" % owner.cport)], port=owner.port)
        wait_until(lambda: slot_view(back)[owner_id][0] == "slave", timeout=10, what="the old master a replica")
        assert back.client().execute_command("CLUSTER", "FAILOVER", "TAKEOVER") == "OK"
        awake = [n for n in survivors if n is not sleeper] + [back]
        wait_until(lambda: all(slot_view(n)[owner_id][0] == "master" for n in awake), timeout=10,
                   what="the takeover seen by the nodes awake",
                   show=lambda: "\n\n".join(n.client().execute_command("CLUSTER", "NODES") for n in awake))
    finally:
        os.kill(sleeper.pid, signal.SIGCONT)
    everyone = survivors + [back]
    wait_until(lambda: all_agree(everyone) and slot_view(sleeper)[owner_id][0] == "master", timeout=20,
               what="the takeover seen by all",
               show=lambda: "\n".join(n.client().execute_command("CLUSTER", "NODES") for n in everyone))


@pytest.mark.slow
def test_publish_reaches_every_node(start_server):
    nodes = [start_node(start_server, REDIS_SERVER), start_node(start_server), start_node(start_server)]
    create(nodes)
    wait_until(lambda: all_agree(nodes), what="agreement")
    subs = []
    for n in nodes:
        p = n.client().pubsub()
        p.subscribe("news")
        assert p.get_message(timeout=2)["type"] == "subscribe"
        subs.append(p)
    nodes[1].client().publish("news", "from ours")
    nodes[0].client().publish("news", "from redis")
    for p in subs:
        got = []
        t0 = time.monotonic()
        while len(got) < 2 and time.monotonic() - t0 < 5:
            m = p.get_message(timeout=0.5)
            if m and m["type"] == "message":
                got.append(m["data"])
        assert sorted(got) == ["from ours", "from redis"]
        p.close()



@pytest.mark.slow
def test_add_node_and_del_node(start_server):
    nodes = [start_node(start_server) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all_agree(nodes), what="agreement")
    extra = start_node(start_server)
    out = subprocess.run(["redis-cli", "--cluster", "add-node", "127.0.0.1:%d" % extra.port,
                          "127.0.0.1:%d" % nodes[0].port], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    everyone = nodes + [extra]
    wait_until(lambda: all_agree(everyone), what="the new node known to all")
    xid = extra.client().execute_command("CLUSTER", "MYID")
    out = subprocess.run(["redis-cli", "--cluster", "del-node", "127.0.0.1:%d" % nodes[0].port, xid],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    time.sleep(1.5)    # gossip rounds: a forgotten node must not come back
    for n in nodes:
        assert xid not in n.client().execute_command("CLUSTER", "NODES")
    assert all_agree(nodes)


def free_run(n):
    """A base port with n free ports after it, each below 55535 (bus ports +10000)."""
    for _ in range(50):
        base = free_port() % 40000 + 10000
        socks = []
        try:
            for i in range(n):
                for p in (base + i, base + i + 10000):
                    s = socket.socket()
                    s.bind(("127.0.0.1", p))
                    socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no run of free ports")


@pytest.mark.slow
def test_cluster_up_cluster_mode(tmp_path):
    script = os.path.join(os.path.dirname(__file__), "..", "..", "utils", "tools", "cluster-up")
    base = free_run(6)
    env = dict(os.environ, CLUSTER_DIR=str(tmp_path / "c"), CL_BASE_PORT=str(base), RL_SERVER=SERVER)
    out = subprocess.run([script, "cluster", "3", "1"], env=env, capture_output=True, text=True, timeout=120)
    try:
        assert out.returncode == 0, out.stdout + out.stderr
        assert "3 masters and 3 replicas" in out.stdout
        rc = redis.cluster.RedisCluster(host="127.0.0.1", port=base, decode_responses=True)
        rc.set("x", "y")
        assert rc.get("x") == "y"
        last = redis.Redis(port=base + 5, decode_responses=True)
        wait_until(lambda: "cluster_known_nodes:6" in last.execute_command("CLUSTER", "INFO"), what="six known")
        assert "cluster_state:ok" in last.execute_command("CLUSTER", "INFO")
    finally:
        subprocess.run([script, "stop"], env=env, capture_output=True, timeout=60)
    assert not list((tmp_path / "c").glob("*.pid"))
