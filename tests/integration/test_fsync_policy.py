"""When the disk is synced around children: rdb-save-incremental-fsync and
aof-rewrite-incremental-fsync (a snapshot or a rewritten base synced every
4 MB as it is written, not once at the end), and no-appendfsync-on-rewrite
(no AOF fsync while a child writes).

The incremental syncs are counted with strace on the child's temp file
(fdatasync every 4 MB; the final sync is an fsync, not counted).  The AOF
hold is observed through the fault shim failing every fsync of the incr
file under appendfsync always: a server that syncs during the child exits
(as Redis does on a failed fsync in that mode), one that holds it answers;
Redis 7.0.15 runs the same sequence."""
import os
import re
import subprocess
import time

import pytest

from conftest import REDIS_SERVER, SERVER, start_under_shim

MB = 1024 * 1024


def child_datasyncs(trace, pattern):
    """fdatasync calls on files whose name matches pattern (strace -y)."""
    with open(trace) as f:
        return sum(1 for line in f if "fdatasync(" in line and re.search(pattern, line))


def wait_idle(r, field, timeout=60):
    deadline = time.time() + timeout
    while r.info("persistence")[field] and time.time() < deadline:
        time.sleep(0.05)
    assert not r.info("persistence")[field]


@pytest.mark.parametrize("incremental", ["yes", "no"])
def test_snapshot_and_base_synced_every_4mb(start_server, tmp_path, incremental):
    trace = str(tmp_path / "trace")
    s = start_server(args=["--dir", str(tmp_path), "--save", "", "--rdbcompression", "no",
                           "--aof-use-rdb-preamble", "no",
                           "--rdb-save-incremental-fsync", incremental,
                           "--aof-rewrite-incremental-fsync", incremental],
                     launcher=["strace", "-f", "-qq", "-y", "-e", "trace=fdatasync,fsync", "-o", trace])
    r = s.client()
    r.execute_command("DEBUG", "POPULATE", 20000, "key", 1024)     # about 20 MB of values
    r.bgsave()
    wait_idle(r, "rdb_bgsave_in_progress")
    assert r.info("persistence")["rdb_last_bgsave_status"] == "ok"
    r.bgrewriteaof()
    wait_idle(r, "aof_rewrite_in_progress")
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    snapshot = child_datasyncs(trace, r"temp-\d+\.rdb")
    base = child_datasyncs(trace, r"temp-rewriteaof-bg-\d+\.aof")
    if incremental == "yes":
        assert snapshot >= 4 and base >= 4, (snapshot, base)       # 20 MB in 4 MB steps
    else:
        assert snapshot == 0 and base == 0, (snapshot, base)
    assert r.config_get("*incremental-fsync") == {"rdb-save-incremental-fsync": incremental,
                                                  "aof-rewrite-incremental-fsync": incremental}


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER])
@pytest.mark.parametrize("hold", ["yes", "no"])
def test_no_appendfsync_on_rewrite_holds_the_aof_fsync(fault_shim, start_server, monkeypatch, tmp_path, binary,
                                                       hold):
    ctl = tmp_path / "fault.ctl"
    ctl.write_text("")
    s = start_under_shim(start_server, fault_shim, ctl,
                         ["--dir", str(tmp_path), "--save", "", "--appendonly", "yes", "--appendfsync", "always",
                          "--no-appendfsync-on-rewrite", hold, "--rdb-key-save-delay", "100000"],
                         monkeypatch, binary=binary)
    r = s.client()
    for i in range(40):
        r.set("k%d" % i, i)                  # the BGSAVE child takes 4 s
    r.bgsave()
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    ctl.write_text("fsync EIO 0 incr.aof\n")  # from now on every fsync of the AOF fails
    if hold == "yes":
        assert r.set("during", "1")          # written, not synced: the server stays up
        assert r.get("during") == "1"
        assert s.proc.poll() is None
    else:
        with pytest.raises(Exception):
            r.set("during", "1")
        s.proc.wait(timeout=10)
        assert "Can't persist AOF for fsync error when the AOF fsync policy is 'always'" in s.read_log()
