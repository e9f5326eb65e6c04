"""Hash commands: replies, errors, empty-key deletion, listpack -> hashtable
conversion at hash-max-listpack-entries/-value, RESP3 shapes, MEMORY USAGE."""
import pytest
import redis

from conftest import raw_request


def err(fn, *a):
    with pytest.raises(redis.ResponseError) as e:
        fn(*a)
    return str(e.value)


WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_hset_hget_hmget_hlen(r):
    assert r.execute_command("HSET", "h", "a", "1", "b", "2") == 2
    assert r.execute_command("HSET", "h", "a", "x", "c", "3") == 1
    assert r.hget("h", "a") == "x"
    assert r.hget("h", "nope") is None
    assert r.hget("missing", "a") is None
    assert r.hmget("h", "a", "zz", "c") == ["x", None, "3"]
    assert r.hmget("missing", "a", "b") == [None, None]
    assert r.hlen("h") == 3 and r.hlen("missing") == 0
    assert r.execute_command("HMSET", "h", "d", "4") in (True, "OK")
    assert r.hgetall("h") == {"a": "x", "b": "2", "c": "3", "d": "4"}
    assert r.hgetall("missing") == {}


def test_hset_arity_and_wrongtype(r):
    assert err(r.execute_command, "HSET", "h", "a") == "wrong number of arguments for 'hset' command"
    assert err(r.execute_command, "HSET", "h", "a", "1", "b") == "wrong number of arguments for 'hset' command"
    assert err(r.execute_command, "HMSET", "h", "a", "1", "b") == "wrong number of arguments for 'hmset' command"
    assert err(r.execute_command, "HGET", "h") == "wrong number of arguments for 'hget' command"
    r.set("s", "x")
    for args in (("HSET", "s", "a", "1"), ("HGET", "s", "a"), ("HGETALL", "s"), ("HDEL", "s", "a"),
                 ("HLEN", "s"), ("HINCRBY", "s", "a", "1"), ("HRANDFIELD", "s"), ("HSCAN", "s", "0"),
                 ("HKEYS", "s"), ("HVALS", "s"), ("HEXISTS", "s", "a"), ("HSTRLEN", "s", "a"),
                 ("HMGET", "s", "a"), ("HSETNX", "s", "a", "1"), ("HINCRBYFLOAT", "s", "a", "1")):
        assert err(r.execute_command, *args) == WRONGTYPE, args


def test_hsetnx_hexists_hstrlen(r):
    assert r.hsetnx("h", "a", "hello") == 1
    assert r.hsetnx("h", "a", "other") == 0
    assert r.hget("h", "a") == "hello"
    assert r.hexists("h", "a") is True and r.hexists("h", "b") is False
    assert r.hexists("missing", "a") is False
    r.hset("h", "n", 12345)
    assert r.hstrlen("h", "a") == 5 and r.hstrlen("h", "n") == 5
    assert r.hstrlen("h", "zz") == 0 and r.hstrlen("missing", "a") == 0


def test_hdel_removes_empty_key(r):
    r.hset("h", mapping={"a": 1, "b": 2})
    assert r.hdel("h", "a", "zz") == 1
    assert r.exists("h") == 1
    assert r.hdel("h", "b", "a") == 1
    assert r.exists("h") == 0
    assert r.hdel("missing", "a") == 0


def test_hkeys_hvals_order_listpack(r):
    r.hset("h", mapping={"z": 1, "a": 2, "m": 3})
    assert r.hkeys("h") == ["z", "a", "m"]   # listpack keeps insertion order
    assert r.hvals("h") == ["1", "2", "3"]
    assert r.hkeys("missing") == [] and r.hvals("missing") == []


def test_hincrby(r):
    assert r.hincrby("h", "n", 5) == 5
    assert r.hincrby("h", "n", -7) == -2
    r.hset("h", "s", "abc")
    assert err(r.hincrby, "h", "s", 1) == "hash value is not an integer"
    assert err(r.execute_command, "HINCRBY", "h", "n", "x") == "value is not an integer or out of range"
    r.hset("h", "big", 2 ** 63 - 2)
    assert err(r.hincrby, "h", "big", 2) == "increment or decrement would overflow"
    assert r.hget("h", "big") == str(2 ** 63 - 2)


def test_hincrbyfloat(r):
    r.response_callbacks.clear()   # keep the exact reply strings
    assert r.execute_command("HINCRBYFLOAT", "h", "f", "10.5") == "10.5"
    assert r.execute_command("HINCRBYFLOAT", "h", "f", "0.1") == "10.6"
    assert r.execute_command("HINCRBYFLOAT", "h", "f", "-5") == "5.6"
    assert r.execute_command("HINCRBYFLOAT", "h", "i", "3") == "3"
    assert r.execute_command("HINCRBYFLOAT", "h", "e", "5.0e3") == "5000"
    r.hset("h", "s", "abc")
    assert err(r.execute_command, "HINCRBYFLOAT", "h", "s", "1") == "hash value is not a float"
    assert err(r.execute_command, "HINCRBYFLOAT", "h", "f", "x") == "value is not a valid float"
    assert err(r.execute_command, "HINCRBYFLOAT", "h", "f", "inf") == "value is NaN or Infinity"


