"""Differential: RDB files move both ways between redis-like-server and
Debian's redis-server 7.0 with identical contents (every type in small and
large encodings, LZF strings, TTLs, several databases); Redis's own
redis-check-rdb and redis-check-aof accept our RDB and multi-part AOF."""
import os
import subprocess

import pytest

from conftest import REDIS_SERVER, wait_persistence_idle
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


def test_redis_check_tools_accept_our_files(start_server):
    """Debian's redis-check-rdb and redis-check-aof (Redis 7.0.15's own
    checkers) on our files: an RDB of every type (streams with a consumer
    group, functions, compressed list nodes), and a multi-part AOF whose
    base is an RDB preamble with commands after it.  Each says the file is
    whole and counts the keys we wrote; a damaged copy is refused."""
    _need_redis()
    ours = start_server(args=("--appendonly", "yes", "--list-compress-depth", "1"))
    r = ours.client()
    populate(r)
    r.xadd("stream", {"f": "v"})
    r.xgroup_create("stream", "g", id="0")
    r.xreadgroup("g", "c1", {"stream": ">"})
    r.function_load("#!lua name=chk\nredis.register_function('f', function() return 1 end)")
    r.rpush("packed", *["line %d of a log" % i for i in range(2000)])
    r.execute_command("SELECT", 5)
    keys = r.dbsize()
    r.execute_command("SELECT", 0)
    keys += r.dbsize()
    assert r.save()

    def check(tool, path):
        p = subprocess.run([tool, path], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr

    rdb = os.path.join(ours.dir, "dump.rdb")
    rc, out = check("redis-check-rdb", rdb)
    assert rc == 0 and "RDB looks OK" in out and "[info] %d keys read" % keys in out, out
    r.bgrewriteaof()
    wait_persistence_idle(r)
    r.set("after-rewrite", "1")
    r.lpush("list", "more")
    manifest = os.path.join(ours.dir, "appendonlydir", "appendonly.aof.manifest")
    rc, out = check("redis-check-aof", manifest)
    assert rc == 0 and "All AOF files and manifest are valid" in out, out
    with open(rdb, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF   # one byte flipped: the checksum or a type breaks
    bad = os.path.join(ours.dir, "bad.rdb")
    with open(bad, "wb") as f:
        f.write(data)
    rc, out = check("redis-check-rdb", bad)
    assert rc != 0 and "RDB looks OK" not in out, out
