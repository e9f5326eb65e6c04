"""SORT / SORT_RO differential test: a seeded random stream of SORT calls
(BY weights in strings and hash fields, "nosort" BY, GET patterns incl.
"#", LIMIT at and past the edges, ASC/DESC, ALPHA, STORE) against lists,
sets (intset and hashtable), sorted sets, missing keys and wrong types goes
to redis-like-server and Debian's redis-server 7.0; raw replies must match
byte for byte in RESP2 and RESP3.  Where Redis's own order is unspecified
(a set read without sorting; ALPHA by a pattern, whose equal weights tie
in qsort's order) the elements are compared as sorted lists.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_sort_differential.py"""
import random

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential

# No "1e400": Redis 7.0 leaves strtod's ERANGE in errno and never clears
# it, so every later numeric SORT on that server would fail too.
ELEMS = ["1", "2", "3", "10", "-4", "2.5", "a", "b", "B", "ab", "", "nan", "0x10", " 7", "zz", "inf"]
NUMERIC = ["1", "2", "3", "10", "-4", "2.5", "0", "7", "-1.5e3"]


def setup_cmds(rng):
    cmds = [["flushall"]]
    cmds.append(["rpush", "lnum"] + [rng.choice(NUMERIC) for _ in range(12)])
    cmds.append(["rpush", "lstr"] + [rng.choice(ELEMS) for _ in range(12)])
    cmds.append(["rpush", "lbig"] + [str(rng.randint(-1000, 1000)) for _ in range(300)])
    cmds.append(["sadd", "sint", "5", "3", "9", "-1", "100"])
    cmds.append(["sadd", "snum"] + NUMERIC)
    cmds.append(["sadd", "sstr"] + ["a", "b", "c", "B", "ab"])
    cmds.append(["zadd", "z"] + sum([[str(i % 3), e] for i, e in enumerate(NUMERIC)], []))
    cmds.append(["zadd", "zs"] + sum([[str(i), e] for i, e in enumerate(["x", "y", "a", "m"])], []))
    cmds.append(["set", "str", "x"])
    cmds.append(["hset", "hh", "f", "1"])
    for e in NUMERIC + ["a", "b", "c", "x", "y", "m", "B", "ab"]:
        if rng.random() < 0.8:
            cmds.append(["set", "w_" + e, rng.choice(NUMERIC + ["zz", "q"])])
        if rng.random() < 0.7:
            cmds.append(["hset", "h_" + e, "f", rng.choice(NUMERIC), "g", "v" + e])
        if rng.random() < 0.6:
            cmds.append(["set", "o_" + e, "obj-" + e])
    return cmds


def sort_cmd(rng):
    key = rng.choice(["lnum", "lnum", "lstr", "lbig", "sint", "snum", "sstr", "z", "zs", "missing", "str", "hh"])
    ro = rng.random() < 0.2
    args = ["sort_ro" if ro else "sort", key]
    by = None
    if rng.random() < 0.4:
        by = rng.choice(["w_*", "h_*->f", "h_*->g", "nosort", "w_*->f", "*", "x*y", "h_*->"])
        args += ["BY", by]
    if rng.random() < 0.3:
        args += ["LIMIT", str(rng.choice([0, 1, 2, -1, 5, 100])), str(rng.choice([0, 1, 3, -1, -5, 1000]))]
    if rng.random() < 0.4:
        args.append(rng.choice(["ASC", "DESC"]))
    alpha = rng.random() < 0.4
    if alpha:
        args.append("ALPHA")
    for _ in range(rng.choice([0, 0, 1, 2])):
        args += ["GET", rng.choice(["#", "o_*", "h_*->g", "w_*", "nostar"])]
    store = not ro and rng.random() < 0.2
    if store:
        args += ["STORE", rng.choice(["dst", "dst2"])]
    if rng.random() < 0.03:
        args.append(rng.choice(["BOGUS", "LIMIT", "BY", "STORE"]))
    nosort = by is not None and "*" not in by
    unordered = (nosort and key.startswith("s") and not store) or (alpha and by is not None and "*" in by)
    return args, unordered, store


@pytest.mark.parametrize("proto", [2, 3])
def test_sort_stream_matches_redis(server, redis_ref, proto):
    rng = random.Random(1600 + proto)
    conns = [ExactConn(server.port), ExactConn(redis_ref.port)]
    for c in conns:
        if proto == 3:
            c.call("hello", "3")
    for cmd in setup_cmds(rng):
        a, b = conns[0].call(*cmd), conns[1].call(*cmd)
        assert a[0] == b[0], cmd
    for i in range(1500):
        cmd, unordered, store = sort_cmd(rng)
        a, b = conns[0].call(*cmd), conns[1].call(*cmd)
        if unordered and isinstance(a[1], list) and isinstance(b[1], list):
            if "LIMIT" in cmd:   # which elements fall in the window is unspecified too
                assert len(a[1]) == len(b[1]), (i, cmd)
            else:
                assert sorted(a[1], key=repr) == sorted(b[1], key=repr), (i, cmd)
        else:
            assert a[0] == b[0], (i, cmd, a[0][:300], b[0][:300])
        if store and unordered:   # keep the two stores identical for later commands
            for c in conns:
                c.call("del", cmd[-1])
        if store and not unordered:
            dst = cmd[-1]
            a, b = conns[0].call("lrange", dst, "0", "-1"), conns[1].call("lrange", dst, "0", "-1")
            assert a[0] == b[0], (i, cmd)
            a, b = conns[0].call("exists", dst), conns[1].call("exists", dst)
            assert a[0] == b[0], (i, cmd)


def test_sort_store_replaces_and_deletes(server):
    c = server.client()
    c.flushall()
    c.rpush("l", 3, 1, 2)
    c.set("dst", "old")
    c.expire("dst", 100)
    assert c.sort("l", store="dst") == 3
    assert c.lrange("dst", 0, -1) == ["1", "2", "3"]
    assert c.ttl("dst") == -1
    assert c.sort("missing", store="dst") == 0
    assert not c.exists("dst")
    # A set under BY nosort + STORE is sorted ALPHA (deterministic result).
    c.sadd("s", "b", "a", "c")
    assert c.sort("s", by="nosort", store="dst") == 3
    assert c.lrange("dst", 0, -1) == ["a", "b", "c"]


def test_sort_out_of_range_weight_is_an_error(server):
    c = server.client()
    c.flushall()
    c.rpush("l", "1", "1e400")
    with pytest.raises(Exception, match="can't be converted into double"):
        c.sort("l")
    c.rpush("m", "2", "1")
    assert c.sort("m") == ["1", "2"]   # no error left behind
