"""Clients during a load (src/loading.c): the start-up RDB or AOF and a
replica's disk-based full sync are loaded with the listening sockets open;
every loading-process-events-interval-bytes of input the clients are
served, commands without Redis's "loading" flag get -LOADING, INFO
persistence shows loading:1 and the loading_* fields.  Differential
against Debian's redis-server 7.0.15 on the same RDB file; key-load-delay
slows the load down (CONFIG SET key-load-delay 0, allowed while loading,
ends it quickly), as Redis's own tests do."""
import os
import re
import shutil
import socket
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_for, wait_link_up

pytestmark = pytest.mark.differential

KEYS = 200000
SLOW = ["--key-load-delay", "50", "--loading-process-events-interval-bytes", "1024"]
LOADING = b"-LOADING Redis is loading the dataset in memory\r\n"


@pytest.fixture(scope="module")
def rdb_file(tmp_path_factory):
    """An RDB of KEYS keys (DEBUG POPULATE), written by our server."""
    from conftest import ServerProcess
    s = ServerProcess(SERVER)
    try:
        c = s.client()
        c.execute_command("DEBUG", "POPULATE", KEYS)
        c.save()
        path = str(tmp_path_factory.mktemp("rdb") / "dump.rdb")
        shutil.copy(os.path.join(s.dir, "dump.rdb"), path)
    finally:
        s.stop()
    return path


def _with_rdb(tmp_path, rdb_file):
    d = tmp_path / ("d%d" % time.monotonic_ns())
    d.mkdir()
    shutil.copy(rdb_file, str(d / "dump.rdb"))
    return str(d)


