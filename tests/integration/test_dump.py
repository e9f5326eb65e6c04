"""DUMP/RESTORE, COPY and MOVE against Debian's redis-server 7.0.

Payloads must be interchangeable: every type and encoding DUMPed by Redis
RESTOREs here with the same contents, and ours RESTORE there; for the
values whose encoding both servers share, the payload bytes are identical.
Error texts and replies of the option and edge cases are compared byte
for byte in RESP2 and RESP3; corrupted payloads must get Redis's error and
leave the server running."""
import random
import time

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential


def fill(c):
    c.set("s", "hello")
    c.set("i", "12345")
    c.set("neg", "-7")
    c.set("big", "x" * 100)
    c.set("ll", str(2 ** 62))
    c.rpush("l", *range(10))
    c.rpush("bl", *["v%d" % i for i in range(3000)])
    c.sadd("si", 1, 2, 3, -5)
    c.sadd("ss", "a", "b")
    c.sadd("sb", *["m%d" % i for i in range(600)])
    c.zadd("z", {"a": 1, "b": 2.5, "c": float("inf")})
    c.zadd("zb", {"m%d" % i: i * 0.1 for i in range(300)})
    c.hset("h", mapping={"f": "v", "g": "w"})
    c.hset("hb", mapping={"f%d" % i: "v" * i for i in range(300)})


KEYS = ["s", "i", "neg", "big", "ll", "l", "bl", "si", "ss", "sb", "z", "zb", "h", "hb"]
# Compressed strings differ (our LZF finds other matches), both decode.
SAME_BYTES = ["s", "i", "neg", "ll", "si", "z", "h"]


def contents(c, k):
    t = c.type(k)
    if t == "string":
        return c.get(k)
    if t == "list":
        return c.lrange(k, 0, -1)
    if t == "set":
        return sorted(c.smembers(k))
    if t == "zset":
        return c.zrange(k, 0, -1, withscores=True)
    if t == "hash":
        return sorted(c.hgetall(k).items())
    return t


@pytest.fixture
def pair(server, redis_ref):
    ours = server.client(decode_responses=False)
    ref = redis_ref.client(decode_responses=False)
    for c in (ours, ref):
        c.flushall()
        fill(c)
    yield ours, ref, server.client(), redis_ref.client()


def test_payloads_interchange_both_ways(pair):
    ours, ref, ours_s, ref_s = pair
    for src, dst, dst_s, src_s in ((ref, ours, ours_s, ref_s), (ours, ref, ref_s, ours_s)):
        for k in KEYS:
            payload = src.dump(k)
            assert payload is not None
            assert dst.restore(k + ":r", 0, payload, replace=True)
            assert contents(dst_s, k + ":r") == contents(src_s, k), k
    for k in SAME_BYTES:
        assert ours.dump(k) == ref.dump(k), k


def test_restore_keeps_ttl_and_absttl(server):
    c = server.client(decode_responses=False)
    c.flushall()
    c.set("a", "1")
    p = c.dump("a")
    assert c.restore("b", 5000, p)
    assert 4000 < c.pttl("b") <= 5000
    when = int(time.time() * 1000) + 100000
    assert c.restore("c", when, p, absttl=True)
    assert abs(c.pexpiretime("c") - when) < 2
    # A time already past: OK, and nothing is created; with REPLACE the old
    # key is deleted.
    assert c.restore("d", 1, p, absttl=True)
    assert not c.exists("d")
    c.set("e", "old")
    assert c.restore("e", 1, p, absttl=True, replace=True)
    assert not c.exists("e")


def test_restore_idletime_and_freq(server):
    c = server.client()
    c.flushall()
    c.set("a", "not a number")   # (small integers are shared objects, without a stamp)
    p = c.dump("a")
    c.restore("b", 0, p, idletime=1000)
    assert c.object("idletime", "b") >= 1000
    c.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        c.restore("f", 0, p, frequency=77)
        assert c.object("freq", "f") == 77
    finally:
        c.config_set("maxmemory-policy", "noeviction")


