"""What Redis 7.0.15's own suite in TLS mode (`runtest --tls`, through
utils/tools/redis-suite.py --tls) found that passed on Redis and failed
here, each checked over TLS against Debian's redis-server 7.0.15 started
with the same TLS settings:

- CONFIG SET of dir, appendonly or repl-diskless-load while the dataset
  loads answers -LOADING (before any other pair's error), as Redis does;
  other settings still change.
- SHUTDOWN NOSAVE during a busy script: once the caller's connection has
  ended, a new connection is refused (the listeners close before the
  clients do), not accepted and then reset.

(SCRIPT DEBUG over TLS, the third: test_tls_script_debug.py.)

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_tls_redis_suite.py"""
import socket
import ssl
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, free_port
from repl_helpers import wait_for
from test_tls import certs, tls_args, tls_client  # noqa: F401 (certs: the module's certificates fixture)

# About 60 s in all: in `make test` only, not again in the extra passes of .ci/run.
pytestmark = pytest.mark.slow

BINARIES = [SERVER, REDIS_SERVER]


def start(start_server, certs, binary, extra=(), engine="epoll", wait="loaded"):  # noqa: F811
    """A TLS server; wait "any": back as soon as it answers (loading)."""
    tport = free_port()
    args = tls_args(certs, tport, extra=extra)
    if binary == REDIS_SERVER:
        args += ("--enable-debug-command", "yes")
    else:
        args = ("--io-engine", engine) + args
    s = start_server(args=args, binary=binary, wait=wait)
    s.tls_port = tport
    return s


def loading_errors(start_server, certs, binary, tmp_path):  # noqa: F811
    """The replies to CONFIG SETs sent while a slow load runs (over TLS)."""
    slow = ("--key-load-delay", "50", "--loading-process-events-interval-bytes", "1024", "--rdbcompression", "no",
            "--enable-protected-configs", "yes", "--dir", str(tmp_path), "--save", "")
    s = start(start_server, certs, binary, slow)
    c = tls_client(certs, s.tls_port)
    c.execute_command("DEBUG", "POPULATE", "20000", "key", "1000")
    c.save()
    s.stop()
    s = start(start_server, certs, binary, slow, wait="any")
    c = tls_client(certs, s.tls_port)
    wait_for(lambda: c.info("persistence")["loading"] == 1, timeout=5)
    out = []
    for args in (("dir", str(tmp_path)), ("appendonly", "yes"), ("repl-diskless-load", "swapdb"),
                 ("maxmemory", "1", "dir", str(tmp_path)), ("nosuch", "1", "appendonly", "no"),
                 ("appendonly", "yes", "nosuch", "1"),
                 ("loglevel", "debug")):
        try:
            out.append(c.execute_command("CONFIG", "SET", *args))
        except redis.RedisError as e:
            out.append(type(e).__name__ + ": " + str(e))
    out.append(c.config_get("loglevel"))
    assert c.info("persistence")["loading"] == 1, "the load must last through the checks"
    s.stop()
    return out


@pytest.mark.parametrize("engine", ["epoll"])
def test_config_set_while_loading_matches_redis(start_server, certs, tmp_path, engine):  # noqa: F811
    (tmp_path / "ours").mkdir()
    (tmp_path / "redis").mkdir()
    ours = loading_errors(start_server, certs, SERVER, tmp_path / "ours")
    ref = loading_errors(start_server, certs, REDIS_SERVER, tmp_path / "redis")
    assert ours == ref
    assert "loading the dataset" in ours[0]
    assert ours[-1] == {"loglevel": "debug"}


def tls_dial(certs, port):  # noqa: F811
    """'refused', 'reset' or 'ok': what a new TLS connection meets."""
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(b"PING\r\n")
                return "ok" if s.recv(100) else "reset"
    except ConnectionRefusedError:
        return "refused"
    except (ConnectionResetError, ssl.SSLError, OSError):
        return "reset"


@pytest.mark.parametrize("engine", ["epoll", "io_uring"])
def test_shutdown_nosave_in_busy_script_refuses_new_connections(start_server, certs, engine):  # noqa: F811
    got = []
    for binary in BINARIES:
        s = start(start_server, certs, binary, ("--save", ""), engine)
        busy = tls_client(certs, s.tls_port)
        ctl = tls_client(certs, s.tls_port)
        ctl.config_set("lua-time-limit", 10)
        busy.connection_pool.get_connection("EVAL").send_command(
            "EVAL", "redis.call('set', KEYS[1], 'y'); while true do end", 1, "x")
        wait_for(lambda: _busy(ctl), timeout=5)
        with pytest.raises(redis.ConnectionError):
            ctl.execute_command("SHUTDOWN", "NOSAVE")
        got.append(tls_dial(certs, s.tls_port))
        s.proc.wait(timeout=10)
    assert got == ["refused", "refused"]


def _busy(c):
    try:
        c.ping()
        return False
    except redis.RedisError as e:
        return str(e).startswith("BUSY")


