"""PUBSUB NUMSUB and SHARDNUMSUB keep Redis 7.0's flat array under RESP3
(redis-py's pubsub_numsub parses that shape), byte for byte against
Debian's redis-server 7.0.15 with subscribers on some channels.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_pubsub_numsub_resp3.py"""
import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential


@pytest.mark.parametrize("proto", [2, 3])
def test_numsub_shapes_match_redis(server, redis_ref, proto):
    subs = []
    for s in (server, redis_ref):
        sub = ExactConn(s.port)
        sub.call("SUBSCRIBE", "a")
        shard = ExactConn(s.port)
        shard.call("SSUBSCRIBE", "sa")
        subs += [sub, shard]
    conns = [ExactConn(s.port) for s in (server, redis_ref)]
    for c in conns:
        if proto == 3:
            c.call("HELLO", "3")
    for args in (("NUMSUB", "a", "b"), ("NUMSUB",), ("SHARDNUMSUB", "sa", "sb"), ("NUMPAT",)):
        got = [c.call("PUBSUB", *args) for c in conns]
        assert got[0] == got[1], args
        assert proto == 2 or args == ("NUMPAT",) or got[0][0].startswith(b"*")
    for c in conns + subs:
        c.close()
