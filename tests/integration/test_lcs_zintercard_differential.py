"""LCS and ZINTERCARD differential test: seeded random streams (short
strings over small alphabets so matches and ties are frequent; sets,
intsets and sorted sets in both encodings; LIMIT at 0, below and above the
answer) plus edge cases (empty and missing keys, wrong types, bad options)
go to redis-like-server and Debian's redis-server 7.0; raw replies must
match byte for byte in RESP2 and RESP3.  LOLWUT's reply shape is checked
against Redis's (the version line differs: ours names the version we
report in INFO)."""
import random

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential


def rand_str(rng):
    return "".join(rng.choice("abc" if rng.random() < 0.5 else "abcdefgh") for _ in range(rng.randint(0, 14)))


def lcs_cmd(rng):
    a, b = rng.choice(["s1", "s2", "s3", "missing", "lst"]), rng.choice(["s1", "s2", "s3", "missing"])
    args = ["lcs", a, b]
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        opt = rng.choice(["IDX", "LEN", "WITHMATCHLEN", "MINMATCHLEN", "MINMATCHLEN", "BOGUS"])
        args.append(opt)
        if opt == "MINMATCHLEN":
            args.append(rng.choice(["0", "1", "2", "3", "-5", "x"]))
    return args


def zic_cmd(rng):
    keys = [rng.choice(["z1", "z2", "zbig", "s1i", "sbig", "missing", "s1"]) for _ in range(rng.randint(1, 3))]
    n = len(keys)
    if rng.random() < 0.05:
        n = rng.choice([0, -1, n + 1, "x"])
    args = ["zintercard", str(n)] + keys
    if rng.random() < 0.5:
        args += ["LIMIT", str(rng.choice([0, 1, 2, 5, 100, -1]))]
    if rng.random() < 0.03:
        args.append("BOGUS")
    return args


@pytest.mark.parametrize("proto", [2, 3])
def test_streams_match_redis(server, redis_ref, proto):
    rng = random.Random(160 + proto)
    conns = [ExactConn(server.port), ExactConn(redis_ref.port)]
    for c in conns:
        c.call("flushall")
        if proto == 3:
            c.call("hello", "3")
    setup = [["rpush", "lst", "x"],
             ["zadd", "zbig"] + sum([[str(i % 7), "m%d" % i] for i in range(200)], []),
             ["sadd", "sbig"] + ["m%d" % i for i in range(0, 400, 3)],
             ["sadd", "s1i", "1", "2", "3", "4", "5"]]
    for cmd in setup:
        assert conns[0].call(*cmd)[0] == conns[1].call(*cmd)[0]
    for i in range(1500):
        r = rng.random()
        if r < 0.15:
            cmd = ["set", rng.choice(["s1", "s2", "s3"]), rand_str(rng)]
        elif r < 0.25:
            k = rng.choice(["z1", "z2"])
            cmd = ["zadd", k] + sum([[str(rng.randint(0, 3)), rng.choice(["1", "2", "3", "m3", "m6", "a", "b"])]
                                     for _ in range(rng.randint(1, 4))], [])
        elif r < 0.3:
            cmd = ["del", rng.choice(["z1", "z2", "s1", "s2"])]
        elif r < 0.65:
            cmd = lcs_cmd(rng)
        else:
            cmd = zic_cmd(rng)
        a, b = conns[0].call(*cmd), conns[1].call(*cmd)
        assert a[0] == b[0], (i, cmd, a[0][:200], b[0][:200])


def test_lcs_memory_limit_matches_redis(server, redis_ref):
    conns = [ExactConn(server.port), ExactConn(redis_ref.port)]
    for c in conns:
        c.call("config", "set", "proto-max-bulk-len", str(1024 * 1024))
        c.call("set", "a", "x" * 1000)
        c.call("set", "b", "y" * 1000)
    try:
        a, b = conns[0].call("lcs", "a", "b"), conns[1].call("lcs", "a", "b")
        assert a[0] == b[0]
        assert a[1][0] == "err"
    finally:
        for c in conns:
            c.call("config", "set", "proto-max-bulk-len", str(512 * 1024 * 1024))


@pytest.mark.parametrize("proto", [2, 3])
def test_lolwut_shape(server, redis_ref, proto):
    conns = [ExactConn(server.port), ExactConn(redis_ref.port)]
    for c in conns:
        if proto == 3:
            c.call("hello", "3")
    ours, ref = conns[0].call("lolwut")[0], conns[1].call("lolwut")[0]
    assert ours[:1] == ref[:1]                      # bulk in RESP2, verbatim in RESP3
    assert b"Redis ver. 7.4.1" in ours  # we report 7.4.1 (issue 47); 7.0.15 says its own
    for args in (["lolwut", "version", "x"], ["lolwut", "version"]):
        assert conns[0].call(*args)[0][:1] == conns[1].call(*args)[0][:1]
    assert conns[0].call("lolwut", "version", "x")[0] == conns[1].call("lolwut", "version", "x")[0]