def test_process_title_shows_the_tls_port_without_a_tcp_port(certs, tmp_path):  # noqa: F811
    """--port 0 and a tls-port: the title's {listen-addr} is the TLS port's
    address, as Redis shows it (no more "unixsocket:")."""
    import subprocess

    got = []
    for binary in BINARIES:
        tport = free_port()
        d = tmp_path / ("ours" if binary == SERVER else "redis")
        d.mkdir()
        args = [binary, "--port", "0", "--bind", "127.0.0.1", "--dir", str(d), "--save", ""]
        args += list(tls_args(certs, tport)[2:]) + ["--tls-port", str(tport)]
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: _pings(certs, tport), timeout=10)
            with open("/proc/%d/cmdline" % p.pid, "rb") as f:
                words = f.read().replace(b"\0", b" ").split()
            got.append(words[1].decode().replace(str(tport), "<tls-port>"))
            # every variable, as the suite's title test sets them
            c = tls_client(certs, tport)
            c.config_set("proc-title-template", "TEST {title} {listen-addr} {port} {tls-port}")
            with open("/proc/%d/cmdline" % p.pid, "rb") as f:
                words = f.read().replace(b"\0", b" ").split()
            got.append(b" ".join(words[2:5]).decode().replace(str(tport), "<tls-port>"))
        finally:
            p.terminate()
            p.wait(timeout=10)
    assert got[:2] == got[2:] == ["127.0.0.1:<tls-port>", "127.0.0.1:<tls-port> 0 <tls-port>"]


def _pings(certs, port):  # noqa: F811
    try:
        return tls_client(certs, port).ping()
    except redis.RedisError:
        return False


@pytest.mark.parametrize("source,target,engine", [
    ("ours", "ours", "epoll"), ("ours", "ours", "io_uring"), ("ours", "redis", "epoll"), ("redis", "ours", "epoll")])
def test_migrate_over_tls_with_tls_cluster(start_server, certs, source, target, engine):  # noqa: F811
    """tls-cluster yes: MIGRATE dials the target's tls-port over TLS (the
    suite's MIGRATE tests in TLS mode), keys move, COPY and REPLACE and
    AUTH work; a plain port answers -IOERR then, as Redis's."""
    extra = ("--tls-cluster", "yes", "--save", "")
    src = start(start_server, certs, SERVER if source == "ours" else REDIS_SERVER, extra, engine)
    dst = start(start_server, certs, SERVER if target == "ours" else REDIS_SERVER, extra, engine)
    s, d = tls_client(certs, src.tls_port), tls_client(certs, dst.tls_port)
    s.set("k", "v" * 100000)
    s.rpush("l", *range(100))
    s.set("ttl", "x", px=100000)
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.tls_port, "k", 0, 5000) == "OK"
    assert d.get("k") == "v" * 100000 and s.exists("k") == 0
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.tls_port, "", 0, 5000, "COPY", "KEYS", "l", "ttl")
    assert d.lrange("l", 0, -1) == [str(i) for i in range(100)] and s.exists("l", "ttl") == 2
    assert 0 < d.pttl("ttl") <= 100000
    with pytest.raises(redis.ResponseError, match="BUSYKEY"):
        s.execute_command("MIGRATE", "127.0.0.1", dst.tls_port, "l", 0, 5000, "COPY")
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.tls_port, "l", 0, 5000, "REPLACE")
    d.config_set("requirepass", "pw")
    with pytest.raises(redis.ResponseError, match="NOAUTH|Target instance replied with error"):
        s.execute_command("MIGRATE", "127.0.0.1", dst.tls_port, "ttl", 0, 5000, "COPY")
    assert s.execute_command("MIGRATE", "127.0.0.1", dst.tls_port, "ttl", 0, 5000, "AUTH", "pw", "REPLACE")
    assert s.dbsize() == 0
    # the target's plain port does not speak TLS: an I/O error, no key lost
    s.set("plain", "1")
    with pytest.raises(redis.ResponseError, match="IOERR"):
        s.execute_command("MIGRATE", "127.0.0.1", dst.port, "plain", 0, 1000)
    assert s.get("plain") == "1"


@pytest.mark.parametrize("binary,engine", [("ours", "epoll"), ("ours", "io_uring"), ("redis", "epoll")])
@pytest.mark.parametrize("command", [("PING",), ("XINFO", "HELP"), ("GET", "k")])
def test_replica_that_sends_a_command_with_a_reply_is_disconnected(start_server, certs, binary, engine,
                                                                    command):  # noqa: F811
    """A replica's link (after SYNC, over TLS) carries the stream: a
    command the replica sends that would answer is not answered into it,
    the replica is disconnected and the server logs why, as Redis does."""
    s = start(start_server, certs, SERVER if binary == "ours" else REDIS_SERVER,
              ("--repl-diskless-sync", "no", "--save", ""), engine)
    tls_client(certs, s.tls_port).set("k", "v")
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    conn = ctx.wrap_socket(raw, server_hostname="localhost")
    conn.sendall(b"SYNC\r\n")
    got = b""
    while b"\xff" not in got:  # the RDB's EOF opcode, then its checksum
        got += conn.recv(65536)
    time.sleep(0.2)
    conn.sendall(("*%d\r\n" % len(command)).encode() +
                 b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in command))
    rest = b""
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            chunk = conn.recv(65536)
        except (ssl.SSLError, OSError):
            break
        if not chunk:
            break
        rest += chunk
    assert time.time() < deadline, "the replica must be disconnected"
    assert b"PONG" not in rest and b"$1\r\nv" not in rest and b"HELP" not in rest.upper()
    name = " ".join(command[:2]).lower().replace(" ", "|") if command[0] == "XINFO" else command[0].lower()
    with open(s.log_path) as f:
        log = f.read()
    assert "Replica generated a reply to command '%s', disconnecting it: " % name in log
    assert tls_client(certs, s.tls_port).get("k") == "v"


