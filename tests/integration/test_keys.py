"""Generic key commands through redis-py: DEL/UNLINK/EXISTS/TYPE/TOUCH,
RENAME, KEYS and SCAN guarantees, RANDOMKEY, DBSIZE, the EXPIRE family and
TTLs over time, OBJECT, databases (SELECT, SWAPDB, FLUSHDB, FLUSHALL)."""
import time

import pytest
import redis

from conftest import REDIS_SERVER, raw_request


def server_port(c):
    return c.connection_pool.connection_kwargs["port"]


def test_del_unlink_exists_counts(r):
    r.mset({"a": 1, "b": 2, "c": 3})
    assert r.exists("a", "a", "b", "nope") == 3, "EXISTS counts repeated keys"
    assert r.delete("a", "nope", "a") == 1
    assert r.unlink("b", "c") == 2
    assert r.dbsize() == 0


def test_type_and_touch(r):
    r.set("s", "v")
    assert r.type("s") == "string"
    assert r.type("nope") == "none"
    assert r.touch("s", "nope", "s") == 2


def test_rename_keeps_value_and_ttl(r):
    r.set("src", "v", ex=100)
    r.set("dst", "old")
    assert r.rename("src", "dst") is True
    assert r.get("dst") == "v" and 98 <= r.ttl("dst") <= 100
    assert r.exists("src") == 0
    r.set("plain", "p")
    r.set("withttl", "t", ex=100)
    r.rename("plain", "withttl")
    assert r.ttl("withttl") == -1, "RENAME onto a key with TTL drops the old TTL"
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.rename("nope", "x")
    r.set("x", "1")
    r.set("y", "2")
    assert r.renamenx("x", "y") is False
    assert r.renamenx("x", "z") is True
    assert r.mget("x", "y", "z") == [None, "2", "1"]


def test_keys_patterns(r):
    names = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "a[b]", "ab", "x\\y"]
    for n in names:
        r.set(n, 1)
    assert sorted(r.keys("h?llo")) == sorted(["hello", "hallo", "hxllo", "h*llo", "h?llo"])
    assert sorted(r.keys("h*llo")) == sorted(["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo"])
    assert sorted(r.keys("h[ae]llo")) == ["hallo", "hello"]
    assert sorted(r.keys("h[^e]llo")) == sorted(["hallo", "hxllo", "h*llo", "h?llo"])
    assert sorted(r.keys("h[a-b]llo")) == ["hallo"]
    assert r.keys("h\\*llo") == ["h*llo"]
    assert r.keys("a\\[b\\]") == ["a[b]"]
    assert r.keys("x\\\\y") == ["x\\y"]
    assert len(r.keys("*")) == len(names)
    assert r.keys("nomatch*") == []


def test_keys_skips_expired_keys(r):
    r.set("live", 1)
    r.set("dying", 1, px=30)
    time.sleep(0.1)
    assert r.keys("*") == ["live"]


def scan_all(c, **kw):
    cursor, seen, calls = 0, [], 0
    while True:
        cursor, keys = c.scan(cursor, **kw)
        seen += keys
        calls += 1
        if cursor == 0:
            return seen, calls


def test_scan_returns_every_key(r):
    r.mset({"key:%d" % i: i for i in range(1000)})
    seen, calls = scan_all(r, count=50)
    assert set(seen) == {"key:%d" % i for i in range(1000)}
    assert calls > 5, "COUNT bounds the work of one call"
    seen, _ = scan_all(r, match="key:1*", count=100)
    assert set(seen) == {"key:%d" % i for i in range(1000) if str(i).startswith("1")}
    seen, _ = scan_all(r, _type="string", count=100)
    assert len(set(seen)) == 1000
    seen, _ = scan_all(r, _type="list", count=100)
    assert seen == []


