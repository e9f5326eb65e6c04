"""CLIENT REPLY, PAUSE/UNPAUSE, UNBLOCK, NO-EVICT and CLIENT INFO's fields,
differential against Debian's redis-server 7.0.15 (scripted transcripts,
see scripted.py: "~name" steps expect no immediate reply).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_client_cmds.py"""
import time

import pytest

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn
from scripted import compare

pytestmark = pytest.mark.differential


def test_client_reply(start_server):
    compare(start_server, {"a": 2, "b": 2, "c": 3}, [
        ("~a", ["CLIENT", "REPLY", "SKIP"]), ("~a", ["SET", "k", "1"]), ("a", ["GET", "k"]),
        ("~a", ["CLIENT", "REPLY", "OFF"]), ("~a", ["SET", "k", "2"]), ("~a", ["GET", "k"]),
        ("~a", ["CLIENT", "REPLY", "SKIP"]), ("~a", ["PING"]),
        ("a", ["CLIENT", "REPLY", "ON"]), ("a", ["GET", "k"]),
        ("a", ["CLIENT", "REPLY", "maybe"]), ("a", ["CLIENT", "REPLY"]),
        ("~a", ["CLIENT", "REPLY", "SKIP"]), ("~a", ["CLIENT", "REPLY", "maybe"]), ("a", ["PING"]),
        # Pub/Sub messages and tracking pushes get through OFF.
        ("~b", ["CLIENT", "REPLY", "OFF"]), ("~b", ["SUBSCRIBE", "ch"]),
        ("a", ["PUBLISH", "ch", "hello"]),
        ("c", ["CLIENT", "TRACKING", "on"]), ("c", ["GET", "t"]), ("~c", ["CLIENT", "REPLY", "OFF"]),
        ("a", ["SET", "t", "1"]), ("~c", ["GET", "t"]), ("c", ["CLIENT", "REPLY", "ON"]),
    ])


def test_client_pause_write(start_server):
    compare(start_server, {"a": 2, "b": 2, "c": 2}, [
        ("a", ["SET", "k", "0"]),
        ("a", ["CLIENT", "PAUSE", "2000", "WRITE"]),  # long enough for a loaded machine
        ("b", ["GET", "k"]), ("b", ["PING"]),
        ("~b", ["SET", "k", "1"]),          # waits for the pause
        ("c", ["GET", "k"]), ("c", ["EXISTS", "k"]),
        ("c", ["MULTI"]), ("c", ["GET", "k"]), ("~c", ["INCR", "k"]),   # queueing a write waits too
        ("sleep", 2.2),
        ("a", ["GET", "k"]), ("c", ["EXEC"]),
    ])


def test_client_pause_all_and_unpause(start_server):
    compare(start_server, {"a": 2, "b": 2}, [
        ("a", ["CLIENT", "PAUSE", "300"]),
        ("~b", ["PING"]), ("~a", ["CLIENT", "UNPAUSE"]),   # even UNPAUSE waits under ALL
        ("sleep", 0.5),
        ("a", ["CLIENT", "PAUSE", "5000", "WRITE"]), ("~b", ["DEL", "x"]),
        ("a", ["CLIENT", "UNPAUSE"]),                      # b's DEL runs now
        ("a", ["CLIENT", "PAUSE"]), ("a", ["CLIENT", "PAUSE", "x"]), ("a", ["CLIENT", "PAUSE", "-1"]),
        ("a", ["CLIENT", "PAUSE", "10", "x"]), ("a", ["CLIENT", "PAUSE", "10", "ALL", "x"]),
        ("sleep", 0.1), ("a", ["CLIENT", "UNPAUSE", "x"]),
    ])


def test_pause_keeps_expiring_keys(start_server):
    """During a pause an expired key reads as missing but is not deleted."""
    compare(start_server, {"a": 2, "b": 2}, [
        ("a", ["SET", "e", "1", "PX", "100"]), ("a", ["CLIENT", "PAUSE", "500", "WRITE"]),
        ("sleep", 0.3), ("b", ["GET", "e"]), ("b", ["EXISTS", "e"]), ("b", ["DBSIZE"]),
        ("sleep", 0.4), ("b", ["GET", "e"]), ("b", ["DBSIZE"]),
    ])


def test_client_unblock(start_server):
    compare(start_server, {"a": 2, "b": 2, "c": 3}, [
        ("~b", ["BLPOP", "l", "0"]), ("a", ["CLIENT", "UNBLOCK", "{id:b}"]),
        ("~c", ["BZPOPMIN", "z", "0"]), ("a", ["CLIENT", "UNBLOCK", "{id:c}", "ERROR"]),
        ("~b", ["BLMOVE", "l", "m", "LEFT", "LEFT", "0"]), ("a", ["CLIENT", "UNBLOCK", "{id:b}", "TIMEOUT"]),
        ("a", ["CLIENT", "UNBLOCK", "{id:b}"]), ("a", ["CLIENT", "UNBLOCK", "99999"]),
        ("a", ["CLIENT", "UNBLOCK", "1", "x"]), ("a", ["CLIENT", "UNBLOCK", "x"]),
        ("a", ["CLIENT", "UNBLOCK"]), ("b", ["PING"]),
    ])


