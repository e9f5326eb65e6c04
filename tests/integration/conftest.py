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
import subprocess
import tempfile
import time

import pytest
import redis

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SERVER = os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "redis-like-server"))
REDIS_SERVER = "/usr/bin/redis-server"
EXTRA_ARGS = os.environ.get("RL_SERVER_ARGS", "").split()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server started on a free port; stop() ends it by pid."""

    def __init__(self, binary, args=(), config_text=None):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="rl-test-")
        self.log_path = os.path.join(self.dir, "server.log")
        cmd = [binary]
        if config_text is not None:
            conf = os.path.join(self.dir, "test.conf")
            with open(conf, "w") as f:
                f.write(config_text)
            cmd.append(conf)
        cmd += ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", self.dir]
        if binary == REDIS_SERVER:
            cmd += ["--appendonly", "no", "--daemonize", "no"]
        else:
            # DEBUG is off by default, as in Redis 7.0; tests connect over
            # loopback, which "local" allows (test_debug.py covers "no").
            cmd += ["--enable-debug-command", "local"]
            cmd += EXTRA_ARGS
        cmd += list(args)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited early:\n" + self.read_log())
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    data = s.recv(100)
                    if data:
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("server did not start:\n" + self.read_log())

    def read_log(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def client(self, **kw):
        kw.setdefault("decode_responses", True)
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10, **kw)

    def stop(self, timeout=10):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


@pytest.fixture
def start_server():
    """Factory: start_server(args=(), config_text=None) -> ServerProcess."""
    started = []

    def start(args=(), config_text=None, binary=SERVER):
        s = ServerProcess(binary, args, config_text)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


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
