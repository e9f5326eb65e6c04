"""Sorted-set commands: ZADD options, ranges of every kind, pops, algebra,
exact score formatting (%.17g, inf), errors, empty-key deletion, listpack ->
skiplist conversion, RESP3 doubles and nested pairs, MEMORY USAGE."""
import pytest
import redis

from conftest import raw_request


def err(fn, *a):
    with pytest.raises(redis.ResponseError) as e:
        fn(*a)
    return str(e.value)


WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def r(server):
    """A client without redis-py's reply conversions, so scores stay the
    exact strings the server sent."""
    c = server.client()
    c.response_callbacks.clear()
    c.flushall()
    yield c
    c.close()


def cmd(r, *a):
    return r.execute_command(*a)


def zrange_raw(r, *a):
    """ZRANGE without redis-py's float conversion."""
    return r.execute_command("ZRANGE", *a)


def test_zadd_basic_and_scores(r):
    assert cmd(r, "ZADD", "z", 1, "a", 2, "b", "1.5", "c") == 3
    assert cmd(r, "ZADD", "z", 3, "a") == 0
    assert cmd(r, "ZADD", "z", "CH", 4, "a", 5, "d") == 2
    assert zrange_raw(r, "z", 0, -1) == ["c", "b", "a", "d"]
    assert cmd(r, "ZSCORE", "z", "c") == "1.5"
    cmd(r, "ZADD", "z", "0.1", "e", "inf", "f", "-inf", "g")
    assert cmd(r, "ZSCORE", "z", "e") == "0.10000000000000001"
    assert cmd(r, "ZSCORE", "z", "f") == "inf" and cmd(r, "ZSCORE", "z", "g") == "-inf"
    assert cmd(r, "ZSCORE", "z", "nope") is None and cmd(r, "ZSCORE", "missing", "a") is None
    assert cmd(r, "ZMSCORE", "z", "c", "nope", "e") == ["1.5", None, "0.10000000000000001"]
    assert cmd(r, "ZMSCORE", "missing", "a") == [None]
    assert r.zcard("z") == 7 and r.zcard("missing") == 0


def test_zadd_flags(r):
    cmd(r, "ZADD", "z", 10, "a")
    assert cmd(r, "ZADD", "z", "NX", 20, "a", 1, "b") == 1
    assert cmd(r, "ZSCORE", "z", "a") == "10"
    assert cmd(r, "ZADD", "z", "XX", 30, "a", 1, "c") == 0
    assert cmd(r, "ZSCORE", "z", "a") == "30" and cmd(r, "ZSCORE", "z", "c") is None
    assert cmd(r, "ZADD", "z", "GT", "CH", 5, "a", 50, "b") == 1
    assert cmd(r, "ZSCORE", "z", "a") == "30" and cmd(r, "ZSCORE", "z", "b") == "50"
    assert cmd(r, "ZADD", "z", "LT", "CH", 5, "a", 60, "b") == 1
    assert cmd(r, "ZSCORE", "z", "a") == "5" and cmd(r, "ZSCORE", "z", "b") == "50"
    assert cmd(r, "ZADD", "z", "INCR", 2, "a") == "7"
    assert cmd(r, "ZADD", "z", "INCR", "NX", 2, "a") is None
    assert cmd(r, "ZADD", "z", "INCR", "GT", -1, "a") is None
    assert cmd(r, "ZADD", "missing", "XX", 1, "a") == 0 and r.exists("missing") == 0


