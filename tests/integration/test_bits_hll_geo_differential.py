"""Differential tests for bitmaps, HyperLogLog and geo: seeded random command
streams go to redis-like-server and to Debian's redis-server 7.0 and the raw
replies must match byte for byte (errors included), in RESP2 and RESP3.
HLL values are compared as bytes too (GET), so the sparse/dense encodings
are Redis's own; HLL strings made by one server are SET on the other and
must count the same.  Geo replies (distances, coordinates, hashes, the
order of unsorted results) must be identical.

Edge cases: offsets at proto-max-bulk-len (lowered to 1mb on both sides so
the limit is cheap to reach), empty and missing keys, wrong types,
negative and zero counts, corrupted HLLs.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_bits_hll_geo_differential.py"""
import random
import re

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential

LIMIT_BITS = 8 * 1024 * 1024          # proto-max-bulk-len 1mb, in bits
BKEYS = ["b0", "b1", "b2"]
HKEYS = ["h0", "h1", "h2"]
GKEYS = ["g0", "g1"]


@pytest.fixture
def pair(server, redis_ref):
    mine, ref = ExactConn(server.port), ExactConn(redis_ref.port)
    for cli in (mine, ref):
        cli.call("flushall")
        assert cli.call("config", "set", "proto-max-bulk-len", "1mb")[1] == b"OK"
    yield mine, ref
    for cli in (mine, ref):
        cli.call("hello", "2")
        cli.call("flushall")
        cli.call("config", "set", "proto-max-bulk-len", "512mb")
        cli.call("config", "set", "hll-sparse-max-bytes", "3000")
        cli.call("config", "set", "zset-max-listpack-entries", "128")
        cli.close()


def is_ll(s):
    return bool(re.fullmatch(r"-?[1-9][0-9]*|0", s)) and -(2 ** 63) <= int(s) < 2 ** 63


def bit_args_error_74(args):
    """Redis 7.2+ parses all of BITCOUNT/BITPOS's arguments before it looks
    the key up (7.0 answered 0 or -1 for a missing key, WRONGTYPE for another
    type, or 0 for an empty range, whatever followed): the error 7.4 gives
    for args, or None when they parse.  test_r74_surface.py checks these
    errors against 7.4.1 itself."""
    c, n = args[0].lower(), len(args)
    syntax, notint = b"-ERR syntax error\r\n", b"-ERR value is not an integer or out of range\r\n"
    unit_ok = lambda u: u.lower() in ("bit", "byte")
    if c == "bitcount":
        if n not in (2, 4, 5):
            return syntax
        if n >= 4 and not (is_ll(args[2]) and is_ll(args[3])):
            return notint
        return syntax if n == 5 and not unit_ok(args[4]) else None
    if n > 6:  # BITPOS: its bit argument is checked first by both versions
        return syntax
    if n >= 4 and not is_ll(args[3]):
        return notint
    if n == 6 and not unit_ok(args[5]):
        return syntax
    return notint if n >= 5 and not is_ll(args[4]) else None


def same(mine, ref, *args):
    rm, vm = mine.call(*args)
    rr, vr = ref.call(*args)
    if rm != rr and args[0].lower() in ("bitcount", "bitpos") and bit_args_error_74(args):
        # 7.0 looked at the key (missing, wrong type, an empty range) first
        assert rm == bit_args_error_74(args), (args, rm[:300], rr[:300])
        return vm
    assert rm == rr, (args, rm[:300], rr[:300])
    return vm


def set_proto(mine, ref, proto):
    if proto == 3:
        for cli in (mine, ref):
            cli.call("hello", "3")


# ------------------------------------------------------------ bitmaps

def offset(rng):
    r = rng.random()
    if r < 0.7:
        return str(rng.randint(0, 200))
    if r < 0.8:
        return str(rng.choice([LIMIT_BITS - 1, LIMIT_BITS, LIMIT_BITS + 1, -1, 2 ** 32, 2 ** 63]))
    if r < 0.9:
        return "#" + str(rng.randint(-1, 20))
    return rng.choice(["x", "", "1.5", "007", str(rng.randint(1000, 5000))])


def index(rng):
    return str(rng.choice([rng.randint(-30, 30), 0, -1, 2 ** 40, -(2 ** 40)]))


def bf_type(rng):
    if rng.random() < 0.05:
        return rng.choice(["u64", "i65", "i0", "x8", "I8", "u"])
    return rng.choice("iu") + str(rng.randint(1, 63 if rng.random() < 0.5 else 8))