class Raw:
    """One RESP2 connection, reading replies as raw lines (an error's text
    exactly as sent)."""

    def __init__(self, port, timeout=10):
        deadline = time.time() + timeout
        while True:
            try:
                self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.01)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        i = self.buf.index(b"\r\n") + 2
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def reply(self):
        """A reply as bytes: status, error or integer lines as they are, a
        bulk string's payload, an array as a list."""
        first = self.line()
        if first[:1] == b"$":
            n = int(first[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(65536)
            out, self.buf = self.buf[:n], self.buf[n + 2:]
            return out
        if first[:1] == b"*":
            return [self.reply() for _ in range(int(first[1:]))]
        return first

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        return self.reply()

    def info(self, section="persistence"):
        text = self.call("INFO", section).decode()
        return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)

    def close(self):
        self.s.close()


# While loading: what each command answers (the transcript compared with
# Redis's), and the INFO fields that must be there.
DURING = [
    ("GET", "key:1"),
    ("SET", "k", "v"),
    ("PING",),
    ("DBSIZE",),
    ("SELECT", "1"),
    ("SELECT", "0"),
    ("CLIENT", "SETNAME", "watcher"),
    ("CLIENT", "GETNAME"),
    ("MULTI",),
    ("GET", "key:1"),
    ("EXEC",),
    ("ECHO", "hi"),
    ("EVAL", "return 1", "0"),
    ("DEBUG", "SLEEP", "0"),
    ("CONFIG", "GET", "loading-process-events-interval-bytes"),
]
LOADING_FIELDS = ["loading_start_time", "loading_total_bytes", "loading_rdb_used_mem", "loading_loaded_bytes",
                  "loading_loaded_perc", "loading_eta_seconds"]


def _observe_startup(start_server, binary, dirname, extra=()):
    """Start binary on dirname's dump.rdb slowed down, and record what a
    client sees while it loads and after."""
    args = ["--dir", dirname] + SLOW + list(extra)
    if binary == REDIS_SERVER:
        args += ["--enable-debug-command", "yes"]
    s = start_server(args=args, binary=binary, wait=None)
    c = Raw(s.port)
    info = c.info()
    assert info["loading"] == "1", info
    seen = [c.call(*cmd) for cmd in DURING]
    info2 = c.info()
    assert c.call("CONFIG", "SET", "key-load-delay", "0") == b"+OK\r\n"
    wait_for(lambda: c.info()["loading"] == "0", timeout=30, what="the load's end")
    after = (c.call("GET", "key:1"), c.call("DBSIZE"), c.call("PING"))
    c.close()
    return s, info, info2, seen, after


@pytest.fixture(scope="module")
def redis_transcript(rdb_file, tmp_path_factory):
    """What Redis 7.0.15 answers while it loads the same file."""
    from conftest import ServerProcess
    d = _with_rdb(tmp_path_factory.mktemp("ref"), rdb_file)
    started = []

    def start(args=(), binary=SERVER, wait="loaded"):
        started.append(ServerProcess(binary, args, wait=wait))
        return started[-1]

    try:
        return _observe_startup(start, REDIS_SERVER, d)[1:]
    finally:
        for s in started:
            s.stop()


@pytest.mark.parametrize("engine", ["epoll", "io_uring"])
def test_startup_rdb_load_answers_loading_as_redis(start_server, rdb_file, tmp_path, redis_transcript, engine):
    d = _with_rdb(tmp_path, rdb_file)
    s, info, info2, seen, after = _observe_startup(start_server, SERVER, d, ["--io-engine", engine])
    ref_info, ref_info2, ref_seen, ref_after = redis_transcript
    assert seen == ref_seen
    assert seen[0] == LOADING and seen[2] == LOADING  # GET, and PING (no "loading" flag in 7.0)
    assert after == ref_after == (b"value:1", b":%d\r\n" % KEYS, b"+PONG\r\n")
    for i in (info, info2):
        assert [k for k in i if k.startswith("loading_")] == LOADING_FIELDS
        assert i["async_loading"] == "0"
        assert int(i["loading_total_bytes"]) == os.path.getsize(os.path.join(d, "dump.rdb"))
        assert int(i["loading_rdb_used_mem"]) > 0  # the file's aux used-mem
    assert [k for k in ref_info if k.startswith("loading_")] == LOADING_FIELDS
    assert 0 < int(info2["loading_loaded_bytes"]) < int(info2["loading_total_bytes"])
    assert int(info2["loading_loaded_bytes"]) >= int(info["loading_loaded_bytes"])
    assert 0 < float(info2["loading_loaded_perc"]) < 100
    assert 0 < int(info2["rdb_last_load_keys_loaded"]) < KEYS  # counted as the load goes, as in Redis
    assert 0 < int(ref_info2["rdb_last_load_keys_loaded"]) < KEYS
    assert "Ready to accept connections" in s.read_log()


def test_keyspace_debug_subcommands_wait_for_the_load(start_server, rdb_file, tmp_path):
    """DEBUG may run while loading (Redis's "loading" flag), but not its
    subcommands that read or change keys: a second load inside the first
    (DEBUG RELOAD) or keys added under the loader (POPULATE)."""
    s = start_server(args=["--dir", _with_rdb(tmp_path, rdb_file)] + SLOW, wait=None)
    c = Raw(s.port)
    for sub in (("RELOAD",), ("POPULATE", "10"), ("OBJECT", "key:1"), ("DIGEST",), ("LOADAOF",)):
        assert c.call("DEBUG", *sub) == LOADING, sub
    c.call("CONFIG", "SET", "key-load-delay", "0")
    wait_for(lambda: c.info()["loading"] == "0", timeout=30)
    assert c.call("DBSIZE") == b":%d\r\n" % KEYS
    assert c.call("DEBUG", "OBJECT", "key:1").startswith(b"+Value at:")


def test_shutdown_while_loading_exits_without_saving(start_server, rdb_file, tmp_path):
    d = _with_rdb(tmp_path, rdb_file)
    path = os.path.join(d, "dump.rdb")
    before = (os.path.getsize(path), os.path.getmtime(path))
    s = start_server(args=["--dir", d, "--save", "900 1"] + SLOW, wait=None)
    c = Raw(s.port)
    assert c.info()["loading"] == "1"
    c.s.sendall(b"SHUTDOWN SAVE\r\n")  # a half-loaded dataset is never saved
    with pytest.raises((ConnectionError, OSError)):
        c.reply()
    assert s.proc.wait(timeout=20) == 0
    assert (os.path.getsize(path), os.path.getmtime(path)) == before
    log = s.read_log()
    assert "Loading the DB stopped" in log and "DB saved on disk" not in log


def test_startup_aof_load_answers_loading(start_server, tmp_path):
    """appendonly yes: the AOF's files are loaded with the clients served;
    loading_total_bytes is their size, as in Redis."""
    d = tmp_path / "aof"
    d.mkdir()
    w = start_server(args=["--dir", str(d), "--appendonly", "yes"])
    wc = w.client()
    wc.execute_command("DEBUG", "POPULATE", KEYS)
    wc.bgrewriteaof()  # the base: an RDB preamble holding the keys
    wait_for(lambda: wc.info("persistence")["aof_rewrite_in_progress"] == 0 and
             wc.info("persistence")["aof_rewrite_scheduled"] == 0, timeout=60)
    wc.set("after", "rewrite")  # a command in the incr file
    w.stop()
    files = [os.path.join(d, "appendonlydir", n) for n in os.listdir(d / "appendonlydir")]
    total = sum(os.path.getsize(f) for f in files if not f.endswith(".manifest"))
    s = start_server(args=["--dir", str(d), "--appendonly", "yes"] + SLOW, wait=None)
    c = Raw(s.port)
    info = c.info()
    assert info["loading"] == "1"
    assert int(info["loading_total_bytes"]) == total
    assert c.call("GET", "key:1") == LOADING
    assert c.call("CONFIG", "SET", "key-load-delay", "0") == b"+OK\r\n"
    wait_for(lambda: c.info()["loading"] == "0", timeout=30)
    assert c.call("DBSIZE") == b":%d\r\n" % (KEYS + 1)
    assert c.call("GET", "after") == b"rewrite"


@pytest.mark.parametrize("master_bin", [SERVER, REDIS_SERVER], ids=["our-master", "redis-master"])
def test_replica_disk_load_answers_loading(start_server, master_bin):
    """A replica loading its master's RDB from disk (repl-diskless-load
    disabled) serves its clients meanwhile as Redis's does."""
    margs = ["--enable-debug-command", "yes"] if master_bin == REDIS_SERVER else []
    m = start_server(args=margs, binary=master_bin)
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", KEYS)
    s = start_server(args=["--repl-diskless-load", "disabled"] + SLOW)
    sc = s.client()
    sc.set("old", "data")
    sc.replicaof("127.0.0.1", m.port)
    wait_for(lambda: sc.info("persistence")["loading"] == 1, timeout=30, what="the replica's load")
    c = Raw(s.port)
    assert c.call("GET", "old") == LOADING
    info = c.info()
    assert info["loading"] == "1" and int(info["loading_total_bytes"]) > 0
    assert c.call("REPLICAOF", "NO", "ONE") == LOADING
    assert c.call("CONFIG", "SET", "key-load-delay", "0") == b"+OK\r\n"
    wait_link_up(sc, 60)
    assert sc.dbsize() == KEYS and sc.get("old") is None
    assert c.info()["loading"] == "0"
    with pytest.raises(redis.exceptions.ReadOnlyError):
        sc.set("x", "y")


def test_sigterm_while_loading_exits_without_saving(start_server, rdb_file, tmp_path):
    """Redis 7.0 exits at once, status 0, on SIGTERM during the start-up
    load (its loop's handlers are not there yet)."""
    import signal
    d = _with_rdb(tmp_path, rdb_file)
    path = os.path.join(d, "dump.rdb")
    before = (os.path.getsize(path), os.path.getmtime(path))
    s = start_server(args=["--dir", d, "--save", "900 1"] + SLOW, wait=None)
    c = Raw(s.port)
    assert c.info()["loading"] == "1"
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=20) == 0
    assert (os.path.getsize(path), os.path.getmtime(path)) == before
    assert "Received SIGTERM during loading" in s.read_log()