def test_no_evict_and_errors(start_server):
    compare(start_server, {"a": 2}, [
        ("a", ["CLIENT", "NO-EVICT", "on"]), ("a", ["CLIENT", "NO-EVICT", "OFF"]),
        ("a", ["CLIENT", "NO-EVICT", "x"]), ("a", ["CLIENT", "NO-EVICT"]),
        ("a", ["CLIENT", "NOSUCH"]),  # CLIENT HELP is 7.4's: test_r74_surface.py
    ])


def info_fields(port, setup):
    """CLIENT LIST's line for a client after setup, seen from another one."""
    c, o = RawConn(port), RawConn(port)
    cid = c.call("CLIENT", "ID")
    for args in setup:
        c.call(*args)
    line = o.call("CLIENT", "LIST", "ID", str(cid)).decode().strip()
    c.sock.close()
    o.sock.close()
    return dict(kv.split("=", 1) for kv in line.split(" "))


@pytest.mark.parametrize("setup", [
    [], [("CLIENT", "NO-EVICT", "on")], [("CLIENT", "TRACKING", "on")], [("CLIENT", "TRACKING", "on", "BCAST")],
    [("MULTI",), ("PING",), ("PING",)], [("SELECT", "3")], [("CLIENT", "SETNAME", "x"), ("HELLO", "3")],
])
def test_client_info_fields(start_server, setup):
    ours = start_server()
    ref = start_server(binary="/usr/bin/redis-server")
    mine, theirs = info_fields(ours.port, setup), info_fields(ref.port, setup)
    # CLIENT SETINFO's two fields (7.2) and watch= (7.4) are extra: our line
    # is 7.4.1's (test_r74_surface.py).
    assert [k for k in mine if k not in ("lib-name", "lib-ver", "watch")] == list(theirs)
    for k in ("flags", "db", "sub", "psub", "ssub", "multi", "name", "resp", "cmd", "redir", "user"):
        assert mine[k] == theirs[k], k


def test_pause_survives_disconnect(start_server):
    """A client that leaves while its request waits is forgotten cleanly."""
    s = start_server()
    a, b = RawConn(s.port), RawConn(s.port)
    assert a.call("CLIENT", "PAUSE", "300") == "OK"
    b.send("SET", "k", "1")
    time.sleep(0.05)
    b.sock.close()
    time.sleep(0.4)
    assert a.call("GET", "k") is None
    assert a.call("PING") == "PONG"


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_a_paused_client_counts_as_blocked(start_server, binary):
    """INFO's blocked_clients counts the clients whose request waits for a
    CLIENT PAUSE, as Redis counts them (its test suite waits on it)."""
    import threading
    import redis
    s = start_server(binary=binary)
    c = redis.Redis(port=s.port, decode_responses=True)
    c.client_pause(3000, all=False)
    t = threading.Thread(target=lambda: redis.Redis(port=s.port).set("k", "v"))
    t.start()
    for _ in range(100):
        if c.info("clients")["blocked_clients"] == 1:
            break
        time.sleep(0.02)
    assert c.info("clients")["blocked_clients"] == 1
    c.client_unpause()
    t.join(5)
    assert c.info("clients")["blocked_clients"] == 0 and c.get("k") == "v"


def _qbuf_total(admin, name):
    """qbuf + qbuf-free of the client called name: its query buffer's size
    (Redis's tests/unit/querybuf.tcl measures it so)."""
    for c in admin.client_list():
        if c["name"] == name:
            return int(c["qbuf"]) + int(c["qbuf-free"]), int(c["idle"])
    raise AssertionError("no client " + name)


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_query_buffer_resized_as_redis(start_server, binary):
    """Redis 7.0's querybuf.tcl on epoll (io_uring parses requests in the
    shared receive buffers: there a client holds a query buffer only for an
    unfinished request).  One read's buffer after a small request (16-32
    KB), none once idle for 2 s; a big request's buffer shrinks back once
    the requests are small again, but not below the latest peak."""
    args = ["--io-engine", "epoll"] if binary == SERVER else []
    s = start_server(args=args, binary=binary)
    admin = s.client()
    c = s.client()
    c.client_setname("test_client")
    size, _ = _qbuf_total(admin, "test_client")
    assert 16384 <= size < 32768
    deadline = time.time() + 10
    size, idle = _qbuf_total(admin, "test_client")
    while time.time() < deadline and not (size == 0 and idle >= 3):
        time.sleep(0.05)
        size, idle = _qbuf_total(admin, "test_client")
    assert size == 0 and idle >= 3
    c.set("x", "A" * 400000)
    big, _ = _qbuf_total(admin, "test_client")
    assert big > 32768
    deadline = time.time() + 2
    while time.time() < deadline:
        c.set("x", "A" * 100)
        if _qbuf_total(admin, "test_client")[0] < big:
            break
        time.sleep(0.01)
    assert 0 < _qbuf_total(admin, "test_client")[0] < big
