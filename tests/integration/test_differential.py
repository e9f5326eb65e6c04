"""Differential test: the same seeded random sequence of string and key
commands is sent to redis-like-server and to Debian's redis-server 7.0, and
the raw replies must be identical byte for byte (error texts included).
Only replies that depend on the clock (TTL, PTTL, EXPIRETIME, ...) are
compared with a tolerance, and unordered replies (KEYS, SCAN) as sets.

Run alone: /usr/bin/python3 -m pytest -q -m differential tests/integration"""
import random

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential


KEYS = ["k0", "k1", "k2", "k3", "num", "fl", "a", "ab", "abc", "b", "bc", "c?x", "a*b",
        "x\\y", "[k]", "big", "", "k 1", "h\x01llo"]
INTS = ["0", "1", "-1", "10", "9999", "10000", "-10000", "123456789", "9223372036854775807",
        "-9223372036854775808", "9223372036854775806", "-9223372036854775807", "00", "+1", "1.0",
        "-0", " 1", "12345678901234567890"]
FLOATS = ["0", "1.5", "-2.25", "1e3", "3.0e-2", "abc", "inf", "-inf", "1e308", "nan", "0x10",
          "5.0000000000000001", "1.1"]
GLOBS = ["*", "k*", "?", "k?", "[a-c]*", "[^a]*", "[!k]*", "a\\*b", "c\\?x", "x\\\\y", "*b*",
         "\\[k\\]", "[k]", "a[bc]", "h?llo", "*[", "[a-", "a*", "", "k[0-1]", "K*", "[]", "[c-a]*",
         "**", "*?*", "\\", "a\\", "[\\]]*", "[a-c", "*\\", "k[^0-2]", "[[]k]", "?*?"]


def rand_value(rng):
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(INTS)
    if roll < 0.4:
        return rng.choice(FLOATS)
    if roll < 0.5:
        return ""
    if roll < 0.7:
        return "v" * rng.randint(1, 60)   # across the embstr/raw boundary (44)
    if roll < 0.8:
        return "x" * rng.randint(100, 300)
    return rng.choice(["hello", "world", "foo bar", "\x00\xff", "ünï"])


def rand_int_arg(rng):
    roll = rng.random()
    if roll < 0.7:
        return str(rng.randint(-20, 40))
    return rng.choice(INTS + ["abc", "", "1e2", "99999999999999999999"])


def rand_ttl(rng, ms):
    """A relative TTL: long enough not to expire during the run, or an
    invalid/non-positive one (errors and deletions are compared exactly)."""
    roll = rng.random()
    if roll < 0.8:
        v = rng.randint(100, 100000)
        return str(v * 1000 if ms else v)
    return rng.choice(["0", "-1", "-100", "abc", "1.5", "9223372036854775807", "9223372036854775", ""])


