"""utils/tools/workload_replay.py, the reader and sender behind
`utils/tools/allocator-shootout --replay` and `make advise`: AOF and MONITOR
parsing (escapes, SELECT, Redis 7 annotations), Redis 7.0's appendonlydir
(written by Debian's redis-server, replayed here onto its RDB base: the
same data), corrupt and truncated input reported with its line, the safety
rules (unsafe and blocking commands skipped and counted, never sent;
loopback only), and a replay against a real server that must end with the
recorded data and nothing else.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_workload_replay.py
"""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REDIS_SERVER, wait_persistence_idle

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "tools"))
import workload_replay as wr  # noqa: E402


def resp(*args):
    return wr.encode([a if isinstance(a, bytes) else a.encode() for a in args])


def test_aof_commands_and_select():
    data = (b"#TS:1700000000\r\n" + resp("SELECT", "0") + resp("SET", "a", "x\r\ny") +
            resp("SELECT", "3") + resp("RPUSH", "l", "1", "2"))
    cmds = wr.parse_aof(data, "t.aof")
    assert [c.argv for c in cmds] == [[b"SET", b"a", b"x\r\ny"], [b"RPUSH", b"l", b"1", b"2"]]
    assert [c.db for c in cmds] == [0, 3]
    assert cmds[0].line == 7          # after the annotation and the SELECT
    assert cmds[1].line == 20         # the value's own CRLF counts as a line


@pytest.mark.parametrize("data,line,what", [
    (resp("SET", "a", "b")[:-3], 7, "truncated"),
    (resp("SET", "a", "b") + b"*2\r\n$3\r\nGET\r\n", 11, "truncated inside a command (started at line 8)"),
    (resp("SET", "a", "b") + b"SET a b\r\n", 8, "expected '*<count>'"),
    (b"*1\r\n$x\r\n", 2, "expected '$<length>'"),
    (b"*1\r\n$2\r\nPINGX\r\n", 3, "longer than"),
    (b"REDIS0010...", 1, "RDB"),
])
def test_aof_corruption_names_the_line(data, line, what):
    with pytest.raises(wr.ReplayError) as e:
        wr.parse_aof(data, "bad.aof")
    assert f"bad.aof:{line}:" in str(e.value)
    assert what in str(e.value)


MONITOR = (b'OK\n'
           b'1700000000.000100 [0 127.0.0.1:5000] "SET" "k" "a b\\"c\\x00\\n"\n'
           b'1700000000.250000 [2 unix:/tmp/s] "select" "2"\n'
           b'1700000000.500000 [2 127.0.0.1:5001] "GET" "k"\n')


def test_monitor_lines_escapes_and_db():
    cmds = wr.parse_monitor(MONITOR, "m.txt")
    assert cmds[0].argv == [b"SET", b"k", b'a b"c\x00\n']
    assert (cmds[0].t, cmds[0].db, cmds[0].line) == (1700000000.0001, 0, 2)
    assert cmds[2].db == 2 and cmds[2].argv == [b"GET", b"k"]


@pytest.mark.parametrize("data,line,what", [
    (MONITOR + b'1700000001.0 [0 127.0.0.1:1] "SET" "k', 5, "truncated last line"),
    (MONITOR + b'garbage\n', 5, "not a MONITOR line"),
    (MONITOR + b'1700000001.0 [0 127.0.0.1:1] "SET" "k\\q"\n', 5, "bad escape"),
    (MONITOR + b'1700000001.0 [0 127.0.0.1:1] "SET" k\n', 5, "quoted argument"),
    (MONITOR + b'1600000000.0 [0 127.0.0.1:1] "GET" "k"\n', 5, "time goes backwards"),
])
def test_monitor_corruption_names_the_line(data, line, what):
    with pytest.raises(wr.ReplayError) as e:
        wr.parse_monitor(data, "m.txt")
    assert f"m.txt:{line}:" in str(e.value)
    assert what in str(e.value)


