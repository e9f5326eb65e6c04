"""`supervised` against Debian's redis-server 7.0.15 (built with
libsystemd): the notifications a systemd unit of Type=notify receives on
$NOTIFY_SOCKET (a datagram socket this test binds), start-up, a replica's
sync and shutdown, must be Redis's, message for message; `auto` picks
systemd or upstart from the environment (and CONFIG GET shows the mode it
picked, as Redis does); upstart's readiness signal is the server stopping
itself, which the test continues (Redis 7.0 stops before it listens,
redis-like once it listens, which is what "expect stop" means).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_supervised.py"""
import os
import signal
import socket
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, free_port

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]


@pytest.fixture
def notify(tmp_path, monkeypatch):
    """A datagram socket as $NOTIFY_SOCKET; .take(n) returns the next n
    messages (fewer if they do not come within 10 s)."""
    path = str(tmp_path / "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(10)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.delenv("UPSTART_JOB", raising=False)

    class Receiver:
        def take(self, n):
            out = []
            try:
                while len(out) < n:
                    out.append(sock.recv(4096).decode())
            except socket.timeout:
                pass
            return out

        def nothing_more(self):
            sock.settimeout(0.3)
            try:
                return sock.recv(4096).decode()
            except socket.timeout:
                return None
            finally:
                sock.settimeout(10)

    yield Receiver()
    sock.close()


def start(start_server, binary, *args):
    return start_server(["--repl-diskless-sync-delay", "0"] + list(args), binary=binary)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_systemd_notifications(start_server, notify, binary):
    m = start(start_server, binary, "--supervised", "systemd")
    assert notify.take(3) == ["STATUS=Redis is loading...\n", "STATUS=Ready to accept connections\n", "READY=1\n"]
    mc = m.client()
    assert mc.info("server")["process_supervised"] == "systemd"
    assert mc.config_get("supervised") == {"supervised": "systemd"}
    mc.set("k", "v")
    s = start(start_server, binary, "--supervised", "systemd", "--replicaof", "127.0.0.1", str(m.port))
    assert notify.take(4) == [
        "STATUS=Redis is loading...\n",
        "STATUS=Ready to accept connections in read-only mode. Waiting for MASTER <-> REPLICA sync\n",
        "READY=1\n",
        "STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.\n"]
    assert s.client().get("k") == "v"
    s.client().shutdown(nosave=True)
    s.proc.wait(10)
    assert notify.take(1) == ["STOPPING=1\n"]
    assert notify.nothing_more() is None


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_failed_final_save_is_reported(start_server, notify, binary):
    s = start(start_server, binary, "--supervised", "systemd", "--save", "3600 1")
    assert notify.take(3)[-1] == "READY=1\n"
    c = s.client()
    c.set("k", "v")
    os.makedirs(os.path.join(s.dir, "dump.rdb", "in-the-way"))   # the final save's rename fails
    with pytest.raises(redis.ResponseError, match="Errors trying to SHUTDOWN"):
        c.shutdown()
    assert notify.take(3) == ["STOPPING=1\n", "STATUS=Saving the final RDB snapshot\n",
                              "STATUS=Error trying to save the DB, can't exit.\n"]
    assert c.get("k") == "v"                   # still serving
    s.kill()


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_auto_and_no(start_server, notify, monkeypatch, binary):
    c = start(start_server, binary, "--supervised", "auto").client()
    assert c.info("server")["process_supervised"] == "systemd"
    assert c.config_get("supervised") == {"supervised": "systemd"}     # resolved, as Redis shows it
    assert notify.take(3)[-1] == "READY=1\n"
    assert start(start_server, binary).client().info("server")["process_supervised"] == "no"
    assert notify.nothing_more() is None                 # supervised no: not a word
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert start(start_server, binary, "--supervised", "auto").client().info("server")["process_supervised"] == "no"


def _state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_upstart_stops_itself_when_ready(tmp_path, monkeypatch, binary):
    monkeypatch.setenv("UPSTART_JOB", "redis-test")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path),
                             "--supervised", "auto"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while _state(proc.pid) != "T":              # stopped by its own SIGSTOP
            assert proc.poll() is None and time.time() < deadline, "never stopped itself"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGCONT)           # what upstart does next
        c = redis.Redis(port=port, socket_timeout=10)
        # Redis 7.0 stops itself before it listens, redis-like once it does.
        while True:
            try:
                info = c.info("server")
                break
            except redis.ConnectionError:
                assert time.time() < deadline + 10, "not listening after SIGCONT"
                time.sleep(0.05)
        assert info["process_supervised"] == "upstart"
        assert c.ping() and _state(proc.pid) in ("S", "R")
    finally:
        proc.kill()
        proc.wait()