def test_scan_expires_the_keys_it_skips_like_redis(start_server):
    # With the active cycle off, an expired key stays until something
    # reads it; Redis 7.0's SCAN is such a read for the keys that match
    # its pattern: deleted (stat, "expired" event), not only hidden.
    results = []
    for binary in (None, REDIS_SERVER):
        args = ["--notify-keyspace-events", "Ex", "--enable-debug-command", "yes"]
        s = start_server(args=args) if binary is None else start_server(args=args, binary=binary)
        r = s.client()
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        events = r.pubsub()
        events.subscribe("__keyevent@0__:expired")
        for i in range(20):
            r.set("gone:%d" % i, "v", px=10)
            r.set("other:%d" % i, "v", px=10)
            r.set("keep:%d" % i, "v")
        time.sleep(0.1)
        seen, _ = scan_all(r, match="gone:*", count=7)
        heard = set()
        deadline = time.time() + 5
        while len(heard) < 20 and time.time() < deadline:
            m = events.get_message(timeout=0.2)
            if m and m["type"] == "message":
                heard.add(m["data"])
        results.append((sorted(seen), r.dbsize(), r.info("stats")["expired_keys"], sorted(heard)))
        events.close()
    assert results[0] == results[1]
    assert results[0][1] == 40, "the unmatched expired keys stay until read"
    assert results[0][2] == 20


def test_scan_survives_growth_during_iteration(r):
    """Keys present for the whole iteration must be returned even when the
    table grows (rehashes) between calls."""
    base = {"base:%d" % i for i in range(200)}
    r.mset({k: 1 for k in base})
    cursor, seen, extra = 0, set(), 0
    while True:
        cursor, keys = r.scan(cursor, count=20)
        seen.update(keys)
        r.mset({"extra:%d" % (extra + i): 1 for i in range(100)})
        extra += 100
        if cursor == 0:
            break
    assert base <= seen


def test_scan_errors(r):
    with pytest.raises(redis.ResponseError, match="invalid cursor"):
        r.execute_command("SCAN", "abc")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SCAN", "0", "COUNT", "0")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SCAN", "0", "BOGUS", "1")


def test_randomkey_and_dbsize(r):
    assert r.randomkey() is None
    r.mset({"a": 1, "b": 2, "c": 3})
    got = {r.randomkey() for _ in range(200)}
    assert got == {"a", "b", "c"}
    assert r.dbsize() == 3


def test_expire_family_and_ttl(r):
    r.set("k", "v")
    assert r.ttl("k") == -1 and r.pttl("k") == -1
    assert r.expiretime("k") == -1
    assert r.ttl("nope") == -2 and r.pttl("nope") == -2 and r.expiretime("nope") == -2
    assert r.expire("k", 100) is True
    assert 98 <= r.ttl("k") <= 100
    assert r.pexpire("k", 50000) is True
    assert 49000 < r.pttl("k") <= 50000
    at = int(time.time()) + 300
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.pexpireat("k", at * 1000 + 123) is True
    assert r.pexpiretime("k") == at * 1000 + 123
    assert r.persist("k") is True and r.ttl("k") == -1
    assert r.persist("k") is False
    assert r.expire("nope", 10) is False


def test_expire_nx_xx_gt_lt(r):
    r.set("k", "v")
    assert r.expire("k", 100, xx=True) is False
    assert r.expire("k", 100, gt=True) is False, "no TTL counts as infinite for GT"
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert r.expire("k", 50, gt=True) is False
    assert r.expire("k", 200, gt=True) is True and r.ttl("k") > 150
    assert r.expire("k", 300, lt=True) is False
    assert r.expire("k", 10, lt=True) is True and r.ttl("k") <= 10
    assert r.expire("k", 20, xx=True) is True
    r.set("nottl", "v")
    assert r.expire("nottl", 10, lt=True) is True, "any TTL is less than infinite"
    with pytest.raises(redis.ResponseError, match="NX and XX, GT or LT options at the same time are not compatible"):
        r.execute_command("EXPIRE", "k", "10", "NX", "GT")
    with pytest.raises(redis.ResponseError, match="GT and LT options at the same time are not compatible"):
        r.execute_command("EXPIRE", "k", "10", "GT", "LT")
    with pytest.raises(redis.ResponseError, match="Unsupported option FOO"):
        r.execute_command("EXPIRE", "k", "10", "FOO")


