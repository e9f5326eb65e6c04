"""Disk faults, injected with tests/fault/fault_inject.c (an LD_PRELOAD
shim: write/fsync on matching files fail with ENOSPC or EIO after a byte
budget, or are slowed down): during AOF appends (everysec and always),
background fsyncs, BGREWRITEAOF and BGSAVE, and kill -9 in the middle of a
rewrite.  The server keeps serving reads, refuses writes with Redis's
-MISCONF texts, accepts them again by itself once the fault clears, and
reloading the files gives back every write it acknowledged."""
import os
import signal
import subprocess
import time

import pytest
import redis

from conftest import aof_file, start_under_shim



@pytest.fixture
def faulty(fault_shim, start_server, monkeypatch, tmp_path):
    """faulty(args) -> (server, set_fault): a server running under the shim;
    set_fault("write ENOSPC 0 appendonly.aof.1.incr.aof") arms a rule (the
    last word a substring of the paths it hits: the AOF's files are in
    <dir>/appendonlydir/, writes go to the last incr file, named in the
    manifest), set_fault("") clears it."""
    ctl = tmp_path / "fault.ctl"
    ctl.write_text("")

    def set_fault(rule):
        tmp = tmp_path / "fault.ctl.new"
        tmp.write_text(rule)
        os.replace(tmp, ctl)

    def start(args):
        return start_under_shim(start_server, fault_shim, ctl, args, monkeypatch), set_fault

    return start


def wait_for(fn, timeout=10.0, step=0.05):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("condition not reached in %.1f s" % timeout)
        time.sleep(step)


def try_set(r, k, v):
    """SET k v: 'ok', or the error text."""
    try:
        r.set(k, v)
        return "ok"
    except redis.ResponseError as e:
        return str(e)


def kill9(s):
    """kill -9 the server and any child it has (a rewrite or save)."""
    kids = []
    try:
        with open("/proc/%d/task/%d/children" % (s.proc.pid, s.proc.pid)) as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        pass
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass


def reload_check(start_server, s, expected, extra=()):
    """Start a clean server (no shim) on s's directory; every acknowledged
    key must be there with its value."""
    s2 = start_server(args=("--dir", s.dir, "--appendonly", "yes") + tuple(extra))
    r2 = s2.client()
    got = {k: r2.get(k) for k in expected}
    missing = {k: v for k, v in expected.items() if got[k] != v}
    assert not missing, "acknowledged writes lost: %r" % list(missing)[:10]
    return r2


