"""Active defrag's pointer fixing, proved structurally (src/defrag.c).

DEBUG DEFRAG-PASS runs one whole defrag pass with every offered block
moved, whatever the allocator would decide, and replies how many blocks
moved.  So, on any build (libc and ASan included, where a pointer left at
a moved block is a use after free), a test knows exactly which blocks
moved and checks that everything still reads and changes as it should:
no timing, no fragmentation ratio.

Skiplist sorted sets (issue 20): the zset_t, the skiplist struct, its
header node, the member table's handle and bucket array, and every node
with its member sds move, 2 per member plus 7 per key (the key's entry
and robj, then those five) plus the keys table's bucket array, counted
exactly (no table here is halfway through a resize, which would add its
second array); the data then answers and changes like
Redis 7.0.15's, which gets the same commands.
"""
import pytest

from diffreply import both

ZSET_N = 1500


def zset_view(c, key):
    """Everything order- and link-dependent: both directions, ranks,
    scores through the member table, ranges."""
    fwd = c.zrange(key, 0, -1, withscores=True)
    rev = c.zrevrange(key, 0, -1, withscores=True)
    members = [m for m, _ in fwd]
    sample = members[::37]
    return (fwd, rev,
            [c.zrank(key, m) for m in sample], [c.zrevrank(key, m) for m in sample],
            [c.zscore(key, m) for m in sample],
            c.zrangebyscore(key, 10, 20, withscores=True),
            c.zrevrangebyscore(key, 30, 25),
            c.zcount(key, "(5", 15), c.zcard(key))


def fill_zset(c, key, n=ZSET_N):
    p = c.pipeline(transaction=False)
    for i in range(0, n, 500):
        p.zadd(key, {f"member:{j}": (j * 7919) % 41 for j in range(i, min(n, i + 500))})
    p.execute()


# Commands after the pass: each relinks nodes that moved (inserts next to
# them, score changes that reorder, deletions, range deletions, pops).
AFTER = [
    ("ZADD", "z", "20.5", "new:a", "0", "new:b", "40", "new:c"),
    ("ZINCRBY", "z", "13", "member:10"),
    ("ZADD", "z", "XX", "GT", "100", "member:11"),
    ("ZADD", "z", "-1", "member:12"),
    ("ZREM", "z", "member:13", "member:14", "new:b"),
    ("ZREMRANGEBYSCORE", "z", "3", "(4"),
    ("ZREMRANGEBYRANK", "z", "100", "140"),
    ("ZPOPMIN", "z", "3"),
    ("ZPOPMAX", "z", "2"),
    ("ZRANGESTORE", "z2", "z", "0", "200"),
    ("ZUNIONSTORE", "z3", "2", "z", "z2"),
]


@pytest.mark.parametrize("max_scan_fields", [1000000, 100])
def test_skiplist_zset_moves_every_node(server, redis_ref, max_scan_fields):
    """max-scan-fields 100: the zset is walked in slices (big_key), the
    member table's cursor resuming between them."""
    ours, ref = server.client(), redis_ref.client()
    for c in (ours, ref):
        c.flushall()
        fill_zset(c, "z")
    assert ours.object("encoding", "z") == "skiplist"
    ours.config_set("active-defrag-max-scan-fields", str(max_scan_fields))
    try:
        value_at = ours.execute_command("DEBUG", "OBJECT", "z").split()[1]
        before = zset_view(ours, "z")
        assert before == zset_view(ref, "z")
        moved = ours.execute_command("DEBUG", "DEFRAG-PASS")
        assert moved == 2 * ZSET_N + 7 + 1
        # The robj itself moved: DEBUG OBJECT shows its new address.
        assert ours.execute_command("DEBUG", "OBJECT", "z").split()[1] != value_at
        assert zset_view(ours, "z") == before
        # A second pass moves everything again (the new blocks are moved blocks too).
        assert ours.execute_command("DEBUG", "DEFRAG-PASS") == 2 * ZSET_N + 7 + 1
        for i, step in enumerate(AFTER):
            got = both(ours, ref, step)
            assert got[0] == got[1], f"step {i} {step}"
            assert zset_view(ours, "z") == zset_view(ref, "z"), f"step {i} {step}"
        for key in ("z2", "z3"):
            assert zset_view(ours, key) == zset_view(ref, key)
        # Members and nodes of three skiplist zsets now: all move once more.
        sizes = sum(ours.zcard(k) for k in ("z", "z2", "z3"))
        assert ours.execute_command("DEBUG", "DEFRAG-PASS") == 2 * sizes + 3 * 7 + 1
        assert zset_view(ours, "z") == zset_view(ref, "z")
    finally:
        ours.config_set("active-defrag-max-scan-fields", "1000")
        for c in (ours, ref):
            c.flushall()


def test_every_type_reads_back_after_a_full_pass(r):
    """Strings (embedded, integer, raw), lists, hashes and sets in both
    encodings, zsets in both, a stream, keys with a TTL: every block moves,
    and DUMP of each key is byte for byte what it was."""
    p = r.pipeline(transaction=False)
    p.set("s:emb", "short")
    p.set("s:int", 12345)
    p.set("s:raw", "r" * 300)
    p.set("s:ttl", "t" * 60, ex=100000)
    p.rpush("l:small", 1, 2, 3)
    p.rpush("l:big", *[f"item-{i}" for i in range(3000)])
    p.hset("h:small", mapping={"a": 1})
    p.hset("h:big", mapping={f"f{i}": f"v{i}" for i in range(600)})
    p.sadd("set:ints", *range(100))
    p.sadd("set:big", *[f"m{i}" for i in range(600)])
    p.zadd("z:small", {"a": 1, "b": 2})
    p.zadd("z:big", {f"m{i}": i / 3 for i in range(600)})
    p.xadd("x", {"f": "v"})
    p.xadd("x", {"f": "w"})
    p.execute()
    keys = sorted(r.keys("*"))
    dumps = {k: r.dump(k) for k in keys}
    moved = r.execute_command("DEBUG", "DEFRAG-PASS")
    assert moved > 2 * 600 + 600 + 600   # zset nodes and members, hash and set entries at least
    assert {k: r.dump(k) for k in keys} == dumps
    assert 99000 < r.ttl("s:ttl") <= 100000
    assert r.zscore("z:big", "m300") == 100.0
    r.zadd("z:big", {"m300": -1})
    assert r.zrange("z:big", 0, 0) == ["m300"]
    assert r.get("s:emb") == "short"
