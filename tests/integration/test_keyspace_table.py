"""The keyspace on lib/hashtable (issue 20): one db_entry per key in a
cache-line table; a TTL lives in the entry only (no second index).

Covers what the switch could break: SCAN's guarantee while the table grows
and shrinks between calls, TTL keys (adding a TTL moves the entry, PERSIST
keeps it, active expiry samples the keys table), keys of every length
class from 0 bytes to a megabyte, MEMORY USAGE, RANDOMKEY, SWAPDB, FLUSHALL
ASYNC, hashtable-encoded sets and hashes on the same table, and all of it
surviving an RDB round trip.
"""
import time

import pytest


def test_scan_guarantee_across_grow_and_shrink(r):
    stable = {f"stable:{i}" for i in range(3000)}
    pipe = r.pipeline(transaction=False)
    for k in stable:
        pipe.set(k, "v")
    pipe.execute()
    seen, cursor, step, live = set(), 0, 0, []
    grows = shrinks = 0
    while True:
        cursor, keys = r.scan(cursor=cursor, count=200)
        seen.update(keys)
        step += 1
        # Cycles of four steps adding 2500 keys each (the table grows
        # past 13,000 keys), then four deleting them (it shrinks back), so
        # the scan crosses several resizes in both directions.
        pipe = r.pipeline(transaction=False)
        if step % 8 < 4:
            batch = [f"churn:{step}:{i}" for i in range(2500)]
            for k in batch:
                pipe.set(k, "x")
            live.append(batch)
            grows += 1
        elif live:
            pipe.delete(*live.pop())
            shrinks += 1
        pipe.execute()
        if cursor == 0:
            break
        assert step < 5000
    assert grows >= 4 and shrinks >= 4, "the scan must cross a grow and a shrink"
    assert stable <= seen
    assert all(k.startswith(("stable:", "churn:")) for k in seen)


def test_scan_without_changes_returns_each_key_once(r):
    pipe = r.pipeline(transaction=False)
    for i in range(5000):
        pipe.set(f"k:{i}", i)
    pipe.execute()
    got, cursor = [], 0
    while True:
        cursor, keys = r.scan(cursor=cursor, count=100)
        got += keys
        if cursor == 0:
            break
    assert len(got) == 5000
    assert set(got) == {f"k:{i}" for i in range(5000)}


def test_ttl_keys_move_and_expire(r):
    r.set("a", "1")
    assert r.ttl("a") == -1
    assert r.expire("a", 100)          # the entry grows an expire slot
    assert 0 < r.ttl("a") <= 100
    assert r.get("a") == "1"
    assert r.persist("a")
    assert r.ttl("a") == -1
    assert r.pexpire("a", 200000)      # the slot is reused
    assert r.ttl("a") > 100
    r.set("a", "2")                    # SET drops the TTL
    assert r.ttl("a") == -1
    r.set("b", "x", px=50)
    r.set("c", "y", ex=1000)
    r.set("d", "z", keepttl=True)
    info = r.info("keyspace")["db0"]
    assert info["keys"] == 4 and info["expires"] == 2
    time.sleep(0.2)
    assert r.get("b") is None
    assert r.ttl("c") > 900
    assert r.dbsize() == 3


def test_active_expiry_clears_many_keys(r):
    pipe = r.pipeline(transaction=False)
    for i in range(2000):
        pipe.set(f"t:{i}", "v", px=100)
    for i in range(500):
        pipe.set(f"p:{i}", "v")
    pipe.execute()
    deadline = time.time() + 20
    while r.dbsize() > 500 and time.time() < deadline:
        time.sleep(0.1)
    assert r.dbsize() == 500
    assert r.info("keyspace")["db0"].get("expires", 0) == 0


@pytest.mark.parametrize("length", [0, 1, 15, 16, 44, 255, 256, 65535, 65536, 1 << 20])
def test_keys_of_every_length_class(r, length):
    key = ("k" * length).encode()
    assert r.set(key, b"v")
    assert r.get(key) == "v"
    assert r.exists(key) == 1
    assert r.expire(key, 1000)
    assert r.ttl(key) > 0
    assert r.rename(key, b"other")
    assert r.rename(b"other", key)
    assert r.ttl(key) > 0
    assert r.memory_usage(key) >= length
    assert r.type(key) == "string"
    assert r.delete(key) == 1
    assert r.exists(key) == 0