@pytest.mark.parametrize("budget", [0, 37])
def test_aof_write_error_refuses_writes_and_recovers(faulty, start_server, budget):
    s, set_fault = faulty(("--appendonly", "yes", "--appendfsync", "everysec"))
    r = s.client()
    acked = {}
    for i in range(100):
        r.set("k%d" % i, "v%d" % i)
        acked["k%d" % i] = "v%d" % i
    incr = aof_file(s.dir, "i")                # appendonly.aof.1.incr.aof on a fresh start
    set_fault("write ENOSPC %d %s" % (budget, os.path.basename(incr)))
    n = 0

    def refused():
        nonlocal n
        n += 1
        res = try_set(r, "d%d" % n, "x")
        if res == "ok":
            acked["d%d" % n] = "x"
            return False
        return res
    err = wait_for(refused)
    assert err == "MISCONF Errors writing to the AOF file: No space left on device"
    assert r.get("k5") == "v5"                                 # reads still served
    assert r.info("persistence")["aof_last_write_status"] == "err"
    assert "Error writing to the AOF file: No space left on device" in s.read_log()
    set_fault("")
    wait_for(lambda: try_set(r, "after", "1") == "ok")
    acked["after"] = "1"
    assert r.info("persistence")["aof_last_write_status"] == "ok"
    assert "AOF write error looks solved" in s.read_log()
    kill9(s)
    out = subprocess.run([os.path.join(os.path.dirname(s.proc.args[0]), "redis-like-check-aof"),
                          incr], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout                     # whole commands only
    reload_check(start_server, s, acked)


def test_aof_fsync_error_refuses_writes_and_recovers(faulty, start_server):
    s, set_fault = faulty(("--appendonly", "yes", "--appendfsync", "everysec"))
    r = s.client()
    acked = {}
    set_fault("fsync EIO 0 appendonly.aof")
    n = 0

    def refused():
        nonlocal n
        n += 1
        res = try_set(r, "f%d" % n, "y")
        if res == "ok":
            acked["f%d" % n] = "y"
            return False
        return res
    err = wait_for(refused, timeout=10, step=0.1)
    assert err == "MISCONF Errors writing to the AOF file: Input/output error"
    assert r.info("persistence")["aof_last_write_status"] == "err"
    assert r.get("f1") == "y"
    set_fault("")
    wait_for(lambda: try_set(r, "after", "2") == "ok", timeout=10, step=0.1)
    acked["after"] = "2"
    assert "Error syncing the AOF file to disk: Input/output error" in s.read_log()
    kill9(s)
    reload_check(start_server, s, acked)


def test_appendfsync_always_never_acknowledges_a_lost_write(faulty, start_server):
    s, set_fault = faulty(("--appendonly", "yes", "--appendfsync", "always"))
    r = s.client()
    acked = {}
    for i in range(50):
        r.set("a%d" % i, str(i))
        acked["a%d" % i] = str(i)
    set_fault("write EIO 0 appendonly.aof")
    with pytest.raises(redis.ConnectionError):
        r.set("lost", "never-acknowledged")
    assert s.proc.wait(timeout=10) == 1
    assert "Can't recover from AOF write error when the AOF fsync policy is 'always'" in s.read_log()
    r2 = reload_check(start_server, s, acked)
    assert r2.get("lost") is None


def test_bgrewriteaof_disk_full(faulty, start_server):
    s, set_fault = faulty(("--appendonly", "yes"))
    r = s.client()
    acked = {}
    for i in range(0, 3000, 100):
        r.mset({"r%d" % j: "v" * 50 for j in range(i, i + 100)})
        acked.update({"r%d" % j: "v" * 50 for j in range(i, i + 100)})
    set_fault("write ENOSPC 4096 temp-rewriteaof")
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0)
    info = r.info("persistence")
    assert info["aof_last_bgrewrite_status"] == "err"
    assert info["aof_last_write_status"] == "ok"
    assert try_set(r, "during", "1") == "ok"                 # the old AOF still takes writes
    acked["during"] = "1"
    assert not [f for f in os.listdir(s.dir) if f.startswith("temp-rewriteaof")]
    set_fault("")
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    kill9(s)
    reload_check(start_server, s, acked)


def test_bgsave_disk_full_refuses_writes_until_a_save_succeeds(faulty):
    s, set_fault = faulty(("--save", "1 1"))
    r = s.client()
    r.set("x", "1")
    set_fault("write ENOSPC 10 temp-")
    r.bgsave()
    wait_for(lambda: r.info("persistence")["rdb_last_bgsave_status"] == "err")
    err = try_set(r, "y", "2")
    assert err.startswith("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist")
    assert r.get("x") == "1"
    assert not [f for f in os.listdir(s.dir) if f.startswith("temp-")]
    set_fault("")
    # The cron retries the due save point by itself (5 s after the failure).
    wait_for(lambda: try_set(r, "y", "2") == "ok", timeout=15, step=0.2)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"


def test_kill9_during_rewrite_loses_nothing(faulty, start_server):
    s, set_fault = faulty(("--appendonly", "yes", "--appendfsync", "always"))
    r = s.client()
    acked = {}
    for i in range(0, 2000, 100):
        batch = {"w%d" % j: str(j) for j in range(i, i + 100)}
        r.mset(batch)
        acked.update(batch)
    set_fault("write ENOSPC 1000000000 temp-rewriteaof 4000")   # a slow disk holds the child
    r.bgrewriteaof()
    wait_for(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 1)
    for i in range(200):
        r.set("during%d" % i, str(i))
        acked["during%d" % i] = str(i)
    assert r.info("persistence")["aof_rewrite_in_progress"] == 1
    kill9(s)
    reload_check(start_server, s, acked)
