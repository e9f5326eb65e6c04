"""Redis Cluster acceptance (issue 45): the issue's named scenarios, end
to end, with Debian's redis-cli 7.0.15 and redis-py's RedisCluster.

1. Six nodes of ours made by `redis-cli --cluster create ... --cluster-replicas
   1`, checked clean by `redis-cli --cluster check`; 20,000 keys written
   and read back through `redis-cli -c` (its MOVED redirections).
2. `kill -9` of a master under a write load whose every write is followed
   by `WAIT 1` on the master that took it: every write WAIT acknowledged
   is on the promoted replica, which took over within the node timeout
   + 2 s; the old master, restarted on its nodes.conf and port, follows it.
3. A mixed cluster (ours and Debian's redis-server 7.0.15, masters and
   replicas of both): it converges, serves, fails over both ways, and a
   `redis-cli --cluster reshard` of 1,000 slots between the two kinds
   under a write load loses no key, the writer meeting no error.

Every node is on 127.0.0.1 with its own free port and bus port; each is
stopped (or killed) by the pid this test started.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_acceptance.py"""
import os
import subprocess
import threading
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import REDIS_SERVER, SERVER, free_port
from test_cluster_bus import check, create, wait_until
from test_cluster_failover import add_replica, converged, myid, nodes_lines, states_ok

pytestmark = pytest.mark.slow

NODE_TIMEOUT = 3000


def node_args(cport, conf=None):
    return ["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-node-timeout", str(NODE_TIMEOUT),
            "--cluster-config-file", conf or "nodes-%d.conf" % cport, "--repl-diskless-sync-delay", "0"]


def failover_log(node):
    """The lines of node's log about failure detection and its election."""
    words = ("failing", "FAIL", "election", "Failover", "failover")
    return [x for x in node.read_log().splitlines() if any(w in x for w in words)][-12:]


def start_node(start_server, binary=SERVER):
    cport = free_port()
    s = start_server(args=node_args(cport), binary=binary)
    s.cport = cport
    return s


def show(nodes):
    return lambda: "\n\n".join("%d:\n%s" % (n.port, "\n".join(nodes_lines(n))) for n in nodes)


def me_line(node):
    return [line for line in nodes_lines(node) if "myself" in line][0].split()


def master_id_of(node):
    """node's master's id in its own view, "-" when it is a master."""
    f = me_line(node)
    return f[3] if "slave" in f[2] else "-"


def shards_view(node):
    """CLUSTER SHARDS without what moves on its own (offsets): a sorted
    list of (slots, sorted (id, role, health))."""
    out = []
    for shard in node.client().execute_command("CLUSTER", "SHARDS"):
        shard = dict(zip(shard[::2], shard[1::2]))
        members = []
        for n in shard["nodes"]:
            n = dict(zip(n[::2], n[1::2]))
            members.append((n["id"], n["role"], n["health"]))
        out.append((tuple(shard["slots"]), tuple(sorted(members))))
    return sorted(out)


def same_shards(nodes):
    views = [shards_view(n) for n in nodes]
    return all(v == views[0] for v in views)


