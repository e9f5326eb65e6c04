"""benchlib.py: what the scripts outside the pytest suite share to run a
server: a free loopback port, a server started on it in a directory of its
own and waited for until PING answers, its CPU time, stopping it by its
pid (never by name), and the RESP encoding of a command to pipe into it.

Used by the benchmarks and checks in utils/ (bench-*.py, advice-vs-truth.py,
gen-command-meta.py) and by tests/fuzz/make_seeds.py.  The pytest suite has
the same job in tests/integration/conftest.py (ServerProcess, the
start_server/server/redis_ref fixtures), which takes free_port from here.
Import it with

    sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
    import benchlib

Nothing here needs redis-py: readiness is a raw PING, so the module also
serves scripts that talk RESP themselves.
"""
import atexit
import os
import signal
import shutil
import socket
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OURS = os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "redis-like-server"))
REDIS = "/usr/bin/redis-server"  # Debian's 7.0.15, the peer every benchmark compares with


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def is_redis(binary):
    """Whether binary is a real redis-server (it needs --appendonly no and
    --daemonize no spelled out; ours defaults to both)."""
    return os.path.basename(binary) == "redis-server"


def server_command(binary, port, workdir, extra=()):
    """The command line every script starts a server with: loopback only,
    no save points, files in workdir; extra comes last (it wins)."""
    cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir]
    if is_redis(binary):
        cmd += ["--appendonly", "no", "--daemonize", "no"]
    return cmd + list(extra)


def ping_once(port, timeout=0.5):
    """True when the server on port answers a PING with any reply (+PONG,
    or -LOADING while it loads: it is up either way); False if it cannot
    be reached yet."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return bool(s.recv(64))
    except OSError:
        return False


def loaded_once(port, timeout=0.5):
    """True when the server on port answers a PING with anything but
    -LOADING (a reply such as -NOAUTH still says it is up, its data in)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            reply = s.recv(64)
            return bool(reply) and not reply.startswith(b"-LOADING")
    except OSError:
        return False


def pong_once(port, timeout=0.5):
    """True only on +PONG (a server that is loading answers -LOADING)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def resp(*args):
    """One command as a RESP array of bulk strings (bytes, or anything
    str() makes text of): what the scripts pipe into a server."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def cpu_seconds(pid):
    """User + system CPU seconds of a running process, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_all(procs):
    """Terminate then reap each process (Popen objects this script started)."""
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


class Server:
    """One server process on a free loopback port, stopped by its pid.

    binary, extra: the program and arguments after server_command's.
    workdir: its directory (default: a new temp dir, removed by remove()).
    log: True writes stdout/stderr to dir/server.log (read_log()), False
    discards them.  config_text: written to dir/test.conf and passed first.
    port: a given port (a restart on a stopped server's port), else a free one.
    launcher: a command the server runs under (e.g. a sandbox that execs it).
    wait: "pong" waits for +PONG, "any" for any reply to PING, "loaded" for
    any reply but -LOADING (the data loaded at start-up is in), None not at
    all.  ready_seconds is how long it took from spawn.  A server that exits
    or is not ready within timeout raises RuntimeError (with its log).
    """

    def __init__(self, binary, extra=(), workdir=None, log=True, config_text=None, env=None,
                 timeout=30.0, wait="pong", prefix="rl-", port=None, launcher=()):
        # It runs in its own directory: a relative path is made absolute.
        binary = os.path.abspath(binary) if os.sep in binary else binary
        self.binary = binary
        self.port = port or free_port()
        self.own_dir = workdir is None
        self.dir = tempfile.mkdtemp(prefix=prefix) if workdir is None else workdir
        if self.own_dir:
            # Scripts that keep only (proc, port) never call remove(): the
            # directory still goes when the script ends.
            atexit.register(shutil.rmtree, self.dir, True)
        self.log_path = os.path.join(self.dir, "server.log") if log else None
        cmd = [binary]
        if config_text is not None:
            conf = os.path.join(self.dir, "test.conf")
            with open(conf, "w") as f:
                f.write(config_text)
            cmd.append(conf)
        cmd += server_command(binary, self.port, self.dir, extra)[1:]
        self.log = open(self.log_path, "w") if log else None
        out = self.log if log else subprocess.DEVNULL
        t0 = time.monotonic()
        self.launched = bool(launcher)
        self.proc = subprocess.Popen(list(launcher) + cmd, stdout=out, stderr=subprocess.STDOUT, cwd=self.dir,
                                     env=env)
        self.ready_seconds = None
        if wait:
            probe = {"pong": pong_once, "loaded": loaded_once}.get(wait, ping_once)
            self.ready_seconds = self.wait_ready(timeout, probe, t0)

    def wait_ready(self, timeout, probe=pong_once, t0=None):
        t0 = time.monotonic() if t0 is None else t0
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.binary} exited with {self.proc.returncode} at start-up\n"
                                   + self.read_log())
            if probe(self.port, timeout=0.2):
                return time.monotonic() - t0
            time.sleep(0.01)
        self.stop()
        raise RuntimeError(f"{self.binary} not ready within {timeout} s\n" + self.read_log())

    @property
    def pid(self):
        return self.proc.pid

    def cpu_seconds(self):
        return cpu_seconds(self.proc.pid)

    def read_log(self):
        if not self.log_path:
            return ""
        if self.log and not self.log.closed:
            self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def client(self, **kw):
        """A redis-py client on this server (decode_responses by default)."""
        import redis  # only the scripts that want a client need redis-py
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 10)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def _signal_launched(self, sig):
        """A launcher that does not exec the server (strace) stays its
        parent and would not pass a signal on: its children (the server)
        get it directly, so a server never outlives its launcher."""
        if not self.launched:
            return
        pids = []
        try:
            for tid in os.listdir(f"/proc/{self.proc.pid}/task"):
                with open(f"/proc/{self.proc.pid}/task/{tid}/children") as f:
                    pids += [int(x) for x in f.read().split()]
        except OSError:
            pass
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, timeout=10):
        """SIGTERM, then SIGKILL after timeout s; returns the exit code."""
        if self.proc.poll() is None:
            self._signal_launched(signal.SIGTERM)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._signal_launched(signal.SIGKILL)
                self.proc.kill()
                self.proc.wait()
        if self.log and not self.log.closed:
            self.log.close()
        return self.proc.returncode

    def kill(self):
        """SIGKILL now (a crash, as far as the server can tell)."""
        if self.proc.poll() is None:
            self._signal_launched(signal.SIGKILL)
            self.proc.kill()
        self.proc.wait()
        if self.log and not self.log.closed:
            self.log.close()

    def remove(self):
        """Stop, then delete the directory if this object made it (a
        subclass's own stop() may call this: it stops through Server's)."""
        Server.stop(self)
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
