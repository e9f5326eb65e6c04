"""Keyspace notifications of the stream commands compared with Debian's
redis-server 7.0.15 (xadd, xtrim, xdel, xsetid, xgroup-create/-setid/
-destroy/-createconsumer/-delconsumer, consumers created by XREADGROUP and
XCLAIM that serve something, a blocked XREADGROUP served by XADD), using the harness of
test_notify_types.py: same events in the same order, same replies.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_stream_notify.py"""
import pytest

from test_notify_types import C, compare

pytestmark = pytest.mark.differential

STEPS = [
    C("XADD", "s", "1-1", "a", "1"), C("XADD", "s", "2-1", "a", "2"), C("XADD", "s", "1-1", "a", "1"),
    C("XADD", "s", "MAXLEN", "1", "3-1", "a", "3"), C("XADD", "s", "MAXLEN", "5", "4-1", "a", "4"),
    C("XADD", "nos", "NOMKSTREAM", "1-1", "a", "b"),
    C("XDEL", "s", "4-1"), C("XDEL", "s", "99-1"), C("XTRIM", "s", "MAXLEN", "0"), C("XTRIM", "s", "MAXLEN", "0"),
    C("XSETID", "s", "10-1"), C("XSETID", "nos", "1-1"),
    C("XGROUP", "CREATE", "s", "g", "0"), C("XGROUP", "CREATE", "s", "g", "0"),
    C("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"),
    C("XGROUP", "SETID", "s", "g", "0"), C("XGROUP", "CREATECONSUMER", "s", "g", "c1"),
    C("XGROUP", "CREATECONSUMER", "s", "g", "c1"),
    C("XADD", "s", "11-1", "f", "v"), C("XADD", "s", "12-1", "f", "v"),
    C("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"), C("XADD", "s", "12-2", "f", "v"),
    C("XREADGROUP", "GROUP", "g", "c3", "STREAMS", "s", ">"),
    # Every XREADGROUP/XCLAIM here serves its consumer or finds it there:
    # since 7.2 a consumer is created even when nothing is claimed or
    # served (7.0: only then), which test_stream_rdb_74.py compares with
    # 7.4.1.
    C("XCLAIM", "s", "g", "c4", "0", "11-1"), C("XCLAIM", "s", "g", "c4", "99999999", "11-1"),
    C("XAUTOCLAIM", "s", "g", "c6", "0", "0"),
    C("XACK", "s", "g", "11-1"), C("XGROUP", "DELCONSUMER", "s", "g", "c2"),
    C("XGROUP", "DELCONSUMER", "s", "g", "nobody"),
    ("block", "b1", "XREADGROUP", "GROUP", "g", "c3", "BLOCK", "0", "STREAMS", "s", ">"),
    C("XADD", "s", "13-1", "f", "v"), ("served", "b1"),
    ("block", "b2", "XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
    C("XADD", "s", "MAXLEN", "~", "1", "14-1", "f", "v"), ("served", "b2"),
    C("XGROUP", "DESTROY", "s", "g"), C("XGROUP", "DESTROY", "s", "g"),
    C("DEL", "s"), C("SET", "str", "v"), C("XADD", "str", "1-1", "a", "b"),
]


def test_stream_notifications_match_redis(server, redis_ref):
    events = compare(server, redis_ref, STEPS)
    names = {m for ch, m in events if ch.startswith("__keyspace")}
    assert {"xadd", "xtrim", "xdel", "xsetid", "xgroup-create", "xgroup-setid", "xgroup-destroy",
            "xgroup-createconsumer", "xgroup-delconsumer"} <= names
