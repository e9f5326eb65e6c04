"""Keyspace notifications of the collection types (lists, hashes, sets,
sorted sets, served blocking pops) compared with Debian's redis-server.

Each scenario is one command sequence run against both servers with
notify-keyspace-events KEA and a subscriber on __keyevent@*__:* and
__keyspace@*__:*; the (channel, message) lists must be equal, in order,
and so must the replies (SPOP's random member aside).  Steps are tuples:
    ("cmd", args...)      send on the main connection, record the reply
    ("block", name, args...)  send on connection `name` and wait until the
                          server counts it as blocked
    ("served", name)      read connection `name`'s reply (it was served)
A last test pins a few sequences without the reference, so a machine
without redis-server still checks the orders Redis 7.0 uses."""
import time

import pytest
import redis

from rawresp import RawConn

FENCE_CHANNEL = "__keyevent@0__:zz-fence"


def wait_blocked(info, n, timeout=3.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if info.info("clients")["blocked_clients"] == n:
            return
        time.sleep(0.005)
    raise AssertionError("expected %d blocked clients, got %d" % (n, info.info("clients")["blocked_clients"]))


def run(port, steps, db=0):
    """Run steps on the server at port; returns (notifications, replies)."""
    info = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
    info.flushall()
    info.config_set("notify-keyspace-events", "KEA")
    sub = RawConn(port)
    sub.send("PSUBSCRIBE", "__keyevent@*__:*", "__keyspace@*__:*")
    assert sub.read()[0] == b"psubscribe"
    assert sub.read()[0] == b"psubscribe"
    main = RawConn(port)
    if db:
        assert main.call("SELECT", db) == "OK"
    blockers, replies, nblocked = {}, [], 0
    try:
        for step in steps:
            kind, args = step[0], step[1:]
            if kind == "cmd":
                reply = main.call(*args)
                replies.append(None if args[0].upper() == "SPOP" else reply)
            elif kind == "block":
                conn = blockers.setdefault(args[0], RawConn(port))
                if db:
                    assert conn.call("SELECT", db) == "OK"
                conn.send(*args[1:])
                nblocked += 1
                wait_blocked(info, nblocked)
            elif kind == "served":
                replies.append((args[0], blockers[args[0]].read()))
                nblocked -= 1
            else:
                raise ValueError(kind)
        # Everything published before this message reached sub before it.
        main.call("PUBLISH", FENCE_CHANNEL, "end")
        events = []
        while True:
            m = sub.read()
            assert m[0] == b"pmessage", m
            if m[2].decode() == FENCE_CHANNEL:
                break
            events.append((m[2].decode(), m[3].decode()))
        assert info.info("clients")["blocked_clients"] == 0
        return events, replies
    finally:
        info.config_set("notify-keyspace-events", "")
        for c in [sub, main] + list(blockers.values()):
            c.close()
        info.close()


def compare(server, redis_ref, steps, db=0):
    ours, our_replies = run(server.port, steps, db)
    ref, ref_replies = run(redis_ref.port, steps, db)
    assert ours == ref
    assert our_replies == ref_replies
    assert ref, "the scenario publishes something"
    return ref


def C(*args):
    return ("cmd",) + args


LIST_STEPS = [
    C("RPUSH", "l", "a", "b", "c"), C("LPUSH", "l", "z"),
    C("LPUSHX", "nol", "x"), C("RPUSHX", "nol", "x"),
    C("RPUSHX", "l", "d", "e"), C("LPUSHX", "l", "y"),
    C("LINSERT", "l", "BEFORE", "a", "q"), C("LINSERT", "l", "AFTER", "nothere", "q"),
    C("LINSERT", "nol", "BEFORE", "a", "q"),
    C("LSET", "l", "0", "w"), C("LSET", "l", "99", "w"),
    C("LREM", "l", "1", "q"), C("LREM", "l", "0", "nothere"),
    C("LTRIM", "l", "0", "5"), C("LTRIM", "l", "0", "-1"),
    C("LPOP", "l"), C("RPOP", "l", "2"), C("LPOP", "l", "0"), C("LPOP", "nol"), C("RPOP", "nol", "3"),
    C("RPUSH", "l", "f", "g", "h"),
    C("LMOVE", "l", "l2", "LEFT", "RIGHT"), C("RPOPLPUSH", "l2", "l3"),
    C("LMOVE", "l", "l", "LEFT", "LEFT"), C("LMOVE", "nol", "l", "LEFT", "LEFT"),
    C("LMPOP", "2", "nol", "l", "LEFT", "COUNT", "2"),
    C("LMPOP", "2", "nol", "l", "RIGHT", "COUNT", "10"),      # empties l
    C("RPUSH", "t", "1", "2", "3"), C("LTRIM", "t", "5", "10"),   # empties t
    C("RPUSH", "r", "x", "x"), C("LREM", "r", "0", "x"),          # empties r
    C("RPUSH", "one", "v"), C("RPOPLPUSH", "one", "one"),         # same key, one value
    C("RPUSH", "m", "v"), C("LMOVE", "m", "dst", "RIGHT", "LEFT"),   # source emptied
    C("RPUSH", "p", "v"), C("RPOP", "p", "5"),
    C("LPOP", "l3"), C("LPOP", "dst"),
    C("SET", "str", "v"), C("LPUSH", "str", "x"), C("LMOVE", "l2", "str", "LEFT", "LEFT"),
]

HASH_STEPS = [
    C("HSET", "h", "f1", "v1", "f2", "v2"), C("HSET", "h", "f1", "v1"), C("HMSET", "h", "f3", "v3"),
    C("HSETNX", "h", "f1", "x"), C("HSETNX", "h", "f9", "x"), C("HSETNX", "h2", "f", "x"),
    C("HINCRBY", "h", "n", "5"), C("HINCRBY", "h", "n", "-2"), C("HINCRBYFLOAT", "h", "fl", "1.5"),
    C("HINCRBY", "h", "f1", "1"), C("HINCRBYFLOAT", "h", "f1", "1"),
    C("HDEL", "h", "nothere"), C("HDEL", "nohash", "f"), C("HDEL", "h", "f1", "f2"),
    C("HDEL", "h2", "f"), C("HDEL", "h", "f3", "f9", "n", "fl", "extra"),
    C("HINCRBY", "new", "c", "1"), C("HINCRBYFLOAT", "new2", "c", "2.5"),
    C("SET", "str", "v"), C("HSET", "str", "a", "b"), C("HDEL", "str", "a"),
]

SET_STEPS = [
    C("SADD", "s", "a", "b", "c", "d", "1", "2"), C("SADD", "s", "a"),
    C("SREM", "s", "zz"), C("SREM", "s", "a"), C("SREM", "nos", "a"),
    C("SMOVE", "s", "s2", "b"), C("SMOVE", "s", "s2", "nothere"),
    C("SADD", "s3", "b"), C("SMOVE", "s2", "s3", "b"),     # s2 emptied; s3 had b
    C("SMOVE", "s", "s", "c"), C("SMOVE", "nos", "s", "c"),
    C("SPOP", "s"), C("SPOP", "s", "0"), C("SPOP", "s", "1"), C("SPOP", "nos"),
    C("SADD", "p", "1", "2", "3"), C("SPOP", "p", "10"),   # whole set at once
    C("SADD", "p1", "x"), C("SPOP", "p1"),
    C("SADD", "p2", "x", "y"), C("SPOP", "p2", "2"),
    C("SADD", "a1", "1", "2", "3"), C("SADD", "a2", "2", "3", "4"),
    C("SINTERSTORE", "d", "a1", "a2"), C("SUNIONSTORE", "d", "a1", "a2"), C("SDIFFSTORE", "d", "a1", "a2"),
    C("SDIFFSTORE", "d", "a1", "a1"),          # empty result, d existed
    C("SDIFFSTORE", "d", "a1", "a1"),          # empty result, nothing to delete
    C("SUNIONSTORE", "d", "a1"), C("SINTERSTORE", "d", "a1", "nokey"),
    C("SINTERSTORE", "d", "a1", "nokey"),
    C("SUNIONSTORE", "d", "a2"), C("SUNIONSTORE", "d", "nokey"),
    C("SET", "ds", "str"), C("SINTERSTORE", "ds", "a2", "a2"),
    C("SREM", "a1", "1", "2", "3", "4"),
    C("SET", "str", "v"), C("SADD", "str", "x"), C("SMOVE", "a2", "str", "2"),
]

ZSET_STEPS = [
    C("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
    C("ZADD", "z", "1", "a"), C("ZADD", "z", "CH", "10", "a"), C("ZADD", "z", "20", "a"),
    C("ZADD", "z", "XX", "1", "nothere"), C("ZADD", "z", "NX", "1", "a"),
    C("ZADD", "z", "INCR", "5", "b"), C("ZADD", "z", "GT", "0", "c"), C("ZADD", "z", "NX", "INCR", "1", "a"),
    C("ZADD", "nz", "XX", "1", "a"),
    C("ZINCRBY", "z", "2", "c"), C("ZINCRBY", "newz", "1", "m"),
    C("ZINCRBY", "z", "0", "c"), C("ZADD", "z", "INCR", "0", "c"),   # score unchanged: nothing published
    C("ZREM", "z", "nothere"), C("ZREM", "z", "a"), C("ZREM", "noz", "a"),
    C("ZREMRANGEBYSCORE", "z", "100", "200"), C("ZREMRANGEBYSCORE", "z", "0", "3"),
    C("ZREMRANGEBYRANK", "z", "0", "0"), C("ZREMRANGEBYRANK", "z", "50", "60"),
    C("ZADD", "lx", "0", "a", "0", "b", "0", "c", "0", "d"),
    C("ZREMRANGEBYLEX", "lx", "[a", "[b"), C("ZREMRANGEBYLEX", "lx", "[x", "[y"),
    C("ZREMRANGEBYLEX", "lx", "-", "+"),       # empties lx
    C("ZADD", "z", "7", "g", "8", "h", "9", "i"),
    C("ZPOPMIN", "z"), C("ZPOPMAX", "z", "2"), C("ZPOPMIN", "z", "0"), C("ZPOPMIN", "noz"),
    C("ZMPOP", "2", "noz", "z", "MAX", "COUNT", "1"),
    C("ZMPOP", "2", "noz", "z", "MIN", "COUNT", "10"),    # empties z
    C("ZADD", "one", "1", "a"), C("ZPOPMAX", "one", "5"),
    C("ZADD", "s1", "1", "a", "2", "b"), C("ZADD", "s2", "1", "b", "3", "c"),
    C("ZUNIONSTORE", "d", "2", "s1", "s2"), C("ZINTERSTORE", "d", "2", "s1", "s2"),
    C("ZDIFFSTORE", "d", "2", "s1", "s2"),
    C("ZDIFFSTORE", "d", "2", "s1", "s1"), C("ZDIFFSTORE", "d", "2", "s1", "s1"),
    C("ZINTERSTORE", "d", "2", "s1", "nokey"),
    C("ZRANGESTORE", "d", "s1", "0", "-1"), C("ZRANGESTORE", "d", "s1", "5", "10"),
    C("ZRANGESTORE", "d", "s1", "5", "10"),
    C("ZUNIONSTORE", "d", "1", "s2"), C("ZINTERSTORE", "d", "2", "s2", "nokey"),
    C("ZREM", "newz", "m"), C("ZREM", "s1", "a", "b", "zz"),
    C("SET", "str", "v"), C("ZADD", "str", "1", "a"), C("ZINCRBY", "str", "1", "a"),
]


def B(name, *args):
    return ("block", name) + args


def S(name):
    return ("served", name)


BLOCKING_STEPS = [
    # Served after the push that made the key exist; the list keeps a value.
    B("b1", "BLPOP", "bl1", "0"), C("RPUSH", "bl1", "a", "b"), S("b1"),
    # The served pop empties the key.
    B("b2", "BRPOP", "nokey", "bl2", "0"), C("LPUSH", "bl2", "x"), S("b2"),
    B("b3", "BLMOVE", "bsrc", "bdst", "LEFT", "RIGHT", "0"), C("RPUSH", "bsrc", "v"), S("b3"),
    B("b4", "BLMPOP", "0", "2", "bx", "by", "RIGHT", "COUNT", "5"), C("RPUSH", "by", "1", "2"), S("b4"),
    B("b5", "BRPOPLPUSH", "bq", "bq2", "0"), C("LPUSH", "bq", "1", "2"), S("b5"),
    # Sorted sets.
    B("z1", "BZPOPMIN", "bz", "0"), C("ZADD", "bz", "1", "a", "2", "b"), S("z1"),
    B("z2", "BZPOPMAX", "bz2", "0"), C("ZADD", "bz2", "1", "a"), S("z2"),
    B("z3", "BZMPOP", "0", "1", "bz3", "MIN", "COUNT", "10"), C("ZADD", "bz3", "1", "a", "2", "b"), S("z3"),
    B("z4", "BZPOPMIN", "bz4", "0"), C("ZINCRBY", "bz4", "3", "m"), S("z4"),
    # A chain: the BLMOVE's push serves the BLPOP in the same pass.
    B("c1", "BLMOVE", "ch1", "ch2", "RIGHT", "LEFT", "0"), B("c2", "BLPOP", "ch2", "0"),
    C("LPUSH", "ch1", "v"), S("c1"), S("c2"),
    # Two waiters, one value: the second keeps waiting until the next push.
    B("w1", "BLPOP", "two", "0"), B("w2", "BLPOP", "two", "0"),
    C("RPUSH", "two", "a"), S("w1"), C("RPUSH", "two", "b"), S("w2"),
    # Pushes inside a transaction: the waiter is served after EXEC.
    B("m1", "BLPOP", "mx", "0"), C("MULTI"), C("RPUSH", "mx", "a"), C("RPUSH", "mx", "b"), C("EXEC"), S("m1"),
    # A blocking command that finds a value right away.
    C("RPUSH", "now", "v"), C("BLPOP", "now", "0"), C("ZADD", "nowz", "1", "a"), C("BZPOPMAX", "nowz", "0"),
    C("RPUSH", "now", "a", "b"), C("BLMPOP", "0", "1", "now", "LEFT", "COUNT", "9"),
    C("ZADD", "nowz", "1", "a"), C("BZMPOP", "0", "1", "nowz", "MAX"),
]


@pytest.mark.differential
def test_list_events_match_redis(server, redis_ref):
    ref = compare(server, redis_ref, LIST_STEPS)
    assert ("__keyevent@0__:ltrim", "t") in ref and ("__keyevent@0__:del", "t") in ref


@pytest.mark.differential
def test_hash_events_match_redis(server, redis_ref):
    ref = compare(server, redis_ref, HASH_STEPS)
    assert ("__keyspace@0__:h2", "del") in ref


@pytest.mark.differential
def test_set_events_match_redis(server, redis_ref):
    ref = compare(server, redis_ref, SET_STEPS)
    assert ("__keyevent@0__:sdiffstore", "d") in ref


@pytest.mark.differential
def test_zset_events_match_redis(server, redis_ref):
    ref = compare(server, redis_ref, ZSET_STEPS)
    assert ("__keyevent@0__:zrangestore", "d") in ref


@pytest.mark.differential
def test_served_blocking_pop_events_match_redis(server, redis_ref):
    ref = compare(server, redis_ref, BLOCKING_STEPS)
    assert ("__keyevent@0__:zpopmin", "bz") in ref


@pytest.mark.differential
def test_events_carry_the_database_number(server, redis_ref):
    steps = [C("RPUSH", "l", "a"), C("LPOP", "l"), C("HSET", "h", "f", "v"), C("SADD", "s", "m"),
             C("ZADD", "z", "1", "m"), B("b", "BZPOPMIN", "z2", "0"), C("ZADD", "z2", "1", "a"), S("b")]
    ref = compare(server, redis_ref, steps, db=5)
    assert all("@5__:" in ch for ch, _ in ref)


def keyevents(events):
    return [(ch.split(":", 1)[1], key) for ch, key in events if ch.startswith("__keyevent")]


def test_orders_without_reference(server):
    """The orders Redis 7.0 publishes, spelled out (observed on 7.0.15)."""
    steps = [
        C("RPUSH", "m", "v"), C("LMOVE", "m", "dst", "RIGHT", "LEFT"),
        C("SADD", "s", "x"), C("SMOVE", "s", "s2", "x"),
        C("HSET", "h", "f", "v"), C("HDEL", "h", "f"),
        C("ZADD", "z", "1", "a"), C("ZPOPMIN", "z", "3"),
        C("SADD", "p", "1", "2"), C("SPOP", "p", "5"),
        C("SADD", "a", "1"), C("SUNIONSTORE", "d", "a"), C("SINTERSTORE", "d", "a", "none"),
        B("b", "BLMOVE", "src", "out", "LEFT", "RIGHT", "0"), C("LPUSH", "src", "v"), S("b"),
    ]
    events, replies = run(server.port, steps)
    assert keyevents(events) == [
        ("rpush", "m"), ("lpush", "dst"), ("rpop", "m"), ("del", "m"),
        ("sadd", "s"), ("srem", "s"), ("del", "s"), ("sadd", "s2"),
        ("hset", "h"), ("hdel", "h"), ("del", "h"),
        ("zadd", "z"), ("zpopmin", "z"), ("del", "z"),
        ("sadd", "p"), ("spop", "p"), ("del", "p"),
        ("sadd", "a"), ("sunionstore", "d"), ("del", "d"),
        ("lpush", "src"), ("rpush", "out"), ("lpop", "src"), ("del", "src"),
    ]
    # Each event also went to the key's own channel, right before.
    assert events[0] == ("__keyspace@0__:m", "rpush") and events[1] == ("__keyevent@0__:rpush", "m")
    assert replies[-1] == ("b", b"v")
