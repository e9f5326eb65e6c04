"""Lazy free (src/lazyfree.c, src/bio.c): UNLINK, FLUSHALL/FLUSHDB ASYNC and
the lazyfree-lazy-* directives hand big values (more than 64 allocations)
to the background thread: the command returns at once, lazyfreed_objects
counts the objects the thread freed, and used_memory falls back once it is
done.  Small values are always freed inline."""
import time

import pytest


@pytest.fixture
def srv(start_server):
    return start_server()


def mem(c):
    return c.info("memory")


def wait_lazyfree_idle(c, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = mem(c)
        if int(m["lazyfree_pending_objects"]) == 0:
            return m
        time.sleep(0.02)
    raise AssertionError("lazy free never finished")


def fill_hash(c, key, n, chunk=500):
    p = c.pipeline(transaction=False)
    for start in range(0, n, chunk):
        fields = {}
        for i in range(start, min(n, start + chunk)):
            fields[f"field:{i}"] = i
        p.hset(key, mapping=fields)
        if len(p) >= 50:
            p.execute()
    p.execute()


def test_unlink_of_million_field_hash_is_immediate(srv):
    c = srv.client()
    base = int(mem(c)["used_memory"])
    fill_hash(c, "big", 1_000_000)
    assert c.hlen("big") == 1_000_000
    full = int(mem(c)["used_memory"])
    # One block per field in a cache-line table (issue 20): about 25-32
    # bytes a field (less under ASan's allocator), so a million fields
    # still make a hash slow to free inline.
    assert full - base > 20 * 1024 * 1024
    freed_before = int(mem(c)["lazyfreed_objects"])
    # Hold the lazy-free thread: if UNLINK freed the hash itself, its
    # memory would be gone when UNLINK returns; handed off, it is still
    # there, queued, until the thread is let go.  (No clock: with glibc
    # malloc the main thread can wait on the arena lock while the thread
    # frees, so "UNLINK took < N ms" is a property of the allocator.)
    assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "1") == "OK"
    t0 = time.time()
    try:
        assert c.unlink("big") == 1
        elapsed = time.time() - t0
        assert c.exists("big") == 0
        held = mem(c)
        assert int(held["lazyfree_pending_objects"]) == 1
        assert int(held["lazyfreed_objects"]) == freed_before
        assert int(held["used_memory"]) > base + 20 * 1024 * 1024
    finally:
        assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "0") == "OK"
    print(f"\nUNLINK of a 1M-field hash: {elapsed * 1000:.1f} ms")
    m = wait_lazyfree_idle(c)
    assert int(m["lazyfreed_objects"]) == freed_before + 1
    assert int(m["used_memory"]) < base + 1024 * 1024, (base, int(m["used_memory"]))


def test_lazyfree_pause_arguments(srv):
    c = srv.client()
    with pytest.raises(Exception, match="syntax error"):
        c.execute_command("DEBUG", "LAZYFREE-PAUSE", "2")
    # Pausing twice queues one hold; one release lets everything run.
    assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "1") == "OK"
    assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "1") == "OK"
    c.hset("h", mapping={f"f{i}": i for i in range(600)})
    assert c.object("encoding", "h") == "hashtable"
    assert c.unlink("h") == 1
    assert int(mem(c)["lazyfree_pending_objects"]) == 1
    assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "0") == "OK"
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 1


def test_small_values_are_freed_inline(srv):
    c = srv.client()
    c.set("s", "x" * 1000)
    c.hset("h", mapping={f"f{i}": i for i in range(10)})
    assert c.unlink("s", "h") == 2
    m = wait_lazyfree_idle(c)
    assert int(m["lazyfreed_objects"]) == 0


