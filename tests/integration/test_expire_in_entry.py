"""Expire times kept in the key's entry (issue 20, src/keyspace.c): a
count per database, and the active expiry cycle and the volatile eviction
policies sampling the keys table (or, where keys with a TTL are rare, the
index of them: test_ttl_index.py).

What could break: INFO keyspace's expires= (it is the count now, kept by
every command that adds, changes, moves or drops a TTL: compared step by
step with Redis 7.0.15), active expiry in a database where TTL keys are
rare among keys without one, volatile eviction in such a database, and the
count surviving SWAPDB, FLUSHDB and an RDB reload.
"""
import time

import pytest

from diffreply import both


def keyspace(c):
    """{db: (keys, expires)} from INFO keyspace."""
    return {db: (v["keys"], v.get("expires", 0)) for db, v in c.info("keyspace").items()}


# Each step: a command, run on both servers (reply and INFO keyspace
# compared after it).  TTLs are long so that nothing expires meanwhile.
STEPS = [
    ("SET", "a", "1"),
    ("SET", "b", "2", "EX", "10000"),
    ("EXPIRE", "a", "10000"),              # the entry grows an expire slot
    ("EXPIRE", "a", "20000"),              # changed, still one
    ("PERSIST", "a"),
    ("PERSIST", "a"),                      # already without
    ("PEXPIRE", "a", "30000000"),          # the slot is reused
    ("SET", "a", "x"),                     # SET drops the TTL
    ("SET", "b", "y", "KEEPTTL"),
    ("SET", "c", "12345", "PX", "9000000"),  # an embedded integer with a TTL
    ("INCR", "c"),                         # keeps it
    ("APPEND", "c", "zz"),                 # keeps it (the value changes encoding)
    ("GETEX", "c", "PERSIST"),
    ("GETEX", "c", "EX", "5000"),
    ("SETEX", "d", "5000", "v"),
    ("SETEX", "d", "6000", "w"),           # overwrite, still one
    ("RPUSH", "l", "1", "2"),
    ("EXPIRE", "l", "7000"),               # a pointer entry with a TTL
    ("RENAME", "l", "l2"),                 # the TTL moves with the key
    ("RENAME", "d", "l2"),                 # over a key with a TTL
    ("COPY", "c", "c2"),                   # the copy has the TTL too
    ("MOVE", "c2", "1"),                   # to db 1 with its TTL
    ("SWAPDB", "0", "1"),
    ("SWAPDB", "0", "1"),
    ("EXPIRE", "b", "-1"),                 # a past time deletes the key
    ("DEL", "a", "c"),
    ("UNLINK", "l2"),
    ("SET", "e", "1", "EX", "100000"),
    ("FLUSHDB",),
    ("SET", "f", "1", "EX", "100000"),
]


def test_expires_count_matches_redis_step_by_step(server, redis_ref):
    ours, ref = server.client(), redis_ref.client()
    for c in (ours, ref):
        c.flushall()
    for i, step in enumerate(STEPS):
        got = both(ours, ref, step)
        assert got[0] == got[1], f"step {i} {step}: reply"
        assert keyspace(ours) == keyspace(ref), f"step {i} {step}: INFO keyspace"
    for c in (ours, ref):
        c.flushall()


def test_expires_count_survives_rdb_reload(r):
    pipe = r.pipeline(transaction=False)
    for i in range(3000):
        if i % 3 == 0:
            pipe.set(f"k:{i}", i, ex=100000)
        else:
            pipe.set(f"k:{i}", i)
    pipe.execute()
    r.select(2)
    r.set("other", "v", ex=100000)
    r.select(0)
    before = keyspace(r)
    assert before["db0"] == (3000, 1000) and before["db2"] == (1, 1)
    assert r.execute_command("DEBUG", "RELOAD")
    assert keyspace(r) == before
    assert r.ttl("k:0") > 99000 and r.ttl("k:1") == -1


@pytest.mark.parametrize("index", ["NEVER", "AUTO"])
def test_active_expiry_finds_rare_ttl_keys(r, index):
    """300 short TTLs among 20,000 keys without one: with no index of the
    keys with a TTL (NEVER) the cycle walks the keys table past the others,
    under AUTO it samples the index (src/ttl_index.c); either way it
    collects every expired key."""
    r.execute_command("DEBUG", "TTL-INDEX", index)
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"keep:{i}", "v")
        if i % 1000 == 0:
            pipe.execute()
    pipe.execute()
    # Read before the TTL keys exist: the cycle may collect some of them
    # before the pipeline's reply is back.
    before = r.info("stats")["expired_keys"]
    for i in range(300):
        pipe.set(f"gone:{i}", "v", px=50)
    pipe.execute()
    deadline = time.time() + 60   # generous: a loaded machine
    while r.info("keyspace")["db0"].get("expires", 0) > 0 and time.time() < deadline:
        time.sleep(0.2)
    # Nothing read the expired keys: only the active cycle deleted them.
    assert r.info("stats")["expired_keys"] - before == 300
    assert keyspace(r)["db0"] == (20000, 0)
    r.execute_command("DEBUG", "TTL-INDEX", "AUTO")


@pytest.mark.parametrize("policy", ["volatile-random", "volatile-lru", "volatile-ttl"])
def test_volatile_eviction_among_keys_without_ttl(start_server, policy):
    """1 key in 5 has a TTL: the volatile policies find those and only
    those (the samples of the keys table are filtered)."""
    s = start_server()
    c = s.client()
    pipe = c.pipeline(transaction=False)
    for i in range(4000):
        pipe.set(f"p:{i}", "x" * 100)
        if i % 5 == 0:
            pipe.set(f"t:{i}", "x" * 100, ex=100000)
    pipe.execute()
    c.config_set("maxmemory-policy", policy)
    c.config_set("maxmemory", str(int(c.info("memory")["used_memory"]) + 16 * 1024))
    for i in range(300):   # about 45 KB more: about 350 of the 800 TTL keys must go
        c.set(f"n:{i}", "y" * 100)
    evicted = c.info()["evicted_keys"]
    assert evicted > 0
    assert c.dbsize() == 4000 + 800 + 300 - evicted
    assert c.exists(*[f"p:{i}" for i in range(4000)]) == 4000
    assert c.exists(*[f"n:{i}" for i in range(300)]) == 300
    assert c.info("keyspace")["db0"]["expires"] == 800 - evicted
