"""Blocking XREAD / XREADGROUP against Debian's redis-server 7.0.15: a
blocked client and a writer on each server run the same scenario (wake on
XADD, "$" resolved when blocking, COUNT, NOACK, timeouts, MULTI/EXEC, key
deleted, type changed, FLUSHALL, RENAME, group destroyed or moved back) and
the blocked client's reply, or its absence, must be byte-identical.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_stream_blocking.py"""
import socket
import time

import pytest

from rawresp import RawConn

pytestmark = pytest.mark.differential

SCENARIOS = [
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s $", ["XADD s 2-1 c d"]),
 ([], "XREAD BLOCK 0 STREAMS s $", ["XADD s 2-1 c d"]),
 ([], "XREAD BLOCK 0 STREAMS s1 s $ $", ["XADD s 2-1 c d"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["XADD s 2-1 c d"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["DEL s"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["SET s x"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["FLUSHALL"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["XGROUP DESTROY s g"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s $", ["DEL s"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s $", ["DEL s", "XADD s 0-5 x y"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s $", ["XDEL s 1-1"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 100 STREAMS s $", []),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 NOACK STREAMS s >", ["XADD s 2-1 c d", "XADD s 3-1 c d"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s 0-0", []),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 COUNT 1 STREAMS s $", ["MULTI", "XADD s 2-1 a b", "XADD s 3-1 a b", "EXEC"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["XGROUP SETID s g 0", "XADD s 2-1 c d"]),
 (["XGROUP CREATE s g $ MKSTREAM", "XADD s 5-1 a b", "XGROUP SETID s g 5-1"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["XGROUP SETID s g 0"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s $", ["SET s x"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s $", ["FLUSHALL"]),
 (["XADD s 1-1 a b", "SET t x"], "XREAD BLOCK 0 STREAMS s t $ 0", ["XADD s 2-2 a b"]),
 (["XGROUP CREATE s g $ MKSTREAM", "XGROUP CREATE s2 g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s s2 > >", ["DEL s2", "XADD s 2-2 a b"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["XGROUP DESTROY s g", "XGROUP CREATE s g $", "XADD s 1-1 a b"]),
 (["XGROUP CREATE s g $ MKSTREAM"], "XREADGROUP GROUP g c BLOCK 0 STREAMS s >", ["RENAME s s3"]),
 (["XADD s 1-1 a b"], "XREAD BLOCK 0 STREAMS s 1-1", ["XADD s 1-2 a b"]),
 ([], "XREAD BLOCK 0 STREAMS s 5", ["XADD s 3-2 a b", "XADD s 6-2 a b"]),
]


def run(port, setup, block, actions):
    a, b = RawConn(port), RawConn(port)
    try:
        for cmd in setup:
            a.call(*cmd.split())
        b.send(*block.split())
        time.sleep(0.1)
        for cmd in actions:
            a.call(*cmd.split())
        b.sock.settimeout(0.3)
        try:
            return b._parse(True)[0]
        except (socket.timeout, TimeoutError):
            return None
    finally:
        a.call("flushall")
        a.close()
        b.close()


def test_blocking_scenarios_match_redis(server, redis_ref):
    for setup, block, actions in SCENARIOS:
        mine = run(server.port, setup, block, actions)
        ref = run(redis_ref.port, setup, block, actions)
        assert mine == ref, (block, actions, mine, ref)


def test_blocked_reader_served_once_per_entry(server):
    """Two readers of one group: each new entry goes to exactly one."""
    a = RawConn(server.port)
    a.call("XGROUP", "CREATE", "q", "g", "$", "MKSTREAM")
    readers = [RawConn(server.port) for _ in range(2)]
    for i, r in enumerate(readers):
        r.send("XREADGROUP", "GROUP", "g", "c%d" % i, "BLOCK", "0", "STREAMS", "q", ">")
    time.sleep(0.1)
    a.call("XADD", "q", "1-1", "f", "v")
    a.call("XADD", "q", "2-1", "f", "v")
    got = []
    for r in readers:
        r.sock.settimeout(2)
        got.append(r.read())
    ids = sorted(x[0][1][0][0] for x in got)
    assert ids == [b"1-1", b"2-1"]
    assert a.call("XPENDING", "q", "g")[0] == 2
    a.call("flushall")


@pytest.mark.parametrize("how", ["TIMEOUT", "ERROR"])
def test_client_unblock_of_a_blocked_xread_matches_redis(server, redis_ref, how):
    """CLIENT UNBLOCK releases XREAD/XREADGROUP ... BLOCK as Redis does: a
    nil reply (TIMEOUT) or -UNBLOCKED (ERROR)."""
    got = []
    for port in (server.port, redis_ref.port):
        a, b = RawConn(port), RawConn(port)
        try:
            a.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
            bid = b.call("CLIENT", "ID")
            b.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
            time.sleep(0.1)
            unblocked = a.call("CLIENT", "UNBLOCK", str(bid), how)
            b.sock.settimeout(5)
            got.append((unblocked, b._parse(True)[0], b.call("PING")))
        finally:
            a.call("FLUSHALL")
            a.close()
            b.close()
    assert got[0] == got[1]
    assert got[0][0] == 1
