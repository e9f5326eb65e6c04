"""redis-like-benchmark --cluster (issue 45, "For users") against a
3-master cluster of our servers made by Debian's redis-cli 7.0.15
(`--cluster create`) on loopback ports.

What the nodes saw is the check: every master gets keys, every key sits on
the master of its slot, INFO commandstats over the masters add up to -n per
command (each request served once, none lost or doubled), and with the
slot map right no -MOVED is counted.  A slot being migrated (MIGRATING /
IMPORTING) gets -ASK followed, a slot moved by CLUSTER SETSLOT during a run
gets -MOVED followed, and both are counted in the tool's output.  Nodes are
stopped by pid.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_benchmark_cluster.py"""
import os
import re
import subprocess
import threading
import time

import pytest
from redis.crc import key_slot

from conftest import REDIS_SERVER, SERVER, ServerProcess, free_port

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.environ.get("RL_BENCH", os.path.join(ROOT, "src", "redis-like-benchmark"))


def start_node(binary=SERVER):
    cport = free_port()
    s = ServerProcess(binary, ["--cluster-enabled", "yes", "--cluster-port", str(cport), "--cluster-node-timeout",
                               "5000", "--cluster-config-file", "nodes-%d.conf" % cport])
    s.cport = cport
    return s


def wait_until(pred, timeout=15.0, what="condition"):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(what + " never held")


def owners(node):
    """slot -> port of its master, from CLUSTER SLOTS of one node."""
    table = {}
    for start, end, master, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
        for s in range(start, end + 1):
            table[s] = int(master[1])
    return table


def views_agree(nodes):
    views = [owners(n) for n in nodes]
    return all(v == views[0] for v in views) and len(views[0]) == 16384