def cli_c(port, commands, timeout=180):
    """Commands piped into `redis-cli -c` (one a line): its replies, and
    how many times it said it followed a redirection."""
    out = subprocess.run(["redis-cli", "-c", "-p", str(port)], input="".join(c + "\n" for c in commands),
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    replies = [x for x in lines if not x.startswith("-> Redirected to slot ")]
    return replies, len(lines) - len(replies)


def test_six_nodes_of_ours_created_checked_and_fed_through_redis_cli(start_server):
    nodes = [start_node(start_server) for _ in range(6)]
    create(nodes, replicas=1)
    wait_until(lambda: converged(nodes) and states_ok(nodes), timeout=20, what="six nodes agreeing",
               show=show(nodes))
    out = check(nodes[3])
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[ERR]" not in out.stdout and "[WARNING]" not in out.stdout, out.stdout
    assert "[OK] All nodes agree about slots configuration." in out.stdout
    assert "[OK] All 16384 slots covered." in out.stdout
    assert out.stdout.count("1 additional replica(s)") == 3
    # 20,000 keys through one redis-cli -c on one master, in 4 batches:
    # two thirds of them are redirected to the other masters.
    first = [n for n in nodes if master_id_of(n) == "-"][0]
    redirected = 0
    for b in range(4):
        got, n = cli_c(first.port, ["SET acc:%d v%d" % (i, i) for i in range(b * 5000, (b + 1) * 5000)])
        assert got == ["OK"] * 5000, [g for g in got if g != "OK"][:5]
        redirected += n
    assert redirected > 5000, redirected
    masters = [n for n in nodes if master_id_of(n) == "-"]
    counts = [m.client().dbsize() for m in masters]
    assert sum(counts) == 20000 and all(c > 6000 for c in counts), counts
    # Read back through redis-cli -c from another node, a replica (it
    # redirects every read to the masters) ...
    replica = [n for n in nodes if master_id_of(n) != "-"][0]
    got, redirected = [], 0
    for b in range(4):
        part, n = cli_c(replica.port, ["GET acc:%d" % i for i in range(b * 5000, (b + 1) * 5000)])
        got += part
        redirected += n
    assert redirected > 5000, redirected
    assert got == ["v%d" % i for i in range(20000)], [g for g in got if not g.startswith("v")][:5]
    # ... and through a cluster client.
    rc = RedisCluster(host="127.0.0.1", port=replica.port, decode_responses=True)
    for b in range(0, 20000, 1000):
        keys = ["acc:%d" % i for i in range(b, b + 1000)]
        assert rc.mget_nonatomic(keys) == ["v%d" % i for i in range(b, b + 1000)]
    rc.close()
    # The replicas have it all too (replication under cluster mode).
    wait_until(lambda: sum(n.client().dbsize() for n in nodes) == 40000, timeout=20, what="replicas in sync")


class WaitedWriter(threading.Thread):
    """Unique keys written by a RedisCluster, each followed by WAIT 1 on
    the master that took it: `acked` holds the writes WAIT said a replica
    has; `errors` every exception met (the write's fate then unknown)."""

    def __init__(self, port, prefix, wait_ms=300):
        super().__init__(daemon=True)
        self.rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=5)
        self.prefix, self.wait_ms = prefix, wait_ms
        self.acked, self.unacked, self.errors = {}, 0, []
        self.stop = threading.Event()
        self.count = 0

    def run(self):
        i = 0
        while not self.stop.is_set() and i < 200000:
            key = "%s:%d" % (self.prefix, i)
            i += 1
            try:
                self.rc.set(key, i)
                node = self.rc.get_node_from_key(key)
                n = self.rc.execute_command("WAIT", 1, self.wait_ms, target_nodes=node)
                if n >= 1:
                    self.acked[key] = (str(i), node.port)
                else:
                    self.unacked += 1
            except Exception as e:   # noqa: BLE001  (recorded, then on)
                self.errors.append(repr(e))
                time.sleep(0.05)
            self.count += 1
        self.rc.close()


def test_kill_9_of_a_master_under_waited_writes(start_server):
    nodes = [start_node(start_server) for _ in range(6)]
    create(nodes, replicas=1)
    wait_until(lambda: converged(nodes) and states_ok(nodes), timeout=20, what="six nodes agreeing",
               show=show(nodes))
    victim = [n for n in nodes if master_id_of(n) == "-"][1]
    vid = myid(victim)
    heir = [n for n in nodes if master_id_of(n) == vid][0]
    hid = myid(heir)
    wait_until(lambda: heir.client().info("replication").get("master_link_status") == "up", timeout=10,
               what="the replica's link up")
    writer = WaitedWriter(nodes[0].port, "w")
    writer.start()
    try:
        wait_until(lambda: sum(1 for _, p in dict(writer.acked).values() if p == victim.port) >= 300, timeout=30,
                   what="waited writes on the victim")
        acked_before = dict(writer.acked)
        victim.kill()                  # SIGKILL to the pid this test started
        t0 = time.monotonic()
        wait_until(lambda: master_id_of(heir) == "-", timeout=NODE_TIMEOUT / 1000 + 10, what="the replica promoted",
                   show=show([n for n in nodes if n is not victim]))
        took = time.monotonic() - t0
        survivors = [n for n in nodes if n is not victim]
        wait_until(lambda: states_ok(survivors), timeout=10, what="cluster_state:ok again", show=show(survivors))
        n_after = writer.count
        # (The new master has no replica yet: WAIT takes its 300 ms there.)
        wait_until(lambda: writer.count > n_after + 100, timeout=30, what="writes going on after the failover",
                   show=lambda: "%d writes, errors %s" % (writer.count, writer.errors[-5:]))
    finally:
        writer.stop.set()
        writer.join(30)
    assert took < NODE_TIMEOUT / 1000 + 2, (took, failover_log(heir))
    assert not writer.is_alive()
    # Every write WAIT acknowledged before the kill is on the new master.
    on_victim = {k: v for k, (v, p) in acked_before.items() if p == victim.port}
    assert len(on_victim) >= 300
    hc = heir.client()
    pipe = hc.pipeline(transaction=False)
    for k in on_victim:
        pipe.get(k)
    assert pipe.execute() == list(on_victim.values())
    # ... and every acknowledged write at all, through the cluster.
    rc = RedisCluster(host="127.0.0.1", port=survivors[0].port, decode_responses=True)
    keys = list(writer.acked)
    for b in range(0, len(keys), 1000):
        assert rc.mget_nonatomic(keys[b:b + 1000]) == [writer.acked[k][0] for k in keys[b:b + 1000]]
    rc.close()
    # The old master, restarted on its own nodes.conf and port, follows
    # the new one.
    back = start_server(args=node_args(victim.cport, os.path.join(victim.dir, "nodes-%d.conf" % victim.cport)),
                        port=victim.port)
    wait_until(lambda: master_id_of(back) == hid, timeout=15, what="the old master a replica of the new",
               show=show([back] + survivors))
    everyone = survivors + [back]
    wait_until(lambda: converged(everyone) and states_ok(everyone), timeout=15, what="all six agreeing again",
               show=show(everyone))
    wait_until(lambda: back.client().info("replication").get("master_link_status") == "up", timeout=10,
               what="the old master synced")
    assert back.client().dbsize() == hc.dbsize()
    out = check(back)
    assert out.returncode == 0 and "[ERR]" not in out.stdout, out.stdout


