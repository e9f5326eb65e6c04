"""SCRIPT DEBUG over TLS (issue 46; Redis 7.0.15's suite in `--tls` mode
runs its debugger tests on the tls-port): the Lua debugger's session talks
to the client through its TLS session, synchronous (SYNC) and forked
(YES, the child goes on with its copy of the session), on both socket
engines.  Every byte of each session is compared with Debian's
redis-server 7.0.15 started with the same TLS settings (for YES, with its
plain port: Redis 7.0.15's forked session over TLS ends as soon as it
starts, its parent closes the TLS session under the child); debugger commands
pipelined behind the EVAL, output larger than the socket's buffers, and
the other TLS clients around a session are checked too.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_tls_script_debug.py"""
import socket
import ssl

import pytest
import redis

from conftest import REDIS_SERVER, closed_by_server
from rawresp import ExactConn
from test_script_debug import FUNC_ADDR, SESSIONS
from test_tls import certs, start_tls, tls_client  # noqa: F401 (certs: the module's certificates fixture)

ENGINES = ["epoll", "io_uring"]


class TlsExactConn(ExactConn):
    """ExactConn (exact reply bytes) over a TLS connection to port."""

    def __init__(self, port, certs, timeout=10.0):  # noqa: F811 (a dict here, not the fixture)
        ctx = ssl.create_default_context(cafile=certs["ca.crt"])
        ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock = ctx.wrap_socket(raw, server_hostname="localhost")
        self.buf = b""


def transcript(port, certs, mode, script, commands, pipelined=False):  # noqa: F811
    """Every reply's bytes of one session over TLS (certs None: plain), as
    test_script_debug's transcript; pipelined: the debugger commands go in
    one write behind the EVAL, before its first stop was read."""
    c = TlsExactConn(port, certs) if certs else ExactConn(port, timeout=10)
    out = [c.call("SCRIPT", "DEBUG", mode)[0]]
    if pipelined:
        c.send("EVAL", script, 0)
        for cmd in commands:
            c.send(*cmd.split("|"))
        for _ in range(len(commands) + 1):
            raw, val = c.read_exact()
            out.append(raw)
    else:
        c.send("EVAL", script, 0)
        raw, val = c.read_exact()
        out.append(raw)
        for cmd in commands:
            if isinstance(val, list) and val[-1] == b"<endsession>":
                break
            c.send(*cmd.split("|"))
            raw, val = c.read_exact()
            out.append(raw)
    assert isinstance(val, list) and val[-1] == b"<endsession>"
    out.append(c.read_exact()[0])  # the EVAL's own reply
    assert closed_by_server(c.sock), "the connection must end with the session"
    c.sock.close()
    return FUNC_ADDR.sub(rb"\1@ADDR", b"".join(out))


@pytest.fixture(scope="module")
def ref(certs):  # noqa: F811
    """Debian's redis-server on a tls-port, shared by the module."""
    from conftest import ServerProcess
    from test_tls import tls_args
    from conftest import free_port

    tport = free_port()
    s = ServerProcess(REDIS_SERVER, tls_args(certs, tport))
    s.tls_port = tport
    yield s
    s.stop()


NAMES = ["step, list, print, trace", "eval and redis", "maxlen and trimming", "protocol error"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", ["sync", "yes"])
def test_sessions_over_tls_match_redis(start_server, certs, ref, engine, mode):  # noqa: F811
    ours = start_tls(start_server, certs, engine)
    for name in NAMES:
        script, commands = SESSIONS[name]
        tls_client(certs, ours.tls_port).flushall()
        tls_client(certs, ref.tls_port).flushall()
        got = [transcript(ours.tls_port, certs, mode, script, commands)]
        if mode == "sync":
            got.append(transcript(ref.tls_port, certs, mode, script, commands))
        else:
            got.append(transcript(ref.port, None, mode, script, commands))
        assert got[0] == got[1], name
        assert b"<endsession>" in got[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_pipelined_commands_and_big_output(start_server, certs, ref, engine):  # noqa: F811
    """Commands sent with the EVAL reach the debugger, as Redis's; a value
    of 4 MB (many TLS records, more than the socket holds) is printed whole,
    the same bytes as over the plain port.  (Redis 7.0.15 sends only the
    first TLS record of such an answer, 16 kB, and the session goes on
    out of step: compared with it below a record's size.)"""
    ours = start_tls(start_server, certs, engine)
    commands = ["s", "m|0", "p", "e|return 7", "c"]
    script = "local big = string.rep('x', 8 * 1024)\nreturn 1"
    for pipelined in (True, False):
        got = [transcript(port, certs, "sync", script, commands, pipelined) for port in (ours.tls_port, ref.tls_port)]
        assert got[0] == got[1]
    script = "local big = string.rep('x', 4 * 1024 * 1024)\nreturn 1"
    for pipelined in (True, False):
        over_tls = transcript(ours.tls_port, certs, "sync", script, commands, pipelined)
        assert over_tls == transcript(ours.port, None, "sync", script, commands, pipelined)
        assert len(over_tls) > 4 * 1024 * 1024


@pytest.mark.parametrize("engine", ENGINES)
def test_sync_session_keeps_effects_and_server_goes_on(start_server, certs, engine):  # noqa: F811
    ours = start_tls(start_server, certs, engine)
    other = tls_client(certs, ours.tls_port)
    assert other.set("before", "1")
    transcript(ours.tls_port, certs, "sync", "redis.call('set', 'dbg', 'v')\nreturn 1", ["c"])
    transcript(ours.tls_port, certs, "yes", "redis.call('set', 'forked', 'v')\nreturn 1", ["c"])
    # SYNC's write stays, YES's child wrote only its copy; the other TLS
    # client's session was not disturbed by either.
    assert other.get("dbg") == "v"
    assert other.get("forked") is None
    assert other.get("before") == "1"
    # and a plain client too
    assert redis.Redis(port=ours.port).ping()