@pytest.mark.parametrize("args,msg", [
    (("ZADD", "z", "NX", "XX", 1, "a"), "XX and NX options at the same time are not compatible"),
    (("ZADD", "z", "GT", "LT", 1, "a"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("ZADD", "z", "NX", "GT", 1, "a"), "GT, LT, and/or NX options at the same time are not compatible"),
    (("ZADD", "z", "INCR", 1, "a", 2, "b"), "INCR option supports a single increment-element pair"),
    (("ZADD", "z", 1, "a", 2), "syntax error"),
    (("ZADD", "z", "x", "a"), "value is not a valid float"),
    (("ZADD", "z", "nan", "a"), "value is not a valid float"),
    (("ZADD", "z"), "wrong number of arguments for 'zadd' command"),
    (("ZINCRBY", "z", "x", "a"), "value is not a valid float"),
])
def test_zadd_errors(r, args, msg):
    assert err(r.execute_command, *args) == msg
    assert r.exists("z") == 0


def test_zincrby_and_nan(r):
    assert cmd(r, "ZINCRBY", "z", 2, "a") == "2"
    assert cmd(r, "ZINCRBY", "z", "0.5", "a") == "2.5"
    cmd(r, "ZADD", "z", "inf", "b")
    assert err(r.execute_command, "ZINCRBY", "z", "-inf", "b") == "resulting score is not a number (NaN)"
    assert cmd(r, "ZSCORE", "z", "b") == "inf"


def test_zrem_deletes_empty_key(r):
    cmd(r, "ZADD", "z", 1, "a", 2, "b")
    assert r.zrem("z", "a", "x") == 1
    assert r.zrem("z", "b") == 1 and r.exists("z") == 0
    assert r.zrem("missing", "a") == 0


def test_wrongtype(r):
    r.set("s", "x")
    for args in (("ZADD", "s", 1, "a"), ("ZSCORE", "s", "a"), ("ZRANGE", "s", 0, -1), ("ZCARD", "s"),
                 ("ZRANK", "s", "a"), ("ZPOPMIN", "s"), ("ZRANGEBYSCORE", "s", 0, 1), ("ZCOUNT", "s", 0, 1),
                 ("ZLEXCOUNT", "s", "-", "+"), ("ZREM", "s", "a"), ("ZINCRBY", "s", 1, "a"),
                 ("ZREMRANGEBYRANK", "s", 0, 1), ("ZUNION", 1, "s"), ("ZSCAN", "s", 0),
                 ("ZRANDMEMBER", "s"), ("ZMPOP", 1, "s", "MIN"), ("ZMSCORE", "s", "a")):
        assert err(r.execute_command, *args) == WRONGTYPE, args


@pytest.fixture(params=["listpack", "skiplist"])
def z(r, request):
    """A zset a..j with scores 1..10 in either encoding."""
    if request.param == "skiplist":
        r.config_set("zset-max-listpack-entries", 4)
    cmd(r, "ZADD", "z", *sum(([i + 1, chr(97 + i)] for i in range(10)), []))
    assert r.object("encoding", "z") == request.param
    yield r
    r.config_set("zset-max-listpack-entries", 128)


def test_ranges_by_rank(z):
    r = z
    assert zrange_raw(r, "z", 0, 2) == ["a", "b", "c"]
    assert zrange_raw(r, "z", -2, -1) == ["i", "j"]
    assert zrange_raw(r, "z", 5, 100) == ["f", "g", "h", "i", "j"]
    assert zrange_raw(r, "z", 3, 1) == [] and zrange_raw(r, "z", 20, 30) == []
    assert zrange_raw(r, "z", 0, 1, "WITHSCORES") == ["a", "1", "b", "2"]
    assert zrange_raw(r, "z", 0, 1, "REV") == ["j", "i"]
    assert cmd(r, "ZREVRANGE", "z", 0, 1, "WITHSCORES") == ["j", "10", "i", "9"]
    assert r.zrank("z", "c") == 2 and r.zrevrank("z", "c") == 7
    assert r.zrank("z", "nope") is None and r.zrank("missing", "a") is None


def test_ranges_by_score(z):
    r = z
    assert zrange_raw(r, "z", 2, 4, "BYSCORE") == ["b", "c", "d"]
    assert zrange_raw(r, "z", "(2", "(4", "BYSCORE") == ["c"]
    assert zrange_raw(r, "z", "-inf", "+inf", "BYSCORE", "LIMIT", 2, 3) == ["c", "d", "e"]
    assert zrange_raw(r, "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", 0, 2) == ["j", "i"]
    assert cmd(r, "ZRANGEBYSCORE", "z", 9, "inf", "WITHSCORES") == ["i", "9", "j", "10"]
    assert cmd(r, "ZREVRANGEBYSCORE", "z", 3, 1) == ["c", "b", "a"]
    assert cmd(r, "ZRANGEBYSCORE", "z", 5, 1) == []
    assert cmd(r, "ZRANGEBYSCORE", "z", 1, 10, "LIMIT", -1, 5) == []
    assert cmd(r, "ZRANGEBYSCORE", "z", 1, 10, "LIMIT", 8, -1) == ["i", "j"]
    assert r.zcount("z", 2, 5) == 4 and r.zcount("z", "(2", "(5") == 2 and r.zcount("z", 20, 30) == 0
    assert err(r.execute_command, "ZRANGEBYSCORE", "z", "x", 1) == "min or max is not a float"
    assert err(r.execute_command, "ZCOUNT", "z", "(", 1) == "min or max is not a float"


def test_lex_ranges(r):
    cmd(r, "ZADD", "l", *sum(([0, m] for m in "abcdefg"), []))
    for enc_limit in (128, 3):
        r.config_set("zset-max-listpack-entries", enc_limit)
        cmd(r, "ZADD", "l2", *sum(([0, m] for m in "abcdefg"), []))
        for key in ("l", "l2"):
            assert cmd(r, "ZRANGEBYLEX", key, "[b", "(e") == ["b", "c", "d"]
            assert cmd(r, "ZRANGEBYLEX", key, "-", "+", "LIMIT", 1, 2) == ["b", "c"]
            assert cmd(r, "ZREVRANGEBYLEX", key, "+", "[e") == ["g", "f", "e"]
            assert zrange_raw(r, key, "[c", "[a", "BYLEX", "REV") == ["c", "b", "a"]
            assert r.zlexcount(key, "(a", "[c") == 2
        r.delete("l2")
    r.config_set("zset-max-listpack-entries", 128)
    assert err(r.execute_command, "ZRANGEBYLEX", "l", "b", "+") == "min or max not valid string range item"
    assert err(r.execute_command, "ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES") == \
        "syntax error, WITHSCORES not supported in combination with BYLEX"
    assert err(r.execute_command, "ZRANGE", "l", 0, 1, "LIMIT", 0, 1) == \
        "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
    assert err(r.execute_command, "ZRANGEBYSCORE", "l", 0, 1, "REV") == "syntax error"
    assert r.zremrangebylex("l", "[a", "[c") == 3
    assert cmd(r, "ZRANGE", "l", 0, -1) == ["d", "e", "f", "g"]


def test_zrangestore(z):
    r = z
    assert cmd(r, "ZRANGESTORE", "dst", "z", 0, 2) == 3
    assert cmd(r, "ZRANGE", "dst", 0, -1, "WITHSCORES") == ["a", "1", "b", "2", "c", "3"]
    assert cmd(r, "ZRANGESTORE", "dst", "z", "+inf", 5, "BYSCORE", "REV", "LIMIT", 0, 2) == 2
    assert cmd(r, "ZRANGE", "dst", 0, -1) == ["i", "j"]
    assert cmd(r, "ZRANGESTORE", "dst", "z", 50, 60, "BYSCORE") == 0 and r.exists("dst") == 0
    assert cmd(r, "ZRANGESTORE", "dst", "missing", 0, -1) == 0
    assert err(r.execute_command, "ZRANGESTORE", "dst", "z", 0, -1, "WITHSCORES") == "syntax error"


def test_zremrange(z):
    r = z
    assert r.zremrangebyrank("z", 0, 1) == 2
    assert r.zremrangebyscore("z", "(8", "+inf") == 2
    assert cmd(r, "ZRANGE", "z", 0, -1) == ["c", "d", "e", "f", "g", "h"]
    assert r.zremrangebyrank("z", 10, 20) == 0
    assert r.zremrangebyrank("z", 0, -1) == 6 and r.exists("z") == 0
    assert r.zremrangebyscore("missing", 0, 1) == 0


def test_pops(z):
    r = z
    assert cmd(r, "ZPOPMIN", "z") == ["a", "1"]
    assert cmd(r, "ZPOPMAX", "z", 2) == ["j", "10", "i", "9"]
    assert cmd(r, "ZPOPMIN", "z", 0) == []
    assert cmd(r, "ZPOPMIN", "missing") == []
    assert err(r.execute_command, "ZPOPMIN", "z", -1) == "value is out of range, must be positive"
    assert err(r.execute_command, "ZPOPMIN", "z", 1, 2) == "syntax error"
    assert cmd(r, "ZMPOP", 2, "missing", "z", "MIN", "COUNT", 2) == ["z", [["b", "2"], ["c", "3"]]]
    assert cmd(r, "ZMPOP", 1, "z", "MAX") == ["z", [["h", "8"]]]
    assert cmd(r, "ZMPOP", 1, "missing", "MAX") is None
    assert err(r.execute_command, "ZMPOP", 0, "z", "MIN") == "numkeys should be greater than 0"
    assert err(r.execute_command, "ZMPOP", 1, "z", "MID") == "syntax error"
    assert err(r.execute_command, "ZMPOP", 1, "z", "MIN", "COUNT", 0) == "count should be greater than 0"
    assert cmd(r, "ZPOPMIN", "z", 100) == ["d", "4", "e", "5", "f", "6", "g", "7"]
    assert r.exists("z") == 0


def test_zrandmember(z):
    r = z
    members = set("abcdefghij")
    assert cmd(r, "ZRANDMEMBER", "z") in members
    got = cmd(r, "ZRANDMEMBER", "z", 4)
    assert len(set(got)) == 4 and set(got) <= members
    assert sorted(cmd(r, "ZRANDMEMBER", "z", 50)) == sorted(members)
    assert len(cmd(r, "ZRANDMEMBER", "z", -25)) == 25
    flat = cmd(r, "ZRANDMEMBER", "z", 3, "WITHSCORES")
    for m, s in zip(flat[0::2], flat[1::2]):
        assert ord(m) - 96 == int(s)
    assert cmd(r, "ZRANDMEMBER", "missing") is None and cmd(r, "ZRANDMEMBER", "missing", 2) == []
    assert err(r.execute_command, "ZRANDMEMBER", "z", 1, "X") == "syntax error"


def test_algebra(r):
    cmd(r, "ZADD", "a", 1, "x", 2, "y", 3, "z")
    cmd(r, "ZADD", "b", 10, "y", 20, "z", 30, "w")
    r.sadd("s", "x", "w")
    assert cmd(r, "ZUNION", 2, "a", "b", "WITHSCORES") == ["x", "1", "y", "12", "z", "23", "w", "30"]
    assert cmd(r, "ZINTER", 2, "a", "b", "AGGREGATE", "MAX", "WITHSCORES") == ["y", "10", "z", "20"]
    assert cmd(r, "ZINTER", 2, "a", "b", "WEIGHTS", 2, "0.5", "WITHSCORES") == ["y", "9", "z", "16"]
    assert cmd(r, "ZDIFF", 2, "a", "b", "WITHSCORES") == ["x", "1"]
    assert cmd(r, "ZUNION", 2, "a", "s", "AGGREGATE", "MIN", "WITHSCORES") == ["w", "1", "x", "1", "y", "2", "z", "3"]
    assert cmd(r, "ZUNIONSTORE", "d", 2, "a", "b") == 4
    assert cmd(r, "ZRANGE", "d", 0, -1) == ["x", "y", "z", "w"]
    assert cmd(r, "ZINTERSTORE", "d", 2, "a", "missing") == 0 and r.exists("d") == 0
    assert cmd(r, "ZDIFFSTORE", "d", 1, "a") == 3
    cmd(r, "ZADD", "inf", "inf", "x")
    cmd(r, "ZADD", "ninf", "-inf", "x")
    assert cmd(r, "ZUNION", 2, "inf", "ninf", "WITHSCORES") == ["x", "0"]   # inf + -inf is 0
    assert err(r.execute_command, "ZUNION", 0, "a") == "at least 1 input key is needed for 'zunion' command"
    assert err(r.execute_command, "ZUNION", 3, "a", "b") == "syntax error"
    assert err(r.execute_command, "ZUNION", 2, "a", "b", "WEIGHTS", 1, "x") == "weight value is not a float"
    assert err(r.execute_command, "ZUNION", 2, "a", "b", "AGGREGATE", "AVG") == "syntax error"
    assert err(r.execute_command, "ZDIFF", 2, "a", "b", "WEIGHTS", 1, 1) == "syntax error"
    assert err(r.execute_command, "ZUNIONSTORE", "d", 1, "a", "WITHSCORES") == "syntax error"
    r.set("str", "v")
    assert err(r.execute_command, "ZUNION", 2, "a", "str") == WRONGTYPE


def test_encoding_conversion(r):
    r.config_set("zset-max-listpack-entries", 3)
    r.config_set("zset-max-listpack-value", 5)
    try:
        cmd(r, "ZADD", "z", 1, "a", 2, "b", 3, "c")
        assert r.object("encoding", "z") == "listpack"
        cmd(r, "ZADD", "z", 4, "d")
        assert r.object("encoding", "z") == "skiplist"
        cmd(r, "ZADD", "v", 1, "abcdef")
        assert r.object("encoding", "v") == "skiplist"
        cmd(r, "ZADD", "w", 1, "ab")
        cmd(r, "ZADD", "w", 2, "abcdef")
        assert r.object("encoding", "w") == "skiplist"
        r.zrem("z", "a", "b")
        assert r.object("encoding", "z") == "skiplist"     # ZREM does not convert back
        cmd(r, "ZUNIONSTORE", "u", 1, "z")                  # ... but a store does
        assert r.object("encoding", "u") == "listpack"
        assert cmd(r, "ZRANGE", "u", 0, -1, "WITHSCORES") == ["c", "3", "d", "4"]
    finally:
        r.config_set("zset-max-listpack-entries", 128)
        r.config_set("zset-max-listpack-value", 64)


@pytest.mark.parametrize("n", [10, 500])
def test_zscan(r, n):
    cmd(r, "ZADD", "z", *sum(([i + 0.5, "m%d" % i] for i in range(n)), []))
    seen = {}
    cursor = 0
    while True:
        cursor, page = r.execute_command("ZSCAN", "z", cursor, "COUNT", 25)
        seen.update(zip(page[0::2], page[1::2]))
        if int(cursor) == 0:
            break
    assert seen == {"m%d" % i: repr(i + 0.5) for i in range(n)}


def test_resp3_doubles_and_pairs(server):
    out, _ = raw_request(server.port, b"HELLO 3\r\nDEL z\r\nZADD z 1.5 a 2 b\r\nZSCORE z a\r\n"
                                      b"ZRANGE z 0 -1 WITHSCORES\r\nZPOPMIN z\r\nZINCRBY z 1 b\r\n"
                                      b"ZMSCORE z b nope\r\nZADD z 1 a\r\nZPOPMAX z 1\r\n", 0.5)
    tail = out[out.index(b":2\r\n", out.index(b"ZADD") if b"ZADD" in out else 0):]
    assert b",1.5\r\n" in tail
    assert b"*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,2\r\n" in tail
    assert b"*2\r\n$1\r\na\r\n,1.5\r\n" in tail                  # ZPOPMIN without count: flat
    assert b",3\r\n" in tail
    assert b"*2\r\n,3\r\n_\r\n" in tail
    assert tail.endswith(b"*1\r\n*2\r\n$1\r\nb\r\n,3\r\n")         # with count: nested


def test_memory_usage(r):
    cmd(r, "ZADD", "small", *sum(([i, "m%d" % i] for i in range(10)), []))
    cmd(r, "ZADD", "big", *sum(([i, "m%d" % i] for i in range(2000)), []))
    assert r.object("encoding", "big") == "skiplist"
    small, big = cmd(r, "MEMORY", "USAGE", "small"), cmd(r, "MEMORY", "USAGE", "big", "SAMPLES", 0)
    assert 50 < small < 1000
    assert big > 2000 * 40
