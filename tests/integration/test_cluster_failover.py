"""Cluster failover rules of Redis 7.0 (issue 45): CLUSTER FAILOVER's
manual failover (MFSTART, the master's pause, the replica catching up
before its election), cluster-replica-validity-factor, and replica
migration to an orphaned master; with our nodes alone and mixed with
Debian's redis-server 7.0.15 (either side of the manual failover).

Every node gets its own free port and bus port, on 127.0.0.1; each is
stopped by its pid.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_failover.py"""
import subprocess
import threading
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, free_port
from test_cluster_bus import create, wait_until

pytestmark = pytest.mark.slow


def start_node(start_server, binary=SERVER, timeout_ms=3000, extra=()):
    cport = free_port()
    s = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-node-timeout",
                           str(timeout_ms), "--cluster-config-file", "nodes-%d.conf" % cport,
                           "--repl-diskless-sync-delay", "0"] + list(extra), binary=binary)
    s.cport = cport
    return s


def myid(node):
    return node.client().execute_command("CLUSTER", "MYID")


def nodes_lines(node):
    return node.client().execute_command("CLUSTER", "NODES").splitlines()


def master_of(node, who):
    """who's master in node's view ("-" for a master), or None if unknown."""
    for line in nodes_lines(node):
        f = line.split()
        if f[0] == who:
            return f[3] if "slave" in f[2] else "-"
    return None


def add_replica(node, master, seed):
    out = subprocess.run(["redis-cli", "--cluster", "add-node", "127.0.0.1:%d" % node.port,
                          "127.0.0.1:%d" % seed.port, "--cluster-slave", "--cluster-master-id", myid(master)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def converged(nodes):
    """Every node sees every node, with one view of roles and masters."""
    views = []
    for n in nodes:
        v = {}
        for line in nodes_lines(n):
            f = line.split()
            v[f[0]] = (f[3], "fail" in f[2].split(","), " ".join(f[8:]))
        views.append(v)
    return all(v == views[0] for v in views) and len(views[0]) == len(nodes)


def states_ok(nodes):
    return all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok") for n in nodes)


def cluster_of(start_server, kinds, timeout_ms=3000, replica_extra=()):
    """kinds: binaries of 3 masters and then of one replica of the first
    master.  Returns (masters, replica)."""
    masters = [start_node(start_server, b, timeout_ms) for b in kinds[:3]]
    create(masters)
    wait_until(lambda: converged(masters) and states_ok(masters), timeout=15, what="three masters agreeing")
    replica = start_node(start_server, kinds[3], timeout_ms, replica_extra)
    add_replica(replica, masters[0], masters[1])
    everyone = masters + [replica]
    wait_until(lambda: converged(everyone) and states_ok(everyone), timeout=15, what="the replica known to all",
               show=lambda: "\n".join("\n".join(nodes_lines(n)) for n in everyone))
    wait_until(lambda: replica.client().info("replication").get("master_link_status") == "up", timeout=10,
               what="the replica's link up")
    return masters, replica


def key_of(node):
    """A key whose slot node serves."""
    return key_of_with(node.client())


def owned_slots(c):
    me = [line for line in c.execute_command("CLUSTER", "NODES").splitlines() if "myself" in line][0].split()
    slots = set()
    for r in me[8:]:
        if r.startswith("["):
            continue
        a, _, b = r.partition("-")
        slots.update(range(int(a), int(b or a) + 1))
    return slots


class IncrLoad(threading.Thread):
    """INCRs of one key as fast as one connection goes, following MOVED:
    `acked` counts the replies that said done, `unknown` the requests
    whose fate a connection error hid."""

    def __init__(self, key, port):
        super().__init__(daemon=True)
        self.key, self.port = key, port
        self.acked = self.unknown = 0
        self.moved = 0
        self.stop = threading.Event()
        self.last = 0

    def run(self):
        c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=15)
        while not self.stop.is_set():
            try:
                self.last = c.incr(self.key)
                self.acked += 1
            except redis.ResponseError as e:
                msg = str(e)
                if msg.startswith("MOVED"):
                    self.moved += 1
                    c.close()
                    self.port = int(msg.split()[-1].rsplit(":", 1)[1])
                    c = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=15)
                else:
                    time.sleep(0.01)   # an error reply: not applied
            except (redis.ConnectionError, redis.TimeoutError):
                self.unknown += 1
                time.sleep(0.01)
        c.close()