class RedirectCount:
    """Counts the MOVED and ASK replies redis-py parses (its own retries
    handle them)."""

    def __init__(self, monkeypatch):
        self.moved = self.ask = 0
        for cls, attr in ((redis.exceptions.MovedError, "moved"), (redis.exceptions.AskError, "ask")):
            orig = cls.__init__

            def init(exc, resp, _orig=orig, _attr=attr):
                setattr(self, _attr, getattr(self, _attr) + 1)
                _orig(exc, resp)
            monkeypatch.setattr(cls, "__init__", init)


class Writer(threading.Thread):
    """Unique keys SET by a RedisCluster as fast as it goes; `done` the
    ones it said OK to, `errors` every exception it raised."""

    def __init__(self, port, prefix):
        super().__init__(daemon=True)
        self.rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True, socket_timeout=10)
        self.prefix = prefix
        self.done, self.errors = [], []
        self.stop = threading.Event()

    def run(self):
        i = 0
        while not self.stop.is_set() and i < 500000:
            key = "%s:%d" % (self.prefix, i)
            try:
                assert self.rc.set(key, i) is True
                self.done.append(key)
            except Exception as e:   # noqa: BLE001  (recorded)
                self.errors.append(repr(e))
                time.sleep(0.05)
            i += 1
        self.rc.close()


def check_keys(port, keys):
    rc = RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
    for b in range(0, len(keys), 1000):
        part = keys[b:b + 1000]
        got = rc.mget_nonatomic(part)
        missing = [k for k, v in zip(part, got) if v != k.rsplit(":", 1)[1]]
        assert not missing, (len(missing), missing[:5])
    rc.close()


