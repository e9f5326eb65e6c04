"""Bitmaps, HyperLogLogs and geo sets move between redis-like and Debian's
redis-server 7.0.15 both ways, through DUMP/RESTORE and through RDB files,
and read back the same: the string bytes (so HLL registers, encoding and
cached cardinality too), BITCOUNT/BITPOS/BITFIELD, PFCOUNT, GEOPOS,
GEOHASH and GEOSEARCH replies.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_bits_hll_geo_interop.py"""
import random

import pytest

from conftest import REDIS_SERVER

pytestmark = pytest.mark.differential

KEYS = ["bm:small", "bm:sparse", "bm:field", "hll:empty", "hll:sparse", "hll:dense", "hll:merged", "geo"]


def fill(c, seed=7):
    rnd = random.Random(seed)
    for off in (0, 7, 8, 100, 1000):
        c.setbit("bm:small", off, 1)
    c.setbit("bm:sparse", 5_000_000, 1)                 # 625 KB, mostly zero: LZF in the RDB
    c.bitfield("bm:field").set("i16", "#3", -1234).set("u63", 100, 2 ** 62 + 5).incrby("i8", 0, 300, "WRAP").execute()
    c.pfadd("hll:empty")
    c.pfadd("hll:sparse", *["s%d" % i for i in range(60)])
    for start in range(0, 20000, 1000):
        c.pfadd("hll:dense", *["d%d" % i for i in range(start, start + 1000)])
    c.pfcount("hll:dense")                            # caches the cardinality in the header
    c.pfmerge("hll:merged", "hll:sparse", "hll:dense")
    for i in range(200):
        c.geoadd("geo", (rnd.uniform(-180, 180), rnd.uniform(-85, 85), "p%d" % i))


def observe(c):
    """Everything a client can read of KEYS."""
    out = {}
    for k in KEYS:
        out[k, "type"] = c.type(k)
    # PFCOUNT first: it caches the cardinality in the HLL's header, so the
    # bytes read after it are the same on every observation.
    for k in ("hll:empty", "hll:sparse", "hll:dense", "hll:merged"):
        out[k, "pfcount"] = c.pfcount(k)
    for k in ("bm:small", "bm:sparse", "bm:field", "hll:empty", "hll:sparse", "hll:dense", "hll:merged"):
        out[k, "bytes"] = c.get(k)
    for k in ("bm:small", "bm:sparse"):
        out[k, "bitcount"] = c.bitcount(k)
        out[k, "bitpos"] = c.bitpos(k, 1)
    out["bm:field", "get"] = c.bitfield("bm:field").get("i16", "#3").get("u63", 100).get("i8", 0).execute()
    out["geo", "zset"] = c.zrange("geo", 0, -1, withscores=True)
    out["geo", "pos"] = c.geopos("geo", "p0", "p1", "p199", "nosuch")
    out["geo", "hash"] = c.geohash("geo", "p0", "p50", "p100")
    out["geo", "search"] = c.geosearch("geo", longitude=0.5, latitude=0.5, radius=5000, unit="km", withdist=True,
                                       withcoord=True, withhash=True, sort="ASC")
    return out


def test_dump_restore_both_ways(server, redis_ref):
    ours, ref = server.client(decode_responses=False), redis_ref.client(decode_responses=False)
    for c in (ours, ref):
        c.flushall()
        fill(c)
    assert observe(ours) == observe(ref)          # the same commands made the same values
    for src, dst in ((ref, ours), (ours, ref)):
        for k in KEYS:
            dst.restore(k, 0, src.dump(k), replace=True)
        assert observe(dst) == observe(src)
    # A corrupted HLL is still a string; PFCOUNT refuses it the same way.
    bad = bytearray(ref.get("hll:dense"))
    bad[20] = 0xFF
    for c in (ours, ref):
        c.set("hll:bad", bytes(bad[:100]))
    errs = []
    for c in (ours, ref):
        with pytest.raises(Exception) as e:
            c.pfcount("hll:bad")
        errs.append(str(e.value))
    assert errs[0] == errs[1] == "WRONGTYPE Key is not a valid HyperLogLog string value."


@pytest.mark.parametrize("direction", ["redis-to-ours", "ours-to-redis"])
def test_rdb_both_ways(start_server, direction):
    if direction == "redis-to-ours":
        src = start_server(binary=REDIS_SERVER)
    else:
        src = start_server()
    c = src.client(decode_responses=False)
    fill(c)
    expected = observe(c)
    assert c.save()
    if direction == "redis-to-ours":
        dst = start_server(args=("--dir", src.dir))
    else:
        dst = start_server(binary=REDIS_SERVER, args=("--dir", src.dir))
    assert observe(dst.client(decode_responses=False)) == expected
