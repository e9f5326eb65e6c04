"""SLOWLOG against redis-server 7.0.15: the values of CONFIG SET
requirepass / masterauth / masteruser are redacted as Redis redacts them
(MONITOR never shows CONFIG, an admin command); EXEC is not logged, the commands it ran are; a blocked command that
is served later is logged then, under its own name."""
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])


def logged(c):
    return [[a.decode() if isinstance(a, bytes) else a for a in e[3]] for e in c.execute_command("SLOWLOG", "GET", "-1")]


@BOTH
def test_sensitive_config_values_are_redacted(start_server, binary):
    s = start_server(binary=binary)
    c = redis.Redis(port=s.port)
    c.config_set("slowlog-log-slower-than", 0)
    c.slowlog_reset()
    c.config_set("masterauth", "")
    c.execute_command("CONFIG", "SET", "masteruser", "u", "maxmemory-samples", "5")
    c.config_set("slowlog-log-slower-than", -1)
    got = logged(c)
    assert ["config", "set", "masterauth", "(redacted)"] in [[w.lower() if i < 2 else w for i, w in enumerate(e)] for e in got]
    assert ["config", "set", "masteruser", "(redacted)", "maxmemory-samples", "5"] in \
        [[w.lower() if i < 2 else w for i, w in enumerate(e)] for e in got]


@BOTH
def test_exec_is_not_logged_its_commands_are(start_server, binary):
    s = start_server(binary=binary)
    c = RawConn(s.port)
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    c.call("SLOWLOG", "RESET")
    c.call("MULTI")
    c.call("SET", "a", "1")
    c.call("INCR", "a")
    c.call("EXEC")
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    got = [e[3] for e in c.call("SLOWLOG", "GET", "-1")]
    names = [e[0].decode().lower() for e in got]
    assert "exec" not in names and "multi" in names
    assert ["set", "incr"] == [n for n in reversed(names) if n in ("set", "incr")]


@BOTH
def test_a_served_blocked_command_is_logged(start_server, binary):
    s = start_server(binary=binary)
    c = RawConn(s.port)
    c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
    w = RawConn(s.port)
    w.send("BLPOP", "l", "0")
    for _ in range(100):
        if b"blocked_clients:1" in c.call("INFO", "clients"):
            break
        time.sleep(0.02)
    c.call("SLOWLOG", "RESET")
    c.call("RPUSH", "l", "foo")
    assert w.read() == [b"l", b"foo"]
    assert [b"blpop", b"l", b"0"] in [[a.lower() for a in e[3]] for e in c.call("SLOWLOG", "GET", "-1")]