def gen_command(rng, now_s):
    k = rng.choice(KEYS)
    k2 = rng.choice(KEYS)
    v = rand_value(rng)
    name = rng.choice(CMDS)
    if name == "set":
        args = ["SET", k, v]
        opts = []
        if rng.random() < 0.3:
            opts.append(rng.choice(["NX", "XX", "nx", "xx"]))
        if rng.random() < 0.3:
            opts.append(rng.choice(["GET", "get"]))
        if rng.random() < 0.4:
            which = rng.choice(["EX", "PX", "EXAT", "PXAT", "KEEPTTL", "ex", "px"])
            if which == "KEEPTTL":
                opts.append(which)
            elif which.upper() == "EXAT":
                opts += [which, str(now_s + rng.randint(100, 1000)) if rng.random() < 0.8 else rand_ttl(rng, False)]
            elif which.upper() == "PXAT":
                opts += [which, str((now_s + rng.randint(100, 1000)) * 1000)]
            else:
                opts += [which, rand_ttl(rng, which.upper() == "PX")]
        if rng.random() < 0.05:   # conflicting or unknown options
            opts.append(rng.choice(["NX", "XX", "EX", "KEEPTTL", "FOO", "PX"]))
        rng.shuffle(opts) if rng.random() < 0.1 else None
        return args + opts
    if name == "getex":
        args = ["GETEX", k]
        roll = rng.random()
        if roll < 0.2:
            args += ["PERSIST"]
        elif roll < 0.6:
            which = rng.choice(["EX", "PX", "EXAT", "PXAT"])
            if which == "EXAT":
                args += [which, str(now_s + rng.randint(100, 1000))]
            elif which == "PXAT":
                args += [which, str((now_s + rng.randint(100, 1000)) * 1000)]
            else:
                args += [which, rand_ttl(rng, which == "PX")]
        elif roll < 0.65:
            args += rng.choice([["NX"], ["EX"], ["PERSIST", "EX", "10"], ["KEEPTTL"], ["GET"]])
        return args
    if name in ("get", "getdel", "strlen", "incr", "decr", "type", "persist", "exists", "ttl", "pttl",
                "expiretime", "pexpiretime"):
        return [name.upper(), k]
    if name == "getset":
        return ["GETSET", k, v]
    if name == "setnx":
        return ["SETNX", k, v]
    if name in ("setex", "psetex"):
        return [name.upper(), k, rand_ttl(rng, name == "psetex"), v]
    if name == "mget":
        return ["MGET"] + [rng.choice(KEYS) for _ in range(rng.randint(1, 5))]
    if name in ("mset", "msetnx"):
        args = [name.upper()]
        for _ in range(rng.randint(1, 4)):
            args += [rng.choice(KEYS), rand_value(rng)]
        if rng.random() < 0.05:
            args.append("odd")
        return args
    if name == "append":
        return ["APPEND", k, v]
    if name in ("incrby", "decrby"):
        return [name.upper(), k, rand_int_arg(rng)]
    if name == "incrbyfloat":
        return ["INCRBYFLOAT", k, rng.choice(FLOATS + ["0.1", "-0.1", "3", "1.7976931348623157e308"])]
    if name in ("getrange", "substr"):
        return [name.upper(), k, rand_int_arg(rng), rand_int_arg(rng)]
    if name == "setrange":
        off = str(rng.randint(0, 70)) if rng.random() < 0.85 else rng.choice(["-1", "abc", "536870912"])
        return ["SETRANGE", k, off, rng.choice(["", "x", "hello", "ZZZZZZZZZZ", "1"])]
    if name in ("expire", "pexpire", "expireat", "pexpireat"):
        if name == "expireat":
            t = str(now_s + rng.randint(-10, 10000)) if rng.random() < 0.85 else rand_ttl(rng, False)
        elif name == "pexpireat":
            t = str((now_s + rng.randint(-10, 10000)) * 1000) if rng.random() < 0.85 else rand_ttl(rng, True)
        else:
            t = rand_ttl(rng, name == "pexpire")
        args = [name.upper(), k, t]
        if rng.random() < 0.4:
            args.append(rng.choice(["NX", "XX", "GT", "LT", "gt", "FOO"]))
        if rng.random() < 0.05:
            args.append(rng.choice(["NX", "XX", "GT", "LT"]))
        return args
    if name in ("del", "unlink", "touch", "exists"):
        return [name.upper()] + [rng.choice(KEYS) for _ in range(rng.randint(1, 4))]
    if name in ("rename", "renamenx"):
        return [name.upper(), k, k2]
    if name == "object":
        return ["OBJECT", "ENCODING", k]
    if name == "dbsize":
        return ["DBSIZE"]
    if name == "select":
        return ["SELECT", rng.choice(["0", "0", "0", "1", "2", "16", "-1", "x"])]
    if name == "swapdb":
        return ["SWAPDB", rng.choice(["0", "1", "2"]), rng.choice(["0", "1", "2", "99", "y"])]
    if name == "flushdb":
        return ["FLUSHDB"]
    if name == "arity":
        return rng.choice([["GET"], ["SET", k], ["GETRANGE", k, "0"], ["INCRBY", k], ["EXPIRE", k],
                           ["MSET", k], ["RENAME", k], ["OBJECT"], ["OBJECT", "ENCODING"], ["STRLEN", k, k2],
                           ["TTL"], ["GETDEL", k, k2], ["SETEX", k, "10"], ["APPEND", k]])
    raise AssertionError(name)


