"""server_cpulist, bio_cpulist, bgsave_cpulist and aof_rewrite_cpulist
(Redis 7.4's server-cpulist... with the 7.0 names as aliases)
against Debian's redis-server 7.0.15: the CPUs the kernel lets the main
thread, the background threads (named bio_* as Redis names them) and the
forked children run on (Cpus_allowed_list in /proc) are the ones the
lists name; the settings are immutable and empty by default.  Unlike
Redis, which ignores a list it cannot read, redis-like refuses one at
start-up with the line.  The machine has at least 2 CPUs (0 and 1).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cpulist.py"""
import os
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, child_pids, wait_persistence_idle

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]
NAMES = ["server_cpulist", "bio_cpulist", "aof_rewrite_cpulist", "bgsave_cpulist"]


def cpus(pid, tid=None):
    path = "/proc/%d/task/%d/status" % (pid, tid) if tid else "/proc/%d/status" % pid
    with open(path) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split()[1]


def threads(pid):
    """{thread name: [its CPU lists]}"""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            out.setdefault(f.read().strip(), []).append(cpus(pid, int(tid)))
    return out


def child_runs_on(pid, want, timeout=10):
    """The forked child's CPUs become want (it inherits the main thread's
    at the fork and sets its own just after, so a first look may see
    those)."""
    deadline = time.time() + timeout
    seen = None
    while time.time() < deadline:
        kids = child_pids(pid)
        try:
            seen = cpus(int(kids[0])) if kids else seen
        except FileNotFoundError:        # it ended between the two reads
            pass
        if seen == want:
            return True
        time.sleep(0.005)
    raise AssertionError("the child runs on %r, not %r" % (seen, want))


def assert_cpulists(c, binary, want):
    """CONFIG GET *cpulist: Redis 7.0's names; ours (as Redis 7.4) also
    lists the hyphenated names, the 7.0 ones being their aliases."""
    got = c.config_get("*cpulist")
    assert {k: v for k, v in got.items() if "_" in k} == want
    if binary == SERVER:
        assert {k.replace("-", "_"): v for k, v in got.items() if "-" in k} == want
        for n in want:
            assert c.config_get(n.replace("_", "-")) == {n.replace("_", "-"): want[n]}


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs CPUs 0 and 1")
@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_threads_and_children_run_where_asked(start_server, binary):
    s = start_server(["--server_cpulist", "0", "--bio_cpulist", "1", "--bgsave_cpulist", "1",
                      "--aof_rewrite_cpulist", "0-1", "--appendonly", "yes", "--rdb-key-save-delay", "200",
                      "--enable-debug-command", "local"],
                     binary=binary)
    c = s.client()
    pid = s.proc.pid
    assert cpus(pid, pid) == "0"
    named = threads(pid)
    assert named["bio_aof_fsync"] == ["1"] and named["bio_lazy_free"] == ["1"]
    assert_cpulists(c, binary, {"server_cpulist": "0", "bio_cpulist": "1", "aof_rewrite_cpulist": "0-1",
                                "bgsave_cpulist": "1"})
    wait_persistence_idle(c)                                # the first AOF base
    c.execute_command("DEBUG", "POPULATE", 2000)
    c.bgsave()
    assert child_runs_on(pid, "1")
    wait_persistence_idle(c)
    c.bgrewriteaof()
    assert child_runs_on(pid, "0-1")            # not the main thread's
    wait_persistence_idle(c)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_defaults_and_immutable(start_server, binary):
    c = start_server(binary=binary).client()
    assert_cpulists(c, binary, {n: "" for n in NAMES})
    for n in NAMES:
        with pytest.raises(redis.ResponseError, match="can't set immutable config"):
            c.config_set(n, "0")
        if binary == SERVER:
            with pytest.raises(redis.ResponseError, match="can't set immutable config"):
                c.config_set(n.replace("_", "-"), "0")


@pytest.mark.parametrize("value", ["x", "1-0", "0-3:0", "0,", "0-", "2000"])
def test_bad_list_stops_start_up(tmp_path, value):
    path = tmp_path / "redis.conf"
    path.write_text("port 0\nbgsave_cpulist %s\n" % value)
    out = subprocess.run([SERVER, str(path)], capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    text = out.stdout + out.stderr
    assert "at line 2" in text and "argument must be a list of CPUs such as 0,2,4-7 or 0-15:2" in text


def test_step_ranges(start_server):
    """0-1:1 and 0,1 both mean CPUs 0 and 1; 1-1 is CPU 1."""
    for value, want in (("0-1:1", "0-1"), ("0,1", "0-1"), ("1-1", "1")):
        s = start_server(["--server_cpulist", value])
        assert cpus(s.proc.pid) == want, value
        s.stop()
