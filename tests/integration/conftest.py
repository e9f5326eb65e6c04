"""Fixtures for the integration suite: real servers on free loopback ports.

Every server a test starts is a child process of the test run, stopped by
its pid at the end (never by name).  The binary under test is
src/redis-like-server, or $RL_SERVER (the per-allocator runs point it at
build/<allocator>/redis-like-server).  Differential tests also start
Debian's /usr/bin/redis-server the same way.  $RL_SERVER_ARGS (split on
spaces) is added to every redis-like-server command line: `make
test-io-uring` runs the whole suite with `--io-engine io_uring` that way.
"""
import os
import socket
import sys
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
import benchlib  # noqa: E402  (the one free_port and server start-up of the tree)
SERVER = os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "redis-like-server"))
REDIS_SERVER = "/usr/bin/redis-server"
EXTRA_ARGS = os.environ.get("RL_SERVER_ARGS", "").split()
free_port = benchlib.free_port  # tests import it from here


def closed_by_server(sock, timeout=10.0):
    """Drain sock until the server closes it; True if it did in time."""
    sock.settimeout(0.1)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if sock.recv(1 << 20) == b"":
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


def child_pids(pid):
    """The pids of pid's children (a BGSAVE's, an AOF rewrite's), [] when
    it has none or is gone."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def sockets_of(pid):
    """Yield each socket of process pid, dup'ed into this process with
    pidfd_getfd (Linux 5.6; root, or ptrace rights) so that the test can
    read its options; the caller closes the ones it keeps."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        for name in os.listdir("/proc/%d/fd" % pid):
            try:
                if not os.readlink("/proc/%d/fd/%s" % (pid, name)).startswith("socket:"):
                    continue
            except FileNotFoundError:
                continue
            fd = libc.syscall(438, pidfd, int(name), 0)  # SYS_pidfd_getfd
            if fd >= 0:
                yield socket.socket(fileno=fd)
    finally:
        os.close(pidfd)


def parse_memory_stats(reply):
    """A raw MEMORY STATS reply as a dict (db.<n> maps as dicts).  Debian's
    redis-py 4.3 parses every "db."-prefixed field as a map and fails on
    Redis 7.4's db.dict.rehashing.count (an integer; redis-py 5 copes)."""
    out = {}
    for k, v in zip(reply[0::2], reply[1::2]):
        k = k.decode() if isinstance(k, bytes) else k
        out[k] = parse_memory_stats(v) if isinstance(v, list) else v
    return out


def memory_stats(c):
    return parse_memory_stats(c.execute_command("MEMORY", "STATS"))