def test_expire_in_the_past_deletes(r):
    r.set("a", 1)
    r.set("b", 1)
    r.set("c", 1)
    assert r.expire("a", -1) is True
    assert r.pexpireat("b", 1) is True
    assert r.expireat("c", int(time.time()) - 10) is True
    assert r.exists("a", "b", "c") == 0


def test_expire_overflow_errors(r):
    r.set("k", 1)
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'expire' command"):
        r.execute_command("EXPIRE", "k", "9223372036854775807")
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'pexpire' command"):
        r.execute_command("PEXPIRE", "k", "9223372036854775807")
    assert r.ttl("k") == -1


def test_lazy_expiry_and_counter(r):
    r.config_resetstat()
    r.set("k", "v", px=40)
    time.sleep(0.12)
    assert r.get("k") is None
    assert r.info("stats")["expired_keys"] >= 1


def test_object_subcommands(r):
    r.set("k", "v")
    assert r.object("encoding", "k") == "embstr"
    assert r.object("refcount", "k") >= 1
    assert r.object("idletime", "k") == 0
    assert r.object("encoding", "nope") is None
    with pytest.raises(redis.ResponseError, match="An LFU maxmemory policy is not selected"):
        r.object("freq", "k")
    out, _ = raw_request(server_port(r), b"OBJECT HELP\r\n", 0.3)
    assert out.startswith(b"*") and b"ENCODING <key>" in out
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        r.execute_command("OBJECT", "NOPE", "k")


def test_object_idletime_grows(start_server):
    s = start_server()
    c = s.client()
    c.set("k", "v")
    time.sleep(2.1)
    assert c.object("idletime", "k") >= 1
    c.get("k")
    assert c.object("idletime", "k") == 0, "an access resets the idle time"


def test_object_freq_with_lfu(start_server):
    s = start_server(["--maxmemory-policy", "allkeys-lfu"])
    c = s.client()
    c.set("k", "v")
    for _ in range(100):
        c.get("k")
    assert c.object("freq", "k") > 0
    with pytest.raises(redis.ResponseError, match="An LFU maxmemory policy is selected"):
        c.object("idletime", "k")


def test_select_and_databases(server):
    a = server.client(db=0)
    b = server.client(db=3)
    a.flushall()
    a.set("k", "zero")
    b.set("k", "three")
    assert a.get("k") == "zero" and b.get("k") == "three"
    ks = a.info("keyspace")
    assert ks["db0"]["keys"] == 1 and ks["db3"]["keys"] == 1
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        a.execute_command("SELECT", "16")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        a.execute_command("SELECT", "x")
    b.flushdb()
    assert b.dbsize() == 0 and a.dbsize() == 1
    a.flushall()
    assert a.dbsize() == 0


def test_swapdb(server):
    a = server.client(db=0)
    b = server.client(db=1)
    a.flushall()
    a.set("k", "from0", ex=100)
    b.set("k", "from1")
    assert a.swapdb(0, 1) is True
    assert a.get("k") == "from1" and a.ttl("k") == -1
    assert b.get("k") == "from0" and b.ttl("k") > 0, "the TTL moves with its database"
    with pytest.raises(redis.ResponseError, match="invalid first DB index"):
        a.execute_command("SWAPDB", "x", "1")
    with pytest.raises(redis.ResponseError, match="invalid second DB index"):
        a.execute_command("SWAPDB", "0", "x")
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        a.execute_command("SWAPDB", "0", "16")
    a.flushall()


def test_databases_directive(start_server):
    s = start_server(["--databases", "2"])
    c = s.client()
    assert c.execute_command("SELECT", "1") is True
    with pytest.raises(redis.ResponseError, match="DB index is out of range"):
        c.execute_command("SELECT", "2")


def test_many_keys_and_rehash(r):
    """Enough keys to force several table growths, then delete most."""
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set("key:%d" % i, i)
    pipe.execute()
    assert r.dbsize() == 20000
    assert r.get("key:12345") == "12345"
    pipe = r.pipeline(transaction=False)
    for i in range(0, 20000, 2):
        pipe.delete("key:%d" % i)
    pipe.execute()
    assert r.dbsize() == 10000
    assert r.get("key:12345") == "12345" and r.get("key:12344") is None
