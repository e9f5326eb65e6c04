"""What Redis 7.0.15's own test suite still found (issue 47), against Debian's
redis-server 7.0.15, where 7.0 and 7.4.1 agree:

- FUNCTION LIST sends a function's flags as status strings (+no-writes),
  in RESP2 and RESP3 alike;
- SETBIT and BITFIELD count a change (INFO's rdb_changes_since_last_save,
  and so propagation) only where the value changed: a new key, a longer
  string, a flipped bit, a field set to another value, one per such
  BITFIELD operation;
- an active expiry cycle longer than latency-monitor-threshold is a
  latency event "expire-cycle"."""
import time

import pytest

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]

LIB = ("#!lua name=lib\n"
       "redis.register_function{function_name='f', callback=function() return 1 end, "
       "flags={'no-writes', 'allow-stale'}}\n")  # one function: Redis lists them in hash order


def function_list_bytes(port):
    c = RawConn(port)
    try:
        c.call("FUNCTION", "FLUSH")
        c.call("FUNCTION", "LOAD", LIB)
        out = []
        c.send("FUNCTION", "LIST")
        out.append(c.read_exact()[0])
        c.call("HELLO", "3")
        c.send("FUNCTION", "LIST")
        out.append(c.read_exact()[0])
        c.call("FUNCTION", "FLUSH")
        return out
    finally:
        c.close()


def test_function_list_flags_are_status_strings(start_server):
    ours = start_server()
    ref = start_server(binary=REDIS_SERVER)
    mine = function_list_bytes(ours.port)
    assert mine == function_list_bytes(ref.port)
    assert b"+no-writes\r\n+allow-stale\r\n" in mine[0]
    assert b"~2\r\n+no-writes\r\n+allow-stale\r\n" in mine[1]


# (command, ...): each run alone, the change count it adds after it
BIT_STEPS = [
    ["SET", "k", "a"],
    ["SETBIT", "k", "1", "1"],  # 'a' has bit 1 set: no change
    ["SETBIT", "k", "1", "0"],
    ["SETBIT", "k", "1", "0"],
    ["SETBIT", "k", "100", "0"],  # the string grows
    ["SETBIT", "k", "100", "0"],
    ["SETBIT", "new", "7", "0"],  # a new key
    ["BITFIELD", "k", "SET", "u8", "0", "255"],
    ["BITFIELD", "k", "SET", "u8", "0", "255"],
    ["BITFIELD", "k", "INCRBY", "u8", "0", "0", "SET", "u8", "8", "0"],
    ["BITFIELD", "k", "SET", "u8", "0", "1", "SET", "u8", "8", "1", "SET", "u8", "8", "1"],
    ["BITFIELD", "k", "SET", "u8", "200", "0", "SET", "u8", "0", "1"],  # grows: every write counts
    ["BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "255"],
    ["BITFIELD", "k", "GET", "u8", "0"],
    ["BITFIELD", "new2", "SET", "i8", "0", "0", "SET", "i8", "8", "0"],
    ["BITFIELD_RO", "k", "GET", "u8", "0"],
]


def changes(c):
    info = c.call("INFO", "persistence").decode()
    return int(info.split("rdb_changes_since_last_save:")[1].split("\r\n")[0])


def run_bits(port):
    c = RawConn(port)
    try:
        c.call("FLUSHALL")
        out = []
        for cmd in BIT_STEPS:
            before = changes(c)
            reply = c.call(*cmd)
            out.append((cmd[0], reply, changes(c) - before))
        out.append(c.call("GET", "k"))
        return out
    finally:
        c.close()


def test_setbit_and_bitfield_count_only_real_changes(start_server):
    ours = start_server()
    ref = start_server(binary=REDIS_SERVER)
    mine = run_bits(ours.port)
    assert mine == run_bits(ref.port)
    assert [d for _, _, d in mine[1:4]] == [0, 1, 0]
    assert mine[10][2] == 2


def expire_cycle_events(port):
    c = RawConn(port, timeout=30)
    try:
        c.call("FLUSHALL")
        c.call("CONFIG", "SET", "latency-monitor-threshold", "0")
        c.call("LATENCY", "RESET")
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        c.call("DEBUG", "POPULATE", "100000", "k", "10")
        c.call("EVAL", "for i = 0, 99999 do redis.call('pexpire', 'k:' .. i, 1) end", "0")
        time.sleep(0.05)
        c.call("CONFIG", "SET", "latency-monitor-threshold", "1")
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        deadline = time.time() + 20
        while c.call("DBSIZE") and time.time() < deadline:
            time.sleep(0.05)
        assert c.call("DBSIZE") == 0
        return sorted(e[0] for e in c.call("LATENCY", "LATEST"))
    finally:
        c.call("CONFIG", "SET", "latency-monitor-threshold", "0")
        c.close()


@pytest.mark.parametrize("binary", BINARIES, ids=["ours", "redis"])
def test_active_expiry_is_a_latency_event(start_server, binary):
    s = start_server(binary=binary, args=["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [])
    assert b"expire-cycle" in expire_cycle_events(s.port)
