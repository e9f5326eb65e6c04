"""maxmemory and eviction (src/evict.c): every policy keeps used_memory near
maxmemory under a write flood, volatile-* policies never touch keys without
a TTL, noeviction (or nothing evictable) answers the exact -OOM error, the
sampled LRU keeps a hot set about as well as an exact LRU on the same trace,
LFU keeps frequently used keys, OBJECT FREQ follows accesses."""
import collections
import random
import time

import pytest
import redis

OOM = "OOM command not allowed when used memory > 'maxmemory'."
POLICIES = ["allkeys-lru", "volatile-lru", "allkeys-lfu", "volatile-lfu", "allkeys-random", "volatile-random",
            "volatile-ttl"]


@pytest.fixture
def srv(start_server):
    return start_server()


def used(c):
    return int(c.info("memory")["used_memory"])


def limit_above_now(c, extra):
    """Set maxmemory to the current used_memory plus extra bytes."""
    m = used(c) + extra
    c.config_set("maxmemory", str(m))
    return m


@pytest.mark.parametrize("policy", POLICIES)
def test_flood_stays_near_maxmemory(srv, policy):
    c = srv.client()
    volatile = policy.startswith("volatile")
    # Keys without TTL written first: volatile policies must keep all of them.
    p = c.pipeline(transaction=False)
    for i in range(300):
        p.set(f"persist:{i}", "p" * 100)
    p.execute()
    c.config_set("maxmemory-policy", policy)
    maxmem = limit_above_now(c, 2 * 1024 * 1024)
    peak = 0
    for batch in range(30):
        p = c.pipeline(transaction=False)
        for i in range(1000):
            k = f"flood:{batch}:{i}"
            if volatile:
                p.set(k, "v" * 200, ex=10000 + (batch * 1000 + i))
            else:
                p.set(k, "v" * 200)
        p.execute()
        peak = max(peak, used(c))
    info = c.info()
    assert info["evicted_keys"] > 10000
    # The flood brought ~8 MB over a 2 MB budget: memory stays within a
    # small margin (query/reply buffers of a 1000-command pipeline).
    assert peak <= maxmem + 256 * 1024, (peak, maxmem)
    assert int(info["used_memory"]) <= maxmem + 256 * 1024
    if volatile:
        assert c.exists(*[f"persist:{i}" for i in range(300)]) == 300
    if policy == "volatile-ttl":
        # The soonest-to-expire keys go first (by sampling, so nearly):
        # the survivors are overwhelmingly from the last batches.
        survivors = [int(k.split(":")[1]) for k in c.scan_iter("flood:*", count=1000)]
        recent = sum(1 for b in survivors if b >= 20)
        assert survivors and recent >= 0.9 * len(survivors), sorted(survivors)[:20]


def test_noeviction_refuses_writes_exact_error(srv):
    c = srv.client()
    c.config_set("maxmemory-policy", "noeviction")
    limit_above_now(c, 256 * 1024)
    with pytest.raises(redis.ResponseError) as e:
        for i in range(10000):
            c.set(f"k{i}", "x" * 200)
    assert str(e.value) == OOM
    assert c.info()["evicted_keys"] == 0
    # Reads and deletes still work; a delete makes room again.
    assert c.get("k0") == "x" * 200
    assert c.delete(*[f"k{i}" for i in range(2000)]) > 0
    assert c.set("again", "ok")


def test_volatile_policy_without_ttl_keys_is_oom(srv):
    c = srv.client()
    c.config_set("maxmemory-policy", "volatile-lru")
    limit_above_now(c, 128 * 1024)
    with pytest.raises(redis.ResponseError) as e:
        for i in range(10000):
            c.set(f"k{i}", "x" * 200)
    assert str(e.value) == OOM
    assert c.info()["evicted_keys"] == 0


