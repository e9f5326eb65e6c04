"""String commands through redis-py: values, options, counters, ranges,
encodings and expiry set by the string commands.  The differential suite
checks exact reply bytes against Redis; this one checks behaviour over time
and the things a differential run cannot see (expiry actually happening,
binary safety, limits)."""
import time

import pytest
import redis


def test_get_set_roundtrip_binary(server):
    c = server.client(decode_responses=False)
    blob = bytes(range(256)) + b"\r\n\x00end"
    assert c.set(b"bin\x00key", blob) is True
    assert c.get(b"bin\x00key") == blob
    assert c.strlen(b"bin\x00key") == len(blob)
    assert c.get(b"bin") is None


def test_set_nx_xx_get(r):
    assert r.set("k", "1", nx=True) is True
    assert r.set("k", "2", nx=True) is None
    assert r.get("k") == "1"
    assert r.set("k", "3", xx=True) is True
    assert r.set("missing", "3", xx=True) is None
    assert r.exists("missing") == 0
    assert r.set("k", "4", get=True) == "3"
    assert r.set("new", "5", get=True) is None
    assert r.get("new") == "5"
    assert r.set("k", "6", nx=True, get=True) == "4"
    assert r.get("k") == "4"


def test_set_expire_options(r):
    now = time.time()
    r.set("ex", "v", ex=100)
    r.set("px", "v", px=100000)
    r.set("exat", "v", exat=int(now) + 100)
    r.set("pxat", "v", pxat=int(now * 1000) + 100000)
    for k in ("ex", "px", "exat", "pxat"):
        assert 98 <= r.ttl(k) <= 100, k
        assert 97000 < r.pttl(k) <= 100000, k
    assert r.expiretime("exat") == int(now) + 100
    assert r.pexpiretime("pxat") == int(now * 1000) + 100000


def test_set_keepttl_and_plain_set_clears_ttl(r):
    r.set("k", "v", ex=100)
    r.set("k", "w", keepttl=True)
    assert r.get("k") == "w" and r.ttl("k") > 0
    r.set("k", "x")
    assert r.ttl("k") == -1


def test_set_with_past_exat_leaves_no_value(r):
    r.set("k", "v", exat=1)
    assert r.get("k") is None
    assert r.exists("k") == 0
    r.set("k2", "v", pxat=int(time.time() * 1000) - 10)
    assert r.get("k2") is None


def test_short_expiry_happens(r):
    r.set("a", "1", px=100)
    r.psetex("b", 100, "1")
    r.setex("c", 1, "1")
    assert r.get("a") == "1" and r.get("b") == "1"
    time.sleep(0.25)
    assert r.get("a") is None
    assert r.exists("b") == 0
    assert r.ttl("a") == -2 and r.pttl("b") == -2
    assert r.get("c") == "1"


def test_active_expiry_removes_untouched_keys(r):
    before = int(r.info("stats")["expired_keys"])
    for i in range(50):
        r.set("tmp:%d" % i, "x", px=50)
    r.set("keep", "x")
    deadline = time.time() + 3
    while time.time() < deadline and r.dbsize() > 1:
        time.sleep(0.05)
    assert r.dbsize() == 1, "the active expire cycle must reclaim keys nobody reads"
    assert int(r.info("stats")["expired_keys"]) - before == 50


def test_setnx_setex_psetex_getset_getdel(r):
    assert r.setnx("k", "1") is True
    assert r.setnx("k", "2") is False
    assert r.getset("k", "3") == "1"
    assert r.getset("fresh", "x") is None
    assert r.getdel("k") == "3"
    assert r.getdel("k") is None
    assert r.exists("k") == 0
    assert r.setex("e", 50, "v") is True and 48 <= r.ttl("e") <= 50
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'setex' command"):
        r.setex("e", 0, "v")
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'psetex' command"):
        r.psetex("e", -5, "v")


def test_getex_options(r):
    r.set("k", "v")
    assert r.getex("k", ex=100) == "v" and 98 <= r.ttl("k") <= 100
    assert r.getex("k", px=5000) == "v" and 4000 < r.pttl("k") <= 5000
    assert r.getex("k", persist=True) == "v" and r.ttl("k") == -1
    assert r.getex("k", exat=int(time.time()) + 50) == "v" and 48 <= r.ttl("k") <= 50
    assert r.getex("k") == "v" and r.ttl("k") > 0
    assert r.getex("k", pxat=1) == "v"
    assert r.exists("k") == 0, "GETEX with a past time deletes the key"
    assert r.getex("missing", ex=10) is None


def test_mget_mset_msetnx(r):
    assert r.mset({"a": "1", "b": "2", "c": "3"}) is True
    assert r.mget("a", "nope", "c") == ["1", None, "3"]
    assert r.msetnx({"c": "x", "d": "4"}) is False
    assert r.exists("d") == 0 and r.get("c") == "3"
    assert r.msetnx({"d": "4", "e": "5"}) is True
    assert r.mget("d", "e") == ["4", "5"]
    r.set("t", "v", ex=100)
    r.mset({"t": "w"})
    assert r.ttl("t") == -1, "MSET clears a TTL like SET"


