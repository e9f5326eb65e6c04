"""Streams and memory: MEMORY USAGE grows with a stream and its groups and
stays within Redis 7.0.15's figure for the same stream; UNLINK of a big
stream is freed on the lazy-free thread; active defragmentation (on by
default on the ebbmalloc build) moves stream nodes and every entry reads
back unchanged; XADD into a full node starts a new one at
stream-node-max-entries / -max-bytes, as XINFO's radix-tree-keys shows.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_stream_memory.py"""
import time

import pytest


def fill(c, key, n, fields=3):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.xadd(key, {"f%d" % j: "value-%d-%d" % (i, j) for j in range(fields)}, id="%d-1" % (i + 1))
        if i % 1000 == 999:
            p.execute()
    p.execute()


@pytest.mark.differential
def test_memory_usage_within_redis(server, redis_ref):
    figures = []
    for srv in (server, redis_ref):
        c = srv.client()
        c.flushall()
        fill(c, "s", 20000)
        small = c.memory_usage("s", samples=0)
        c.xgroup_create("s", "g", id="0")
        c.xreadgroup("g", "c", {"s": ">"}, count=5000)
        figures.append((small, c.memory_usage("s", samples=0)))
        c.flushall()
    (mine, mine_g), (ref, ref_g) = figures
    assert mine_g > mine + 5000 * 24   # pending entries are counted (a nack is 24 bytes)
    assert ref_g > ref
    assert 0.5 * ref < mine <= 1.1 * ref, figures


def test_unlink_big_stream_is_lazy(r):
    fill(r, "big", 30000)
    before = r.info("memory")["lazyfreed_objects"]
    assert r.unlink("big") == 1
    deadline = time.time() + 5
    while r.info("memory")["lazyfreed_objects"] == before and time.time() < deadline:
        time.sleep(0.02)
    assert r.info("memory")["lazyfreed_objects"] == before + 1
    assert r.exists("big") == 0


def test_node_limits(r):
    r.config_set("stream-node-max-entries", 10)
    try:
        fill(r, "s", 95)
        assert r.execute_command("XINFO", "STREAM", "s")[3] == 10   # radix-tree-keys
        r.config_set("stream-node-max-entries", 0)
        r.config_set("stream-node-max-bytes", 200)
        fill(r, "t", 50)
        nodes = r.execute_command("XINFO", "STREAM", "t")[3]
        assert 10 <= nodes <= 50
    finally:
        r.config_set("stream-node-max-entries", 100)
        r.config_set("stream-node-max-bytes", 4096)


@pytest.mark.slow
def test_defrag_moves_stream_nodes(start_server):
    s = start_server()
    c = s.client()
    if not c.info("memory")["mem_allocator"].startswith(("ebbmalloc", "jemalloc")):
        pytest.skip("this build's allocator cannot defragment")
    # Interleave stream nodes with strings, then delete most strings.
    p = c.pipeline(transaction=False)
    for i in range(60000):
        p.set("k%d" % i, "v" * 200)
        if i % 20 == 0:
            p.xadd("st%d" % (i % 30), {"a": str(i), "b": "x" * 50})
        if i % 2000 == 1999:
            p.execute()
    p.execute()
    want = {"st%d" % j: c.xrange("st%d" % j) for j in range(30)}
    p = c.pipeline(transaction=False)
    for i in range(60000):
        if i % 10:
            p.delete("k%d" % i)
    p.execute()
    c.config_set("active-defrag-ignore-bytes", "1mb")
    c.config_set("active-defrag-threshold-lower", "5")
    c.config_set("activedefrag", "yes")
    deadline = time.time() + 20
    while time.time() < deadline and c.info("stats")["active_defrag_hits"] < 1000:
        time.sleep(0.25)
    assert c.info("stats")["active_defrag_hits"] > 0
    for k, v in want.items():
        assert c.xrange(k) == v
        assert c.xrevrange(k) == v[::-1]