# Weighted: names repeated to make them more frequent.
CMDS = (["set"] * 8 + ["get"] * 4 + ["getex"] * 2 + ["getdel", "getset", "setnx", "setex", "psetex", "mget",
        "mset", "msetnx"] + ["append"] * 2 + ["strlen", "incr", "decr", "incrby", "decrby"] +
        ["incrbyfloat"] * 2 + ["getrange"] * 2 + ["substr"] + ["setrange"] * 2 +
        ["expire", "pexpire", "expireat", "pexpireat"] * 2 + ["ttl", "pttl", "expiretime", "pexpiretime",
        "persist"] + ["exists", "del", "unlink", "touch", "type", "rename", "renamenx"] + ["object"] * 3 +
        ["dbsize", "select", "swapdb", "arity"])

CLOCK_CMDS = {"TTL": 1, "PTTL": 1500, "EXPIRETIME": 1, "PEXPIRETIME": 1500}


def compare(cmd, ours, ref):
    name = cmd[0].upper()
    (raw_o, val_o), (raw_r, val_r) = ours, ref
    if name in CLOCK_CMDS and isinstance(val_o, int) and isinstance(val_r, int) and val_r >= 0:
        assert abs(val_o - val_r) <= CLOCK_CMDS[name], (cmd, raw_o, raw_r)
        return
    assert raw_o == raw_r, "command %r: ours %r, redis %r" % (cmd, raw_o, raw_r)


def full_state(c):
    """Every key of the current db with its value/ttl, for a final check."""
    out = {}
    _, keys = c.call("KEYS", "*")
    for key in keys:
        _, t = c.call("TYPE", key)
        _, v = c.call("GET", key) if t == b"string" else (None, t)
        _, ttl = c.call("TTL", key)
        out[key] = (v, ttl if ttl < 0 else "ttl")
    return out


def scan_all(c, match=None, count=None):
    cursor, seen = b"0", set()
    for _ in range(10000):
        args = ["SCAN", cursor]
        if match is not None:
            args += ["MATCH", match]
        if count is not None:
            args += ["COUNT", count]
        _, (cursor, keys) = c.call(*args)
        seen.update(keys)
        if cursor == b"0":
            return seen
    raise AssertionError("SCAN did not finish")


@pytest.fixture
def pair(server, redis_ref):
    # 60 s: SETRANGE at offset 512 MB makes both servers fault in 512 MB,
    # which takes seconds on a loaded machine.
    ours, ref = ExactConn(server.port, timeout=60), ExactConn(redis_ref.port, timeout=60)
    for c in (ours, ref):
        assert c.call("FLUSHALL")[0] == b"+OK\r\n"
    yield ours, ref
    ours.close()
    ref.close()


def check_patterns(ours, ref):
    for pat in GLOBS:
        _, ko = ours.call("KEYS", pat)
        _, kr = ref.call("KEYS", pat)
        assert sorted(ko) == sorted(kr), ("KEYS", pat)
        assert scan_all(ours, pat, 3) == scan_all(ref, pat, 3) == set(kr), ("SCAN MATCH", pat)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_string_key_commands(pair, seed):
    import time
    ours, ref = pair
    rng = random.Random(seed)
    now_s = int(time.time())
    for i in range(1500):
        cmd = gen_command(rng, now_s)
        compare(cmd, ours.call(*cmd), ref.call(*cmd))
        if i % 250 == 249:
            check_patterns(ours, ref)
    for db in ("0", "1", "2"):
        ours.call("SELECT", db)
        ref.call("SELECT", db)
        assert full_state(ours) == full_state(ref)
        assert scan_all(ours) == scan_all(ref)