def edge_commands(rng, payload):
    bad = bytearray(payload)
    bad[1] ^= 0x40
    newer = bytearray(payload)
    newer[-10] = 11
    truncated_body = b"\x00\x40"   # a string whose length runs past the end
    cmds = [
        ["set", "k", "v"],
        ["dump", "k"], ["dump", "missing"],
        ["restore", "k", "0", payload],
        ["restore", "k", "0", payload, "replace"],
        ["restore", "k2", "-1", payload],
        ["restore", "k2", "abc", payload],
        ["restore", "k2", "0", bytes(bad)],
        ["restore", "k2", "0", bytes(newer)],
        ["restore", "k2", "0", b"short"],
        ["restore", "k2", "0", b""],
        ["restore", "k2", "0", payload, "idletime", "-1"],
        ["restore", "k2", "0", payload, "idletime", "x"],
        ["restore", "k2", "0", payload, "freq", "256"],
        ["restore", "k2", "0", payload, "freq", "-1"],
        ["restore", "k2", "0", payload, "freq", "5", "idletime", "5"],
        ["restore", "k2", "0", payload, "idletime", "5", "freq", "5"],
        ["restore", "k2", "0", payload, "idletime"],
        ["restore", "k2", "0", payload, "bogus"],
        ["restore", "k2", "0", payload, "replace", "absttl"],
        ["get", "k2"],
        ["restore", "k3", "0", with_footer(truncated_body)],
        ["restore", "k3", "0", with_footer(b"\x63\x00")],      # unknown type
        ["restore", "k3", "0", with_footer(b"\x02\x00")],      # empty set
        ["restore", "k3", "0", with_footer(b"\x0b\x00")],      # empty intset blob
        ["exists", "k3"],
        ["rpush", "l", "a", "b"], ["copy", "l", "l2"], ["lrange", "l2", "0", "-1"],
        ["copy", "l", "l2"], ["copy", "l", "l2", "replace"], ["copy", "l", "l"],
        ["copy", "l", "l", "db", "1"], ["copy", "l", "lx", "db", "16"], ["copy", "l", "lx", "db", "-1"],
        ["copy", "l", "lx", "db", "x"], ["copy", "l", "lx", "db"], ["copy", "l", "lx", "foo"],
        ["copy", "missing", "x"], ["select", "1"], ["lrange", "l", "0", "-1"], ["select", "0"],
        ["pexpire", "l", "100000"], ["copy", "l", "l3"], ["ttl", "l3"],
        ["move", "l", "0"], ["move", "l", "2"], ["move", "l", "2"], ["move", "missing", "2"],
        ["move", "l3", "99"], ["move", "l3", "-1"], ["move", "l3", "x"], ["move", "l3", str(2 ** 40)],
        ["set", "l3", "x"], ["select", "2"], ["ttl", "l"], ["set", "l3", "y"], ["move", "l3", "0"],
        ["select", "0"], ["get", "l3"], ["exists", "l"],
    ]
    return cmds


def with_footer(body):
    import struct
    data = body + b"\x0a\x00"
    return data + struct.pack("<Q", crc64(data))


def crc64(data):
    # CRC-64/Jones, reflected: the checksum of RDB files and DUMP payloads.
    poly = 0x95AC9329AC4BC9B5
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc


@pytest.mark.parametrize("proto", [2, 3])
def test_edge_cases_match_redis(server, redis_ref, proto):
    rng = random.Random(16)
    payload = server.client(decode_responses=False)
    payload.flushall()
    payload.set("tmp", "some value")
    p = payload.dump("tmp")
    conns = [ExactConn(server.port), ExactConn(redis_ref.port)]
    for c in conns:
        c.call("flushall")
        if proto == 3:
            c.call("hello", "3")
    for cmd in edge_commands(rng, p):
        a = conns[0].call(*cmd)
        b = conns[1].call(*cmd)
        assert a[0] == b[0], (cmd, a[0], b[0])
    assert conns[0].call("ping")[1] == b"PONG"


def test_corrupt_payloads_never_crash(server):
    """Random corruptions of real payloads: each reply is an error or OK,
    and the server still answers."""
    c = server.client(decode_responses=False)
    c.flushall()
    fill(c)
    rng = random.Random(7)
    payloads = [c.dump(k) for k in KEYS if k not in ("bl", "sb", "hb")]
    for i in range(400):
        p = bytearray(rng.choice(payloads))
        body = p[:-10]
        for _ in range(rng.randint(1, 4)):
            if not body:
                break
            j = rng.randrange(len(body))
            body[j] = rng.randrange(256)
        if rng.random() < 0.3 and len(body) > 1:
            del body[rng.randrange(len(body)):]
        raw = with_footer(bytes(body)) if rng.random() < 0.8 else bytes(body) + bytes(p[-10:])
        try:
            c.restore("fz%d" % i, 0, raw, replace=True)
        except Exception as e:  # noqa: BLE001 - any error reply is fine
            assert "Bad data format" in str(e) or "checksum" in str(e), str(e)
    assert c.ping()


def test_copy_is_independent(server):
    c = server.client()
    c.flushall()
    fill(c)
    for k in KEYS:
        assert c.copy(k, k + ":c") == 1
        assert contents(c, k + ":c") == contents(c, k)
        assert c.object("encoding", k + ":c") == c.object("encoding", k)
    c.rpush("l:c", "extra")
    c.sadd("ss:c", "extra")
    assert c.llen("l") == 10 and c.scard("ss") == 2


def test_copy_and_move_events(server):
    c = server.client()
    c.flushall()
    c.config_set("notify-keyspace-events", "KEg")
    try:
        sub = server.client().pubsub()
        sub.psubscribe("__key*__:*")
        sub.get_message(timeout=1)
        c.set("a", "1")
        c.copy("a", "b", destination_db=3)
        c.move("a", 2)
        seen = []
        deadline = time.time() + 2
        while time.time() < deadline and len(seen) < 6:
            m = sub.get_message(timeout=0.2)
            if m and m["type"] == "pmessage":
                seen.append((m["channel"], m["data"]))
        assert ("__keyevent@3__:copy_to", "b") in seen
        assert ("__keyevent@0__:move_from", "a") in seen
        assert ("__keyevent@2__:move_to", "a") in seen
        sub.close()
    finally:
        c.config_set("notify-keyspace-events", "")