def test_append_strlen_and_encoding(r):
    assert r.append("s", "hello") == 5
    assert r.append("s", " world") == 11
    assert r.get("s") == "hello world"
    assert r.strlen("s") == 11
    assert r.strlen("none") == 0
    assert r.object("encoding", "s") == "raw"
    r.set("n", 12345)
    assert r.object("encoding", "n") == "int"
    assert r.append("n", "6") == 6
    assert r.get("n") == "123456"
    r.set("emb", "x" * 44)
    assert r.object("encoding", "emb") == "embstr"
    r.set("raw", "x" * 45)
    assert r.object("encoding", "raw") == "raw"


def test_counters(r):
    assert r.incr("c") == 1
    assert r.incrby("c", 10) == 11
    assert r.decr("c") == 10
    assert r.decrby("c", 20) == -10
    assert r.get("c") == "-10"
    assert r.object("encoding", "c") == "int"
    r.set("c", 9223372036854775807)
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        r.incr("c")
    r.set("c", -9223372036854775808)
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        r.decr("c")
    r.set("c", "abc")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.incr("c")
    r.set("c", " 1")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        r.incr("c")
    r.set("t", "5", ex=100)
    r.incr("t")
    assert r.ttl("t") > 0, "INCR keeps the TTL"


def test_incrbyfloat(r):
    # redis-py turns INCRBYFLOAT's reply into a float: read the stored text.
    assert r.incrbyfloat("f", 10.5) == 10.5
    r.incrbyfloat("f", "0.1")
    assert r.get("f") == "10.6"
    r.incrbyfloat("f", "-5.0e3")
    assert r.get("f") == "-4989.39999999999999991"   # %.17Lf, as Redis prints it
    r.set("f", "3")
    r.incrbyfloat("f", "2")
    assert r.get("f") == "5"
    with pytest.raises(redis.ResponseError, match="value is not a valid float"):
        r.incrbyfloat("f", "abc")
    with pytest.raises(redis.ResponseError, match="increment would produce NaN or Infinity"):
        r.incrbyfloat("f", "inf")
    r.incrbyfloat("huge", "1.7976931348623157e308")
    big = r.get("huge")
    assert len(big) == 309 and big.startswith("1797693134862315") and big.isdigit()
    # What INCRBYFLOAT stored must read back as a float.
    r.incrbyfloat("huge", "0")
    assert r.get("huge") == big


def test_getrange_setrange(r):
    r.set("s", "Hello World")
    assert r.getrange("s", 0, 4) == "Hello"
    assert r.getrange("s", -5, -1) == "World"
    assert r.getrange("s", 6, 1000) == "World"
    assert r.getrange("s", 5, 3) == ""
    assert r.getrange("s", -100, 2) == "Hel"
    assert r.getrange("missing", 0, -1) == ""
    r.set("n", 12345)
    assert r.getrange("n", 1, 2) == "23"
    assert r.setrange("s", 6, "Redis") == 11
    assert r.get("s") == "Hello Redis"
    assert r.setrange("pad", 5, "x") == 6
    assert r.get("pad") == "\x00" * 5 + "x"
    assert r.setrange("empty", 0, "") == 0
    assert r.exists("empty") == 0
    with pytest.raises(redis.ResponseError, match="offset is out of range"):
        r.setrange("s", -1, "x")
    with pytest.raises(redis.ResponseError, match="string exceeds maximum allowed size"):
        r.setrange("s", 512 * 1024 * 1024, "x")
    r.set("t", "abc", ex=100)
    r.setrange("t", 1, "Z")
    assert r.get("t") == "aZc" and r.ttl("t") > 0


def test_shared_value_not_modified_through_other_key(r):
    """APPEND/SETRANGE on one key must not change another key holding the
    same (possibly shared) value object."""
    r.set("a", "100")
    r.set("b", "100")
    r.append("a", "x")
    r.setrange("b", 0, "9")
    assert (r.get("a"), r.get("b")) == ("100x", "900")
    r.mset({"c": "same", "d": "same"})
    r.append("c", "!")
    assert r.get("d") == "same"


def test_append_respects_proto_max_bulk_len(start_server):
    s = start_server(["--proto-max-bulk-len", "1mb"])
    c = s.client()
    c.set("k", "x" * (1024 * 1024 - 1))
    assert c.append("k", "y") == 1024 * 1024
    with pytest.raises(redis.ResponseError, match="string exceeds maximum allowed size"):
        c.append("k", "z")
    assert c.strlen("k") == 1024 * 1024


def test_wrong_arity_and_syntax(r):
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'get' command"):
        r.execute_command("GET")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SET", "k", "v", "NX", "XX")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SET", "k", "v", "EX", "10", "KEEPTTL")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'mset' command"):
        r.execute_command("MSET", "a", "1", "b")
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'set' command"):
        r.execute_command("SET", "k", "v", "PX", "0")


def test_keyspace_hits_and_misses(r):
    r.config_resetstat()
    r.set("k", "v")
    r.get("k")
    r.get("k")
    r.get("nope")
    r.mget("k", "nope", "nope2")
    st = r.info("stats")
    assert st["keyspace_hits"] == 3
    assert st["keyspace_misses"] == 3
