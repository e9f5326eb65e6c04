"""Differential: RDB files move both ways between redis-like-server and
Debian's redis-server 7.0 with identical contents (every type in small and
large encodings, LZF strings, TTLs, several databases)."""
import os

import pytest

from conftest import REDIS_SERVER
from persist_helpers import populate, snapshot, ttls

pytestmark = pytest.mark.differential

TTL_KEYS = ["ttl", "ttllist"]


def _need_redis():
    if not os.path.exists(REDIS_SERVER):
        pytest.fail("redis-server is not installed: utils/install-deps.sh should have installed it")


def _close_ttls(a, b, tolerance=3000):
    return all(abs(a[k] - b[k]) <= tolerance and b[k] > 0 for k in a)


def test_our_dump_loads_in_redis(start_server):
    _need_redis()
    ours = start_server()
    r = ours.client()
    populate(r)
    expected, expected_ttls = snapshot(r), ttls(r, TTL_KEYS)
    assert r.save()
    ref = start_server(binary=REDIS_SERVER, args=("--dir", ours.dir))
    rr = ref.client()
    assert snapshot(rr) == expected
    assert _close_ttls(expected_ttls, ttls(rr, TTL_KEYS))
    assert rr.dbsize() == r.dbsize()


def test_redis_dump_loads_in_ours(start_server):
    _need_redis()
    ref = start_server(binary=REDIS_SERVER)
    rr = ref.client()
    populate(rr)
    # A function library is stored as an aux opcode: ours skips it.
    rr.function_load("#!lua name=rllib\nredis.register_function('rlf', function() return 1 end)")
    expected, expected_ttls = snapshot(rr), ttls(rr, TTL_KEYS)
    encodings = {k: rr.object("encoding", k) for k in ("list", "biglist", "intset", "set", "zset", "bigzset",
                                                         "hash", "bighash")}
    assert encodings["bigzset"] == "skiplist" and encodings["zset"] == "listpack"
    assert encodings["hash"] == "listpack" and encodings["intset"] == "intset"
    assert rr.save()
    ours = start_server(args=("--dir", ref.dir))
    r = ours.client()
    assert snapshot(r) == expected
    assert _close_ttls(expected_ttls, ttls(r, TTL_KEYS))
    assert r.object("encoding", "intset") == "intset"
    assert r.object("encoding", "bigset") == "hashtable"


def test_round_trip_through_both(start_server):
    """ours -> redis -> ours keeps everything (Redis rewrites our simple
    encodings into its listpack/quicklist blobs on the way)."""
    _need_redis()
    a = start_server()
    ra = a.client()
    populate(ra, prefix="rt:")
    expected = snapshot(ra)
    ra.save()
    ref = start_server(binary=REDIS_SERVER, args=("--dir", a.dir))
    ref.client().save()
    ref.stop()
    b = start_server(args=("--dir", a.dir))
    assert snapshot(b.client()) == expected