def bitfield_ops(rng, readonly):
    ops = []
    for _ in range(rng.randint(0, 4)):
        c = rng.random()
        if c < 0.2 and not readonly:
            ops += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL", "wrap", "bad"])]
        elif c < 0.5 or readonly:
            ops += ["GET", bf_type(rng), offset(rng)]
        else:
            ops += [rng.choice(["SET", "INCRBY"]), bf_type(rng), offset(rng),
                    str(rng.choice([rng.randint(-300, 300), 2 ** 63 - 1, -(2 ** 63), 2 ** 40]))]
    if readonly and rng.random() < 0.05:
        ops += ["SET", "u8", "0", "1"]
    return ops


def bit_cmd(rng):
    k = rng.choice(BKEYS + ["lst", "missing"] if rng.random() < 0.08 else BKEYS)
    c = rng.choice(["setbit", "setbit", "setbit", "getbit", "bitcount", "bitcount", "bitpos", "bitpos",
                    "bitop", "bitfield", "bitfield", "bitfield_ro", "get", "set", "strlen", "append"])
    if c == "setbit":
        return [c, k, offset(rng), rng.choice(["0", "1", "1", "2", "x"])]
    if c == "getbit":
        return [c, k, offset(rng)]
    if c == "bitcount":
        return rng.choice([[c, k], [c, k, index(rng)], [c, k, index(rng), index(rng)],
                           [c, k, index(rng), index(rng), rng.choice(["BIT", "BYTE", "bit", "nope"])]])
    if c == "bitpos":
        bit = rng.choice(["0", "1", "1", "2"])
        return rng.choice([[c, k, bit], [c, k, bit, index(rng)], [c, k, bit, index(rng), index(rng)],
                           [c, k, bit, index(rng), index(rng), rng.choice(["BIT", "BYTE", "x"])],
                           [c, k, bit, "0", "-1", "bit", "extra"]])
    if c == "bitop":
        op = rng.choice(["AND", "OR", "XOR", "NOT", "and", "nand"])
        srcs = rng.sample(BKEYS + ["missing", "n"], 1 if op == "NOT" and rng.random() < 0.8 else rng.randint(1, 3))
        return [c, op, rng.choice(BKEYS + ["dst"])] + srcs
    if c in ("bitfield", "bitfield_ro"):
        return [c, k] + bitfield_ops(rng, c == "bitfield_ro")
    if c == "set":
        return [c, k, rng.choice(["", "foobar", "\xff\xf0\x00", "12345", "x" * 50])]
    if c == "append":
        return [c, k, rng.choice(["a", "\x00\x01", "zz"])]
    return [c, k]


@pytest.mark.parametrize("proto,seed", [(2, 101), (3, 102), (2, 103)])
def test_bitmaps_match_redis(pair, proto, seed):
    mine, ref = pair
    set_proto(mine, ref, proto)
    for cli in (mine, ref):
        cli.call("rpush", "lst", "a")
        cli.call("set", "n", "777")
    rng = random.Random(seed)
    for i in range(2500):
        args = bit_cmd(rng)
        same(mine, ref, *args)
        if i % 100 == 0:
            for k in BKEYS + ["dst"]:
                same(mine, ref, "get", k)
                same(mine, ref, "object", "encoding", k)