def test_interval_setting_as_redis(server, redis_ref):
    """loading-process-events-interval-bytes: Redis 7.0's range and texts."""
    out = []
    for s in (server, redis_ref):
        c = s.client()
        got = []
        for v in ("1000", "2mb", "4096", "-1", "2147483648"):
            try:
                got.append(c.config_set("loading-process-events-interval-bytes", v))
            except redis.exceptions.ResponseError as e:
                got.append(str(e))
        got.append(c.config_get("loading-process-events-interval-bytes"))
        c.config_set("loading-process-events-interval-bytes", "2097152")
        out.append(got)
    assert out[0] == out[1]
    assert out[0][-1] == {"loading-process-events-interval-bytes": "4096"}


@pytest.mark.parametrize("master_bin,replica_bin,load", [
    (SERVER, SERVER, "disabled"), (SERVER, SERVER, "on-empty-db"),
    (REDIS_SERVER, SERVER, "disabled"), (SERVER, REDIS_SERVER, "disabled")],
    ids=["ours-disk", "ours-socket", "redis-master", "redis-replica"])
def test_loading_replica_keeps_its_link_past_repl_timeout(start_server, master_bin, replica_bin, load):
    """A load longer than the master's repl-timeout: the replica sends a
    newline each second meanwhile (Redis's keepalive), which a master (ours
    as Redis's) takes as an acknowledgement, so the link stays.  (A
    disk-based master times a silent replica out once the file is sent.)"""
    def args(binary, extra):
        return extra + (["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [])
    m = start_server(args=args(master_bin, ["--repl-timeout", "2", "--repl-diskless-sync", "no"]), binary=master_bin)
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", 50000)
    s = start_server(args=args(replica_bin, ["--repl-diskless-load", load, "--key-load-delay", "60",
                                             "--loading-process-events-interval-bytes", "1024"]),
                     binary=replica_bin)
    sc = s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_for(lambda: sc.info("persistence")["loading"] == 1, timeout=30, what="the replica's load")
    time.sleep(3.5)  # past repl-timeout, still loading
    assert sc.info("persistence")["loading"] == 1
    sc.config_set("key-load-delay", "0")
    wait_link_up(sc, 30)
    assert sc.dbsize() == 50000
    assert mc.info("replication")["connected_slaves"] == 1
    assert not re.search(r"lost \(timeout\)|timedout", m.read_log())  # ours, Redis's words