def wait_persistence_idle(c, timeout=20):
    """Until no BGSAVE or AOF rewrite runs or waits to run (INFO
    persistence; either server)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        p = c.info("persistence")
        if not (p["rdb_bgsave_in_progress"] or p["aof_rewrite_in_progress"] or p["aof_rewrite_scheduled"]):
            return
        time.sleep(0.02)
    raise AssertionError("a child still runs: %r" % c.info("persistence"))


def aof_manifest(server_dir, dirname="appendonlydir", fn="appendonly.aof"):
    """The multi-part AOF's manifest as [(name, seq, type)], in file order
    (base, history, incr), read with a parser of the test's own."""
    entries = []
    with open(os.path.join(server_dir, dirname, fn + ".manifest")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            w = line.split()
            kv = dict(zip(w[0::2], w[1::2]))
            entries.append((kv["file"], int(kv["seq"]), kv["type"]))
    return entries


def aof_file(server_dir, kind="i", dirname="appendonlydir"):
    """Path of the base ('b') or the last incr ('i') file of the AOF."""
    names = [n for n, _, t in aof_manifest(server_dir, dirname) if t == kind]
    assert names, "no %s file in the manifest" % kind
    return os.path.join(server_dir, dirname, names[-1])


class ServerProcess(benchlib.Server):
    """A server started on a free port (or the given one); stop() ends it by
    pid.  Ours gets DEBUG (off by default, as in Redis 7.0; tests connect
    over loopback, which "local" allows; test_debug.py covers "no") and
    $RL_SERVER_ARGS.  Start-up failures raise RuntimeError with the log."""

    def __init__(self, binary, args=(), config_text=None, port=None, launcher=(), wait="loaded"):
        # A Redis (Debian's 7.0.15, or a 7.4.1 built outside the tree) takes
        # none of our settings (RL_SERVER_ARGS' io-engine...).
        redis = binary == REDIS_SERVER or os.path.basename(binary) == "redis-server"
        extra = [] if redis else ["--enable-debug-command", "local"] + EXTRA_ARGS
        super().__init__(binary, extra + list(args), config_text=config_text, port=port, timeout=10,
                         wait=wait, prefix="rl-test-", launcher=launcher)


@pytest.fixture
def start_server():
    """Factory: start_server(args=(), config_text=None, binary=SERVER,
    port=None, launcher=(), wait="loaded") -> ServerProcess (port: reuse a
    stopped server's; launcher: a command the server runs under; wait: until
    PING gets any reply but -LOADING, or see benchlib.Server)."""
    started = []

    def start(args=(), config_text=None, binary=SERVER, port=None, launcher=(), wait="loaded"):
        s = ServerProcess(binary, args, config_text, port, launcher, wait)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def asan_segv_in_charge():
    """On ASan builds, ASan's own SIGSEGV handler stays in charge of the
    servers this module starts (the server's crash report would take the
    signal otherwise): a fault shows as ASan's report of what it is.  The
    security tests use it; other builds ignore ASAN_OPTIONS."""
    old = os.environ.get("ASAN_OPTIONS")
    os.environ["ASAN_OPTIONS"] = (old or "") + ":allow_user_segv_handler=0"
    yield
    if old is None:
        del os.environ["ASAN_OPTIONS"]
    else:
        os.environ["ASAN_OPTIONS"] = old


@pytest.fixture(scope="module")
def server():
    """One redis-like-server shared by a test module."""
    s = ServerProcess(SERVER)
    yield s
    s.stop()


@pytest.fixture
def r(server):
    """A client on the shared server, with the keyspace emptied first."""
    c = server.client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture(scope="module")
def redis_ref():
    """Debian's redis-server, the reference for differential tests."""
    if not os.path.exists(REDIS_SERVER):
        pytest.fail("redis-server is not installed: utils/install-deps.sh should have installed it")
    s = ServerProcess(REDIS_SERVER)
    yield s
    s.stop()


def raw_request(port, payload, read_timeout=2.0):
    """Send raw bytes, return everything the server sends until it closes
    the connection or stays silent for read_timeout."""
    out = b""
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as s:
        s.sendall(payload)
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return out, False
            if not chunk:
                return out, True
            out += chunk


@pytest.fixture(scope="session")
def fault_shim(tmp_path_factory):
    """tests/fault/fault_inject.c built once: an LD_PRELOAD shim that fails
    disk writes as its control file says (see its header)."""
    import subprocess
    out = str(tmp_path_factory.mktemp("fault") / "libfault.so")
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", out, os.path.join(ROOT, "tests", "fault", "fault_inject.c"),
                    "-ldl"], check=True)
    return out


def start_under_shim(start_server, shim, ctl, args, monkeypatch, binary=SERVER):
    """A server (ours or Redis) with the fault shim preloaded, obeying the
    control file ctl; the environment is restored for later servers."""
    monkeypatch.setenv("LD_PRELOAD", shim)
    monkeypatch.setenv("FAULT_CTL", str(ctl))
    # Sanitizer builds: the shim is preloaded ahead of the ASan runtime.
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    try:
        return start_server(args=args, binary=binary)
    finally:
        monkeypatch.delenv("LD_PRELOAD")


@pytest.fixture(scope="session")
def no_io_uring(tmp_path_factory):
    """tests/fault/no_io_uring.c, built once: `[path, "ENOSYS"|"EPERM",
    program, args...]` runs the program under a seccomp filter that fails
    the io_uring system calls with that errno (a kernel without io_uring)."""
    import subprocess
    out = str(tmp_path_factory.mktemp("sandbox") / "no_io_uring")
    subprocess.run(["cc", "-O1", "-o", out, os.path.join(ROOT, "tests", "fault", "no_io_uring.c")], check=True)
    return out
