"""RDB snapshots of redis-like-server: SAVE, BGSAVE, save points, SHUTDOWN,
load at start-up, write errors (MISCONF), corrupt files refused, the
redis-like-check-rdb tool."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT
from persist_helpers import bgsave, populate, snapshot, ttls, wait_info

CHECK_RDB = os.path.join(os.path.dirname(os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "x"))),
                         "redis-like-check-rdb")
if not os.path.exists(CHECK_RDB):
    CHECK_RDB = os.path.join(ROOT, "src", "redis-like-check-rdb")


def test_save_and_reload_every_type(start_server):
    s = start_server()
    r = s.client()
    populate(r)
    before = snapshot(r)
    assert r.save() is True
    info = r.info("persistence")
    assert info["rdb_changes_since_last_save"] == 0
    assert info["rdb_last_bgsave_status"] == "ok"
    assert abs(r.lastsave().timestamp() - info["rdb_last_save_time"]) < 2
    with open(os.path.join(s.dir, "dump.rdb"), "rb") as f:
        head = f.read(9)
    assert head == b"REDIS0010"
    s.stop()
    s2 = start_server(args=("--dir", s.dir))
    r2 = s2.client()
    assert snapshot(r2) == before
    t = ttls(r2, ["ttl", "ttllist"])
    assert 190000 < t["ttl"] <= 200000 and 290000 < t["ttllist"] <= 300000
    assert "DB loaded from disk" in s2.read_log() and "keys" in s2.read_log()
    assert r2.object("encoding", "list") in ("listpack", "quicklist")
    assert r2.object("encoding", "intset") == "intset"


def test_bgsave_reports_in_info(start_server):
    s = start_server()
    r = s.client()
    populate(r)
    r.set("extra", "1")
    assert r.info("persistence")["rdb_changes_since_last_save"] > 0
    assert bgsave(r) == "Background saving started"
    assert wait_info(r, "persistence", "rdb_bgsave_in_progress", 0)
    info = r.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_changes_since_last_save"] == 0
    assert info["rdb_saves"] >= 1
    assert info["rdb_last_cow_size"] >= 0
    stats = r.info("stats")
    assert stats["total_forks"] >= 1 and stats["latest_fork_usec"] > 0
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    assert not [f for f in os.listdir(s.dir) if f.startswith("temp-")]
    log = s.read_log()
    assert "Background saving started by pid" in log and "Background saving terminated with success" in log


def test_save_points_trigger_bgsave(start_server):
    s = start_server(args=("--save", "1 2"))
    r = s.client()
    r.set("a", 1)
    r.set("b", 2)
    assert wait_info(r, "persistence", "rdb_changes_since_last_save", 0, timeout=6)
    assert "changes in 1 seconds. Saving..." in s.read_log()
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))


def test_shutdown_saves_only_with_save_points(start_server):
    s = start_server(args=("--save", "3600 1"))
    r = s.client()
    r.set("k", "v")
    r.shutdown()
    s.proc.wait(timeout=10)
    assert os.path.exists(os.path.join(s.dir, "dump.rdb"))
    s2 = start_server(args=("--dir", s.dir, "--save", "3600 1"))
    r2 = s2.client()
    assert r2.get("k") == "v"
    r2.set("k", "changed")
    r2.shutdown(nosave=True)
    s2.proc.wait(timeout=10)
    s3 = start_server(args=("--dir", s.dir))
    assert s3.client().get("k") == "v"


def test_write_error_reported_and_misconf(start_server, tmp_path):
    s = start_server(args=("--save", "3600 1", "--enable-protected-configs", "yes"))   # CONFIG SET dir
    r = s.client()
    r.set("k", "v")
    assert r.save()
    good = open(os.path.join(s.dir, "dump.rdb"), "rb").read()
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    r.config_set("dir", str(blocker))           # every open() under it fails
    with pytest.raises(Exception):
        r.save()
    assert r.info("persistence")["rdb_last_bgsave_status"] == "err"
    with pytest.raises(Exception) as e:
        r.set("k2", "v")
    assert str(e.value).startswith("MISCONF Redis is configured to save RDB snapshots")
    assert r.get("k") == "v"                    # reads still work
    r.config_set("stop-writes-on-bgsave-error", "no")
    assert r.set("k2", "v")
    r.config_set("stop-writes-on-bgsave-error", "yes")
    assert bgsave(r) == "Background saving started"
    assert wait_info(r, "persistence", "rdb_bgsave_in_progress", 0)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "err"
    assert open(os.path.join(s.dir, "dump.rdb"), "rb").read() == good   # nothing saved is lost
    r.config_set("dir", s.dir)                  # space returns
    assert bgsave(r) == "Background saving started"
    assert wait_info(r, "persistence", "rdb_last_bgsave_status", "ok")
    assert r.set("k3", "v")


@pytest.mark.parametrize("damage", ["checksum", "truncate"])
def test_corrupt_rdb_refused(start_server, damage):
    s = start_server()
    r = s.client()
    populate(r)
    r.save()
    s.stop()
    path = os.path.join(s.dir, "dump.rdb")
    data = bytearray(open(path, "rb").read())
    if damage == "checksum":
        data[len(data) // 2] ^= 0x55
    else:
        data = data[: len(data) // 2]
    open(path, "wb").write(bytes(data))
    with pytest.raises(RuntimeError) as e:
        start_server(args=("--dir", s.dir, "--always-show-logo", "yes"))
    msg = str(e.value)
    assert ("Wrong RDB checksum" in msg) if damage == "checksum" else ("Unexpected EOF" in msg or "checksum" in msg)
    # The banner (with the PID, which Redis's test suite waits for) and
    # "Server initialized" come before the load, as in Redis.
    loaded = msg.index("Short read" if damage == "truncate" else "checksum")
    assert msg.index("PID: ") < msg.index("Server initialized") < loaded
    proc = subprocess.run([CHECK_RDB, path], capture_output=True, text=True)
    assert proc.returncode == 1 and "RDB ERROR DETECTED" in proc.stdout


def test_check_rdb_accepts_good_file(start_server):
    s = start_server()
    r = s.client()
    populate(r)
    r.save()
    proc = subprocess.run([CHECK_RDB, os.path.join(s.dir, "dump.rdb")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert "Checksum OK" in proc.stdout and "RDB looks OK" in proc.stdout


def test_rdbcompression_and_checksum_off(start_server):
    s = start_server(args=("--rdbcompression", "no", "--rdbchecksum", "no"))
    r = s.client()
    r.set("long", "abc" * 200)
    r.save()
    data = open(os.path.join(s.dir, "dump.rdb"), "rb").read()
    assert b"abc" * 200 in data                 # stored raw
    assert data[-8:] == b"\0" * 8               # no checksum
    s.stop()
    s2 = start_server(args=("--dir", s.dir))
    assert s2.client().get("long") == "abc" * 200


def test_bgsave_child_killed_keeps_previous_dump(start_server):
    """kill -9 of the saving child: status err, no temp file left, and the
    previous dump.rdb still loads with the previous contents."""
    s = start_server()
    r = s.client()
    pipe = r.pipeline(transaction=False)
    for i in range(100000):
        pipe.set("key:%d" % i, "value-%d" % i)
    pipe.execute()
    r.set("marker", "old")
    assert r.save()
    r.set("marker", "new")
    assert bgsave(r) == "Background saving started"
    pid = int(s.read_log().split("Background saving started by pid ")[-1].split()[0])
    os.kill(pid, 9)
    assert wait_info(r, "persistence", "rdb_bgsave_in_progress", 0)
    assert r.info("persistence")["rdb_last_bgsave_status"] == "err"
    assert "terminated by signal 9" in s.read_log()
    assert not [f for f in os.listdir(s.dir) if f.startswith("temp-")]
    s.proc.kill()
    s.proc.wait()
    s2 = start_server(args=("--dir", s.dir))
    r2 = s2.client()
    assert r2.get("marker") == "old" and r2.dbsize() == 100001


def _kib(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(field + " missing")


def test_load_peak_is_the_data_not_the_data_plus_the_file(start_server):
    """The RDB is mapped and its pages handed back as the load passes them
    (src/rdb_load.c): the process's peak RSS while loading a 55 MB file
    stays within a few MB of its RSS after the load, where reading the
    file into the heap first would add the whole file to the peak."""
    s = start_server(args=["--rdbcompression", "no"])
    r = s.client()
    r.execute_command("DEBUG", "POPULATE", 500000, "key", 100)
    r.save()
    size_kib = os.path.getsize(os.path.join(s.dir, "dump.rdb")) // 1024
    assert size_kib > 40 * 1024
    s.stop()
    s2 = start_server(args=["--dir", s.dir])
    r2 = s2.client()
    assert r2.dbsize() == 500000
    peak, now = _kib(s2.pid, "VmHWM"), _kib(s2.pid, "VmRSS")
    assert peak - now < size_kib // 4, (peak, now, size_kib)
    # The same file through redis-like-check-rdb, which maps it as well.
    out = subprocess.run([CHECK_RDB, os.path.join(s.dir, "dump.rdb")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "500000 keys read" in out.stdout