def test_bitmap_edges(pair):
    mine, ref = pair
    cases = [
        ["setbit", "big", str(LIMIT_BITS - 1), "1"],       # the last bit the limit allows: 1 MB
        ["strlen", "big"], ["bitcount", "big"], ["bitpos", "big", "1"], ["bitpos", "big", "0", "-1"],
        ["setbit", "big", str(LIMIT_BITS), "1"],           # one past: the error, nothing allocated
        ["getbit", "big", str(LIMIT_BITS)],
        ["bitfield", "big", "SET", "i64", str(LIMIT_BITS - 1), "5"], ["strlen", "big"],
        ["bitfield", "big", "GET", "u8", "#" + str(LIMIT_BITS // 8 - 1)],
        ["bitfield", "big", "GET", "u8", "#" + str(LIMIT_BITS // 8)],
        ["bitcount", "missing", "x", "y"], ["bitcount", "big", "0"], ["bitcount", "big", "1", "2", "3"],
        ["bitpos", "missing", "x"], ["bitpos", "missing", "0", "5", "10"],
        ["set", "empty", ""], ["bitcount", "empty"], ["bitpos", "empty", "0"], ["bitpos", "empty", "1"],
        ["bitpos", "empty", "0", "0", "-1"], ["getbit", "empty", "0"], ["bitfield", "empty", "GET", "u8", "0"],
        ["bitop", "and", "d", "empty", "missing"], ["exists", "d"],
        ["setbit", "k", "0"], ["bitop", "not"], ["bitfield_ro", "k", "INCRBY", "u8", "0", "1"],
        ["set", "f", "\xff"], ["bitpos", "f", "0"], ["bitpos", "f", "0", "0"], ["bitpos", "f", "0", "0", "0"],
        ["bitpos", "f", "1", "8", "-1", "bit"], ["bitpos", "f", "0", "3", "5", "bit"],
    ]
    for args in cases:
        same(mine, ref, *args)


# ------------------------------------------------------------ HyperLogLog

def hll_cmd(rng, pool):
    k = rng.choice(HKEYS + ["str", "missing"] if rng.random() < 0.05 else HKEYS)
    c = rng.choice(["pfadd", "pfadd", "pfadd", "pfcount", "pfcount", "pfmerge", "get", "pfdebug"])
    if c == "pfadd":
        return [c, k] + [str(rng.randrange(pool)) for _ in range(rng.choice([0, 1, 3, 10, 60]))]
    if c == "pfcount":
        return [c] + rng.sample(HKEYS + ["missing"], rng.randint(1, 3))
    if c == "pfmerge":
        return [c, rng.choice(HKEYS + ["hm"])] + rng.sample(HKEYS + ["missing"], rng.randint(0, 3))
    if c == "pfdebug":
        # GETREG replies 16384 integers: rare, it dominates the run time.
        sub = "getreg" if rng.random() < 0.05 else rng.choice(["encoding", "decode", "todense", "nope"])
        return [c, sub, k]
    return [c, k]


@pytest.mark.parametrize("proto,seed,sparse_max", [(2, 201, "3000"), (3, 202, "3000"), (2, 203, "200")])
def test_hll_matches_redis(pair, proto, seed, sparse_max):
    mine, ref = pair
    set_proto(mine, ref, proto)
    for cli in (mine, ref):
        cli.call("set", "str", "not an hll")
        assert cli.call("config", "set", "hll-sparse-max-bytes", sparse_max)[1] == b"OK"
    rng = random.Random(seed)
    for i in range(1500):
        pool = rng.choice([50, 1000, 100000])
        args = hll_cmd(rng, pool)
        same(mine, ref, *args)
        if i % 50 == 0:
            for k in HKEYS + ["hm"]:
                same(mine, ref, "get", k)


def test_hll_interop(pair):
    """HLL strings made by one server count the same on the other, both
    encodings, and merge across servers' values."""
    mine, ref = pair
    sizes = {"e": 0, "s": 50, "m": 800, "d": 30000}
    for name, n in sizes.items():
        for start in range(0, n, 500):
            elems = ["%s:%d" % (name, i) for i in range(start, min(n, start + 500))]
            assert ref.call("pfadd", "r" + name, *elems)[1] in (0, 1)
            assert mine.call("pfadd", "m" + name, *elems)[1] in (0, 1)
        if n == 0:
            ref.call("pfadd", "r" + name)
            mine.call("pfadd", "m" + name)
    for name in sizes:
        redis_made = ref.call("get", "r" + name)[1]
        ours_made = mine.call("get", "m" + name)[1]
        assert redis_made == ours_made, name          # same additions, same bytes
        mine.call("set", "x" + name, redis_made)
        ref.call("set", "x" + name, ours_made)
        assert mine.call("pfcount", "x" + name)[1] == ref.call("pfcount", "r" + name)[1], name
        assert ref.call("pfcount", "x" + name)[1] == mine.call("pfcount", "m" + name)[1], name
        # The cached cardinality written by PFCOUNT is in the same place.
        assert mine.call("get", "x" + name)[1] == ref.call("get", "r" + name)[1], name
    for cli in (mine, ref):
        cli.call("pfmerge", "all", "xs", "xm", "xd")
    same(mine, ref, "get", "all")
    same(mine, ref, "pfcount", "all")
    same(mine, ref, "pfcount", "xs", "xm", "xd", "xe")
    same(mine, ref, "pfdebug", "encoding", "xd")
    same(mine, ref, "pfdebug", "encoding", "xm")


def test_hll_corrupted(pair):
    mine, ref = pair
    ref.call("pfadd", "good", "a", "b", "c")
    good = ref.call("get", "good")[1]
    dense_hdr = b"HYLL\x00" + b"\x00" * 11
    bad = {
        "tail": good + b"\x7f\xff",                  # covers more than 16384 registers
        "short": good[:17],                          # covers fewer
        "val": good[:16] + b"\xfc" * 4,              # VAL runs that run short
        "magic": b"HYLX" + good[4:],
        "enc": good[:4] + b"\x02" + good[5:],
        "dense": dense_hdr + b"\x00" * 100,          # dense of the wrong length
        "tiny": b"HYLL",
    }
    for cli in (mine, ref):
        for k, v in bad.items():
            cli.call("set", k, v)
    for k in bad:
        same(mine, ref, "pfcount", k)
        same(mine, ref, "pfadd", k, "x", "y")
        same(mine, ref, "pfcount", k, "good")
        same(mine, ref, "pfmerge", "dst", k)
        same(mine, ref, "pfdebug", "getreg", k)
        same(mine, ref, "pfdebug", "todense", k)
    same(mine, ref, "pfselftest")
    same(mine, ref, "pfdebug", "encoding", "missing")
    same(mine, ref, "pfdebug", "encoding")


# ------------------------------------------------------------ geo

def lonlat(rng):
    r = rng.random()
    if r < 0.9:      # a 4x4 degree area so that searches find things
        return ["%.6f" % rng.uniform(10, 14), "%.6f" % rng.uniform(40, 44)]
    if r < 0.95:
        return ["%.6f" % rng.uniform(-180, 180), "%.6f" % rng.uniform(-85, 85)]
    return rng.choice([["181", "0"], ["0", "85.06"], ["x", "1"], ["nan", "1"], ["180", "85.05112878"],
                       ["-180", "-85.05112878"]])


def unit(rng):
    return rng.choice(["m", "km", "km", "mi", "ft", "KM", "parsec"])


def member(rng):
    return "m%d" % rng.randint(0, 60)


def search_opts(rng, store_ok, search):
    opts = []
    for _ in range(rng.randint(0, 3)):
        o = rng.choice(["WITHDIST", "WITHCOORD", "WITHHASH", "ASC", "DESC", "COUNT", "ANY", "STORE", "STOREDIST"])
        if o == "COUNT":
            opts += ["COUNT", str(rng.choice([1, 2, 5, 20, 0, -1]))]
        elif o in ("STORE", "STOREDIST") and not search:
            if store_ok:
                opts += [o, rng.choice(["dst", "g1"])]
        elif o == "STORE":
            continue
        else:
            opts.append(o)
    return opts


def geo_cmd(rng):
    k = rng.choice(GKEYS + ["str", "missing"] if rng.random() < 0.05 else GKEYS)
    c = rng.choice(["geoadd", "geoadd", "geoadd", "geodist", "geohash", "geopos", "georadius", "georadius_ro",
                    "georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearch", "geosearchstore",
                    "zrem"])
    radius = rng.choice(["10", "50", "150", "300", "0", "-1", "x", "1000"])
    if c == "geoadd":
        args = [c, k] + rng.sample(["NX", "XX", "CH"], rng.choice([0, 0, 0, 1, 2]))
        for _ in range(rng.choice([1, 1, 3, 8])):
            args += lonlat(rng) + [member(rng)]
        if rng.random() < 0.03:
            args.pop()
        return args
    if c == "zrem":
        return [c, k, member(rng), member(rng)]
    if c == "geodist":
        return [c, k, member(rng), member(rng)] + rng.choice([[], [unit(rng)], ["km", "extra"]])
    if c in ("geohash", "geopos"):
        return [c, k] + [member(rng) for _ in range(rng.randint(1, 4))]
    if c.startswith("georadiusbymember"):
        return [c, k, member(rng), radius, unit(rng)] + search_opts(rng, c == "georadiusbymember", False)
    if c.startswith("georadius"):
        return [c, k] + lonlat(rng) + [radius, unit(rng)] + search_opts(rng, c == "georadius", False)
    head = [c, "dst", k] if c == "geosearchstore" else [c, k]
    center = rng.choice([["FROMMEMBER", member(rng)], ["FROMLONLAT"] + lonlat(rng)])
    shape = rng.choice([["BYRADIUS", radius, unit(rng)],
                        ["BYBOX", rng.choice(["100", "300", "600", "-5"]), rng.choice(["100", "250", "500"]), unit(rng)]])
    parts = [center, shape]
    rng.shuffle(parts)
    if rng.random() < 0.04:
        parts = parts[:1]
    args = head + parts[0] + (parts[1] if len(parts) > 1 else [])
    return args + search_opts(rng, False, True)


@pytest.mark.parametrize("proto,seed", [(2, 301), (3, 302), (2, 303)])
def test_geo_matches_redis(pair, proto, seed):
    mine, ref = pair
    set_proto(mine, ref, proto)
    for cli in (mine, ref):
        cli.call("set", "str", "x")
        cli.call("config", "set", "zset-max-listpack-entries", "16")
    rng = random.Random(seed)
    for i in range(2500):
        args = geo_cmd(rng)
        same(mine, ref, *args)
        if i % 100 == 0:
            for k in GKEYS + ["dst"]:
                same(mine, ref, "zrange", k, "0", "-1", "WITHSCORES")
                same(mine, ref, "object", "encoding", k)