def make_cluster(binary):
    if not os.access(BENCH, os.X_OK):
        pytest.fail("benchmark tool not built (make -C src tools): " + BENCH)
    nodes = [start_node(binary) for _ in range(3)]
    try:
        out = subprocess.run(["redis-cli", "--cluster", "create"] + ["127.0.0.1:%d" % n.port for n in nodes]
                             + ["--cluster-yes"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        wait_until(lambda: all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok")
                               for n in nodes) and views_agree(nodes), what="cluster_state:ok everywhere")
        yield nodes
    finally:
        for n in nodes:
            n.stop()


@pytest.fixture(scope="module")
def cluster():
    yield from make_cluster(SERVER)


@pytest.fixture
def fresh(cluster):
    for n in cluster:
        c = n.client()
        c.flushall()
        c.config_resetstat()
    return cluster


def bench(node, *args, timeout=60):
    return subprocess.run([BENCH, "--cluster", "-p", str(node.port)] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def redirects(out, test):
    """(MOVED, ASK) of one test's -q line."""
    m = re.search(r"^%s: .*\(MOVED (\d+), ASK (\d+)\)$" % re.escape(test), out, re.M)
    assert m, out
    return int(m.group(1)), int(m.group(2))


def calls(nodes, cmd, field="calls"):
    total = 0
    for n in nodes:
        st = n.client().info("commandstats").get("cmdstat_" + cmd)
        total += st[field] if st else 0
    return total


def assert_keys_on_their_masters(nodes):
    table = owners(nodes[0])
    for n in nodes:
        keys = list(n.client().scan_iter(count=1000))
        assert keys, "master %d got no key" % n.port
        wrong = [k for k in keys if table[key_slot(k.encode() if isinstance(k, str) else k)] != n.port]
        assert not wrong, "keys on the wrong master %d: %r" % (n.port, wrong[:5])


def skip_without_uring(out):
    if "io_uring is not available" in out.stderr:
        pytest.skip(out.stderr.strip())


@pytest.mark.parametrize("engine", ["epoll", "uring"])
def test_set_get_spread_over_the_masters(fresh, engine):
    out = bench(fresh[0], "-t", "set,get", "-n", 20000, "-r", 10000, "-q", "--engine", engine)
    skip_without_uring(out)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "error" not in out.stdout + out.stderr
    assert redirects(out.stdout, "SET") == (0, 0)
    assert redirects(out.stdout, "GET") == (0, 0)
    assert all(n.client().dbsize() > 0 for n in fresh)
    assert_keys_on_their_masters(fresh)
    assert calls(fresh, "set") == 20000 and calls(fresh, "get") == 20000


@pytest.mark.parametrize("engine", ["epoll", "uring"])
def test_pipelined_threads_and_any_seed_node(fresh, engine):
    out = bench(fresh[2], "-t", "set,get", "-n", 30000, "-r", 5000, "-P", 16, "--threads", 2, "-q",
                "--engine", engine)
    skip_without_uring(out)
    assert out.returncode == 0, out.stdout + out.stderr
    assert redirects(out.stdout, "SET") == (0, 0) and redirects(out.stdout, "GET") == (0, 0)
    assert_keys_on_their_masters(fresh)
    assert calls(fresh, "set") == 30000 and calls(fresh, "get") == 30000


def test_open_loop_rate(fresh):
    out = bench(fresh[1], "-t", "set", "-n", 3000, "-r", 1000, "--rate", 3000, "-c", 10, "-q")
    assert out.returncode == 0, out.stdout + out.stderr
    assert redirects(out.stdout, "SET") == (0, 0)
    assert calls(fresh, "set") == 3000
    assert all(n.client().dbsize() > 0 for n in fresh)


@pytest.mark.parametrize("key,tag", [("{user42}:__rand_int__", b"user42"), ("a{b}{c}:__rand_int__", b"b"),
                                     ("{}:__rand_int__", None)])
def test_hash_tags_as_redis_hashes_them(fresh, key, tag):
    out = bench(fresh[0], "-n", 2000, "-r", 1000, "-q", "SET", key, "v")
    assert out.returncode == 0, out.stdout + out.stderr
    assert redirects(out.stdout, "SET %s v" % key) == (0, 0)
    if tag is None:  # an empty {} is no tag: the whole key is hashed
        assert all(n.client().dbsize() > 0 for n in fresh)
        assert_keys_on_their_masters(fresh)
    else:
        home = owners(fresh[0])[key_slot(tag)]
        assert [n.client().dbsize() > 0 for n in fresh] == [n.port == home for n in fresh]


def test_mset_keys_share_a_slot(fresh):
    """A cluster refuses MSET over slots (-CROSSSLOT): --cluster's MSET
    writes ten keys of one hash tag per request, one number drawn."""
    out = bench(fresh[0], "-t", "mset", "-n", 2000, "-r", 1000, "-q")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "error" not in out.stdout + out.stderr
    assert redirects(out.stdout, "MSET (10 keys)") == (0, 0)
    assert calls(fresh, "mset") == 2000
    assert_keys_on_their_masters(fresh)
    keys = [k for n in fresh for k in n.client().scan_iter(count=1000)]
    assert all(re.fullmatch(r"\{key:\d{12}\}:\d", k) for k in keys), keys[:5]
    numbers = {k[5:17] for k in keys}
    assert len(keys) == 10 * len(numbers)  # every number with its ten keys


def test_full_output_names_the_masters(fresh):
    out = bench(fresh[0], "-t", "get", "-n", 1000, "-c", 5)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Cluster has 3 master nodes" in out.stdout
    assert "cluster: 3 masters, redirects followed: MOVED 0, ASK 0" in out.stdout


def node_of(nodes, port):
    return next(n for n in nodes if n.port == port)


def test_ask_during_a_migration_is_followed(fresh):
    key = b"key:000000000007"  # -r 100: one request in 100 uses it
    slot = key_slot(key)
    src = node_of(fresh, owners(fresh[0])[slot])
    dst = next(n for n in fresh if n is not src)
    src_id = src.client().execute_command("CLUSTER", "MYID")
    dst_id = dst.client().execute_command("CLUSTER", "MYID")
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    runs = 0
    try:
        for engine in ("epoll", "uring"):
            out = bench(fresh[0], "-t", "get", "-n", 20000, "-r", 100, "-P", 4, "-q", "--engine", engine)
            if "io_uring is not available" in out.stderr:
                continue
            runs += 1
            assert out.returncode == 0, out.stdout + out.stderr
            moved, asked = redirects(out.stdout, "GET")
            # The key is missing on the source, so every GET of it is sent on.
            assert moved == 0 and asked > 50, out.stdout
            assert "error" not in out.stdout + out.stderr
        # Each ASK cost one ASKING and one GET sent again; the -ASK itself
        # is a rejected call, as in Redis.
        assert calls(fresh, "get") == runs * 20000
        assert calls(fresh, "get", "rejected_calls") == calls(fresh, "asking") > 0
    finally:
        for n in (src, dst):
            n.client().execute_command("CLUSTER", "SETSLOT", slot, "STABLE")


def test_slot_moved_during_a_run_is_followed(fresh):
    slot = key_slot(b"key:000000000007")
    src = node_of(fresh, owners(fresh[0])[slot])
    dst = next(n for n in fresh if n is not src)
    others = [n for n in fresh if n is not src and n is not dst]

    def move(frm, to, after_gets=0):
        """As a resharding does: IMPORTING and MIGRATING, then the new owner
        takes the slot (a new epoch), then the old one and the rest learn it."""
        # Once the run is under way: its slot map was read before the move.
        wait_until(lambda: calls(fresh, "get") >= after_gets, timeout=20, what="the run under way")
        frm_id = frm.client().execute_command("CLUSTER", "MYID")
        to_id = to.client().execute_command("CLUSTER", "MYID")
        to.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", frm_id)
        frm.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", to_id)
        for n in [to, frm] + others:
            n.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", to_id)

    mover = threading.Thread(target=move, args=(src, dst, 5000))
    mover.start()
    try:
        out = bench(fresh[0], "-t", "get", "-r", 100, "--duration", 4, "-q")
    finally:
        mover.join()
    try:
        assert out.returncode == 0, out.stdout + out.stderr
        moved, asked = redirects(out.stdout, "GET")
        assert moved >= 1, out.stdout  # asked too, if a GET came in the migration's moment
        assert "error" not in out.stdout + out.stderr
        wait_until(lambda: views_agree(fresh) and owners(fresh[0])[slot] == dst.port, what="agreement after the move")
        # A new run reads the new map at start: no redirect.
        out = bench(fresh[0], "-t", "get", "-n", 5000, "-r", 100, "-q")
        assert out.returncode == 0 and redirects(out.stdout, "GET") == (0, 0), out.stdout
    finally:
        move(dst, src)
        wait_until(lambda: views_agree(fresh) and owners(fresh[0])[slot] == src.port, what="slot moved back")


def test_refused_without_a_cluster():
    s = ServerProcess(SERVER)
    try:
        out = subprocess.run([BENCH, "--cluster", "-p", str(s.port), "-n", "10", "-q"], capture_output=True,
                             text=True, timeout=10)
        assert out.returncode == 1
        assert "cluster support disabled" in out.stderr
    finally:
        s.stop()


@pytest.mark.parametrize("extra", [["-k", "0"], ["-s", "/tmp/x.sock"], ["--dbnum", "1"], ["--latency-sweep"]])
def test_bad_combinations_refused(extra):
    out = subprocess.run([BENCH, "--cluster", "-n", "10"] + extra, capture_output=True, text=True, timeout=10)
    assert out.returncode == 1 and "--cluster" in out.stderr


@pytest.mark.differential
def test_a_redis_cluster_is_driven_the_same_way():
    """Debian's redis-server 7.0.15 is the spec of the slot hash: on its
    cluster too every key lands on its master with no -MOVED."""
    gen = make_cluster(REDIS_SERVER)
    nodes = next(gen)
    try:
        out = bench(nodes[0], "-t", "set,get", "-n", 20000, "-r", 10000, "-P", 4, "-q")
        assert out.returncode == 0, out.stdout + out.stderr
        assert redirects(out.stdout, "SET") == (0, 0) and redirects(out.stdout, "GET") == (0, 0)
        assert_keys_on_their_masters(nodes)
        assert calls(nodes, "set") == 20000 and calls(nodes, "get") == 20000
    finally:
        gen.close()
