"""Differential test for hashes, sets and sorted sets: the same seeded random
command sequence goes to redis-like-server and to Debian's redis-server 7.0,
with low encoding thresholds so keys cross listpack/intset <-> hashtable/
skiplist often, and the raw replies must match byte for byte (error texts
included).  Where Redis leaves the order unspecified (members of hashtable
sets and hashes, SCAN pages) replies are compared as sorted lists; random
commands (SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER) are checked for size
and membership only.  OBJECT ENCODING is compared for hashes and sorted
sets; sets are skipped because 7.0 has no listpack sets (7.2 does, and so
do we).  The sequence runs once in RESP2 and once in RESP3.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_types_differential.py"""
import random

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential


THRESHOLDS = [("hash-max-listpack-entries", "8"), ("hash-max-listpack-value", "12"),
              ("zset-max-listpack-entries", "8"), ("zset-max-listpack-value", "12"),
              ("set-max-intset-entries", "8")]

HKEYS = ["h0", "h1", "h2"]
SKEYS = ["s0", "s1", "s2", "s3"]
ZKEYS = ["z0", "z1", "z2", "z3"]
# Lex ranges are only defined when all scores are equal (with mixed scores
# the answer depends on the skiplist's random levels): "zl" keeps score 0.
LEXKEY = "zl"

# Order unspecified (hashtable encodings): compare sorted.
UNORDERED = {"smembers", "sunion", "sinter", "sdiff", "hkeys", "hvals"}
PAIRS_UNORDERED = {"hgetall"}
RANDOM = {"srandmember", "hrandfield", "zrandmember"}


def member(rng):
    r = rng.random()
    if r < 0.45:
        return str(rng.randint(-20, 40))
    if r < 0.85:
        return rng.choice("abcdefghijklmnop") + rng.choice(["", "x", "yy", "zzz"])
    if r < 0.95:
        return "long-" + "v" * rng.randint(8, 20)     # over the value limit
    return str(rng.choice([2 ** 40, -(2 ** 33), 10 ** 17, 123456789012]))


def score(rng):
    return rng.choice([str(rng.randint(-5, 5)), str(rng.randint(-5, 5)) + ".5", "0.1", "-0.25",
                       "1e20", "-1e-5", "3.14159", "inf", "-inf", str(rng.random() * 100)])


def bound(rng):
    b = rng.choice(["-inf", "+inf", str(rng.randint(-5, 5)), "(" + str(rng.randint(-5, 5)), "1.5", "(0.1"])
    return b


def lexbound(rng):
    return rng.choice(["-", "+", "[" + rng.choice("abcdefgh"), "(" + rng.choice("abcdefgh"), "[", "bad"])


def hash_cmd(rng):
    k = rng.choice(HKEYS + ["str"] if rng.random() < 0.05 else HKEYS)
    f = member(rng)
    c = rng.choice(["hset", "hset", "hsetnx", "hget", "hmset", "hmget", "hgetall", "hdel", "hdel", "hlen",
                    "hexists", "hkeys", "hvals", "hincrby", "hincrbyfloat", "hstrlen", "hrandfield", "hscan"])
    if c == "hset" or c == "hmset":
        args = [c, k]
        for _ in range(rng.choice([1, 1, 2, 4])):
            args += [member(rng), member(rng)]
        if rng.random() < 0.03:
            args.pop()
        return args
    if c == "hsetnx":
        return [c, k, f, member(rng)]
    if c in ("hget", "hexists", "hstrlen"):
        return [c, k, f]
    if c == "hmget":
        return [c, k] + [member(rng) for _ in range(3)]
    if c == "hdel":
        return [c, k] + [member(rng) for _ in range(rng.choice([1, 2, 5]))]
    if c == "hincrby":
        return [c, k, f, rng.choice(["1", "-3", "100", "x", str(2 ** 62), str(-2 ** 62)])]
    if c == "hincrbyfloat":
        return [c, k, f, rng.choice(["1.5", "-0.1", "3", "x", "1e3", "inf"])]
    if c == "hrandfield":
        return rng.choice([[c, k], [c, k, str(rng.randint(-6, 12))], [c, k, str(rng.randint(-6, 12)), "withvalues"],
                           [c, k, "2", "bad"]])
    if c == "hscan":
        return [c, k, "0", "COUNT", "1000"] + (["MATCH", "*a*"] if rng.random() < 0.3 else [])
    return [c, k]