def test_mixed_cluster_converges_reshards_and_fails_over_both_ways(start_server, monkeypatch):
    # Masters: ours, Redis, ours; each master's replica of the other kind.
    kinds = [SERVER, REDIS_SERVER, SERVER]
    masters = [start_node(start_server, k) for k in kinds]
    create(masters)
    wait_until(lambda: converged(masters) and states_ok(masters), timeout=15, what="three masters agreeing",
               show=show(masters))
    replicas = []
    for m, k in zip(masters, kinds):
        r = start_node(start_server, REDIS_SERVER if k == SERVER else SERVER)
        add_replica(r, m, masters[1])
        replicas.append(r)
    everyone = masters + replicas
    wait_until(lambda: converged(everyone) and states_ok(everyone) and same_shards(everyone), timeout=20,
               what="six mixed nodes agreeing", show=show(everyone))
    wait_until(lambda: all(r.client().info("replication").get("master_link_status") == "up" for r in replicas),
               timeout=10, what="replica links up")
    out = check(masters[1])
    assert out.returncode == 0 and "[ERR]" not in out.stdout and "[WARNING]" not in out.stdout, out.stdout
    shards = shards_view(replicas[0])
    assert len(shards) == 3 and all(len(members) == 2 for _, members in shards)
    # It serves: keys through one node of each kind.
    rc = RedisCluster(host="127.0.0.1", port=replicas[1].port, decode_responses=True)
    for i in range(3000):
        rc.set("pre:%d" % i, i)
    rc.close()
    check_keys(masters[0].port, ["pre:%d" % i for i in range(3000)])
    assert all(m.client().dbsize() > 800 for m in masters)

    # A reshard of 1,000 slots from the Redis master to one of ours, under
    # a write load that meets nothing but the redirects it follows.
    redirects = RedirectCount(monkeypatch)
    writer = Writer(masters[0].port, "rs")
    writer.start()
    src, dst = myid(masters[1]), myid(masters[2])
    try:
        wait_until(lambda: len(writer.done) > 500, timeout=10, what="the writer running")
        out = subprocess.run(["redis-cli", "--cluster", "reshard", "127.0.0.1:%d" % masters[0].port,
                              "--cluster-from", src, "--cluster-to", dst, "--cluster-slots", "1000",
                              "--cluster-yes"], capture_output=True, text=True, timeout=300)
        n = len(writer.done)
        wait_until(lambda: len(writer.done) > n + 500, timeout=10, what="the writer after the reshard")
    finally:
        writer.stop.set()
        writer.join(30)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr
    assert writer.errors == [], writer.errors[:10]
    assert redirects.ask + redirects.moved > 0, "the writer never met the moving slots"
    wait_until(lambda: converged(everyone) and same_shards(everyone), timeout=15, what="agreement after reshard",
               show=show(everyone))
    out = check(masters[0])
    assert out.returncode == 0 and "[ERR]" not in out.stdout and "[WARNING]" not in out.stdout, out.stdout
    moved_slots = [s for s, members in shards_view(masters[0]) if (dst, "master", "online") in members][0]
    assert sum(b - a + 1 for a, b in zip(moved_slots[::2], moved_slots[1::2])) == 5461 + 1000
    check_keys(masters[2].port, writer.done)
    check_keys(masters[2].port, ["pre:%d" % i for i in range(3000)])
    total = len(writer.done) + 3000
    wait_until(lambda: sum(m.client().dbsize() for m in masters) == total, timeout=5, what="every key once")

    # Our replica takes over a killed Redis master, then a Redis replica a
    # killed master of ours.
    alive = list(everyone)
    for victim, heir in ((masters[1], replicas[1]), (masters[0], replicas[0])):
        assert (victim.binary == REDIS_SERVER) != (heir.binary == REDIS_SERVER)
        vid, hid = myid(victim), myid(heir)
        wait_until(lambda: heir.client().info("replication").get("master_link_status") == "up", timeout=10,
                   what="the heir's link up")
        heir_keys = heir.client().dbsize()
        victim.kill()
        alive.remove(victim)
        t0 = time.monotonic()
        wait_until(lambda: all(master_id_of(n) == "-" if n is heir else True for n in alive)
                   and all(master_id_of(n) != vid for n in alive), timeout=NODE_TIMEOUT / 1000 + 10,
                   what="the heir promoted", show=show(alive))
        took = time.monotonic() - t0
        wait_until(lambda: states_ok(alive) and converged_alive(alive) and same_shards(alive), timeout=15,
                   what="cluster ok after the failover", show=show(alive))
        assert took < NODE_TIMEOUT / 1000 + 2, (took, failover_log(heir))
        assert heir.client().dbsize() == heir_keys
        assert hid in [f.split()[0] for f in nodes_lines(alive[0]) if "master" in f and "fail" not in f]
    check_keys(alive[0].port, writer.done)
    check_keys(alive[0].port, ["pre:%d" % i for i in range(3000)])
    rc = RedisCluster(host="127.0.0.1", port=alive[0].port, decode_responses=True)
    for i in range(1000):
        assert rc.set("post:%d" % i, i)
    rc.close()
    check_keys(alive[-1].port, ["post:%d" % i for i in range(1000)])
    # Both old masters, restarted on their nodes.conf and port, follow the
    # replicas that took over (each of the other kind).
    for victim, heir in ((masters[1], replicas[1]), (masters[0], replicas[0])):
        back = start_server(args=node_args(victim.cport, os.path.join(victim.dir, "nodes-%d.conf" % victim.cport)),
                            port=victim.port, binary=victim.binary)
        hid = myid(heir)
        wait_until(lambda: master_id_of(back) == hid, timeout=15, what="the old master a replica of the new",
                   show=show(alive + [back]))
        alive.append(back)
    wait_until(lambda: converged(alive) and states_ok(alive) and same_shards(alive), timeout=20,
               what="all six agreeing again", show=show(alive))
    for back, heir in zip(alive[-2:], (replicas[1], replicas[0])):
        wait_until(lambda: back.client().info("replication").get("master_link_status") == "up", timeout=10,
                   what="the old master synced")
        wait_until(lambda: back.client().dbsize() == heir.client().dbsize(), timeout=10, what="same keys")
    out = check(alive[-1])
    assert out.returncode == 0 and "[ERR]" not in out.stdout and "[WARNING]" not in out.stdout, out.stdout


def converged_alive(alive):
    """The live nodes' views agree (the dead node seen failing by all)."""
    views = []
    for n in alive:
        v = {}
        for line in nodes_lines(n):
            f = line.split()
            v[f[0]] = (f[3], "fail" in f[2].split(","), " ".join(f[8:]))
        views.append(v)
    return all(v == views[0] for v in views)
