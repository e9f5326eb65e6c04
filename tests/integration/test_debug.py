"""DEBUG behind enable-debug-command, against Debian's redis-server 7.0.15
started with the same setting: the refusal text, the subcommands tools and
client test suites send (SLEEP parsed leniently, ERROR, POPULATE, RELOAD,
OBJECT, SET-ACTIVE-EXPIRE, QUICKLIST-PACKED-THRESHOLD, LISTPACK,
CHANGE-REPL-ID) and the errors of unknown ones (JMAP, STRINGMATCH-LEN).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_debug.py"""
import time

import pytest

from conftest import REDIS_SERVER
from rawresp import ExactConn

pytestmark = pytest.mark.differential


def raw(port, *args):
    c = ExactConn(port)
    try:
        return c.call(*args)
    finally:
        c.close()


@pytest.mark.parametrize("mode", ["no", "local", "yes"])
def test_gate_matches_redis(start_server, mode):
    ours = start_server(args=("--enable-debug-command", mode))
    ref = start_server(binary=REDIS_SERVER, args=("--enable-debug-command", mode))
    for args in (("DEBUG", "SLEEP", "0"), ("DEBUG", "HELP"), ("DEBUG",)):
        mine, theirs = raw(ours.port, *args), raw(ref.port, *args)
        if args[1:2] == ("HELP",) and mode != "no":
            assert mine[0].startswith(b"*") and theirs[0].startswith(b"*")    # texts differ: our list is shorter
        else:
            assert mine == theirs, (mode, args)
    # The setting is immutable, and CONFIG GET shows it as Redis does.
    for s in (ours, ref):
        c = s.client()
        assert c.config_get("enable-debug-command") == {"enable-debug-command": mode}
    assert raw(ours.port, "CONFIG", "SET", "enable-debug-command", "yes") == \
        raw(ref.port, "CONFIG", "SET", "enable-debug-command", "yes")


@pytest.fixture(scope="module")
def pair():
    from conftest import ServerProcess
    ours = ServerProcess(__import__("conftest").SERVER, ("--enable-debug-command", "local"))
    ref = ServerProcess(REDIS_SERVER, ("--enable-debug-command", "local"))
    yield ours, ref
    ours.stop()
    ref.stop()


CASES = [
    ("DEBUG", "SLEEP", "0"), ("DEBUG", "SLEEP", "abc"), ("DEBUG", "SLEEP", "0.01"), ("DEBUG", "SLEEP"),
    ("DEBUG", "ERROR", "my err"), ("DEBUG", "ERROR", "WRONGTYPE x\r\ny"), ("DEBUG", "ERROR"),
    ("DEBUG", "POPULATE", "5"), ("DEBUG", "POPULATE", "3", "pfx", "10"), ("DEBUG", "POPULATE", "2", "pfx"),
    ("DEBUG", "POPULATE", "-1"), ("DEBUG", "POPULATE", "x"), ("DEBUG", "POPULATE", "2", "k", "5", "extra"),
    ("DEBUG", "SET-ACTIVE-EXPIRE", "0"), ("DEBUG", "SET-ACTIVE-EXPIRE", "1"), ("DEBUG", "SET-ACTIVE-EXPIRE", "x"),
    ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"), ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1k"),
    ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc"), ("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"),
    ("DEBUG", "LISTPACK", "nosuchkey"), ("DEBUG", "LISTPACK", "h"), ("DEBUG", "LISTPACK", "s"),
    ("DEBUG", "CHANGE-REPL-ID"), ("DEBUG", "JMAP"), ("DEBUG", "STRINGMATCH-LEN"), ("DEBUG", "STRINGMATCH-LEN", "a"),
    ("DEBUG", "NOSUCH"), ("DEBUG", "OBJECT", "nosuchkey"),
]


@pytest.mark.parametrize("proto", [2, 3])
def test_subcommands_match_redis(pair, proto):
    ours, ref = pair
    conns = [ExactConn(s.port) for s in pair]
    for c in conns:
        if proto == 3:
            c.call("HELLO", "3")
        c.call("FLUSHALL")
        c.call("HSET", "h", "f", "v")
        c.call("SET", "s", "x")
    for case in CASES:
        got = [c.call(*case) for c in conns]
        assert got[0] == got[1], case
    keys = [sorted(s.client().keys("*")) for s in pair]
    assert keys[0] == keys[1]
    vals = [[s.client(decode_responses=False).get(k) for k in ("key:0", "key:4", "pfx:0", "pfx:2")] for s in pair]
    assert vals[0] == vals[1] and vals[0][2] == b"value:0\x00\x00\x00"
    for c in conns:
        c.close()


def test_debug_object_and_reload(pair):
    ours, _ = pair
    r = ours.client()
    r.flushall()
    r.set("a", "12345")
    r.rpush("l", *range(10))
    r.set("ttl", "x", ex=1000)
    line = r.execute_command("DEBUG", "OBJECT", "a")
    assert "encoding:int" in line and "refcount:" in line
    assert r.execute_command("DEBUG", "RELOAD") in (True, "OK")
    assert r.get("a") == "12345" and r.lrange("l", 0, -1) == [str(i) for i in range(10)]
    assert 990 < r.ttl("ttl") <= 1000
    r.set("b", "later")
    assert r.execute_command("DEBUG", "RELOAD", "NOSAVE") in (True, "OK")
    assert r.get("b") is None and r.get("a") == "12345"       # back to the saved file
    with pytest.raises(Exception) as e:
        r.execute_command("DEBUG", "RELOAD", "BOGUS")
    assert "RELOAD" in str(e.value)


def test_set_active_expire_stops_the_cycle(pair):
    ours, _ = pair
    r = ours.client()
    r.flushall()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        for i in range(50):
            r.set("e%d" % i, "v", px=20)
        time.sleep(0.5)
        assert r.dbsize() == 50           # nobody touched them: still there
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    deadline = time.time() + 10
    while r.dbsize() and time.time() < deadline:
        time.sleep(0.1)
    assert r.dbsize() == 0
