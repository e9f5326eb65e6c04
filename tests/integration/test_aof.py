"""The append-only file, Redis 7.0's multi-part AOF in <dir>/appendonlydir/
(a base file, RDB or commands, the incr files of the commands written since
it, and the manifest naming them): logging in RESP with absolute expiries
to the last incr file, reload, truncated and corrupt incr files,
BGREWRITEAOF with writes during the rewrite (a new base and incr file, the
old ones deleted), appendfsync always under kill -9, switching AOF on at run
time, and the redis-like-check-aof tool."""
import os
import subprocess
import threading
import time

import pytest

from conftest import ROOT, aof_file, aof_manifest
from persist_helpers import bgsave, populate, snapshot, wait_info

CHECK_AOF = os.path.join(os.path.dirname(os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "x"))),
                         "redis-like-check-aof")
if not os.path.exists(CHECK_AOF):
    CHECK_AOF = os.path.join(ROOT, "src", "redis-like-check-aof")

AOF = ("--appendonly", "yes")


def aof_path(s):
    """The last incr file: where a running server appends its writes."""
    return aof_file(s.dir, "i")


def aof_total_size(s):
    """Bytes in every file the manifest names (base and incr files): the
    whole AOF.  Read again if a rewrite replaces the files meanwhile."""
    for _ in range(50):
        try:
            return sum(os.path.getsize(os.path.join(s.dir, "appendonlydir", n)) for n, _, _ in aof_manifest(s.dir))
        except FileNotFoundError:
            time.sleep(0.02)
    raise AssertionError("the AOF files kept changing under the test")


