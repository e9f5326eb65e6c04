"""List commands: replies, errors, empty-key deletion, encoding conversions
(listpack <-> quicklist as Redis 7.2 does them) and MEMORY USAGE."""
import pytest
import redis

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def err(r, *args):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command(*args)
    return str(e.value)


def test_push_and_length(r):
    assert r.lpush("l", "a", "b") == 2
    assert r.rpush("l", "c", 1, -5) == 5
    assert r.lrange("l", 0, -1) == ["b", "a", "c", "1", "-5"]
    assert r.llen("l") == 5 and r.llen("missing") == 0
    assert r.lpushx("missing", "x") == 0 and r.rpushx("missing", "x") == 0
    assert not r.exists("missing")
    assert r.lpushx("l", "z") == 6 and r.execute_command("RPUSHX", "l", "y", "w") == 8
    assert r.lrange("l", 0, -1) == ["z", "b", "a", "c", "1", "-5", "y", "w"]
    assert r.type("l") == "list"


def test_pop_with_and_without_count(r):
    r.rpush("l", *"abcde")
    assert r.lpop("l") == "a" and r.rpop("l") == "e"
    assert r.lpop("l", 2) == ["b", "c"]
    assert r.rpop("l", 0) == []
    assert r.lpop("l", 10) == ["d"]
    assert not r.exists("l"), "a list emptied by a pop must disappear"
    assert r.lpop("l") is None and r.lpop("l", 3) is None
    assert err(r, "LPOP", "l", "-1") == "value is out of range, must be positive"
    assert err(r, "RPOP", "l", "x") == "value is out of range, must be positive"
    assert err(r, "LPOP", "l", "1", "2") == "wrong number of arguments for 'lpop' command"


def test_lrange_bounds(r):
    r.rpush("l", *range(10))
    assert r.lrange("l", 0, 2) == ["0", "1", "2"]
    assert r.lrange("l", -3, -1) == ["7", "8", "9"]
    assert r.lrange("l", -100, 1) == ["0", "1"]
    assert r.lrange("l", 8, 100) == ["8", "9"]
    assert r.lrange("l", 5, 2) == [] and r.lrange("l", 10, 20) == []
    assert r.lrange("missing", 0, -1) == []
    assert err(r, "LRANGE", "l", "0", "x") == "value is not an integer or out of range"


def test_lindex_and_lset(r):
    r.rpush("l", "a", "b", "c")
    assert r.lindex("l", 0) == "a" and r.lindex("l", -1) == "c"
    assert r.lindex("l", 3) is None and r.lindex("l", -4) is None
    assert r.lindex("missing", 0) is None
    assert err(r, "LINDEX", "l", "x") == "value is not an integer or out of range"
    assert r.lset("l", -1, "C") and r.lset("l", 0, 42)
    assert r.lrange("l", 0, -1) == ["42", "b", "C"]
    assert err(r, "LSET", "l", "3", "v") == "index out of range"
    assert err(r, "LSET", "missing", "0", "v") == "no such key"


def test_linsert(r):
    r.rpush("l", "a", "c")
    assert r.linsert("l", "BEFORE", "c", "b") == 3
    assert r.linsert("l", "after", "c", "d") == 4
    assert r.linsert("l", "before", "zz", "x") == -1
    assert r.linsert("missing", "before", "a", "x") == 0 and not r.exists("missing")
    assert r.lrange("l", 0, -1) == ["a", "b", "c", "d"]
    assert err(r, "LINSERT", "l", "middle", "a", "x") == "syntax error"


def test_lrem_directions(r):
    r.rpush("l", *"abacada")
    assert r.lrem("l", 2, "a") == 2
    assert r.lrange("l", 0, -1) == list("bcada")
    assert r.lrem("l", -1, "a") == 1
    assert r.lrange("l", 0, -1) == list("bcad")
    assert r.lrem("l", 0, "zz") == 0
    r.rpush("l", "a", "a")
    assert r.lrem("l", 0, "a") == 3
    assert r.lrange("l", 0, -1) == list("bcd")
    assert r.lrem("missing", 0, "a") == 0
    r.delete("l")
    r.rpush("l", "x", "x")
    assert r.lrem("l", 0, "x") == 2 and not r.exists("l")
    assert err(r, "LREM", "l", "x", "a") == "value is not an integer or out of range"


def test_ltrim(r):
    r.rpush("l", *range(10))
    assert r.ltrim("l", 2, -3)
    assert r.lrange("l", 0, -1) == [str(i) for i in range(2, 8)]
    assert r.ltrim("l", -2, 100)
    assert r.lrange("l", 0, -1) == ["6", "7"]
    assert r.ltrim("l", 5, 1) and not r.exists("l")
    assert r.ltrim("missing", 0, 1)
    assert err(r, "LTRIM", "l", "x", "1") == "value is not an integer or out of range"