def test_flushall_async(srv):
    c = srv.client()
    base = int(mem(c)["used_memory"])
    p = c.pipeline(transaction=False)
    for i in range(200_000):
        p.set(f"key:{i}", "v" * 50)
        if len(p) >= 5000:
            p.execute()
    p.execute()
    full = int(mem(c)["used_memory"])
    # Held thread: FLUSHALL ASYNC returns with the 200k keys queued, not
    # freed (see the UNLINK test for why no clock).
    assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "1") == "OK"
    try:
        assert c.flushall(asynchronous=True)
        assert c.dbsize() == 0
        held = mem(c)
        assert int(held["lazyfree_pending_objects"]) == 200_000
        assert int(held["used_memory"]) > base + (full - base) // 2
    finally:
        assert c.execute_command("DEBUG", "LAZYFREE-PAUSE", "0") == "OK"
    m = wait_lazyfree_idle(c)
    assert int(m["lazyfreed_objects"]) >= 200_000
    assert int(m["used_memory"]) < base + 512 * 1024
    # The server goes on with fresh tables.
    c.set("after", "1")
    assert c.get("after") == "1"


def test_flushdb_async_only_that_db(srv):
    c = srv.client()
    c.set("keep", "1")
    c2 = srv.client(db=2)
    fill_hash(c2, "h", 5000)
    p = c2.pipeline(transaction=False)
    for i in range(1000):
        p.set(f"k{i}", i)
    p.execute()
    assert c2.flushdb(asynchronous=True)
    assert c2.dbsize() == 0
    m = wait_lazyfree_idle(c)
    assert int(m["lazyfreed_objects"]) == 1001
    assert c.get("keep") == "1"


def test_lazyfree_lazy_user_del(srv):
    c = srv.client()
    fill_hash(c, "a", 1000)
    c.delete("a")
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 0
    c.config_set("lazyfree-lazy-user-del", "yes")
    fill_hash(c, "b", 1000)
    assert c.delete("b") == 1
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 1


def test_lazyfree_lazy_server_del_on_overwrite(srv):
    c = srv.client()
    c.config_set("lazyfree-lazy-server-del", "yes")
    fill_hash(c, "h", 1000)
    c.set("h", "now a string")   # implicit delete of the old value
    assert c.get("h") == "now a string"
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 1
    fill_hash(c, "src", 1000)
    fill_hash(c, "dst", 1000)
    c.rename("src", "dst")       # the old dst goes to the thread
    assert c.hlen("dst") == 1000
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 2


def test_lazyfree_lazy_expire(srv):
    c = srv.client()
    c.config_set("lazyfree-lazy-expire", "yes")
    fill_hash(c, "h", 1000)
    c.pexpire("h", 50)
    time.sleep(0.1)
    assert c.exists("h") == 0
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 1


def test_lazyfree_lazy_eviction(srv):
    c = srv.client()
    c.config_set("lazyfree-lazy-eviction", "yes")
    c.config_set("maxmemory-policy", "allkeys-lru")
    for i in range(4):
        fill_hash(c, f"h{i}", 2000)
    c.config_set("maxmemory", str(int(mem(c)["used_memory"]) + 64 * 1024))
    for i in range(4, 12):
        fill_hash(c, f"h{i}", 2000)
    st = c.info()
    assert st["evicted_keys"] > 0
    m = wait_lazyfree_idle(c)
    assert int(m["lazyfreed_objects"]) >= 1
    assert int(m["used_memory"]) <= int(c.config_get("maxmemory")["maxmemory"]) + 256 * 1024


def test_lazyfree_lazy_user_flush(srv):
    c = srv.client()
    c.config_set("lazyfree-lazy-user-flush", "yes")
    p = c.pipeline(transaction=False)
    for i in range(500):
        p.set(f"k{i}", i)
    p.execute()
    c.flushall()
    assert c.dbsize() == 0
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 500
    # An explicit SYNC wins over the directive.
    c.set("x", 1)
    c.execute_command("FLUSHALL", "SYNC")
    assert c.dbsize() == 0
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) == 500


def test_config_resetstat_clears_lazyfreed_objects(srv):
    c = srv.client()
    fill_hash(c, "big", 2000)
    c.unlink("big")
    assert int(wait_lazyfree_idle(c)["lazyfreed_objects"]) >= 1
    c.config_resetstat()
    assert int(mem(c)["lazyfreed_objects"]) == 0
