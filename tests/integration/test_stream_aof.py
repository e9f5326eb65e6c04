"""Streams and the append-only file: a seeded random sequence of stream and
consumer-group commands (XADD with "*" and "~" trims, XREADGROUP, XCLAIM
with IDLE, XAUTOCLAIM, deletions...) is logged (to the AOF's incr file),
replayed at start-up and rewritten by BGREWRITEAOF (into a base of commands,
with aof-use-rdb-preamble no); after each reload XINFO STREAM FULL (entries,
groups, PELs with their delivery times and counts, entries-read, lag) equals
the original.  Consumers' seen-time is not logged (Redis does not either).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_stream_aof.py"""
import random

from conftest import aof_file
from persist_helpers import wait_info
from test_stream_differential import KEYS, Gen, group_cmd

AOF = ("--appendonly", "yes")


def strip(x, drop):
    if isinstance(x, list):
        out, skip = [], False
        for j, v in enumerate(x):
            if skip:
                skip = False
                continue
            if isinstance(v, str) and v in drop and j % 2 == 0:
                skip = True
                continue
            out.append(strip(v, drop))
        return out
    return x


def state(r, drop):
    out = {}
    for k in KEYS + ["auto"]:
        if r.exists(k):
            full = r.execute_command("XINFO", "STREAM", k, "FULL", "COUNT", "0")
            out[k] = strip(full, drop)
    return out


def run_random(r, seed, n):
    gen = Gen(random.Random(seed))
    for _ in range(n):
        args = group_cmd(gen) if gen.rng.random() < 0.45 else gen.core()
        try:
            r.execute_command(*args)
        except Exception:
            pass
    for i in range(50):
        r.xadd("auto", {"f": str(i)}, maxlen=20, approximate=True)
    r.xgroup_create("auto", "g", id="0")
    r.xreadgroup("g", "c", {"auto": ">"}, count=5)
    r.execute_command("XCLAIM", "auto", "g", "d", "0", r.xrange("auto", count=1)[0][0], "IDLE", "12345")


def test_stream_aof_replay_and_rewrite(start_server):
    s = start_server(args=AOF)
    r = s.client()
    r.config_set("stream-node-max-entries", 4)
    run_random(r, 99, 1500)
    # seen-time and 7.2's active-time are times of the run (a replay's own)
    want = state(r, {"seen-time", "active-time"})
    assert want, "the sequence left no stream"
    s.stop()

    # its rewrite writes a base of commands (not an RDB image), read below
    s2 = start_server(args=AOF + ("--dir", s.dir, "--stream-node-max-entries", "4", "--aof-use-rdb-preamble", "no"))
    r2 = s2.client()
    assert state(r2, {"seen-time", "active-time"}) == want

    # The rewrite re-adds live entries only: node counts may differ.
    assert r2.execute_command("BGREWRITEAOF")
    assert wait_info(r2, "persistence", "aof_rewrite_in_progress", 0)
    assert r2.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    data = open(aof_file(s.dir, "b"), "rb").read()            # the rewritten base
    assert b"XSETID" in data and b"ENTRIESREAD" in data and b"XCLAIM" in data
    s2.stop()
    s3 = start_server(args=AOF + ("--dir", s.dir))
    drop = {"seen-time", "active-time", "radix-tree-keys", "radix-tree-nodes"}
    assert state(s3.client(), drop) == {k: strip(v, drop) for k, v in want.items()}


def test_xadd_star_is_logged_with_its_id(start_server):
    s = start_server(args=AOF)
    r = s.client()
    ids = [r.xadd("s", {"a": "1"}) for _ in range(5)]
    r.xadd("s", {"a": "2"}, id="99999999999999-*")
    ids.append(r.xrevrange("s", count=1)[0][0])
    s.stop()
    data = open(aof_file(s.dir, "i"), "rb").read()            # the incr file the XADDs went to
    for i in ids:
        assert i.encode() in data
    s2 = start_server(args=AOF + ("--dir", s.dir))
    assert [e[0] for e in s2.client().xrange("s")] == ids
