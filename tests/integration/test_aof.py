"""The append-only file: logging in RESP with absolute expiries, reload,
truncated and corrupt files, BGREWRITEAOF with writes during the rewrite,
appendfsync always under kill -9, switching AOF on at run time, and the
redis-like-check-aof tool."""
import os
import subprocess
import threading
import time

import pytest

from conftest import ROOT
from persist_helpers import bgsave, populate, snapshot, wait_info

CHECK_AOF = os.path.join(os.path.dirname(os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "x"))),
                         "redis-like-check-aof")
if not os.path.exists(CHECK_AOF):
    CHECK_AOF = os.path.join(ROOT, "src", "redis-like-check-aof")

AOF = ("--appendonly", "yes")


def aof_path(s):
    return os.path.join(s.dir, "appendonly.aof")


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
    with open(aof_path(s), "ab") as f:
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
    data = bytearray(open(aof_path(s), "rb").read())
    mid = data.index(b"k10")
    data[mid - 4] = ord("#")                   # breaks a "$3" line
    open(aof_path(s), "wb").write(bytes(data))
    with pytest.raises(RuntimeError) as e:
        start_server(args=AOF + ("--dir", s.dir))
    assert "Bad file format reading the append only file" in str(e.value)
    assert "redis-like-check-aof" in str(e.value) and "offset" in str(e.value)
    proc = subprocess.run([CHECK_AOF, aof_path(s)], capture_output=True, text=True)
    assert proc.returncode == 1 and "format error" in proc.stdout
    proc = subprocess.run([CHECK_AOF, "--fix", aof_path(s)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert subprocess.run([CHECK_AOF, aof_path(s)], capture_output=True).returncode == 0
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
    size_before = os.path.getsize(aof_path(s))
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
    assert os.path.getsize(aof_path(s)) < size_before
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
    r.set("later", "x")
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
    # A rewrite that started early leaves the later SETs appended after it;
    # growth past 50% (and 10kb) starts the next one from the cron, so the
    # file ends compacted, however late the machine runs the children.
    deadline = time.time() + 30
    while os.path.getsize(aof_path(s)) >= 2000 * 40 and time.time() < deadline:
        time.sleep(0.05)
    assert os.path.getsize(aof_path(s)) < 2000 * 40


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