# Hand-picked edge cases, each sent to both servers in order.
EDGE_CASES = [
    ["SET", "s", "hello"], ["GETRANGE", "s", "0", "-1"], ["GETRANGE", "s", "-100", "-50"],
    ["GETRANGE", "s", "3", "1"], ["GETRANGE", "s", "-1", "-2"], ["GETRANGE", "s", "10", "20"],
    ["GETRANGE", "s", "-3", "100"], ["GETRANGE", "nokey", "0", "-1"], ["GETRANGE", "s", "x", "1"],
    ["SETRANGE", "s", "10", "X"], ["GET", "s"], ["SETRANGE", "s", "-1", "X"], ["SETRANGE", "new", "0", ""],
    ["EXISTS", "new"], ["SETRANGE", "new", "3", ""], ["EXISTS", "new"], ["SETRANGE", "s", "536870911", "x"],
    ["SETRANGE", "s", "536870912", "x"], ["SETRANGE", "s", "0", "A"], ["OBJECT", "ENCODING", "s"],
    ["SET", "n", "9223372036854775807"], ["INCR", "n"], ["DECRBY", "n", "-1"], ["INCRBY", "n", "0"],
    ["SET", "n", "-9223372036854775808"], ["DECR", "n"], ["DECRBY", "n", "-9223372036854775808"],
    ["INCRBY", "n", "9223372036854775807"], ["GET", "n"], ["OBJECT", "ENCODING", "n"],
    ["SET", "f", "10.50"], ["INCRBYFLOAT", "f", "0.1"], ["INCRBYFLOAT", "f", "-5.0e3"], ["INCRBYFLOAT", "f", "abc"],
    ["INCRBYFLOAT", "f", "inf"], ["INCRBYFLOAT", "f", ""], ["INCRBYFLOAT", "f", " 1"], ["INCRBYFLOAT", "f", "1 "],
    ["INCR", "f"], ["OBJECT", "ENCODING", "f"], ["SET", "f", "3"], ["INCRBYFLOAT", "f", "1.5"], ["GET", "f"],
    ["INCRBYFLOAT", "g", "1e400"], ["INCRBYFLOAT", "g", "1e-400"], ["INCRBYFLOAT", "g", "0x10"], ["GET", "g"],
    ["SET", "e", "x" * 44], ["OBJECT", "ENCODING", "e"], ["SET", "e", "x" * 45], ["OBJECT", "ENCODING", "e"],
    ["SET", "e", "12345678901234567890"], ["OBJECT", "ENCODING", "e"], ["SET", "e", "-0"], ["OBJECT", "ENCODING", "e"],
    ["SET", "e", "007"], ["OBJECT", "ENCODING", "e"], ["APPEND", "e", "1"], ["OBJECT", "ENCODING", "e"],
    ["SET", "e", "1"], ["APPEND", "e", "2"], ["OBJECT", "ENCODING", "e"], ["GET", "e"],
    ["OBJECT", "ENCODING", "missing"], ["OBJECT", "FOO", "e"], ["OBJECT", "REFCOUNT"],
    ["SET", "k", "v", "EX", "0"], ["SET", "k", "v", "EX", "-5"], ["SET", "k", "v", "PX", "abc"],
    ["SET", "k", "v", "EX", "9223372036854775807"], ["SET", "k", "v", "PX", "9223372036854775807"],
    ["SET", "k", "v", "EX"], ["SET", "k", "v", "NX", "XX"], ["SET", "k", "v", "EX", "10", "PX", "100"],
    ["SET", "k", "v", "KEEPTTL", "EX", "10"], ["SET", "k", "v", "EX", "10", "EX", "20"], ["TTL", "k"],
    ["SET", "k", "w", "KEEPTTL"], ["TTL", "k"], ["SET", "k", "x"], ["TTL", "k"], ["SET", "k", "y", "GET", "XX"],
    ["SET", "k2", "y", "GET", "NX"], ["SET", "k2", "z", "GET", "NX"], ["SET", "k", "v", "PERSIST"],
    ["GETEX", "k", "PERSIST"], ["GETEX", "k", "KEEPTTL"], ["GETEX", "k", "EX", "10", "PERSIST"],
    ["GETEX", "k", "EX", "0"], ["GETEX", "nokey", "EX", "0"], ["GETEX", "k", "PX", "100000"], ["GETEX", "k", "PERSIST"],
    ["TTL", "k"], ["SETEX", "k", "0", "v"], ["PSETEX", "k", "-1", "v"], ["SETEX", "k", "x", "v"],
    ["MSET", "a", "1", "b"], ["MSETNX", "a", "1", "b"], ["MSETNX", "a", "1", "zz", "2"], ["EXISTS", "zz"],
    ["MSETNX", "y1", "1", "y2", "2"], ["MGET", "y1", "y2", "nokey"],
    ["EXPIRE", "a", "100", "NX", "XX"], ["EXPIRE", "a", "100", "GT", "LT"], ["EXPIRE", "a", "100", "FOO"],
    ["EXPIRE", "a", "100", "GT"], ["EXPIRE", "a", "100", "LT"], ["EXPIRE", "a", "50", "GT"], ["EXPIRE", "a", "200", "GT"],
    ["EXPIRE", "a", "100", "NX"], ["EXPIRE", "a", "300", "XX"], ["PERSIST", "a"], ["PERSIST", "a"],
    ["EXPIRE", "a", "9223372036854775807"], ["PEXPIRE", "a", "9223372036854775807"],
    ["EXPIREAT", "a", "-9223372036854775808"], ["EXPIRE", "a", "-1"], ["EXISTS", "a"], ["TTL", "a"], ["PTTL", "a"],
    ["EXPIRETIME", "b"], ["PEXPIRETIME", "nokey"], ["EXPIREAT", "b", "1"], ["EXISTS", "b"],
    ["RENAME", "nokey", "x"], ["RENAMENX", "nokey", "x"], ["SET", "r", "1"], ["RENAME", "r", "r"],
    ["RENAMENX", "r", "r"], ["SET", "r2", "2"], ["RENAMENX", "r", "r2"], ["RENAME", "r", "r2"], ["GET", "r2"],
    ["SCAN", "abc"], ["SCAN", " 1"], ["SCAN", "1x"], ["SCAN", "0", "COUNT", "0"], ["SCAN", "0", "COUNT", "x"], ["SCAN", "0", "MATCH"],
    ["SCAN", "0", "FOO", "bar"], ["SCAN", "18446744073709551616"],
    ["KEYS"], ["TYPE", "nokey"], ["TYPE", "r2"], ["DEL", "nokey", "r2", "r2"], ["UNLINK", "y1", "y2", "y3"],
    ["TOUCH", "a", "nokey"], ["SELECT", "16"], ["SELECT", "99999999999"], ["SELECT", "1.5"], ["SWAPDB", "0", "x"],
    ["SWAPDB", "x", "0"], ["SWAPDB", "0", "16"], ["SWAPDB", "99999999999", "0"], ["FLUSHDB", "ASYNC"],
    ["FLUSHDB", "foo"], ["FLUSHALL", "SYNC", "x"], ["DBSIZE", "x"],
    ["GET", "a", "b"], ["STRLEN"], ["APPEND", "a"], ["INCR"], ["SETNX", "a"], ["GETSET", "a"], ["GETDEL"],
    ["DECRBY", "a", "1", "2"], ["MGET"], ["EXISTS"], ["TTL", "a", "b"], ["PERSIST"], ["EXPIRE", "a"],
    ["ECHO"], ["ECHO", "hi"], ["PING", "a", "b"], ["PING", "hello"],
]


