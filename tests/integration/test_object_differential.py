"""OBJECT FREQ, OBJECT HELP and OBJECT's errors against Debian's
redis-server 7.0.15, byte for byte in RESP2 and RESP3.

The LFU counter of a new key is 5 and its first access always raises it
to 6 (the increment's probability is 1 at the initial value), so those two
values are deterministic on both servers; later accesses are random.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_object_differential.py"""
import pytest

from conftest import REDIS_SERVER
from rawresp import ExactConn
from compat74 import as74  # 7.4's changed texts on 7.0's replies

pytestmark = pytest.mark.differential


@pytest.mark.parametrize("proto", [2, 3])
def test_object_help_and_errors(server, redis_ref, proto):
    conns = [ExactConn(s.port) for s in (server, redis_ref)]
    for c in conns:
        if proto == 3:
            c.call("HELLO", "3")
        c.call("FLUSHALL")
        c.call("SET", "k", "v")
    for args in (("HELP",), ("FREQ", "k"), ("FREQ", "nosuch"), ("FREQ",), ("NOSUCH", "k"), ("ENCODING", "nosuch"),
                 ("HELP", "x"), ("REFCOUNT", "nosuch"), ("IDLETIME", "nosuch")):
        got = [c.call("OBJECT", *args) for c in conns]
        assert got[0] == as74(got[1]), args
    for c in conns:
        c.close()


@pytest.mark.parametrize("policy", ["allkeys-lfu", "volatile-lfu"])
def test_object_freq_with_lfu(start_server, policy):
    servers = [start_server(args=("--maxmemory-policy", policy)),
               start_server(binary=REDIS_SERVER, args=("--maxmemory-policy", policy))]
    conns = [ExactConn(s.port) for s in servers]
    for c in conns:
        c.call("SET", "k", "v")
        c.call("RPUSH", "l", "a")
    for step in ("new", "after one read"):
        for args in (("FREQ", "k"), ("FREQ", "l"), ("FREQ", "nosuch"), ("IDLETIME", "k")):
            got = [c.call("OBJECT", *args) for c in conns]
            assert got[0] == got[1], (step, args)
        for c in conns:
            c.call("GET", "k")
            c.call("LRANGE", "l", "0", "-1")
    # Two reads: the first takes the counter from 5 to 6 for sure, the second
    # only with probability 1/(1 * lfu-log-factor + 1), as in Redis.
    assert conns[0].call("OBJECT", "FREQ", "k")[1] in (6, 7)
    for c in conns:
        c.close()