def set_cmd(rng):
    k = rng.choice(SKEYS + ["str"] if rng.random() < 0.05 else SKEYS)
    c = rng.choice(["sadd", "sadd", "sadd", "srem", "smembers", "sismember", "smismember", "scard", "spop",
                    "srandmember", "smove", "sinter", "sintercard", "sunion", "sdiff", "sinterstore",
                    "sunionstore", "sdiffstore", "sscan"])
    many = lambda n: [member(rng) for _ in range(n)]
    keys = lambda: rng.sample(SKEYS + ["missing"], rng.randint(1, 3))
    if c == "sadd":
        return [c, k] + many(rng.choice([1, 2, 3, 6]))
    if c == "srem":
        return [c, k] + many(rng.choice([1, 3]))
    if c == "sismember":
        return [c, k, member(rng)]
    if c == "smismember":
        return [c, k] + many(3)
    if c == "spop":
        return rng.choice([[c, k], [c, k, str(rng.randint(0, 5))], [c, k, "-1"]])
    if c == "srandmember":
        return rng.choice([[c, k], [c, k, str(rng.randint(-5, 12))]])
    if c == "smove":
        return [c, k, rng.choice(SKEYS + ["str"]), member(rng)]
    if c in ("sinter", "sunion", "sdiff"):
        return [c] + keys()
    if c == "sintercard":
        ks = keys()
        return [c, str(len(ks))] + ks + (["LIMIT", str(rng.randint(0, 3))] if rng.random() < 0.5 else [])
    if c.endswith("store"):
        return [c, rng.choice(SKEYS)] + keys()
    if c == "sscan":
        return [c, k, "0", "COUNT", "1000"]
    return [c, k]


def zset_cmd(rng):
    k = rng.choice(ZKEYS + ["str"] if rng.random() < 0.05 else ZKEYS)
    if rng.random() < 0.15:
        return lex_cmd(rng)
    c = rng.choice(["zadd", "zadd", "zadd", "zadd", "zincrby", "zrem", "zscore", "zmscore", "zcard", "zcount",
                    "zrange", "zrange", "zrangestore", "zrangebyscore", "zrevrangebyscore",
                    "zrevrange", "zrank", "zrevrank", "zpopmin", "zpopmax",
                    "zmpop", "zrandmember", "zunionstore", "zinterstore", "zdiffstore", "zunion", "zinter",
                    "zdiff", "zremrangebyrank", "zremrangebyscore", "zscan"])
    if c == "zadd":
        flags = rng.sample(["NX", "XX", "GT", "LT", "CH", "INCR"], rng.choice([0, 0, 0, 1, 1, 2]))
        args = [c, k] + flags
        for _ in range(1 if "INCR" in flags else rng.choice([1, 2, 3, 5])):
            args += [score(rng), member(rng) if rng.random() < 0.7 else rng.choice("abcdef")]
        return args
    if c == "zincrby":
        return [c, k, score(rng), member(rng)]
    if c == "zrem":
        return [c, k] + [member(rng) for _ in range(rng.choice([1, 3]))]
    if c in ("zscore", "zrank", "zrevrank"):
        return [c, k, member(rng)]
    if c == "zmscore":
        return [c, k] + [member(rng) for _ in range(3)]
    if c == "zcount" or c == "zremrangebyscore":
        return [c, k, bound(rng), bound(rng)]
    if c in ("zrange", "zrangestore"):
        head = [c, rng.choice(ZKEYS), k] if c == "zrangestore" else [c, k]
        kind = rng.choice(["rank", "score"])
        if kind == "rank":
            args = head + [str(rng.randint(-6, 6)), str(rng.randint(-6, 10))]
        elif kind == "score":
            args = head + [bound(rng), bound(rng), "BYSCORE"]
        else:
            args = head + [lexbound(rng), lexbound(rng), "BYLEX"]
        if rng.random() < 0.3:
            args.append("REV")
        if kind != "rank" and rng.random() < 0.4:
            args += ["LIMIT", str(rng.randint(-1, 3)), str(rng.randint(-1, 4))]
        if c == "zrange" and kind != "lex" and rng.random() < 0.5:
            args.append("WITHSCORES")
        return args
    if c in ("zrangebyscore", "zrevrangebyscore"):
        args = [c, k, bound(rng), bound(rng)]
        if rng.random() < 0.5:
            args.append("WITHSCORES")
        if rng.random() < 0.3:
            args += ["LIMIT", str(rng.randint(0, 3)), str(rng.randint(-1, 4))]
        return args
    if c in ("zrevrange", "zremrangebyrank"):
        args = [c, k, str(rng.randint(-6, 6)), str(rng.randint(-6, 10))]
        if c == "zrevrange" and rng.random() < 0.5:
            args.append("WITHSCORES")
        return args
    if c in ("zpopmin", "zpopmax"):
        return rng.choice([[c, k], [c, k, str(rng.randint(0, 4))], [c, k, "-1"]])
    if c == "zmpop":
        ks = rng.sample(ZKEYS + ["missing"], rng.randint(1, 2))
        args = [c, str(len(ks))] + ks + [rng.choice(["MIN", "MAX"])]
        if rng.random() < 0.5:
            args += ["COUNT", str(rng.randint(0, 4))]
        return args
    if c == "zrandmember":
        return rng.choice([[c, k], [c, k, str(rng.randint(-5, 10))], [c, k, str(rng.randint(-5, 10)), "WITHSCORES"]])
    if c in ("zunionstore", "zinterstore", "zdiffstore", "zunion", "zinter", "zdiff"):
        ks = rng.sample(ZKEYS + SKEYS[:1] + ["missing"], rng.randint(1, 3))
        args = [c] + ([rng.choice(ZKEYS)] if c.endswith("store") else []) + [str(len(ks))] + ks
        if not c.startswith("zdiff"):
            if rng.random() < 0.4:
                args += ["WEIGHTS"] + [rng.choice(["1", "2", "-1", "0.5", "inf"]) for _ in ks]
            if rng.random() < 0.4:
                args += ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX"])]
        if not c.endswith("store") and rng.random() < 0.5:
            args.append("WITHSCORES")
        return args
    if c == "zscan":
        return [c, k, "0", "COUNT", "1000"]
    return [c, k]