def run_trace(c, trace, batch):
    """GET every key of a batch, then SET the misses (a cache's read-through
    pattern).  Returns the hits."""
    hits = 0
    for b in range(0, len(trace), batch):
        keys = trace[b:b + batch]
        p = c.pipeline(transaction=False)
        for k in keys:
            p.get(k)
        got = p.execute()
        p = c.pipeline(transaction=False)
        for k, v in zip(keys, got):
            if v is None:
                p.set(k, "d" * 200)
            else:
                hits += 1
        p.execute()
        time.sleep(0.12)   # spread the trace over seconds: the LRU clock ticks in 1 s
    return hits


def exact_lru_hits(trace, batch, capacity):
    cache = collections.OrderedDict()
    hits = 0
    for b in range(0, len(trace), batch):
        keys = trace[b:b + batch]
        misses = []
        for k in keys:
            if k in cache:
                hits += 1
                cache.move_to_end(k)
            else:
                misses.append(k)
        for k in misses:
            cache[k] = True
            cache.move_to_end(k)
            while len(cache) > capacity:
                cache.popitem(last=False)
    return hits


def test_lru_hit_ratio_close_to_exact_lru(srv):
    c = srv.client()
    c.config_set("maxmemory-policy", "allkeys-lru")
    # Room for about 3000 keys of 200 bytes.
    p = c.pipeline(transaction=False)
    for i in range(1000):
        p.set(f"probe:{i}", "d" * 200)
    before = used(c)
    p.execute()
    per_key = (used(c) - before) / 1000
    c.flushall()
    limit_above_now(c, int(per_key * 3000))
    rnd = random.Random(7)
    hot = [f"hot:{i}" for i in range(300)]
    trace = [rnd.choice(hot) if rnd.random() < 0.6 else f"cold:{rnd.randrange(30000)}" for _ in range(16000)]
    batch = 400
    ours = run_trace(c, trace, batch) / len(trace)
    capacity = c.dbsize()
    exact = exact_lru_hits(trace, batch, capacity) / len(trace)
    print(f"\nLRU hit ratio: redis-like {ours:.3f}, exact LRU {exact:.3f} "
          f"(capacity {capacity} keys, ratio {ours / exact:.2f})")
    assert c.info()["evicted_keys"] > 1000
    assert ours >= 0.8 * exact, (ours, exact)


def test_lfu_keeps_frequent_keys(srv):
    c = srv.client()
    c.config_set("maxmemory-policy", "allkeys-lfu")
    p = c.pipeline(transaction=False)
    for i in range(200):
        p.set(f"freq:{i}", "f" * 200)
    p.execute()
    for _ in range(30):
        p = c.pipeline(transaction=False)
        for i in range(200):
            p.get(f"freq:{i}")
        p.execute()
    assert int(c.object("freq", "freq:0")) > 5
    limit_above_now(c, 1024 * 1024)
    p = c.pipeline(transaction=False)
    for i in range(20000):
        p.set(f"once:{i}", "o" * 200)
    p.execute()
    kept_freq = c.exists(*[f"freq:{i}" for i in range(200)])
    kept_once = sum(1 for _ in c.scan_iter("once:*", count=1000))
    assert c.info()["evicted_keys"] > 10000
    # Nearly every frequent key survives; most one-shot keys went.
    assert kept_freq >= 190, kept_freq
    assert kept_once < 20000 * 0.5


def test_object_freq_and_idletime(srv):
    c = srv.client()
    c.set("k", "v")
    with pytest.raises(redis.ResponseError, match="LFU maxmemory policy is not selected"):
        c.object("freq", "k")
    assert c.object("idletime", "k") >= 0
    c.config_set("maxmemory-policy", "volatile-lfu")
    c.set("n", "v")
    assert c.object("freq", "n") == 5   # a new key starts at LFU_INIT_VAL
    for _ in range(300):
        c.get("n")
    f = c.object("freq", "n")
    assert 5 < f <= 255
    with pytest.raises(redis.ResponseError, match="idle time not tracked"):
        c.object("idletime", "n")
    assert c.config_get("lfu-log-factor") == {"lfu-log-factor": "10"}
    assert c.config_get("lfu-decay-time") == {"lfu-decay-time": "1"}