def _raw_exchange(certs, port, commands):  # noqa: F811
    """Each command's raw answer over one TLS connection (what arrived
    within a short wait after sending it)."""
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    conn = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=5), server_hostname="localhost")
    out = []
    for args in commands:
        conn.sendall(("*%d\r\n" % len(args)).encode() +
                     b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
        time.sleep(0.15)
        out.append(_drain(conn))
    conn.close()
    return out


@pytest.mark.parametrize("noloop", [True, False])
def test_script_writes_and_tracking_noloop_match_redis(start_server, certs, noloop):  # noqa: F811
    """A script's write is the caller's for tracking: under NOLOOP the caller
    hears nothing of it, else its invalidation follows EVAL's reply."""
    commands = [["HELLO", "3"], ["CLIENT", "TRACKING", "on"] + (["NOLOOP"] if noloop else []),
                ["SET", "key1", "1"], ["GET", "key1"], ["EVAL", "return redis.call('set', 'key1', '2')", "1", "key1"],
                ["GET", "key1"], ["EVAL", "return redis.call('get', 'key1')", "1", "key1"], ["SET", "key1", "3"],
                ["GET", "key1"]]
    got = []
    for binary in BINARIES:
        s = start(start_server, certs, binary, ("--save", ""))
        answers = _raw_exchange(certs, s.tls_port, commands)
        got.append(answers[1:])  # HELLO's map differs by design (server name, version)
    assert got[0] == got[1]
    if noloop:
        assert b"invalidate" not in b"".join(got[0])


@pytest.mark.parametrize("engine", ["epoll", "io_uring"])
def test_sync_right_after_the_handshake(start_server, certs, engine):  # noqa: F811
    """SYNC sent at once after the TLS handshake starts a full sync: the
    session tickets OpenSSL still has to send then are not replies pending
    (it answered "SYNC and PSYNC are invalid with pending output")."""
    s = start(start_server, certs, SERVER, ("--repl-diskless-sync", "no", "--save", ""), engine)
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    for _ in range(20):
        conn = ctx.wrap_socket(socket.create_connection(("127.0.0.1", s.tls_port), timeout=10),
                               server_hostname="localhost")
        conn.sendall(b"SYNC\r\n")
        first = b""
        while b"\r\n" not in first:
            first += conn.recv(4096)
        # newlines may come first (the master's keepalive while the RDB is made)
        assert first.lstrip(b"\n").startswith(b"$"), first
        conn.close()


def test_script_reads_track_the_declared_keys_like_redis(start_server, certs):  # noqa: F811
    """A script that reads makes its caller track the keys it declared, one
    that only writes (or an EVAL_RO that reads nothing) tracks none: the
    same invalidations as Redis's (the suite's tracking unit hung here)."""
    commands = [["HELLO", "3"], ["CLIENT", "TRACKING", "on"],
                ["EVAL", "redis.call('set', 'key3', 'bar')", "2", "key1", "key2"],
                ["EVAL", "redis.call('get', 'key3')", "2", "key1", "key2"],
                ["EVAL_RO", "redis.call('ping')", "2", "key4", "key5"],
                ["EVAL_RO", "redis.call('get', 'key1')", "2", "key6", "key7"],
                ["FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function{function_name='rd', "
                 "callback=function(k) return redis.call('get', k[1]) end, flags={'no-writes'}}"],
                ["FCALL_RO", "rd", "1", "key8"], ["GET", "plain"]]
    writes = [["MSET", "key1", "1", "key2", "1", "key3", "1", "key4", "1", "key5", "1", "key6", "1", "key7", "1",
               "key8", "1", "plain", "1"]]
    got = []
    for binary in BINARIES:
        s = start(start_server, certs, binary, ("--save", ""))
        ctx = ssl.create_default_context(cafile=certs["ca.crt"])
        ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
        reader = ctx.wrap_socket(socket.create_connection(("127.0.0.1", s.tls_port), timeout=5),
                                 server_hostname="localhost")
        answers = []
        for args in commands:
            reader.sendall(("*%d\r\n" % len(args)).encode() +
                           b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
            time.sleep(0.1)
            answers.append(_drain(reader))
        _raw_exchange(certs, s.tls_port, writes)
        time.sleep(0.2)
        pushes = _drain(reader)
        got.append((answers[1:], sorted(pushes.split(b">2\r\n"))))
        reader.close()
    assert got[0] == got[1]


def _drain(conn):
    conn.settimeout(0.3)
    got = b""
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ssl.SSLError):
        pass
    return got
