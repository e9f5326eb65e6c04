"""MIGRATE against Debian's redis-server 7.0.15: the same calls made from
each server to a fresh target give the same replies, move (or COPY) the
same keys with their values and TTLs, and fail the same way (NOKEY,
BUSYKEY from the target, refused AUTH, closed port, bad arguments).
Targets of both kinds are used: redis-like to Redis and Redis to
redis-like.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_migrate.py"""
import pytest

from conftest import REDIS_SERVER, free_port
from rawresp import ExactConn

pytestmark = pytest.mark.differential


def fill(c):
    c.call("FLUSHALL")
    c.call("SET", "s", "hello")
    c.call("RPUSH", "l", "a", "b", "c")
    c.call("HSET", "h", "f", "v")
    c.call("SET", "ttl", "x", "EX", "1000")
    c.call("ZADD", "z", "1", "a", "2", "b")
    c.call("SET", "busy", "source")


def snapshot(r):
    return {k: (r.type(k), r.dump(k) is not None) for k in sorted(r.keys("*"))}


@pytest.mark.parametrize("target_kind", ["redis", "ours"])
def test_migrate_matches_redis(start_server, target_kind):
    sources = [start_server(), start_server(binary=REDIS_SERVER)]
    targets = []
    for _ in sources:
        targets.append(start_server(binary=REDIS_SERVER) if target_kind == "redis" else start_server())
    conns = [ExactConn(s.port) for s in sources]
    for c in conns:
        fill(c)
    for t in targets:
        t.client().set("busy", "target")
    closed = free_port()
    cases = [
        lambda t: ("MIGRATE", "127.0.0.1", t, "s", "0", "5000"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "s", "0", "5000"),                    # gone: NOKEY
        lambda t: ("MIGRATE", "127.0.0.1", t, "l", "3", "5000", "COPY"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "busy", "0", "5000"),                 # BUSYKEY on the target
        lambda t: ("MIGRATE", "127.0.0.1", t, "", "0", "5000", "KEYS", "h", "ttl", "nosuch"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "busy", "0", "5000", "REPLACE"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "z", "0", "5000", "AUTH", "wrong"),   # target has no password
        lambda t: ("MIGRATE", "127.0.0.1", t, "z", "0", "5000", "KEYS", "a"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "z", "0", "5000", "BOGUS"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "z", "x", "5000"),
        lambda t: ("MIGRATE", "127.0.0.1", t, "z", "0", "5000", "AUTH2", "u"),
        lambda t: ("MIGRATE", "127.0.0.1", str(closed), "z", "0", "200"),          # nobody listens
        lambda t: ("MIGRATE", "127.0.0.1", t, "z"),
    ]
    for case in cases:
        got = [c.call(*case(str(t.port))) for c, t in zip(conns, targets)]
        assert got[0] == got[1], case(str(targets[0].port))
    # Sources and targets end up with the same keys.
    assert snapshot(sources[0].client()) == snapshot(sources[1].client())
    t0, t1 = targets[0].client(), targets[1].client()
    assert snapshot(t0) == snapshot(t1)
    assert t0.get("s") == t1.get("s") == "hello"
    assert t0.get("busy") == t1.get("busy") == "source"       # moved with REPLACE
    assert sources[0].client().lrange("l", 0, -1) == ["a", "b", "c"]   # COPY kept it
    for t in (t0, t1):
        assert 990 < t.ttl("ttl") <= 1000
        assert t.hgetall("h") == {"f": "v"}
    l0 = targets[0].client(db=3)
    assert l0.lrange("l", 0, -1) == ["a", "b", "c"]
    for c in conns:
        c.close()


def test_migrate_goes_to_the_aof_as_del(start_server):
    src = start_server(args=("--appendonly", "yes"))
    dst = start_server()
    r = src.client()
    r.set("a", "1")
    r.set("b", "2")
    assert r.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", "a", "b") in (True, "OK")
    assert r.dbsize() == 0 and dst.client().mget("a", "b") == ["1", "2"]
    src.stop()
    again = start_server(args=("--appendonly", "yes", "--dir", src.dir))
    assert again.client().dbsize() == 0
