"""A transaction meeting a script that runs too long, as Redis 7.0 handles
it: MULTI, DISCARD, WATCH and UNWATCH are let through (a pipelined
transaction is never half refused and its other half run once the script
ends), a command refused with -BUSY inside MULTI makes EXEC fail with
EXECABORT, and EXEC refused while the script runs aborts the transaction
with the BUSY reason.  Each case runs on our server and on redis-server."""
import threading
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])


def start_busy_script(port):
    """A script that loops until SCRIPT KILL; returns its thread once the
    server answers -BUSY to others."""
    def run():
        try:
            redis.Redis(port=port).eval("while true do end", 0)
        except redis.ResponseError:
            pass
    t = threading.Thread(target=run)
    t.start()
    probe = redis.Redis(port=port)
    for _ in range(200):
        try:
            probe.ping()
        except redis.exceptions.BusyLoadingError:
            break
        except redis.ResponseError as e:
            if str(e).startswith("BUSY"):
                break
        time.sleep(0.02)
    return t


def kill_script(port, t):
    redis.Redis(port=port).script_kill()
    t.join(10)


def send(conn, *args):
    """The reply as text, errors as "ERR:" and their whole line."""
    v = conn.call(*args)
    if isinstance(v, tuple) and v[0] == "err":
        return "ERR:" + v[1]
    return v.decode() if isinstance(v, bytes) else v


@BOTH
def test_multi_during_a_busy_script_then_exec_aborts(start_server, binary):
    s = start_server(args=["--busy-reply-threshold", "10"], binary=binary)
    c = RawConn(s.port)
    c.call("SET", "xx", 1)
    t = start_busy_script(s.port)
    assert send(c, "MULTI") == "OK"                 # let through
    assert send(c, "INCR", "xx").startswith("ERR:BUSY")
    kill_script(s.port, t)
    assert send(c, "INCR", "xx") == "QUEUED"
    assert send(c, "EXEC").startswith("ERR:EXECABORT Transaction discarded because of previous errors")
    assert send(c, "GET", "xx") == "1"                       # nothing of it ran


@BOTH
def test_exec_during_a_busy_script_aborts_with_the_reason(start_server, binary):
    s = start_server(args=["--busy-reply-threshold", "10"], binary=binary)
    c = RawConn(s.port)
    c.call("SET", "xx", 1)
    assert send(c, "MULTI") == "OK"
    assert send(c, "INCR", "xx") == "QUEUED"
    t = start_busy_script(s.port)
    reply = send(c, "EXEC")
    kill_script(s.port, t)
    assert reply.startswith("ERR:EXECABORT Transaction discarded because of: BUSY")
    assert send(c, "EXEC") == "ERR:ERR EXEC without MULTI"  # the transaction is gone
    assert send(c, "GET", "xx") == "1"


@BOTH
def test_watch_discard_unwatch_pass_a_busy_script(start_server, binary):
    s = start_server(args=["--busy-reply-threshold", "10"], binary=binary)
    c = RawConn(s.port)
    t = start_busy_script(s.port)
    try:
        assert send(c, "WATCH", "k") == "OK"
        assert send(c, "UNWATCH") == "OK"
        assert send(c, "MULTI") == "OK"
        assert send(c, "DISCARD") == "OK"
        assert send(c, "GET", "k").startswith("ERR:BUSY")
    finally:
        kill_script(s.port, t)
