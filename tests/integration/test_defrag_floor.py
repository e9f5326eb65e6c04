"""Defrag's floor scales with the data set (issue 49, src/defrag.c
ignore_floor, docs/memory.md): active-defrag-ignore-bytes keeps Redis's
100mb in CONFIG GET, and active-defrag-ignore-percent (ours, 10 by
default) lowers the floor to that share of used_memory (never under 1mb).
A few MB of waste on a small instance is compacted with it, and left
alone with the percentage at 0 (Redis's absolute floor).  On allocators
without defrag (libc, tcmalloc) CONFIG SET activedefrag yes is refused."""
import time

import pytest
import redis


def wait_for(pred, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def fragment(r, n=200000):
    """n small keys, then every key but one in five deleted: each slab keeps
    a fifth of its blocks, some MB of waste, far under 100mb."""
    r.execute_command("DEBUG", "POPULATE", n)
    r.eval("for i=0,%d do if i%%5~=0 then redis.call('del','key:'..i) end end return 1" % (n - 1), 0)


def test_floor_scales_with_used_memory(start_server):
    s = start_server(args=("--enable-debug-command", "yes", "--active-defrag-ignore-percent", "0"))
    r = s.client()
    assert r.config_get("active-defrag-ignore-bytes") == {"active-defrag-ignore-bytes": str(100 << 20)}
    try:
        r.config_set("activedefrag", "yes")
    except redis.ResponseError as e:
        assert "defrag" in str(e).lower()
        pytest.skip("this allocator has no active defrag: %s" % r.info("memory")["mem_allocator"])
    fragment(r)
    time.sleep(0.3)
    m = r.info("memory")
    waste = m["allocator_active"] - m["allocator_allocated"]
    assert 1 << 20 < waste < 100 << 20, waste
    assert m["allocator_frag_ratio"] > 1.3
    # Redis's absolute floor: 100mb, not reached, no cycle.
    time.sleep(2)
    assert r.info("stats")["active_defrag_hits"] == 0
    # The floor as a share of the data: the cycle starts and compacts.
    r.config_set("active-defrag-ignore-percent", "10")
    assert r.config_get("active-defrag-ignore-percent") == {"active-defrag-ignore-percent": "10"}
    assert wait_for(lambda: r.info("stats")["active_defrag_hits"] > 0, 3)
    assert wait_for(lambda: r.info("memory")["allocator_frag_ratio"] < 1.2, 5), r.info("memory")["allocator_frag_ratio"]
    # Every key left reads back.
    assert r.dbsize() == 40000
    assert r.get("key:5") in ("value:5", b"value:5")