def test_lpos_options(r):
    r.rpush("l", *"abcabcab")
    assert r.lpos("l", "a") == 0
    assert r.lpos("l", "b", rank=2) == 4
    assert r.lpos("l", "b", rank=-1) == 7
    assert r.lpos("l", "a", count=0) == [0, 3, 6]
    assert r.lpos("l", "a", count=2, rank=-1) == [6, 3]
    assert r.lpos("l", "c", maxlen=2) is None
    assert r.lpos("l", "c", count=0, maxlen=3) == [2]
    assert r.lpos("l", "z") is None and r.lpos("l", "z", count=1) == []
    assert r.lpos("missing", "a") is None and r.lpos("missing", "a", count=1) == []
    assert err(r, "LPOS", "l", "a", "RANK", "0").startswith("RANK can't be zero")
    assert err(r, "LPOS", "l", "a", "COUNT", "-1") == "COUNT can't be negative"
    assert err(r, "LPOS", "l", "a", "MAXLEN", "-1") == "MAXLEN can't be negative"
    assert err(r, "LPOS", "l", "a", "FOO") == "syntax error"


def test_lmove_and_rpoplpush(r):
    r.rpush("src", "a", "b", "c")
    assert r.lmove("src", "dst", "LEFT", "RIGHT") == "a"
    assert r.lmove("src", "dst", "RIGHT", "LEFT") == "c"
    assert r.lrange("dst", 0, -1) == ["c", "a"]
    assert r.rpoplpush("src", "dst") == "b"
    assert not r.exists("src")
    assert r.lrange("dst", 0, -1) == ["b", "c", "a"]
    assert r.lmove("dst", "dst", "LEFT", "RIGHT") == "b"     # rotation
    assert r.lrange("dst", 0, -1) == ["c", "a", "b"]
    assert r.lmove("missing", "dst", "LEFT", "LEFT") is None
    assert r.rpoplpush("missing", "dst") is None
    assert err(r, "LMOVE", "dst", "x", "UP", "LEFT") == "syntax error"
    r.set("s", "v")
    assert err(r, "LMOVE", "dst", "s", "LEFT", "LEFT") == WRONGTYPE
    assert r.llen("dst") == 3, "nothing moves when the destination has the wrong type"


def test_lmpop(r):
    r.rpush("b", 1, 2, 3)
    assert r.execute_command("LMPOP", 2, "a", "b", "LEFT") == ["b", ["1"]]
    assert r.execute_command("LMPOP", 2, "a", "b", "RIGHT", "COUNT", 5) == ["b", ["3", "2"]]
    assert not r.exists("b")
    assert r.execute_command("LMPOP", 1, "a", "LEFT") is None
    assert err(r, "LMPOP", 0, "a", "LEFT") == "numkeys should be greater than 0"
    assert err(r, "LMPOP", 1, "a", "LEFT", "COUNT", 0) == "count should be greater than 0"
    assert err(r, "LMPOP", 2, "a", "LEFT") == "syntax error"
    assert err(r, "LMPOP", 1, "a", "UP") == "syntax error"


@pytest.mark.parametrize("cmd", [
    ["LPUSH", "s", "x"], ["RPUSH", "s", "x"], ["LPUSHX", "s", "x"], ["RPUSHX", "s", "x"], ["LPOP", "s"],
    ["RPOP", "s", "2"], ["LLEN", "s"], ["LRANGE", "s", "0", "1"], ["LINDEX", "s", "0"], ["LSET", "s", "0", "x"],
    ["LINSERT", "s", "BEFORE", "a", "b"], ["LREM", "s", "0", "a"], ["LTRIM", "s", "0", "1"], ["LPOS", "s", "a"],
    ["LMOVE", "s", "d", "LEFT", "LEFT"], ["RPOPLPUSH", "s", "d"], ["LMPOP", "1", "s", "LEFT"],
    ["BLPOP", "s", "0"], ["BRPOP", "s", "0"], ["BLMOVE", "s", "d", "LEFT", "LEFT", "0"],
    ["BRPOPLPUSH", "s", "d", "0"], ["BLMPOP", "0", "1", "s", "LEFT"],
])
def test_wrong_type(r, cmd):
    r.set("s", "string")
    assert err(r, *cmd) == WRONGTYPE
    assert r.get("s") == "string"