def test_randomkey_swapdb_and_async_flush(r):
    assert r.randomkey() is None
    for i in range(100):
        r.set(f"r:{i}", i)
    for _ in range(20):
        assert r.randomkey().startswith("r:")
    r.set("ttl", "v", ex=100)
    r.swapdb(0, 1)
    assert r.dbsize() == 0
    r.execute_command("SELECT", 1)
    assert r.dbsize() == 101 and r.ttl("ttl") > 0
    r.flushall(asynchronous=True)
    assert r.dbsize() == 0
    r.execute_command("SELECT", 0)
    assert r.dbsize() == 0


def test_hashtable_sets_on_the_table(r):
    members = [f"member:{i}" for i in range(3000)]
    for i in range(0, 3000, 500):
        r.sadd("s", *members[i:i + 500])
    assert r.object("encoding", "s") == "hashtable"
    assert r.scard("s") == 3000
    assert r.sismember("s", "member:7")
    assert not r.sismember("s", "member:x")
    got, cursor = set(), 0
    while True:
        cursor, part = r.sscan("s", cursor=cursor, count=100)
        got.update(part)
        if cursor == 0:
            break
    assert got == set(members)
    assert len(set(r.srandmember("s", 50))) == 50
    assert len(r.srandmember("s", -5000)) == 5000
    assert r.srem("s", *members[:2900]) == 2900
    assert r.smembers("s") == set(members[2900:])
    popped = r.spop("s", 10)
    assert len(popped) == 10 and r.scard("s") == 90
    assert r.memory_usage("s") > 90 * 8


def test_hashtable_hashes_on_the_table(r):
    fields = {f"field:{i}": f"value:{i}" for i in range(2000)}
    r.hset("h", mapping=fields)
    assert r.object("encoding", "h") == "hashtable"
    assert r.hlen("h") == 2000
    assert r.hget("h", "field:5") == "value:5"
    assert r.hset("h", "field:5", "x" * 300) == 0     # the field's block is rebuilt
    assert r.hget("h", "field:5") == "x" * 300
    assert r.hincrby("h", "n", 5) == 5 and r.hincrby("h", "n", 5) == 10
    assert r.hincrbyfloat("h", "f", 1.5) == 1.5
    assert r.hsetnx("h", "field:6", "no") == 0
    assert r.hstrlen("h", "field:7") == len("value:7")
    got, cursor = {}, 0
    while True:
        cursor, part = r.hscan("h", cursor=cursor, count=100)
        got.update(part)
        if cursor == 0:
            break
    assert len(got) == 2002 and got["field:9"] == "value:9" and got["n"] == "10"
    assert len(r.hrandfield("h", -3000, withvalues=True)) == 6000
    assert len(set(r.hrandfield("h", 100))) == 100
    assert r.hdel("h", *[f"field:{i}" for i in range(1990)]) == 1990
    assert r.hgetall("h") == {**{f"field:{i}": f"value:{i}" for i in range(1990, 2000)}, "n": "10", "f": "1.5"}
    assert r.memory_usage("h") > 12 * 16


def test_dump_restore_of_hashtable_sets_and_hashes(r):
    # A small hashtable-encoded set and hash (one long member forces the
    # encoding) must not look empty to RESTORE's check.
    r.sadd("s", "x" * 100)
    r.hset("h", "f", "y" * 100)
    assert r.object("encoding", "s") == "hashtable"
    assert r.object("encoding", "h") == "hashtable"
    for key in ("s", "h"):
        blob = r.dump(key)
        assert r.restore(key + "2", 0, blob)
    assert r.smembers("s2") == {"x" * 100}
    assert r.hgetall("h2") == {"f": "y" * 100}


def test_rdb_round_trip_keeps_keys_ttls_and_sets(start_server):
    a = start_server()
    ra = a.client()
    pipe = ra.pipeline(transaction=False)
    for i in range(3000):
        pipe.set(f"k:{i}", i)
    for i in range(0, 3000, 7):
        pipe.expire(f"k:{i}", 10000)
    pipe.sadd("s", *[f"m:{i}" for i in range(1000)])
    pipe.hset("h", mapping={f"f:{i}": f"v:{i}" for i in range(1000)})
    pipe.execute()
    assert ra.save()
    b = start_server(args=("--dir", a.dir))
    rb = b.client()
    assert rb.dbsize() == 3002
    assert rb.info("keyspace")["db0"]["expires"] == len(range(0, 3000, 7))
    assert rb.get("k:2999") == "2999"
    assert rb.ttl("k:7") > 9000 and rb.ttl("k:8") == -1
    assert rb.scard("s") == 1000 and rb.object("encoding", "s") == "hashtable"
    assert rb.smembers("s") == {f"m:{i}" for i in range(1000)}
    assert rb.object("encoding", "h") == "hashtable"
    assert rb.hgetall("h") == {f"f:{i}": f"v:{i}" for i in range(1000)}