def test_unsafe_and_blocking_commands_are_skipped():
    for name in ("FLUSHALL", "flushdb", "SHUTDOWN", "CONFIG", "DEBUG", "REPLICAOF", "MIGRATE",
                 "ACL", "MODULE", "SAVE", "CLIENT", "MONITOR"):
        assert wr.skip_reason([name.encode(), b"x"]) == name.lower()
    assert wr.skip_reason([b"BLPOP", b"q", b"0"]) == "blpop (blocking)"
    assert wr.skip_reason([b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"]) == "xread (blocking)"
    assert wr.skip_reason([b"XREAD", b"STREAMS", b"s", b"0"]) is None
    assert wr.skip_reason([b"SET", b"k", b"v"]) is None


def test_only_loopback_is_contacted():
    for host in ("10.0.0.1", "192.168.1.1", "8.8.8.8", "::ffff:10.0.0.1"):
        with pytest.raises(ValueError, match="only loopback"):
            wr.replay([], 6379, host=host)
    wr.check_loopback("127.0.0.1")
    wr.check_loopback("::1")


def test_replay_reaches_the_data_not_the_server(server, r):
    """A capture with FLUSHALL, CONFIG SET and SHUTDOWN among the writes:
    the data arrives, the server keeps running with its config, the
    skipped commands are counted."""
    r.set("kept", "1")
    before = r.config_get("maxmemory")["maxmemory"]
    data = (resp("SET", "a", "1") + resp("FLUSHALL") + resp("CONFIG", "SET", "maxmemory", "1mb") +
            resp("SELECT", "1") + resp("HSET", "h", "f", "v") + resp("BLPOP", "q", "0") +
            resp("SHUTDOWN", "NOSAVE") + resp("INCR", "a"))
    cmds = wr.parse_aof(data, "w.aof")
    res = wr.replay(cmds, server.port, batch=2)
    assert res["sent"] == 3 and res["errors"] == 0
    assert res["skipped"] == {"flushall": 1, "config": 1, "blpop (blocking)": 1, "shutdown": 1}
    assert r.get("kept") == "1" and r.get("a") == "1"
    assert r.config_get("maxmemory")["maxmemory"] == before
    r.execute_command("SELECT", "1")
    assert r.hget("h", "f") == "v" and r.get("a") == "1"
    r.execute_command("SELECT", "0")


def snapshot(c):
    """Every key of every db: its type and value."""
    read = {"string": c.get, "list": lambda k: c.lrange(k, 0, -1), "hash": c.hgetall,
            "set": c.smembers, "zset": lambda k: c.zrange(k, 0, -1, withscores=True)}
    out = {}
    for db in range(4):
        c.execute_command("SELECT", db)
        for k in c.keys("*"):
            t = c.type(k)
            out[(db, k)] = (t, read[t](k))
    c.execute_command("SELECT", 0)
    return out


@pytest.mark.differential
@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_redis_appendonlydir_replays_to_the_same_data(start_server, tmp_path, preamble):
    """Redis 7.0 writes a base (an RDB with the preamble, else an AOF) and
    an incr file; the base's RDB loaded into ours and the commands replayed
    give Redis's keyspace."""
    ref = start_server(binary=REDIS_SERVER, args=["--appendonly", "yes", "--aof-use-rdb-preamble", preamble])
    c = ref.client()
    wait_persistence_idle(c)
    c.mset({"a": "1", "b": "x" * 100})
    c.rpush("l", *range(40))
    c.hset("h", mapping={"f%d" % i: i for i in range(30)})
    c.bgrewriteaof()                       # these go into the base
    wait_persistence_idle(c)
    c.execute_command("SELECT", 2)
    c.zadd("z", {"m%d" % i: i / 3 for i in range(25)})
    c.execute_command("SELECT", 0)
    c.delete("b")
    c.sadd("s", "x", "y")
    c.hdel("h", "f3")
    c.incr("a")
    c.lpop("l")
    want = snapshot(c)
    aofdir = os.path.join(ref.dir, "appendonlydir")
    rdb, cmds = wr.parse_aof_dir(aofdir)
    assert (rdb is not None) == (preamble == "yes")
    ours = start_server()
    o = ours.client()
    if rdb:
        shutil.copy(rdb, os.path.join(ours.dir, "dump.rdb"))
        o.execute_command("DEBUG", "RELOAD", "NOSAVE")
    res = wr.replay(cmds, ours.port)
    assert res["errors"] == 0 and res["sent"] == len(cmds)
    assert snapshot(o) == want


def test_appendonlydir_manifest_problems_are_named(tmp_path):
    d = tmp_path / "appendonlydir"
    d.mkdir()
    with pytest.raises(wr.ReplayError, match="expected one \\*.manifest file"):
        wr.parse_aof_dir(str(d))
    (d / "x.aof.1.incr.aof").write_bytes(resp("SET", "k", "v"))
    m = d / "x.aof.manifest"
    m.write_text("file x.aof.1.base.aof seq 1 type b\nfile x.aof.1.incr.aof seq 1 type i\n")
    with pytest.raises(wr.ReplayError, match="x.aof.1.base.aof is listed but missing"):
        wr.parse_aof_dir(str(d))
    m.write_text("file x.aof.1.incr.aof seq 1 type i\nfile x.aof.0.incr.aof seq one type i\n")
    with pytest.raises(wr.ReplayError, match="x.aof.manifest:2: not a manifest line"):
        wr.parse_aof_dir(str(d))
    m.write_text("file x.aof.1.incr.aof seq 1 type i\nfile x.aof.2.incr.aof seq 2 type h\n")
    assert wr.parse_aof_dir(str(d)) == (None, wr.parse_aof(resp("SET", "k", "v"), str(d / "x.aof.1.incr.aof")))


def test_paced_replay_keeps_the_recorded_gaps(server, r):
    data = (b'1700000000.000000 [0 127.0.0.1:1] "SET" "p" "1"\n'
            b'1700000000.400000 [0 127.0.0.1:1] "INCR" "p"\n')
    res = wr.replay(wr.parse_monitor(data), server.port, paced=True)
    assert res["seconds"] >= 0.38
    assert r.get("p") == "2"


def test_shootout_stops_on_a_corrupt_recording(tmp_path):
    bad = tmp_path / "bad.aof"
    bad.write_bytes(resp("SET", "a", "b") + b"*2\r\n$3\r\nGET\r\n")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "utils", "tools", "allocator-shootout"),
                        "--replay", str(bad), "--no-build", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert f"{bad}:11: truncated inside a command (started at line 8)" in p.stderr


def test_shootout_takes_an_appendonlydir(tmp_path):
    """Its RDB base is the run's RDB: given --rdb as well, the run stops
    before building anything; a corrupt incr file is named."""
    d = tmp_path / "appendonlydir"
    d.mkdir()
    (d / "a.aof.1.base.rdb").write_bytes(b"REDIS0009")
    (d / "a.aof.1.incr.aof").write_bytes(resp("SET", "a", "b"))
    (d / "a.aof.manifest").write_text("file a.aof.1.base.rdb seq 1 type b\nfile a.aof.1.incr.aof seq 1 type i\n")
    base = [sys.executable, os.path.join(ROOT, "utils", "tools", "allocator-shootout"), "--no-build",
            "--out", str(tmp_path / "out"), "--replay", str(d)]
    p = subprocess.run(base + ["--rdb", str(d / "a.aof.1.base.rdb")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "its base is an RDB (a.aof.1.base.rdb); leave out --rdb" in p.stderr
    (d / "a.aof.1.incr.aof").write_bytes(resp("SET", "a", "b") + b"*2\r\n")
    p = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and f"{d / 'a.aof.1.incr.aof'}:9: truncated" in p.stderr, p.stderr


@pytest.mark.slow
def test_shootout_rdb_and_replay_end_to_end(tmp_path, start_server):
    """A small RDB of ours and an AOF with a FLUSHALL in it, through the
    shootout on one allocator build: the rdb and replay tables, the skip
    count, the advice note and the recommendation."""
    src = start_server()
    c = src.client()
    c.mset({f"k{i}": "v" * (i % 50) for i in range(3000)})
    c.hset("h", mapping={f"f{i}": i for i in range(100)})
    c.save()
    aof = tmp_path / "w.aof"
    aof.write_bytes(b"".join(resp("SET", f"n{i}", "x" * (i % 300)) for i in range(2000)) +
                    resp("FLUSHALL") + resp("DEL", "k1"))
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, os.path.join(ROOT, "utils", "tools", "allocator-shootout"),
                        "--allocators", "ebbmalloc", "--no-redis", "--no-plots",
                        "--rdb", os.path.join(src.dir, "dump.rdb"), "--replay", str(aof),
                        "--quiet", "1", "--fill-quiet", "0", "--purge-wait", "0.2",
                        "--cap", "300", "--out", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    md = (out / "results.md").read_text()
    assert "## rdb: the user's RDB dump.rdb" in md
    assert "3,001 keys loaded; advice predicted used_memory" in md
    assert "replayed 2,001 commands" in md and "skipped: flushall 1" in md
    assert "**Recommendation (replay): `make MALLOC=ebbmalloc`**" in md