def log_text(node):
    with open(node.log_path) as f:
        return f.read()


@pytest.mark.parametrize("kinds", [
    (SERVER, SERVER, SERVER, SERVER),
    (REDIS_SERVER, SERVER, REDIS_SERVER, SERVER),    # our replica fails a Redis master over
    (SERVER, REDIS_SERVER, SERVER, REDIS_SERVER),    # a Redis replica fails our master over
], ids=["ours", "redis-master", "redis-replica"])
def test_manual_failover_loses_no_acknowledged_write(start_server, kinds):
    masters, replica = cluster_of(start_server, kinds)
    old, rid, oid = masters[0], myid(replica), myid(masters[0])
    key = key_of(old)
    load = IncrLoad(key, old.port)
    load.start()
    try:
        wait_until(lambda: load.acked > 2000, timeout=10, what="the load running")
        assert replica.client().execute_command("CLUSTER", "FAILOVER") == "OK"
        everyone = masters + [replica]
        wait_until(lambda: all(master_of(n, rid) == "-" and master_of(n, oid) == rid for n in everyone),
                   timeout=10, what="the roles swapped everywhere",
                   show=lambda: "\n".join("\n".join(nodes_lines(n)) for n in everyone))
        before = load.acked
        wait_until(lambda: load.acked > before + 1000, timeout=10, what="the load on the new master")
    finally:
        load.stop.set()
        load.join(20)
    assert load.moved >= 1 and load.unknown == 0
    final = int(replica.client().get(key))
    assert final == load.acked, (final, load.acked)
    # The master paused its writes for the replica, which caught up first.
    assert "Manual failover requested by replica %s" % rid in log_text(old)
    assert "All master replication stream processed, manual failover can start." in log_text(replica)
    # The old master follows the new one and gets every write.
    ro = redis.Redis(host="127.0.0.1", port=old.port, single_connection_client=True, decode_responses=True)
    ro.execute_command("READONLY")
    wait_until(lambda: ro.get(key) == str(final), timeout=10, what="the old master caught up")
    ro.close()


def test_manual_failover_times_out_and_lifts_the_pause(start_server):
    """A replica that cannot catch up (its link to the master is refused)
    never starts its election; the master holds writes meanwhile and lets
    them through at CLUSTER_MF_TIMEOUT (5 s), the roles unchanged."""
    masters, replica = cluster_of(start_server, (SERVER, SERVER, SERVER, SERVER))
    old = masters[0]
    oid, rid = myid(old), myid(replica)
    old.client().config_set("requirepass", "s3cret")
    c = redis.Redis(host="127.0.0.1", port=old.port, password="s3cret", socket_timeout=15, decode_responses=True)
    c.execute_command("CLIENT", "KILL", "TYPE", "replica")
    wait_until(lambda: replica.client().info("replication")["master_link_status"] == "down", timeout=5,
               what="the replica's link down")
    key = key_of_with(c)
    c.set(key, 0)      # a write the replica does not have
    t0 = time.monotonic()
    assert replica.client().execute_command("CLUSTER", "FAILOVER") == "OK"
    time.sleep(0.3)
    c.incr(key)    # held until the manual failover gives up
    held = time.monotonic() - t0
    assert 4.0 < held < 8.0, held
    assert "Manual failover timed out." in log_text(replica)
    assert master_of(replica, rid) == oid
    assert c.incr(key) == 2 and time.monotonic() - t0 < held + 1