def test_edge_cases(pair):
    ours, ref = pair
    for cmd in EDGE_CASES:
        compare(cmd, ours.call(*cmd), ref.call(*cmd))


def test_scan_type_and_count(pair):
    ours, ref = pair
    for c in (ours, ref):
        for i in range(300):
            c.call("SET", "key:%d" % i, i)
    for count in ("1", "7", "1000"):
        assert scan_all(ours, "key:1*", count) == scan_all(ref, "key:1*", count)
    got = set()
    for c in (ours, ref):
        cursor, seen = b"0", set()
        while True:
            _, (cursor, keys) = c.call("SCAN", cursor, "TYPE", "string", "COUNT", "50")
            seen.update(keys)
            if cursor == b"0":
                break
        got.add(frozenset(seen))
    assert len(got) == 1 and len(next(iter(got))) == 300


def test_wrong_type_errors(pair):
    """String commands on a list key must give WRONGTYPE; needs RPUSH."""
    ours, ref = pair
    for c in (ours, ref):
        c.call("RPUSH", "lst", "a", "b")
    for cmd in (["GET", "lst"], ["APPEND", "lst", "x"], ["INCR", "lst"], ["INCRBYFLOAT", "lst", "1"],
                ["GETRANGE", "lst", "0", "1"], ["SETRANGE", "lst", "0", "x"], ["STRLEN", "lst"],
                ["GETSET", "lst", "x"], ["GETDEL", "lst"], ["GETEX", "lst"], ["SET", "lst", "x", "GET"],
                ["MGET", "lst", "nokey"], ["TYPE", "lst"], ["SETNX", "lst", "x"], ["DECRBY", "lst", "2"],
                ["EXPIRE", "lst", "100"], ["RENAME", "lst", "lst2"], ["TYPE", "lst2"], ["SET", "lst2", "s"],
                ["TYPE", "lst2"]):
        compare(cmd, ours.call(*cmd), ref.call(*cmd))