def test_hrandfield(r):
    assert r.hrandfield("missing") is None
    assert r.hrandfield("missing", 3) == []
    fields = {"f%d" % i: str(i) for i in range(10)}
    r.hset("h", mapping=fields)
    assert r.hrandfield("h") in fields
    got = r.hrandfield("h", 5)
    assert len(got) == 5 and len(set(got)) == 5 and set(got) <= set(fields)
    assert sorted(r.hrandfield("h", 50)) == sorted(fields)
    rep = r.hrandfield("h", -30)
    assert len(rep) == 30 and set(rep) <= set(fields)
    assert r.hrandfield("h", 0) == []
    flat = r.execute_command("HRANDFIELD", "h", 3, "WITHVALUES")
    assert len(flat) == 6
    for f, v in zip(flat[0::2], flat[1::2]):
        assert fields[f] == v
    assert err(r.execute_command, "HRANDFIELD", "h", 3, "BAD") == "syntax error"
    assert err(r.execute_command, "HRANDFIELD", "h", "x") == "value is not an integer or out of range"
    assert err(r.execute_command, "HRANDFIELD", "h", "x", "BAD") == "value is not an integer or out of range"
    assert err(r.execute_command, "HRANDFIELD", "h", str(2 ** 62), "WITHVALUES") == "value is out of range"


@pytest.mark.parametrize("encoding", ["listpack", "hashtable"])
def test_hscan_all_fields(r, encoding):
    n = 10 if encoding == "listpack" else 1000   # above hash-max-listpack-entries (512)
    r.hset("h", mapping={"f%d" % i: i for i in range(n)})
    assert r.object("encoding", "h") == encoding
    seen = {}
    cursor = 0
    while True:
        cursor, page = r.hscan("h", cursor, count=20)
        seen.update(page)
        if cursor == 0:
            break
    assert seen == {"f%d" % i: str(i) for i in range(n)}
    cursor, page = r.hscan("h", 0, match="f1*", count=1000)
    assert set(page) == {k for k in seen if k.startswith("f1")}
    assert err(r.execute_command, "HSCAN", "h", "0", "COUNT", "0") == "syntax error"
    assert err(r.execute_command, "HSCAN", "h", "x") == "invalid cursor"
    assert err(r.execute_command, "HSCAN", "h", "0", "BAD") == "syntax error"
    assert r.hscan("missing", 0) == (0, {})


def test_encoding_conversion_entries(r):
    r.config_set("hash-max-listpack-entries", 4)
    try:
        r.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4})
        assert r.object("encoding", "h") == "listpack"
        r.hset("h", "e", 5)
        assert r.object("encoding", "h") == "hashtable"
        assert r.hgetall("h") == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}
        r.hdel("h", "a", "b", "c")
        assert r.object("encoding", "h") == "hashtable"   # never converts back
    finally:
        r.config_set("hash-max-listpack-entries", 512)


def test_encoding_conversion_value_length(r):
    r.config_set("hash-max-listpack-value", 8)
    try:
        r.hset("h", "a", "x" * 8)
        assert r.object("encoding", "h") == "listpack"
        r.hset("h", "b", "x" * 9)
        assert r.object("encoding", "h") == "hashtable"
        r.hset("h2", "f" * 9, "v")
        assert r.object("encoding", "h2") == "hashtable"
        r.hset("h3", "n", 1)
        r.hincrby("h3", "n", 10 ** 12)                     # the value grows past 8 bytes
        assert r.object("encoding", "h3") == "hashtable"
        assert r.hget("h3", "n") == str(10 ** 12 + 1)
    finally:
        r.config_set("hash-max-listpack-value", 64)


def test_resp3_shapes(r, server):
    r.hset("h", "a", "1")
    out, _ = raw_request(server.port, b"HELLO 3\r\nHGETALL h\r\nHRANDFIELD h 1 WITHVALUES\r\n"
                                      b"HGETALL missing\r\nHSCAN h 0\r\n", 0.5)
    assert out.endswith(b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"           # HGETALL: a map
                        b"*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"       # pairs nested in RESP3
                        b"%0\r\n"
                        b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")  # HSCAN stays flat


def test_memory_usage_grows_with_encoding(r):
    r.hset("small", mapping={"f%d" % i: i for i in range(10)})
    r.hset("big", mapping={"f%d" % i: "v" * 20 for i in range(1000)})
    small = r.memory_usage("small")
    big = r.memory_usage("big", samples=0)
    assert 50 < small < 1000
    assert big > 1000 * 30
    assert abs(r.memory_usage("big") - big) < big * 0.5   # sampled estimate is close