def test_aof_logs_and_reloads(start_server):
    s = start_server(args=AOF)
    r = s.client()
    populate(r)
    r.expire("str", 1000)
    r.setex("sx", 500, "v")
    r.set("sp", "v", ex=700)
    r.sadd("pop", *range(20))
    popped = r.spop("pop", 3)
    r.incrbyfloat("fl", 1.5)
    r.delete("neg")
    before = snapshot(r)
    assert r.info("persistence")["aof_enabled"] == 1
    # A fresh start: an empty RDB base, the writes in incr file 1.
    assert aof_manifest(s.dir) == [("appendonly.aof.1.base.rdb", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")]
    data = open(aof_path(s), "rb").read()
    assert b"PEXPIREAT" in data and b"PXAT" in data
    assert b"\r\nEXPIRE\r\n" not in data.upper().replace(b"PEXPIRE", b"")
    assert b"SETEX" not in data.upper()
    s.stop()
    s2 = start_server(args=AOF + ("--dir", s.dir))
    r2 = s2.client()
    assert snapshot(r2) == before
    assert not set(popped) & set(r2.smembers("pop"))
    assert 990_000 < r2.pttl("str") <= 1_000_000
    assert "DB loaded from append only file" in s2.read_log()


def test_truncated_last_command(start_server):
    s = start_server(args=AOF)
    r = s.client()
    for i in range(50):
        r.set("k%d" % i, i)
    s.stop()
    with open(aof_path(s), "ab") as f:           # the last incr file, the one cut by a crash
        f.write(b"*3\r\n$3\r\nSET\r\n$2\r\nzz\r\n$5\r\nhel")     # cut mid-command
    # aof-load-truncated no: start-up stops.
    with pytest.raises(RuntimeError) as e:
        start_server(args=AOF + ("--dir", s.dir, "--aof-load-truncated", "no"))
    assert "Unexpected end of file" in str(e.value)
    s2 = start_server(args=AOF + ("--dir", s.dir))
    r2 = s2.client()
    assert r2.dbsize() == 50 and r2.get("zz") is None
    assert "short read while loading the AOF" in s2.read_log()
    r2.set("after", "1")                       # appends after the cut point
    s2.stop()
    s3 = start_server(args=AOF + ("--dir", s.dir, "--aof-load-truncated", "no"))
    assert s3.client().get("after") == "1"


def test_corruption_in_the_middle_stops_startup(start_server):
    s = start_server(args=AOF)
    r = s.client()
    for i in range(20):
        r.set("k%d" % i, i)
    s.stop()
    incr = aof_path(s)                         # the commands are in incr file 1
    data = bytearray(open(incr, "rb").read())
    mid = data.index(b"k10")
    data[mid - 4] = ord("#")                   # breaks a "$3" line
    open(incr, "wb").write(bytes(data))
    with pytest.raises(RuntimeError) as e:
        start_server(args=AOF + ("--dir", s.dir))
    assert "Bad file format reading the append only file" in str(e.value)
    assert "redis-like-check-aof" in str(e.value) and "offset" in str(e.value)
    proc = subprocess.run([CHECK_AOF, incr], capture_output=True, text=True)
    assert proc.returncode == 1 and "format error" in proc.stdout
    proc = subprocess.run([CHECK_AOF, "--fix", incr], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert subprocess.run([CHECK_AOF, incr], capture_output=True).returncode == 0
    s2 = start_server(args=AOF + ("--dir", s.dir))
    r2 = s2.client()
    assert r2.get("k9") == "9" and r2.get("k10") is None


def test_bgrewriteaof_with_concurrent_writes(start_server):
    s = start_server(args=AOF)
    r = s.client()
    for i in range(300):
        r.set("counter", i)                   # many commands, one key
        r.rpush("list", i)
    populate(r)
    old_files = aof_manifest(s.dir)
    size_before = aof_total_size(s)            # an empty base, every command in the incr file
    assert bgsave(r) in ("Background saving started",)      # both children share the slot
    assert wait_info(r, "persistence", "rdb_bgsave_in_progress", 0)
    assert r.execute_command("BGREWRITEAOF") == "Background append only file rewriting started"
    for i in range(200):                      # writes during the rewrite
        r.incr("during")
    assert wait_info(r, "persistence", "aof_rewrite_in_progress", 0)
    for i in range(10):
        r.incr("during")
    info = r.info("persistence")
    assert info["aof_last_bgrewrite_status"] == "ok" and info["aof_rewrites"] == 1
    # A new base and incr file replace the old ones, which are deleted (in
    # the background); the new base plus the writes since the rewrite
    # started weigh less than the logged commands did.
    new_files = aof_manifest(s.dir)
    assert [t for _, _, t in new_files] == ["b", "i"] and not {n for n, _, _ in new_files} & {n for n, _, _ in old_files}
    deadline = time.time() + 10
    while any(os.path.exists(os.path.join(s.dir, "appendonlydir", n)) for n, _, _ in old_files):
        assert time.time() < deadline, "the old base and incr files are still there"
        time.sleep(0.05)
    assert aof_total_size(s) < size_before
    assert open(aof_path(s), "rb").read().count(b"during") == 210     # every write since BGREWRITEAOF
    before = snapshot(r)
    assert r.get("during") == "210"
    s.proc.kill()                              # kill -9: the rewritten file must be complete
    s.proc.wait()
    s2 = start_server(args=AOF + ("--dir", s.dir))
    assert snapshot(s2.client()) == before


def test_appendfsync_always_survives_kill9(start_server):
    s = start_server(args=AOF + ("--appendfsync", "always"))
    acked = []
    stop = threading.Event()

    def writer():
        c = s.client()
        i = 0
        while not stop.is_set():
            try:
                c.rpush("acks", i)
            except Exception:
                return
            acked.append(i)
            i += 1

    t = threading.Thread(target=writer)
    t.start()
    # Kill after a number of acknowledged writes, not a time: on a loaded
    # machine each fsync'd write can take many milliseconds.
    deadline = time.time() + 30
    while len(acked) < 60 and time.time() < deadline and t.is_alive():
        time.sleep(0.05)
    s.proc.kill()
    s.proc.wait()
    stop.set()
    t.join()
    assert len(acked) > 50
    s2 = start_server(args=AOF + ("--dir", s.dir))
    got = [int(x) for x in s2.client().lrange("acks", 0, -1)]
    assert got[: len(acked)] == acked          # every acknowledged write is there, in order


def test_enable_aof_at_runtime(start_server):
    s = start_server()
    r = s.client()
    populate(r)
    before = snapshot(r)
    r.config_set("appendonly", "yes")
    assert wait_info(r, "persistence", "aof_enabled", 1)
    r.set("early", "y")                        # before or during the rewrite: in the base or incr file 1
    # aof_enabled is 1 from CONFIG SET on (as in Redis 7.0); the AOF exists
    # once the rewrite it started has ended.
    assert wait_info(r, "persistence", "aof_rewrites", 1)
    assert wait_info(r, "persistence", "aof_rewrite_in_progress", 0)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    assert aof_manifest(s.dir) == [("appendonly.aof.1.base.rdb", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")]
    r.set("later", "x")
    assert b"later" in open(aof_path(s), "rb").read()
    before = snapshot(r)
    s.stop()
    s2 = start_server(args=AOF + ("--dir", s.dir))
    assert snapshot(s2.client()) == before


def test_auto_rewrite(start_server):
    s = start_server(args=AOF + ("--auto-aof-rewrite-min-size", "10kb", "--auto-aof-rewrite-percentage", "50"))
    r = s.client()
    for i in range(2000):
        r.set("k", "x" * 20)
    assert wait_info(r, "persistence", "aof_rewrites", 1, timeout=30) or r.info("persistence")["aof_rewrites"] >= 1
    assert "Starting automatic rewriting of AOF" in s.read_log()
    # A rewrite that started early leaves the later SETs in the incr file
    # after its base; growth past 50% (and 10kb) starts the next one from
    # the cron, so the AOF (base and incr files) ends compacted, however
    # late the machine runs the children.
    deadline = time.time() + 30
    while aof_total_size(s) >= 2000 * 40 and time.time() < deadline:
        time.sleep(0.05)
    assert aof_total_size(s) < 2000 * 40


def test_served_blocking_pop_is_logged(start_server):
    """A BLPOP served later by another client's push changes the dataset at
    serve time: the AOF must hold it, or a reload resurrects the element."""
    s = start_server(args=AOF)
    waiter = s.client()
    result = {}
    t = threading.Thread(target=lambda: result.update(v=waiter.blpop("q", timeout=5)))
    t.start()
    pusher = s.client()
    for _ in range(100):
        if pusher.info("clients")["blocked_clients"] == 1:
            break
        time.sleep(0.02)
    pusher.rpush("q", "only")
    t.join()
    assert result["v"] == ("q", "only")
    assert pusher.exists("q") == 0
    s.stop()
    s2 = start_server(args=AOF + ("--dir", s.dir))
    assert s2.client().exists("q") == 0, "the served pop must survive a restart"