def lex_cmd(rng):
    k = LEXKEY
    c = rng.choice(["zadd", "zadd", "zadd", "zrem", "zlexcount", "zremrangebylex", "zrangebylex",
                    "zrevrangebylex", "zrange", "zrangestore", "zpopmin", "zscan", "zrank"])
    if c == "zadd":
        args = [c, k] + rng.sample(["NX", "XX", "CH"], rng.choice([0, 0, 1]))
        for _ in range(rng.choice([1, 2, 4])):
            args += ["0", member(rng)]
        return args
    if c in ("zrem", "zrank"):
        return [c, k, member(rng)]
    if c in ("zlexcount", "zremrangebylex"):
        return [c, k, lexbound(rng), lexbound(rng)]
    if c in ("zrangebylex", "zrevrangebylex"):
        args = [c, k, lexbound(rng), lexbound(rng)]
        if rng.random() < 0.4:
            args += ["LIMIT", str(rng.randint(-1, 3)), str(rng.randint(-1, 4))]
        return args
    if c in ("zrange", "zrangestore"):
        head = [c, rng.choice(ZKEYS), k] if c == "zrangestore" else [c, k]
        args = head + [lexbound(rng), lexbound(rng), "BYLEX"]
        if rng.random() < 0.3:
            args.append("REV")
        if rng.random() < 0.4:
            args += ["LIMIT", str(rng.randint(-1, 3)), str(rng.randint(-1, 4))]
        if rng.random() < 0.05:
            args.append("WITHSCORES")
        return args
    if c == "zscan":
        return [c, k, "0", "COUNT", "1000"]
    return [c, k]


def pairs(items):
    return sorted(zip(items[0::2], items[1::2]), key=repr)


def normalize(cmd, val):
    """Reply value with unspecified orders removed."""
    if isinstance(val, tuple) or val is None:
        return val
    if cmd in UNORDERED or (cmd == "spop" and isinstance(val, list)):
        return sorted(val)
    if cmd in PAIRS_UNORDERED:
        return pairs(val)
    if cmd in ("hscan", "sscan", "zscan"):
        cursor, items = val
        if cmd == "sscan":
            return cursor, sorted(items)
        return cursor, pairs(items)
    return val