def key_of_with(c):
    slots = owned_slots(c)
    for i in range(100000):
        if int(c.execute_command("CLUSTER", "KEYSLOT", "mf:%d" % i)) in slots:
            return "mf:%d" % i
    raise AssertionError("no key")


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_replica_validity_factor_keeps_a_stale_replica_from_failing_over(start_server, binary):
    """The replica's link to its master has been down for longer than
    node_timeout * factor + repl-ping-replica-period: when the master dies,
    it does not try; with the factor set to 0 it does (Redis 7.0's rule,
    checked against redis-server too)."""
    masters, replica = cluster_of(start_server, (SERVER, SERVER, SERVER, binary), timeout_ms=1000,
                                  replica_extra=["--cluster-replica-validity-factor", "1",
                                                 "--repl-ping-replica-period", "1"])
    old = masters[0]
    oid, rid = myid(old), myid(replica)
    old.client().config_set("requirepass", "s3cret")
    redis.Redis(host="127.0.0.1", port=old.port, password="s3cret").execute_command("CLIENT", "KILL", "TYPE",
                                                                                     "replica")
    wait_until(lambda: replica.client().info("replication")["master_link_status"] == "down", timeout=5,
               what="the replica's link down")
    time.sleep(3.5)    # the limit is 1 s * 1 + 1 s, the node timeout not counted
    old.kill()
    others = masters[1:]
    wait_until(lambda: all("fail" in [line for line in nodes_lines(n) if line.startswith(oid)][0].split()[2]
                           for n in others), timeout=10, what="the master failing")
    # Logged once the master has been failing for the node timeout + 5 s.
    wait_until(lambda: "check the 'cluster-replica-validity-factor' configuration option" in log_text(replica),
               timeout=10, what="the replica saying why it does not fail over")
    assert master_of(replica, rid) == oid
    replica.client().config_set("cluster-replica-validity-factor", "0")
    wait_until(lambda: all(master_of(n, rid) == "-" for n in others + [replica]), timeout=15,
               what="the replica promoted once any data will do")
    wait_until(lambda: states_ok(others + [replica]), timeout=5, what="cluster ok again")


@pytest.mark.parametrize("master_bin,replica_bin", [(SERVER, SERVER), (SERVER, REDIS_SERVER), (REDIS_SERVER, SERVER)],
                         ids=["ours", "redis-replicas", "redis-masters"])
def test_replica_migrates_to_an_orphaned_master(start_server, master_bin, replica_bin):
    """3 masters; A with 2 replicas, B and C with 1.  B's only replica dies:
    after FAIL and the migration delay, the replica of A with the smaller
    ID (and only it) becomes B's; C's replica stays.  Mixed: Redis's
    replicas migrate to our masters, ours to Redis's."""
    masters = [start_node(start_server, master_bin, 1000) for _ in range(3)]
    create(masters)
    wait_until(lambda: converged(masters) and states_ok(masters), timeout=15, what="three masters agreeing")
    a, b, c = masters
    reps = {}
    for name, m in (("a1", a), ("a2", a), ("b1", b), ("c1", c)):
        reps[name] = start_node(start_server, replica_bin, 1000)
        add_replica(reps[name], m, masters[1])
    everyone = masters + list(reps.values())
    wait_until(lambda: converged(everyone) and states_ok(everyone), timeout=20, what="seven nodes agreeing",
               show=lambda: "\n".join("\n".join(nodes_lines(n)) for n in everyone))
    aid, bid, cid = myid(a), myid(b), myid(c)
    ids = {k: myid(v) for k, v in reps.items()}
    mover = min(ids["a1"], ids["a2"])
    stayer = max(ids["a1"], ids["a2"])
    reps["b1"].kill()
    t0 = time.monotonic()
    alive = [n for n in everyone if n is not reps["b1"]]
    wait_until(lambda: all(master_of(n, mover) == bid for n in alive), timeout=25,
               what="a replica of A migrated to B",
               show=lambda: "\n".join("\n".join(nodes_lines(n)) for n in alive))
    assert time.monotonic() - t0 > 5       # CLUSTER_SLAVE_MIGRATION_DELAY after the orphaning
    time.sleep(2)
    for n in alive:
        assert master_of(n, stayer) == aid and master_of(n, ids["c1"]) == cid
    moved = [v for k, v in reps.items() if ids[k] == mover][0]
    wait_until(lambda: moved.client().info("replication").get("master_port") == b.port and
               moved.client().info("replication").get("master_link_status") == "up", timeout=10,
               what="the migrated replica synced with B")
    assert "Migrating to orphaned master %s" % bid in log_text(moved)    # Redis's words too