@pytest.mark.parametrize("cmd", [
    ["LPUSH", "l"], ["RPUSH", "l"], ["LPUSHX", "l"], ["RPUSHX", "l"], ["LPOP"], ["RPOP"], ["LLEN"],
    ["LLEN", "a", "b"], ["LRANGE", "l", "0"], ["LINDEX", "l"], ["LSET", "l", "0"], ["LINSERT", "l", "BEFORE", "a"],
    ["LREM", "l", "0"], ["LTRIM", "l", "0"], ["LPOS", "l"], ["LMOVE", "a", "b", "LEFT"], ["RPOPLPUSH", "a"],
    ["LMPOP", "1", "a"], ["BLPOP", "a"], ["BRPOP", "a"], ["BLMOVE", "a", "b", "LEFT", "LEFT"],
    ["BRPOPLPUSH", "a", "b"], ["BLMPOP", "0", "1", "a"],
])
def test_wrong_arity(r, cmd):
    assert err(r, *cmd) == "wrong number of arguments for '%s' command" % cmd[0].lower()


def test_integers_and_binary_values(r):
    vals = ["0", "-1", "127", "4095", "-4096", "32767", "8388607", "2147483648", str(2 ** 63 - 1),
            str(-2 ** 63), "007", "1e3", " 1", "", "\u00e9\u00e8"]
    r.rpush("l", *vals)
    assert r.lrange("l", 0, -1) == vals
    assert r.lpos("l", "007") == 10 and r.lpos("l", "7") is None


def test_encoding_by_entry_count(r):
    r.config_set("list-max-listpack-size", 4)
    try:
        r.rpush("l", 1, 2, 3, 4)
        assert r.object("encoding", "l") == "listpack"
        r.rpush("l", 5)
        assert r.object("encoding", "l") == "quicklist"
        r.rpush("l", *range(6, 20))
        assert r.lrange("l", 0, -1) == [str(i) for i in range(1, 20)]
        r.ltrim("l", 0, 2)              # 3 entries: more than half of 4 -> stays
        assert r.object("encoding", "l") == "quicklist"
        r.rpop("l")                      # 2 entries in one node: back to listpack
        assert r.object("encoding", "l") == "listpack"
        assert r.lrange("l", 0, -1) == ["1", "2"]
        r.rpush("big", *range(10))       # one push over the limit converts at once
        assert r.object("encoding", "big") == "quicklist"
    finally:
        r.config_set("list-max-listpack-size", -2)


def test_encoding_by_bytes_default(r):
    r.rpush("l", "x" * 100)
    assert r.object("encoding", "l") == "listpack"
    small = r.memory_usage("l")
    r.rpush("l", *["y" * 1000] * 9)     # > 8 KB with list-max-listpack-size -2
    assert r.object("encoding", "l") == "quicklist"
    assert r.memory_usage("l") > small + 9000
    r.ltrim("l", 0, 0)
    assert r.object("encoding", "l") == "listpack"
    r.lset("l", 0, "z" * 9000)           # LSET can convert too
    assert r.object("encoding", "l") == "quicklist"
    r.lset("l", 0, "small")
    assert r.object("encoding", "l") == "listpack"
    assert r.lrange("l", 0, -1) == ["small"]


def test_long_quicklist_operations(r):
    n = 5000
    r.rpush("l", *range(n))
    assert r.object("encoding", "l") == "quicklist"
    assert r.llen("l") == n
    assert r.lindex("l", 2500) == "2500" and r.lindex("l", -1) == str(n - 1)
    assert r.lrange("l", 1998, 2001) == ["1998", "1999", "2000", "2001"]
    assert r.linsert("l", "AFTER", "3000", "new") == n + 1
    assert r.lpos("l", "new") == 3001
    assert r.lrem("l", 0, "new") == 1
    assert r.lset("l", 4000, "x") and r.lindex("l", 4000) == "x"
    assert r.lpos("l", "4999", rank=-1) == n - 1
    r.ltrim("l", 100, 199)
    assert r.lrange("l", 0, -1) == [str(i) for i in range(100, 200)]
    assert r.object("encoding", "l") == "listpack"
    assert r.lpop("l", 1000) == [str(i) for i in range(100, 200)]
    assert not r.exists("l")


def test_memory_usage_counts_elements(r):
    r.rpush("l", *range(10))
    a = r.memory_usage("l")
    r.rpush("l", *["value-%d" % i for i in range(3000)])
    b = r.memory_usage("l")
    assert a > 0 and b > a + 3000 * 8


def test_resp3_null_shapes(server):
    from conftest import raw_request
    out, _ = raw_request(server.port, b"HELLO 3\r\nDEL l\r\nPING\r\nLPOP l\r\nLPOP l 2\r\nBLPOP l 0.01\r\n"
                                      b"RPUSH l a\r\nLPOP l 1\r\n", 0.5)
    assert out.endswith(b"+PONG\r\n_\r\n_\r\n_\r\n:1\r\n*1\r\n$1\r\na\r\n")