def check_random(cmd, args, mine, ref, contents):
    """SRANDMEMBER/HRANDFIELD/ZRANDMEMBER: same shape and size, valid members."""
    if isinstance(ref, tuple) or ref is None or not isinstance(ref, list):
        if isinstance(ref, bytes) and contents is not None:
            assert isinstance(mine, bytes) and mine in contents, (args, mine)
            return
        assert mine == ref, (args, mine, ref)
        return
    assert isinstance(mine, list) and len(mine) == len(ref), (args, mine, ref)
    names = []
    for item in mine:
        names.append(item[0] if isinstance(item, list) else item)
    with_pairs = args[-1].lower() in ("withvalues", "withscores")
    if with_pairs and names and not isinstance(mine[0], list):
        names = mine[0::2]
    for n in names:
        assert n in contents, (args, n, contents)
    if int(args[2]) > 0:
        assert len(set(names)) == len(names), (args, mine)


def snapshot_members(cli, key):
    raw, t = cli.call("type", key)
    if t == b"set":
        return set(cli.call("smembers", key)[1])
    if t == b"hash":
        return set(cli.call("hkeys", key)[1])
    if t == b"zset":
        return set(cli.call("zrange", key, "0", "-1")[1])
    return None


def resync_set(a, b, key):
    """After SPOP the two sides popped different members: copy the
    reference's remaining members to both sides."""
    members = sorted(b.call("smembers", key)[1])
    for cli in (a, b):
        cli.call("del", key)
        if members:
            cli.call("sadd", key, *members)


def run_sequence(mine, ref, rng, n):
    mismatches = []
    for i in range(n):
        r = rng.random()
        args = hash_cmd(rng) if r < 0.3 else set_cmd(rng) if r < 0.6 else zset_cmd(rng)
        cmd = args[0]
        contents = snapshot_members(ref, args[1]) if cmd in RANDOM else None
        raw_m, val_m = mine.call(*args)
        raw_r, val_r = ref.call(*args)
        if cmd in RANDOM:
            check_random(cmd, args, val_m, val_r, contents)
        elif cmd == "spop" and not isinstance(val_r, tuple) and val_r is not None:
            got = val_m if isinstance(val_m, list) else [val_m]
            want = val_r if isinstance(val_r, list) else [val_r]
            assert len(got) == len(want), (args, val_m, val_r)
            resync_set(mine, ref, args[1])
        elif cmd in UNORDERED or cmd in PAIRS_UNORDERED or cmd.endswith("scan") or cmd == "spop":
            assert normalize(cmd, val_m) == normalize(cmd, val_r), (i, args, val_m, val_r)
        elif raw_m != raw_r:
            mismatches.append((i, args, raw_m, raw_r))
            assert False, (i, args, raw_m, raw_r)
        if i % 25 == 0:
            for k in HKEYS + ZKEYS + [LEXKEY]:
                assert mine.call("object", "encoding", k) == ref.call("object", "encoding", k), (i, k, args)
                assert mine.call("type", k) == ref.call("type", k)
    for k in HKEYS + SKEYS + ZKEYS + [LEXKEY]:
        assert mine.call("exists", k) == ref.call("exists", k), k
    return mismatches


@pytest.mark.parametrize("proto,seed", [(2, 20242), (3, 20243), (2, 7), (3, 8)])
def test_types_match_redis(server, redis_ref, proto, seed):
    mine, ref = ExactConn(server.port), ExactConn(redis_ref.port)
    try:
        for cli in (mine, ref):
            cli.call("flushall")
            for name, value in THRESHOLDS:
                assert cli.call("config", "set", name, value)[1] == b"OK"
            cli.call("set", "str", "x")
            if proto == 3:
                cli.call("hello", "3")
        assert mine.call("config", "set", "set-max-listpack-entries", "8")[1] == b"OK"
        run_sequence(mine, ref, random.Random(seed), 3000)
    finally:
        for cli in (mine, ref):
            cli.call("hello", "2")
            for name, value in [("hash-max-listpack-entries", "128"), ("hash-max-listpack-value", "64"),
                                ("zset-max-listpack-entries", "128"), ("zset-max-listpack-value", "64"),
                                ("set-max-intset-entries", "512")]:
                cli.call("config", "set", name, value)
            cli.close()
        server.client().config_set("set-max-listpack-entries", "128")
