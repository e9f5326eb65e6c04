"""`daemonize yes` against Debian's redis-server 7.0.15: the command that
starts the server returns 0 at once while the server goes on in the
background, in a session of its own, with /dev/null for stdin, stdout and
stderr; the pid file names the background process and goes at shutdown; the
log file has the start-up lines (written before the fork) and the server's
own; a log to stdout goes nowhere, from the first line; a server that cannot bind dies in the
background and leaves no pid file; under a service manager (`supervised
systemd` with $NOTIFY_SOCKET) nothing forks.  Debian's stock redis.conf sets
`daemonize yes`, which redis-like accepted and ignored until now.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_daemonize.py"""
import os
import signal
import socket
import subprocess
import time

import pytest
import redis

from conftest import EXTRA_ARGS, REDIS_SERVER, SERVER, free_port

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]


def launch(binary, tmp_path, port, *args, env=None):
    """Runs the start command to its end; returns (CompletedProcess, pidfile, logfile)."""
    pidfile, logfile = tmp_path / "server.pid", tmp_path / "server.log"
    cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "",
           "--daemonize", "yes", "--pidfile", str(pidfile), "--logfile", str(logfile), *args]
    if binary == SERVER:
        cmd += EXTRA_ARGS
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, env=env)
    return done, pidfile, logfile


def wait_for(pred, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    return None


def read_pid(pidfile):
    try:
        text = pidfile.read_text()
    except FileNotFoundError:
        return None
    return int(text) if text.strip() else None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def kill_if_alive(pid):
    """Cleanup of a background server this test started (its pid came from
    the pid file it wrote)."""
    if pid and alive(pid):
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not alive(pid))


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_daemonize_runs_in_background(binary, tmp_path):
    port = free_port()
    done, pidfile, logfile = launch(binary, tmp_path, port)
    pid = None
    try:
        assert done.returncode == 0, done.stderr
        pid = wait_for(lambda: read_pid(pidfile))
        assert pid and pid != os.getpid()
        c = redis.Redis(port=port, socket_timeout=5)
        assert wait_for(lambda: _ping(c))
        assert c.info("server")["process_id"] == pid
        assert os.getsid(pid) == pid                 # a session of its own
        assert os.getppid() != pid
        for fd in (0, 1, 2):
            assert os.readlink("/proc/%d/fd/%d" % (pid, fd)) == "/dev/null"
        log = logfile.read_text()
        assert "Configuration loaded" in log         # written before the fork
        assert "Ready to accept connections" in log  # by the background process
        assert "%d:" % pid in log
        c.shutdown(nosave=True)
        assert wait_for(lambda: not alive(pid))
        assert wait_for(lambda: not pidfile.exists())
    finally:
        kill_if_alive(pid)


def _ping(c):
    try:
        return c.ping()
    except redis.ConnectionError:
        return False


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_daemonized_log_to_stdout_goes_nowhere(binary, tmp_path):
    port = free_port()
    done, pidfile, _ = launch(binary, tmp_path, port, "--logfile", "")
    pid = None
    try:
        assert done.returncode == 0
        pid = wait_for(lambda: read_pid(pidfile))
        assert wait_for(lambda: _ping(redis.Redis(port=port, socket_timeout=5)))
        # nothing at all, the start-up lines before the fork included
        assert done.stdout == "" and done.stderr == ""
        redis.Redis(port=port).shutdown(nosave=True)
        assert wait_for(lambda: not alive(pid))
    finally:
        kill_if_alive(pid)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_daemonized_server_that_cannot_bind(binary, tmp_path):
    busy = socket.socket()
    busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        done, pidfile, logfile = launch(binary, tmp_path, port)
        assert done.returncode == 0   # the start command cannot know
        assert wait_for(lambda: "Could not create server TCP listening socket" in logfile.read_text())
        bg = [int(l.split(":")[0]) for l in logfile.read_text().splitlines()
              if "Could not create server TCP listening socket" in l][0]
        assert wait_for(lambda: not os.path.exists("/proc/%d" % bg) or not alive(bg))
        assert not pidfile.exists()
    finally:
        busy.close()


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_supervised_server_does_not_fork(binary, tmp_path):
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify"))
    env.pop("UPSTART_JOB", None)
    port = free_port()
    pidfile = tmp_path / "server.pid"
    cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "",
           "--daemonize", "yes", "--supervised", "systemd", "--pidfile", str(pidfile)]
    if binary == SERVER:
        cmd += EXTRA_ARGS
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        assert wait_for(lambda: _ping(redis.Redis(port=port, socket_timeout=5)))
        assert proc.poll() is None              # still the process we started
        assert read_pid(pidfile) == proc.pid
        redis.Redis(port=port).shutdown(nosave=True)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()


def test_daemonized_without_pidfile_writes_the_default(tmp_path):
    """Redis writes /var/run/redis.pid when daemonized with no pidfile set;
    ours writes /var/run/redis-like.pid (not Redis's: a Redis on the same
    host keeps its file)."""
    port = free_port()
    logfile = tmp_path / "server.log"
    cmd = [SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", "",
           "--daemonize", "yes", "--logfile", str(logfile), *EXTRA_ARGS]
    assert subprocess.run(cmd, timeout=20).returncode == 0
    c = redis.Redis(port=port, socket_timeout=5, decode_responses=True)
    assert wait_for(lambda: _ping(c))
    pid = c.info("server")["process_id"]
    try:
        default = "/var/run/redis-like.pid"
        assert c.config_get("pidfile") == {"pidfile": default}
        if os.access("/var/run", os.W_OK):
            assert int(open(default).read()) == pid
        else:
            assert "Failed to write PID file" in logfile.read_text()
        c.shutdown(nosave=True)
        assert wait_for(lambda: not alive(pid))
        assert not os.path.exists(default) or int(open(default).read()) != pid
    finally:
        kill_if_alive(pid)
