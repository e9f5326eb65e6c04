"""Memory of bitmaps, HyperLogLogs and geo sets against Debian's
redis-server 7.0.15 in the same run: MEMORY USAGE answers for each kind,
and a 100M-bit bitmap and a 1M-element HLL take no more memory here
(MEMORY USAGE, and the used_memory a DEL gives back) than in Redis.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_bits_hll_geo_memory.py"""
import pytest

pytestmark = pytest.mark.differential


def build(c):
    c.flushall()
    c.setbit("bm:big", 99_999_999, 1)                    # 100M bits: 12.5 MB
    for start in range(0, 1_000_000, 20_000):
        c.pfadd("hll:big", *[b"e%d" % i for i in range(start, start + 20_000)])
    c.setbit("bm:small", 100, 1)
    c.pfadd("hll:small", "a", "b", "c")
    c.geoadd("geo:small", (1.5, 1.5, "a"))
    c.geoadd("geo:big", [x for i in range(300) for x in (i / 10, i / 10, "m%d" % i)])


def freed_by_delete(c, key):
    """used_memory given back by deleting key: the key's own footprint
    (client buffers left by the big PFADDs do not count)."""
    c.execute_command("CONFIG", "SET", "lazyfree-lazy-user-del", "no")
    before = c.info("memory")["used_memory"]
    c.delete(key)
    return before - c.info("memory")["used_memory"]


def test_memory_of_bitmaps_hll_geo(server, redis_ref):
    ours, ref = server.client(), redis_ref.client()
    build(ours)
    build(ref)
    assert ours.pfcount("hll:big") == ref.pfcount("hll:big")
    usage = {k: (ours.memory_usage(k), ref.memory_usage(k))
             for k in ("bm:big", "hll:big", "bm:small", "hll:small", "geo:small", "geo:big")}
    freed = {k: (freed_by_delete(ours, k), freed_by_delete(ref, k)) for k in ("bm:big", "hll:big")}
    print("MEMORY USAGE (ours, redis):", usage, "freed by DEL (ours, redis):", freed)
    # The targets: no larger than Redis.
    assert usage["bm:big"][0] <= usage["bm:big"][1]
    assert usage["hll:big"][0] <= usage["hll:big"][1]
    assert freed["bm:big"][0] <= freed["bm:big"][1]
    assert freed["hll:big"][0] <= freed["hll:big"][1]
    # Every kind is measured, at least its payload, and in Redis's range
    # (small values differ by the allocators' size classes).
    assert usage["bm:big"][0] >= 12_500_000 and usage["hll:big"][0] >= 12_304
    assert ours.object("encoding", "geo:big") == ref.object("encoding", "geo:big") == "skiplist"
    for k, (mine, theirs) in usage.items():
        assert mine > 0 and mine <= theirs * 1.25, (k, mine, theirs)
